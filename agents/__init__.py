"""Agents for Pass Cut Run behind one small interface (see :mod:`agents.base`).

>>> from agents import make_agent, list_agents
>>> sorted(list_agents())
['greedy', 'heuristic', 'ppo:PATH', 'random']
>>> make_agent("heuristic", seed=0)
HeuristicAgent(seed=0)

The duplicate evaluation harness lives in :mod:`agents.evaluation` (imported on
demand: it pulls in scipy and tqdm); ``evaluate.py`` is its command line.
"""

from .base import Agent, BaseAgent, legal_actions, list_agents, make_agent, parse_spec, register_agent
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

__all__ = [
    "Agent", "BaseAgent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "legal_actions", "list_agents", "make_agent",
    "parse_spec", "register_agent",
]
