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

Cost (``python -m pcr_env.worlds``: 300 decisions of random games, one core of the dev
machine): the counting tables cost 0.5 ms per observation with four players and 1.5 ms
with six (up to 8 tables when passes to a six-player declarer may be in its discards);
each world then costs about 10-15 us in batches of 16-256 (mostly building the
``GameState`` objects), 60-90 us alone. ``sample_worlds(obs, rules, rng, 16)``: about
0.7 ms (four players), 1.7 ms (six). Reuse a :class:`WorldSampler` to draw more worlds
from one observation without rebuilding its tables.

Optional weighting (:func:`bid_weights`): worlds are uniform given the observation; to
take the other seats' bids as evidence, weight each world by the product of a policy's
probabilities of those bids at the positions :func:`bidding_positions` rebuilds, and
resample. Measured with the shipped PPO policy (which also played the games), over
100 first-trick positions and 2048 worlds each: the argmax guess of each hidden card's
holder improves from 41.8% to 45.7% with tempered weights ``w ** 0.25``; the per-card
log-loss gains 0.010 +- 0.003 nats tempered, but loses 0.04 with raw weights (their
effective sample size can fall to about 1). Not used by default.

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
from pcr_env.engine import NOT_YET, PASS_OFFSET, PASS_SIZE, PASSED, GameState, PassDirection, Phase
from pcr_env.knowledge import seat_knowledge
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


@njit(cache=True)
def _sample_masks(W, u, quotas, allowed, C, suit_cards, unif, keys, out):  # noqa: C901
    """Per world ``w``: draw each bin's per-suit counts, split each suit by ``keys[w]``; bin masks into ``out[w]``."""
    B = quotas.shape[0]
    s, size = _strides(u)
    counts = np.zeros((B, 4), np.int64)
    for w in range(unif.shape[0]):
        a = u.copy()
        idx = size - 1
        for b in range(B):
            q = quotas[b]
            target = unif[w, b] * W[b, idx]
            acc = 0.0
            c0 = c1 = c2 = c3 = -1
            done = False
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
                            done = True
                            break
                    if done:
                        break
                if done:
                    break
            counts[b, 0], counts[b, 1], counts[b, 2], counts[b, 3] = c0, c1, c2, c3
            for j in range(4):
                a[j] -= counts[b, j]
            idx -= c0 + c1 * s[1] + c2 * s[2] + c3 * s[3]
        for b in range(B):
            out[w, b] = 0
        for j in range(4):
            n = u[j]
            if n == 0:
                continue
            order = np.argsort(keys[w][suit_cards[j, :n]])
            pos = 0
            for b in range(B):
                for _ in range(counts[b, j]):
                    out[w, b] |= np.int64(1) << suit_cards[j, order[pos]]
                    pos += 1
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


def knowledge(  # noqa: C901
    obs: Any, rules: RulesConfig | int, *, seat: int = 0, current: int | None = None,
    round_number: int | None = None, rounds_played: int | None = None, kitty: int | Sequence[int] | None = None,
    discards_done: int | None = None, current_picks: int = 0,
) -> Knowledge:
    """Decode ``obs`` (a vector or the env's ``{"observation", "action_mask"}`` dict) into a :class:`Knowledge`."""
    vector, action_mask = _vector_and_mask(obs)
    view = decode_observation(vector)
    if isinstance(rules, (int, np.integer)):
        rules = RulesConfig(players=int(rules), target_score=view.target)
    n = rules.players
    if view.players != n:
        raise ValueError(f"observation is for {view.players} players, rules say {n}")
    if rules.target_score != view.target:
        raise ValueError(f"observation has target {view.target}, rules say {rules.target_score}")
    if not 0 <= seat < n:
        raise ValueError(f"seat {seat!r} is not a seat: allowed 0..{n - 1}")
    H, K = rules.hand_size, rules.kitty_size
    ab = lambda k: (seat + k) % n  # noqa: E731 - relative -> absolute seat
    phase = view.phase
    my_team = seat % 2

    hand = mask_of(view.hand)
    my_passed = mask_of(view.passed)
    my_received = mask_of(view.received)
    my_discards = mask_of(view.discarded)
    played = [0] * n
    for k in range(n):
        played[ab(k)] = mask_of(view.played[k])
    voids = [0] * n
    for k in range(n):
        voids[ab(k)] = sum(1 << s for s in view.voids[k])
    bids = [NOT_YET] * n
    for k in range(n):
        b = view.bids[k]
        bids[ab(k)] = NOT_YET if b is None else b
    high_bid = view.contract or 0
    declarer = -1 if view.declarer is None else ab(view.declarer)
    trump = -1 if view.trump is None else view.trump
    dealer = ab(view.dealer)
    direction = view.pass_direction
    winners = [ab(k) for k in view.trick_winners]
    took_kitty = K > 0 and high_bid > 0 and phase in (Phase.TRUMP, Phase.DISCARD, Phase.PLAY, Phase.ROUND_END,
                                                        Phase.GAME_OVER)

    # ---- the seat to act
    order = [(dealer + 1 + i) % n for i in range(n)]  # R3.1 picks and R4.1 bids start left of the dealer
    my_turn = None if action_mask is None else bool(np.any(action_mask))
    if phase == Phase.PASS:
        picks = _popcount(my_passed)
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
        pass_done = order.index(current)
        if current != seat and not 0 <= current_picks < PASS_SIZE:
            raise ValueError(f"current_picks={current_picks!r}: allowed 0..{PASS_SIZE - 1}")
    else:
        pass_done = 0 if direction == PassDirection.NONE else n
        if phase == Phase.BID:
            if declarer < 0:
                current = next(s for s in order if bids[s] == NOT_YET)
            elif rules.bidding == "auction":
                current = next((declarer + i) % n for i in range(1, n) if bids[(declarer + i) % n] != PASSED)
            else:
                current = next(s for s in order if bids[s] == NOT_YET)
        elif phase in (Phase.TRUMP, Phase.DISCARD):
            current = declarer
        elif phase == Phase.PLAY:
            leader = winners[-1] if winners else declarer
            current = (leader + sum(c is not None for c in view.trick)) % n
        else:
            current = -1
    if my_turn is not None and my_turn != (current == seat):
        raise ValueError(f"action_mask says it is {'' if my_turn else 'not '}seat {seat}'s turn; "
                         f"derived seat {current}")

    # ---- the current trick, in play order
    trick: list[tuple[int, int]] = []
    on = [k for k in range(n) if view.trick[k] is not None]
    if on:
        leader = winners[-1] if winners else declarer
        for i in range(len(on)):
            s = (leader + i) % n
            c = view.trick[(s - seat) % n]
            if c is None:
                raise ValueError("the current trick's cards do not follow on from its leader")
            trick.append((s, c))

    # ---- discards
    n_discards = 0
    if K and high_bid > 0:
        if phase in (Phase.PLAY, Phase.ROUND_END, Phase.GAME_OVER):
            n_discards = K
        elif phase == Phase.DISCARD:
            n_discards = _popcount(my_discards) if seat == declarer else int(discards_done or 0)
    if seat == declarer and _popcount(my_discards) != n_discards:
        raise ValueError(f"declarer observation shows {_popcount(my_discards)} discards, expected {n_discards}")

    def hand_size(s: int) -> int:
        size = H - _popcount(played[s])
        if s == declarer and took_kitty:
            size += K - n_discards
        if phase == Phase.PASS:
            size = H  # holdings before the picks leave the hand
        return size

    if phase == Phase.PASS:
        if _popcount(hand) + _popcount(my_passed) != H:
            raise ValueError("own hand and picks do not add up to a full hand")
    elif _popcount(hand) != hand_size(seat):
        raise ValueError(f"own hand has {_popcount(hand)} cards, the public record implies {hand_size(seat)}")

    # ---- passing: who gives to whom (R3.2)
    exchanged = phase != Phase.PASS and direction != PassDirection.NONE
    receiver_of: dict[int, int] = {}
    if direction != PassDirection.NONE:
        off = PASS_OFFSET[direction]
        receiver_of = {s: (s + off) % n for s in range(n)}
    R = receiver_of.get(seat, -1)
    G = next((s for s, r in receiver_of.items() if r == seat), -1)

    # ---- known and unknown cards (pcr_env.knowledge): my passed cards still out are the receiver's (R3.3)
    seen = seat_knowledge(vector, n)
    still = seen.mask(seen.passed_held)
    unknown = seen.mask(seen.unseen) & ~still
    fixed = {s: 0 for s in range(n) if s != seat}
    ambiguous = 0  # observer-passed cards that are in a six-player declarer's hand or discard pile
    if exchanged:
        if R == declarer and K and n_discards:
            ambiguous = still
        else:
            fixed[R] |= still
    pile = None
    if K and not took_kitty:
        pile = "kitty"
    elif K and seat != declarer and n_discards:
        pile = "discards"
    others = [s for s in range(n) if s != seat]
    bins = others + ([PILE] if pile else [])
    base_quota = []
    allowed = np.ones((len(bins), NUM_SUITS), np.bool_)
    for b, s in enumerate(bins):
        if s == PILE:
            base_quota.append(K if pile == "kitty" else n_discards)
        else:
            base_quota.append(hand_size(s))
            for j in range(NUM_SUITS):
                if voids[s] >> j & 1:
                    allowed[b, j] = False
    u = np.array([_popcount(unknown & SUIT_MASKS[j]) for j in range(NUM_SUITS)], np.int64)
    suit_cards = np.zeros((NUM_SUITS, NUM_RANKS), np.int64)
    for j in range(NUM_SUITS):
        cs = [c for c in range(j * NUM_RANKS, (j + 1) * NUM_RANKS) if unknown >> c & 1]
        suit_cards[j, :len(cs)] = cs

    scenarios = []
    amb = [c for c in range(NUM_CARDS) if ambiguous >> c & 1]
    for choice in range(1 << len(amb)):  # bit i set: ambiguous card i is in the discard pile
        to_pile = mask_of([c for i, c in enumerate(amb) if choice >> i & 1])
        to_hand = ambiguous & ~to_pile
        fixed_b = [fixed.get(s, 0) if s != PILE else 0 for s in bins]
        if ambiguous:
            fixed_b[bins.index(R)] |= to_hand
            fixed_b[bins.index(PILE)] |= to_pile
        quotas = np.array([q - _popcount(f) for q, f in zip(base_quota, fixed_b)], np.int64)
        ok = (quotas >= 0).all() and int(quotas.sum()) == int(u.sum())
        for b, s in enumerate(bins):
            if s != PILE and fixed_b[b] and any(voids[s] >> (c // NUM_RANKS) & 1 for c in range(NUM_CARDS)
                                                 if fixed_b[b] >> c & 1):
                ok = False
        if not ok:
            continue
        W = _count_table(u, quotas, allowed, _BINOM)
        weight = float(W[0, -1])
        if weight > 0:
            scenarios.append(_Scenario(quotas, allowed, fixed_b, W, weight))
    if not scenarios:
        raise ValueError("no deal is consistent with this observation")

    if kitty is not None and not isinstance(kitty, (int, np.integer)):
        kitty = mask_of(kitty)
    if round_number is None:
        round_number = int(direction) + 1 if rules.passing else 1
    template = GameState(
        config=rules, round_number=int(round_number), dealer=dealer, redeals=view.redeals, phase=phase,
        current=int(current), hands=[0] * n, kitty=0, passed=[0] * n, received=[0] * n, pass_done=pass_done,
        bids=bids, out=[b == PASSED for b in bids], high_bid=high_bid, declarer=declarer, trump=trump,
        discards=my_discards if seat == declarer else 0, trick=trick, played=played, voids=voids,
        trick_winners=winners,
        team_tricks=[view.team_tricks[0], view.team_tricks[1]] if my_team == 0 else [view.team_tricks[1],
                                                                                    view.team_tricks[0]],
        scores=[view.scores[0], view.scores[1]] if my_team == 0 else [view.scores[1], view.scores[0]],
        run_team=-1 if view.run[0] is None else (my_team if view.run[0] == 0 else 1 - my_team),
        run_length=view.run[1], pass_direction=direction,
        rounds_played=int(round_number) - 1 if rounds_played is None else int(rounds_played),
    )
    template.hands[seat] = hand
    template.passed[seat] = my_passed
    template.received[seat] = my_received
    if phase == Phase.GAME_OVER:
        a, b = template.scores
        template.winner = None if a == b else (0 if a > b else 1)
        template.truncated = template.winner is None or max(a, b) < rules.target_score
    if exchanged:
        template.passed[G] = my_received
        template.received[R] = my_passed
    pickers = [(s, PASS_SIZE) for s in order[:pass_done] if s != seat] if phase == Phase.PASS else []
    if phase == Phase.PASS and current != seat and current_picks:
        pickers.append((current, int(current_picks)))
    hidden_passers = [s for s in range(n) if exchanged and s not in (seat, G)]
    return Knowledge(
        rules=rules, seat=seat, template=template, bins=bins, unknown=unknown, u=u, suit_cards=suit_cards,
        scenarios=scenarios, pile=pile, pickers=pickers, hidden_passers=hidden_passers, receiver_of=receiver_of,
        kitty_known=None if kitty is None else int(kitty), draw_kitty=took_kitty,
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


# ================================================================= optional: weighting worlds by observed bids
def bidding_positions(world: GameState, seat: int) -> list[tuple[int, GameState, int]]:
    """For each other seat that has bid (R4.3 ``single`` bidding), ``(bidder, position at its bid, its bid action)``.

    The position is ``world`` rewound to that seat's bidding turn: its hand before any
    card was played (the kitty and discards undone for a six-player declarer), the bids
    spoken before it (one turn round the table from the dealer's left), nothing played.
    ``encode_observation(position, bidder)`` is then what the bidder saw, so a policy's
    probability of the bid it made can weight the world (:func:`bid_weights`).
    """
    from pcr_env.actions import BID_BASE, PASS_BID

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
    from pcr_env.engine import legal_mask
    from pcr_env.observation import encode_observation

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


def _benchmark() -> None:  # pragma: no cover - python -m pcr_env.worlds
    """Cost per call and per world over the decisions of random games (one core)."""
    import time

    from pcr_env import engine as E
    from pcr_env.observation import encode_observation

    for rules, label in ((RulesConfig(), "4 players"), (RulesConfig(players=6), "6 players")):
        rng = np.random.default_rng(0)
        positions = []
        state = E.new_game(rules, rng)
        while len(positions) < 300:
            if state.phase in (Phase.ROUND_END, Phase.GAME_OVER):
                state = E.new_game(rules, rng)
                continue
            mask = E.legal_mask(state)
            positions.append(({"observation": encode_observation(state, state.current), "action_mask": mask},
                              state.current))
            legal = np.flatnonzero(mask)
            E.apply_action(state, int(legal[rng.integers(len(legal))]), rng)
        sample_worlds(positions[0][0], rules, 0, 2, seat=positions[0][1])  # compile / load the cache
        t0 = time.perf_counter()
        samplers = [WorldSampler(obs, rules, seat=seat) for obs, seat in positions]
        build = (time.perf_counter() - t0) / len(positions)
        print(f"{label}: counting tables (WorldSampler(obs)): {build * 1e3:.3f} ms per observation")
        for count in (1, 16, 256):
            t0 = time.perf_counter()
            for sampler in samplers:
                sampler.sample(rng, count)
            dt = (time.perf_counter() - t0) / len(samplers)
            print(f"{label}: sample({count:3d}): {dt * 1e3:7.3f} ms per call = {dt / count * 1e6:7.1f} us per world"
                  f"; sample_worlds({count}) = {(build + dt) * 1e3:.3f} ms")


if __name__ == "__main__":  # pragma: no cover - run the package module's copy (numba caches by module name)
    from pcr_env.worlds import _benchmark as _bench

    _bench()

__all__ = ["Knowledge", "WorldSampler", "bid_weights", "bidding_positions", "count_worlds", "knowledge", "sample_masks",
           "sample_world", "sample_worlds",
           "worlds_from_masks"]
