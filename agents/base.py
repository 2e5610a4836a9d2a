"""The agent interface every player of Pass Cut Run implements.

An agent maps the acting player's observation to an action id:

* ``agent.act(obs) -> int`` where ``obs`` is the environment's observation dict
  (``{"observation": float32[obs_dim], "action_mask": int8[70]}``) of the seat to act;
* ``agent.act_batch(obs, masks) -> int64[N]`` for ``N`` such decisions at once
  (observation rows ``[N, obs_dim]``, masks ``[N, 70]``);
* ``agent.reset(seed)`` re-seeds the agent's randomness. Tools call it at the
  start of every table (evaluation), episode (the Gymnasium view, on a seeded
  reset) or game (the terminal player), so a result depends only on the seed,
  never on how the work was split over processes;
* ``agent.get_state() -> dict`` and ``agent.set_state(state)`` save and restore
  its random streams mid-run (the trainer's resume). The dict holds numpy
  ``Generator`` state dicts and torch ``Generator`` ``ByteTensor`` states only,
  so it goes into a ``torch.load(weights_only=True)`` checkpoint; keys missing
  from ``state`` leave those streams as they are.

:class:`BaseAgent` implements all but :meth:`~BaseAgent.act` from one numpy
generator ``self.rng``. Spec strings (``"heuristic"``, ``"ppo:PATH"``) are turned
into agents by :mod:`agents.registry`.

An agent sees only what its seat sees: the observation vector (read with
:func:`pcr_env.decode_observation`) and the legal-action mask. It keeps no
memory between calls (the observation holds the round's whole public record),
so one instance may play both seats of a partnership.

Agents are built from short spec strings (``"heuristic"``, ``"ppo:pretrained"``, ``"search:ppo:pretrained"``)
by :mod:`agents.registry`, whose docstring lists them, so every tool accepts the same names.

>>> from agents.scripted.random_agent import RandomAgent
>>> import numpy as np
>>> agent = RandomAgent(seed=0)
>>> mask = np.zeros(70, np.int8); mask[[3, 17]] = 1
>>> obs = {"observation": np.zeros(797, np.float32), "action_mask": mask}
>>> saved = agent.get_state()
>>> first = [agent.act(obs) for _ in range(5)]
>>> agent.set_state(saved)
>>> [agent.act(obs) for _ in range(5)] == first
True
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from pcr_env.actions import NUM_ACTIONS


@runtime_checkable
class Agent(Protocol):
    """What every agent provides (see the module docstring)."""

    def act(self, obs: dict[str, np.ndarray]) -> int:
        """Action id for the acting seat's observation dict; always legal under its mask."""
        ...

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Action ids for ``N`` decisions: observations ``[N, obs_dim]``, masks ``[N, 70]``."""
        ...

    def reset(self, seed: int | None = None) -> None:
        """Re-seed every random stream of the agent from ``seed`` (``None``: fresh entropy)."""
        ...

    def get_state(self) -> dict[str, Any]:
        """The agent's random streams (numpy generator state dicts, torch generator ByteTensors)."""
        ...

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore streams saved by :meth:`get_state` (keys absent from ``state`` are left alone)."""
        ...


class BaseAgent:
    """Convenience base class: a seeded ``numpy`` generator ``self.rng``, ``reset``,
    ``get_state``/``set_state`` and a looping ``act_batch``.

    Subclasses implement :meth:`act`; batched agents (a neural network)
    override :meth:`act_batch` as well. A subclass with more random streams
    extends :meth:`reset`, :meth:`get_state` and :meth:`set_state` (see
    :class:`agents.ppo.PPOAgent`).
    """

    name = "agent"

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's randomness (called by tools before every table)."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def get_state(self) -> dict[str, Any]:
        """``{"rng": self.rng.bit_generator.state}``: a plain dict of ints and strings."""
        return {"rng": self.rng.bit_generator.state}

    def set_state(self, state: dict[str, Any]) -> None:
        if "rng" in state:
            self.rng.bit_generator.state = state["rng"]

    def act(self, obs: dict[str, np.ndarray]) -> int:
        raise NotImplementedError

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(obs), np.asarray(masks)
        if obs.ndim != 2 or masks.ndim != 2 or len(obs) != len(masks):
            raise ValueError(
                f"act_batch expects observations [N, obs_dim] and masks [N, {NUM_ACTIONS}], "
                f"got shapes {obs.shape} and {masks.shape}"
            )
        return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)], np.int64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed!r})"


class SearchingAgent(BaseAgent):
    """An agent that searches at its decisions: a forced move (one legal action) is played at once, without a
    search; every other decision is :meth:`search`'s (``search:SPEC``, ``pimc``, ``openspiel:BOT``)."""

    def act(self, obs: dict[str, np.ndarray]) -> int:
        legal = legal_actions(obs["action_mask"])
        return int(legal[0]) if len(legal) == 1 else int(self.search(obs, legal))

    def search(self, obs: dict[str, np.ndarray], legal: np.ndarray) -> int:
        """The action for ``obs``, one of ``legal`` (more than one)."""
        raise NotImplementedError


def legal_actions(mask: np.ndarray) -> np.ndarray:
    """Legal action ids of a mask; raises ``ValueError`` when nothing is legal (not this seat's turn)."""
    legal = np.flatnonzero(np.asarray(mask))
    if len(legal) == 0:
        raise ValueError("action_mask has no legal action: agents act only for the seat whose turn it is")
    return legal


__all__ = ["Agent", "BaseAgent", "SearchingAgent", "legal_actions"]
