"""A simple greedy player: the middle rung between ``random`` and ``heuristic``.

It knows the rules but no strategy, like a beginner who plays each trick on its own:

* pass: the three lowest cards (any suit);
* bid: the lowest legal bid when high-card points / 4 plus the length of the
  longest suit beyond four reach 5 (ace 4, king 3, queen 2, jack 1; with six
  players' 8-card hands the bar is scaled to 5 x 8/13), unless partner holds
  the contract; otherwise no bid;
* trump: the longest suit (ties: the higher suit);
* discard (six players): the lowest non-trump card;
* play: lead the highest card; when following, take the trick with the
  cheapest winning card (non-trumps before trumps) unless partner is winning;
  otherwise throw the lowest card, trumps last.

Notes on trick-taking baselines call such a bot "simple greedy"; a learner
should beat it clearly before it is compared with ``heuristic``. Deterministic.

>>> from pcr_env import pass_cut_run_v0
>>> env = pass_cut_run_v0.raw_env(episode="round", first_dealer=0)
>>> env.reset(seed=1)
>>> agent, result = GreedyAgent(), None
>>> for who in env.agent_iter():
...     obs, _, term, trunc, info = env.last()
...     result = info.get("round_result", result)
...     env.step(None if term or trunc else agent.act(obs))
>>> sum(result["tricks"])
13
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import BaseAgent, legal_actions
from pcr_env.actions import BID_BASE, PASS_BID, TRUMP_BASE
from pcr_env.cards import beats
from pcr_env.engine import Phase
from pcr_env.observation import decode_observation


class GreedyAgent(BaseAgent):
    """Wins each trick as cheaply as it can and nothing more (see the module docstring)."""

    name = "greedy"

    def __init__(self, seed: int | None = None, rules: Any = None):
        super().__init__(seed)

    def act(self, obs: dict[str, np.ndarray]) -> int:
        legal = [int(a) for a in legal_actions(obs["action_mask"])]
        view = decode_observation(obs["observation"])
        phase = view.phase
        if phase == Phase.PASS:
            return min(legal, key=lambda c: (c % 13, c))
        if phase == Phase.BID:
            bids = [a for a in legal if BID_BASE <= a < PASS_BID]
            points = sum(max(0, c % 13 - 8) for c in view.hand)
            longest = max(sum(1 for c in view.hand if c // 13 == s) for s in range(4))
            partner_holds = view.declarer is not None and view.declarer % 2 == 0
            bar = 5.0 * view.num_tricks / 13
            if bids and not partner_holds and points / 4 + max(0, longest - 4) >= bar:
                return bids[0]
            return PASS_BID
        if phase == Phase.TRUMP:
            return TRUMP_BASE + max(range(4), key=lambda s: (sum(1 for c in view.hand if c // 13 == s), s))
        trump = -1 if view.trump is None else view.trump
        cheap_first = lambda c: (c // 13 == trump, c % 13, c)  # noqa: E731
        if phase == Phase.DISCARD:
            return min(legal, key=cheap_first)
        leader = view.trick_leader
        if leader is None:
            return max(legal, key=lambda c: (c % 13, c))
        order = [(k, view.trick[k]) for k in range(leader, view.players)]
        led = order[0][1] // 13
        winner, best = order[0]
        for k, card in order[1:]:
            if beats(card, best, led, trump):  # R6.4
                winner, best = k, card
        if winner % 2 == 1:
            winning = [c for c in legal if beats(c, best, led, trump)]
            if winning:
                return min(winning, key=cheap_first)
        return min(legal, key=cheap_first)


__all__ = ["GreedyAgent"]
