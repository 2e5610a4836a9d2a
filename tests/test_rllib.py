"""RLlib integration: the AEC env through RLlib's PettingZoo support, and examples/rllib_multiagent.py
(multi-agent PPO, one masked policy per team) for a tiny number of iterations on a local Ray instance.

Needs the ``rllib`` extra (CI installs it); without it the imports fail loudly rather than
skipping, because the issue requires this test to run.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test

from pcr_env import pass_cut_run_v0
from pcr_env.rllib_env import RLlibKeys, rllib_env, team_policy

from conftest import load_example, strict_warnings



def test_renamed_keys_keep_the_pettingzoo_api():
    with strict_warnings():
        # api_test inspects the mask only when the vector is not under "observation" (a quirk of
        # test_observation), so under RLlib's key it sees the all-zero masks that PettingZoo's classic
        # convention gives seats not to act (here: after the round ends), and notes them.
        warnings.filterwarnings("ignore", message=r"Action mask numpy array is all zeros \(no legal actions\)\.$")
        api_test(RLlibKeys(pass_cut_run_v0.env(episode="round")), num_cycles=300)
    assert [team_policy(f"player_{s}") for s in range(6)] == ["team_0", "team_1"] * 3  # R1.2


def test_rllibs_pettingzoo_wrapper_credits_every_seat_its_own_team_margin():
    """Every round's R8 margin reaches each of the four seats exactly once through RLlib's dicts."""
    env = rllib_env({"episode": "game", "target_score": 30})
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=3)
    totals = {f"player_{s}": 0.0 for s in range(4)}
    rounds = []
    while True:
        (agent, o), = obs.items()
        assert set(o) == {"observations", "action_mask"} and o["action_mask"].any()
        obs, rewards, terminateds, truncateds, infos = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        for a, r in rewards.items():
            totals[a] += r
        for info in infos.values():
            if "round_result" in info and (not rounds or info["round_result"] is not rounds[-1]):
                rounds.append(info["round_result"])
        if terminateds["__all__"] or truncateds["__all__"]:
            break
    final = env.env.unwrapped.game.scores
    assert totals == {f"player_{s}": float(final[s % 2] - final[1 - s % 2]) for s in range(4)}
    assert len(rounds) >= 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own modules warn about Ray's own deprecations
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_example_trains_team_policies_with_ray_and_evaluates_them(tmp_path):
    example = load_example("rllib_multiagent")
    out = tmp_path / "rllib"
    summary = example.main([
        "--iterations", "2", "--num-cpus", "1", "--num-env-runners", "0", "--train-batch", "256",
        "--minibatch", "64", "--epochs", "1", "--hidden", "32", "--eval-deals", "4", "--out", str(out),
    ])
    history = summary["history"]
    assert [h["iteration"] for h in history] == [1, 2]
    assert history[-1]["env_steps"] >= 512
    last = history[-1]["returns"]
    assert set(last) == {"team_0", "team_1"}
    # Score-difference rewards are zero-sum between the teams, and each team policy plays both partners.
    assert last["team_0"] == pytest.approx(-last["team_1"])
    assert Path(summary["checkpoint"], "learner_group", "learner", "rl_module", "team_0").is_dir()
    pair = summary["evaluation"]["pairs"][0]
    assert pair["agent_b"] == "heuristic" and pair["deals"] == 4 and np.isfinite(pair["mean_diff"])
    assert json.loads((out / "summary.json").read_text())["checkpoint"] == summary["checkpoint"]


def test_module_doctest():
    import doctest

    import pcr_env.rllib_env

    failures, tried = doctest.testmod(pcr_env.rllib_env, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
