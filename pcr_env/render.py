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
