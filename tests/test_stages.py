"""Staged runs (agents/training/config.py resolves them): one config lists behaviour cloning, expert iteration and PPO
stages; a run stopped or killed anywhere, inside a warm start, across a game's end or at a stage's boundary,
resumes to the straight run's latest.pt, best.pt, best score and records, with one and two workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import kept_records, run_records, stop_then_resume

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import train  # noqa: E402  (train.py is a script at the repository root)

SMOKE = str(ROOT / "configs" / "smoke.yaml")
STAGES = ("stages=[{kind: bc, decisions: 512}, "
          "{kind: expert_iteration, decisions: 1024, warmstart: {learning_rate: 3.0e-4, epochs: 1}}, "
          "{kind: ppo, decisions: 1024}, "
          "{kind: ppo, decisions: 512, ppo: {learning_rate: 1.0e-4, lr_schedule: constant}}]")
"""Six iterations of 512 decisions: bc 1, expert iteration 2, PPO 2, PPO 1 at another learning rate."""
# max_rounds=1: every round ends its game, so every game ends (and starts again) about every second
# rollout of 32 steps, in every stage; checkpoint_every=1 so that a kill loses at most one iteration.
SETS = [STAGES, "rules.max_rounds=1", "checkpoint_every=1", "eval.every=1", "eval.deals=2", "eval.final_deals=2"]


def args(run_dir: Path, workers: int = 1) -> list[str]:
    sets = [*SETS, f"num_workers={workers}"]
    return ["--config", SMOKE, "--run-dir", str(run_dir), "--quiet", *[a for s in sets for a in ("--set", s)]]


def assert_same_run(a: Path, b: Path) -> None:
    for name in ("latest.pt", "best.pt"):
        x, y = (torch.load(d / "checkpoints" / name, weights_only=True) for d in (a, b))
        assert x["model"].keys() == y["model"].keys()
        assert all(torch.equal(x["model"][k], y["model"][k]) for k in x["model"]), name
    tx, ty = (torch.load(d / "checkpoints" / "latest.pt", weights_only=True)["training"] for d in (a, b))
    assert tx["best_score"] == ty["best_score"] and tx["stage"] == ty["stage"] == 4
    assert kept_records(a) == kept_records(b)


@pytest.fixture(scope="module", params=[1, 2], ids=["1worker", "2workers"])
def straight(request, tmp_path_factory) -> tuple[int, Path]:
    run_dir = tmp_path_factory.mktemp("straight") / "run"
    train.main(args(run_dir, request.param))
    return request.param, run_dir


def test_a_staged_run_runs_its_stages_in_order_on_one_axis(straight):
    _, run_dir = straight
    recs = run_records(run_dir)
    trained = [(r["stage"], r.get("kind", "ppo")) for r in recs if r["type"] in ("warmstart", "iteration")]
    assert trained == [(0, "bc"), (1, "expert_iteration"), (1, "expert_iteration"), (2, "ppo"), (2, "ppo"), (3, "ppo")]
    decisions = [r["decisions"] for r in recs if r["type"] in ("warmstart", "iteration")]
    assert decisions == [512 * i for i in range(1, 7)]  # one x axis over all stages
    assert [r["kind"] for r in recs if r["type"] == "stage"] == ["expert_iteration", "ppo", "ppo"]
    evals = [r for r in recs if r["type"] == "eval"]
    assert evals[-1]["final"] and len({e["decisions"] for e in evals}) == len(evals)
    lrs = [r["charts/learning_rate"] for r in recs if r["type"] == "iteration"]
    assert lrs == [3e-4, 1.5e-4, 1e-4]  # each PPO stage's schedule over its own budget
    assert recs[-1]["type"] == "done"


# Stops after n iterations: 1 = at the bc -> expert iteration boundary, 2 = inside expert iteration (a warm start),
# 3 = at expert iteration -> PPO, 4 = inside PPO, 5 = at PPO -> PPO (another learning rate).
@pytest.mark.parametrize("stop_after", [1, 2, 3, 4, 5])
def test_a_staged_run_stopped_anywhere_resumes_exactly(straight, tmp_path, stop_after):
    workers, full = straight
    if workers == 2 and stop_after in (1, 5):
        pytest.skip("two workers: inside each kind of stage and one boundary is enough (spawning is slow)")
    run_dir = tmp_path / "stopped"
    stop_then_resume(train.main, run_dir, args(run_dir, workers), stop_after)
    assert_same_run(full, run_dir)


def test_a_killed_staged_run_resumes_exactly(straight, tmp_path):
    """SIGKILL (no chance to save) inside the expert-iteration stage: the resumed run replays from the last
    latest.pt, the log rewound to it, and ends as the straight run."""
    workers, full = straight
    if workers == 2:
        pytest.skip("one worker is enough for the kill (the stop tests cover two)")
    run_dir = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *args(run_dir)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log, deadline = run_dir / "log.jsonl", time.time() + 120
    while time.time() < deadline and not (log.exists() and log.read_text().count('"type": "warmstart"') >= 2):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    saved = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)["training"]
    assert saved["stage"] < 4  # killed before the end
    train.main(["--resume", str(run_dir), "--quiet"])
    assert_same_run(full, run_dir)


@pytest.mark.parametrize("override, message", [
    ("stages.1.ppo.learning_rat=1", "unknown config key 'stages[1].ppo.learning_rat' (did you mean 'stages[1].ppo.learning_rate'?)"),
    ("stages[2].ppo.learning_rate=-1", "config key 'stages[2].ppo.learning_rate' = -1 is not allowed: expected a number > 0"),
    ("stages.0.ppo={num_envs: 8}", "config key 'stages[0].ppo.num_envs' is not allowed in a stage"),
    ("stages.0.warmstart={play: learner}", "config key 'stages[0].warmstart.play' is not allowed in a stage: its 'kind'"),
    ("stages.3.kind=dqn", "config key 'stages[3].kind' = 'dqn' is not allowed: expected 'bc', 'expert_iteration', 'ppo' or 'exploiter'"),
    ("stages.9.decisions=1", "'stages' has 4 entries, so '9' is not allowed"),
    ("stages[1].warmstart.targets=values", "config key 'stages[1].warmstart.teacher' = 'heuristic' is not allowed"),
])
def test_set_reaches_a_stages_keys_and_errors_name_them(override, message):
    with pytest.raises(ValueError) as err:
        train.load_config(SMOKE, [STAGES, override])
    assert message in str(err.value)


def test_set_changes_one_stage_only():
    run = train.load_run(SMOKE, [STAGES, "stages.3.ppo.ent_coef=0.5", "ppo.ent_coef=0.02"])
    coefs = [(kind, c.ppo.ent_coef) for kind, c, _ in run.stages]
    assert coefs == [("bc", 0.02), ("expert_iteration", 0.02), ("ppo", 0.02), ("ppo", 0.5)]
    assert [c.warmstart.play for _, c, _ in run.stages][:2] == ["teacher", "learner"]


def test_a_config_without_stages_is_a_warm_start_then_ppo():
    plan = [(kind, c.warmstart.decisions if kind != "ppo" else c.ppo.total_decisions)
            for kind, c, _ in train.load_run(SMOKE, []).stages]
    assert plan == [("bc", 512), ("ppo", 2048)]
    assert [stage.kind for stage in train.load_run(SMOKE, ["warmstart.decisions=0"]).stages] == ["ppo"]


def test_a_latest_pt_from_before_stages_maps_onto_them():
    """A run saved by the trainer of two fixed parts (a warm start, then PPO, one optimiser each) resumes as
    stage 0 (bc) or stage 1 (ppo), its optimiser the one of that part, its x axis counting the warm start."""
    from agents.training.run_state import with_stages

    old = {"iteration": 0, "bc_iterations": 3, "decisions": 0, "optimizer": "ppo", "bc_optimizer": "bc"}
    assert with_stages(old, 6, 512) == {**old, "stage": 0, "stage_iterations": 3, "decisions": 1536,
                                      "optimizer": "bc"}
    in_ppo = {**old, "iteration": 2, "bc_iterations": 6, "decisions": 1024}
    assert with_stages(in_ppo, 6, 512)["stage"] == 1 and with_stages(in_ppo, 6, 512)["stage_iterations"] == 2
    assert with_stages(in_ppo, 6, 512)["decisions"] == 1024 + 6 * 512 and with_stages(in_ppo, 6, 512)["optimizer"] == "ppo"
    no_warm = {**old, "iteration": 2, "bc_iterations": 0, "decisions": 1024}
    assert with_stages(no_warm, 0, 512)["stage"] == 0  # PPO was the only part
    assert with_stages({**old, "stage": 2}, 6, 512) == {**old, "stage": 2}  # today's files pass through


SELF_SEARCH = ("stages=[{kind: bc, decisions: 512}, "
               "{kind: expert_iteration, decisions: 1024, warmstart: {teacher: 'search:learner', targets: values, "
               "teacher_options: {worlds: 2, phases: [play]}, label_phases: [play], learning_rate: 3.0e-4, epochs: 1}}, "
               "{kind: ppo, decisions: 512}]")
"""bc 1 iteration, then expert iteration on the values of search over the network itself (2), then PPO (1)."""


def self_search_args(run_dir: Path) -> list[str]:
    sets = [SELF_SEARCH, *SETS[1:]]
    return ["--config", SMOKE, "--run-dir", str(run_dir), "--quiet", *[a for s in sets for a in ("--set", s)]]


def test_search_over_the_learner_searches_the_network_frozen_at_its_stage_start(tmp_path):
    """``search:learner``: the teacher's base is the network as the bc stage left it, unchanged while the network
    learns from it; a run stopped inside that stage resumes to the straight run (the searched weights are in latest.pt)."""
    full, stopped = tmp_path / "full", tmp_path / "stopped"
    train.main([*self_search_args(stopped), "--max-iterations", "1"])  # the end of bc: the teacher is not built yet
    at_bc_end = torch.load(stopped / "checkpoints" / "latest.pt", weights_only=True)
    assert at_bc_end["training"]["stage"] == 1
    assert all(torch.equal(at_bc_end["training"]["searched_weights"][k], v) for k, v in at_bc_end["model"].items())
    train.main(["--resume", str(stopped), "--quiet", "--max-iterations", "1"])  # inside the expert iteration
    inside = torch.load(stopped / "checkpoints" / "latest.pt", weights_only=True)
    assert inside["training"]["stage"] == 1 and inside["training"]["stage_iterations"] == 1
    searched = inside["training"]["searched_weights"]
    assert all(torch.equal(searched[k], v) for k, v in at_bc_end["model"].items())  # frozen at the stage's start
    assert not all(torch.equal(searched[k], v) for k, v in inside["model"].items())  # while the network learned
    train.main(["--resume", str(stopped), "--quiet"])
    train.main(self_search_args(full))
    for name in ("latest.pt", "best.pt"):
        x, y = (torch.load(d / "checkpoints" / name, weights_only=True) for d in (full, stopped))
        assert all(torch.equal(x["model"][k], y["model"][k]) for k in x["model"]), name
    assert kept_records(full) == kept_records(stopped)
    labels = [r for r in run_records(full) if r["type"] == "warmstart" and r["kind"] == "expert_iteration"]
    assert len(labels) == 2 and all(r["targets"] == "values" and r["labels"] > 0 for r in labels)
    final = torch.load(full / "checkpoints" / "latest.pt", weights_only=True)["training"]
    assert final["stage"] == 3 and final["searched_weights"] is None  # PPO and after: no teacher kept


def test_search_learner_is_a_teacher_spec_only():
    from agents import make_agent

    assert train.load_run(SMOKE, [SELF_SEARCH]).stages[1].config.warmstart.teacher == "search:learner"
    with pytest.raises(ValueError, match="'learner' is not allowed: expected an agent spec or 'search:learner'"):
        train.load_config(SMOKE, ["warmstart.teacher=learner"])
    with pytest.raises(ValueError, match="unknown agent spec 'learner'"):  # elsewhere (an opponent) it is no agent
        make_agent("search:learner")
