"""Play Pass Cut Run in a terminal against any agents.

    python -m agents.play --seat 0 --agents heuristic          # three heuristic players
    python -m agents.play --agents random heuristic ppo:pretrained --episode round --seed 7
    python -m agents.play --players 6 --no-passing --agents heuristic
    python -m agents.play --agents heuristic --replays runs/my_games   # keep a replay of the game

You see exactly what your seat may see (RULES.md, "What no player sees"): the
table is drawn from your observation by :func:`pcr_env.render.render_view`,
never from the engine's hidden state. Other players' passes and the declarer's
discards are announced without the cards. Type a card (``10H``, ``qs``, ``TD``),
a bid (``8``, ``bid 8``, ``pass``) or a trump suit (``S``, ``spades``); ``help``
lists what is legal now and ``quit`` leaves. Anything illegal is refused with a
hint (e.g. "you must follow H").

The same loop is importable: :func:`play_game` takes ``input_fn``/``output_fn``
so a script (or a test) can drive it. The other seats are agent specs or agent
objects, built and seeded by :func:`agents.registry.make_agents` (seat ``s`` of a game
with ``--seed S`` is seeded ``derive_seed(S, s)``); ``--replays DIR`` keeps each game
as a replay record (:mod:`pcr_env.replay`).

>>> from agents.play import parse_move
>>> import numpy as np
>>> mask = np.zeros(70, np.int8); mask[[52 + 7, 65]] = 1  # bid 8 or no bid
>>> parse_move("bid 8", mask), parse_move("pass", mask)
(59, 65)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import make_agents, spec_label
from pcr_env.actions import BID_BASE, MAX_BID, NUM_ACTIONS, PASS_BID, TRUMP_BASE, bid_action, describe_action
from pcr_env.cards import NUM_CARDS, SUITS, card_str, parse_card
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase
from pcr_env.observation import ObservationView, decode_observation
from pcr_env.pass_cut_run_v0 import raw_env
from pcr_env.render import SUIT_NAMES, cards_text, hand_text, legal_moves, move_word, render_view, seat_names
from pcr_env.replay import VIEWER_FILE, GameRecorder, load_replays, write_viewer
from pcr_env.rules_flags import add_rules_arguments, rules_from_args
from pcr_env.seating import per_seat


class IllegalInput(ValueError):
    """Typed input that is not a legal move now; the message is the hint shown to the player."""


class Quit(Exception):
    """The player asked to leave (or input ended)."""


# ----------------------------------------------------------------- input
def parse_move(text: str, mask: np.ndarray, view: ObservationView | None = None) -> int:
    """The action id typed as ``text``; raises :class:`IllegalInput` with a hint if it is not legal now."""
    mask = np.asarray(mask)
    legal = [int(a) for a in np.flatnonzero(mask)]
    if not legal:
        raise IllegalInput("it is not your turn")
    words = text.strip().lower().replace(",", " ").split()
    if not words:
        raise IllegalInput(f"type a move: {_legal_hint(legal)}")
    if legal[0] < NUM_CARDS:
        return _parse_card_move(words, mask, legal, view)
    if legal[0] >= TRUMP_BASE:
        return _parse_trump(words)
    return _parse_bid(words, legal)


def _legal_hint(legal: list[int]) -> str:
    return "legal now: " + " ".join(move_word(a) for a in legal)


def _parse_card_move(words: list[str], mask: np.ndarray, legal: list[int], view: ObservationView | None) -> int:
    verb = {Phase.PASS: "pick a card to pass", Phase.DISCARD: "discard a card"}.get(
        view.phase if view is not None else Phase.PLAY, "play a card")
    if words[0] in ("play", "pass", "discard") and len(words) == 2:
        words = words[1:]
    if len(words) != 1 or words[0] in ("bid", "b", "trump") or words[0].isdigit():
        raise IllegalInput(f"now you {verb}: type one card, e.g. {card_str(legal[0])} ({_legal_hint(legal)})")
    token = words[0]
    try:
        card = parse_card(token)
    except ValueError:
        raise IllegalInput(
            f"{token!r} is not a card: type rank then suit, e.g. 10H, QS or TD ({_legal_hint(legal)})"
        ) from None
    if mask[card]:
        return card
    if view is not None and card not in view.hand:
        raise IllegalInput(f"you do not hold {card_str(card)}: your hand is {hand_text(view.hand)}")
    if view is not None and view.phase == Phase.PLAY and view.led_suit is not None:
        led = SUITS[view.led_suit]
        raise IllegalInput(f"you must follow {led} ({SUIT_NAMES[led]}): you can play {cards_text(legal)} (R6.2)")
    raise IllegalInput(f"{card_str(card)} is not legal now: {_legal_hint(legal)}")


def _parse_bid(words: list[str], legal: list[int]) -> int:
    bids = [a - BID_BASE + 1 for a in legal if a != PASS_BID]
    allowed = f"bid {bids[0]}-{bids[-1]} or pass" if bids else "only pass is left"
    if words[0] in ("pass", "p", "no", "nobid", "n") or words == ["no", "bid"]:
        return PASS_BID
    token = words[-1] if words[0] in ("bid", "b") and len(words) == 2 else words[0]
    if token.startswith("b") and token[1:].isdigit():
        token = token[1:]
    if not token.isdigit() or len(words) > 2:
        raise IllegalInput(f"{' '.join(words)!r} is not a bid: {allowed} (e.g. '{bids[0] if bids else 'pass'}')")
    k = int(token)
    if not 1 <= k <= MAX_BID or bid_action(k) not in legal:
        if bids and k < bids[0]:
            raise IllegalInput(f"a bid must be at least {bids[0]} (R4.2: above the highest bid and at least the minimum): {allowed}")
        raise IllegalInput(f"bid {k} is not allowed: {allowed}")
    return bid_action(k)


def _parse_trump(words: list[str]) -> int:
    token = words[-1] if words[0] == "trump" and len(words) == 2 else words[0]
    for letter, name in SUIT_NAMES.items():
        if token in (letter.lower(), name, name[:-1]) and len(words) <= 2:
            return TRUMP_BASE + SUITS.index(letter)
    raise IllegalInput(f"{' '.join(words)!r} is not a suit: name trump with C, D, H or S (or clubs, diamonds, hearts, spades)")


HELP = """Commands: a card (10H, qs, TD), a bid (8, 'bid 8', 'pass'), a trump suit (S, spades);
'help' shows this and what is legal; 'table' redraws the table; 'quit' leaves."""


# ----------------------------------------------------------------- the game
def play_game(
    seat: int = 0,
    agents: str | Agent | Sequence[str | Agent] | Mapping[int, str | Agent] = "heuristic",
    *,
    rules: RulesConfig | Mapping[str, Any] | None = None,
    episode: str = "game",
    seed: int | None = None,
    input_fn: Callable[[str], str] = input,
    output_fn: Callable[[str], None] = print,
    replays: str | Path | None = None,
) -> dict[str, Any]:
    """Play one episode with a person at ``seat``; the other seats are ``agents``.

    ``agents`` is one spec/agent for every other seat, one per other seat in
    seat order, or ``{seat: spec}`` (:func:`agents.registry.make_agents`, which
    also seeds them from ``seed``). Returns ``{"scores": [us, them],
    "rounds": [...round results...], "quit": bool, "truncated": bool}``, plus
    ``"replay"`` (the record's path) when ``replays`` names a directory: the game
    is then saved there as a replay record and ``index.html`` (every record in that
    directory, :mod:`pcr_env.replay`) is rebuilt.
    """
    config = _rules(rules)
    n = config.players
    if not (isinstance(seat, int) and 0 <= seat < n):
        raise ValueError(f"seat {seat!r} is not allowed: allowed a seat 0..{n - 1}")
    others = tuple(s for s in range(n) if s != seat)
    # Each seat's agent is seeded from the game's seed: the same --seed replays the same opponents.
    players = make_agents(agents, others, seed=seed, rules=config, name="agents")
    specs = per_seat(agents, others, name="agents")  # what each seat was given, for its label
    env = raw_env(episode=episode, reward="score_diff", **config.to_dict())
    env.reset(seed=seed)
    recorder = None
    if replays is not None:
        labels = [f"you (seat {s})" if s == seat else spec_label(specs[s]) for s in range(n)]
        recorder = GameRecorder(config, seats=labels, meta={"source": "python -m agents.play", "seed": seed,
                                                             "episode": episode, "human_seat": seat})
    table = _Table(env, seat, players, output_fn, recorder, replays)
    table.introduce(specs)
    while not (all(env.terminations.values()) or all(env.truncations.values())):
        current, phase = env.game.current, env.game.phase
        obs = env.observe(env.possible_agents[current])
        try:
            action = table.choose(current, phase, obs, input_fn)
        except Quit:
            output_fn("You left the game.")
            return table.finish({"scores": _us_them(env.game.scores, seat), "rounds": table.rounds, "quit": True,
                                 "truncated": False})
        table.step(current, phase, action)
        table.report(phase)
    return table.end(episode)


class _Table:
    """One game of :func:`play_game` as the person at ``seat`` sees it: who acts, and what has been announced."""

    def __init__(self, env: Any, seat: int, players: Mapping[int, Agent], out: Callable[[str], None],
                 recorder: GameRecorder | None, replays: str | Path | None):
        self.env, self.seat, self.players, self.out = env, seat, players, out
        self.recorder, self.replays = recorder, replays
        self.n = len(env.possible_agents)
        self.names = seat_names(seat, self.n)
        self.me = env.possible_agents[seat]
        self.rounds: list[dict] = []
        self.last_result = None
        self.shown_received = False
        self.tricks_seen = 0
        self.view_redeals = 0
        self.secret_picks = 0

    def introduce(self, specs: Mapping[int, Any]) -> None:
        """Say who sits where and how to play."""
        seat, n = self.seat, self.n
        partners = [s for s in range(n) if s % 2 == seat % 2 and s != seat]
        self.out(f"Pass Cut Run: you are seat {seat} (team {seat % 2}); partners: seats {partners}.")
        self.out("  ".join(f"{self.names[s]}: {spec_label(specs[s])}" for s in range(n) if s != seat))
        self.out(HELP)

    def choose(self, current: int, phase: Phase, obs: Mapping[str, np.ndarray], input_fn: Callable[[str], str]) -> int:
        """The action of the seat to act: asked of the person (may raise :class:`Quit`) or of its agent, checked."""
        if current == self.seat:
            view = decode_observation(obs)
            if phase == Phase.BID and view.received and not self.shown_received:
                self.out(f"You received: {cards_text(view.received)}")
                self.shown_received = True
            self.out("")
            self.out(render_view(obs, self.seat))
            return _ask(obs, view, input_fn, self.out, self.seat)
        action = int(self.players[current].act(obs))
        if not (0 <= action < NUM_ACTIONS) or not obs["action_mask"][action]:
            raise ValueError(f"agent at seat {current} chose illegal action {action} ({describe_action(action)})")
        return action

    def step(self, current: int, phase: Phase, action: int) -> None:
        """Announce and record ``action``, then play it; another seat's picks are secret (R3.1, R9.3)."""
        env = self.env
        hidden_pick = current != self.seat and phase in (Phase.PASS, Phase.DISCARD)
        if not hidden_pick:
            self.out(_announce(self.names[current], current == self.seat, phase, action))
        if self.recorder is not None:
            self.recorder.observe(env.game, action)
        env.step(action)
        if hidden_pick:  # say how many once that seat has finished
            self.secret_picks += 1
            if env.game is None or env.game.current != current or env.game.phase != phase:
                verb = "passes" if phase == Phase.PASS else "discards"
                self.out(f"{self.names[current]} {verb} {self.secret_picks} cards face down.")
                self.secret_picks = 0

    def report(self, phase: Phase) -> None:
        """After a step of ``phase``: trick results, the round summary, a throw-in (public information only)."""
        env, seat, names = self.env, self.seat, self.names
        mine = decode_observation(env.observe(self.me))
        result = env.infos[self.me].get("round_result")
        if result is not None and result is not self.last_result:
            self.last_result = result
            winner = result["trick_winners"][-1]
            self.out(f"{names[winner]} won the last trick.")
            self.out(_round_summary(result, seat, names))
            self.rounds.append(result)
            self.tricks_seen = 0
            self.shown_received = False
        elif phase == Phase.PLAY and mine.phase == Phase.PLAY and len(mine.trick_winners) > self.tricks_seen:
            self.tricks_seen = len(mine.trick_winners)
            winner = (seat + mine.trick_winners[-1]) % self.n
            self.out(f"{names[winner]} won trick {self.tricks_seen}  ·  tricks us {mine.team_tricks[0]}, "
                     f"them {mine.team_tricks[1]}")
        if phase == Phase.BID and env.game.phase in (Phase.PASS, Phase.BID) and mine.redeals > self.view_redeals:
            self.out(f"Everybody passed: the cards are thrown in and dealt again (R4.4, redeal {mine.redeals}).")
            self.shown_received = False
        self.view_redeals = mine.redeals

    def end(self, episode: str) -> dict[str, Any]:
        """Say how the episode ended and return its summary."""
        final = self.env.game
        us, them = _us_them(final.scores, self.seat)
        truncated = all(self.env.truncations.values())
        if truncated:
            self.out(f"Game stopped (truncated, R4.4/R8.4): us {us}, them {them}.")
        elif episode == "game":
            self.out(f"Game over: {'you win' if final.winner == self.seat % 2 else 'you lose'} {us}-{them}.")
        else:
            self.out(f"Round over: us {us}, them {them}.")
        return self.finish({"scores": [us, them], "rounds": self.rounds, "quit": False, "truncated": truncated})

    def finish(self, summary: dict[str, Any]) -> dict[str, Any]:
        """``summary``, plus the replay's path when the game is saved (:func:`_save_replay`)."""
        if self.recorder is not None:
            summary["replay"] = str(_save_replay(self.recorder.finish(self.env.game), self.replays))
            self.out(f"Replay saved: {summary['replay']} (open {Path(self.replays) / 'index.html'} in a browser)")
        return summary


def _rules(rules: RulesConfig | Mapping[str, Any] | None) -> RulesConfig:
    if rules is None:
        return RulesConfig()
    if isinstance(rules, RulesConfig):
        return rules
    if isinstance(rules, Mapping):
        return RulesConfig.from_mapping(rules)
    raise ValueError(f"rules must be a RulesConfig or a mapping of its fields, not {type(rules).__name__}")


def _save_replay(record: dict[str, Any], directory: str | Path) -> Path:
    """Write ``record`` as a new JSON file in ``directory`` and rebuild its viewer with every record there."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    stem = time.strftime("play-%Y%m%d-%H%M%S")
    path, k = out / f"{stem}.json", 1
    while path.exists():
        k += 1
        path = out / f"{stem}-{k}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    loaded = load_replays(out)
    write_viewer([r for _, r in loaded], out / VIEWER_FILE, title="Pass Cut Run: my games", names=[name for name, _ in loaded])
    return path


def _ask(obs: Mapping[str, np.ndarray], view: ObservationView, input_fn: Callable[[str], str], out, seat: int) -> int:
    prompt = {
        Phase.PASS: f"Pick a card to pass ({3 - len(view.passed)} left): ",
        Phase.BID: "Your bid (a number or 'pass'): ",
        Phase.TRUMP: "Name trump (C, D, H, S): ",
        Phase.DISCARD: "Discard a card: ",
        Phase.PLAY: "Play a card: ",
    }[view.phase]
    while True:
        try:
            text = input_fn(prompt)
        except EOFError:
            raise Quit from None
        word = text.strip().lower()
        if word in ("q", "quit", "exit"):
            raise Quit
        if word in ("h", "help", "?"):
            out(HELP)
            out(_legal_hint(legal_moves(obs)))
            continue
        if word in ("t", "table"):
            out(render_view(obs, seat))
            continue
        try:
            return parse_move(text, obs["action_mask"], view)
        except IllegalInput as err:
            out(f"Not allowed: {err}")


def _announce(name: str, is_me: bool, phase: Phase, action: int) -> str:
    who = "You" if is_me else name
    if phase == Phase.PASS:
        return f"You pick {card_str(action)} to pass." if is_me else f"{who} picks a card to pass."
    if phase == Phase.DISCARD:
        return f"You discard {card_str(action)}." if is_me else f"{who} discards a card."
    if phase == Phase.BID:
        return f"{who}: no bid." if action == PASS_BID else f"{who} {'bid' if is_me else 'bids'} {action - BID_BASE + 1}."
    if phase == Phase.TRUMP:
        s = SUITS[action - TRUMP_BASE]
        return f"{who} {'name' if is_me else 'names'} trump {s} ({SUIT_NAMES[s]})."
    return f"{who} {'play' if is_me else 'plays'} {card_str(action)}."


def _us_them(pair: Sequence[int], seat: int) -> tuple[int, int]:
    return (int(pair[seat % 2]), int(pair[1 - seat % 2]))


def _round_summary(result: Mapping[str, Any], seat: int, names: list[str]) -> str:
    t_us, t_them = _us_them(result["tricks"], seat)
    b_us, b_them = _us_them(result["run_bonus"], seat)
    s_us, s_them = _us_them(result["scores"], seat)
    tot_us, tot_them = _us_them(result["total_scores"], seat)
    side = "us" if result["declarer"] % 2 == seat % 2 else "them"
    made = "made" if result["made"] else "failed"
    trump = result["trump"]
    trump = SUITS[trump] if isinstance(trump, (int, np.integer)) else str(trump)  # a suit index 0..3 (C D H S) or its letter
    return (
        f"Round {result['round']}: {names[result['declarer']]} ({side}) bid {result['bid']} in {trump} and {made}.\n"
        f"  tricks us {t_us}, them {t_them}  ·  run bonus us {b_us}, them {b_them}  ·  "
        f"round score us {s_us}, them {s_them}  ·  total us {tot_us}, them {tot_them}"
    )


# ------------------------------------------------------------------- CLI
def add_table_arguments(p: argparse.ArgumentParser) -> None:
    """The seat, the agents, the episode, the seed and the rules: the flags of a table with a person at it
    (this terminal player and the browser table, ``python -m agents.serve``). The rules flags are every tool's
    (:mod:`pcr_env.rules_flags`); :func:`table_rules` reads them."""
    p.add_argument("--seat", type=int, default=0, help="your seat (0..players-1); partners are seat±2")
    p.add_argument("--agents", nargs="+", default=["heuristic"], metavar="SPEC",
                   help="agent specs for the other seats: one for all, or one per other seat in seat order "
                        "('random', 'heuristic', 'ppo:PATH', 'ppo:pretrained', 'search:ppo:pretrained')")
    p.add_argument("--episode", choices=["game", "round"], default="game", help="a whole game (to the target) or one round")
    p.add_argument("--seed", type=int, default=None, help="seed of the deal and the agents (reproducible games)")
    add_rules_arguments(p)


def table_rules(args: argparse.Namespace) -> RulesConfig:
    """The rules that :func:`add_table_arguments`' flags name (a ``ValueError`` naming the flag of a bad value)."""
    return rules_from_args(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agents.play", description="Play Pass Cut Run in a terminal against agents.")
    add_table_arguments(p)
    p.add_argument("--replays", metavar="DIR", default=None,
                   help="save the game as a replay record in DIR and rebuild DIR/index.html, a viewer to open in a browser")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    agents: Any = args.agents[0] if len(args.agents) == 1 else args.agents
    try:
        rules = table_rules(args)
        result = play_game(args.seat, agents, rules=rules, episode=args.episode, seed=args.seed, replays=args.replays)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 1 if result["quit"] else 0


if __name__ == "__main__":
    sys.exit(main())
