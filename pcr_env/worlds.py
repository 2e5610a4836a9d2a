"""World sampling: complete deals consistent with what ONE seat knows, drawn exactly uniformly.

A *world* is a full :class:`pcr_env.engine.GameState` (every hand, the pass picks, the
kitty and the discards filled in) that agrees with everything the observer knows and
that the engine can continue from. The sampler reads only the observer's observation
vector (decoded with :func:`pcr_env.observation.decode_observation`), the public rules
(:class:`~pcr_env.config.RulesConfig`) and, if given, the env's ``action_mask`` (whose
only use is "is it my turn?"). It never sees the engine's hidden state.

What the observer knows, and what the sampler enforces
------------------------------------------------------
* its own hand, its pass picks / passed cards and the cards it received (R3.3), its
  discards when it is the six-player declarer (R9.3);
* every card played and by whom, the current trick, the bids, contract, declarer,
  trump, trick winners, runs, scores, dealer, pass direction, redeals (all public);
* every seat's hand size (from the phase, the cards it played, and the kitty/discards);
* the voids shown by failing to follow suit (R6.2): a void seat holds no card of that suit;
* the cards it passed are in the receiver's hand until played (R3.3). Exception, six
  players: a declarer receiver may have discarded them (R9.3), so there they are in its
  hand or in the discard pile, weighted exactly;
* in the passing phase, seats that already picked (the engine asks them in turn from the
  dealer's left) hold 3 hidden picks, drawn from their sampled 13 (8) cards;
* six players: before the declarer takes it the kitty is 4 hidden cards; afterwards it
  is 4 cards of the declarer's holdings that it did not receive; the discards are the
  declarer's own knowledge or, for the others, a hidden pile of as many cards.

Uniformity and the counting method
----------------------------------
The hidden cards go to *bins*: each other seat's current hand (before its picks, in the
passing phase) and, six players, the hidden pile (kitty before bidding ends, discards
after). A bin has a quota (its size minus cards already known to be in it) and a set of
allowed suits (voids are per suit), so unknown cards of one suit are interchangeable.
The number of consistent allocations is::

    sum over matrices n[bin][suit] (row sums = quotas, column sums = unknowns per suit,
    0 where the bin may not hold the suit) of  prod over suits of multinomial(u_suit; n[.][suit])

counted by a dynamic program over the bins whose state is the vector of cards still to
place per suit (<= 14^4 states, compiled with numba); ``W[b][r]`` is the number of ways
to fill bins ``b..`` from remaining counts ``r``. A world draws bin by bin the per-suit
counts with probability ``prod_j C(r_j, n_j) * W[b+1][r - n] / W[b][r]``, then splits
each suit's unknown cards uniformly (random keys). This is exact (float64 counts, no
rejection). Secondary hidden choices are then uniform given the hands, and their number
does not depend on the hands, so the full hidden state is uniform too: the picks of
seats that already picked, the 3 cards each hidden seat passed (any 3 of what its
receiver holds or played, R3.3), and (six players) which 4 of the declarer's holdings
were the kitty. The few observer-passed cards that may sit in a six-player declarer's
hand or discard pile are enumerated (at most 2^3 cases, each its own table, weighted
by its count).

Public facts the observation does not carry
-------------------------------------------
The observation has no seat number, round number, "who is to act" in the passing phase,
number of discards made so far (non-declarers, discard phase) or kitty identity (the
declarer's hand holds the kitty cards unmarked). So: ``seat`` (default 0) names the
observer's absolute seat; ``round_number`` defaults to the smallest round with the
observed pass direction (R3.2), ``rounds_played`` to ``round_number - 1``; in the
passing phase the observer is taken to be the seat to act unless ``action_mask`` says
otherwise or ``current=`` is given; ``current_picks`` (cards the seat to act has
picked, when that is not the observer) defaults to 0; ``discards_done`` defaults to 0
for a non-declarer in the discard phase; ``kitty=`` (a card mask) lets a declarer that
remembered its kitty pass it in (else it is drawn among its holdings).

Reuse a :class:`WorldSampler` to draw more worlds from one observation without rebuilding its
tables; ``benchmarks/speed/world_sampling.py`` measures what each costs.

>>> import numpy as np
>>> from pcr_env.config import RulesConfig
>>> from pcr_env.engine import new_game
>>> from pcr_env.observation import encode_observation
>>> state = new_game(RulesConfig(first_dealer=3), np.random.default_rng(1))
>>> worlds = sample_worlds(encode_observation(state, 0), RulesConfig(), np.random.default_rng(0), 3)
>>> [w.hands[0] == state.hands[0] for w in worlds]
[True, True, True]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from typing import Any, Sequence

import numpy as np
from numba import njit

from pcr_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, SUIT_MASKS, mask_of
from pcr_env.config import RulesConfig
from pcr_env.engine import NOT_YET, PASS_SIZE, PASSED, GameState, PassDirection, Phase
from pcr_env.knowledge import SeatKnowledge, seat_knowledge
from pcr_env.observation import decode_observation

_BINOM = np.array([[comb(n, k) for k in range(NUM_CARDS + 1)] for n in range(NUM_CARDS + 1)], np.float64)
_BIT = np.left_shift(np.int64(1), np.arange(NUM_CARDS, dtype=np.int64))


# ================================================================= compiled counting and sampling
@njit(cache=True)
def _strides(u):
    s = np.empty(4, np.int64)
    s[0] = 1
    for j in range(1, 4):
        s[j] = s[j - 1] * (u[j - 1] + 1)
    return s, s[3] * (u[3] + 1)


@njit(cache=True)
def _count_table(u, quotas, allowed, C):
    """``W[b, r]``: ways to fill bins ``b..`` with the remaining per-suit counts ``r`` (mixed radix over ``u``)."""
    B = quotas.shape[0]
    s, size = _strides(u)
    W = np.zeros((B + 1, size))
    W[B, 0] = 1.0
    suffix = np.zeros(B + 1, np.int64)
    for b in range(B - 1, -1, -1):
        suffix[b] = suffix[b + 1] + quotas[b]
    for b in range(B - 1, -1, -1):
        q = quotas[b]
        for idx in range(size):
            a0 = idx % (u[0] + 1)
            a1 = (idx // s[1]) % (u[1] + 1)
            a2 = (idx // s[2]) % (u[2] + 1)
            a3 = idx // s[3]
            if a0 + a1 + a2 + a3 != suffix[b]:
                continue
            total = 0.0
            m0 = min(a0, q) if allowed[b, 0] else 0
            for n0 in range(m0 + 1):
                m1 = min(a1, q - n0) if allowed[b, 1] else 0
                for n1 in range(m1 + 1):
                    m2 = min(a2, q - n0 - n1) if allowed[b, 2] else 0
                    for n2 in range(m2 + 1):
                        n3 = q - n0 - n1 - n2
                        if n3 > a3 or (n3 > 0 and not allowed[b, 3]):
                            continue
                        w = W[b + 1, idx - n0 - n1 * s[1] - n2 * s[2] - n3 * s[3]]
                        if w != 0.0:
                            total += C[a0, n0] * C[a1, n1] * C[a2, n2] * C[a3, n3] * w
            W[b, idx] = total
    return W


# The sampler's steps are inlined into it (numba IR inlining): as fast as one function, measured.
@njit(cache=True, inline="always")
def _draw_counts(W, b, idx, a, q, allowed, C, s, target):
    """Bin ``b``'s per-suit counts: the first term of ``W[b, idx]``'s sum whose running total passes ``target``."""
    acc = 0.0
    c0 = c1 = c2 = c3 = -1
    m0 = min(a[0], q) if allowed[b, 0] else 0
    for n0 in range(m0 + 1):
        m1 = min(a[1], q - n0) if allowed[b, 1] else 0
        for n1 in range(m1 + 1):
            m2 = min(a[2], q - n0 - n1) if allowed[b, 2] else 0
            for n2 in range(m2 + 1):
                n3 = q - n0 - n1 - n2
                if n3 > a[3] or (n3 > 0 and not allowed[b, 3]):
                    continue
                wt = W[b + 1, idx - n0 - n1 * s[1] - n2 * s[2] - n3 * s[3]]
                if wt == 0.0:
                    continue
                acc += C[a[0], n0] * C[a[1], n1] * C[a[2], n2] * C[a[3], n3] * wt
                c0, c1, c2, c3 = n0, n1, n2, n3  # the last positive term: guards float rounding
                if acc > target:
                    return c0, c1, c2, c3
    return c0, c1, c2, c3


@njit(cache=True, inline="always")
def _split_suits(u, counts, suit_cards, keys, out):
    """Deal each suit's unknown cards to the bins by ``counts``, in the order of the random ``keys``."""
    for b in range(out.shape[0]):
        out[b] = 0
    for j in range(4):
        n = u[j]
        if n == 0:
            continue
        order = np.argsort(keys[suit_cards[j, :n]])
        pos = 0
        for b in range(out.shape[0]):
            for _ in range(counts[b, j]):
                out[b] |= np.int64(1) << suit_cards[j, order[pos]]
                pos += 1


@njit(cache=True)
def _sample_masks(W, u, quotas, allowed, C, suit_cards, unif, keys, out):
    """Per world ``w``: draw each bin's per-suit counts, split each suit by ``keys[w]``; bin masks into ``out[w]``."""
    B = quotas.shape[0]
    s, size = _strides(u)
    counts = np.zeros((B, 4), np.int64)
    for w in range(unif.shape[0]):
        a = u.copy()
        idx = size - 1
        for b in range(B):
            c0, c1, c2, c3 = _draw_counts(W, b, idx, a, quotas[b], allowed, C, s, unif[w, b] * W[b, idx])
            counts[b, 0], counts[b, 1], counts[b, 2], counts[b, 3] = c0, c1, c2, c3
            for j in range(4):
                a[j] -= counts[b, j]
            idx -= c0 + c1 * s[1] + c2 * s[2] + c3 * s[3]
        _split_suits(u, counts, suit_cards, keys[w], out[w])
    return out


# ================================================================= vectorised helpers
def _choose(masks: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Per row, a uniform ``k``-subset of the card mask ``masks[i]`` (which holds at least ``k`` cards)."""
    masks = np.asarray(masks, np.int64)
    if k == 0 or masks.size == 0:
        return np.zeros(masks.shape, np.int64)
    bits = (masks[:, None] >> np.arange(NUM_CARDS)) & 1
    keys = rng.random((masks.shape[0], NUM_CARDS))
    keys[bits == 0] = 2.0
    pick = np.argpartition(keys, k - 1, axis=1)[:, :k]
    return _BIT[pick].sum(axis=1)


def _popcount(x: int) -> int:
    return bin(x).count("1")


def _rng(rng: Any) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


# ================================================================= what the observer knows
@dataclass
class _Scenario:
    """One placement of the ambiguous observer-passed cards, with its counting table."""

    quotas: np.ndarray
    allowed: np.ndarray
    fixed: list[int]  # per bin, known cards already in it
    W: np.ndarray
    weight: float


@dataclass
class Knowledge:
    """Everything one seat's observation fixes, in absolute seats, and the counting tables of its hidden cards."""

    rules: RulesConfig
    seat: int
    template: GameState  # public fields and the observer's own; hidden cards zero
    bins: list[int]  # bin b holds the hand of absolute seat bins[b]; PILE = the hidden kitty / discard pile
    unknown: int  # cards whose place is hidden (mask)
    u: np.ndarray  # unknown cards per suit
    suit_cards: np.ndarray  # [4, 13] the unknown cards of each suit, padded
    scenarios: list[_Scenario] = field(default_factory=list)
    pile: str | None = None  # None, "kitty" or "discards": what the PILE bin is
    pickers: list[tuple[int, int]] = field(default_factory=list)  # passing phase: (other seat, cards it picked)
    hidden_passers: list[int] = field(default_factory=list)  # seats whose passed cards the observer does not know
    receiver_of: dict[int, int] = field(default_factory=dict)
    kitty_known: int | None = None
    draw_kitty: bool = False  # six players, declarer took the kitty: draw which 4 of its holdings

    @property
    def count(self) -> float:
        """Consistent allocations of the hidden cards to hands and pile (float64: six-player counts pass 2^63)."""
        return float(sum(sc.weight for sc in self.scenarios))


PILE = -1


def _vector_and_mask(obs: Any) -> tuple[np.ndarray, np.ndarray | None]:
    if isinstance(obs, dict):
        mask = obs.get("action_mask")
        return np.asarray(obs["observation"]), None if mask is None else np.asarray(mask)
    return np.asarray(obs), None


@dataclass
class _Record:
    """The observation's public record and the observer's own cards, in absolute seats."""

    rules: RulesConfig
    seat: int
    phase: Phase
    hand: int
    passed: int  # the observer's pass picks
    received: int
    discards: int  # the observer's own discards (R9.3)
    played: list[int]
    voids: list[int]  # per seat, bit j: void in suit j (R6.2)
    bids: list[int]
    high_bid: int
    declarer: int
    trump: int
    dealer: int
    direction: PassDirection
    winners: list[int]
    took_kitty: bool
    n_discards: int = 0  # cards in the discard pile (set from _discard_count)

    @property
    def order(self) -> list[int]:
        """Seats in the order of R3.1 picks and R4.1 bids: from the dealer's left."""
        n = self.rules.players
        return [(self.dealer + 1 + i) % n for i in range(n)]

    @property
    def leader(self) -> int:
        """The current trick's leader: the last trick's winner, else the declarer."""
        return self.winners[-1] if self.winners else self.declarer

    def hand_size(self, s: int) -> int:
        """Cards in seat ``s``'s hand now (in the passing phase: before its picks leave it)."""
        if self.phase == Phase.PASS:
            return self.rules.hand_size
        size = self.rules.hand_size - _popcount(self.played[s])
        if s == self.declarer and self.took_kitty:
            size += self.rules.kitty_size - self.n_discards
        return size


def _checked_rules(view: Any, rules: RulesConfig | int, seat: int) -> RulesConfig:
    """The table's rules (a player count means the default rules), checked against the observation."""
    if isinstance(rules, (int, np.integer)):
        rules = RulesConfig(players=int(rules), target_score=view.target)
    n = rules.players
    if view.players != n:
        raise ValueError(f"observation is for {view.players} players, rules say {n}")
    if rules.target_score != view.target:
        raise ValueError(f"observation has target {view.target}, rules say {rules.target_score}")
    if not 0 <= seat < n:
        raise ValueError(f"seat {seat!r} is not a seat: allowed 0..{n - 1}")
    return rules


def _read_record(view: Any, rules: RulesConfig, seat: int) -> _Record:
    """The decoded observation with its relative seats ``k`` turned into absolute seats ``(seat + k) % n``."""
    n = rules.players
    played, voids, bids = [0] * n, [0] * n, [NOT_YET] * n
    for k in range(n):
        played[(seat + k) % n] = mask_of(view.played[k])
        voids[(seat + k) % n] = sum(1 << s for s in view.voids[k])
        bids[(seat + k) % n] = NOT_YET if view.bids[k] is None else view.bids[k]
    high_bid = view.contract or 0
    took_kitty = rules.kitty_size > 0 and high_bid > 0 and view.phase in (
        Phase.TRUMP, Phase.DISCARD, Phase.PLAY, Phase.ROUND_END, Phase.GAME_OVER)
    return _Record(
        rules=rules, seat=seat, phase=view.phase, hand=mask_of(view.hand), passed=mask_of(view.passed),
        received=mask_of(view.received), discards=mask_of(view.discarded), played=played, voids=voids, bids=bids,
        high_bid=high_bid, declarer=-1 if view.declarer is None else (seat + view.declarer) % n,
        trump=-1 if view.trump is None else view.trump, dealer=(seat + view.dealer) % n,
        direction=view.pass_direction, winners=[(seat + k) % n for k in view.trick_winners], took_kitty=took_kitty,
    )


# ---- the seat to act
def _picker(rec: _Record, current: int | None, my_turn: bool | None, current_picks: int) -> int:
    """Passing phase: the seat picking now (the observer unless its picks or ``action_mask`` say otherwise), checked."""
    seat, order, n = rec.seat, rec.order, rec.rules.players
    picks = _popcount(rec.passed)
    if current is None:
        if 0 < picks < PASS_SIZE or (picks == 0 and my_turn is not False):
            current = seat
        elif picks == PASS_SIZE:
            current = (seat + 1) % n
        else:
            current = order[0] if order[0] != seat else seat
    before = order.index(current) <= order.index(seat)
    if (picks == PASS_SIZE) == before or (0 < picks < PASS_SIZE and current != seat):
        raise ValueError(f"seat {current} cannot be picking while seat {seat} has picked {picks} cards")
    if current != seat and not 0 <= current_picks < PASS_SIZE:
        raise ValueError(f"current_picks={current_picks!r}: allowed 0..{PASS_SIZE - 1}")
    return current


def _next_bidder(rec: _Record) -> int:
    """R4.1/R4.3: the next seat to bid (an auction goes round from the high bidder, skipping seats that passed)."""
    n, declarer, bids = rec.rules.players, rec.declarer, rec.bids
    if declarer >= 0 and rec.rules.bidding == "auction":
        return next((declarer + i) % n for i in range(1, n) if bids[(declarer + i) % n] != PASSED)
    return next(s for s in rec.order if bids[s] == NOT_YET)


def _actor(rec: _Record, view: Any) -> int:
    """After the passing phase: the seat to act, from the public record (-1 when nobody acts)."""
    if rec.phase == Phase.BID:
        return _next_bidder(rec)
    if rec.phase in (Phase.TRUMP, Phase.DISCARD):
        return rec.declarer
    if rec.phase == Phase.PLAY:
        return (rec.leader + sum(c is not None for c in view.trick)) % rec.rules.players
    return -1


def _seat_to_act(rec: _Record, view: Any, current: int | None, action_mask: np.ndarray | None,
                 current_picks: int) -> tuple[int, int]:
    """The seat to act and the number of seats done passing (``GameState.pass_done``), checked against the mask."""
    my_turn = None if action_mask is None else bool(np.any(action_mask))
    if rec.phase == Phase.PASS:
        current = _picker(rec, current, my_turn, current_picks)
        pass_done = rec.order.index(current)
    else:
        current = _actor(rec, view)
        pass_done = 0 if rec.direction == PassDirection.NONE else rec.rules.players
    if my_turn is not None and my_turn != (current == rec.seat):
        raise ValueError(f"action_mask says it is {'' if my_turn else 'not '}seat {rec.seat}'s turn; "
                         f"derived seat {current}")
    return current, pass_done


# ---- the current trick
def _current_trick(rec: _Record, view: Any) -> list[tuple[int, int]]:
    """The current trick's ``(seat, card)`` pairs in play order, from its leader."""
    n, seat = rec.rules.players, rec.seat
    on = sum(c is not None for c in view.trick)
    trick: list[tuple[int, int]] = []
    for i in range(on):
        s = (rec.leader + i) % n
        c = view.trick[(s - seat) % n]
        if c is None:
            raise ValueError("the current trick's cards do not follow on from its leader")
        trick.append((s, c))
    return trick


# ---- discards
def _discard_count(rec: _Record, discards_done: int | None) -> int:
    """Cards in the six-player discard pile (R9.3): all of them once play starts; the observer's own or
    ``discards_done`` during the discard phase."""
    if not (rec.rules.kitty_size and rec.high_bid > 0):
        return 0
    if rec.phase in (Phase.PLAY, Phase.ROUND_END, Phase.GAME_OVER):
        return rec.rules.kitty_size
    if rec.phase == Phase.DISCARD:
        return _popcount(rec.discards) if rec.seat == rec.declarer else int(discards_done or 0)
    return 0


def _check_own_cards(rec: _Record) -> None:
    """The observer's hand, picks and discards must add up to what the public record implies."""
    seat = rec.seat
    if seat == rec.declarer and _popcount(rec.discards) != rec.n_discards:
        raise ValueError(f"declarer observation shows {_popcount(rec.discards)} discards, expected {rec.n_discards}")
    if rec.phase == Phase.PASS:
        if _popcount(rec.hand) + _popcount(rec.passed) != rec.rules.hand_size:
            raise ValueError("own hand and picks do not add up to a full hand")
    elif _popcount(rec.hand) != rec.hand_size(seat):
        raise ValueError(f"own hand has {_popcount(rec.hand)} cards, the public record implies {rec.hand_size(seat)}")


# ---- passing: who gives to whom (R3.2)
def _pass_graph(rec: _Record, receiver: int) -> tuple[dict[int, int], int, int]:
    """Every seat's receiver (absolute), the observer's receiver and the seat that passed to the observer
    (-1: no passing), from the observer's relative ``receiver`` (:func:`pcr_env.knowledge.seat_knowledge`)."""
    if receiver < 0:
        return {}, -1, -1
    n, seat = rec.rules.players, rec.seat
    return {s: (s + receiver) % n for s in range(n)}, (seat + receiver) % n, (seat - receiver) % n


# ---- known and unknown cards, and the bins they go to
def _placed_cards(rec: _Record, seen: SeatKnowledge, exchanged: bool, receiver: int) -> tuple[int, dict[int, int], int]:
    """``(unknown, fixed, ambiguous)``: the hidden cards whose place is unknown, the cards known to be in each other
    seat's hand (my passed cards still out are the receiver's, R3.3), and the passed cards that a six-player
    declarer receiver may hold or have discarded."""
    still = seen.mask(seen.passed_held)
    unknown = seen.mask(seen.unseen) & ~still
    fixed = {s: 0 for s in range(rec.rules.players) if s != rec.seat}
    ambiguous = 0
    if exchanged:
        if receiver == rec.declarer and rec.rules.kitty_size and rec.n_discards:
            ambiguous = still
        else:
            fixed[receiver] |= still
    return unknown, fixed, ambiguous


def _pile_kind(rec: _Record) -> str | None:
    """What the hidden pile bin holds: the kitty before the declarer takes it, the discards another seat cannot see."""
    K = rec.rules.kitty_size
    if K and not rec.took_kitty:
        return "kitty"
    if K and rec.seat != rec.declarer and rec.n_discards:
        return "discards"
    return None


def _bins(rec: _Record, pile: str | None) -> tuple[list[int], list[int], np.ndarray]:
    """The bins (other seats, then the pile), their sizes, and the suits each may hold (no suit it is void in)."""
    bins = [s for s in range(rec.rules.players) if s != rec.seat] + ([PILE] if pile else [])
    sizes = []
    allowed = np.ones((len(bins), NUM_SUITS), np.bool_)
    for b, s in enumerate(bins):
        if s == PILE:
            sizes.append(rec.rules.kitty_size if pile == "kitty" else rec.n_discards)
            continue
        sizes.append(rec.hand_size(s))
        for j in range(NUM_SUITS):
            if rec.voids[s] >> j & 1:
                allowed[b, j] = False
    return bins, sizes, allowed


def _unknown_by_suit(unknown: int) -> tuple[np.ndarray, np.ndarray]:
    """Unknown cards per suit, and each suit's unknown cards (``[4, 13]``, ascending, zero-padded)."""
    u = np.array([_popcount(unknown & SUIT_MASKS[j]) for j in range(NUM_SUITS)], np.int64)
    suit_cards = np.zeros((NUM_SUITS, NUM_RANKS), np.int64)
    for j in range(NUM_SUITS):
        cs = [c for c in range(j * NUM_RANKS, (j + 1) * NUM_RANKS) if unknown >> c & 1]
        suit_cards[j, :len(cs)] = cs
    return u, suit_cards


def _shows_void(cards: int, voids: int) -> bool:
    """Whether any of ``cards`` is of a suit in the void bits ``voids``."""
    return any(voids >> (c // NUM_RANKS) & 1 for c in range(NUM_CARDS) if cards >> c & 1)


def _scenarios(rec: _Record, bins: list[int], sizes: list[int], allowed: np.ndarray, u: np.ndarray,
               fixed: dict[int, int], ambiguous: int, receiver: int) -> list[_Scenario]:
    """One counting table per placement of the ambiguous cards (in the receiver's hand or the discard pile)
    that leaves a consistent deal, weighted by its count."""
    scenarios = []
    amb = [c for c in range(NUM_CARDS) if ambiguous >> c & 1]
    for choice in range(1 << len(amb)):  # bit i set: ambiguous card i is in the discard pile
        to_pile = mask_of([c for i, c in enumerate(amb) if choice >> i & 1])
        fixed_b = [fixed.get(s, 0) if s != PILE else 0 for s in bins]
        if ambiguous:
            fixed_b[bins.index(receiver)] |= ambiguous & ~to_pile
            fixed_b[bins.index(PILE)] |= to_pile
        quotas = np.array([q - _popcount(f) for q, f in zip(sizes, fixed_b)], np.int64)
        ok = (quotas >= 0).all() and int(quotas.sum()) == int(u.sum())
        if not ok or any(s != PILE and _shows_void(fixed_b[b], rec.voids[s]) for b, s in enumerate(bins)):
            continue
        W = _count_table(u, quotas, allowed, _BINOM)
        weight = float(W[0, -1])
        if weight > 0:
            scenarios.append(_Scenario(quotas, allowed, fixed_b, W, weight))
    if not scenarios:
        raise ValueError("no deal is consistent with this observation")
    return scenarios


# ---- the template world
def _template(rec: _Record, view: Any, current: int, pass_done: int, trick: list[tuple[int, int]],
              round_number: int | None, rounds_played: int | None) -> GameState:
    """The public fields and the observer's own; every hidden card left out (zero)."""
    rules, seat, n = rec.rules, rec.seat, rec.rules.players
    if round_number is None:  # the smallest round with this pass direction (R3.2)
        round_number = int(rec.direction) + 1 if rules.passing else 1
    mine = seat % 2  # the observation lists the observer's team first
    ours = lambda pair: [pair[0], pair[1]] if mine == 0 else [pair[1], pair[0]]  # noqa: E731
    bids = rec.bids
    template = GameState(
        config=rules, round_number=int(round_number), dealer=rec.dealer, redeals=view.redeals, phase=rec.phase,
        current=int(current), hands=[0] * n, kitty=0, passed=[0] * n, received=[0] * n, pass_done=pass_done,
        bids=bids, out=[b == PASSED for b in bids], high_bid=rec.high_bid, declarer=rec.declarer, trump=rec.trump,
        discards=rec.discards if seat == rec.declarer else 0, trick=trick, played=rec.played, voids=rec.voids,
        trick_winners=rec.winners, team_tricks=ours(view.team_tricks), scores=ours(view.scores),
        run_team=-1 if view.run[0] is None else (mine if view.run[0] == 0 else 1 - mine),
        run_length=view.run[1], pass_direction=rec.direction,
        rounds_played=int(round_number) - 1 if rounds_played is None else int(rounds_played),
    )
    template.hands[seat] = rec.hand
    template.passed[seat] = rec.passed
    template.received[seat] = rec.received
    if rec.phase == Phase.GAME_OVER:
        a, b = template.scores
        template.winner = None if a == b else (0 if a > b else 1)
        template.truncated = template.winner is None or max(a, b) < rules.target_score
    return template


def _pickers(rec: _Record, current: int, pass_done: int, current_picks: int) -> list[tuple[int, int]]:
    """Passing phase: ``(seat, cards it picked)`` for the other seats that have picked (R3.1)."""
    if rec.phase != Phase.PASS:
        return []
    pickers = [(s, PASS_SIZE) for s in rec.order[:pass_done] if s != rec.seat]
    if current != rec.seat and current_picks:
        pickers.append((current, int(current_picks)))
    return pickers


def knowledge(
    obs: Any, rules: RulesConfig | int, *, seat: int = 0, current: int | None = None,
    round_number: int | None = None, rounds_played: int | None = None, kitty: int | Sequence[int] | None = None,
    discards_done: int | None = None, current_picks: int = 0,
) -> Knowledge:
    """Decode ``obs`` (a vector or the env's ``{"observation", "action_mask"}`` dict) into a :class:`Knowledge`."""
    vector, action_mask = _vector_and_mask(obs)
    view = decode_observation(vector)
    rules = _checked_rules(view, rules, seat)
    n = rules.players
    rec = _read_record(view, rules, seat)
    current, pass_done = _seat_to_act(rec, view, current, action_mask, current_picks)
    trick = _current_trick(rec, view)
    rec.n_discards = _discard_count(rec, discards_done)
    _check_own_cards(rec)

    seen = seat_knowledge(vector, n)
    receiver_of, receiver, giver = _pass_graph(rec, seen.receiver)
    exchanged = rec.phase != Phase.PASS and rec.direction != PassDirection.NONE
    unknown, fixed, ambiguous = _placed_cards(rec, seen, exchanged, receiver)
    pile = _pile_kind(rec)
    bins, sizes, allowed = _bins(rec, pile)
    u, suit_cards = _unknown_by_suit(unknown)
    scenarios = _scenarios(rec, bins, sizes, allowed, u, fixed, ambiguous, receiver)

    if kitty is not None and not isinstance(kitty, (int, np.integer)):
        kitty = mask_of(kitty)
    template = _template(rec, view, current, pass_done, trick, round_number, rounds_played)
    if exchanged:
        template.passed[giver] = rec.received
        template.received[receiver] = rec.passed
    return Knowledge(
        rules=rules, seat=seat, template=template, bins=bins, unknown=unknown, u=u, suit_cards=suit_cards,
        scenarios=scenarios, pile=pile, pickers=_pickers(rec, current, pass_done, current_picks),
        hidden_passers=[s for s in range(n) if exchanged and s not in (seat, giver)], receiver_of=receiver_of,
        kitty_known=None if kitty is None else int(kitty), draw_kitty=rec.took_kitty,
    )


# ================================================================= sampling
def sample_masks(kn: Knowledge, rng: Any = None, count: int = 1) -> np.ndarray:
    """``[count, bins]`` card masks of the hidden bins (``kn.bins``), known cards of each bin included."""
    rng = _rng(rng)
    B = len(kn.bins)
    out = np.zeros((count, B), np.int64)
    weights = np.array([sc.weight for sc in kn.scenarios])
    which = rng.choice(len(weights), size=count, p=weights / weights.sum()) if len(weights) > 1 else \
        np.zeros(count, np.int64)
    unif = rng.random((count, B))
    keys = rng.random((count, NUM_CARDS))
    for i, sc in enumerate(kn.scenarios):
        rows = np.flatnonzero(which == i)
        if rows.size == 0:
            continue
        part = np.zeros((rows.size, B), np.int64)
        _sample_masks(sc.W, kn.u, sc.quotas, sc.allowed, _BINOM, kn.suit_cards, unif[rows], keys[rows], part)
        out[rows] = part | np.array(sc.fixed, np.int64)
    return out


def worlds_from_masks(kn: Knowledge, masks: np.ndarray, rng: Any = None) -> list[GameState]:
    """Complete :class:`GameState` worlds from sampled bin masks (draws the picks, hidden passes and the kitty)."""
    rng = _rng(rng)
    count = masks.shape[0]
    n, seat, t = kn.rules.players, kn.seat, kn.template
    hands = np.zeros((count, n), np.int64)
    hands[:, seat] = t.hands[seat]
    pile = np.zeros(count, np.int64)
    for b, s in enumerate(kn.bins):
        if s == PILE:
            pile = masks[:, b]
        else:
            hands[:, s] = masks[:, b]
    passed = np.tile(np.array(t.passed, np.int64), (count, 1))
    received = np.tile(np.array(t.received, np.int64), (count, 1))
    for s, k in kn.pickers:  # passing phase: the picks of seats that already picked come out of their hands
        picks = _choose(hands[:, s], k, rng)
        passed[:, s] = picks
        hands[:, s] &= ~picks
    played = np.array(t.played, np.int64)
    discards = np.full(count, t.discards, np.int64) if kn.pile != "discards" else pile
    declarer = t.declarer

    def holdings(s: int) -> np.ndarray:
        h = hands[:, s] | played[s]
        return h | discards if s == declarer and kn.draw_kitty else h

    for s in kn.hidden_passers:  # R3.3: the 3 cards s passed are in its receiver's holdings
        r = kn.receiver_of[s]
        pool = holdings(r)
        if r == declarer and kn.draw_kitty and kn.kitty_known is not None:
            pool = pool & ~kn.kitty_known
        picks = _choose(pool, PASS_SIZE, rng)
        passed[:, s] = picks
        received[:, r] = picks
    if kn.pile == "kitty":
        kitty = pile
    elif kn.draw_kitty:
        if kn.kitty_known is not None:
            kitty = np.full(count, kn.kitty_known, np.int64)
        else:
            kitty = _choose(holdings(declarer) & ~received[:, declarer], kn.rules.kitty_size, rng)
    else:
        kitty = np.zeros(count, np.int64)
    hands_l, passed_l, received_l = hands.tolist(), passed.tolist(), received.tolist()
    kitty_l, discards_l = kitty.tolist(), discards.tolist()
    worlds = []
    for w in range(count):
        world = t.copy()
        world.hands, world.passed, world.received = hands_l[w], passed_l[w], received_l[w]
        world.kitty, world.discards = kitty_l[w], discards_l[w]
        worlds.append(world)
    return worlds


class WorldSampler:
    """The counting tables of one observation, built once; :meth:`sample` draws any number of worlds."""

    def __init__(self, obs: Any, rules: RulesConfig | int, **options: Any):
        self.knowledge = knowledge(obs, rules, **options)

    @property
    def count(self) -> float:
        return self.knowledge.count

    def sample(self, rng: Any = None, count: int = 1) -> list[GameState]:
        rng = _rng(rng)
        return worlds_from_masks(self.knowledge, sample_masks(self.knowledge, rng, count), rng)


def sample_worlds(obs: Any, rules: RulesConfig | int, rng: Any = None, count: int = 1,
                  **options: Any) -> list[GameState]:
    """``count`` worlds drawn uniformly and independently among the deals consistent with ``obs``.

    ``obs``: one seat's observation vector, or the env's dict (``observation``,
    optional ``action_mask``). ``rules``: the table's :class:`RulesConfig` (or its
    player count, for default rules). ``rng``: a ``numpy.random.Generator`` or a seed.
    ``options``: ``seat`` (the observer's absolute seat, default 0), ``current``,
    ``current_picks``, ``round_number``, ``rounds_played``, ``kitty``, ``discards_done``: public facts the
    observation does not carry (module docstring).
    """
    return WorldSampler(obs, rules, **options).sample(rng, count)


def sample_world(obs: Any, rules: RulesConfig | int, rng: Any = None, **options: Any) -> GameState:
    """One world (:func:`sample_worlds` with ``count=1``)."""
    return sample_worlds(obs, rules, rng, 1, **options)[0]


def count_worlds(obs: Any, rules: RulesConfig | int, **options: Any) -> float:
    """Number of consistent allocations of the hidden cards to the other hands and the hidden pile."""
    return knowledge(obs, rules, **options).count


__all__ = ["Knowledge", "WorldSampler", "count_worlds", "knowledge", "sample_masks", "sample_world", "sample_worlds",
           "worlds_from_masks"]
