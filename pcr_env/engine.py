"""The rules of Pass Cut Run (RULES.md R1-R9), written once, and the episodes and rewards of the environments.

Every rule is a numba-compiled function over a **game row**: one ``int64`` row
of a matrix ``S`` (game ``g`` is ``S[g]``; columns below). The AEC env
(:mod:`pcr_env.pass_cut_run_v0`) steps a one-row matrix, :class:`pcr_env.vector.VectorEnv`
steps many rows, and the Python API of this module (:func:`new_game`,
:func:`legal_actions`, :func:`apply_action`, ...) converts a readable
:class:`GameState` to a row, calls the same functions and converts back. With
``NUMBA_DISABLE_JIT=1`` every function runs as plain Python (for debugging and
coverage). The observation encoder, the one other piece of compiled code, is in
:mod:`pcr_env.observation`.

Where each rule lives (the section headers below follow RULES.md):

* R1.2 teams: ``seat % 2``; R1.3 "left" is ``seat + 1``; R1.4 the deck: :mod:`pcr_env.cards`.
* R2.1-R2.2 the dealer and the deal: :func:`start_game`, :func:`_new_game`, :func:`deal_order`
  (and :func:`deal_given` for a chosen deal), :func:`_clear_round`, :func:`_next_round`.
* R3 passing: :func:`pass_dir` (R3.2, R3.4), :func:`pass_offset`, :func:`_pick_pass` (R3.1).
* R4 bidding: :func:`lowest_bid` (R4.2), :func:`_bid` (R4.1, R4.3, R4.5), :func:`_end_bidding` (R4.4 redeals).
* R5 trump and R9.3 the kitty and discards: :func:`apply_row`, :func:`_end_bidding`.
* R6 play: :func:`card_mask` (R6.2 must follow), :func:`is_legal_row` / :func:`legal_mask_row`,
  :func:`_play`; R6.4 is :func:`pcr_env.cards.beats`, shared with the scripted agents.
* R7-R8 runs and scoring: :func:`run_bonus`, :func:`_round_score` (R7, R8.1-R8.3), :func:`_score` (R8.4).
* The episodes and rewards of both environments: :func:`step_game` (= :func:`apply_row`, then
  :func:`episode_events` / :func:`_round_ended` when a round was scored or the game ended).

Randomness never comes from a global. The Python API takes a
``numpy.random.Generator`` (or :class:`pcr_env.vector.DealRng`) and draws a deal
as ``rng.permutation(52)``; ``VectorEnv`` gives every game its own splitmix64
stream (:func:`stream_start`, :func:`_below`), used in the kernels. A kernel
called with an empty stream array does not deal: it leaves the row in the
internal phase :data:`PH_DEAL` and the caller deals with :func:`deal_order`
(:func:`deal_from` draws ``rng.permutation(52)``): that is how the AEC env deals
from its ``np_random`` exactly as the pure-Python engine did.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> state = new_game(RulesConfig(first_dealer=0), rng)
>>> state.phase == Phase.PASS, state.current
(True, 1)
>>> while state.phase != Phase.ROUND_END:
...     result = apply_action(state, legal_actions(state)[0], rng)
>>> sum(result.tricks)
13
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from typing import Sequence

import numpy as np
from numba import njit

from . import actions as A
from .actions import BID_BASE, NUM_ACTIONS, PASS_BID, TRUMP_BASE
from .cards import FULL_DECK, NUM_CARDS, NUM_RANKS, beats, card_str, cards_of, mask_of, popcount, trailing_zeros
from .config import RulesConfig


class Phase(IntEnum):
    PASS = 0
    BID = 1
    TRUMP = 2
    DISCARD = 3
    PLAY = 4
    ROUND_END = 5
    GAME_OVER = 6


PHASE_NAMES: tuple[str, ...] = tuple(p.name.lower() for p in Phase if p < Phase.ROUND_END)
"""The phases where a seat decides, in the game's order (``"pass", "bid", "trump", "discard", "play"``): the one
list of phase names that config keys, agent options and log tags use (``Phase[name.upper()]`` is the phase)."""


class PassDirection(IntEnum):
    PARTNER = 0
    LEFT = 1
    RIGHT = 2
    NONE = 3


PASS_SIZE = 3  # R3.1
NOT_YET = -1  # a seat's entry in ``bids`` before it has spoken
PASSED = 0  # a seat's entry in ``bids`` after "no bid"

# The same values as plain ints, for the compiled functions.
PH_PASS, PH_BID, PH_TRUMP, PH_DISCARD, PH_PLAY, PH_ROUND_END, PH_GAME_OVER = (int(p) for p in Phase)
PH_DEAL = 7  # internal: the row waits for its caller's deal (deal_order); never seen outside a step
DIR_NONE = int(PassDirection.NONE)

MAX_SEATS = 6
MAX_TRICKS = 13

# ================================================================= the game row
# Card sets are bitmasks (bit c = card c); per-seat blocks are indexed by absolute seat and sized for six.
HANDS = 0  # 6: cards held
PASSED_CARDS = HANDS + MAX_SEATS  # 6: cards picked / passed this round (R3.3)
RECEIVED = PASSED_CARDS + MAX_SEATS  # 6: cards received this round (R3.3)
BIDS = RECEIVED + MAX_SEATS  # 6: NOT_YET, PASSED or the latest bid
OUT = BIDS + MAX_SEATS  # 6: 1 once the seat passed (auction: out for the round)
PLAYED = OUT + MAX_SEATS  # 6: cards played this round
VOIDS = PLAYED + MAX_SEATS  # 6: bit s = failed to follow suit s (R6.2)
TRICK_CARD = VOIDS + MAX_SEATS  # 6: cards of the current trick, in play order
TRICK_SEAT = TRICK_CARD + MAX_SEATS  # 6: their seats
WINNERS = TRICK_SEAT + MAX_SEATS  # 13: seat that won each trick so far
KITTY = WINNERS + MAX_TRICKS
DISCARDS = KITTY + 1
PASS_DONE = DISCARDS + 1
HIGH_BID = PASS_DONE + 1  # 0 while nobody has bid
DECLARER = HIGH_BID + 1  # -1 if none
TRUMP = DECLARER + 1  # -1 until named
TRICK_LEN = TRUMP + 1
N_TRICKS = TRICK_LEN + 1
TEAM_TRICKS = N_TRICKS + 1  # 2 columns
SCORES = TEAM_TRICKS + 2  # 2 columns: game totals (R8.4)
RUN_TEAM = SCORES + 2  # -1 before the first trick
RUN_LENGTH = RUN_TEAM + 1
PASS_DIR = RUN_LENGTH + 1
PHASE = PASS_DIR + 1
CURRENT = PHASE + 1  # seat to act, -1 when nobody acts
DEALER = CURRENT + 1
ROUND = DEALER + 1
REDEALS = ROUND + 1  # consecutive all-pass redeals of this round (R4.4)
TRUNCATED = REDEALS + 1
WINNER = TRUNCATED + 1  # -1 = none
ROUNDS_PLAYED = WINNER + 1  # rounds scored in this game (R8.4 max_rounds)
STATE_COLUMNS = ROUNDS_PLAYED + 1

# ================================================================= the rules as numbers
C_PLAYERS, C_HAND_SIZE, C_KITTY_SIZE, C_MIN_BID, C_PASSING, C_DOUBLE, C_AUCTION, C_TARGET, C_MAX_ROUNDS, \
    C_MAX_REDEALS, C_FIRST_DEALER, C_EPISODE_ROUND, C_REWARD_WIN = range(13)
CONFIG_SIZE = 13


def config_array(rules: RulesConfig, episode: str = "game", reward: str = "score_diff") -> np.ndarray:
    """The rules and episode settings as the compiled functions read them (first_dealer -1 = drawn)."""
    cfg = np.zeros(CONFIG_SIZE, np.int64)
    cfg[C_PLAYERS] = rules.players
    cfg[C_HAND_SIZE] = rules.hand_size
    cfg[C_KITTY_SIZE] = rules.kitty_size
    cfg[C_MIN_BID] = rules.min_bid_value
    cfg[C_PASSING] = rules.passing
    cfg[C_DOUBLE] = rules.double_run_bonus
    cfg[C_AUCTION] = rules.bidding == "auction"
    cfg[C_TARGET] = rules.target_score
    cfg[C_MAX_ROUNDS] = rules.max_rounds
    cfg[C_MAX_REDEALS] = rules.max_redeals
    cfg[C_FIRST_DEALER] = -1 if rules.first_dealer == "random" else rules.first_dealer
    cfg[C_EPISODE_ROUND] = episode == "round"
    cfg[C_REWARD_WIN] = reward == "win"
    return cfg


# Round record (filled when a round is scored) and step events.
RI_ROUND, RI_DEALER, RI_DECLARER, RI_BID, RI_TRUMP, RI_TRICKS, RI_BONUS, RI_SCORES, RI_MADE, RI_TOTALS, \
    RI_WINNER, RI_N_TRICKS, RI_WINNERS = 0, 1, 2, 3, 4, 5, 7, 9, 11, 12, 14, 15, 16
ROUND_INFO_SIZE = RI_WINNERS + MAX_TRICKS
EV_ROUND = 1  # a round was scored (the round record is filled)
EV_FINAL = 2  # the episode ended
EV_TRUNCATED = 4  # ... by truncation (R4.4 redeals, R8.4 max_rounds)

# ================================================================= randomness (VectorEnv's per-game streams)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
U27, U30, U31, U32 = np.uint64(27), np.uint64(30), np.uint64(31), np.uint64(32)
LOW32 = np.uint64(0xFFFFFFFF)
TWO32 = np.uint64(1 << 32)
SUIT_BITS = np.int64((1 << NUM_RANKS) - 1)
NO_STREAM = np.zeros(0, np.uint64)  # "the caller deals": see PH_DEAL


@njit(cache=True)
def _mix64(z):
    z = (z ^ (z >> U30)) * MIX1
    z = (z ^ (z >> U27)) * MIX2
    return z ^ (z >> U31)


@njit(cache=True)
def stream_start(seed, index):
    """Start of game ``index``'s splitmix64 stream for ``seed``; depends on ``(seed, index)`` only."""
    return _mix64(_mix64(seed + GOLDEN) + (index + np.uint64(1)) * GOLDEN)


@njit(cache=True)
def _next(rng, g):
    s = rng[g] + GOLDEN
    rng[g] = s
    return _mix64(s)


@njit(cache=True)
def _below(rng, g, k):
    """Unbiased draw in ``0..k-1`` (Lemire: multiply a 32-bit output, reject the short zone)."""
    kk = np.uint64(k)
    m = (_next(rng, g) >> U32) * kk
    low = m & LOW32
    if low < kk:
        threshold = (TWO32 - kk) % kk
        while low < threshold:
            m = (_next(rng, g) >> U32) * kk
            low = m & LOW32
    return np.int64(m >> U32)


@njit(cache=True)
def _shuffle(rng, g, order):
    """Fisher-Yates from the top (``order`` holds 0..n-1 on entry): a uniform permutation."""
    for j in range(order.shape[0] - 1, 0, -1):
        r = _below(rng, g, j + 1)
        order[j], order[r] = order[r], order[j]


# ================================================================= R2 rounds and the deal
@njit(cache=True)
def pass_dir(round_number, passing):
    """R3.2 / R3.4: partner, left, right, none, repeating every four rounds (redeals do not advance it)."""
    return (round_number - 1) % 4 if passing else DIR_NONE


@njit(cache=True)
def _clear_round(S, g, cfg):
    """The start of a round once the hands are dealt: nothing passed, bid or played yet (R2, R3.2)."""
    for s in range(MAX_SEATS):
        S[g, PASSED_CARDS + s] = 0
        S[g, RECEIVED + s] = 0
        S[g, BIDS + s] = NOT_YET
        S[g, OUT + s] = 0
        S[g, PLAYED + s] = 0
        S[g, VOIDS + s] = 0
        S[g, TRICK_CARD + s] = 0
        S[g, TRICK_SEAT + s] = 0
    for t in range(MAX_TRICKS):
        S[g, WINNERS + t] = 0
    S[g, DISCARDS] = 0
    S[g, PASS_DONE] = 0
    S[g, HIGH_BID] = 0
    S[g, DECLARER] = -1
    S[g, TRUMP] = -1
    S[g, TRICK_LEN] = 0
    S[g, N_TRICKS] = 0
    S[g, TEAM_TRICKS] = 0
    S[g, TEAM_TRICKS + 1] = 0
    S[g, RUN_TEAM] = -1
    S[g, RUN_LENGTH] = 0
    d = pass_dir(S[g, ROUND], cfg[C_PASSING])
    S[g, PASS_DIR] = d
    S[g, CURRENT] = (S[g, DEALER] + 1) % cfg[C_PLAYERS]  # R3.1 picks and R4.1 bids start left of the dealer
    S[g, PHASE] = PH_BID if d == DIR_NONE else PH_PASS


@njit(cache=True)
def deal_order(S, g, cfg, order):
    """R2.2: deal the shuffled deck ``order`` one card at a time clockwise from the dealer's left; the rest is the kitty."""
    n = cfg[C_PLAYERS]
    dealer = S[g, DEALER]
    for s in range(MAX_SEATS):
        S[g, HANDS + s] = 0
    dealt = n * cfg[C_HAND_SIZE]
    for i in range(dealt):
        S[g, HANDS + (dealer + 1 + i) % n] |= np.int64(1) << order[i]
    kitty = np.int64(0)
    for i in range(dealt, NUM_CARDS):
        kitty |= np.int64(1) << order[i]
    S[g, KITTY] = kitty
    _clear_round(S, g, cfg)


@njit(cache=True)
def deal_given(S, g, cfg, hands, kitty):
    """A chosen deal (reset options, tests): ``hands[s]`` is seat ``s``'s card mask (checked by validate_deal)."""
    for s in range(MAX_SEATS):
        S[g, HANDS + s] = hands[s] if s < cfg[C_PLAYERS] else 0
    S[g, KITTY] = kitty
    _clear_round(S, g, cfg)


@njit(cache=True)
def _deal(S, rng, g, cfg):
    """Deal a round from game ``g``'s stream, or (no stream) leave it to the caller (PH_DEAL)."""
    if rng.shape[0] == 0:
        S[g, PHASE] = PH_DEAL
        S[g, CURRENT] = -1
        return
    order = np.arange(NUM_CARDS)
    _shuffle(rng, g, order)
    deal_order(S, g, cfg, order)


@njit(cache=True)
def start_game(S, g, dealer, round_number, score0, score1):
    """An empty game row: dealer, round number, totals; the caller deals next."""
    for c in range(STATE_COLUMNS):
        S[g, c] = 0
    S[g, DEALER] = dealer
    S[g, ROUND] = round_number
    S[g, SCORES] = score0
    S[g, SCORES + 1] = score1
    S[g, WINNER] = -1


@njit(cache=True)
def _new_game(S, rng, g, cfg):
    """R2.1: round 1's dealer is drawn (or config ``first_dealer``), zero scores, first deal."""
    dealer = _below(rng, g, cfg[C_PLAYERS]) if cfg[C_FIRST_DEALER] < 0 else cfg[C_FIRST_DEALER]
    start_game(S, g, dealer, 1, 0, 0)
    _deal(S, rng, g, cfg)


@njit(cache=True)
def _next_round(S, rng, g, cfg):
    """R2.1: after a scored round the deal passes to the left."""
    S[g, ROUND] += 1
    S[g, DEALER] = (S[g, DEALER] + 1) % cfg[C_PLAYERS]
    S[g, REDEALS] = 0
    _deal(S, rng, g, cfg)


# ================================================================= legal actions (R3.1, R4.2, R5.1, R6.2, R9.3)
@njit(cache=True)
def card_mask(S, g):
    """Cards the seat to act may pass, discard or play."""
    phase = S[g, PHASE]
    hand = S[g, HANDS + S[g, CURRENT]]
    if phase == PH_PLAY and S[g, TRICK_LEN] > 0:
        follow = hand & (SUIT_BITS << (NUM_RANKS * (S[g, TRICK_CARD] // NUM_RANKS)))
        return follow if follow else hand  # R6.2: must follow
    if phase == PH_PASS or phase == PH_DISCARD or phase == PH_PLAY:
        return hand
    return np.int64(0)


@njit(cache=True)
def lowest_bid(min_bid, high_bid):
    """R4.2: at least the minimum bid, and above the highest bid so far."""
    return max(min_bid, high_bid + 1)


@njit(cache=True)
def is_legal_row(S, g, a, cfg):
    phase = S[g, PHASE]
    if phase == PH_PASS or phase == PH_DISCARD or phase == PH_PLAY:
        return 0 <= a < NUM_CARDS and (card_mask(S, g) >> a) & 1 == 1
    if phase == PH_BID:
        if a == PASS_BID:
            return True
        return BID_BASE <= a < PASS_BID and lowest_bid(cfg[C_MIN_BID], S[g, HIGH_BID]) <= a - BID_BASE + 1 <= cfg[C_HAND_SIZE]
    if phase == PH_TRUMP:
        return TRUMP_BASE <= a < NUM_ACTIONS  # R5.1: any of the four suits, no no-trump
    return False


@njit(cache=True)
def legal_mask_row(S, g, cfg, mrow):
    """``mrow[a] = 1`` for every legal action of the seat to act (all zeros when nobody acts)."""
    for a in range(NUM_ACTIONS):
        mrow[a] = 0
    phase = S[g, PHASE]
    if phase == PH_BID:
        for k in range(lowest_bid(cfg[C_MIN_BID], S[g, HIGH_BID]), cfg[C_HAND_SIZE] + 1):
            mrow[BID_BASE + k - 1] = 1
        mrow[PASS_BID] = 1
    elif phase == PH_TRUMP:
        for a in range(TRUMP_BASE, NUM_ACTIONS):
            mrow[a] = 1
    elif phase < PH_ROUND_END:
        m = card_mask(S, g)
        while m:  # one count-trailing-zeros per legal card
            mrow[trailing_zeros(m)] = 1
            m &= m - 1


# ================================================================= R3 passing
@njit(cache=True)
def pass_offset(direction):
    """R3.2, R9.3: seat offset of the receiver: partner +2 (four or six players), left +1, right -1."""
    return 2 if direction == 0 else (1 if direction == 1 else -1)


@njit(cache=True)
def _pick_pass(S, g, card, cfg):
    """R3.1: picks stay private until every seat has chosen; then all swap at once."""
    n = cfg[C_PLAYERS]
    seat = S[g, CURRENT]
    bit = np.int64(1) << card
    S[g, HANDS + seat] ^= bit
    S[g, PASSED_CARDS + seat] |= bit
    if popcount(S[g, PASSED_CARDS + seat]) < PASS_SIZE:
        return
    S[g, PASS_DONE] += 1
    S[g, CURRENT] = (seat + 1) % n
    if S[g, PASS_DONE] < n:
        return
    offset = pass_offset(S[g, PASS_DIR])
    for giver in range(n):
        S[g, RECEIVED + (giver + offset + n) % n] = S[g, PASSED_CARDS + giver]
    for s in range(n):
        S[g, HANDS + s] |= S[g, RECEIVED + s]
    S[g, PHASE] = PH_BID
    S[g, CURRENT] = (S[g, DEALER] + 1) % n  # R4.1


# ================================================================= R4 bidding, R5 trump
@njit(cache=True)
def _end_bidding(S, rng, g, cfg):
    if S[g, HIGH_BID] == 0:
        # R4.4: thrown in; the same dealer deals again for the same round, at most max_redeals times.
        S[g, REDEALS] += 1
        if S[g, REDEALS] > cfg[C_MAX_REDEALS]:
            S[g, TRUNCATED] = 1
            S[g, PHASE] = PH_GAME_OVER
            S[g, CURRENT] = -1
            return
        _deal(S, rng, g, cfg)
        return
    declarer = S[g, DECLARER]  # R4.5
    S[g, PHASE] = PH_TRUMP
    S[g, CURRENT] = declarer
    S[g, HANDS + declarer] |= S[g, KITTY]  # R9.3: the declarer takes the kitty before naming trump


@njit(cache=True)
def _bid(S, rng, g, a, cfg):
    """R4.1-R4.5."""
    n = cfg[C_PLAYERS]
    seat = S[g, CURRENT]
    if a == PASS_BID:
        S[g, BIDS + seat] = PASSED
        S[g, OUT + seat] = 1
    else:
        S[g, HIGH_BID] = a - BID_BASE + 1
        S[g, BIDS + seat] = S[g, HIGH_BID]
        S[g, DECLARER] = seat
    if S[g, HIGH_BID] == cfg[C_HAND_SIZE]:
        # Nobody can outbid the maximum: bidding ends at once (our decision for "single": docs/rules-decisions.md).
        _end_bidding(S, rng, g, cfg)
        return
    if not cfg[C_AUCTION]:  # R4.3 single: one turn around the table
        for s in range(n):
            if S[g, BIDS + s] == NOT_YET:
                S[g, CURRENT] = (seat + 1) % n
                return
        _end_bidding(S, rng, g, cfg)
        return
    still_in = 0  # R4.3 auction: until every other player has passed after the highest bid
    only = -1
    for s in range(n):
        if not S[g, OUT + s]:
            still_in += 1
            only = s
    if still_in == 0 or (still_in == 1 and only == S[g, DECLARER]):
        _end_bidding(S, rng, g, cfg)
        return
    nxt = (seat + 1) % n
    while S[g, OUT + nxt]:
        nxt = (nxt + 1) % n
    S[g, CURRENT] = nxt


# ================================================================= R6 play, R7.1 runs
_beats = njit(cache=True)(beats)  # R6.4, pcr_env.cards.beats compiled (one definition, shared with the agents)


@njit(cache=True)
def _play(S, g, card, cfg, ri):
    """R6, R7.1; returns True when the card completed the round (then scored into ``ri[g]``)."""
    n = cfg[C_PLAYERS]
    seat = S[g, CURRENT]
    bit = np.int64(1) << card
    length = S[g, TRICK_LEN]
    if length > 0:
        led = S[g, TRICK_CARD] // NUM_RANKS
        if card // NUM_RANKS != led:
            S[g, VOIDS + seat] |= np.int64(1) << led  # public: failed to follow (R6.2)
    S[g, HANDS + seat] ^= bit
    S[g, PLAYED + seat] |= bit
    S[g, TRICK_CARD + length] = card
    S[g, TRICK_SEAT + length] = seat
    length += 1
    S[g, TRICK_LEN] = length
    if length < n:
        S[g, CURRENT] = (seat + 1) % n
        return False
    # R6.4: highest trump, else highest card of the led suit.
    trump = S[g, TRUMP]
    best_card = S[g, TRICK_CARD]
    best_seat = S[g, TRICK_SEAT]
    led = best_card // NUM_RANKS
    for j in range(1, n):
        c = S[g, TRICK_CARD + j]
        if _beats(c, best_card, led, trump):
            best_card = c
            best_seat = S[g, TRICK_SEAT + j]
    t = S[g, N_TRICKS]
    S[g, WINNERS + t] = best_seat
    S[g, N_TRICKS] = t + 1
    team = best_seat % 2  # R1.2
    S[g, TEAM_TRICKS + team] += 1
    if team == S[g, RUN_TEAM]:  # R7.1: runs are team-based
        S[g, RUN_LENGTH] += 1
    else:
        S[g, RUN_TEAM] = team
        S[g, RUN_LENGTH] = 1
    S[g, TRICK_LEN] = 0
    S[g, CURRENT] = best_seat  # R6.1: the winner leads the next trick
    if t + 1 < cfg[C_HAND_SIZE]:  # R6.5
        return False
    _score(S, g, cfg, ri)
    return True


# ================================================================= R7 runs, R8 scoring
@njit(cache=True)
def run_bonus(length, double=False):
    """R7.2 / R7.3: bonus for one run of ``length`` consecutive team tricks."""
    if length <= 2:
        bonus = 0
    elif length == 3:
        bonus = 3
    elif length == 4:
        bonus = 5
    else:
        bonus = 2 * length - 1
    return 2 * bonus if double else bonus


@njit(cache=True)
def _round_score(S, g, cfg, ri):
    """R7-R8.3 for the tricks of row ``g`` (winners, declarer, bid): fills the round record ``ri[g]``."""
    n_tricks = S[g, N_TRICKS]
    double = cfg[C_DOUBLE]
    tricks0 = 0
    bonus0 = 0
    bonus1 = 0
    t = 0
    while t < n_tricks:  # R7.1: maximal stretches of tricks won by one team
        team = S[g, WINNERS + t] % 2
        length = 1
        while t + length < n_tricks and S[g, WINNERS + t + length] % 2 == team:
            length += 1
        if team == 0:
            tricks0 += length
            bonus0 += run_bonus(length, double)
        else:
            bonus1 += run_bonus(length, double)
        t += length
    tricks1 = n_tricks - tricks0
    declarer = S[g, DECLARER]
    bid = S[g, HIGH_BID]
    bidding = declarer % 2
    made = (tricks1 if bidding else tricks0) >= bid
    score0 = tricks0 + bonus0  # R8.1 defenders, R8.2 a made contract: tricks + run bonuses
    score1 = tricks1 + bonus1
    if not made:  # R8.2: a failed contract scores -bid
        if bidding:
            score1 = -bid
        else:
            score0 = -bid
    r = ri[g]
    r[RI_ROUND] = S[g, ROUND]
    r[RI_DEALER] = S[g, DEALER]
    r[RI_DECLARER] = declarer
    r[RI_BID] = bid
    r[RI_TRUMP] = S[g, TRUMP]
    r[RI_TRICKS] = tricks0
    r[RI_TRICKS + 1] = tricks1
    r[RI_BONUS] = bonus0
    r[RI_BONUS + 1] = bonus1
    r[RI_SCORES] = score0
    r[RI_SCORES + 1] = score1
    r[RI_MADE] = made
    r[RI_WINNER] = -1 if tricks0 == tricks1 else (1 if tricks1 > tricks0 else 0)  # R8.3
    r[RI_N_TRICKS] = n_tricks
    for t in range(MAX_TRICKS):
        r[RI_WINNERS + t] = S[g, WINNERS + t] if t < n_tricks else -1


@njit(cache=True)
def _score(S, g, cfg, ri):
    """Score the round (R7-R8.3), add it to the totals and decide the game (R8.4)."""
    _round_score(S, g, cfg, ri)
    S[g, SCORES] += ri[g, RI_SCORES]
    S[g, SCORES + 1] += ri[g, RI_SCORES + 1]
    S[g, ROUNDS_PLAYED] += 1
    ri[g, RI_TOTALS] = S[g, SCORES]
    ri[g, RI_TOTALS + 1] = S[g, SCORES + 1]
    S[g, CURRENT] = -1
    S[g, PHASE] = PH_ROUND_END
    total0 = S[g, SCORES]
    total1 = S[g, SCORES + 1]
    # R8.4: after a round in which a team reaches the target the higher total wins; ties play on.
    if max(total0, total1) >= cfg[C_TARGET] and total0 != total1:
        S[g, WINNER] = 1 if total1 > total0 else 0
        S[g, PHASE] = PH_GAME_OVER
    elif S[g, ROUNDS_PLAYED] >= cfg[C_MAX_ROUNDS]:
        S[g, TRUNCATED] = 1
        S[g, PHASE] = PH_GAME_OVER


# ================================================================= one action
@njit(cache=True)
def apply_row(S, rng, g, a, cfg, ri):
    """Apply the legal action ``a`` of the seat to act; True when it completed a round (scored into ``ri[g]``)."""
    phase = S[g, PHASE]
    if phase == PH_PLAY:
        return _play(S, g, a, cfg, ri)
    if phase == PH_PASS:
        _pick_pass(S, g, a, cfg)
    elif phase == PH_BID:
        _bid(S, rng, g, a, cfg)
    elif phase == PH_TRUMP:
        S[g, TRUMP] = a - TRUMP_BASE  # R5.1
        S[g, PHASE] = PH_DISCARD if cfg[C_KITTY_SIZE] else PH_PLAY  # R9.3 discards; R6.1: the declarer leads
    else:  # R9.3: the declarer discards one card at a time, face down
        bit = np.int64(1) << a
        S[g, HANDS + S[g, CURRENT]] ^= bit
        S[g, DISCARDS] |= bit
        if popcount(S[g, DISCARDS]) == cfg[C_KITTY_SIZE]:
            S[g, PHASE] = PH_PLAY
    return False


# ================================================================= episodes and rewards (both environments)
@njit(cache=True)
def step_game(S, rng, g, a, cfg, rewards, ri):
    """One decision of an environment: the action, round scoring, the episode's end and the rewards.

    ``rewards[g, s]`` is what seat ``s`` earns on this step, written only when a
    round was scored (:data:`EV_ROUND`; the caller zeroes the others): with reward
    "score_diff", at each round end its team's round score minus the other's;
    with "win", at the end of the episode +1 / -1 / 0 (0 when truncated; in
    "round" episodes the sign of the round's score difference). An episode is a
    game (R8.4) or, with episode "round", one scored round. Returns the events
    (:data:`EV_ROUND`, :data:`EV_FINAL`, :data:`EV_TRUNCATED`). A game that goes
    on is dealt its next round (R2.1); an ended one is left as it stands.
    """
    scored = apply_row(S, rng, g, a, cfg, ri)
    if scored or S[g, PHASE] == PH_GAME_OVER:
        return episode_events(S, rng, g, cfg, scored, rewards, ri)
    return 0


@njit(cache=True)
def episode_events(S, rng, g, cfg, scored, rewards, ri):
    """:func:`step_game` after an action that scored a round or ended the game (the rare path).

    The batch loop calls ``apply_row`` and then this only when ``scored`` or the
    game is over, as step_game does: the common path stays two instructions.
    """
    if not scored:  # truncated by too many redeals (R4.4)
        return EV_FINAL | EV_TRUNCATED
    return _round_ended(S, rng, g, cfg, rewards, ri)


@njit(cache=True)
def _round_ended(S, rng, g, cfg, rewards, ri):
    """step_game after a scored round: rewards, the episode's end, or the next round's deal."""
    n = cfg[C_PLAYERS]
    episode_round = cfg[C_EPISODE_ROUND]
    reward_win = cfg[C_REWARD_WIN]
    diff = ri[g, RI_SCORES] - ri[g, RI_SCORES + 1]
    for s in range(n):
        rewards[g, s] = 0.0 if reward_win else (diff if s % 2 == 0 else -diff)
    if not (episode_round or S[g, PHASE] == PH_GAME_OVER):
        _next_round(S, rng, g, cfg)
        return EV_ROUND
    if reward_win:
        if episode_round:
            sign = 1 if diff > 0 else (-1 if diff < 0 else 0)
        else:
            w = S[g, WINNER]
            sign = 0 if w < 0 else (1 if w == 0 else -1)
        for s in range(n):
            rewards[g, s] = sign if s % 2 == 0 else -sign
    if (not episode_round) and S[g, TRUNCATED] == 1:
        return EV_ROUND | EV_FINAL | EV_TRUNCATED
    return EV_ROUND | EV_FINAL


# ================================================================= Python API: GameState and its row
def team_of(seat: int) -> int:
    """R1.2: partners sit every other seat."""
    return seat % 2


def pass_direction(config: RulesConfig, round_number: int) -> PassDirection:
    """R3.2 / R3.4: partner, left, right, none, repeating every four rounds."""
    return PassDirection(pass_dir(round_number, config.passing))


# Seat offset of the receiver for each direction (R3.2), as a table (the Python function: no compiling at import).
_pass_offset_py = getattr(pass_offset, "py_func", pass_offset)
PASS_OFFSET = {d: _pass_offset_py(int(d)) for d in (PassDirection.PARTNER, PassDirection.LEFT, PassDirection.RIGHT)}


def runs(trick_teams: Sequence[int]) -> list[tuple[int, int]]:
    """R7.1: maximal stretches of tricks won by one team, as ``(team, length)`` (for display)."""
    out: list[tuple[int, int]] = []
    for team in trick_teams:
        if out and out[-1][0] == team:
            out[-1] = (team, out[-1][1] + 1)
        else:
            out.append((team, 1))
    return out


def trick_winner(cards_in_order: Sequence[tuple[int, int]], trump: int) -> int:
    """R6.4: seat that wins a trick given ``(seat, card)`` in play order (:func:`pcr_env.cards.beats`)."""
    best_seat, best_card = cards_in_order[0]
    led = best_card // NUM_RANKS
    for seat, card in cards_in_order[1:]:
        if beats(card, best_card, led, trump):
            best_seat, best_card = seat, card
    return best_seat


@dataclass
class RoundResult:
    """What happened in one scored round (R7, R8); teams are indexed 0 and 1."""

    round_number: int
    dealer: int
    declarer: int
    bid: int
    trump: int
    tricks: tuple[int, int]
    run_bonus: tuple[int, int]
    scores: tuple[int, int]
    made: bool
    trick_winners: tuple[int, ...]
    total_scores: tuple[int, int]
    winner: int | None  # R8.3: team with more tricks; None on a tie

    @classmethod
    def from_record(cls, record: np.ndarray) -> "RoundResult":
        """From a round record (one row of ``ri``, filled by :func:`_score`)."""
        r = record.tolist()
        return cls(
            round_number=r[RI_ROUND], dealer=r[RI_DEALER], declarer=r[RI_DECLARER], bid=r[RI_BID], trump=r[RI_TRUMP],
            tricks=(r[RI_TRICKS], r[RI_TRICKS + 1]), run_bonus=(r[RI_BONUS], r[RI_BONUS + 1]),
            scores=(r[RI_SCORES], r[RI_SCORES + 1]), made=bool(r[RI_MADE]),
            trick_winners=tuple(r[RI_WINNERS:RI_WINNERS + r[RI_N_TRICKS]]),
            total_scores=(r[RI_TOTALS], r[RI_TOTALS + 1]), winner=None if r[RI_WINNER] < 0 else r[RI_WINNER],
        )

    def to_info(self) -> dict:
        """The ``"round_result"`` entry of the environments' infos: numbers and lists of numbers only.

        Every value is an ``int``, a ``bool`` or a list of ``int`` of fixed length
        (two per-team entries; ``trick_winners`` has one seat per trick), so
        replay buffers that stack infos (Tianshou's ``Batch``) store plain
        numeric arrays. ``trump`` is the suit index 0..3 (C D H S, as in
        :mod:`pcr_env.cards`; its letter is ``pcr_env.cards.SUITS[trump]``) and
        ``winner`` is the team with more tricks, or ``-1`` on a tie (R8.3).

        >>> from pcr_env.cards import SUITS
        >>> info = RoundResult(1, 0, 2, 7, 2, (8, 5), (3, 0), (11, 5), True, (2,) * 13, (11, 5), 0).to_info()
        >>> info["trump"], SUITS[info["trump"]], info["winner"]
        (2, 'H', 0)
        """
        return {
            "round": int(self.round_number),
            "dealer": int(self.dealer),
            "declarer": int(self.declarer),
            "bid": int(self.bid),
            "trump": int(self.trump),
            "tricks": [int(x) for x in self.tricks],
            "run_bonus": [int(x) for x in self.run_bonus],
            "scores": [int(x) for x in self.scores],
            "made": bool(self.made),
            "trick_winners": [int(x) for x in self.trick_winners],
            "total_scores": [int(x) for x in self.total_scores],
            "winner": -1 if self.winner is None else int(self.winner),
        }


def round_info(record: np.ndarray) -> dict:
    """``RoundResult.from_record(record).to_info()``, built straight from the record (the envs' fast path)."""
    r = record.tolist()
    return {
        "round": r[RI_ROUND], "dealer": r[RI_DEALER], "declarer": r[RI_DECLARER], "bid": r[RI_BID],
        "trump": r[RI_TRUMP], "tricks": r[RI_TRICKS:RI_TRICKS + 2], "run_bonus": r[RI_BONUS:RI_BONUS + 2],
        "scores": r[RI_SCORES:RI_SCORES + 2], "made": bool(r[RI_MADE]),
        "trick_winners": r[RI_WINNERS:RI_WINNERS + r[RI_N_TRICKS]], "total_scores": r[RI_TOTALS:RI_TOTALS + 2],
        "winner": r[RI_WINNER],  # -1 on a tie (R8.3)
    }


@lru_cache(maxsize=64)
def _cfg(config: RulesConfig) -> np.ndarray:
    cfg = config_array(config)
    return cfg


def score_round(config: RulesConfig, declarer: int, bid: int, trick_winners: Sequence[int]) -> tuple:
    """R7-R8.3 for one round: returns ``(tricks, run_bonus, scores, made, winner)`` per team."""
    S = np.zeros((1, STATE_COLUMNS), np.int64)
    S[0, WINNERS:WINNERS + len(trick_winners)] = trick_winners
    S[0, N_TRICKS], S[0, DECLARER], S[0, HIGH_BID] = len(trick_winners), declarer, bid
    ri = np.zeros((1, ROUND_INFO_SIZE), np.int64)
    _round_score(S, 0, _cfg(config), ri)
    r = RoundResult.from_record(ri[0])
    return r.tricks, r.run_bonus, r.scores, r.made, r.winner


@dataclass
class GameState:
    """Everything about a game in progress, hidden information included: the readable form of a game row.

    Card sets are bitmasks (see :mod:`pcr_env.cards`); per-seat lists are
    indexed by absolute seat; teams are 0 (even seats) and 1 (odd seats).
    :func:`to_row` / :func:`from_row` convert it to and from the compiled form.
    """

    config: RulesConfig
    round_number: int
    dealer: int
    redeals: int  # consecutive all-pass redeals of this round (R4.4)
    phase: Phase
    current: int  # seat to act; -1 when nobody acts
    hands: list[int]
    kitty: int
    passed: list[int]  # cards each seat picked / passed this round (R3.3)
    received: list[int]  # cards each seat received this round (R3.3)
    pass_done: int  # seats that finished picking
    bids: list[int]  # NOT_YET, PASSED or the seat's latest bid
    out: list[bool]  # seats that passed (auction: out for the round)
    high_bid: int  # 0 while nobody has bid
    declarer: int  # highest bidder so far, -1 if none
    trump: int  # suit index, -1 until named
    discards: int  # the declarer's discards (R9.3)
    trick: list[tuple[int, int]]  # (seat, card) of the current trick in play order
    played: list[int]  # cards each seat has played this round
    voids: list[int]  # per seat, bit s set: failed to follow suit s this round
    trick_winners: list[int]
    team_tricks: list[int]
    scores: list[int]  # game totals per team (R8.4)
    run_team: int = -1  # team of the current run (R7.1), -1 before the first trick
    run_length: int = 0
    pass_direction: PassDirection = PassDirection.NONE  # of this round (R3.2)
    truncated: bool = False
    winner: int | None = None  # winning team once the game is over
    rounds_played: int = 0  # rounds scored in this game (R8.4 max_rounds)

    @property
    def n_players(self) -> int:
        return self.config.players

    @property
    def led_suit(self) -> int:
        return self.trick[0][1] // NUM_RANKS if self.trick else -1

    @property
    def run(self) -> tuple[int, int]:
        """The current run as ``(team, length)``; ``(-1, 0)`` before the first trick."""
        return self.run_team, self.run_length

    @property
    def is_over(self) -> bool:
        return self.phase == Phase.GAME_OVER

    def copy(self) -> "GameState":
        return GameState(
            self.config, self.round_number, self.dealer, self.redeals, self.phase, self.current,
            list(self.hands), self.kitty, list(self.passed), list(self.received), self.pass_done,
            list(self.bids), list(self.out), self.high_bid, self.declarer, self.trump, self.discards,
            list(self.trick), list(self.played), list(self.voids), list(self.trick_winners),
            list(self.team_tricks), list(self.scores), self.run_team, self.run_length,
            self.pass_direction, self.truncated, self.winner, self.rounds_played,
        )


def _pad(values: Sequence[int], size: int = MAX_SEATS) -> list[int]:
    return [int(v) for v in values] + [0] * (size - len(values))


_ZEROS = (0,) * MAX_TRICKS


def row_values(state: GameState) -> list:
    """The game row of ``state`` as a list of numbers (see the column constants)."""
    pad = _ZEROS[:MAX_SEATS - len(state.hands)]
    trick, winners = state.trick, state.trick_winners
    rest = _ZEROS[:MAX_SEATS - len(trick)]
    return [
        *state.hands, *pad, *state.passed, *pad, *state.received, *pad, *state.bids, *pad, *state.out, *pad,
        *state.played, *pad, *state.voids, *pad, *[c for _, c in trick], *rest, *[s for s, _ in trick], *rest,
        *winners, *_ZEROS[:MAX_TRICKS - len(winners)],
        state.kitty, state.discards, state.pass_done, state.high_bid, state.declarer, state.trump, len(trick),
        len(winners), *state.team_tricks, *state.scores, state.run_team, state.run_length, int(state.pass_direction),
        int(state.phase), state.current, state.dealer, state.round_number, state.redeals, state.truncated,
        -1 if state.winner is None else state.winner, state.rounds_played,
    ]


def to_row(state: GameState, out: np.ndarray | None = None) -> np.ndarray:
    """``state`` as a ``[1, STATE_COLUMNS]`` int64 matrix (or written into ``out``, one row)."""
    if out is None:
        return np.fromiter(row_values(state), np.int64, STATE_COLUMNS).reshape(1, STATE_COLUMNS)
    out[:] = row_values(state)
    return out


def from_row(row: np.ndarray, config: RulesConfig) -> GameState:
    """The :class:`GameState` of one game row (a copy: changing it does not change the row)."""
    state = GameState(config, 0, 0, 0, Phase.PASS, -1, [], 0, [], [], 0, [], [], 0, -1, -1, 0, [], [], [], [], [], [])
    _load(state, row)
    return state


def _load(state: GameState, row: np.ndarray) -> None:
    r = row.tolist()
    n = state.config.players
    state.hands, state.passed, state.received = r[HANDS:HANDS + n], r[PASSED_CARDS:PASSED_CARDS + n], r[RECEIVED:RECEIVED + n]
    state.bids, state.out = r[BIDS:BIDS + n], [bool(x) for x in r[OUT:OUT + n]]
    state.played, state.voids = r[PLAYED:PLAYED + n], r[VOIDS:VOIDS + n]
    k = r[TRICK_LEN]
    state.trick = list(zip(r[TRICK_SEAT:TRICK_SEAT + k], r[TRICK_CARD:TRICK_CARD + k]))
    state.trick_winners = r[WINNERS:WINNERS + r[N_TRICKS]]
    state.kitty, state.discards, state.pass_done = r[KITTY], r[DISCARDS], r[PASS_DONE]
    state.high_bid, state.declarer, state.trump = r[HIGH_BID], r[DECLARER], r[TRUMP]
    state.team_tricks, state.scores = r[TEAM_TRICKS:TEAM_TRICKS + 2], r[SCORES:SCORES + 2]
    state.run_team, state.run_length = r[RUN_TEAM], r[RUN_LENGTH]
    state.pass_direction, state.phase, state.current = PassDirection(r[PASS_DIR]), Phase(r[PHASE]), r[CURRENT]
    state.dealer, state.round_number, state.redeals = r[DEALER], r[ROUND], r[REDEALS]
    state.truncated, state.winner = bool(r[TRUNCATED]), None if r[WINNER] < 0 else r[WINNER]
    state.rounds_played = r[ROUNDS_PLAYED]


def deal_from(S: np.ndarray, g: int, cfg: np.ndarray, rng) -> None:
    """Deal row ``g``'s round from ``rng`` (``rng.permutation(52)``, as the Python API always has)."""
    deal_order(S, g, cfg, np.asarray(rng.permutation(NUM_CARDS), np.int64))


def start_row(
    S: np.ndarray, g: int, config: RulesConfig, cfg: np.ndarray, rng, *, dealer: int | None = None,
    round_number: int = 1, hands: Sequence[Sequence[int]] | None = None, kitty: Sequence[int] | None = None,
    scores: Sequence[int] = (0, 0),
) -> None:
    """Start a game in row ``g`` and deal its first round (R2); the arguments of :func:`new_game`."""
    n = config.players
    if dealer is None:
        dealer = int(rng.integers(n)) if config.first_dealer == "random" else int(config.first_dealer)
    if not (isinstance(dealer, (int, np.integer)) and 0 <= dealer < n):
        raise ValueError(f"dealer {dealer!r} is not a seat: allowed 0..{n - 1}")
    if not (isinstance(round_number, (int, np.integer)) and round_number >= 1):
        raise ValueError(f"round {round_number!r} is not a round number: allowed an integer >= 1")
    if hands is None and kitty is not None:
        raise ValueError("kitty was given without hands: give both or neither")
    deal = validate_deal(config, hands, kitty) if hands is not None else None
    start_game(S, g, int(dealer), int(round_number), int(scores[0]), int(scores[1]))
    if deal is None:
        deal_from(S, g, cfg, rng)
    else:
        deal_given(S, g, cfg, np.array(_pad(deal[0]), np.int64), np.int64(deal[1]))


def new_game(
    config: RulesConfig,
    rng: np.random.Generator,
    *,
    dealer: int | None = None,
    round_number: int = 1,
    hands: Sequence[Sequence[int]] | None = None,
    kitty: Sequence[int] | None = None,
    scores: Sequence[int] = (0, 0),
) -> GameState:
    """Start a game and deal its first round (R2).

    ``dealer`` defaults to ``config.first_dealer`` (drawn from ``rng`` when
    ``"random"``). ``hands`` (one card list per seat) and ``kitty`` fix the deal
    instead of shuffling; they are validated by :func:`validate_deal`.
    """
    S = np.zeros((1, STATE_COLUMNS), np.int64)
    start_row(S, 0, config, _cfg(config), rng, dealer=dealer, round_number=round_number, hands=hands, kitty=kitty,
              scores=scores)
    return from_row(S[0], config)


def validate_deal(config: RulesConfig, hands: Sequence[Sequence[int]], kitty: Sequence[int] | None) -> tuple[list[int], int]:
    """Check a chosen deal covers the deck exactly once; return (hand masks, kitty mask)."""
    n, size = config.players, config.hand_size
    if len(hands) != n:
        raise ValueError(f"hands has {len(hands)} entries: expected one per seat ({n})")
    for seat, hand in enumerate(hands):
        if len(hand) != size or len(set(hand)) != size:
            raise ValueError(f"hands[{seat}] has {len(set(hand))} distinct of {len(hand)} cards: expected {size} distinct cards")
    kitty = list(kitty or [])
    if len(kitty) != config.kitty_size or len(set(kitty)) != len(kitty):
        raise ValueError(f"kitty has {len(kitty)} cards: expected {config.kitty_size} distinct cards")
    masks = [mask_of(h) for h in hands]
    union = mask_of(kitty)
    for seat, m in enumerate(masks):
        if union & m:
            dup = [card_str(c) for c in cards_of(union & m)]
            raise ValueError(f"hands[{seat}] repeats card(s) {dup} dealt elsewhere: every card must be dealt once")
        union |= m
    if union != FULL_DECK:
        raise ValueError("the deal does not cover the 52-card deck exactly once")
    return masks, mask_of(kitty)


def start_next_round(state: GameState, rng: np.random.Generator) -> None:
    """R2.1: after a scored round the deal passes to the left."""
    if state.phase != Phase.ROUND_END:
        raise ValueError(f"start_next_round needs phase ROUND_END, not {state.phase.name}")
    S, cfg = to_row(state), _cfg(state.config)
    _next_round(S, NO_STREAM, 0, cfg)
    deal_from(S, 0, cfg, rng)
    _load(state, S[0])


def legal_card_mask(state: GameState) -> int:
    """Bitmask of the cards the player to act may pass, discard or play."""
    return int(card_mask(to_row(state), 0))


def legal_mask(state: GameState) -> np.ndarray:
    """``[NUM_ACTIONS]`` int8 mask of :func:`legal_actions` (all zeros when nobody acts)."""
    mask = np.zeros(NUM_ACTIONS, np.int8)
    legal_mask_row(to_row(state), 0, _cfg(state.config), mask)
    return mask


def legal_actions(state: GameState) -> list[int]:
    """Sorted action ids the player to act may take (empty when nobody acts)."""
    return np.flatnonzero(legal_mask(state)).tolist()


def is_legal(state: GameState, action: int) -> bool:
    return bool(is_legal_row(to_row(state), 0, int(action), _cfg(state.config)))


def apply_action(state: GameState, action: int, rng: np.random.Generator, *, validate: bool = True) -> RoundResult | None:
    """Apply a legal ``action`` of ``state.current`` in place.

    Returns the round's :class:`RoundResult` when this action completed a
    round, else ``None``. ``rng`` is used only if the action causes a redeal.
    Raises ``ValueError`` for an illegal action (unless the caller has already
    checked it and passes ``validate=False``).
    """
    action = int(action)
    S, cfg = to_row(state), _cfg(state.config)
    if validate and not is_legal_row(S, 0, action, cfg):
        raise ValueError(
            f"illegal action {action} ({_describe(action)}) for seat {state.current} in phase "
            f"{state.phase.name}: legal actions are {legal_actions(state)}"
        )
    ri = np.zeros((1, ROUND_INFO_SIZE), np.int64)
    scored = apply_row(S, NO_STREAM, 0, action, cfg, ri)
    if S[0, PHASE] == PH_DEAL:  # R4.4: thrown in, dealt again
        deal_from(S, 0, cfg, rng)
    _load(state, S[0])
    return RoundResult.from_record(ri[0]) if scored else None


def _describe(action: int) -> str:
    try:
        return A.describe_action(action)
    except ValueError:
        return "out of range"
