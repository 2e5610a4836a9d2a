"""Agents for Pass Cut Run behind one small interface (see :mod:`agents.base`).

>>> from agents import make_agent, list_agents
>>> sorted(list_agents())
['greedy', 'heuristic', 'pimc', 'ppo:PATH', 'random', 'search:SPEC']
>>> make_agent("heuristic", seed=0)
HeuristicAgent(seed=0)

Layers: ``agents`` imports :mod:`pcr_env` (never the other way round) and torch only
in :mod:`agents.ppo` (``ppo:PATH`` specs load it on demand). :mod:`agents.registry`
builds agents from spec strings and is the entry point of the Gymnasium id
``"PassCutRun-v0"``; :mod:`agents.play` is the terminal player
(``python -m agents.play``). The duplicate evaluation harness lives in
:mod:`agents.evaluation` (imported on demand: it pulls in scipy and tqdm);
``evaluate.py`` is its command line.
"""

from .base import Agent, BaseAgent, legal_actions
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent
from .registry import list_agents, make_agent, make_agents, parse_spec, register_agent

__all__ = [
    "Agent", "BaseAgent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "legal_actions", "list_agents", "make_agent",
    "make_agents", "parse_spec", "register_agent",
]
