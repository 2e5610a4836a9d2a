"""Stable-Baselines3 integration: examples/sb3_maskable_ppo.py trains sb3-contrib MaskablePPO on the
Gymnasium view and evaluates it with the project's duplicate evaluation.

Needs the ``sb3`` extra (part of ``all``). Outside CI the tests skip when it is missing; in CI
(``CI=true``) a missing library fails, because the issue requires these tests to run.
"""

from __future__ import annotations

import json

import gymnasium
import numpy as np
from conftest import load_example, require_library

import pcr_env  # noqa: F401  (registers PassCutRun-v0)

require_library("stable_baselines3")
require_library("sb3_contrib")


def test_maskable_ppo_sees_the_action_masks_through_sb3s_vector_env():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(lambda: gymnasium.make("PassCutRun-v0", others="random", episode="round"), n_envs=2, seed=0)
    venv.reset()
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (2, 70) and masks.sum(axis=1).min() >= 1
    venv.close()


def test_make_vec_env_on_the_registered_id_alone_then_maskable_ppo_learns_a_few_hundred_steps():
    """SB3's documented one-liner: ``make_vec_env(env_id, n_envs)`` with no ``env_kwargs``.

    SB3 passes ``render_mode="rgb_array"`` to ``gymnasium.make`` and retries without it only on a
    ``TypeError``, so the id has to accept (or refuse with ``TypeError``) that render mode.
    """
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import is_masking_supported
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    class CountIllegal(BaseCallback):
        illegal = 0

        def _on_step(self) -> bool:
            self.illegal += sum("illegal_action" in info for info in self.locals["infos"])
            return True

    venv = make_vec_env("PassCutRun-v0", n_envs=2, seed=0)
    assert venv.num_envs == 2 and is_masking_supported(venv)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [64]}, device="cpu")
    counter = CountIllegal()
    model.learn(total_timesteps=512, callback=counter)
    assert model.num_timesteps >= 512
    assert counter.illegal == 0  # the default episode is a whole game: 512 steps may not finish one
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
