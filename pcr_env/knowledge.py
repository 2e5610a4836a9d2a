"""What one seat knows about the hidden cards, computed from its observation alone.

The one place that turns a seat's observation into card knowledge: the heuristic's card play
(:mod:`agents.scripted.heuristic`), the card-aware network's features (:mod:`agents.ppo.card_features`)
and the world sampler (:mod:`pcr_env.worlds`) all read it. Seats are relative, 0 being the observer.

* ``hand``: in my hand.
* ``unseen``: not in my hand, not played by anyone, not discarded by me (R9.3): another seat, the
  kitty or the hidden discard pile holds it.
* ``passed_held``: a card I passed that is not yet played; the receiver of my passes (R3.2) holds
  it (R3.3; a six-player declarer receiver may have discarded it, which only the sampler weighs). In the
  passing phase my picks so far count as passed already.
* ``may_hold[k, c]``: seat ``k`` could hold card ``c``: it is unseen, ``k`` has not shown out of its
  suit (R6.2), and it is not one of my passed cards held by another seat.
* ``receiver``: the relative seat that received my passes (-1: no passing this round).

:func:`row_knowledge` is the compiled kernel over one observation row (the network's features run
it for a whole batch); :func:`seat_knowledge` is the same for one observation, as arrays.

>>> import numpy as np
>>> from pcr_env.config import RulesConfig
>>> from pcr_env.engine import new_game
>>> from pcr_env.observation import encode_observation
>>> state = new_game(RulesConfig(first_dealer=3), np.random.default_rng(1))  # round 1: pass to the partner
>>> kn = seat_knowledge(encode_observation(state, 0), 4)
>>> int(kn.hand.sum()), int(kn.unseen.sum()), int(kn.may_hold[1].sum()), kn.receiver
(13, 39, 39, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from pcr_env.cards import NUM_CARDS, NUM_RANKS
from pcr_env.engine import pass_offset
from pcr_env.observation import observation_layout

# The observation slices the knowledge is read from, in the order of ``offsets`` (observation_layout).
SLICES = ("hand", "passed", "discarded", "played", "voids", "pass_direction")
HAND, PASSED, DISCARDED, PLAYED, VOIDS, PASS_DIRECTION = range(len(SLICES))


def knowledge_offsets(players: int) -> np.ndarray:
    """Start of each of :data:`SLICES` in a ``players``-seat observation (the kernel's ``offsets``)."""
    layout = observation_layout(players).slices
    return np.array([layout[name].start for name in SLICES], np.int64)


@njit(cache=True, nogil=True)
def pass_receiver(o, n, offsets):
    """R3.2: the relative seat that received this seat's passes, from the pass-direction slice (-1: none)."""
    for d in range(3):  # partner, left, right; the fourth entry is "no passing"
        if o[offsets[PASS_DIRECTION] + d] > 0:
            return pass_offset(d) % n
    return -1


@njit(cache=True, nogil=True)
def row_knowledge(o, n, offsets, hand, unseen, passed_held, may_hold):
    """Fill ``hand``, ``unseen``, ``passed_held`` ``[52]`` and ``may_hold`` ``[n, 52]`` from observation row ``o``.

    Returns the receiver of this seat's passes (relative seat, -1: none); ``may_hold[0]`` is left at 0.
    """
    receiver = pass_receiver(o, n, offsets)
    # Without branches (or of comparisons, products of 0/1): a feature kernel runs this per row, and the branchy
    # form took twice as long (mispredicted jumps on random cards).
    hand_at, discarded_at, passed_at, played_at = offsets[HAND], offsets[DISCARDED], offsets[PASSED], offsets[PLAYED]
    for c in range(NUM_CARDS):
        held = o[hand_at + c] > 0
        seen = held | (o[discarded_at + c] > 0)
        for k in range(n):
            seen |= o[played_at + k * NUM_CARDS + c] > 0
        hand[c] = held
        unseen[c] = 0 if seen else 1
        passed_held[c] = unseen[c] & (o[passed_at + c] > 0)
        may_hold[0, c] = 0
    for k in range(1, n):
        not_receiver = 1 if k != receiver else 0  # my passed cards are held by the receiver alone (R3.3)
        for suit in range(4):
            not_void = 0 if o[offsets[VOIDS] + 4 * k + suit] > 0 else 1
            for c in range(suit * NUM_RANKS, (suit + 1) * NUM_RANKS):
                may_hold[k, c] = unseen[c] & not_void & (1 - (passed_held[c] & not_receiver))
    return receiver


@dataclass(frozen=True)
class SeatKnowledge:
    """One observation's card knowledge (0/1 arrays; see the module docstring)."""

    hand: np.ndarray  # [52]
    unseen: np.ndarray  # [52]
    passed_held: np.ndarray  # [52]
    may_hold: np.ndarray  # [n, 52]
    receiver: int

    def unseen_of_suit(self, suit: int) -> list[int]:
        """The unseen cards of ``suit``, ascending."""
        lo = suit * NUM_RANKS
        return [lo + int(r) for r in np.flatnonzero(self.unseen[lo:lo + NUM_RANKS])]

    def mask(self, cards: np.ndarray) -> int:
        """A 0/1 card array as a card bit mask (bit ``c`` for card ``c``)."""
        return int(np.sum(np.left_shift(np.int64(1), np.flatnonzero(cards).astype(np.int64))))


def seat_knowledge(obs: np.ndarray, players: int) -> SeatKnowledge:
    """The card knowledge of the seat whose observation vector is ``obs``."""
    o = np.ascontiguousarray(obs, dtype=np.float32)
    hand, unseen, passed_held = (np.zeros(NUM_CARDS, np.int64) for _ in range(3))
    may_hold = np.zeros((players, NUM_CARDS), np.int64)
    receiver = row_knowledge(o, players, knowledge_offsets(players), hand, unseen, passed_held, may_hold)
    return SeatKnowledge(hand, unseen, passed_held, may_hold, int(receiver))


__all__ = ["SLICES", "SeatKnowledge", "knowledge_offsets", "pass_receiver", "row_knowledge", "seat_knowledge"]
