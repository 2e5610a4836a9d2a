"""Beliefs over sampled worlds: weighting the worlds of :mod:`pcr_env.worlds` by the other seats' bids.

The worlds :func:`pcr_env.worlds.sample_worlds` draws are uniform given the observation. To take the
other seats' bids as evidence, weight each world by the product of a policy's probabilities of those
bids at the positions :func:`bidding_positions` rebuilds (:func:`bid_weights`), and resample. No agent
uses it by default; ``docs/agents.md`` gives what it measured.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pcr_env.actions import BID_BASE, PASS_BID
from pcr_env.engine import NOT_YET, PASSED, GameState, Phase, legal_mask
from pcr_env.observation import encode_observation


def bidding_positions(world: GameState, seat: int) -> list[tuple[int, GameState, int]]:
    """For each other seat that has bid (R4.3 ``single`` bidding), ``(bidder, position at its bid, its bid action)``.

    The position is ``world`` rewound to that seat's bidding turn: its hand before any
    card was played (the kitty and discards undone for a six-player declarer), the bids
    spoken before it (one turn round the table from the dealer's left), nothing played.
    ``encode_observation(position, bidder)`` is then what the bidder saw, so a policy's
    probability of the bid it made can weight the world (:func:`bid_weights`).
    """
    rules = world.config
    if rules.bidding != "single":
        return []  # auction: the observation keeps only each seat's latest bid, not the order
    n = rules.players
    took = rules.kitty_size and world.high_bid > 0 and world.phase in (Phase.TRUMP, Phase.DISCARD, Phase.PLAY,
                                                                       Phase.ROUND_END, Phase.GAME_OVER)
    order = [(world.dealer + 1 + i) % n for i in range(n)]
    base = world.copy()
    for s in range(n):
        base.hands[s] = world.hands[s] | world.played[s]
    if took:
        d = world.declarer
        base.hands[d] = (base.hands[d] | world.discards) & ~world.kitty
    base.played, base.voids, base.trick, base.trick_winners = [0] * n, [0] * n, [], []
    base.team_tricks, base.run_team, base.run_length = [0, 0], -1, 0
    base.trump, base.discards, base.phase = -1, 0, Phase.BID
    out = []
    high, declarer = 0, -1
    for i, s in enumerate(order):
        bid = world.bids[s]
        if bid == NOT_YET:
            break
        if s != seat:
            pos = base.copy()
            pos.current = s
            pos.bids = [world.bids[t] if t in order[:i] else NOT_YET for t in range(n)]
            pos.out = [b == PASSED for b in pos.bids]
            pos.high_bid, pos.declarer = high, declarer
            out.append((s, pos, PASS_BID if bid == PASSED else BID_BASE + bid - 1))
        if bid != PASSED:
            high, declarer = bid, s
    return out


def bid_weights(worlds: Sequence[GameState], seat: int, log_probs: Any) -> np.ndarray:
    """Normalised importance weights of ``worlds``: the product over the other seats' bids of ``P(bid | its view)``.

    ``log_probs(obs [N, D], masks [N, A]) -> [N, A]`` is a policy's log-probabilities (for
    the PPO agent: ``log_softmax(model.masked_logits(obs, mask))``). Worlds are uniform
    given the observation, so these weights turn them into the posterior under that
    policy's bidding. Returns uniform weights when nobody else has bid.
    """
    rows, obs, masks, acts = [], [], [], []
    for w, world in enumerate(worlds):
        for bidder, pos, action in bidding_positions(world, seat):
            rows.append(w)
            obs.append(encode_observation(pos, bidder))
            masks.append(legal_mask(pos))
            acts.append(action)
    logw = np.zeros(len(worlds))
    if rows:
        lp = np.asarray(log_probs(np.array(obs), np.array(masks)))
        np.add.at(logw, np.array(rows), lp[np.arange(len(acts)), np.array(acts)])
    wts = np.exp(logw - logw.max())
    return wts / wts.sum()


__all__ = ["bid_weights", "bidding_positions"]
