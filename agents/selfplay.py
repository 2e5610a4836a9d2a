"""Opponents for self-play: the mix of opponent kinds and a pool of frozen snapshots.

Every game of a training batch has an opponent, drawn again whenever a
trajectory ends (see ``train.py``): ``"self"`` (both teams are the current
network and both produce training data), ``"snapshot"`` (a frozen past version
of the network from :class:`OpponentPool`) or any agent spec accepted by
:func:`agents.make_agent` (``"heuristic"``, ``"random"``, ``"ppo:PATH"``).

The pool is sampled by prioritised fictitious self-play (AlphaStar's PFSP with
the "hard" weighting): snapshot ``j`` is drawn with weight ``(1 - p_j) ** power``
where ``p_j`` is the learner's estimated probability of winning a round against
it (ties count one half, Laplace prior), so the learner meets the snapshots it
struggles against more often; ``power = 0`` is uniform.

>>> import numpy as np
>>> pool = OpponentPool(capacity=2, pfsp_power=2.0)
>>> pool.add(object(), iteration=0), pool.add(object(), iteration=5)  # slots
(0, 1)
>>> pool.record(0, wins=9.0, rounds=10.0); pool.record(1, wins=1.0, rounds=10.0)
>>> pool.weights().round(3).tolist()   # snapshot 1 beats the learner: drawn far more often
[0.038, 0.962]
"""

from __future__ import annotations

from typing import Any

import numpy as np


class OpponentPool:
    """Up to ``capacity`` frozen policies (the newest replaces the oldest) with per-slot win statistics."""

    def __init__(self, capacity: int, pfsp_power: float):
        self.capacity, self.pfsp_power = capacity, pfsp_power
        self.agents: list[Any] = []
        self.iterations: list[int] = []
        self.wins = np.zeros(capacity, np.float64)
        self.rounds = np.zeros(capacity, np.float64)
        self.next_slot = 0

    def __len__(self) -> int:
        return len(self.agents)

    def add(self, agent: Any, iteration: int) -> int:
        """Store ``agent`` (a frozen policy); returns its slot. Statistics of a reused slot restart."""
        slot = self.next_slot
        if slot == len(self.agents):
            self.agents.append(agent)
            self.iterations.append(iteration)
        else:
            self.agents[slot], self.iterations[slot] = agent, iteration
        self.wins[slot] = self.rounds[slot] = 0.0
        self.next_slot = (slot + 1) % self.capacity
        return slot

    def win_rates(self) -> np.ndarray:
        """Learner's estimated round-win probability against each stored snapshot."""
        n = len(self.agents)
        return (self.wins[:n] + 1.0) / (self.rounds[:n] + 2.0)

    def weights(self) -> np.ndarray:
        """PFSP sampling probabilities of the stored snapshots."""
        w = (1.0 - self.win_rates()) ** self.pfsp_power
        return w / w.sum()

    def sample(self, rng: np.random.Generator) -> int:
        if not self.agents:
            raise ValueError("the snapshot pool is empty")
        return int(rng.choice(len(self.agents), p=self.weights()))

    def record(self, slot: int, wins: float, rounds: float) -> None:
        """Add results against slot ``slot`` (``wins`` counts a tie as one half)."""
        self.wins[slot] += wins
        self.rounds[slot] += rounds


def round_outcome(learner_score: float, opponent_score: float) -> float:
    """1 for a round the learner's team outscored, 0.5 for a tie, 0 for a loss."""
    return 1.0 if learner_score > opponent_score else 0.5 if learner_score == opponent_score else 0.0


__all__ = ["OpponentPool", "round_outcome"]
