"""An agent that hands some phases of the round to another agent: phase ablations.

``PhaseMix(primary, other, phases)`` plays like ``primary`` except at decisions of the given
phases (read from the observation, R4–R6), where ``other`` decides. Played in duplicate against
``primary`` alone, the difference is what ``primary``'s own decisions at those phases are worth
against ``other``'s (``benchmarks/studies/phase_credit.py``): it says where one agent's lead over another
lies, as ``benchmarks/studies/search_by_phase.py`` does for search.

Both agents see only the acting seat's observation, as every agent does, and keep no memory
between calls, so mixing them per decision is sound.

>>> import numpy as np
>>> from agents.scripted.greedy import GreedyAgent
>>> from agents.scripted.random_agent import RandomAgent
>>> from pcr_env.vector import VectorEnv
>>> mix = PhaseMix(GreedyAgent(), RandomAgent(), phases=("bid", "trump"), seed=0)
>>> mix.name
'greedy[bid+trump=random]'
>>> obs, masks, _ = VectorEnv(2, seed=0).reset()
>>> actions = mix.act_batch(obs, masks)
>>> bool(masks[np.arange(2), actions].all())
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, BaseAgent
from pcr_env.engine import PHASE_NAMES, Phase
from pcr_env.observation import decode_observation


def _label(agent: Agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


class PhaseMix(BaseAgent):
    """``primary`` everywhere except the decisions of ``phases``, which ``other`` takes."""

    def __init__(self, primary: Agent, other: Agent, phases: tuple[str, ...], *, seed: int | None = None,
                 name: str | None = None):
        phases = tuple(phases)
        unknown = sorted(set(phases) - set(PHASE_NAMES))
        if not phases or unknown:
            raise ValueError(f"PhaseMix phases={phases!r} is not allowed: allowed a non-empty subset of "
                             f"{', '.join(PHASE_NAMES)}")
        self.primary, self.other = primary, other  # before BaseAgent.__init__, whose reset re-seeds them
        super().__init__(seed)
        self.phases = frozenset(Phase[p.upper()] for p in phases)
        self.name = name or f"{_label(primary)}[{'+'.join(p for p in PHASE_NAMES if p in phases)}={_label(other)}]"

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.primary.reset(int(self.rng.integers(2**63)))
        self.other.reset(int(self.rng.integers(2**63)))

    def get_state(self) -> dict[str, Any]:
        return {**super().get_state(), "primary": self.primary.get_state(), "other": self.other.get_state()}

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        if "primary" in state:
            self.primary.set_state(state["primary"])
        if "other" in state:
            self.other.set_state(state["other"])

    def act(self, obs: dict[str, np.ndarray]) -> int:
        agent = self.other if decode_observation(obs).phase in self.phases else self.primary
        return int(agent.act(obs))

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(obs), np.asarray(masks)
        to_other = np.array([decode_observation({"observation": o, "action_mask": m}).phase in self.phases
                             for o, m in zip(obs, masks)], bool)
        actions = np.empty(len(obs), np.int64)
        for agent, rows in ((self.other, to_other), (self.primary, ~to_other)):
            if rows.any():
                actions[rows] = agent.act_batch(obs[rows], masks[rows])
        return actions

    def __repr__(self) -> str:
        return f"PhaseMix({self.primary!r}, {self.other!r}, phases={sorted(p.name.lower() for p in self.phases)})"


__all__ = ["PhaseMix"]
