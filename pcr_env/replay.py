"""Game records ("replays") of Pass Cut Run and their self-contained HTML viewer.

A record is one JSON object per game (one round for ``episode="round"``): the
deal of every round (each seat's hand as dealt, the kitty, the dealer, the pass
direction), every pass pick by seat and what each seat received, every bid,
the declarer, the contract and trump, the declarer's discards (six players),
every trick with its cards by seat, leader and winner, and the round's result
(tricks, runs, run bonus, contract made or failed, round scores, totals), plus
deals that were thrown in (R4.4). Cards are written as their names (``"10H"``,
``"AS"``; :func:`pcr_env.cards.parse_card` reads them back), suits as letters
``C D H S``, seats as absolute seat numbers and teams as ``seat % 2``.

:class:`GameRecorder` builds a record from the rules engine: call
:meth:`~GameRecorder.observe` with the state *before* each action (or let
:meth:`~GameRecorder.apply` apply it), then :meth:`~GameRecorder.finish`. It
needs nothing but the states and actions, so it works for the engine loop of
``agents.evaluation`` and for the PettingZoo env (``env.game`` before each
``env.step``). :func:`write_replays` writes the records as JSON files plus
``index.html``, a single file with every record embedded and all JavaScript and
CSS inline (no server, no network), that steps through a deal with buttons or
the arrow keys. ``python -m pcr_env.replay DIR`` rebuilds ``DIR/index.html``
from the JSON records in ``DIR``.

>>> import numpy as np
>>> from pcr_env import engine as E
>>> from pcr_env.config import RulesConfig
>>> rng = np.random.default_rng(0)
>>> state = E.new_game(RulesConfig(first_dealer=0), rng)
>>> rec = GameRecorder(state.config, seats=["me", "left", "partner", "right"])
>>> while state.phase != E.Phase.ROUND_END:
...     _ = rec.apply(state, E.legal_actions(state)[0], rng)
>>> record = rec.finish(state)
>>> validate_record(record)
>>> record["version"], len(record["rounds"][0]["tricks"]), record["rounds"][0]["tricks"][0]["plays"][0]
(1, 13, {'seat': 0, 'card': '2C'})
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import actions as A
from . import engine as E
from .cards import SUITS, card_str, cards_of, parse_card
from .config import RulesConfig

SCHEMA = "pcr-replay"
SCHEMA_VERSION = 1
DIRECTIONS = {E.PassDirection.PARTNER: "partner", E.PassDirection.LEFT: "left", E.PassDirection.RIGHT: "right",
              E.PassDirection.NONE: "none"}
VIEWER_FILE = "index.html"


class ReplayError(ValueError):
    """A record that does not follow the schema, or a recorder used out of order."""


def _names(mask_or_cards: int | Iterable[int]) -> list[str]:
    cards = cards_of(mask_or_cards) if isinstance(mask_or_cards, int) else list(mask_or_cards)
    return [card_str(c) for c in cards]


# ---------------------------------------------------------------------------- recording
class GameRecorder:
    """Builds one game record from the engine states seen before each action.

    ``seats`` names the agent at each seat (e.g. its spec); ``meta`` is any
    JSON-able mapping stored as the record's ``meta`` (where the game came from:
    the evaluation pair, deal index and table, a seed ...).
    """

    def __init__(self, config: RulesConfig, seats: Sequence[str] | None = None, meta: Mapping[str, Any] | None = None):
        n = config.players
        if seats is not None and len(seats) != n:
            raise ReplayError(f"seats has {len(seats)} names: expected one per seat ({n})")
        self.config = config
        self.seats = [str(s) for s in seats] if seats is not None else [f"seat {s}" for s in range(n)]
        self.meta = dict(meta or {})
        self.rounds: list[dict[str, Any]] = []
        self._deal: dict[str, Any] | None = None  # the deal being played
        self._key: tuple[int, int] | None = None  # its (round number, redeals)
        self._trick: list[tuple[int, int]] = []
        self._throw_ins: list[dict[str, Any]] = []
        self._finished: dict[str, Any] | None = None

    # The state is read before the action is applied, so nothing here depends on what the engine does next.
    def observe(self, state: E.GameState, action: int) -> None:
        """Record ``action`` taken by ``state.current`` in ``state`` (call before applying it)."""
        if self._finished is not None:
            raise ReplayError("the record is finished: observe() after finish()")
        action = int(action)
        key = (state.round_number, state.redeals)
        if key != self._key:
            self._open_deal(state, key)
        deal, seat, phase = self._deal, state.current, state.phase
        assert deal is not None
        if phase == E.Phase.PASS:
            deal["passes"]["picks"][seat].append(card_str(action))
        elif phase == E.Phase.BID:
            deal["bids"].append({"seat": seat, "bid": None if action == A.PASS_BID else A.bid_value(action)})
        elif phase == E.Phase.TRUMP:
            deal["declarer"], deal["contract"] = state.declarer, state.high_bid
            deal["trump"] = SUITS[A.trump_suit(action)]
        elif phase == E.Phase.DISCARD:
            deal["discards"].append(card_str(action))
        elif phase == E.Phase.PLAY:
            self._play(state, seat, action)
        else:
            raise ReplayError(f"no action is recorded in phase {phase.name}")

    def deal_of(self, state: E.GameState) -> dict[str, Any] | None:
        """The record so far of the deal ``state`` is in (its bids, contract, trump, tricks; a scored one has its
        ``result``), or ``None`` when no action of that deal has been observed yet."""
        return self._deal if self._key == (state.round_number, state.redeals) else None

    @property
    def trick(self) -> list[tuple[int, int]]:
        """The trick being played as ``(seat, card)`` pairs (``[]`` between tricks)."""
        return list(self._trick)

    def apply(self, state: E.GameState, action: int, rng, *, validate: bool = True) -> E.RoundResult | None:
        """:meth:`observe` then :func:`engine.apply_action`; returns what the engine returns."""
        self.observe(state, action)
        return E.apply_action(state, action, rng, validate=validate)

    def _open_deal(self, state: E.GameState, key: tuple[int, int]) -> None:
        fresh = (state.phase in (E.Phase.PASS, E.Phase.BID) and not any(state.passed)
                 and all(b == E.NOT_YET for b in state.bids))
        if not fresh:
            raise ReplayError(f"the recorder must see a deal from its first action, not from phase {state.phase.name} "
                              f"(round {state.round_number})")
        old = self._deal
        if old is not None and "result" not in old:
            if self._key is not None and key[0] == self._key[0] and key[1] > self._key[1]:
                # R4.4: everybody passed, the same round is dealt again; earlier throw-ins stay listed.
                self._throw_ins = list(old["throw_ins"]) + [self._thrown_in(old)]
            else:
                raise ReplayError(f"round {self._key} ended without being scored before round {key} began")
        n = state.n_players
        direction = state.pass_direction
        self._deal = {
            "round": state.round_number,
            "dealer": state.dealer,
            "redeals": state.redeals,
            "pass_direction": DIRECTIONS[direction],
            "hands": [_names(state.hands[s]) for s in range(n)],
            "kitty": _names(state.kitty),
            "passes": {"offset": E.PASS_OFFSET.get(direction, 0), "picks": [[] for _ in range(n)],
                       "received": [[] for _ in range(n)]} if direction != E.PassDirection.NONE else None,
            "bids": [],
            "declarer": None,
            "contract": None,
            "trump": None,
            "discards": [],
            "tricks": [],
            "totals_before": list(state.scores),
            "throw_ins": self._throw_ins,
        }
        self._throw_ins = []
        self._key = key
        self._trick = []

    @staticmethod
    def _thrown_in(deal: dict[str, Any]) -> dict[str, Any]:
        keep = ("dealer", "redeals", "pass_direction", "hands", "kitty", "passes", "bids")
        out = {k: deal[k] for k in keep}
        _fill_received(out)
        return out

    def _play(self, state: E.GameState, seat: int, card: int) -> None:
        deal = self._deal
        assert deal is not None
        if not self._trick and not deal["tricks"]:
            _fill_received(deal)
        self._trick.append((seat, card))
        if len(self._trick) < state.n_players:
            return
        winner = E.trick_winner(self._trick, state.trump)
        deal["tricks"].append({"leader": self._trick[0][0],
                               "plays": [{"seat": s, "card": card_str(c)} for s, c in self._trick],
                               "winner": winner, "team": E.team_of(winner)})
        self._trick = []
        if len(deal["tricks"]) == self.config.num_tricks:
            self._score(deal)

    def _score(self, deal: dict[str, Any]) -> None:
        winners = [t["winner"] for t in deal["tricks"]]
        tricks, bonus, scores, made, winner = E.score_round(self.config, deal["declarer"], deal["contract"], winners)
        teams = [E.team_of(s) for s in winners]
        deal["result"] = {
            "tricks": list(tricks), "run_bonus": list(bonus),
            "runs": [{"team": t, "length": n, "bonus": E.run_bonus(n, self.config.double_run_bonus)}
                     for t, n in E.runs(teams)],
            "declarer_team": E.team_of(deal["declarer"]), "made": bool(made), "scores": list(scores),
            "totals": [deal["totals_before"][t] + scores[t] for t in (0, 1)], "winner": winner,
        }
        self.rounds.append(deal)

    def finish(self, state: E.GameState | None = None) -> dict[str, Any]:
        """The record (a JSON-able dict). ``state``, the final engine state, supplies the game's winner
        and whether it was truncated; without it they are inferred from the rounds."""
        if self._finished is not None:
            return self._finished
        if (state is not None and state.phase in (E.Phase.PASS, E.Phase.BID) and not any(state.passed)
                and all(b == E.NOT_YET for b in state.bids) and (state.round_number, state.redeals) != self._key):
            self._open_deal(state, (state.round_number, state.redeals))  # stopped before the deal's first action
        rounds = list(self.rounds)
        truncated_round = None
        if self._deal is not None and "result" not in self._deal:
            # Not scored: thrown in past max_redeals (R4.4) or the game stopped mid-round.
            truncated_round = self._thrown_in(self._deal)
            truncated_round["round"] = self._deal["round"]
            truncated_round["throw_ins"] = self._deal["throw_ins"]
            stopped = state is None or state.phase < E.Phase.ROUND_END or not state.truncated
            truncated_round["reason"] = "stopped" if stopped else "redeals"
        totals = rounds[-1]["result"]["totals"] if rounds else (list(state.scores) if state is not None else [0, 0])
        n = self.config.players
        record = {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "players": n,
            "rules": self.config.to_dict(),
            "seats": [{"seat": s, "team": E.team_of(s), "agent": self.seats[s]} for s in range(n)],
            "meta": _jsonable(self.meta),
            "rounds": rounds,
            "unfinished": truncated_round,
            "totals": list(totals),
            "winner": (state.winner if state is not None else None),
            "truncated": bool(state.truncated) if state is not None else truncated_round is not None,
        }
        self._finished = record
        return record


def _fill_received(deal: dict[str, Any]) -> None:
    passes = deal.get("passes")
    if not passes:
        return
    n = len(passes["picks"])
    for giver in range(n):
        passes["received"][(giver + passes["offset"]) % n] = list(passes["picks"][giver])


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and x != x:
        return None
    if hasattr(x, "item") and callable(x.item):  # numpy scalars
        return x.item()
    return x


# --------------------------------------------------------------------------- validation
def validate_record(record: Mapping[str, Any]) -> None:
    """Check a record's schema and that it is a legal game: every seat plays the cards it holds,
    every trick goes to the seat R6.4 says, every round is scored as R7-R8 say, totals add up.
    Raises :class:`ReplayError` naming the first problem."""
    def need(ok: bool, what: str) -> None:
        if not ok:
            raise ReplayError(f"replay record: {what}")

    need(isinstance(record, Mapping), "not a JSON object")
    need(record.get("schema") == SCHEMA, f"schema is {record.get('schema')!r}, expected {SCHEMA!r}")
    need(record.get("version") == SCHEMA_VERSION,
         f"version {record.get('version')!r} is not supported (this reader knows version {SCHEMA_VERSION})")
    try:
        config = RulesConfig.from_kwargs(dict(record["rules"]))
    except (KeyError, TypeError, ValueError) as err:
        raise ReplayError(f"replay record: bad rules: {err}") from None
    n = config.players
    need(record.get("players") == n, "players does not match the rules")
    need(len(record.get("seats", [])) == n, f"seats must list {n} seats")
    totals = [0, 0]
    for i, rnd in enumerate(record.get("rounds", [])):
        where = f"round {rnd.get('round', i)}"
        try:
            _check_round(config, rnd, where)
        except (KeyError, TypeError, IndexError) as err:
            raise ReplayError(f"replay record: {where}: missing or malformed field ({err!r})") from None
        if i == 0:
            totals = list(rnd["totals_before"])
        need(list(rnd["totals_before"]) == totals, f"{where}: totals_before {rnd['totals_before']} != {totals}")
        totals = list(rnd["result"]["totals"])
    if record.get("rounds"):
        need(list(record["totals"]) == totals, f"totals {record['totals']} != last round's {totals}")


def _check_round(config: RulesConfig, rnd: Mapping[str, Any], where: str) -> None:
    def need(ok: bool, what: str) -> None:
        if not ok:
            raise ReplayError(f"replay record: {where}: {what}")

    n = config.players
    hands = [{parse_card(c) for c in h} for h in rnd["hands"]]
    kitty = {parse_card(c) for c in rnd["kitty"]}
    need(len(hands) == n and all(len(h) == config.hand_size for h in hands), "hands must hold hand_size cards each")
    need(len(set().union(*hands, kitty)) == 52 and sum(map(len, hands)) + len(kitty) == 52,
         "hands and kitty must cover the deck once")
    passes = rnd["passes"]
    if passes is not None:
        picks = [{parse_card(c) for c in p} for p in passes["picks"]]
        for s in range(n):
            need(len(picks[s]) == E.PASS_SIZE and picks[s] <= hands[s], f"seat {s} must pass 3 of its own cards")
            need({parse_card(c) for c in passes["received"][(s + passes["offset"]) % n]} == picks[s],
                 f"seat {(s + passes['offset']) % n} must receive what seat {s} passed")
        after = [hands[s] - picks[s] for s in range(n)]
        for s in range(n):
            after[(s + passes["offset"]) % n] |= picks[s]
        hands = after
    declarer, contract = rnd["declarer"], rnd["contract"]
    bids = [b["bid"] for b in rnd["bids"] if b["bid"] is not None]
    need(bids and max(bids) == contract and bids == sorted(set(bids)), "bids must rise and end at the contract")
    need([b["seat"] for b in rnd["bids"] if b["bid"] == contract] == [declarer], "the declarer made the contract bid")
    trump = SUITS.index(rnd["trump"])
    hands[declarer] |= kitty
    discards = {parse_card(c) for c in rnd["discards"]}
    need(len(discards) == config.kitty_size and discards <= hands[declarer], "the declarer discards kitty_size cards it holds")
    hands[declarer] -= discards
    need(len(rnd["tricks"]) == config.num_tricks, f"{config.num_tricks} tricks must be played")
    leader = declarer
    for t, trick in enumerate(rnd["tricks"], 1):
        plays = [(p["seat"], parse_card(p["card"])) for p in trick["plays"]]
        need(trick["leader"] == leader == plays[0][0], f"trick {t} must be led by seat {leader}")
        need([s for s, _ in plays] == [(leader + k) % n for k in range(n)], f"trick {t} must go clockwise")
        led = plays[0][1] // 13
        for s, c in plays:
            need(c in hands[s], f"trick {t}: seat {s} does not hold {card_str(c)}")
            if c // 13 != led:
                need(not any(h // 13 == led for h in hands[s]), f"trick {t}: seat {s} must follow suit (R6.2)")
            hands[s].discard(c)
        leader = E.trick_winner(plays, trump)
        need(trick["winner"] == leader and trick["team"] == E.team_of(leader), f"trick {t}: winner must be seat {leader}")
    tricks, bonus, scores, made, winner = E.score_round(config, declarer, contract, [t["winner"] for t in rnd["tricks"]])
    res = rnd["result"]
    need(res["tricks"] == list(tricks) and res["run_bonus"] == list(bonus) and res["scores"] == list(scores)
         and res["made"] == made and res["winner"] == winner, "result does not match the tricks (R7, R8)")
    need(res["totals"] == [rnd["totals_before"][k] + scores[k] for k in (0, 1)], "totals must add the round scores")


# ------------------------------------------------------------------------------ output
def write_replays(records: Sequence[Mapping[str, Any]], directory: str | Path, title: str | None = None,
                  names: Sequence[str] | None = None) -> dict[str, Any]:
    """Write ``DIR/<name>.json`` for each record and ``DIR/index.html`` (the viewer, every record
    embedded). Names come from ``names``, else ``record["meta"]["name"]``, else ``game-<i>``.
    Returns ``{"json": [paths], "html": path}``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    used: set[str] = set()
    for i, rec in enumerate(records):
        name = names[i] if names is not None else str(rec.get("meta", {}).get("name") or f"game-{i:04d}")
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", name) or f"game-{i:04d}"
        while name in used:
            name += "_"
        used.add(name)
        path = out / f"{name}.json"
        path.write_text(json.dumps(rec, indent=1) + "\n")
        paths.append(path)
    html_path = write_viewer(records, out / VIEWER_FILE, title=title, names=[p.stem for p in paths])
    return {"json": paths, "html": html_path}


def load_replays(directory: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """``(name, record)`` for every ``*.json`` replay record in ``directory``, sorted by name
    (other JSON files are skipped)."""
    out = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            rec = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(rec, dict) and rec.get("schema") == SCHEMA:
            out.append((path.stem, rec))
    return out


def write_viewer(records: Sequence[Mapping[str, Any]], path: str | Path, title: str | None = None,
                 names: Sequence[str] | None = None) -> Path:
    """Write the self-contained HTML viewer with ``records`` embedded to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(viewer_html(records, title=title, names=names))
    return path


def viewer_html(records: Sequence[Mapping[str, Any]], title: str | None = None, names: Sequence[str] | None = None) -> str:
    """The viewer page as a string: one file, all CSS and JavaScript inline, ``records`` embedded."""
    title = title or "Pass Cut Run replays"
    payload = {"title": title, "records": list(records),
               "names": list(names) if names is not None else [f"game-{i:04d}" for i in range(len(records))]}
    # Inside <script type="application/json"> only "</" (and "<!--") could end the element early.
    data = json.dumps(payload, separators=(",", ":")).replace("<", "\\u003c")
    template = with_table_look((Path(__file__).with_name("replay_viewer.html")).read_text())
    return template.replace("__TITLE__", html.escape(title)).replace("__DATA__", data)


def with_table_look(page: str) -> str:
    """``page`` with the table's shared look put inline: ``/*__TABLE_LOOK_CSS__*/`` becomes ``table_look.css`` and
    ``/*__TABLE_LOOK_JS__*/`` ``table_look.js`` (the drawing that this viewer and the browser table,
    ``python -m agents.serve``, share; the page stays one self-contained file).

    >>> "window.pcrLook" in with_table_look("<script>/*__TABLE_LOOK_JS__*/</script>")
    True
    """
    here = Path(__file__).parent
    return (page.replace("/*__TABLE_LOOK_CSS__*/", (here / "table_look.css").read_text())
            .replace("/*__TABLE_LOOK_JS__*/", (here / "table_look.js").read_text()))


# --------------------------------------------------------------------------------- CLI
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pcr_env.replay",
                                     description="Rebuild DIR/index.html (the replay viewer) from the JSON records in DIR, "
                                                 "after checking each record.")
    parser.add_argument("directory", metavar="DIR", help="a directory of replay records (*.json)")
    parser.add_argument("--title", default=None, help="page title")
    args = parser.parse_args(argv)
    if not Path(args.directory).is_dir():
        print(f"python -m pcr_env.replay: error: {args.directory} is not a directory", file=sys.stderr)
        return 2
    loaded = load_replays(args.directory)
    if not loaded:
        print(f"python -m pcr_env.replay: error: no replay records (*.json with schema {SCHEMA!r}) in {args.directory}",
              file=sys.stderr)
        return 2
    for name, rec in loaded:
        try:
            validate_record(rec)
        except ReplayError as err:
            print(f"python -m pcr_env.replay: error: {name}.json: {err}", file=sys.stderr)
            return 2
    path = write_viewer([r for _, r in loaded], Path(args.directory) / VIEWER_FILE, title=args.title,
                        names=[n for n, _ in loaded])
    print(f"wrote {path} ({len(loaded)} record(s))")
    return 0


__all__ = ["SCHEMA", "SCHEMA_VERSION", "GameRecorder", "ReplayError", "load_replays", "validate_record",
           "viewer_html", "with_table_look", "write_replays", "write_viewer"]

if __name__ == "__main__":
    sys.exit(main())
