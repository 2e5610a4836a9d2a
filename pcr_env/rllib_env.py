"""RLlib support: the AEC env as an RLlib multi-agent env in RLlib's action-masking layout.

RLlib takes PettingZoo AEC envs through ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``,
and its action-masking module (``ray.rllib.examples.rl_modules.classes.action_masking_rlm.
ActionMaskingTorchRLModule``) reads observation dicts with the keys ``"observations"`` and
``"action_mask"``, where PettingZoo's classic games say ``"observation"``. :class:`RLlibKeys`
renames that one key; :func:`rllib_env` is an env creator for ``ray.tune.registry.register_env``;
:func:`team_policy` maps each agent to one shared policy per team (R1.2: ``team = seat % 2``).

Credit is RLlib's PettingZoo wrapper's: an agent's reward is its AEC cumulative reward,
delivered with its next observation (or at the end of the episode), so a round that ends on
another seat's card is credited to every seat once, to the seat that earned it.

Ray is optional (``pip install -e ".[rllib]"``); this module imports it only inside
:func:`rllib_env`, so :class:`RLlibKeys` and :func:`team_policy` work without it.

>>> from pcr_env import pass_cut_run_v0
>>> env = RLlibKeys(pass_cut_run_v0.env(episode="round"))
>>> env.reset(seed=0)
>>> sorted(env.observe(env.agent_selection)), sorted(env.observation_space("player_0").spaces)
(['action_mask', 'observations'], ['action_mask', 'observations'])
>>> team_policy("player_3")
'team_1'
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from . import pass_cut_run_v0


class RLlibKeys(BaseWrapper):
    """Renames the observation dict's ``"observation"`` key to ``"observations"`` (RLlib's masking layout)."""

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._spaces = {
            agent: spaces.Dict({
                "observations": env.observation_space(agent)["observation"],
                "action_mask": env.observation_space(agent)["action_mask"],
            })
            for agent in env.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        obs = self.env.observe(agent)
        if obs is None:
            return None
        return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


def rllib_env(config: dict[str, Any] | None = None):
    """RLlib env creator: ``register_env("pass_cut_run", rllib_env)``.

    ``config`` holds the keyword arguments of :func:`pcr_env.pass_cut_run_v0.env`
    (rules fields, ``episode``, ``reward``). RLlib's ``EnvContext`` (a dict) works as is.
    """
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibKeys(pass_cut_run_v0.env(**dict(config or {}))))


def team_policy(agent_id: str, *args: Any, **kwargs: Any) -> str:
    """``policy_mapping_fn`` sharing one policy per team: ``player_0``/``player_2`` -> ``team_0`` (R1.2)."""
    return f"team_{int(agent_id.rsplit('_', 1)[1]) % 2}"


__all__ = ["RLlibKeys", "rllib_env", "team_policy"]
