"""The league (agents/training/league.py): a stage of kind ``exploiter`` trains a copy of the main network against the
main network frozen at its start, alone; at its end the exploiter joins the ``exploiter`` opponents (and the run
directory as an agent file) and the main network comes back bit for bit. A league run stopped anywhere, inside an
exploiter stage or at its boundaries, resumes to the straight run, with one and two workers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import kept_records, run_records, stop_then_resume

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import train  # noqa: E402  (train.py is a script at the repository root)
from agents import make_agent  # noqa: E402
from agents.training.config import SelfPlayConfig  # noqa: E402
from agents.training.league import League  # noqa: E402
from agents.training.opponents import SELF, OpponentPool, Opponents  # noqa: E402
from pcr_env.vector import VectorEnv  # noqa: E402

SMOKE = str(ROOT / "configs" / "smoke.yaml")
LEAGUE = ("stages=[{kind: bc, decisions: 512}, {kind: ppo, decisions: 1024}, "
          "{kind: exploiter, decisions: 1024, ppo: {learning_rate: 1.0e-4, lr_schedule: constant}}, "
          "{kind: ppo, decisions: 1024}]")
"""Six iterations of 512 decisions: bc 1, PPO 2, an exploiter 2, PPO 2 against a mix that holds it."""
MIX = "selfplay.opponents={self: 0.25, snapshot: 0.25, exploiter: 0.5}"
SETS = [LEAGUE, MIX, "rules.max_rounds=1", "checkpoint_every=1", "eval.every=1", "eval.deals=2", "eval.final_deals=2"]


def args(run_dir: Path, workers: int = 1, sets: list[str] = SETS) -> list[str]:
    return ["--config", SMOKE, "--run-dir", str(run_dir), "--quiet",
            *[a for s in [*sets, f"num_workers={workers}"] for a in ("--set", s)]]


def load(path: Path) -> dict:
    return torch.load(path, weights_only=True)


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module", params=[1, 2], ids=["1worker", "2workers"])
def straight(request, tmp_path_factory) -> tuple[int, Path]:
    run_dir = tmp_path_factory.mktemp("league") / "run"
    train.main(args(run_dir, request.param))
    return request.param, run_dir


def test_the_exploiter_plays_the_frozen_main_network_alone_and_leaves_it_unchanged(straight, tmp_path):
    workers, run_dir = straight
    if workers == 2:
        pytest.skip("one worker is enough for what the stage does (the resume tests cover two)")
    iterations = [r for r in run_records(run_dir) if r["type"] == "iteration"]
    exploiter = [r for r in iterations if r["stage"] == 2]
    assert len(exploiter) == 2
    for r in exploiter:  # every round against the main network, none in self-play, no snapshot added
        assert r["charts/main_pool_size"] == 1 and r["charts/learning_rate"] == 1e-4
        assert not any(k.startswith("charts/score_diff_vs_") and k != "charts/score_diff_vs_main" for k in r)
    assert any("charts/score_diff_vs_main" in r for r in exploiter)
    assert exploiter[0]["charts/pool_size"] == exploiter[-1]["charts/pool_size"]
    evaluated = [r["iteration"] for r in run_records(run_dir) if r["type"] == "eval" and not r["final"]]
    assert 2 in evaluated and not {3, 4} & set(evaluated)  # the main network before the stage, never the exploiter
    after = [r for r in iterations if r["stage"] == 3]
    assert all(r["charts/exploiter_pool_size"] == 1 and r["charts/main_pool_size"] == 0 for r in after)
    assert any("charts/score_diff_vs_exploiter" in r for r in after)  # the main network meets it

    # The exploiter's file is an agent; the main network that comes back is the one the stage froze: a run that
    # stops after the PPO stage before it holds the same weights.
    exploiter_file = run_dir / "league" / "exploiter_1.pt"
    obs, masks, _ = VectorEnv(4, seed=0).reset()
    actions = make_agent(f"ppo:{exploiter_file}", seed=0).act_batch(obs, masks)
    assert masks[np.arange(4), actions].all()  # it loads as an agent and plays legal moves
    before = tmp_path / "before"
    train.main([*args(before), "--max-iterations", "3"])
    frozen = load(before / "checkpoints" / "latest.pt")
    assert frozen["training"]["stage"] == 2 and frozen["training"]["stage_iterations"] == 0
    train.main(["--resume", str(before), "--quiet", "--max-iterations", "2"])  # the exploiter stage
    back = load(before / "checkpoints" / "latest.pt")
    assert back["training"]["stage"] == 3 and same_weights(back["model"], frozen["model"])
    assert same_weights(back["value_norm"], frozen["value_norm"])
    assert not same_weights(load(exploiter_file)["model"], frozen["model"])  # the exploiter learned
    assert same_weights(load(before / "league" / "exploiter_1.pt")["model"], load(exploiter_file)["model"])


# Stops after n iterations: 3 = at PPO -> exploiter, 4 = inside the exploiter stage, 5 = at exploiter -> PPO,
# 6 = inside the PPO stage that meets the exploiter.
@pytest.mark.parametrize("stop_after", [3, 4, 5, 6])
def test_a_league_run_stopped_anywhere_resumes_exactly(straight, tmp_path, stop_after):
    workers, full = straight
    if workers == 2 and stop_after in (3, 6):
        pytest.skip("two workers: inside the exploiter stage and at its end are enough (spawning is slow)")
    run_dir = tmp_path / "stopped"
    stop_then_resume(train.main, run_dir, args(run_dir, workers), stop_after)
    for name in ("latest.pt", "best.pt"):
        assert same_weights(load(full / "checkpoints" / name)["model"], load(run_dir / "checkpoints" / name)["model"]), name
    assert same_weights(load(full / "league" / "exploiter_1.pt")["model"], load(run_dir / "league" / "exploiter_1.pt")["model"])
    league = load(full / "checkpoints" / "latest.pt")["training"]["league"]
    assert league["trained"] == 1 and len(league["exploiters"]["models"]) == 1 and not league["main"]["models"]
    assert kept_records(full) == kept_records(run_dir)


def test_a_run_without_exploiter_stages_has_no_league_and_refuses_the_exploiter_kind(tmp_path):
    with pytest.raises(ValueError, match=r"selfplay.opponents.exploiter.*only in a run with a stage of kind 'exploiter'"):
        train.load_config(SMOKE, [MIX])
    run_dir = tmp_path / "plain"
    train.main(args(run_dir, sets=["ppo.total_decisions=512", "warmstart.decisions=0"]))
    assert "league" not in load(run_dir / "checkpoints" / "latest.pt")["training"]
    assert not (run_dir / "league").exists()


def test_the_exploiter_kind_is_self_play_until_the_first_exploiter_then_sampled_by_its_key():
    league = League(SelfPlayConfig(exploiters_kept=2, exploiter_pfsp_power=0.0))
    snapshots = OpponentPool(2, 2.0)
    opp = Opponents({"exploiter": 1.0}, {}, 64, pools={"snapshot": snapshots, **league.pools})
    rng = np.random.default_rng(0)
    opp.draw(np.arange(64), rng)
    assert (opp.kind == SELF).all()  # no exploiter yet
    league.exploiters.add(object(), iteration=3)
    league.exploiters.add(object(), iteration=9)
    league.exploiters.record(0, wins=9.0, rounds=10.0)  # the learner beats exploiter 0: PFSP would avoid it
    opp.draw(np.arange(64), rng)
    assert (opp.kind == opp.names.index("exploiter")).all()
    assert 20 < (opp.slot == 0).sum() < 44  # uniform (exploiter_pfsp_power 0) draws both about evenly
    with pytest.raises(ValueError, match="not among"):
        opp.use_mix({"league": 1.0})


def test_the_league_of_the_training_docs_is_a_config_as_written():
    """docs/training.md's league, pasted into a config as it stands, loads: exploiter stages between PPO stages."""
    import yaml

    text = (ROOT / "docs" / "training.md").read_text()
    section = text[text.index("## The league"):]
    block = section[section.index("```yaml") + len("```yaml"):section.index("```", section.index("```yaml") + 7)]
    run = train.load_run(SMOKE, [f"{key}={yaml.safe_dump(value, default_flow_style=True).strip()}"
                                 for key, value in yaml.safe_load(block).items()])
    assert [s.kind for s in run.stages] == ["bc", "ppo", "exploiter", "ppo", "exploiter", "ppo"]
    assert run.stages[2].config.ppo.learning_rate == 1e-4 and run.stages[3].config.ppo.learning_rate == 3e-4
    assert run.config.selfplay.opponents["exploiter"] == 0.2
