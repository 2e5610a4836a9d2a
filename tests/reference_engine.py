"""Reference implementation of the rules and the observation encoder, for the tests only (pure Python).

This is the engine and encoder of pcr as they were before the rules were written
once (as compiled functions over a game row, ``pcr_env.engine``): a second,
independent statement of RULES.md R1-R9 and of the observation layout, kept
verbatim as the tests' oracle (the OpenSpiel ``test_consistent`` precedent).
It shares only the data types with ``pcr_env``: ``GameState``, ``RoundResult``,
``Phase``, ``PassDirection`` and the layout (``observation_layout``). Nothing in
``pcr_env`` imports it. ``ref_*`` names in the test files are specifications too.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from pcr_env import actions as A
from pcr_env.actions import MAX_BID
from pcr_env.cards import FULL_DECK, NUM_CARDS, SUIT_MASKS, SUITS, card_bits, card_str, cards_of, mask_of, suit_of
from pcr_env.config import RulesConfig
from pcr_env.engine import NOT_YET, PASS_SIZE, PASSED, GameState, PassDirection, Phase, RoundResult
from pcr_env.observation import BID_SLOTS, REDEAL_SCALE, TARGET_SCALE, Layout, observation_layout, state_layout

# Seat offset of the receiver for each direction (R3.2, R9.3: partner is seat+2 at six too).
PASS_OFFSET = {PassDirection.PARTNER: 2, PassDirection.LEFT: 1, PassDirection.RIGHT: -1}



def pass_direction(config: RulesConfig, round_number: int) -> PassDirection:
    """R3.2 / R3.4: partner, left, right, none, repeating every four rounds."""
    if not config.passing:
        return PassDirection.NONE
    return PassDirection((round_number - 1) % 4)


def team_of(seat: int) -> int:
    """R1.2: partners sit every other seat."""
    return seat % 2


def run_bonus(length: int, double: bool = False) -> int:
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


def runs(trick_teams: Sequence[int]) -> list[tuple[int, int]]:
    """R7.1: maximal stretches of tricks won by one team, as ``(team, length)``."""
    out: list[tuple[int, int]] = []
    for team in trick_teams:
        if out and out[-1][0] == team:
            out[-1] = (team, out[-1][1] + 1)
        else:
            out.append((team, 1))
    return out


def trick_winner(cards_in_order: Sequence[tuple[int, int]], trump: int) -> int:
    """R6.4: seat that wins a trick given ``(seat, card)`` in play order."""
    led = suit_of(cards_in_order[0][1])
    best_seat, best_card = cards_in_order[0]
    for seat, card in cards_in_order[1:]:
        s, bs = suit_of(card), suit_of(best_card)
        if (s == trump and (bs != trump or card > best_card)) or (s == led == bs and card > best_card):
            best_seat, best_card = seat, card
    return best_seat




def score_round(config: RulesConfig, declarer: int, bid: int, trick_winners: Sequence[int]) -> tuple:
    """R7-R8.3 for one round: returns ``(tricks, run_bonus, scores, made, winner)`` per team."""
    teams = [team_of(s) for s in trick_winners]
    tricks = [teams.count(0), teams.count(1)]
    bonus = [0, 0]
    for team, length in runs(teams):
        bonus[team] += run_bonus(length, config.double_run_bonus)
    bidding = team_of(declarer)
    made = tricks[bidding] >= bid
    scores = [tricks[t] + bonus[t] for t in (0, 1)]
    if not made:
        scores[bidding] = -bid
    winner = None if tricks[0] == tricks[1] else int(tricks[1] > tricks[0])
    return tuple(tricks), tuple(bonus), tuple(scores), made, winner




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
    n = config.players
    if dealer is None:
        dealer = int(rng.integers(n)) if config.first_dealer == "random" else int(config.first_dealer)
    if not (isinstance(dealer, (int, np.integer)) and 0 <= dealer < n):
        raise ValueError(f"dealer {dealer!r} is not a seat: allowed 0..{n - 1}")
    if not (isinstance(round_number, (int, np.integer)) and round_number >= 1):
        raise ValueError(f"round {round_number!r} is not a round number: allowed an integer >= 1")
    state = GameState(
        config=config, round_number=int(round_number), dealer=int(dealer), redeals=0, phase=Phase.PASS,
        current=-1, hands=[0] * n, kitty=0, passed=[0] * n, received=[0] * n, pass_done=0,
        bids=[NOT_YET] * n, out=[False] * n, high_bid=0, declarer=-1, trump=-1, discards=0, trick=[],
        played=[0] * n, voids=[0] * n, trick_winners=[], team_tricks=[0, 0], scores=list(scores),
    )
    if hands is None and kitty is not None:
        raise ValueError("kitty was given without hands: give both or neither")
    _deal(state, rng, validate_deal(config, hands, kitty) if hands is not None else None)
    return state


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


def _deal(state: GameState, rng: np.random.Generator, deal: tuple[list[int], int] | None = None) -> None:
    config, n = state.config, state.config.players
    if deal is None:
        order = rng.permutation(NUM_CARDS)
        size = config.hand_size
        # R2.2: dealt one at a time clockwise from the dealer's left.
        hands = [0] * n
        for i in range(n * size):
            hands[(state.dealer + 1 + i) % n] |= 1 << int(order[i])
        deal = hands, mask_of(int(c) for c in order[n * size:])
    state.hands, state.kitty = list(deal[0]), deal[1]
    state.passed, state.received, state.pass_done = [0] * n, [0] * n, 0
    state.bids, state.out, state.high_bid, state.declarer = [NOT_YET] * n, [False] * n, 0, -1
    state.trump, state.discards, state.trick = -1, 0, []
    state.played, state.voids, state.trick_winners, state.team_tricks = [0] * n, [0] * n, [], [0, 0]
    state.run_team, state.run_length = -1, 0
    state.pass_direction = pass_direction(config, state.round_number)
    state.current = (state.dealer + 1) % n
    state.phase = Phase.BID if state.pass_direction == PassDirection.NONE else Phase.PASS


def start_next_round(state: GameState, rng: np.random.Generator) -> None:
    """R2.1: after a scored round the deal passes to the left."""
    if state.phase != Phase.ROUND_END:
        raise ValueError(f"start_next_round needs phase ROUND_END, not {state.phase.name}")
    state.round_number += 1
    state.dealer = (state.dealer + 1) % state.n_players
    state.redeals = 0
    _deal(state, rng)


def legal_card_mask(state: GameState) -> int:
    """Bitmask of the cards the player to act may pass, discard or play."""
    seat = state.current
    hand = state.hands[seat]
    if state.phase == Phase.PLAY and state.trick:
        follow = hand & SUIT_MASKS[suit_of(state.trick[0][1])]
        return follow or hand  # R6.2
    if state.phase in (Phase.PASS, Phase.DISCARD, Phase.PLAY):
        return hand
    return 0


def legal_actions(state: GameState) -> list[int]:
    """Sorted action ids the player to act may take (empty when nobody acts)."""
    phase = state.phase
    if phase in (Phase.PASS, Phase.DISCARD, Phase.PLAY):
        return cards_of(legal_card_mask(state))
    if phase == Phase.BID:
        lowest_bid = max(state.config.min_bid_value, state.high_bid + 1)
        return [A.bid_action(k) for k in range(lowest_bid, state.config.num_tricks + 1)] + [A.PASS_BID]
    if phase == Phase.TRUMP:
        return [A.TRUMP_BASE + s for s in range(len(SUITS))]
    return []


def legal_mask(state: GameState) -> np.ndarray:
    """``[NUM_ACTIONS]`` int8 mask of :func:`legal_actions` (all zeros when nobody acts)."""
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    phase = state.phase
    if phase == Phase.BID:
        mask[legal_actions(state)] = 1
    elif phase == Phase.TRUMP:
        mask[A.TRUMP_BASE:] = 1
    elif phase < Phase.ROUND_END:
        mask[:NUM_CARDS] = card_bits(legal_card_mask(state))
    return mask


def is_legal(state: GameState, action: int) -> bool:
    phase = state.phase
    if phase in (Phase.PASS, Phase.DISCARD, Phase.PLAY):
        return 0 <= action < NUM_CARDS and bool(legal_card_mask(state) >> action & 1)
    if phase == Phase.BID:
        if action == A.PASS_BID:
            return True
        return A.is_bid(action) and max(state.config.min_bid_value, state.high_bid + 1) <= A.bid_value(action) <= state.config.num_tricks
    if phase == Phase.TRUMP:
        return A.is_trump(action)
    return False


def apply_action(state: GameState, action: int, rng: np.random.Generator, *, validate: bool = True) -> RoundResult | None:
    """Apply a legal ``action`` of ``state.current`` in place.

    Returns the round's :class:`RoundResult` when this action completed a
    round, else ``None``. ``rng`` is used only if the action causes a redeal.
    Raises ``ValueError`` for an illegal action (unless the caller has already
    checked it and passes ``validate=False``).
    """
    action = int(action)
    if validate and not is_legal(state, action):
        raise ValueError(
            f"illegal action {action} ({_describe(action)}) for seat {state.current} in phase "
            f"{state.phase.name}: legal actions are {legal_actions(state)}"
        )
    phase = state.phase
    if phase == Phase.PLAY:
        return _play(state, action)
    if phase == Phase.PASS:
        _pick_pass(state, action)
    elif phase == Phase.BID:
        _bid(state, action, rng)
    elif phase == Phase.TRUMP:
        _name_trump(state, A.trump_suit(action))
    else:
        _discard(state, action)
    return None


def _describe(action: int) -> str:
    try:
        return A.describe_action(action)
    except ValueError:
        return "out of range"


def _pick_pass(state: GameState, card: int) -> None:
    """R3.1: picks are private until every seat has chosen; then all swap at once."""
    seat, n = state.current, state.n_players
    bit = 1 << card
    state.hands[seat] ^= bit
    state.passed[seat] |= bit
    if state.passed[seat].bit_count() < PASS_SIZE:
        return
    state.pass_done += 1
    state.current = (seat + 1) % n
    if state.pass_done < n:
        return
    offset = PASS_OFFSET[state.pass_direction]
    for giver in range(n):
        state.received[(giver + offset) % n] = state.passed[giver]
    for s in range(n):
        state.hands[s] |= state.received[s]
    state.phase = Phase.BID
    state.current = (state.dealer + 1) % n


def _bid(state: GameState, action: int, rng: np.random.Generator) -> None:
    """R4.1-R4.5."""
    seat, n, config = state.current, state.n_players, state.config
    if action == A.PASS_BID:
        state.bids[seat] = PASSED
        state.out[seat] = True
    else:
        state.high_bid = state.bids[seat] = A.bid_value(action)
        state.declarer = seat
    if state.high_bid == config.num_tricks:
        # Nobody can outbid the maximum: bidding ends at once (a decision of ours for "single": docs/rules-decisions.md).
        return _end_bidding(state, rng)
    if config.bidding == "single":
        if NOT_YET not in state.bids:
            return _end_bidding(state, rng)
        state.current = (seat + 1) % n
        return None
    still_in = [s for s in range(n) if not state.out[s]]
    if not still_in or still_in == [state.declarer]:
        return _end_bidding(state, rng)
    nxt = (seat + 1) % n
    while state.out[nxt]:
        nxt = (nxt + 1) % n
    state.current = nxt
    return None


def _end_bidding(state: GameState, rng: np.random.Generator) -> None:
    if state.high_bid == 0:
        # R4.4: thrown in; the same dealer deals again for the same round.
        state.redeals += 1
        if state.redeals > state.config.max_redeals:
            state.truncated = True
            state.phase, state.current = Phase.GAME_OVER, -1
            return
        _deal(state, rng)
        return
    state.phase, state.current = Phase.TRUMP, state.declarer
    # R9.3: the declarer takes the kitty before naming trump.
    state.hands[state.declarer] |= state.kitty


def _name_trump(state: GameState, suit: int) -> None:
    state.trump = suit
    if state.config.kitty_size:
        state.phase = Phase.DISCARD
    else:
        state.phase = Phase.PLAY  # R6.1: the declarer leads


def _discard(state: GameState, card: int) -> None:
    bit = 1 << card
    state.hands[state.current] ^= bit
    state.discards |= bit
    if state.discards.bit_count() == state.config.kitty_size:
        state.phase = Phase.PLAY


def _play(state: GameState, card: int) -> RoundResult | None:
    seat, n = state.current, state.n_players
    bit = 1 << card
    if state.trick:
        led = suit_of(state.trick[0][1])
        if suit_of(card) != led:
            state.voids[seat] |= 1 << led  # public: failed to follow (R6.2)
    state.hands[seat] ^= bit
    state.played[seat] |= bit
    state.trick.append((seat, card))
    if len(state.trick) < n:
        state.current = (seat + 1) % n
        return None
    winner = trick_winner(state.trick, state.trump)
    state.trick_winners.append(winner)
    team = team_of(winner)
    state.team_tricks[team] += 1
    if team == state.run_team:
        state.run_length += 1
    else:
        state.run_team, state.run_length = team, 1
    state.trick = []
    state.current = winner  # R6.1
    if len(state.trick_winners) < state.config.num_tricks:
        return None
    return _score(state)


def _score(state: GameState) -> RoundResult:
    config = state.config
    tricks, bonus, scores, made, winner = score_round(config, state.declarer, state.high_bid, state.trick_winners)
    for t in (0, 1):
        state.scores[t] += scores[t]
    state.rounds_played += 1
    result = RoundResult(
        round_number=state.round_number, dealer=state.dealer, declarer=state.declarer, bid=state.high_bid,
        trump=state.trump, tricks=tricks, run_bonus=bonus, scores=scores, made=made,
        trick_winners=tuple(state.trick_winners), total_scores=tuple(state.scores), winner=winner,
    )
    state.current = -1
    state.phase = Phase.ROUND_END
    # R8.4: after a round in which a team reaches the target, the higher total wins; ties play on.
    if max(state.scores) >= config.target_score and state.scores[0] != state.scores[1]:
        state.winner = int(state.scores[1] > state.scores[0])
        state.phase = Phase.GAME_OVER
    elif state.rounds_played >= config.max_rounds:
        state.truncated = True
        state.phase = Phase.GAME_OVER
    return result


# ------------------------------------------------------------------ the observation encoder

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
