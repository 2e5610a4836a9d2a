"""The terminal player (python -m agents.play): readable table, input parsing, refusals with hints.

A scripted "person" drives the loop: it reads the printed table (the ``Legal:``
and ``Your hand`` lines), types wrong things first at each kind of prompt, checks
the hint it gets back, then types a legal move. The command-line entry point is
run as a subprocess with the recorded keystrokes and must replay the same game.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.play import IllegalInput, main, parse_move, play_game
from pcr_env.actions import PASS_BID, TRUMP_BASE, bid_action, trump_action
from pcr_env.cards import parse_card
from pcr_env.pass_cut_run_v0 import raw_env
from pcr_env.render import render_view

ROOT = Path(__file__).resolve().parents[1]


def mask_of(actions) -> np.ndarray:
    mask = np.zeros(70, np.int8)
    mask[list(actions)] = 1
    return mask


class ScriptedPerson:
    """Types at the prompts like a person who first makes every kind of mistake once.

    ``mistakes`` maps a prompt kind to a function ``(state) -> (text, expected hint)``;
    after each mistake the next output must contain the hint. Then it plays the last
    legal move shown on the table (so it bids high and becomes declarer, to reach trump).
    """

    def __init__(self, mistakes: dict | None = None):
        self.lines: list[str] = []
        self.typed: list[str] = []
        self.mistakes = dict(mistakes or {})
        self.pending_hint: str | None = None
        self.hints_seen: list[str] = []

    def output(self, text: str) -> None:
        self.lines.extend(text.split("\n"))

    def _last(self, prefix: str) -> str:
        return next(line for line in reversed(self.lines) if line.startswith(prefix))

    def input(self, prompt: str) -> str:
        if self.pending_hint is not None:
            refusal = self._last("Not allowed: ")
            assert self.pending_hint in refusal, (self.pending_hint, refusal)
            self.hints_seen.append(self.pending_hint)
            self.pending_hint = None
        kind = prompt.split()[0].lower()  # pick / your / name / discard / play
        legal = self._last("Legal: ").split()[1:]
        hand = self._last("Your hand")
        maker = self.mistakes.pop(kind, None)
        if maker is not None:
            text, hint = maker(legal, hand, self.lines)
            if text is not None:
                self.pending_hint = hint
                self.typed.append(text)
                return text
        move = legal[-2] if legal[-1] == "pass" and len(legal) > 1 else legal[-1]  # bid the most
        self.typed.append(move)
        return move


def _not_held(legal, hand, lines):
    held = set(legal)
    for name in ("AS", "KS", "AH", "AD", "AC", "2C", "2D"):
        if name not in held and name[:-1] not in _ranks_of(hand, name[-1]):
            return name, "you do not hold"
    return None, None


def _ranks_of(hand_line: str, suit: str) -> list[str]:
    part = hand_line.split(f"{suit}: ")[1]
    return part.split("   ")[0].split()


def _off_suit(legal, hand, lines):
    """A card held but not legal: the table must be asking to follow suit (R6.2)."""
    held = []
    for suit in "SHDC":
        held += [r + suit for r in _ranks_of(hand, suit) if r != "-"]
    off = [c for c in held if c not in legal]
    if not off:
        return None, None
    return off[0], "you must follow"


MISTAKES = {
    "pick": lambda legal, hand, lines: ("ZZ", "is not a card"),
    "your": lambda legal, hand, lines: ("3", "a bid must be at least"),
    "name": lambda legal, hand, lines: ("purple", "is not a suit"),
}


def test_a_scripted_person_plays_a_round_and_every_mistake_is_refused_with_a_hint():
    person = ScriptedPerson(MISTAKES)
    result = play_game(0, "random", episode="round", seed=4, input_fn=person.input, output_fn=person.output)
    assert not result["quit"] and len(result["rounds"]) == 1
    assert set(person.hints_seen) == {"is not a card", "a bid must be at least", "is not a suit"}
    text = "\n".join(person.lines)
    # The table is readable: phase, scores, bids, contract, trick, hand and the legal moves.
    for fragment in ("Phase pass", "score us 0, them 0 (target 100)", "Bids: You", "Contract 13 by You",
                     "Your hand (13)", "Trick: ", "Legal: ", "won trick 1", "Round 1: You (us) bid 13"):
        assert fragment in text, fragment
    # Other players' passes stay secret (R3.1): announced without the card.
    assert "Left (seat 1) passes 3 cards face down." in text
    assert not any(line.startswith("Left (seat 1) pick") for line in person.lines)
    # The final summary gives the round's numbers from our side.
    us, them = result["scores"]
    r = result["rounds"][0]
    assert (us, them) == (r["total_scores"][0], r["total_scores"][1])
    assert f"Round over: us {us}, them {them}." == person.lines[-1]


def test_following_suit_and_cards_not_held_are_refused():
    # Keep making the "off suit" mistake at every play prompt until one applies (it needs a led suit).
    class Person(ScriptedPerson):
        def input(self, prompt):
            if prompt.startswith("Play") and self.pending_hint is None and not any("you must follow" in h for h in self.hints_seen):
                self.mistakes["play"] = _off_suit
            if prompt.startswith("Pick") and "you do not hold" not in self.hints_seen:
                self.mistakes["pick"] = _not_held
            return super().input(prompt)

    person = Person()
    play_game(1, ["heuristic", "random", "random"], episode="round", seed=2, input_fn=person.input, output_fn=person.output)
    assert "you must follow" in person.hints_seen and "you do not hold" in person.hints_seen
    follow = next(line for line in person.lines if "you must follow" in line)
    assert "(R6.2)" in follow and "you can play" in follow


def test_help_table_and_quit():
    typed = iter(["help", "table", "quit"])
    lines: list[str] = []
    result = play_game(2, "heuristic", seed=0, input_fn=lambda prompt: next(typed), output_fn=lines.append)
    assert result["quit"] and "You left the game." in lines
    assert any(line.startswith("legal now: ") for line in lines)
    assert sum(line.startswith("Phase ") for line in "\n".join(lines).split("\n")) == 2  # drawn, then redrawn by 'table'


def test_end_of_input_leaves_cleanly():
    def eof(prompt):
        raise EOFError

    assert play_game(0, "random", seed=1, input_fn=eof, output_fn=lambda s: None)["quit"]


def test_six_players_full_game_to_a_low_target():
    person = ScriptedPerson()
    result = play_game(3, "heuristic", rules={"players": 6, "target_score": 15}, seed=3,
                       input_fn=person.input, output_fn=person.output)
    assert not result["quit"] and result["rounds"]
    text = "\n".join(person.lines)
    assert "Left partner (seat 5)" in text and "Game over: you " in text
    us, them = result["scores"]
    assert max(us, them) >= 15 or result["truncated"]  # R8.4


@pytest.mark.parametrize("text,legal,expected", [
    ("10h", [parse_card("10H"), parse_card("2C")], parse_card("10H")),
    ("TH", [parse_card("10H")], parse_card("10H")),
    ("play qs", [parse_card("QS")], parse_card("QS")),
    ("8", [bid_action(8), bid_action(9), PASS_BID], bid_action(8)),
    ("bid 9", [bid_action(8), bid_action(9), PASS_BID], bid_action(9)),
    ("b9", [bid_action(9), PASS_BID], bid_action(9)),
    ("pass", [bid_action(9), PASS_BID], PASS_BID),
    ("no bid", [PASS_BID], PASS_BID),
    ("spades", list(range(TRUMP_BASE, TRUMP_BASE + 4)), trump_action("S")),
    ("trump h", list(range(TRUMP_BASE, TRUMP_BASE + 4)), trump_action("H")),
    ("d", list(range(TRUMP_BASE, TRUMP_BASE + 4)), trump_action("D")),
])
def test_parse_move_accepts_the_usual_ways_of_saying_a_move(text, legal, expected):
    assert parse_move(text, mask_of(legal)) == expected


@pytest.mark.parametrize("text,legal,hint", [
    ("", [parse_card("2C")], "type a move: legal now: 2C"),
    ("11X", [parse_card("2C")], "'11x' is not a card"),
    ("bid 8", [parse_card("2C")], "type one card"),
    ("14", [bid_action(8), PASS_BID], "bid 14 is not allowed: bid 8-8 or pass"),
    ("7", [bid_action(8), PASS_BID], "a bid must be at least 8"),
    ("QS", [bid_action(8), PASS_BID], "'qs' is not a bid"),
    ("x", list(range(TRUMP_BASE, TRUMP_BASE + 4)), "'x' is not a suit"),
    ("2C", [], "it is not your turn"),
])
def test_parse_move_refuses_with_a_hint(text, legal, hint):
    with pytest.raises(IllegalInput, match=hint.replace("(", r"\(").replace(")", r"\)")):
        parse_move(text, mask_of(legal))


def test_the_table_shows_only_what_the_seat_may_see():
    env = raw_env(first_dealer=0, episode="round")
    env.reset(seed=5)
    seat = env.game.current
    text = render_view(env.observe(env.agent_selection), seat)
    own = env.game.hands[seat]
    from pcr_env.cards import card_str, cards_of

    hidden = [card_str(c) for s in range(4) if s != seat for c in cards_of(env.game.hands[s])]
    hand_line = next(line for line in text.split("\n") if line.startswith("Your hand"))
    assert hand_line.startswith("Your hand (13)") and len(cards_of(own)) == 13
    legal_line = next(line for line in text.split("\n") if line.startswith("Legal: "))
    assert not set(legal_line.split()[1:]) & set(hidden)


def test_command_line_replays_a_scripted_game(tmp_path):
    person = ScriptedPerson()
    expected = play_game(1, "random", episode="round", seed=11, input_fn=person.input, output_fn=person.output)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "agents.play", "--seat", "1", "--agents", "random", "--episode", "round", "--seed", "11"],
        input="\n".join(person.typed) + "\n", capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    us, them = expected["scores"]
    assert proc.stdout.rstrip().endswith(f"Round over: us {us}, them {them}.")
    # Quitting and bad arguments.
    proc = subprocess.run([sys.executable, "-m", "agents.play", "--agents", "random"], input="quit\n",
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 1 and "You left the game." in proc.stdout
    assert main(["--agents", "random", "random", "--seed", "0"]) == 2  # two specs for three seats


def test_bad_agent_spec_is_reported(capsys):
    assert main(["--agents", "wizard"]) == 2
    assert "unknown agent spec 'wizard'" in capsys.readouterr().err
