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
from conftest import load_example, strict_warnings
from pettingzoo.test import api_test

from pcr_env import pass_cut_run_v0
from pcr_env.rllib_env import RLlibKeys, rllib_env, team_policy


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
    # The local Ray instance listened on the loopback only (--node-ip-address default).
    assert summary["ray_address"].startswith("127.0.0.1:")
    assert [h["sampled"] for h in history] == [history[0]["env_steps"], history[1]["env_steps"] - history[0]["env_steps"]]
    pair = summary["evaluation"]["pairs"][0]
    assert pair["agent_b"] == "heuristic" and pair["deals"] == 4 and np.isfinite(pair["mean_diff"])
    assert json.loads((out / "summary.json").read_text())["checkpoint"] == summary["checkpoint"]


def test_an_iteration_that_sampled_nothing_stops_the_example_with_a_message():
    """RLlib only logs "No samples returned from remote workers" and reports 0 env steps; the example must fail."""
    example = load_example("rllib_multiagent")
    # Results shaped like RLlib 2.60's: lifetime counters; an iteration with no samples has no env-runner metrics.
    assert example.sampled_env_steps({"env_runners": {"num_env_steps_sampled_lifetime": 4000}}, 0) == (4000, 4000)
    assert example.sampled_env_steps({"env_runners": {"num_env_steps_sampled_lifetime": 8000}}, 4000) == (4000, 8000)
    assert example.sampled_env_steps({"env_runners": {"num_env_steps_sampled_lifetime": 4000}}, 4000) == (0, 4000)
    assert example.sampled_env_steps({"env_runners": {}}, 4000) == (0, 4000)
    assert example.sampled_env_steps({}, 0) == (0, 0)
    example.check_sampled(1, iteration=1, sample_timeout_s=60)
    with pytest.raises(example.NoSamplesError, match=r"iteration 2 sampled no environment steps.*--sample-timeout 60"):
        example.check_sampled(0, iteration=2, sample_timeout_s=60)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own modules warn about Ray's own deprecations
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_the_script_exits_non_zero_with_the_message_when_nothing_was_sampled(tmp_path, capsys):
    """The real failure: one remote env runner that cannot return a sample within --sample-timeout."""
    example = load_example("rllib_multiagent")
    status = example.cli(["--iterations", "2", "--num-cpus", "2", "--num-env-runners", "1", "--sample-timeout", "0.001",
                          "--train-batch", "256", "--minibatch", "64", "--epochs", "1", "--hidden", "16",
                          "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert status == 1
    assert "error: training iteration 1 sampled no environment steps" in captured.err
    assert "iter    1  env steps        0" in captured.out
    assert not (tmp_path / "checkpoint").exists() and not (tmp_path / "summary.json").exists()


def test_the_local_ray_instance_binds_to_the_loopback_unless_told_otherwise(monkeypatch):
    example = load_example("rllib_multiagent")
    args = example.build_parser().parse_args([])
    kwargs = example.ray_init_kwargs(args)
    assert kwargs["_node_ip_address"] == "127.0.0.1" and kwargs["include_dashboard"] is False and kwargs["address"] is None
    monkeypatch.delenv(example.RAY_CLUSTER_SWITCH, raising=False)
    example.bind_local_ray("10.0.0.5")  # a cluster-network address: Ray's own behaviour, nothing changed
    assert example.RAY_CLUSTER_SWITCH not in __import__("os").environ
    example.bind_local_ray(args.node_ip_address)
    assert __import__("os").environ[example.RAY_CLUSTER_SWITCH] == "0"
    # Joining a running cluster: its binding is `ray start`'s; the script passes no local-node options.
    joined = example.ray_init_kwargs(example.build_parser().parse_args(["--address", "auto"]))
    assert joined["address"] == "auto" and "_node_ip_address" not in joined and "num_cpus" not in joined
