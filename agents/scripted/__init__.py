"""Scripted players, no learning and no torch: uniform random, greedy and the rule-based heuristic.

``calibrate`` tunes the heuristic's bidding constants by simulation (``python -m agents.scripted.calibrate``).
"""

from agents.scripted.greedy import GreedyAgent
from agents.scripted.heuristic import HeuristicAgent
from agents.scripted.random_agent import RandomAgent

__all__ = ["GreedyAgent", "HeuristicAgent", "RandomAgent"]
