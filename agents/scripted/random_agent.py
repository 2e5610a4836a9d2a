"""The uniform-random legal player: the floor every other agent is measured from.

>>> import numpy as np
>>> agent = RandomAgent(seed=3)
>>> mask = np.zeros(70, np.int8); mask[[52, 60, 65]] = 1
>>> sorted({agent.act({"observation": np.zeros(797, np.float32), "action_mask": mask}) for _ in range(50)})
[52, 60, 65]
"""

from __future__ import annotations

import numpy as np

from agents.base import BaseAgent, legal_actions


class RandomAgent(BaseAgent):
    """Picks uniformly among the legal actions with its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None):  # the mask is all it needs: no ``rules``
        super().__init__(seed)

    def act(self, obs: dict[str, np.ndarray]) -> int:
        legal = legal_actions(obs["action_mask"])
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks)
        if masks.ndim != 2:
            raise ValueError(f"act_batch expects masks [N, 70], got shape {masks.shape}")
        counts = masks.astype(bool).sum(axis=1)
        if (counts == 0).any():
            raise ValueError(f"action_mask rows {np.flatnonzero(counts == 0).tolist()} have no legal action")
        # The k-th legal action of each row, k uniform in 0..count-1.
        picks = (self.rng.random(len(masks)) * counts).astype(np.int64)
        cum = np.cumsum(masks.astype(bool), axis=1)
        return np.argmax(cum > picks[:, None], axis=1).astype(np.int64)


__all__ = ["RandomAgent"]
