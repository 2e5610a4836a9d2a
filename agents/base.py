"""The agent interface every player of Pass Cut Run implements, and the spec registry.

An agent maps the acting player's observation to an action id:

* ``agent.act(obs) -> int`` where ``obs`` is the environment's observation dict
  (``{"observation": float32[obs_dim], "action_mask": int8[70]}``) of the seat to act;
* ``agent.act_batch(obs, masks) -> int64[N]`` for ``N`` such decisions at once
  (observation rows ``[N, obs_dim]``, masks ``[N, 70]``);
* ``agent.reset(seed)`` re-seeds the agent's randomness. Tools call it at the
  start of every table, so a result depends only on the seed, never on how the
  work was split over processes.

An agent sees only what its seat sees: the observation vector (read with
:func:`pcr_env.decode_observation`) and the legal-action mask. It keeps no
memory between calls (the observation holds the round's whole public record),
so one instance may play both seats of a partnership.

Agents are built from a short spec string so every tool accepts the same names:

=================  ===============================================================
spec               agent
=================  ===============================================================
``random``         uniform over the legal actions (:class:`agents.random_agent.RandomAgent`)
``greedy``         wins each trick as cheaply as it can, naive bids (:class:`agents.greedy.GreedyAgent`)
``heuristic``      rule-based player (:class:`agents.heuristic.HeuristicAgent`)
``ppo:PATH``       a trained PPO policy loaded from a checkpoint (``agents.ppo``);
                   ``ppo:pretrained`` is the checkpoint shipped with the package
=================  ===============================================================

>>> agent = make_agent("random", seed=0)
>>> import numpy as np
>>> mask = np.zeros(70, np.int8); mask[[3, 17]] = 1
>>> agent.act({"observation": np.zeros(797, np.float32), "action_mask": mask}) in (3, 17)
True
>>> make_agent("magic")
Traceback (most recent call last):
...
ValueError: unknown agent spec 'magic': valid specs are 'random', 'greedy', 'heuristic', 'ppo:PATH'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

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


class BaseAgent:
    """Convenience base class: a seeded ``numpy`` generator, ``reset`` and a looping ``act_batch``.

    Subclasses implement :meth:`act`; batched agents (a neural network)
    override :meth:`act_batch` as well.
    """

    name = "agent"

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's randomness (called by tools before every table)."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)

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


def legal_actions(mask: np.ndarray) -> np.ndarray:
    """Legal action ids of a mask; raises ``ValueError`` when nothing is legal (not this seat's turn)."""
    legal = np.flatnonzero(np.asarray(mask))
    if len(legal) == 0:
        raise ValueError("action_mask has no legal action: agents act only for the seat whose turn it is")
    return legal


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class AgentKind:
    """A registered agent family: ``kind`` or ``kind:ARG`` in spec strings."""

    kind: str
    factory: Callable[..., Agent]  # factory(seed=..., **kwargs) or factory(arg, seed=..., **kwargs)
    takes_arg: bool
    arg_name: str
    description: str

    @property
    def pattern(self) -> str:
        return f"{self.kind}:{self.arg_name}" if self.takes_arg else self.kind


_REGISTRY: dict[str, AgentKind] = {}


def register_agent(kind: str, factory: Callable[..., Agent], *, takes_arg: bool = False,
                   arg_name: str = "ARG", description: str = "") -> None:
    """Make ``kind`` (or ``kind:ARG``) a valid spec for :func:`make_agent` and every tool.

    ``factory`` is called as ``factory(seed=seed, **kwargs)``, or
    ``factory(arg, seed=seed, **kwargs)`` when ``takes_arg``.
    """
    if not kind or ":" in kind or not kind.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"agent kind {kind!r} is not allowed: use letters, digits, '-' and '_'")
    _REGISTRY[kind] = AgentKind(kind, factory, takes_arg, arg_name, description)


def list_agents() -> dict[str, str]:
    """Valid spec patterns and what they build, e.g. ``{"random": "...", "ppo:PATH": "..."}``."""
    return {k.pattern: k.description for k in _REGISTRY.values()}


def _valid_specs() -> str:
    return ", ".join(repr(k.pattern) for k in _REGISTRY.values())


def parse_spec(spec: str) -> tuple[AgentKind, str | None]:
    """Split and check a spec string; raises ``ValueError`` naming the spec and the valid ones."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} is not a non-empty string: valid specs are {_valid_specs()}")
    kind, sep, arg = spec.strip().partition(":")
    entry = _REGISTRY.get(kind)
    if entry is None:
        raise ValueError(f"unknown agent spec {spec!r}: valid specs are {_valid_specs()}")
    if entry.takes_arg and not arg:
        raise ValueError(f"agent spec {spec!r} needs an argument: write {entry.pattern!r}; valid specs are {_valid_specs()}")
    if not entry.takes_arg and sep:
        raise ValueError(f"agent spec {spec!r} takes no argument: write {entry.kind!r}; valid specs are {_valid_specs()}")
    return entry, (arg if entry.takes_arg else None)


def make_agent(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build an agent from its spec string (see the module docstring for the names).

    ``seed`` seeds the agent's randomness. Extra keyword arguments go to the
    agent's factory: every agent accepts ``rules=RulesConfig(...)`` (the rules
    the table plays, which the observation does not carry in full); the PPO
    loader also accepts ``device=...``.
    """
    entry, arg = parse_spec(spec)
    if entry.takes_arg:
        return entry.factory(arg, seed=seed, **kwargs)
    return entry.factory(seed=seed, **kwargs)


def _random_factory(seed: int | None = None, **kwargs: Any) -> Agent:
    from .random_agent import RandomAgent

    return RandomAgent(seed=seed, **kwargs)


def _greedy_factory(seed: int | None = None, **kwargs: Any) -> Agent:
    from .greedy import GreedyAgent

    return GreedyAgent(seed=seed, **kwargs)


def _heuristic_factory(seed: int | None = None, **kwargs: Any) -> Agent:
    from .heuristic import HeuristicAgent

    return HeuristicAgent(seed=seed, **kwargs)


def _ppo_factory(path: str, seed: int | None = None, **kwargs: Any) -> Agent:
    try:
        from .ppo import load_ppo_agent  # imported lazily: it pulls in torch
    except ModuleNotFoundError as err:
        if err.name not in ("agents.ppo", "ppo"):
            raise
        raise ImportError(
            f"agent spec 'ppo:{path}' needs agents/ppo.py (load_ppo_agent), which is not installed in this checkout"
        ) from err
    # ``rules`` (the table's rules) lets the loader refuse a checkpoint trained for another variant.
    return load_ppo_agent(path, seed=seed, **kwargs)


register_agent("random", _random_factory, description="uniform over the legal actions")
register_agent("greedy", _greedy_factory, description="wins each trick as cheaply as it can; naive bidding")
register_agent("heuristic", _heuristic_factory, description="rule-based player (pass, bid, trump, play)")
register_agent("ppo", _ppo_factory, takes_arg=True, arg_name="PATH",
               description="PPO policy from a checkpoint file; ppo:pretrained is the shipped one")


__all__ = ["Agent", "BaseAgent", "AgentKind", "legal_actions", "list_agents", "make_agent", "parse_spec", "register_agent"]
