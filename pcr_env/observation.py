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

from .actions import MAX_BID, TRUMP_BASE
from .cards import NUM_CARDS, cards_of
from .config import RulesConfig
from .engine import NOT_YET, PASSED, GameState, PassDirection, Phase

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


def _unpack(masks: list[int]) -> np.ndarray:
    """Bitmasks -> ``[len(masks) * 52]`` float32 of 0/1."""
    bits = np.unpackbits(np.array(masks, dtype=np.uint64).view(np.uint8), bitorder="little")
    return bits.reshape(len(masks), 64)[:, :NUM_CARDS].ravel()


def encode_observation(state: GameState, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """Observation vector of ``seat`` (float32, ``observation_size(players)``)."""
    n = state.config.players
    layout = observation_layout(n)
    obs = np.zeros(layout.size, np.float32) if out is None else out
    if out is not None:
        obs.fill(0.0)
    _fill_observation(obs, layout, state, seat)
    return obs


def _fill_observation(obs: np.ndarray, layout: Layout, state: GameState, seat: int) -> None:
    config = state.config
    n, tricks = config.players, config.num_tricks
    off = _offsets(n)
    rel = [(seat + k) % n for k in range(n)]
    trick_masks = [0] * n
    for s, card in state.trick:
        trick_masks[(s - seat) % n] = 1 << card
    own_discards = state.discards if seat == state.declarer else 0
    masks = [state.hands[seat], state.passed[seat], state.received[seat], own_discards]
    masks += [state.played[s] for s in rel] + trick_masks
    start = off["hand"]
    obs[start:start + len(masks) * NUM_CARDS] = _unpack(masks)

    # One fancy assignment sets every one-hot entry: far cheaper than many scalar writes.
    ones = [off["phase"] + state.phase, off["dealer"] + (state.dealer - seat) % n,
            off["pass_direction"] + state.pass_direction]
    base = off["bids"]
    for k, s in enumerate(rel):
        bid = state.bids[s]
        if bid != NOT_YET:
            ones.append(base + k * BID_SLOTS + (MAX_BID if bid == PASSED else bid - 1))
    if state.high_bid:
        ones.append(off["contract"] + state.high_bid - 1)
        ones.append(off["declarer"] + (state.declarer - seat) % n)
    if state.trump >= 0:
        ones.append(off["trump"] + state.trump)
    if state.trick:
        ones.append(off["led_suit"] + state.trick[0][1] // 13)
    base = off["voids"]
    for k, s in enumerate(rel):
        v = state.voids[s]
        if v:
            ones.extend(base + 4 * k + suit for suit in range(4) if v >> suit & 1)
    base = off["trick_winners"]
    ones.extend(base + t * n + (w - seat) % n for t, w in enumerate(state.trick_winners))
    mine = seat % 2
    if state.run_length:
        ones.append(off["run"] + (state.run_team != mine))
    obs[ones] = 1.0
    base = off["team_tricks"]
    obs[base] = state.team_tricks[mine] / tricks
    obs[base + 1] = state.team_tricks[1 - mine] / tricks
    obs[off["run"] + 2] = state.run_length / tricks
    base = off["scores"]
    target = config.target_score
    obs[base] = state.scores[mine] / target
    obs[base + 1] = state.scores[1 - mine] / target
    obs[base + 2] = target / TARGET_SCALE
    # A game truncated by redeals (R4.4) ends with max_redeals + 1 of them; clip to stay in [0, 1].
    obs[off["redeals"]] = min(state.redeals, REDEAL_SCALE) / REDEAL_SCALE


@lru_cache(maxsize=None)
def _offsets(players: int) -> dict[str, int]:
    return {name: sl.start for name, sl in observation_layout(players).slices.items()}


def encode_state(state: GameState, seat: int = 0) -> np.ndarray:
    """Full-state vector from ``seat``'s perspective: its observation plus all hidden cards."""
    n = state.config.players
    layout = state_layout(n)
    vec = np.zeros(layout.size, np.float32)
    encode_observation(state, seat, vec[layout["observation"]])
    others = [(seat + k) % n for k in range(1, n)]
    masks = [state.hands[s] for s in others] + [state.passed[s] for s in others]
    masks += [state.received[s] for s in others] + [state.kitty, state.discards]
    start = layout["other_hands"].start
    vec[start:] = _unpack(masks)
    return vec


class ObservationTracker:
    """Every seat's observation kept up to date as the game advances.

    Re-encoding a whole observation costs several times a decision of the game,
    so the environment keeps one buffer per seat and patches all of them for
    each action. A new deal (first deal, redeal, next round) marks the buffers
    stale; a stale buffer is re-encoded with :func:`encode_observation` when
    next read. Tests check every buffer equals a fresh encoding after every
    action of random games in every variant.
    """

    def __init__(self, players: int):
        n = players
        self.players = n
        self.layout = observation_layout(n)
        off = self.off = _offsets(n)
        size = self.layout.size
        self.buffers = np.zeros((n, size), np.float32)
        self.flat = self.buffers.reshape(-1)
        self.stale = [True] * n
        rows = np.arange(n) * size

        def per_actor(name: str, stride: int) -> list[np.ndarray]:
            # For actor seat s: index of its relative seat's block in every observer's buffer.
            return [rows + off[name] + ((s - np.arange(n)) % n) * stride for s in range(n)]

        # [actor seat, card] -> that card's index in every observer's buffer (hot path: no arithmetic).
        cards = np.arange(NUM_CARDS)[:, None]
        self._played = np.stack([rows_ + cards for rows_ in per_actor("played", NUM_CARDS)])
        self._trick = np.stack([rows_ + cards for rows_ in per_actor("trick", NUM_CARDS)])
        self._voids = per_actor("voids", 4)
        self._bids = per_actor("bids", BID_SLOTS)
        self._declarer = per_actor("declarer", 1)
        self._winner = per_actor("trick_winners", 1)
        self._rows = rows
        self._team = np.arange(n) % 2

    def reset(self) -> None:
        self.stale = [True] * self.players

    def observation(self, state: GameState, seat: int) -> np.ndarray:
        """A fresh copy of ``seat``'s observation of ``state``."""
        if self.stale[seat]:
            encode_observation(state, seat, self.buffers[seat])
            self.stale[seat] = False
        return self.buffers[seat].copy()

    def update(self, before: Phase, led_before: int, seat: int, action: int, state: GameState) -> None:
        """Record that ``seat`` took ``action`` in phase ``before`` (led suit then: ``led_before``)."""
        phase = state.phase
        if before == Phase.PLAY:
            if phase != Phase.PLAY:
                return self.reset()  # the round is over: a new deal follows
            self._card_played(state, led_before, seat, action)
        elif before == Phase.PASS:
            self._set_card(seat, "hand", action, 0.0)
            self._set_card(seat, "passed", action, 1.0)
            if phase != Phase.PASS:
                self._exchange(state)
        elif before == Phase.BID:
            if phase not in (Phase.BID, Phase.TRUMP) or state.bids[seat] == NOT_YET:
                return self.reset()  # thrown in and dealt again, or truncated (R4.4)
            self._bid(state, seat)
            if phase == Phase.TRUMP:
                self._set_phase(phase)
                for card in cards_of(state.kitty):  # R9.3: the declarer takes the kitty
                    self._set_card(state.declarer, "hand", card, 1.0)
        elif before == Phase.TRUMP:
            self.buffers[:, self.off["trump"] + action - TRUMP_BASE] = 1.0
            self._set_phase(phase)
        elif before == Phase.DISCARD:
            self._set_card(seat, "hand", action, 0.0)
            self._set_card(seat, "discarded", action, 1.0)
            self._set_phase(phase)
        else:
            self.reset()

    def _set_card(self, seat: int, name: str, card: int, value: float) -> None:
        self.buffers[seat, self.off[name] + card] = value

    def _set_phase(self, phase: Phase) -> None:
        start = self.off["phase"]
        self.buffers[:, start:start + NUM_PHASES] = 0.0
        self.buffers[:, start + phase] = 1.0

    def _exchange(self, state: GameState) -> None:
        for s in range(self.players):
            for card in cards_of(state.received[s]):
                self._set_card(s, "hand", card, 1.0)
                self._set_card(s, "received", card, 1.0)
        self._set_phase(state.phase)

    def _bid(self, state: GameState, seat: int) -> None:
        flat, bid = self.flat, state.bids[seat]
        rows = self._bids[seat]
        for r in rows:
            flat[r:r + BID_SLOTS] = 0.0  # auction: only the latest bid is shown
        flat[rows + (MAX_BID if bid == PASSED else bid - 1)] = 1.0
        if bid != PASSED:
            start, n = self.off["contract"], self.players
            self.buffers[:, start:start + MAX_BID] = 0.0
            self.buffers[:, start + bid - 1] = 1.0
            start = self.off["declarer"]
            self.buffers[:, start:start + n] = 0.0
            flat[self._declarer[seat]] = 1.0

    def _card_played(self, state: GameState, led: int, seat: int, card: int) -> None:
        flat, bufs, off = self.flat, self.buffers, self.off
        flat[self._played[seat, card]] = 1.0
        bufs[seat, off["hand"] + card] = 0.0
        if led >= 0 and card // 13 != led:
            flat[self._voids[seat] + led] = 1.0
        if state.trick:  # the trick goes on
            flat[self._trick[seat, card]] = 1.0
            if led < 0:
                bufs[:, off["led_suit"] + card // 13] = 1.0
            return
        n, tricks = self.players, state.config.num_tricks
        bufs[:, off["trick"]:off["trick"] + n * NUM_CARDS] = 0.0
        bufs[:, off["led_suit"]:off["led_suit"] + 4] = 0.0
        winners = state.trick_winners
        flat[self._winner[winners[-1]] + (len(winners) - 1) * n] = 1.0
        t0, t1 = state.team_tricks[0] / tricks, state.team_tricks[1] / tricks
        run = state.run_length / tricks
        by_team = np.array([
            [t0, t1, float(state.run_team == 0), float(state.run_team == 1), run],
            [t1, t0, float(state.run_team == 1), float(state.run_team == 0), run],
        ], np.float32)
        bufs[:, off["team_tricks"]:off["run"] + 3] = by_team[self._team]


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
    "Layout", "ObservationView", "decode_observation", "encode_observation", "encode_state",
    "observation_layout", "observation_size", "state_layout", "state_size", "observation_bounds", "cards_of",
]
