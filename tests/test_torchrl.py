"""TorchRL integration: the AEC env through ``torchrl.envs.PettingZooWrapper(..., use_mask=True)`` trained
with masked PPO (examples/torchrl_ppo.py), and the Gymnasium id through ``torchrl.envs.GymEnv``.

Needs the ``torchrl`` extra (part of ``all``). Outside CI the tests skip when torchrl is missing; in CI
(``CI=true``) a missing torchrl fails, because the issue requires these tests to run.
"""

from __future__ import annotations

import math

import pytest
from conftest import load_example, require_library

torch = require_library("torch")
torchrl = require_library("torchrl")
require_library("torchrl.collectors")  # imported here, at collection: TorchRL 0.14 warns about its own deprecations on import

import gymnasium  # noqa: E402

import pcr_env  # noqa: E402,F401  (registers PassCutRun-v0)

# TorchRL's own notes, not about pcr: its PettingZoo wrapper is "tested using version == 1.24.3"
# (pcr uses 1.25-1.27), and its deprecation notices about its own weight updaters.
pytestmark = [
    pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested using version:UserWarning"),
    pytest.mark.filterwarnings("ignore:Creating .* which inherits from WeightUpdaterBase is deprecated:DeprecationWarning"),
]


def test_pettingzoo_wrapper_passes_check_env_specs_and_masks_the_acting_seat():
    from torchrl.envs.utils import check_env_specs

    example = load_example("torchrl_ppo")
    env = example.make_env(seed=0)
    check_env_specs(env)
    assert env.group_map == {"agents": [f"player_{s}" for s in range(4)]}
    td = env.reset()
    assert int(td["agents", "mask"].sum()) == 1  # one seat acts at a time (AEC)
    seat = int(td["agents", "mask"].int().argmax())
    legal = td["agents", "action_mask"][seat]
    assert 0 < int(legal.sum()) < 70
    env.close()


def test_masked_ppo_trains_a_few_thousand_frames_without_an_illegal_action(tmp_path):
    example = load_example("torchrl_ppo")
    summary = example.main(["--frames", "2000", "--frames-per-batch", "500", "--epochs", "2", "--minibatch", "250",
                            "--hidden", "64", "--out", str(tmp_path)])
    assert summary["frames"] == 2000
    assert summary["acting_steps"] == 2000  # exactly one acting seat per frame
    assert summary["illegal_actions"] == 0
    assert summary["episodes"] > 0
    assert len(summary["history"]) == 4
    for row in summary["history"]:
        for key in ("loss_objective", "loss_critic", "loss_entropy"):
            assert math.isfinite(row[key]), (key, row)
    assert (tmp_path / "policy.pt").is_file() and (tmp_path / "summary.json").is_file()


def test_gymenv_builds_the_registered_id_and_rolls_out():
    """``GymEnv`` always passes ``frameskip=`` and retries without it on a ``TypeError`` only."""
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    env = GymEnv("PassCutRun-v0")
    check_env_specs(env)
    assert env.observation_spec["observation"].shape[-1] == gymnasium.make("PassCutRun-v0").observation_space.shape[0]
    assert env.action_spec.space.n == 70
    rollout = env.rollout(30, break_when_any_done=False)
    assert rollout.batch_size == torch.Size([30])
    assert torch.isfinite(rollout["next", "reward"]).all()
    env.close()
