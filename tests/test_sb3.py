"""Stable-Baselines3 integration: examples/sb3_maskable_ppo.py trains sb3-contrib MaskablePPO on the
Gymnasium view and evaluates it with the project's duplicate evaluation.

Needs the ``sb3`` extra (CI installs it); without it the import below fails loudly rather
than skipping, because the issue requires this test to run.
"""

from __future__ import annotations

import json

import gymnasium
import numpy as np

import pcr_env  # noqa: F401  (registers PassCutRun-v0)

from conftest import load_example



def test_maskable_ppo_sees_the_action_masks_through_sb3s_vector_env():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(lambda: gymnasium.make("PassCutRun-v0", others="random", episode="round"), n_envs=2, seed=0)
    venv.reset()
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (2, 70) and masks.sum(axis=1).min() >= 1
    venv.close()


def test_example_trains_a_few_thousand_steps_and_evaluates_in_duplicate(tmp_path):
    example = load_example("sb3_maskable_ppo")
    out = tmp_path / "sb3"
    summary = example.main([
        "--timesteps", "3072", "--n-envs", "2", "--n-steps", "512", "--batch-size", "256",
        "--others", "heuristic", "random", "heuristic", "--eval-deals", "10", "--out", str(out),
    ])
    assert summary["timesteps"] >= 3072 and summary["episodes_seen"] > 0
    assert (out / "model.zip").is_file() and (out / "tb").is_dir()
    saved = json.loads((out / "summary.json").read_text())
    pairs = saved["evaluation"]["pairs"]
    assert [(p["agent_a"], p["agent_b"]) for p in pairs] == [(f"sb3:{out / 'model.zip'}", "heuristic"),
                                                             (f"sb3:{out / 'model.zip'}", "random")]
    assert all(p["deals"] == 10 and np.isfinite(p["mean_diff"]) for p in pairs)

    # The saved model is now an agent spec like any other: it can sit at a table of the Gymnasium view.
    from agents import make_agent

    agent = make_agent(f"sb3:{out / 'model.zip'}", seed=0)
    env = gymnasium.make("PassCutRun-v0", others=[f"sb3:{out / 'model.zip'}", "random", agent], episode="round")
    obs, info = env.reset(seed=1)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act({"observation": obs, "action_mask": info["action_mask"]}))
        done = terminated or truncated
    assert "illegal_action" not in info and "round_result" in info
