"""Numba kernels behind :class:`pcr_env.vector.VectorEnv`: the rules engine on packed arrays.

This is a second implementation of :mod:`pcr_env.engine` (RULES.md R1-R9) and of
:func:`pcr_env.observation.encode_observation`, written for speed: every game is
one row of an ``int64`` matrix and each kernel loops over the rows. Python never
touches a game between calls. ``tests/test_vector.py`` plays thousands of seeded
games through both implementations and requires identical masks, observations,
state vectors, rewards and results.

State row (columns are the constants below; card sets are bitmasks, bit ``c``
= card ``c``; per-seat blocks are indexed by absolute seat and sized for six):

===============  ====  =====================================================
columns          size  content (same meaning as the ``GameState`` field)
===============  ====  =====================================================
HANDS            6     cards held
PASSED           6     cards picked / passed this round (R3.3)
RECEIVED         6     cards received this round (R3.3)
BIDS             6     ``NOT_YET`` (-1), ``PASSED`` (0) or the latest bid
OUT              6     1 once the seat passed (auction: out for the round)
PLAYED           6     cards played this round
VOIDS            6     bit ``s``: failed to follow suit ``s`` (R6.2)
TRICK_CARD       6     cards of the current trick, in play order
TRICK_SEAT       6     their seats, in play order
WINNERS          13    seat that won each trick so far
KITTY ...        1     scalars: kitty, discards, pass_done, high_bid, declarer,
                       trump, trick_len, n_tricks, team tricks (2), scores (2),
                       run team / length, pass direction, phase, current,
                       dealer, round, redeals, truncated, winner (-1 = none),
                       rounds played (scored in this game; R8.4 max_rounds)
===============  ====  =====================================================

Randomness: one splitmix64 stream per game (``uint64`` state), seeded from
``(seed, game index)`` only, so game ``i`` deals the same cards whatever the
number of games. A deal is a Fisher-Yates shuffle with unbiased bounded draws
(Lemire's multiply-and-reject on 32-bit outputs); the first dealer (when
``first_dealer="random"``) is one bounded draw before the game's first shuffle.
:class:`pcr_env.vector.DealRng` is the same stream in pure Python, usable as the
``rng`` of :mod:`pcr_env.engine`.

Rules and the observation layout reach the kernels as small ``int64`` arrays
(:func:`config_array`, :func:`observation_offsets`): one compiled version serves
every variant, and the layout's offsets come from
:func:`pcr_env.observation.observation_layout` instead of being re-derived.
"""

from __future__ import annotations

import numpy as np
from numba import njit

try:  # LLVM's count-trailing-zeros, numba's own intrinsic (one instruction per card of a set)
    from numba.cpython.unsafe.numbers import trailing_zeros
except ImportError:  # pragma: no cover - a numba without it: the same result by binary search
    @njit(cache=True)
    def trailing_zeros(x):
        x &= -x
        c = 0
        for shift in (32, 16, 8, 4, 2, 1):
            if x >> shift:
                c += shift
                x >>= shift
        return c

from .actions import BID_BASE, MAX_BID, NUM_ACTIONS, PASS_BID, TRUMP_BASE
from .cards import NUM_CARDS, NUM_RANKS
from .config import RulesConfig
from .engine import run_bonus
from .observation import REDEAL_SCALE, TARGET_SCALE, observation_layout, state_layout

MAX_SEATS = 6
MAX_TRICKS = 13

# ---------------------------------------------------------------- state columns
HANDS = 0
PASSED = HANDS + MAX_SEATS
RECEIVED = PASSED + MAX_SEATS
BIDS = RECEIVED + MAX_SEATS
OUT = BIDS + MAX_SEATS
PLAYED = OUT + MAX_SEATS
VOIDS = PLAYED + MAX_SEATS
TRICK_CARD = VOIDS + MAX_SEATS
TRICK_SEAT = TRICK_CARD + MAX_SEATS
WINNERS = TRICK_SEAT + MAX_SEATS
KITTY = WINNERS + MAX_TRICKS
DISCARDS = KITTY + 1
PASS_DONE = DISCARDS + 1
HIGH_BID = PASS_DONE + 1
DECLARER = HIGH_BID + 1
TRUMP = DECLARER + 1
TRICK_LEN = TRUMP + 1
N_TRICKS = TRICK_LEN + 1
TEAM_TRICKS = N_TRICKS + 1  # 2 columns
SCORES = TEAM_TRICKS + 2  # 2 columns
RUN_TEAM = SCORES + 2
RUN_LENGTH = RUN_TEAM + 1
PASS_DIR = RUN_LENGTH + 1
PHASE = PASS_DIR + 1
CURRENT = PHASE + 1
DEALER = CURRENT + 1
ROUND = DEALER + 1
REDEALS = ROUND + 1
TRUNCATED = REDEALS + 1
WINNER = TRUNCATED + 1
ROUNDS_PLAYED = WINNER + 1
STATE_COLUMNS = ROUNDS_PLAYED + 1

# Phases and pass directions: the values of engine.Phase / engine.PassDirection.
PH_PASS, PH_BID, PH_TRUMP, PH_DISCARD, PH_PLAY, PH_ROUND_END, PH_GAME_OVER = 0, 1, 2, 3, 4, 5, 6
DIR_NONE = 3
NOT_YET, PASSED_BID = -1, 0
PASS_SIZE = 3

# ---------------------------------------------------------------- config array
C_PLAYERS = 0
C_HAND_SIZE = 1
C_KITTY_SIZE = 2
C_MIN_BID = 3
C_PASSING = 4
C_DOUBLE = 5
C_AUCTION = 6
C_TARGET = 7
C_MAX_ROUNDS = 8
C_MAX_REDEALS = 9
C_FIRST_DEALER = 10  # -1: drawn from the game's stream
C_EPISODE_ROUND = 11
C_REWARD_WIN = 12
CONFIG_SIZE = 13

# ---------------------------------------------------------------- observation offsets
OBS_FIELDS = (
    "phase", "hand", "passed", "received", "discarded", "played", "trick", "bids", "contract", "declarer",
    "trump", "dealer", "pass_direction", "led_suit", "voids", "trick_winners", "team_tricks", "run", "scores",
    "redeals",
)
O_PHASE, O_HAND, O_PASSED, O_RECEIVED, O_DISCARDED, O_PLAYED, O_TRICK, O_BIDS, O_CONTRACT, O_DECLARER, \
    O_TRUMP, O_DEALER, O_PASS_DIRECTION, O_LED_SUIT, O_VOIDS, O_TRICK_WINNERS, O_TEAM_TRICKS, O_RUN, O_SCORES, \
    O_REDEALS = range(len(OBS_FIELDS))
O_SIZE = len(OBS_FIELDS)  # last entry of the offsets array: the observation size
BID_SLOTS = MAX_BID + 1

# ---------------------------------------------------------------- step outputs
EV_ROUND = 1  # events[g] bit: a round was scored (round_info row filled)
EV_FINAL = 2  # events[g] bit: the episode ended (final_info row filled, game restarted)
RI_ROUND, RI_DEALER, RI_DECLARER, RI_BID, RI_TRUMP, RI_TRICKS, RI_BONUS, RI_SCORES, RI_MADE, RI_TOTALS, \
    RI_WINNER, RI_N_TRICKS, RI_WINNERS = 0, 1, 2, 3, 4, 5, 7, 9, 11, 12, 14, 15, 16
ROUND_INFO_SIZE = RI_WINNERS + MAX_TRICKS
FI_SCORES, FI_WINNER, FI_TRUNCATED, FI_ROUNDS = 0, 2, 3, 4
FINAL_INFO_SIZE = 5

# ---------------------------------------------------------------- splitmix64
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
U27, U30, U31, U32 = np.uint64(27), np.uint64(30), np.uint64(31), np.uint64(32)
LOW32 = np.uint64(0xFFFFFFFF)
TWO32 = np.uint64(1 << 32)
SUIT_BITS = np.int64((1 << NUM_RANKS) - 1)


def config_array(rules: RulesConfig, episode: str, reward: str) -> np.ndarray:
    """The rules and episode settings as the kernels read them."""
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


def observation_offsets(players: int) -> np.ndarray:
    """Start of every observation slice (order :data:`OBS_FIELDS`), then the size."""
    layout = observation_layout(players)
    return np.array([layout[name].start for name in OBS_FIELDS] + [layout.size], np.int64)


def state_offsets(players: int) -> np.ndarray:
    """Start of each hidden block of the full-state vector, then its size."""
    layout = state_layout(players)
    names = ("other_hands", "other_passed", "other_received", "kitty", "all_discards")
    return np.array([layout[name].start for name in names] + [layout.size], np.int64)


# ================================================================= randomness
@njit(cache=True)
def _mix64(z):
    z = (z ^ (z >> U30)) * MIX1
    z = (z ^ (z >> U27)) * MIX2
    return z ^ (z >> U31)


@njit(cache=True)
def seed_streams(seed, rng):
    """``rng[i]`` = the start of game ``i``'s stream; depends on ``(seed, i)`` only."""
    base = _mix64(seed + GOLDEN)
    for i in range(rng.shape[0]):
        rng[i] = _mix64(base + np.uint64(i + 1) * GOLDEN)


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


# ================================================================= rules
@njit(cache=True)
def _popcount(x):
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True)
def _deal(S, rng, g, cfg):
    """R2.2 and the start of a round's state (engine._deal)."""
    n = cfg[C_PLAYERS]
    order = np.arange(NUM_CARDS)
    for j in range(NUM_CARDS - 1, 0, -1):  # Fisher-Yates
        r = _below(rng, g, j + 1)
        order[j], order[r] = order[r], order[j]
    dealer = S[g, DEALER]
    for s in range(MAX_SEATS):
        S[g, HANDS + s] = 0
        S[g, PASSED + s] = 0
        S[g, RECEIVED + s] = 0
        S[g, BIDS + s] = NOT_YET
        S[g, OUT + s] = 0
        S[g, PLAYED + s] = 0
        S[g, VOIDS + s] = 0
        S[g, TRICK_CARD + s] = 0
        S[g, TRICK_SEAT + s] = 0
    dealt = n * cfg[C_HAND_SIZE]
    for i in range(dealt):  # one card at a time clockwise from the dealer's left
        S[g, HANDS + (dealer + 1 + i) % n] |= np.int64(1) << order[i]
    kitty = np.int64(0)
    for i in range(dealt, NUM_CARDS):
        kitty |= np.int64(1) << order[i]
    S[g, KITTY] = kitty
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
    pass_dir = (S[g, ROUND] - 1) % 4 if cfg[C_PASSING] else DIR_NONE  # R3.2, R3.4
    S[g, PASS_DIR] = pass_dir
    S[g, CURRENT] = (dealer + 1) % n
    S[g, PHASE] = PH_BID if pass_dir == DIR_NONE else PH_PASS


@njit(cache=True)
def _new_game(S, rng, g, cfg):
    """engine.new_game: dealer (R2.1), round 1, zero scores, first deal."""
    for c in range(STATE_COLUMNS):
        S[g, c] = 0
    if cfg[C_FIRST_DEALER] < 0:
        S[g, DEALER] = _below(rng, g, cfg[C_PLAYERS])
    else:
        S[g, DEALER] = cfg[C_FIRST_DEALER]
    S[g, ROUND] = 1
    S[g, WINNER] = -1
    _deal(S, rng, g, cfg)


@njit(cache=True)
def _card_mask(S, g):
    """Cards the seat to act may pass, discard or play (engine.legal_card_mask)."""
    phase = S[g, PHASE]
    hand = S[g, HANDS + S[g, CURRENT]]
    if phase == PH_PLAY and S[g, TRICK_LEN] > 0:
        follow = hand & (SUIT_BITS << (NUM_RANKS * (S[g, TRICK_CARD] // NUM_RANKS)))
        return follow if follow else hand  # R6.2
    if phase == PH_PASS or phase == PH_DISCARD or phase == PH_PLAY:
        return hand
    return np.int64(0)


@njit(cache=True)
def _lowest_bid(S, g, cfg):
    return max(cfg[C_MIN_BID], S[g, HIGH_BID] + 1)


@njit(cache=True)
def _is_legal(S, g, a, cfg):
    phase = S[g, PHASE]
    if phase == PH_PASS or phase == PH_DISCARD or phase == PH_PLAY:
        return 0 <= a < NUM_CARDS and (_card_mask(S, g) >> a) & 1 == 1
    if phase == PH_BID:
        if a == PASS_BID:
            return True
        return BID_BASE <= a < PASS_BID and _lowest_bid(S, g, cfg) <= a - BID_BASE + 1 <= cfg[C_HAND_SIZE]
    if phase == PH_TRUMP:
        return TRUMP_BASE <= a < NUM_ACTIONS
    return False


@njit(cache=True)
def _end_bidding(S, rng, g, cfg):
    if S[g, HIGH_BID] == 0:
        # R4.4: thrown in; the same dealer deals again for the same round.
        S[g, REDEALS] += 1
        if S[g, REDEALS] > cfg[C_MAX_REDEALS]:
            S[g, TRUNCATED] = 1
            S[g, PHASE] = PH_GAME_OVER
            S[g, CURRENT] = -1
            return
        _deal(S, rng, g, cfg)
        return
    declarer = S[g, DECLARER]
    S[g, PHASE] = PH_TRUMP
    S[g, CURRENT] = declarer
    S[g, HANDS + declarer] |= S[g, KITTY]  # R9.3: the declarer takes the kitty


@njit(cache=True)
def _bid(S, rng, g, a, cfg):
    """R4.1-R4.5 (engine._bid)."""
    n = cfg[C_PLAYERS]
    seat = S[g, CURRENT]
    if a == PASS_BID:
        S[g, BIDS + seat] = PASSED_BID
        S[g, OUT + seat] = 1
    else:
        S[g, HIGH_BID] = a - BID_BASE + 1
        S[g, BIDS + seat] = S[g, HIGH_BID]
        S[g, DECLARER] = seat
    if S[g, HIGH_BID] == cfg[C_HAND_SIZE]:
        _end_bidding(S, rng, g, cfg)
        return
    if not cfg[C_AUCTION]:
        for s in range(n):
            if S[g, BIDS + s] == NOT_YET:
                S[g, CURRENT] = (seat + 1) % n
                return
        _end_bidding(S, rng, g, cfg)
        return
    still_in = 0
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


@njit(cache=True)
def _pick_pass(S, g, card, cfg):
    """R3.1: picks stay private until every seat has chosen; then all swap at once."""
    n = cfg[C_PLAYERS]
    seat = S[g, CURRENT]
    bit = np.int64(1) << card
    S[g, HANDS + seat] ^= bit
    S[g, PASSED + seat] |= bit
    if _popcount(S[g, PASSED + seat]) < PASS_SIZE:
        return
    S[g, PASS_DONE] += 1
    S[g, CURRENT] = (seat + 1) % n
    if S[g, PASS_DONE] < n:
        return
    d = S[g, PASS_DIR]
    offset = 2 if d == 0 else (1 if d == 1 else -1)  # partner, left, right (R3.2, R9.3)
    for giver in range(n):
        S[g, RECEIVED + (giver + offset + n) % n] = S[g, PASSED + giver]
    for s in range(n):
        S[g, HANDS + s] |= S[g, RECEIVED + s]
    S[g, PHASE] = PH_BID
    S[g, CURRENT] = (S[g, DEALER] + 1) % n


# R7.2 / R7.3: the engine's own rule, compiled (one definition of the bonus table).
_run_bonus = njit(cache=True)(run_bonus)


@njit(cache=True)
def _score(S, g, cfg, round_info):
    """R7-R8.4 (engine.score_round and engine._score); fills ``round_info[g]``."""
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
            bonus0 += _run_bonus(length, double)
        else:
            bonus1 += _run_bonus(length, double)
        t += length
    tricks1 = n_tricks - tricks0
    declarer = S[g, DECLARER]
    bid = S[g, HIGH_BID]
    bidding = declarer % 2
    made = (tricks1 if bidding else tricks0) >= bid
    score0 = tricks0 + bonus0
    score1 = tricks1 + bonus1
    if not made:
        if bidding:
            score1 = -bid
        else:
            score0 = -bid
    S[g, SCORES] += score0
    S[g, SCORES + 1] += score1
    S[g, ROUNDS_PLAYED] += 1
    ri = round_info[g]
    ri[RI_ROUND] = S[g, ROUND]
    ri[RI_DEALER] = S[g, DEALER]
    ri[RI_DECLARER] = declarer
    ri[RI_BID] = bid
    ri[RI_TRUMP] = S[g, TRUMP]
    ri[RI_TRICKS] = tricks0
    ri[RI_TRICKS + 1] = tricks1
    ri[RI_BONUS] = bonus0
    ri[RI_BONUS + 1] = bonus1
    ri[RI_SCORES] = score0
    ri[RI_SCORES + 1] = score1
    ri[RI_MADE] = made
    ri[RI_TOTALS] = S[g, SCORES]
    ri[RI_TOTALS + 1] = S[g, SCORES + 1]
    ri[RI_WINNER] = -1 if tricks0 == tricks1 else (1 if tricks1 > tricks0 else 0)  # R8.3
    ri[RI_N_TRICKS] = n_tricks
    for t in range(MAX_TRICKS):
        ri[RI_WINNERS + t] = S[g, WINNERS + t] if t < n_tricks else -1
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


@njit(cache=True)
def _play(S, g, card, cfg, round_info):
    """R6, R7.1; returns True when the card completed the round."""
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
    # R6.4: highest trump, else highest card of the led suit (engine.trick_winner).
    trump = S[g, TRUMP]
    best_card = S[g, TRICK_CARD]
    best_seat = S[g, TRICK_SEAT]
    led = best_card // NUM_RANKS
    for j in range(1, n):
        c = S[g, TRICK_CARD + j]
        s = c // NUM_RANKS
        bs = best_card // NUM_RANKS
        if (s == trump and (bs != trump or c > best_card)) or (s == led and bs == led and c > best_card):
            best_card = c
            best_seat = S[g, TRICK_SEAT + j]
    t = S[g, N_TRICKS]
    S[g, WINNERS + t] = best_seat
    S[g, N_TRICKS] = t + 1
    team = best_seat % 2
    S[g, TEAM_TRICKS + team] += 1
    if team == S[g, RUN_TEAM]:
        S[g, RUN_LENGTH] += 1
    else:
        S[g, RUN_TEAM] = team
        S[g, RUN_LENGTH] = 1
    S[g, TRICK_LEN] = 0
    S[g, CURRENT] = best_seat  # R6.1
    if t + 1 < cfg[C_HAND_SIZE]:
        return False
    _score(S, g, cfg, round_info)
    return True


@njit(cache=True)
def _apply(S, rng, g, a, cfg, round_info):
    """engine.apply_action for a legal action; True when a round was scored."""
    phase = S[g, PHASE]
    if phase == PH_PLAY:
        return _play(S, g, a, cfg, round_info)
    if phase == PH_PASS:
        _pick_pass(S, g, a, cfg)
    elif phase == PH_BID:
        _bid(S, rng, g, a, cfg)
    elif phase == PH_TRUMP:
        S[g, TRUMP] = a - TRUMP_BASE
        S[g, PHASE] = PH_DISCARD if cfg[C_KITTY_SIZE] else PH_PLAY  # R6.1: the declarer leads
    else:
        bit = np.int64(1) << a
        S[g, HANDS + S[g, CURRENT]] ^= bit
        S[g, DISCARDS] |= bit
        if _popcount(S[g, DISCARDS]) == cfg[C_KITTY_SIZE]:
            S[g, PHASE] = PH_PLAY
    return False


@njit(cache=True)
def _finish(S, rng, g, cfg, truncated, final_info):
    fi = final_info[g]
    fi[FI_SCORES] = S[g, SCORES]
    fi[FI_SCORES + 1] = S[g, SCORES + 1]
    fi[FI_WINNER] = S[g, WINNER]
    fi[FI_TRUNCATED] = truncated
    fi[FI_ROUNDS] = S[g, ROUND]
    _new_game(S, rng, g, cfg)


# ================================================================= observation
@njit(cache=True)
def _write_cards(row, base, mask):
    """``row[base + c] = 1`` for every card ``c`` of ``mask`` (one count-trailing-zeros per card)."""
    while mask:
        row[base + trailing_zeros(mask)] = 1.0
        mask &= mask - 1


@njit(cache=True)
def _rel(seat, observer, n):
    """``(seat - observer) % n`` for seats in ``0..n-1``, without a division."""
    k = seat - observer
    return k + n if k < 0 else k


@njit(cache=True)
def _encode_obs(S, g, seat, cfg, off, row):
    """Observation of ``seat`` into ``row`` (zeroed here), as observation.encode_observation."""
    n = cfg[C_PLAYERS]
    tricks = cfg[C_HAND_SIZE]
    for j in range(row.shape[0]):
        row[j] = 0.0
    row[off[O_PHASE] + S[g, PHASE]] = 1.0
    _write_cards(row, off[O_HAND], S[g, HANDS + seat])
    _write_cards(row, off[O_PASSED], S[g, PASSED + seat])
    _write_cards(row, off[O_RECEIVED], S[g, RECEIVED + seat])
    if seat == S[g, DECLARER]:
        _write_cards(row, off[O_DISCARDED], S[g, DISCARDS])
    for s in range(n):  # absolute seat s is relative seat k
        k = _rel(s, seat, n)
        _write_cards(row, off[O_PLAYED] + k * NUM_CARDS, S[g, PLAYED + s])
        bid = S[g, BIDS + s]
        if bid != NOT_YET:
            row[off[O_BIDS] + k * BID_SLOTS + (MAX_BID if bid == PASSED_BID else bid - 1)] = 1.0
        v = S[g, VOIDS + s]
        while v:
            row[off[O_VOIDS] + 4 * k + trailing_zeros(v)] = 1.0
            v &= v - 1
    length = S[g, TRICK_LEN]
    for j in range(length):
        row[off[O_TRICK] + _rel(S[g, TRICK_SEAT + j], seat, n) * NUM_CARDS + S[g, TRICK_CARD + j]] = 1.0
    row[off[O_DEALER] + _rel(S[g, DEALER], seat, n)] = 1.0
    row[off[O_PASS_DIRECTION] + S[g, PASS_DIR]] = 1.0
    if S[g, HIGH_BID]:
        row[off[O_CONTRACT] + S[g, HIGH_BID] - 1] = 1.0
        row[off[O_DECLARER] + _rel(S[g, DECLARER], seat, n)] = 1.0
    if S[g, TRUMP] >= 0:
        row[off[O_TRUMP] + S[g, TRUMP]] = 1.0
    if length:
        row[off[O_LED_SUIT] + S[g, TRICK_CARD] // NUM_RANKS] = 1.0
    base = off[O_TRICK_WINNERS]
    for t in range(S[g, N_TRICKS]):
        row[base + t * n + _rel(S[g, WINNERS + t], seat, n)] = 1.0
    mine = seat & 1
    if S[g, RUN_LENGTH]:
        row[off[O_RUN] + (1 if S[g, RUN_TEAM] != mine else 0)] = 1.0
    # Divisions in float64 then one rounding to float32: the encoder's arithmetic exactly.
    row[off[O_TEAM_TRICKS]] = S[g, TEAM_TRICKS + mine] / tricks
    row[off[O_TEAM_TRICKS] + 1] = S[g, TEAM_TRICKS + 1 - mine] / tricks
    row[off[O_RUN] + 2] = S[g, RUN_LENGTH] / tricks
    target = cfg[C_TARGET]
    row[off[O_SCORES]] = S[g, SCORES + mine] / target
    row[off[O_SCORES] + 1] = S[g, SCORES + 1 - mine] / target
    row[off[O_SCORES] + 2] = target / TARGET_SCALE
    row[off[O_REDEALS]] = S[g, REDEALS] / REDEAL_SCALE


@njit(cache=True)
def _legal_mask(S, g, cfg, mrow):
    for a in range(NUM_ACTIONS):
        mrow[a] = 0
    phase = S[g, PHASE]
    if phase == PH_BID:
        for k in range(_lowest_bid(S, g, cfg), cfg[C_HAND_SIZE] + 1):
            mrow[BID_BASE + k - 1] = 1
        mrow[PASS_BID] = 1
    elif phase == PH_TRUMP:
        for a in range(TRUMP_BASE, NUM_ACTIONS):
            mrow[a] = 1
    else:
        m = _card_mask(S, g)
        for c in range(NUM_CARDS):
            mrow[c] = (m >> c) & 1


@njit(cache=True)
def observe_all(S, cfg, off, obs, masks, seats):
    """Acting seat, its observation and its action mask for every game."""
    for g in range(S.shape[0]):
        seat = S[g, CURRENT]
        seats[g] = seat
        _encode_obs(S, g, seat, cfg, off, obs[g])
        _legal_mask(S, g, cfg, masks[g])


@njit(cache=True)
def observe_one(S, g, seat, cfg, off, row, mrow):
    """Observation of any ``seat`` of game ``g``; the mask is the acting seat's."""
    _encode_obs(S, g, seat, cfg, off, row)
    _legal_mask(S, g, cfg, mrow)


@njit(cache=True)
def state_all(S, cfg, off, soff, out):
    """Full-state vectors from each acting seat (observation.encode_state layout)."""
    n = cfg[C_PLAYERS]
    size = off[O_SIZE]
    for g in range(S.shape[0]):
        row = out[g]
        seat = S[g, CURRENT]
        _encode_obs(S, g, seat, cfg, off, row[:size])
        for j in range(size, row.shape[0]):
            row[j] = 0.0
        for k in range(1, n):
            s = (seat + k) % n
            _write_cards(row, soff[0] + (k - 1) * NUM_CARDS, S[g, HANDS + s])
            _write_cards(row, soff[1] + (k - 1) * NUM_CARDS, S[g, PASSED + s])
            _write_cards(row, soff[2] + (k - 1) * NUM_CARDS, S[g, RECEIVED + s])
        _write_cards(row, soff[3], S[g, KITTY])
        _write_cards(row, soff[4], S[g, DISCARDS])


# ================================================================= batch entry points
@njit(cache=True)
def reset_all(S, rng, cfg, off, obs, masks, seats):
    """Start every game (engine.new_game) and observe it."""
    for g in range(S.shape[0]):
        _new_game(S, rng, g, cfg)
    observe_all(S, cfg, off, obs, masks, seats)


@njit(cache=True)
def step_all(S, rng, actions, cfg, off, rewards, dones, events, round_info, final_info, obs, masks, seats):
    """One action per game, with auto-reset, then the next observations (one call per step).

    Returns ``-1 - g`` if game ``g`` is the first with an illegal action (then no
    game has moved and no output is written), else the number of games with
    events. Otherwise every entry of ``rewards``, ``dones``, ``events``, ``obs``,
    ``masks`` and ``seats`` is written; ``round_info[g]`` / ``final_info[g]`` only
    where ``events[g]`` has :data:`EV_ROUND` / :data:`EV_FINAL`. Rewards follow
    ``VectorEnv`` and the AEC env, per seat (even seats are team 0).
    """
    for g in range(S.shape[0]):
        if not _is_legal(S, g, actions[g], cfg):
            return -1 - g
    count = 0
    n = cfg[C_PLAYERS]
    episode_round = cfg[C_EPISODE_ROUND]
    reward_win = cfg[C_REWARD_WIN]
    for g in range(S.shape[0]):
        for s in range(n):
            rewards[g, s] = 0.0
        dones[g] = False
        events[g] = 0
        scored = _apply(S, rng, g, actions[g], cfg, round_info)
        if scored:
            events[g] = EV_ROUND
            diff = round_info[g, RI_SCORES] - round_info[g, RI_SCORES + 1]
            if not reward_win:
                for s in range(n):
                    rewards[g, s] = diff if s % 2 == 0 else -diff
            over = S[g, PHASE] == PH_GAME_OVER
            if episode_round or over:
                if reward_win:
                    if episode_round:
                        sign = 1 if diff > 0 else (-1 if diff < 0 else 0)
                    else:
                        w = S[g, WINNER]
                        sign = 0 if w < 0 else (1 if w == 0 else -1)
                    for s in range(n):
                        rewards[g, s] = sign if s % 2 == 0 else -sign
                truncated = (not episode_round) and S[g, TRUNCATED] == 1
                _finish(S, rng, g, cfg, truncated, final_info)
                events[g] |= EV_FINAL
                dones[g] = True
            else:
                # R2.1: the deal passes to the left (engine.start_next_round).
                S[g, ROUND] += 1
                S[g, DEALER] = (S[g, DEALER] + 1) % n
                S[g, REDEALS] = 0
                _deal(S, rng, g, cfg)
        elif S[g, PHASE] == PH_GAME_OVER:  # truncated by too many redeals (R4.4)
            _finish(S, rng, g, cfg, S[g, TRUNCATED] == 1, final_info)
            events[g] = EV_FINAL
            dones[g] = True
        if events[g]:
            count += 1
    observe_all(S, cfg, off, obs, masks, seats)
    return count
