"""Text rendering of a game (spectator view: every hand is shown)."""

from __future__ import annotations

from .actions import MAX_BID
from .cards import SUITS, card_str, hand_str
from .engine import NOT_YET, PASSED, GameState, Phase

_DIRECTION = {0: "partner", 1: "left", 2: "right", 3: "none"}


def bid_str(bid: int) -> str:
    return "-" if bid == NOT_YET else "pass" if bid == PASSED else str(bid)


def render_text(state: GameState) -> str:
    n = state.config.players
    lines = [
        f"Round {state.round_number}  dealer {state.dealer}  pass {_DIRECTION[int(state.pass_direction)]}  "
        f"phase {state.phase.name}  scores {state.scores[0]}-{state.scores[1]} (target {state.config.target_score})"
    ]
    if state.high_bid:
        trump = SUITS[state.trump] if state.trump >= 0 else "?"
        lines.append(
            f"Contract {state.high_bid} by seat {state.declarer} (team {state.declarer % 2}), trump {trump}; "
            f"tricks {state.team_tricks[0]}-{state.team_tricks[1]}, run team {state.run_team} x{state.run_length}"
        )
    for seat in range(n):
        mark = ">" if seat == state.current else " "
        lines.append(f"{mark} seat {seat} (team {seat % 2}) bid {bid_str(state.bids[seat]):>4}  {hand_str(state.hands[seat])}")
    if state.trick:
        lines.append("Trick: " + "  ".join(f"{s}:{card_str(c)}" for s, c in state.trick))
    if state.phase == Phase.GAME_OVER:
        lines.append("Game over: " + ("truncated" if state.truncated else f"team {state.winner} wins"))
    assert MAX_BID  # bids above are 1..MAX_BID
    return "\n".join(lines)


# ----------------------------------------------------------------- one seat's view
# What one seat may see, drawn from its observation only (RULES.md, "What no player sees"):
# the terminal player (python -m agents.play) and PassCutRunEnv.render("ansi") print it.
from collections.abc import Mapping, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from .actions import BID_BASE, PASS_BID, TRUMP_BASE  # noqa: E402
from .cards import NUM_CARDS, RANKS, suit_of  # noqa: E402
from .engine import PassDirection  # noqa: E402
from .observation import decode_observation  # noqa: E402

SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
_VIEW_DIRECTION = {PassDirection.PARTNER: "to your partner", PassDirection.LEFT: "to the left",
                   PassDirection.RIGHT: "to the right", PassDirection.NONE: "no passing"}


def seat_names(seat: int, players: int) -> list[str]:
    """Names of the absolute seats as ``seat`` sees them: ``You``, ``Left (seat 1)``, ``Partner (seat 2)`` ..."""
    if players == 4:
        rel = ["You", "Left", "Partner", "Right"]
    else:  # R9.3: teammates every other seat
        rel = ["You", "Left", "Left partner", "Across", "Right partner", "Right"]
    return [rel[(s - seat) % players] + ("" if s == seat else f" (seat {s})") for s in range(players)]


def direction_text(direction: PassDirection, players: int) -> str:
    """Where this round's passes go, from the passer's chair (``to the left`` ...)."""
    if direction == PassDirection.PARTNER and players == 6:
        return "to your left partner"  # R9.3: the teammate two seats to the left
    return _VIEW_DIRECTION[direction]


def hand_text(cards: Sequence[int]) -> str:
    """Cards grouped by suit, strongest first: ``S: A K 4   H: 10 7 ...``."""
    parts = []
    for s in reversed(range(4)):
        ranks = [RANKS[c % 13] for c in sorted((c for c in cards if suit_of(c) == s), reverse=True)]
        parts.append(f"{SUITS[s]}: {' '.join(ranks) if ranks else '-'}")
    return "   ".join(parts)


def cards_text(cards: Sequence[int]) -> str:
    """Cards in the order given (``10H QS``), or ``-`` for none."""
    return " ".join(card_str(c) for c in cards) if cards else "-"


def move_word(action: int) -> str:
    """What a person types for ``action``: a card (``10H``), a bid (``8``), ``pass`` or a suit (``S``)."""
    if action < NUM_CARDS:
        return card_str(action)
    if action == PASS_BID:
        return "pass"
    if action < PASS_BID:
        return str(action - BID_BASE + 1)
    return SUITS[action - TRUMP_BASE]


def legal_moves(obs: Any) -> list[int]:
    """Legal action ids of an observation dict (``[]`` for a bare vector or an empty mask)."""
    if not isinstance(obs, Mapping) or "action_mask" not in obs:
        return []
    return [int(a) for a in np.flatnonzero(obs["action_mask"])]


def render_view(obs: Mapping[str, np.ndarray] | np.ndarray, seat: int) -> str:
    """The table as ``seat`` sees it (its observation only), as readable text.

    ``obs`` is the env's observation dict (with ``action_mask``: legal moves are
    listed) or the bare observation vector.
    """
    view = decode_observation(obs)
    n = view.players
    names = seat_names(seat, n)
    rel = [names[(seat + k) % n] for k in range(n)]  # relative seat k -> name
    us, them = view.scores
    lines = [
        f"Phase {view.phase.name.lower()}  ·  dealer {rel[view.dealer]}  ·  passing {direction_text(view.pass_direction, n)}  "
        f"·  score us {us}, them {them} (target {view.target})"
        + (f"  ·  redeal {view.redeals}" if view.redeals else "")
    ]
    bids = []
    for k in range(n):
        b = view.bids[k]
        bids.append(f"{rel[k]} {'-' if b is None else 'pass' if b == 0 else b}")
    lines.append("Bids: " + "  ·  ".join(bids))
    if view.contract is not None and view.phase not in (Phase.PASS, Phase.BID):
        trump = "?" if view.trump is None else f"{SUITS[view.trump]} ({SUIT_NAMES[SUITS[view.trump]]})"
        side = "us" if view.declarer % 2 == 0 else "them"
        run_team, run_len = view.run
        run = "-" if run_team is None else f"{'us' if run_team == 0 else 'them'} x{run_len}"
        lines.append(
            f"Contract {view.contract} by {rel[view.declarer]} ({side}), trump {trump}  ·  "
            f"tricks us {view.team_tricks[0]}, them {view.team_tricks[1]}  ·  run {run}"
        )
    elif view.contract is not None:
        lines.append(f"Highest bid {view.contract} by {rel[view.declarer]}")
    if view.phase == Phase.PLAY:
        on = [(k, view.trick[k]) for k in range(n) if view.trick[k] is not None]
        if on:
            leader = view.trick_leader
            order = sorted(on, key=lambda kc: (kc[0] - leader) % n)
            led = SUITS[view.led_suit] if view.led_suit is not None else "?"
            lines.append("Trick: " + "  ".join(f"{rel[k]} {card_str(c)}" for k, c in order) + f"   (led {led})")
        else:
            lines.append(f"Trick {len(view.trick_winners) + 1}: nothing played yet")
    if view.passed:
        lines.append(f"Your pass: {cards_text(view.passed)}"
                     + (f"   received: {cards_text(view.received)}" if view.received else ""))
    if view.discarded:
        lines.append(f"You discarded: {cards_text(view.discarded)}")
    lines.append(f"Your hand ({len(view.hand)}): {hand_text(view.hand)}")
    legal = legal_moves(obs)
    if legal:
        lines.append("Legal: " + " ".join(move_word(a) for a in legal))
    return "\n".join(lines)
