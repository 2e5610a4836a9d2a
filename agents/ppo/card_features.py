"""The card-aware actor's features: what a card player computes from the observation, in compiled kernels.

The plain actor (:func:`agents.ppo.network.mlp`) reads the observation's 797 entries and must learn for each
of the 52 cards separately which one is still out, which of mine is the highest left in its suit, whether it
would take the trick and whether an opponent still to play could take it back. The kernels here compute that,
as a function of the observation alone (the seat's card knowledge comes from :mod:`pcr_env.knowledge`, so an
agent using it still sees only what its seat may know), in float32: :func:`card_features` for every card,
:func:`card_inputs` packed per row for the held cards, as the card-aware actor reads them
(:mod:`agents.ppo.card_net`).

Per-card features (``[B, F, 52]``; relative seats ``k = 1 .. n-1`` as in the observation):

=====================  ======================================================================================
name                   meaning
=====================  ======================================================================================
hand, unseen           in my hand; not in my hand, played or discarded by me (somebody else holds it)
passed_held            I passed it, not yet played: its holder is known (R3.3)
played, passed, recv   played this round; passed by me; received by me
rank                   rank / 12
trump, led             of the trump suit; of the suit led to this trick
on_trick, best         on the current trick; the card winning it so far
higher_unseen          unseen cards of its suit ranked above it, / 13 (0: it is the boss of its suit)
lower_unseen           unseen cards of its suit ranked below it, / 13
my_higher, my_lower    my cards of its suit above / below it, / 13
boss                   no unseen card of its suit is higher
my_suit, unseen_suit   my cards / unseen cards of its suit, / 13
wins_now               played now, it would take the trick so far (always 1 on an empty trick)
opp_can_beat           an opponent still to play could take it back (could hold a higher card of its
                       suit, or could be void in the led suit and hold a trump that beats it)
safe_win               wins_now and not opp_can_beat
opp_may_cut            an opponent may be void in its suit and hold a trump (it is not a trump)
partner_may_cut        the same for my partner(s)
equal_below, _above    a card of mine of its suit, below / above it, with no unseen card between them
may_hold_k             seat k could hold it (unseen, k not void in its suit, not passed to another seat)
higher_may_k           cards of its suit above it that seat k could hold, / 13
=====================  ======================================================================================

Per-row features (``[B, G]``): which seats have played to the trick, who is winning it (one-hot seat,
partner / opponent winning, empty trick), which seats are still to play, how many cards of each suit every
other seat could hold, unseen and own cards per suit, whether the card winning the trick is safe from the
opponents still to play, the rank of the card led, cards left in hand, my trumps and unseen trumps.

>>> import numpy as np
>>> from pcr_env.engine import new_game
>>> from pcr_env.config import RulesConfig
>>> from pcr_env.observation import encode_observation
>>> obs = encode_observation(new_game(RulesConfig(first_dealer=0), np.random.default_rng(1)), 1)[None]
>>> per_card, per_row = card_features(obs, 4)
>>> per_card.shape, per_row.shape, int(per_card[0, card_feature_names(4).index("hand")].sum())
((1, 31, 52), (1, 39), 13)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit

from pcr_env.cards import NUM_CARDS
from pcr_env.config import RulesConfig
from pcr_env.knowledge import knowledge_offsets, row_knowledge
from pcr_env.observation import observation_layout

_BASE_CARD_FEATURES = ("hand", "unseen", "passed_held", "played", "passed", "recv", "rank", "trump", "led", "on_trick",
                       "best", "higher_unseen", "lower_unseen", "my_higher", "my_lower", "boss", "my_suit", "unseen_suit",
                       "wins_now", "opp_can_beat", "safe_win", "opp_may_cut", "partner_may_cut", "equal_below",
                       "equal_above")


def card_feature_names(players: int) -> list[str]:
    """Names of the per-card features, in order (the module docstring's table)."""
    return (list(_BASE_CARD_FEATURES) + [f"may_hold_{k}" for k in range(1, players)]
            + [f"higher_may_{k}" for k in range(1, players)])


# Where the kernels write each per-card feature: the index of its name in card_feature_names (tests check them).
(F_HAND, F_UNSEEN, F_PASSED_HELD, F_PLAYED, F_PASSED, F_RECV, F_RANK, F_TRUMP, F_LED, F_ON_TRICK, F_BEST,
 F_HIGHER_UNSEEN, F_LOWER_UNSEEN, F_MY_HIGHER, F_MY_LOWER, F_BOSS, F_MY_SUIT, F_UNSEEN_SUIT, F_WINS_NOW,
 F_OPP_CAN_BEAT, F_SAFE_WIN, F_OPP_MAY_CUT, F_PARTNER_MAY_CUT, F_EQUAL_BELOW, F_EQUAL_ABOVE) = range(len(_BASE_CARD_FEATURES))
F_MAY_HOLD = len(_BASE_CARD_FEATURES)  # may_hold_k is F_MAY_HOLD + k - 1; higher_may_k follows at F_MAY_HOLD + n - 1 + k - 1


def row_feature_names(players: int) -> list[str]:
    """Names of the per-row features, in order."""
    n = players
    return ([f"on_trick_{k}" for k in range(n)] + [f"winner_{k}" for k in range(n)]
            + ["partner_winning", "opponent_winning", "trick_empty"] + [f"to_play_{k}" for k in range(1, n)]
            + [f"may_count_{k}_{s}" for k in range(1, n) for s in "CDHS"] + [f"unseen_{s}" for s in "CDHS"]
            + [f"mine_{s}" for s in "CDHS"] + ["best_safe", "led_rank", "cards_left", "my_trumps", "unseen_trumps"])


@lru_cache(maxsize=None)
def row_feature_size(players: int) -> int:
    return len(row_feature_names(players))


# Where the kernel reads the observation beyond the seat's card knowledge (pcr_env.knowledge): slice starts.
_SLICES = ("passed", "received", "played", "trick", "trump", "led_suit")
_PASSED, _RECEIVED, _PLAYED, _TRICK, _TRUMP, _LED = range(len(_SLICES))


# The feature kernel's steps are inlined into it (numba IR inlining): as fast as one function, measured.
@njit(cache=True, nogil=True, inline="always")
def _trump_and_led(o, off):
    """The trump suit and the suit led to this trick (-1: none yet)."""
    trump, led = -1, -1
    for s in range(4):
        if o[off[_TRUMP] + s] > 0:
            trump = s
        if o[off[_LED] + s] > 0:
            led = s
    return trump, led


@njit(cache=True, nogil=True, inline="always")
def _card_kernel(o, n, off, trump, led, hand, unseen, passed_held, on_trick, strength, want, F):
    """Each card's own features (hand .. on_trick; for the cards in ``want`` only) and every card's R6.4
    ``strength``; returns 1 when the trick has started."""
    started = 0
    for c in range(52):
        played, on = False, False  # or-ed comparisons, not branches: random cards mispredict jumps
        for k in range(n):
            played |= o[off[_PLAYED] + k * 52 + c] > 0
            on |= o[off[_TRICK] + k * 52 + c] > 0
        on_trick[c] = on
        started |= on
        suit, rank = c // 13, c % 13
        # Strength under R6.4 against the led suit: trumps, then the led suit, then the rest, by rank.
        strength[c] = rank + (32 if suit == trump else (16 if suit == led else 0))
        if not want[c]:
            continue
        F[F_HAND, c], F[F_UNSEEN, c], F[F_PASSED_HELD, c], F[F_PLAYED, c] = hand[c], unseen[c], passed_held[c], played
        F[F_PASSED, c] = 1 if o[off[_PASSED] + c] > 0 else 0
        F[F_RECV, c] = 1 if o[off[_RECEIVED] + c] > 0 else 0
        F[F_RANK, c] = np.float32(rank) / np.float32(12.0)
        F[F_TRUMP, c] = 1 if suit == trump else 0
        F[F_LED, c] = 1 if suit == led else 0
        F[F_ON_TRICK, c] = on_trick[c]
    return started


@njit(cache=True, nogil=True, inline="always")
def _seat_suit_counts(n, trump, may_hold, may_count, may_trump):
    """Per other seat ``k``: the cards of each suit it could hold, and whether it could hold a trump."""
    for k in range(1, n):
        for s in range(4):
            may_count[k, s] = 0
        for c in range(52):
            may_count[k, c // 13] += may_hold[k, c]
        may_trump[k] = 1 if trump >= 0 and may_count[k, trump] > 0 else 0


@njit(cache=True, nogil=True, inline="always")
def _suit_kernel(n, hand, unseen, may_hold, higher_may, running, want, F):
    """Counts above / below each card in its suit (running sums from the top and the bottom of each suit), boss,
    suit totals, equal cards (features of the cards in ``want`` only), and ``higher_may[k, c]`` of every card:
    cards of c's suit above it that seat k could hold."""
    thirteen = np.float32(13.0)
    for s in range(4):
        above_unseen, above_mine = 0, 0
        for k in range(1, n):
            running[k] = 0
        for r in range(12, -1, -1):
            c = s * 13 + r
            if want[c]:
                F[F_HIGHER_UNSEEN, c] = np.float32(above_unseen) / thirteen
                F[F_MY_HIGHER, c] = np.float32(above_mine) / thirteen
                F[F_BOSS, c] = 1 if above_unseen == 0 else 0
            for k in range(1, n):
                higher_may[k, c] = running[k]
                running[k] += may_hold[k, c]
            above_unseen += unseen[c]
            above_mine += hand[c]
        # Equal cards: the nearest card below (above) c that is mine or unseen is mine (no unseen card between).
        below_unseen, below_mine = 0, 0
        nearest = 0  # 1: mine, -1: unseen, 0: none yet
        for r in range(13):
            c = s * 13 + r
            if want[c]:
                F[F_LOWER_UNSEEN, c] = np.float32(below_unseen) / thirteen
                F[F_MY_LOWER, c] = np.float32(below_mine) / thirteen
                F[F_MY_SUIT, c] = np.float32(above_mine) / thirteen  # the suit's totals (the loop above ran through it)
                F[F_UNSEEN_SUIT, c] = np.float32(above_unseen) / thirteen
                F[F_EQUAL_BELOW, c] = 1 if nearest == 1 else 0
            below_unseen += unseen[c]
            below_mine += hand[c]
            nearest = 1 if hand[c] else (-1 if unseen[c] else nearest)
        nearest = 0
        for r in range(12, -1, -1):
            c = s * 13 + r
            if want[c]:
                F[F_EQUAL_ABOVE, c] = 1 if nearest == 1 else 0
            nearest = 1 if hand[c] else (-1 if unseen[c] else nearest)


@njit(cache=True, nogil=True, inline="always")
def _trick_state(o, n, off, started, on_trick, strength, seat_on_trick, winner, to_play):
    """Who has played to the trick, who is winning it and who is still to play (relative seats); returns the
    strength of the winning card (-1: empty trick) and the card led (-1: none)."""
    best_strength = -1
    for c in range(52):
        if on_trick[c] and strength[c] > best_strength:
            best_strength = strength[c]
    count_on = 0
    for k in range(n):
        seat_on_trick[k] = 0
        winner[k] = 0
        for c in range(52):
            if o[off[_TRICK] + k * 52 + c] > 0:
                seat_on_trick[k] = 1
                count_on += 1
                if strength[c] == best_strength:
                    winner[k] = 1
    leader = (n - count_on) % n
    leader_card = -1
    for c in range(52):
        if started and o[off[_TRICK] + leader * 52 + c] > 0:
            leader_card = c
    for k in range(1, n):
        to_play[k] = 1 - seat_on_trick[k] if started else 1
    return best_strength, leader_card


@njit(cache=True, nogil=True, inline="always")
def _trick_kernel(n, trump, led, started, best_strength, on_trick, strength, may_count, may_trump, higher_may, to_play,
                  want, F):
    """Each card in ``want`` against the current trick (best, wins_now, opp_can_beat, safe_win) and the cuts it
    risks; returns 1 when the winning card is safe from the opponents still to play."""
    best_safe = 0
    for c in range(52):
        if not (want[c] or on_trick[c]):  # a card on the trick may be the winning one, whose safety is a row feature
            continue
        best = 1 if on_trick[c] and strength[c] == best_strength else 0
        wins = 1 if (not started or strength[c] > best_strength) else 0
        suit = c // 13
        is_trump = suit == trump
        led_here = suit if not started else led  # the led suit, or c's own when I lead
        follows = suit == led_here
        opp, opp_cut, partner_cut = 0, 0, 0
        for k in range(1, n):
            void_led = 1 if may_count[k, led_here] == 0 else 0
            higher = 1 if higher_may[k, c] > 0 else 0
            if follows:
                beat = 1 if (higher or (void_led and may_trump[k] and led_here != trump)) else 0
            elif is_trump:
                beat = void_led * higher  # a cut: beaten only by a higher trump of a seat also void
            else:
                beat = 1  # a discard never wins
            if k % 2 == 1 and to_play[k] and beat:
                opp = 1
            # Could seat k ruff c's suit: it may be void in it and may hold a trump (c not a trump)?
            if not is_trump and may_count[k, suit] == 0 and may_trump[k]:
                if k % 2 == 1:
                    opp_cut = 1
                else:
                    partner_cut = 1
        F[F_BEST, c] = best
        F[F_WINS_NOW, c] = wins
        F[F_OPP_CAN_BEAT, c] = opp
        F[F_SAFE_WIN, c] = wins * (1 - opp)
        F[F_OPP_MAY_CUT, c] = opp_cut
        F[F_PARTNER_MAY_CUT, c] = partner_cut
        if best and not opp:
            best_safe = 1
    return best_safe


@njit(cache=True, nogil=True, inline="always")
def _seat_card_kernel(n, may_hold, higher_may, want, F):
    """Per other seat ``k``: may_hold_k and higher_may_k of every card in ``want``."""
    for c in range(52):
        if not want[c]:
            continue
        for k in range(1, n):
            F[F_MAY_HOLD + k - 1, c] = may_hold[k, c]
            F[F_MAY_HOLD + n - 1 + k - 1, c] = np.float32(higher_may[k, c]) / np.float32(13.0)


@njit(cache=True, nogil=True, inline="always")
def _row_kernel(row, n, trump, started, best_safe, leader_card, seat_on_trick, winner, to_play, may_count, hand,
                unseen):
    """The per-row features, in the order of :func:`row_feature_names`."""
    f32 = np.float32
    thirteen = f32(13.0)
    j = 0
    for k in range(n):
        row[j + k] = seat_on_trick[k]
        row[j + n + k] = winner[k]
    j += 2 * n
    partner_winning, opponent_winning = 0, 0
    for k in range(1, n):
        if winner[k]:
            if k % 2 == 1:
                opponent_winning = 1
            else:
                partner_winning = 1
    row[j], row[j + 1], row[j + 2] = partner_winning, opponent_winning, 1 - started
    j += 3
    for k in range(1, n):
        row[j] = to_play[k]
        j += 1
    for k in range(1, n):
        for s in range(4):
            row[j] = f32(may_count[k, s]) / thirteen
            j += 1
    mine_trumps, unseen_trumps, cards_left = 0, 0, 0
    for s in range(4):
        u, m = 0, 0
        for r in range(13):
            u += unseen[s * 13 + r]
            m += hand[s * 13 + r]
        row[j + s] = f32(u) / thirteen
        row[j + 4 + s] = f32(m) / thirteen
        cards_left += m
        if s == trump:
            mine_trumps, unseen_trumps = m, u
    j += 8
    row[j] = best_safe
    row[j + 1] = f32(leader_card % 13) / f32(12.0) if leader_card >= 0 else 0
    row[j + 2] = f32(cards_left) / thirteen
    row[j + 3] = f32(mine_trumps) / thirteen
    row[j + 4] = f32(unseen_trumps) / thirteen


@njit(cache=True, nogil=True, inline="always")
def _fill_slots(hand, F, slot_cards, slot_features):
    """The cards in hand in card order into ``slot_cards`` (-1 past the hand) with their features; returns the hand
    size (which may exceed the slots: the caller checks)."""
    j = 0
    for c in range(52):
        if hand[c]:
            if j < slot_cards.shape[0]:
                slot_cards[j] = c
                for f in range(F.shape[0]):
                    slot_features[j, f] = F[f, c]
            j += 1
    for k in range(j, slot_cards.shape[0]):
        slot_cards[k] = -1
    return j


@njit(cache=True, nogil=True)
def _features_kernel(obs, n, off, known_off, cards, rows, slot_cards, slot_features):
    """Every row of ``obs`` into ``rows[b, g]`` and, for the cards in hand in card order, ``slot_cards[b, j]`` (the
    card, -1 past the hand) and ``slot_features[b, j, f]``; also ``cards[b, f, c]`` for every card when ``cards``
    has a row per observation (else ``cards[0]`` is scratch). Features are the module docstring's, in the order of
    :func:`card_feature_names` and :func:`row_feature_names`; seats are relative, 0 being the observer.
    Returns the largest hand seen (the caller checks it against the slots)."""
    every_card = cards.shape[0] == obs.shape[0]
    largest = 0
    hand, unseen, passed_held = np.zeros(52, np.int64), np.zeros(52, np.int64), np.zeros(52, np.int64)
    on_trick, strength = np.zeros(52, np.int64), np.zeros(52, np.int64)
    may_hold, higher_may = np.zeros((n, 52), np.int64), np.zeros((n, 52), np.int64)
    may_count = np.zeros((n, 4), np.int64)
    seat_on_trick, winner, to_play = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    may_trump, running = np.zeros(n, np.int64), np.zeros(n, np.int64)
    want = np.ones(52, np.int64)  # the cards whose features are written: all of them, or only those in hand
    for b in range(obs.shape[0]):
        o = obs[b]
        F = cards[b if every_card else 0]
        trump, led = _trump_and_led(o, off)
        row_knowledge(o, n, known_off, hand, unseen, passed_held, may_hold)
        if not every_card:  # only the slots are read: half the kernel's time went to features nobody reads
            want[:] = hand
        started = _card_kernel(o, n, off, trump, led, hand, unseen, passed_held, on_trick, strength, want, F)
        _seat_suit_counts(n, trump, may_hold, may_count, may_trump)
        _suit_kernel(n, hand, unseen, may_hold, higher_may, running, want, F)
        best_strength, leader_card = _trick_state(o, n, off, started, on_trick, strength, seat_on_trick, winner,
                                                  to_play)
        best_safe = _trick_kernel(n, trump, led, started, best_strength, on_trick, strength, may_count, may_trump,
                                  higher_may, to_play, want, F)
        _seat_card_kernel(n, may_hold, higher_may, want, F)
        _row_kernel(rows[b], n, trump, started, best_safe, leader_card, seat_on_trick, winner, to_play, may_count,
                    hand, unseen)
        largest = max(largest, _fill_slots(hand, F, slot_cards[b], slot_features[b]))
    return largest


def _checked(obs: np.ndarray, players: int) -> np.ndarray:
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    size = observation_layout(players).size
    if obs.ndim != 2 or obs.shape[1] != size:
        raise ValueError(f"card features: observations must be [N, {size}] for {players} players, got shape {obs.shape}")
    return obs


@lru_cache(maxsize=None)
def _kernel_offsets(players: int) -> tuple[np.ndarray, np.ndarray]:
    """Where the kernel reads the observation (:data:`_SLICES` starts) and the seat's card knowledge; cached, as
    acting one decision at a time would otherwise spend more on building them than on the kernel."""
    layout = observation_layout(players)
    off = np.array([layout[name].start for name in _SLICES], np.int64)
    return off, knowledge_offsets(players)


def _run_kernel(obs: np.ndarray, players: int, cards: np.ndarray, rows: np.ndarray, slot_cards: np.ndarray,
                slot_features: np.ndarray) -> None:
    largest = _features_kernel(obs, players, *_kernel_offsets(players), cards, rows, slot_cards, slot_features)
    if largest > slot_cards.shape[1]:
        raise ValueError(f"an observation holds {largest} cards in hand, more than {slot_cards.shape[1]}: "
                         f"it is not an observation of a {players}-player table")


@lru_cache(maxsize=None)
def hand_slots(players: int) -> int:
    """The most cards a hand holds (R9.3: the declarer holds the kitty before discarding)."""
    rules = RulesConfig(players=players)
    return rules.hand_size + rules.kitty_size


@dataclass(frozen=True)
class CardInputs:
    """Where :func:`card_inputs` packs each part of a row, named once (as :func:`pcr_env.observation.observation_layout`
    names the observation): ``[rows | slot_cards | slot_features]``, the per-row features, the cards in hand in card
    order (-1 past the hand), then each hand slot's per-card features, slot after slot. Readers take the parts from
    :meth:`split`, not from offsets.

    >>> layout = CardInputs(4)
    >>> layout.rows, layout.slot_cards, layout.slot_features, layout.size
    (slice(0, 39, None), slice(39, 52, None), slice(52, 455, None), 455)
    >>> [tuple(part.shape) for part in layout.split(np.zeros((2, 5, layout.size)))]
    [(2, 5, 39), (2, 5, 13), (2, 5, 13, 31)]
    """

    players: int
    num_row_features: int = field(init=False, repr=False, compare=False)
    """The per-row features (:func:`row_feature_names`)."""
    slots: int = field(init=False, repr=False, compare=False)
    """The most cards a hand holds (:func:`hand_slots`)."""
    num_card_features: int = field(init=False, repr=False, compare=False)
    """The features of each held card (:func:`card_feature_names`)."""
    rows: slice = field(init=False, repr=False, compare=False)
    slot_cards: slice = field(init=False, repr=False, compare=False)
    slot_features: slice = field(init=False, repr=False, compare=False)
    """``slots`` blocks of ``num_card_features``, the slots in order."""
    size: int = field(init=False, repr=False, compare=False)
    """The width of a packed row."""

    def __post_init__(self) -> None:
        g, s, f = row_feature_size(self.players), hand_slots(self.players), len(card_feature_names(self.players))
        parts = {"num_row_features": g, "slots": s, "num_card_features": f, "rows": slice(0, g),
                 "slot_cards": slice(g, g + s), "slot_features": slice(g + s, g + s + s * f), "size": g + s + s * f}
        for name, value in parts.items():
            object.__setattr__(self, name, value)

    def split(self, packed: Any) -> tuple[Any, Any, Any]:
        """Views ``(rows [..., G], slot_cards [..., S], slot_features [..., S, F])`` of packed rows ``[..., size]``
        (a numpy array or a torch tensor)."""
        lead = tuple(packed.shape[:-1])
        return (packed[..., self.rows], packed[..., self.slot_cards],
                packed[..., self.slot_features].reshape(*lead, self.slots, self.num_card_features))


_layout = lru_cache(maxsize=None)(CardInputs)  # per call of card_inputs, one decision at a time: built once


def card_inputs(obs: np.ndarray, players: int) -> np.ndarray:
    """What a card actor reads besides the observation, packed per row (float32 ``[B, CardInputs(players).size]``):
    the per-row features, then the cards in hand in card order (-1 past the hand), then each held card's
    per-card features (:class:`CardInputs`). Computed once per decision on the rollout path and stored beside the
    observation, so the update epochs do not recompute it."""
    obs = _checked(obs, players)
    layout = _layout(players)
    # Zeros, not np.empty: the kernel leaves the features past the hand unwritten, and a batched scorer that runs over
    # every slot (StackedCardActors) must read finite numbers there (bfloat16 matmuls spread a NaN to other rows).
    packed = np.zeros((len(obs), layout.size), np.float32)
    _run_kernel(obs, players, np.empty((1, layout.num_card_features, NUM_CARDS), np.float32), *layout.split(packed))
    return packed


def card_features(obs: np.ndarray, players: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-card ``[B, F, 52]`` and per-row ``[B, G]`` features (float32) of observations ``obs [B, obs_dim]``."""
    obs = _checked(obs, players)
    cards = np.zeros((len(obs), len(card_feature_names(players)), NUM_CARDS), np.float32)
    rows = np.zeros((len(obs), row_feature_size(players)), np.float32)
    s = hand_slots(players)
    _run_kernel(obs, players, cards, rows, np.empty((len(obs), s), np.float32),
                np.empty((len(obs), s, cards.shape[1]), np.float32))
    return cards, rows


__all__ = ["CardInputs", "card_features", "card_inputs", "hand_slots", "card_feature_names", "row_feature_names",
           "row_feature_size"]
