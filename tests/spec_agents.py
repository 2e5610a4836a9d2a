"""Agents of one's own for tests/test_agent_specs.py: reached by spec (``spec_agents:first_legal``), never registered.

Importable as ``spec_agents`` because pytest puts ``tests/`` on ``sys.path`` (as for ``conftest``); a subprocess
gets it through ``PYTHONPATH``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import BaseAgent


class FirstLegal(BaseAgent):
    """Plays the first legal action (the last with ``last=True``) and keeps the options it was built with."""

    name = "first-legal"

    def __init__(self, seed: int | None = None, **options: Any):
        super().__init__(seed)
        self.options = options

    @classmethod
    def quiet(cls, seed: int | None = None) -> FirstLegal:
        """A factory reached as an attribute's attribute (``spec_agents:FirstLegal.quiet``)."""
        return cls(seed, style="quiet")

    def act(self, obs: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[-1] if self.options.get("last") else legal[0])


def first_legal(seed: int | None = None, rules: Any = None, *, last: bool = False, depth: int = 1,
                style: str = "plain", temperature: float = 0.0) -> FirstLegal:
    """The factory of ``spec_agents:first_legal[:OPTIONS]``."""
    agent = FirstLegal(seed, last=last, depth=depth, style=style, temperature=temperature)
    agent.rules = rules
    return agent


def named(name: str, seed: int | None = None) -> FirstLegal:
    """A factory with a positional argument: as an entry point ``NAME``, the spec ``NAME:ARG``."""
    return FirstLegal(seed, player=name)


def with_kwargs(seed: int | None = None, **options: Any) -> FirstLegal:
    """A factory taking any option."""
    return FirstLegal(seed, **options)


def needs_model(model: str, seed: int | None = None) -> FirstLegal:
    """A factory with a required option (``model=``)."""
    return FirstLegal(seed, model=model)


def no_seed(depth: int = 1) -> FirstLegal:
    """Not a factory: the tools pass ``seed=``."""
    return FirstLegal(None, depth=depth)


def not_an_agent(seed: int | None = None) -> str:
    """Returns no agent."""
    return "a plan, not an agent"


DEPTH = 3  # not callable
