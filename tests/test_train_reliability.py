"""Training that never dies or corrupts: fixed-shape collectives, exact resume with any worker count,
no duplicate log entries after a kill, damaged checkpoints refused, NaNs stopped before any write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.ppo import files as checkpoint_io
from agents.training.warmstart import bc_update
from agents.training.workers import Workers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from test_train import SMOKE, records, run, weights  # noqa: E402  (the smoke-run helpers)

import train  # noqa: E402  (train.py is a script at the repository root)


def same_weights(a: Path, b: Path) -> bool:
    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def iteration_records(run_dir: Path) -> list[dict]:
    drop = ("time", "seconds", "charts/decisions_per_second", "charts/collect_fraction")
    return [{k: v for k, v in r.items() if k not in drop} for r in records(run_dir) if r["type"] == "iteration"]


# ----------------------------------------------------------------------------- fixed-shape collectives
def _update_with_uneven_batches(rank: int, init_file: str, out_dir: str) -> None:
    """Worker ``rank`` of a 2-worker PPO update where worker 1 has no decision at all and worker 0
    has only play decisions: every collective must still match (gloo aborts the process otherwise)."""
    torch.set_num_threads(1)
    workers = Workers(rank, 2, init_file)
    cfg = train.load_config(SMOKE, ["num_workers=2"])
    torch.manual_seed(0)
    model = train.ActorCritic(797, 1369, 70, cfg.network)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    n = 37 if rank == 0 else 0
    rng = np.random.default_rng(rank)
    inputs = np.zeros((max(n, 1), 1369), np.float32)
    inputs[:, 4] = 1.0  # the phase one-hot of the observation: PLAY
    masks = np.zeros((n, 70), bool)
    masks[:, :5] = True
    batch = {"inputs": inputs, "input_rows": np.arange(n), "masks": masks, "actions": np.zeros(n, np.int64),
             "logprobs": np.full(n, -1.6, np.float32), "values": rng.normal(size=n).astype(np.float32),
             "advantages": rng.normal(size=n).astype(np.float32), "returns": rng.normal(size=n).astype(np.float32)}
    out = train.ppo_update(cfg, model, train.ValueNorm(), opt, batch, workers, rng, 0.01, train.Compute(torch.device("cpu")))
    bc = bc_update(cfg.warmstart, cfg.ppo, model, train.ValueNorm(), opt, batch, workers, rng,
                   train.Compute(torch.device("cpu")))
    torch.save({"out": out, "bc": bc, "model": model.state_dict()}, os.path.join(out_dir, f"rank{rank}.pt"))
    workers.close()


def test_collectives_have_the_same_shape_when_a_worker_lacks_phases_or_decisions(tmp_path):
    torch.multiprocessing.spawn(_update_with_uneven_batches, args=(str(tmp_path / "rdv"), str(tmp_path)), nprocs=2)
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=True)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=True)
    assert r0["out"] == r1["out"] and r0["bc"] == r1["bc"]  # the statistics are reduced over both workers
    assert all(torch.equal(r0["model"][k], r1["model"][k]) for k in r0["model"])  # still in step
    assert "entropy_play" in r0["out"] and "entropy_bid" not in r0["out"]
    assert all(np.isfinite(v) for k, v in r0["out"].items() if k != "explained_variance")


def _second_worker_fails(rank: int, init_file: str, run_dir: str) -> None:
    """A 2-worker smoke run whose worker 1 raises in its first PPO iteration while worker 0 goes on."""
    torch.set_num_threads(1)
    if rank == 1:
        def fail(self: train.Trainer) -> None:
            raise RuntimeError("injected failure in worker 1")

        train.Trainer.ppo_iteration = fail
    cfg = train.load_config(SMOKE, ["num_workers=2", "warmstart.decisions=0"])
    train.train(Workers(rank, 2, init_file), train.Run.of(cfg), Path(run_dir), None, 3, True)


def test_an_error_in_one_worker_ends_the_run_instead_of_hanging_it(tmp_path):
    """The other worker waits in a collective the failed one never joins: the failed worker must leave without
    the closing barrier, so the launcher sees its error, stops the other and reports it."""
    context = torch.multiprocessing.spawn(_second_worker_fails, args=(str(tmp_path / "rdv"), str(tmp_path / "run")),
                                          nprocs=2, join=False)
    deadline = time.monotonic() + 120
    with pytest.raises(torch.multiprocessing.ProcessRaisedException, match="injected failure in worker 1"):
        while not context.join(timeout=1):
            if time.monotonic() > deadline:
                for process in context.processes:
                    process.kill()
                pytest.fail("the run hung after a worker's error")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_workers_train_through_batches_that_lack_a_phase(tmp_path, seed):
    """The crash of the first version: with 8 games per worker, some worker's rollout has no trump
    (or no bid) decision every few iterations; 24 iterations hit that for every seed tried."""
    run_dir = tmp_path / f"s{seed}"
    run(["--config", SMOKE, "--run-dir", str(run_dir), "--set", "num_workers=2", "--set", f"seed={seed}",
         "--set", "warmstart.decisions=0", "--set", "eval.deals=0", "--set", "ppo.total_decisions=12288"])
    kinds = [r["type"] for r in records(run_dir)]
    assert kinds.count("iteration") == 24 and kinds[-1] == "done"


# ----------------------------------------------------------------------------- exact resume
@pytest.mark.parametrize("warm_start", ["512", "0"])
def test_two_worker_resume_ends_with_the_same_weights(tmp_path, warm_start):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    common = ["--config", SMOKE, "--set", "num_workers=2", "--set", f"warmstart.decisions={warm_start}"]
    run([*common, "--run-dir", str(straight)])
    run([*common, "--run-dir", str(resumed), "--max-iterations", "3"])
    assert records(resumed)[-1]["reason"] == "stopped"
    run(["--resume", str(resumed)])
    assert same_weights(straight / "checkpoints" / "latest.pt", resumed / "checkpoints" / "latest.pt")
    assert iteration_records(straight) == iteration_records(resumed)


def _wait_for(path: Path, text: str, count: int, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_text().count(text) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never held {count} x {text!r}")


def test_a_killed_run_resumes_exactly_without_duplicate_log_or_tensorboard_entries(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    overrides = ["--set", "ppo.total_decisions=6144", "--set", "checkpoint_every=4", "--set", "eval.every=3"]
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    run(["--config", SMOKE, "--run-dir", str(straight), *overrides])
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--config", SMOKE, "--run-dir", str(killed),
                             *overrides, "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Kill -9 once iteration 5 is logged: latest.pt holds iteration 4, what came after it is redone.
    _wait_for(killed / "log.jsonl", '"type": "iteration"', 5)
    proc.kill()
    proc.wait(timeout=60)
    logged = max(r["iteration"] for r in records(killed) if r["type"] == "iteration")
    assert logged >= 5 and records(killed)[-1]["type"] != "done"
    (killed / "checkpoints" / ".latest.pt.stale.tmp").write_bytes(b"half a file")  # as a kill mid-write leaves
    run(["--resume", str(killed)])
    assert not list((killed / "checkpoints").glob(".*.tmp"))
    assert same_weights(straight / "checkpoints" / "latest.pt", killed / "checkpoints" / "latest.pt")
    its = [r["iteration"] for r in records(killed) if r["type"] == "iteration"]
    assert its == list(range(1, 13))  # every iteration once, in order
    evals = [r["iteration"] for r in records(killed) if r["type"] == "eval"]
    assert evals == sorted(set(evals))
    assert iteration_records(straight) == iteration_records(killed)
    acc = EventAccumulator(str(killed))
    acc.Reload()
    for tag in ("losses/policy_loss", "charts/make_rate", "bc/accuracy", "eval/heuristic_score_diff"):
        steps = [e.step for e in acc.Scalars(tag)]
        assert steps == sorted(set(steps)), tag  # no step twice


def test_resume_keeps_the_previous_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    run(["--config", SMOKE, "--run-dir", str(run_dir), "--max-iterations", "3"])
    run(["--resume", str(run_dir), "--max-iterations", "1"])
    latest = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    prev = torch.load(run_dir / "checkpoints" / "latest.prev.pt", weights_only=True)
    assert prev["meta"]["iteration"] == latest["meta"]["iteration"] - 1


# ----------------------------------------------------------------------------- damaged files
@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("stopped") / "run"
    run(["--config", SMOKE, "--run-dir", str(run_dir), "--max-iterations", "3"])
    return run_dir


def _copy_run(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _flip_tensor_bytes(path: Path) -> None:
    data = bytearray(path.read_bytes())
    ckpt = torch.load(path, weights_only=True)
    needle = ckpt["model"]["actor.0.weight"].numpy().tobytes()[4000:4016]
    at = bytes(data).find(needle)
    assert at > 0
    data[at:at + 4] = b"\xff\xff\xff\x7f"  # a NaN where a weight was
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["truncated", "empty", "random", "flipped"])
def test_a_damaged_latest_checkpoint_is_refused_with_one_line(stopped_run, tmp_path, damage, capsys):
    run_dir = _copy_run(stopped_run, tmp_path / "run")
    latest = run_dir / "checkpoints" / "latest.pt"
    good = latest.read_bytes()
    if damage == "truncated":
        latest.write_bytes(good[: len(good) // 2])
    elif damage == "empty":
        latest.write_bytes(b"")
    elif damage == "random":
        latest.write_bytes(np.random.default_rng(0).bytes(len(good)))
    else:
        _flip_tensor_bytes(latest)
    before = latest.read_bytes()
    with pytest.raises(SystemExit) as err:
        run(["--resume", str(run_dir)])
    message = str(err.value)
    assert message.startswith("train.py: error: checkpoint ") and "\n" not in message
    assert str(latest) in message and "is damaged" in message
    assert "best.pt" in message or "latest.prev.pt" in message  # what to do
    assert latest.read_bytes() == before  # nothing was written over it


def test_a_damaged_checkpoint_points_to_the_previous_one_that_resumes(stopped_run, tmp_path):
    run_dir = _copy_run(stopped_run, tmp_path / "run")
    run(["--resume", str(run_dir), "--max-iterations", "1"])  # now latest.prev.pt exists
    latest = run_dir / "checkpoints" / "latest.pt"
    _flip_tensor_bytes(latest)
    with pytest.raises(SystemExit, match="latest.prev.pt") as err:
        run(["--resume", str(run_dir)])
    assert "mv " in str(err.value)
    os.replace(checkpoint_io.previous_path(latest), latest)  # what the message says to do
    run(["--resume", str(run_dir)])
    assert records(run_dir)[-1]["type"] == "done"


def test_agent_checkpoints_with_flipped_bytes_are_refused(stopped_run, tmp_path):
    from agents.ppo import read_checkpoint

    best = tmp_path / "best.pt"
    best.write_bytes((stopped_run / "checkpoints" / "best.pt").read_bytes())
    _flip_tensor_bytes(best)
    with pytest.raises(ValueError, match="do not match its checksum"):
        read_checkpoint(best)


def test_resume_refuses_changes_the_saved_state_cannot_follow(stopped_run, tmp_path):
    run_dir = _copy_run(stopped_run, tmp_path / "run")
    with pytest.raises(SystemExit) as err:
        run(["--resume", str(run_dir), "--set", "rules.players=6"])
    assert "config key 'rules.players' cannot change when a run resumes" in str(err.value)
    with pytest.raises(SystemExit, match="network.hidden_sizes"):
        run(["--resume", str(run_dir), "--set", "network.hidden_sizes=[8]"])
    run(["--resume", str(run_dir), "--set", "eval.deals=2", "--set", "ppo.learning_rate=1e-4", "--max-iterations", "1"])


def test_an_agent_checkpoint_is_not_a_run_to_resume(stopped_run, tmp_path):
    run_dir = _copy_run(stopped_run, tmp_path / "run")
    os.replace(run_dir / "checkpoints" / "best.pt", run_dir / "checkpoints" / "latest.pt")
    with pytest.raises(SystemExit, match="holds no training state"):
        run(["--resume", str(run_dir)])


# ----------------------------------------------------------------------------- NaN guard
def test_a_non_finite_loss_stops_training_before_any_checkpoint_is_overwritten(tmp_path, monkeypatch):
    run_dir = tmp_path / "nan"
    original = train.ppo_update

    def poisoned(cfg, model, *args, **kwargs):
        out = original(cfg, model, *args, **kwargs)
        if sum(r["type"] == "iteration" for r in records(run_dir)) >= 2:  # iteration 3: the checkpoint at 2 is written
            with torch.no_grad():
                next(model.parameters()).fill_(float("nan"))
            out["policy_loss"] = float("nan")
        return out

    monkeypatch.setattr(train, "ppo_update", poisoned)
    with pytest.raises(SystemExit) as err:
        run(["--config", SMOKE, "--run-dir", str(run_dir), "--set", "eval.every=0", "--set", "ppo.total_decisions=4096"])
    message = str(err.value)
    assert "non-finite" in message and "checkpoints/latest.pt still holds stage 2/2 (ppo) after 2 of its 8" in message, message
    assert "--set ppo.learning_rate=" in message
    latest = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    assert latest["meta"]["iteration"] == 2 and checkpoint_io.all_finite(latest["model"])
    assert not (run_dir / "checkpoints" / "best.pt").exists()


# ----------------------------------------------------------------------------- configs
@pytest.mark.parametrize("text, message", [
    ("", "holds no config keys (it is empty or only comments)"),
    ("# only a comment\n", "holds no config keys (it is empty or only comments)"),
    ("ppo:\n  num_envs: [1, 2\n", "is not valid YAML: line 3, column 1"),
    ("ppo: {num_envs: 4\n  bad", "is not valid YAML: line"),
    ("selfplay:\n  opponents: {self: 0.5, heuristic: 0.2}\n", "a probability distribution: weights >= 0 that sum to 1 (these sum to 0.7)"),
])
def test_config_files_that_would_be_silently_wrong_are_refused(tmp_path, text, message):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        train.load_config(str(path), [])
    assert message in str(err.value)
    assert str(path) in str(err.value) or "selfplay.opponents" in str(err.value)


def test_an_explicit_empty_mapping_asks_for_the_defaults(tmp_path):
    path = tmp_path / "defaults.yaml"
    path.write_text("{}\n")
    assert train.load_config(str(path), []) == train.Config()


def test_cli_reports_a_yaml_syntax_error_on_one_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("ppo:\n  num_envs: [1, 2\n")
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--config", str(path), "--run-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "line 3, column 1" in proc.stderr


# ----------------------------------------------------------------------------- progress and messages
def test_progress_shows_each_phase_and_ends_saying_where_the_results_are(tmp_path):
    run_dir = tmp_path / "bar"
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--config", SMOKE, "--run-dir", str(run_dir)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "stage 1/2 bc: 100%" in err and "stage 2/2 ppo: 100%" in err
    assert "eval random" in err  # the last evaluation on the bar
    assert err.count("dec/s") >= 1 and "dec/s |" not in err  # one rate: the bar's own
    tail = err.strip().splitlines()[-3:]
    assert tail[0] == f"run directory: {run_dir}"
    assert "best.pt" in tail[1] and f"--resume {run_dir}" in tail[1] and "tensorboard --logdir" in tail[2]


@pytest.mark.slow
def test_ctrl_c_with_two_workers_prints_once_on_its_own_line_and_resumes(tmp_path):
    run_dir = tmp_path / "ctrl_c"
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--config", SMOKE, "--run-dir", str(run_dir),
                             "--set", "num_workers=2", "--set", "ppo.total_decisions=10000000", "--set", "eval.deals=0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    _wait_for(run_dir / "log.jsonl", '"type": "iteration"', 2)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    lines = err.replace("\r", "\n").splitlines()
    interrupt = [ln for ln in lines if "interrupt:" in ln]
    assert len(interrupt) == 1 and interrupt[0].lstrip("\x1b[K").startswith("interrupt: finishing this iteration")
    assert any(ln.startswith("stopped in stage 2/2 (ppo)") for ln in lines)
    ckpt = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    assert ckpt["meta"]["reason"] == "interrupted"
    run(["--resume", str(run_dir), "--max-iterations", "1"])


def test_the_shipped_checkpoint_carries_a_valid_checksum():
    from agents.ppo import PRETRAINED_PATH
    from agents.ppo.checkpoint import validate_checkpoint

    ckpt = checkpoint_io.load(PRETRAINED_PATH, validate=validate_checkpoint)  # require_checksum defaults to True
    assert len(ckpt["checksum"]) == 64


def test_checksums_cover_every_value_and_type():
    base = {"w": torch.arange(4.0), "n": 1, "s": "x", "l": [1, 2.0], "a": np.zeros(2)}
    digest = checkpoint_io.content_digest(base)
    for changed in ({**base, "n": 1.0}, {**base, "w": torch.arange(4.0).double()}, {**base, "l": [1, 2]},
                    {**base, "s": "y"}, {**base, "extra": None}, {**base, "w": torch.arange(4.0).reshape(2, 2)}):
        assert checkpoint_io.content_digest(changed) != digest
    assert checkpoint_io.content_digest(dict(reversed(list(base.items())))) == digest  # key order does not matter
    with pytest.raises(TypeError, match="cannot checksum a object"):
        checkpoint_io.content_digest({"x": object()})


def test_checksums_take_tensors_of_any_layout():
    # Adam's step counter after one step can be a size-1 tensor with stride 0 (a run stopped after
    # its first iteration could not be saved); views, transposes and bfloat16 hash by value.
    odd = torch.tensor([3], dtype=torch.long).expand(1)
    assert odd.stride() == (0,) or odd.is_contiguous()
    assert checkpoint_io.content_digest({"t": odd}) == checkpoint_io.content_digest({"t": torch.tensor([3])})
    m = torch.arange(6.0).reshape(2, 3)
    assert checkpoint_io.content_digest({"t": m.t()}) == checkpoint_io.content_digest({"t": m.t().contiguous()})
    assert checkpoint_io.content_digest({"t": m.bfloat16()}) != checkpoint_io.content_digest({"t": m})


def test_a_run_stopped_after_its_first_iteration_saves_and_resumes(tmp_path):
    run_dir = tmp_path / "one"
    run(["--config", SMOKE, "--run-dir", str(run_dir), "--max-iterations", "1"])
    run(["--resume", str(run_dir), "--max-iterations", "1"])
    steps = [r["type"] for r in records(run_dir) if r["type"] in ("warmstart", "iteration")]
    assert steps == ["warmstart", "iteration"]  # the smoke config's one warm-start iteration, then PPO


def test_rewinding_the_log_never_leaves_half_a_line(tmp_path):
    from agents.training.log import rewind

    log = tmp_path / "log.jsonl"
    for size, expected in ((100, b"{1}\n{22}\n"), (9, b"{1}\n{22}\n"), (7, b"{1}\n"), (4, b"{1}\n"), (2, b"")):
        log.write_bytes(b"{1}\n{22}\n{333")  # a kill in the middle of the third record
        rewind(log, size)
        assert log.read_bytes() == expected, size
