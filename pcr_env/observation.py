"""Observation encoder and decoder: what one seat may know, as a flat vector.

The observation is ego-centric: "relative seat" ``k`` is the player ``k`` seats
to the observer's left (``(seat + k) % n``), so ``k = 0`` is the observer, and
"my team" / "their team" replace team numbers. It holds the public record of
the round plus the observer's private knowledge, and nothing else (RULES.md,
"What no player sees"). The layout is a list of named slices; the encoder
checks it fills exactly the declared size. All values lie in [0, 1] except
``scores``.

==================  ==============  ==============================================
slice               size            content
==================  ==============  ==============================================
phase               7               one-hot :class:`~pcr_env.engine.Phase`
hand                52              cards I hold
passed              52              cards I picked to pass (so far) / passed (R3.3)
received            52              cards I received (R3.3)
discarded           52              cards I discarded as declarer (R9.3)
played              n x 52          cards each relative seat played this round
trick               n x 52          card each relative seat put on the current trick
bids                n x 14          per relative seat: latest bid 1..13 one-hot, or 14th = passed
contract            13              highest bid so far / the contract, one-hot 1..13
declarer            n               relative seat of the highest bidder / declarer
trump               4               trump suit C D H S
dealer              n               relative seat of the dealer
pass_direction      4               partner, left, right, none (R3.2)
led_suit            4               suit led to the current trick
voids               n x 4           relative seat showed out of suit (R6.2)
trick_winners       tricks x n      relative seat that won each trick so far
team_tricks         2               tricks won this round / tricks: my team, their team
run                 3               current run: my team, their team (one-hot), length / tricks
scores              3               game totals / target: mine, theirs; target / 100
redeals             1               consecutive redeals of this round / 10, at most 1
==================  ==============  ==============================================

There is one encoder, :func:`encode_row`, compiled with numba over a game row
(:mod:`pcr_env.engine`); the AEC env, ``VectorEnv`` and :func:`encode_observation`
(a :class:`~pcr_env.engine.GameState`) all call it.

The full-state vector (:func:`encode_state`, for centralised critics) is the
observation followed by what the observer cannot see: the other seats' hands,
passed and received cards (relative seats 1..n-1), the kitty and the discards.

>>> import numpy as np
>>> from pcr_env.engine import new_game
>>> from pcr_env.config import RulesConfig
>>> state = new_game(RulesConfig(first_dealer=0), np.random.default_rng(1))
>>> view = decode_observation(encode_observation(state, 1))
>>> view.phase.name, len(view.hand), view.dealer
('PASS', 13, 3)
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np
from numba import njit

from .actions import MAX_BID
from .cards import NUM_CARDS, NUM_RANKS, cards_of, trailing_zeros
from .config import RulesConfig
from .engine import (
    BIDS,
    C_HAND_SIZE,
    C_PLAYERS,
    C_TARGET,
    DEALER,
    DECLARER,
    DISCARDS,
    HANDS,
    HIGH_BID,
    KITTY,
    N_TRICKS,
    NOT_YET,
    PASS_DIR,
    PASSED,
    PASSED_CARDS,
    PHASE,
    PLAYED,
    RECEIVED,
    REDEALS,
    RUN_LENGTH,
    RUN_TEAM,
    SCORES,
    TEAM_TRICKS,
    TRICK_CARD,
    TRICK_LEN,
    TRICK_SEAT,
    TRUMP,
    VOIDS,
    WINNERS,
    GameState,
    PassDirection,
    Phase,
    _cfg,
    to_row,
)

NUM_PHASES = len(Phase)
BID_SLOTS = MAX_BID + 1  # bids 1..13 plus "passed"
REDEAL_SCALE = 10.0
TARGET_SCALE = 100.0


class Layout:
    """Named, contiguous slices of a flat vector, checked to tile it exactly."""

    def __init__(self, fields: list[tuple[str, int]]):
        self.slices: dict[str, slice] = {}
        offset = 0
        for name, size in fields:
            if name in self.slices or size <= 0:
                raise ValueError(f"bad layout field {name!r} of size {size}")
            self.slices[name] = slice(offset, offset + size)
            offset += size
        self.size = offset

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]

    def check_filled(self, written: set[str]) -> None:
        if written != set(self.slices):
            raise AssertionError(f"encoder wrote {sorted(written)}, layout declares {sorted(self.slices)}")


@lru_cache(maxsize=None)
def observation_layout(players: int) -> Layout:
    n, tricks = players, RulesConfig(players=players).num_tricks
    return Layout([
        ("phase", NUM_PHASES),
        # The card blocks are adjacent so one unpack fills them all.
        ("hand", NUM_CARDS), ("passed", NUM_CARDS), ("received", NUM_CARDS), ("discarded", NUM_CARDS),
        ("played", n * NUM_CARDS), ("trick", n * NUM_CARDS),
        ("bids", n * BID_SLOTS), ("contract", MAX_BID), ("declarer", n), ("trump", 4), ("dealer", n),
        ("pass_direction", 4), ("led_suit", 4), ("voids", n * 4), ("trick_winners", tricks * n),
        ("team_tricks", 2), ("run", 3), ("scores", 3), ("redeals", 1),
    ])


@lru_cache(maxsize=None)
def state_layout(players: int) -> Layout:
    n = players
    obs = observation_layout(players)
    return Layout([
        ("observation", obs.size),
        ("other_hands", (n - 1) * NUM_CARDS), ("other_passed", (n - 1) * NUM_CARDS),
        ("other_received", (n - 1) * NUM_CARDS), ("kitty", NUM_CARDS), ("all_discards", NUM_CARDS),
    ])


def observation_size(players: int = 4) -> int:
    return observation_layout(players).size


def state_size(players: int = 4) -> int:
    return state_layout(players).size


def observation_bounds(players: int) -> tuple[np.ndarray, np.ndarray]:
    layout = observation_layout(players)
    low = np.zeros(layout.size, np.float32)
    high = np.ones(layout.size, np.float32)
    low[layout["scores"]], high[layout["scores"]] = -np.inf, np.inf
    return low, high



# ================================================================= the encoder (compiled, over a game row)
OBS_FIELDS = (
    "phase", "hand", "passed", "received", "discarded", "played", "trick", "bids", "contract", "declarer",
    "trump", "dealer", "pass_direction", "led_suit", "voids", "trick_winners", "team_tricks", "run", "scores",
    "redeals",
)
O_PHASE, O_HAND, O_PASSED, O_RECEIVED, O_DISCARDED, O_PLAYED, O_TRICK, O_BIDS, O_CONTRACT, O_DECLARER, \
    O_TRUMP, O_DEALER, O_PASS_DIRECTION, O_LED_SUIT, O_VOIDS, O_TRICK_WINNERS, O_TEAM_TRICKS, O_RUN, O_SCORES, \
    O_REDEALS = range(len(OBS_FIELDS))
O_SIZE = len(OBS_FIELDS)  # last entry of the offsets array: the observation size
STATE_FIELDS = ("other_hands", "other_passed", "other_received", "kitty", "all_discards")


@lru_cache(maxsize=None)
def observation_offsets(players: int) -> np.ndarray:
    """Start of every observation slice (order :data:`OBS_FIELDS`), then the size: the layout as the encoder reads it."""
    layout = observation_layout(players)
    off = np.array([layout[name].start for name in OBS_FIELDS] + [layout.size], np.int64)
    return off


@lru_cache(maxsize=None)
def state_offsets(players: int) -> np.ndarray:
    """Start of each hidden block of the full-state vector (order :data:`STATE_FIELDS`), then its size."""
    layout = state_layout(players)
    off = np.array([layout[name].start for name in STATE_FIELDS] + [layout.size], np.int64)
    return off


@njit(cache=True)
def _write_cards(row, base, mask):
    """``row[base + c] = 1`` for every card ``c`` of ``mask`` (one count-trailing-zeros per card)."""
    while mask:
        row[base + trailing_zeros(mask)] = 1.0
        mask &= mask - 1


@njit(cache=True)
def _rel(seat, observer, n):
    """Relative seat: ``(seat - observer) % n`` for seats in ``0..n-1``, without a division."""
    k = seat - observer
    return k + n if k < 0 else k


@njit(cache=True)
def encode_row(S, g, seat, cfg, off, row):
    """Observation of ``seat`` of game row ``g`` into ``row`` (zeroed here): the one encoder."""
    n = cfg[C_PLAYERS]
    tricks = cfg[C_HAND_SIZE]
    for j in range(row.shape[0]):
        row[j] = 0.0
    row[off[O_PHASE] + S[g, PHASE]] = 1.0
    _write_cards(row, off[O_HAND], S[g, HANDS + seat])
    _write_cards(row, off[O_PASSED], S[g, PASSED_CARDS + seat])  # R3.3: my own passes and receipts only
    _write_cards(row, off[O_RECEIVED], S[g, RECEIVED + seat])
    if seat == S[g, DECLARER]:
        _write_cards(row, off[O_DISCARDED], S[g, DISCARDS])  # R9.3: only the declarer knows its discards
    for s in range(n):  # absolute seat s is relative seat k
        k = _rel(s, seat, n)
        _write_cards(row, off[O_PLAYED] + k * NUM_CARDS, S[g, PLAYED + s])
        bid = S[g, BIDS + s]
        if bid != NOT_YET:
            row[off[O_BIDS] + k * BID_SLOTS + (MAX_BID if bid == PASSED else bid - 1)] = 1.0
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
    # Divisions in float64, then one rounding to float32.
    row[off[O_TEAM_TRICKS]] = S[g, TEAM_TRICKS + mine] / tricks
    row[off[O_TEAM_TRICKS] + 1] = S[g, TEAM_TRICKS + 1 - mine] / tricks
    row[off[O_RUN] + 2] = S[g, RUN_LENGTH] / tricks
    target = cfg[C_TARGET]
    row[off[O_SCORES]] = S[g, SCORES + mine] / target
    row[off[O_SCORES] + 1] = S[g, SCORES + 1 - mine] / target
    row[off[O_SCORES] + 2] = target / TARGET_SCALE
    # A game truncated by redeals (R4.4) ends with max_redeals + 1 of them; clip to stay in [0, 1].
    row[off[O_REDEALS]] = min(S[g, REDEALS], REDEAL_SCALE) / REDEAL_SCALE


@njit(cache=True)
def encode_state_row(S, g, seat, cfg, off, soff, row):
    """Full-state vector from ``seat``: its observation, then every hidden card (relative seats 1..n-1)."""
    n = cfg[C_PLAYERS]
    size = off[O_SIZE]
    encode_row(S, g, seat, cfg, off, row[:size])
    for j in range(size, row.shape[0]):
        row[j] = 0.0
    for k in range(1, n):
        s = (seat + k) % n
        _write_cards(row, soff[0] + (k - 1) * NUM_CARDS, S[g, HANDS + s])
        _write_cards(row, soff[1] + (k - 1) * NUM_CARDS, S[g, PASSED_CARDS + s])
        _write_cards(row, soff[2] + (k - 1) * NUM_CARDS, S[g, RECEIVED + s])
    _write_cards(row, soff[3], S[g, KITTY])
    _write_cards(row, soff[4], S[g, DISCARDS])


def encode_observation(state: GameState, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """Observation vector of ``seat`` (float32, ``observation_size(players)``)."""
    n = state.config.players
    obs = np.empty(observation_size(n), np.float32) if out is None else out
    encode_row(to_row(state), 0, int(seat), _cfg(state.config), observation_offsets(n), obs)
    return obs


def encode_state(state: GameState, seat: int = 0) -> np.ndarray:
    """Full-state vector from ``seat``'s perspective: its observation plus all hidden cards."""
    n = state.config.players
    vec = np.empty(state_size(n), np.float32)
    encode_state_row(to_row(state), 0, int(seat), _cfg(state.config), observation_offsets(n), state_offsets(n), vec)
    return vec


@dataclass
class ObservationView:
    """A decoded observation. Seats are relative (0 = me, 1 = my left, ...)."""

    players: int
    phase: Phase
    hand: list[int]
    passed: list[int]
    received: list[int]
    discarded: list[int]
    played: list[list[int]]
    trick: list[int | None]
    bids: list[int | None]  # None: not yet spoken, 0: passed, k: latest bid
    contract: int | None
    declarer: int | None
    trump: int | None
    dealer: int
    pass_direction: PassDirection
    led_suit: int | None
    voids: list[set[int]]
    trick_winners: list[int]
    team_tricks: tuple[int, int]  # (mine, theirs)
    run: tuple[int | None, int]  # (0 mine / 1 theirs / None, length)
    scores: tuple[int, int]  # (mine, theirs)
    target: int
    redeals: int

    @property
    def num_tricks(self) -> int:
        return RulesConfig(players=self.players).num_tricks

    @property
    def trick_leader(self) -> int | None:
        """Relative seat that led the current trick, if any card is on it."""
        on = [k for k in range(self.players) if self.trick[k] is not None]
        if not on:
            return None
        # The leader is the first seat of the clockwise stretch ending with the seat before me.
        return (-len(on)) % self.players


def players_for_size(size: int) -> int:
    for n in (4, 6):
        if observation_size(n) == size:
            return n
    raise ValueError(f"observation of length {size} matches no table size: expected {observation_size(4)} or {observation_size(6)}")


@dataclass(frozen=True)
class _DecodePlan:
    """Where everything sits in one table size's observation, precomputed once: decoding
    runs at every decision of every scripted agent, so it must do little per call."""

    players: int
    tricks: int
    phase_end: int  # the phase one-hot is ``vec[:phase_end]``
    card_bounds: tuple[int, ...]  # starts of the 4 + 2n adjacent card blocks, then the end of the last one
    card_of: np.ndarray  # per flag index: the card it stands for, when it is in a card block
    flag_start: int  # the other 0/1 flags (bids .. trick_winners) fill ``vec[flag_start:flag_end]``
    flag_end: int  # the fractions (team_tricks, run, scores, redeals) follow, in that order
    flag_meaning: tuple[tuple[str, int, int], ...]  # per flag index - flag_start: (field, a, b), see below


@lru_cache(maxsize=None)
def _decode_plan(size: int) -> _DecodePlan:
    n = players_for_size(size)
    layout = observation_layout(n)
    meaning: list[tuple[str, int, int]] = []
    for name in ("bids", "contract", "declarer", "trump", "dealer", "pass_direction", "led_suit", "voids",
                 "trick_winners"):
        for j in range(layout[name].stop - layout[name].start):
            if name == "bids":
                meaning.append((name, *divmod(j, BID_SLOTS)))  # (seat, slot)
            elif name == "voids":
                meaning.append((name, *divmod(j, 4)))  # (seat, suit)
            elif name == "trick_winners":
                meaning.append((name, *divmod(j, n)))  # (trick, seat)
            else:
                meaning.append((name, j, 0))  # one-hot: (index, unused)
    return _DecodePlan(
        players=n,
        tricks=RulesConfig(players=n).num_tricks,
        phase_end=layout["phase"].stop,
        card_bounds=tuple(range(layout["hand"].start, layout["trick"].stop + 1, NUM_CARDS)),
        card_of=(np.arange(layout["trick_winners"].stop) - layout["hand"].start) % NUM_CARDS,
        flag_start=layout["bids"].start,
        flag_end=layout["trick_winners"].stop,
        flag_meaning=tuple(meaning),
    )


def decode_observation(obs) -> ObservationView:
    """Readable structure from an observation vector (or the env's observation dict).

    Agents call this at every decision, so it finds every non-zero flag (phase
    through trick_winners, one contiguous stretch) with one scan, cuts the card
    blocks out of the sorted hits with a binary search per block boundary, reads
    the few other flags through a precomputed table, and converts the fractions
    to Python floats at once.
    """
    vec = np.asarray(obs["observation"] if isinstance(obs, dict) else obs)
    plan = _decode_plan(vec.shape[-1])
    n, tricks = plan.players, plan.tricks
    # np.flatnonzero, minus its overhead (nonzero is quicker on a boolean array; NaN still counts, -0.0 not).
    flags = (vec[:plan.flag_end] != 0).nonzero()[0]
    hits = flags.tolist()
    # The card blocks (hand, passed, received, discarded, played x n, trick x n) are adjacent:
    # one table lookup turns every hit into its card, and each block is a slice of that.
    cards = plan.card_of[flags].tolist()
    at = [bisect_left(hits, b) for b in plan.card_bounds]
    blocks = [cards[lo:hi] for lo, hi in pairwise(at)]
    # One-hot fields keep their first hit, as do the bids of each seat (the latest bid) and the
    # winners of each trick; hits come in index order, so trick numbers come in order.
    one: dict[str, int] = {}
    bid_slot: list[int | None] = [None] * n
    voids: list[set[int]] = [set() for _ in range(n)]
    winners: list[int] = []
    last_trick = -1
    meaning, flag_start = plan.flag_meaning, plan.flag_start
    for i in hits[at[-1]:]:
        name, a, b = meaning[i - flag_start]
        if name == "bids":
            if bid_slot[a] is None:
                bid_slot[a] = b
        elif name == "voids":
            voids[a].add(b)
        elif name == "trick_winners":
            if a != last_trick:
                winners.append(b)
                last_trick = a
        elif name not in one:
            one[name] = a
    # The fractions: team_tricks (2), run (3), scores (3), redeals (1), converted at once.
    team0, team1, run0, run1, run_len, score0, score1, target_frac, redeals = vec[plan.flag_end:].tolist()
    target = int(round(float(target_frac) * TARGET_SCALE))
    contract = one.get("contract")
    return ObservationView(
        players=n,
        phase=Phase(hits[0] if hits and hits[0] < plan.phase_end else None),
        hand=blocks[0], passed=blocks[1], received=blocks[2], discarded=blocks[3],
        played=blocks[4:4 + n],
        trick=[b[0] if b else None for b in blocks[4 + n:]],
        bids=[None if s is None else (PASSED if s == MAX_BID else s + 1) for s in bid_slot],
        contract=None if contract is None else contract + 1,
        declarer=one.get("declarer"),
        trump=one.get("trump"),
        dealer=one.get("dealer"),
        pass_direction=PassDirection(one.get("pass_direction")),
        led_suit=one.get("led_suit"),
        voids=voids,
        trick_winners=winners,
        team_tricks=(int(round(float(team0) * tricks)), int(round(float(team1) * tricks))),
        run=(0 if run0 else (1 if run1 else None), int(round(float(run_len) * tricks))),
        scores=(int(round(float(score0) * target)), int(round(float(score1) * target))),
        target=target,
        redeals=int(round(float(redeals) * REDEAL_SCALE)),
    )


__all__ = [
    "Layout", "ObservationView", "decode_observation", "encode_observation", "encode_state", "encode_row",
    "encode_state_row", "observation_offsets", "state_offsets",
    "observation_layout", "observation_size", "state_layout", "state_size", "observation_bounds", "cards_of",
]
