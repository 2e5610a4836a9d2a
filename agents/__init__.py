"""Agents for Pass Cut Run behind one small interface (see :mod:`agents.base`).

>>> from agents import make_agent, list_agents
>>> list(list_agents())[:7]  # the built-in specs; register_agent adds more (the RLlib example adds rllib:PATH)
['random', 'greedy', 'heuristic', 'ppo:PATH', 'search:SPEC', 'mix:SPEC', 'pimc']
>>> make_agent("heuristic", seed=0)
HeuristicAgent(seed=0)

Subpackages by role: :mod:`agents.scripted` (random, greedy, heuristic), :mod:`agents.search`
(decision-time search, ``pimc``, phase mixes), :mod:`agents.ppo` (the learned policy: network,
checkpoints, the loadable agent), :mod:`agents.evaluation` (duplicate matches, statistics,
reports; ``evaluate.py`` is its command line) and :mod:`agents.training` (the trainer's parts;
``train.py`` is the loop). :mod:`agents.registry` builds agents from spec strings and is the entry
point of the Gymnasium id ``"PassCutRun-v0"``; :mod:`agents.play` is the terminal player
(``python -m agents.play``).

Layers: ``agents`` imports :mod:`pcr_env` (never the other way round); torch only in
:mod:`agents.ppo` and :mod:`agents.training` (``ppo:PATH`` specs load it on demand).
"""

from agents import _jit  # noqa: F401 - the numba cache stamp of agents' compiled files (before any of them loads)
from agents.base import Agent, BaseAgent, legal_actions
from agents.registry import list_agents, make_agent, make_agents, parse_spec, register_agent
from agents.scripted.greedy import GreedyAgent
from agents.scripted.heuristic import HeuristicAgent
from agents.scripted.random_agent import RandomAgent

__all__ = [
    "Agent", "BaseAgent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "legal_actions", "list_agents", "make_agent",
    "make_agents", "parse_spec", "register_agent",
]
