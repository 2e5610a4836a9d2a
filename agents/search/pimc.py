"""``pimc``: a double-dummy reference opponent (Perfect Information Monte Carlo, four players).

At each decision the agent samples worlds (complete deals consistent with its own
observation, :mod:`pcr_env.worlds`), solves each world double-dummy with the bridge
solver DDS (through ``endplay``, the optional ``pimc`` extra) and acts on the average:

* **card play** (R6): the legal card with the most double-dummy tricks for its side, averaged
  over the worlds (the same worlds for every card);
* **bidding** (R4): for each world and each trump suit, the double-dummy tricks of its side with
  itself as declarer and on lead (R6.1: here the declarer leads the first trick, where the
  bridge convention has the declarer's left-hand opponent lead, so every solve sets the leader
  explicitly); the best suit on average fixes a trick distribution, and the agent bids the
  highest legal contract it makes in at least ``confidence`` of the worlds (else it passes);
* **trump** (R5): the suit with the most double-dummy tricks on average;
* **passing** (R3): a simple rule: to the partner its three highest cards, to an opponent its
  three lowest (passing is skipped by the double-dummy part altogether).

Double-dummy solving maximises tricks, not this game's score: it knows nothing of runs
(R7) or of what a failed contract costs beyond the bid (R8). That is why it is a reference
opponent, not a teacher. It reads only its observation; the worlds come from the sampler,
which reads nothing else. Six-player tables (kitty, discards, 3 v 3) are not supported.

>>> import numpy as np
>>> from pcr_env.config import RulesConfig
>>> from pcr_env.engine import legal_mask, new_game
>>> from pcr_env.observation import encode_observation
>>> state = new_game(RulesConfig(passing=False, first_dealer=3), np.random.default_rng(0))
>>> agent = PIMCAgent(seed=0, worlds=4)
>>> int(agent.act({"observation": encode_observation(state, 0), "action_mask": legal_mask(state)})) in np.flatnonzero(legal_mask(state))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.base import SearchingAgent
from pcr_env.actions import PASS_BID, TRUMP_BASE, bid_action
from pcr_env.cards import NUM_SUITS, cards_of, rank_of, suit_of
from pcr_env.config import RulesConfig
from pcr_env.engine import GameState, Phase
from pcr_env.observation import decode_observation

_RANK_CHARS = "23456789TJQKA"
_PBN_SUITS = (3, 2, 1, 0)  # a PBN hand lists spades, hearts, diamonds, clubs; our suits are C D H S = 0..3


def _solver() -> Any:
    try:
        from endplay import dds, types
    except ImportError as err:  # the optional extra
        raise ImportError("the pimc agent needs the double-dummy solver endplay: pip install 'pcr[pimc]'") from err
    return dds, types


def _pbn(hands: Sequence[int]) -> str:
    """``N:`` PBN of four hands given as card bitmasks, seat 0 = North, then clockwise (to the left)."""
    out = []
    for mask in hands:
        cards = cards_of(mask)
        out.append(".".join("".join(_RANK_CHARS[rank_of(c)] for c in sorted(cards, key=rank_of, reverse=True)
                                    if suit_of(c) == s) for s in _PBN_SUITS))
    return "N:" + " ".join(out)


def _card_name(card: int) -> str:
    return "CDHS"[suit_of(card)] + _RANK_CHARS[rank_of(card)]


def _denom(types: Any, suit: int) -> Any:
    return (types.Denom.clubs, types.Denom.diamonds, types.Denom.hearts, types.Denom.spades)[suit]


def card_values(world: GameState) -> dict[int, int]:
    """Double-dummy tricks still to come for the side of the seat to act, per legal card of it.

    ``world`` is a complete position in the play phase (every hand known); the current
    trick's cards are replayed on the solver's deal from its leader.
    """
    dds, types = _solver()
    before_trick = list(world.hands)
    for seat, card in world.trick:
        before_trick[seat] |= 1 << card
    deal = types.Deal(_pbn(before_trick))
    deal.trump = _denom(types, world.trump)
    leader = world.trick[0][0] if world.trick else world.current
    deal.first = types.Player(leader)
    for _, card in world.trick:
        deal.play(_card_name(card))
    out = {}
    for card, tricks in dds.solve_board(deal):
        ours = (3 - int(card.suit)) * 13 + int(np.log2(int(card.rank))) - 2
        out[ours] = int(tricks)
    return out


def declarer_tricks(world: GameState, seat: int) -> list[int]:
    """Per trump suit (C D H S), double-dummy tricks of ``seat``'s side with ``seat`` as declarer, on lead."""
    dds, types = _solver()
    from endplay.dds.solve import SolveMode

    deal = types.Deal(_pbn(world.hands))
    deal.first = types.Player(seat)
    out = []
    for suit in range(NUM_SUITS):
        deal.trump = _denom(types, suit)
        out.append(max(tricks for _, tricks in dds.solve_board(deal, mode=SolveMode.OptimalOne)))
    return out


class PIMCAgent(SearchingAgent):
    """Double-dummy play, bids and trump over ``worlds`` sampled deals per decision (see the module docstring)."""

    name = "pimc"

    def __init__(self, seed: int | None = None, rules: RulesConfig | None = None, *, worlds: int = 12,
                 bid_worlds: int = 6, confidence: float = 0.7):
        super().__init__(seed)
        self.rules = rules or RulesConfig()
        if self.rules.players != 4:
            raise ValueError(f"the pimc agent plays four-player tables only (rules players={self.rules.players})")
        for name, value in (("worlds", worlds), ("bid_worlds", bid_worlds)):
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"pimc {name}={value!r} is not allowed: allowed an integer >= 1")
        if not 0 < confidence <= 1:
            raise ValueError(f"pimc confidence={confidence!r} is not allowed: allowed a number in (0, 1]")
        self.worlds, self.bid_worlds, self.confidence = worlds, bid_worlds, confidence
        _solver()  # fail at construction, not at the first card

    def search(self, obs: dict[str, np.ndarray], legal: np.ndarray) -> int:
        view = decode_observation(obs)
        if view.phase == Phase.PASS:
            return self._pass(view, legal)
        if view.phase == Phase.PLAY:
            return self._play(self._worlds(obs, self.worlds), legal)
        # Bids and trump: each world solved four times (one per trump suit) with this seat on lead.
        tricks = np.array([declarer_tricks(w, w.current) for w in self._worlds(obs, self.bid_worlds)])
        if view.phase == Phase.TRUMP:
            return TRUMP_BASE + int(tricks.mean(0).argmax())
        if view.phase == Phase.BID:
            return self._bid(tricks, legal)
        raise ValueError(f"the pimc agent has no rule for phase {view.phase.name}")

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)], np.int64)

    # ------------------------------------------------------------------ decisions
    def _worlds(self, obs: dict[str, np.ndarray], count: int) -> list[GameState]:
        from pcr_env.worlds import sample_worlds

        return sample_worlds(obs, self.rules, self.rng, count)

    def _pass(self, view: Any, legal: np.ndarray) -> int:
        to_partner = view.pass_direction.name.lower() == "partner"
        ranked = sorted(legal.tolist(), key=lambda c: (rank_of(c), -suit_of(c)), reverse=to_partner)
        return int(ranked[0])

    def _play(self, worlds: list[GameState], legal: np.ndarray) -> int:
        totals = np.zeros(len(legal))
        for world in worlds:
            values = card_values(world)
            totals += [values.get(int(c), -1) for c in legal]
        # Ties go to the lowest card: keep the high ones for later tricks.
        best = np.flatnonzero(totals == totals.max())
        return int(min(legal[best], key=rank_of))

    def _bid(self, tricks: np.ndarray, legal: np.ndarray) -> int:
        suit = int(tricks.mean(0).argmax())
        made = tricks[:, suit]
        best = PASS_BID
        for a in sorted(int(x) for x in legal if x != PASS_BID):
            level = a - bid_action(1) + 1
            if (made >= level).mean() >= self.confidence:
                best = a
        return best


__all__ = ["PIMCAgent", "card_values", "declarer_tricks"]
