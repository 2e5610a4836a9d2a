"""Training curves as a picture (python -m agents.training.curves RUN_DIR): a valid PNG from a synthetic log and
from a real smoke run, logs without evaluations or warm start, resumed runs, a league's exploiter stages, and one-line
errors."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="agents.training.curves needs matplotlib: pip install -e '.[notebook]'")

from agents.training import curves  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR" and data.rstrip(b"\x00").endswith(b"IEND\xaeB`\x82")
    return struct.unpack(">II", data[16:24])


BENCH_RUN = ROOT / "benchmarks" / "results" / "distill_values4"  # a committed run: log.jsonl + config.yaml


def synthetic_log(iterations=12, evals=True, warmstart=True) -> list[dict]:
    recs = []
    if warmstart:
        recs += [{"type": "warmstart", "iteration": i, "of": 3, "loss": 2.0 - 0.3 * i, "accuracy": 0.3 + 0.1 * i,
                  "value_loss": 0.01, "entropy": 2.0, "decisions_per_second": 5000.0} for i in (1, 2, 3)]
    for it in range(1, iterations + 1):
        rec = {"type": "iteration", "iteration": it, "decisions": 512 * it, "seconds": 0.05,
               "charts/decisions_per_second": 9000.0 + 100 * it, "losses/entropy": 2.0 - 0.05 * it,
               "losses/entropy_play": 1.5 - 0.04 * it}
        if it % 2 == 0:
            rec["losses/entropy_pass"] = 2.4
        recs.append(rec)
        if evals and it % 4 == 0:
            recs.append({"type": "eval", "iteration": it, "decisions": 512 * it, "final": it == iterations,
                         "results": {"random": {"mean": 10.0 + it, "ci_low": 8.0 + it, "ci_high": 12.0 + it, "deals": 40},
                                     "heuristic": {"mean": -5.0 + it / 2, "ci_low": -7.0 + it / 2, "ci_high": -3.0 + it / 2,
                                                   "deals": 40}}})
            recs.append({"type": "checkpoint", "file": "best.pt", "iteration": it})
    recs.append({"type": "done", "iteration": iterations})
    return recs


def write_log(run: Path, recs: list[dict]) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return run


def test_synthetic_log_gives_a_png(tmp_path):
    run = write_log(tmp_path / "run", synthetic_log())
    log = curves.load_log(run)
    assert len(log.iterations) == 12 and len(log.evals) == 3 and len(log.warmstart) == 3
    assert log.opponents == ["random", "heuristic"] and log.entropy_phases == ["pass", "play"]
    path = curves.plot_curves(run)
    assert path == run / "curves.png"
    w, h = png_size(path)
    assert w > 1000 and h > 700


def test_a_leagues_exploiter_stages_are_spans_to_the_next_stage_or_the_last_iteration(tmp_path):
    stage = lambda k, kind, at: {"type": "stage", "stage": k, "kind": kind, "decisions": at}  # noqa: E731
    recs = synthetic_log(iterations=12) + [stage(1, "exploiter", 1024), stage(2, "ppo", 2048),
                                           stage(3, "exploiter", 4096), stage(1, "exploiter", 1024)]  # resumed: logged twice
    log = curves.parse_log([json.dumps(r) + "\n" for r in recs])
    assert [s["stage"] for s in log.stages] == [1, 2, 3]
    assert log.spans("exploiter") == [(1024.0, 2048.0), (4096.0, 512.0 * 12)]
    assert log.spans("ppo") == [(2048.0, 4096.0)] and curves.RunLog().spans("exploiter") == []
    png_size(curves.plot_curves(log, tmp_path / "league.png"))


def test_log_without_evals_or_warmstart(tmp_path):
    run = write_log(tmp_path / "run", synthetic_log(evals=False, warmstart=False))
    log = curves.load_log(run / "log.jsonl")  # a log file works as well as its directory
    assert log.evals == [] and log.warmstart == [] and log.opponents == []
    png_size(curves.plot_curves(log, tmp_path / "out" / "c.png"))


def test_resumed_run_keeps_the_last_record_of_each_iteration(tmp_path):
    recs = synthetic_log(iterations=8)
    redo = [dict(r, **{"losses/entropy": 0.5}) for r in recs if r.get("type") == "iteration" and r["iteration"] > 6]
    run = write_log(tmp_path / "run", recs + redo)
    log = curves.load_log(run)
    assert [r["iteration"] for r in log.iterations] == list(range(1, 9))
    assert log.iterations[-1]["losses/entropy"] == 0.5


def test_a_run_still_writing_its_last_line(tmp_path):
    run = write_log(tmp_path / "run", synthetic_log(iterations=4))
    with (run / "log.jsonl").open("a") as fh:
        fh.write('{"type": "iteration", "iter')  # no newline yet
    assert len(curves.load_log(run).iterations) == 4


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """A real (tiny) training run: configs/smoke.yaml."""
    run = tmp_path_factory.mktemp("smoke") / "run"
    proc = subprocess.run([sys.executable, "train.py", "--config", "configs/smoke.yaml", "--run-dir", str(run), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return run


def test_real_smoke_run_through_the_command_line(smoke_run, tmp_path):
    out = tmp_path / "smoke.png"
    proc = subprocess.run([sys.executable, "-m", "agents.training.curves", str(smoke_run), "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wrote {out}"
    png_size(out)
    log = curves.load_log(smoke_run)
    assert log.iterations and log.evals and log.warmstart  # smoke.yaml has all three
    assert {"random", "heuristic"} <= set(log.opponents)
    for e in log.evals:
        for r in e["results"].values():
            assert r["ci_low"] <= r["mean"] <= r["ci_high"]
    assert all("losses/entropy" in r and "charts/decisions_per_second" in r for r in log.iterations)
    assert {r["targets"] for r in log.warmstart} == {"action"}  # smoke.yaml clones the teacher's actions
    assert curves.warmstart_labels(log.warmstart)[0] == "behaviour cloning"


def test_a_soft_target_warm_start_is_labelled_as_such(tmp_path):
    recs = [dict(r, targets="values") if r["type"] == "warmstart" else r for r in synthetic_log()]
    log = curves.load_log(write_log(tmp_path / "run", recs))
    assert curves.warmstart_labels(log.warmstart) == ("distillation on soft targets", "accuracy (target's mode)")
    png_size(curves.plot_curves(log, tmp_path / "c.png"))


def test_an_older_log_takes_its_warm_start_kind_from_the_run_config(tmp_path):
    # Runs 3 and 4 of configs/experiments/distill_values.yaml were logged before warm-start records named their kind.
    run = write_log(tmp_path / "run", synthetic_log())
    assert curves.warmstart_labels(curves.load_log(run).warmstart)[0] == "behaviour cloning"
    (run / "config.yaml").write_text("seed: 1\nwarmstart:\n  targets: values\n")
    assert curves.warmstart_labels(curves.load_log(run).warmstart)[0] == "distillation on soft targets"
    (run / "config.yaml").write_text("warmstart: [not, a, mapping\n")  # unreadable: only the label is lost
    assert curves.warmstart_labels(curves.load_log(run).warmstart)[0] == "behaviour cloning"
    logged = [dict(r, targets="action") if r["type"] == "warmstart" else r for r in synthetic_log()]
    (run / "config.yaml").write_text("warmstart:\n  targets: values\n")
    write_log(run, logged)  # a record's own kind wins over the config
    assert curves.warmstart_labels(curves.load_log(run).warmstart)[0] == "behaviour cloning"
    assert curves.warmstart_labels(curves.load_log(BENCH_RUN).warmstart)[0] == "distillation on soft targets"


@pytest.mark.parametrize("content, message", [
    (None, "has no log.jsonl"),
    ("", "no iteration or warm-start records"),
    ('{"type": "iteration", "iteration": 1, "decisions": 5}\nnot json at all\n{"type": "done"}\n', "line 2 is not JSON"),
    ('[1, 2]\n', "line 1 is not a JSON object"),
    ('{"type": "checkpoint"}\n', "no iteration or warm-start records"),
])
def test_bad_logs_give_a_one_line_error(tmp_path, content, message):
    run = tmp_path / "run"
    run.mkdir()
    if content is not None:
        (run / "log.jsonl").write_text(content)
    proc = subprocess.run([sys.executable, "-m", "agents.training.curves", str(run)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.startswith("python -m agents.training.curves: error: ") and message in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # one line, no traceback
    assert not (run / "curves.png").exists()


def test_missing_path_and_missing_matplotlib(tmp_path, monkeypatch, capsys):
    assert curves.main([str(tmp_path / "nowhere" / "log.jsonl")]) == 2
    assert "not found" in capsys.readouterr().err
    run = write_log(tmp_path / "run", synthetic_log(iterations=2))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    assert curves.main([str(run)]) == 2
    err = capsys.readouterr().err
    assert "matplotlib" in err and "'.[notebook]'" in err and err.count("\n") == 1
