"""One browser table: a person's seat, the agents at the others, and the action log that rebuilds it exactly.

A :class:`Table` plays one episode (a whole game or one round) through the PettingZoo AEC env. Every
action, the person's or an agent's, goes through :meth:`Table.apply`, which checks it against the
acting seat's mask, feeds the :class:`~pcr_env.replay.GameRecorder` and appends it to
``self.actions``; the log and the table's settings (:class:`TableSettings`) are all that is needed to
rebuild it (:meth:`Table.restore` replays the log on a fresh env with the same seed). :meth:`Table.view`
is what the person's page may see: their own observation (decoded, never the engine's hidden
state) plus the public record of the deal (bids, trump, every card played, who won each trick).

>>> t = Table(TableSettings(agents=["heuristic"] * 4, seat=0, seed=7, episode="round"))
>>> while t.turn() is not None and t.turn() != 0:
...     _ = t.agent_step()
>>> v = t.view()
>>> v["phase"], len(v["hand"]), v["legal"] == sorted(v["legal"])
('pass', 13, True)
>>> t.apply(v["legal"][0]); len(t.actions) > 0
True
>>> Table.restore(t.settings, t.actions).view() == t.view()
True
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agents.registry import make_agents
from pcr_env import engine as E
from pcr_env.actions import NUM_ACTIONS, describe_action
from pcr_env.cards import card_str
from pcr_env.config import RulesConfig
from pcr_env.observation import decode_observation
from pcr_env.pass_cut_run_v0 import raw_env
from pcr_env.render import move_word
from pcr_env.replay import GameRecorder
from pcr_env.seating import derive_seed

PHASES = {E.Phase[name.upper()]: name for name in E.PHASE_NAMES}


class MoveError(ValueError):
    """A move that is not allowed now (illegal, not this seat's turn, the game is over); the message says why."""


class IllegalMove(MoveError):
    """An action that is no action id, or not a legal move at this decision (the API answers 422, not 409)."""


class AgentFailed(RuntimeError):
    """An agent raised or answered an illegal action; nothing was applied and the table is unchanged."""


@dataclass(frozen=True)
class TableSettings:
    """What a table is made of: ``agents`` names every seat's spec (the person's seat is ignored), ``seed`` the deal."""

    agents: list[str]
    seat: int = 0
    seed: int = 0
    episode: str = "game"
    rules: dict[str, Any] = field(default_factory=dict)
    hint: str | None = "heuristic"

    def config(self) -> RulesConfig:
        return RulesConfig.from_mapping(self.rules)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TableSettings:
        return cls(agents=list(d["agents"]), seat=int(d["seat"]), seed=int(d["seed"]), episode=str(d["episode"]),
                   rules=dict(d.get("rules") or {}), hint=d.get("hint"))


class Table:
    """One person's table (see the module docstring); not thread-safe: the store serialises calls per table."""

    def __init__(self, settings: TableSettings):
        config = settings.config()
        n = config.players
        if not (isinstance(settings.seat, int) and 0 <= settings.seat < n):
            raise ValueError(f"seat {settings.seat!r} is not allowed: allowed a seat 0..{n - 1}")
        if len(settings.agents) != n:
            raise ValueError(f"agents names {len(settings.agents)} specs: expected one per seat ({n})")
        self.settings, self.config, self.seat, self.n = settings, config, settings.seat, n
        others = [s for s in range(n) if s != self.seat]
        self.agents = make_agents({s: settings.agents[s] for s in others}, others, seed=settings.seed, rules=config)
        self.env = raw_env(episode=settings.episode, reward="score_diff", **config.to_dict())
        self.env.reset(seed=settings.seed)
        self.me = self.env.possible_agents[self.seat]
        labels = [f"you (seat {s})" if s == self.seat else settings.agents[s] for s in range(n)]
        self.recorder = GameRecorder(config, seats=labels, meta={
            "source": "python -m agents.serve", "seed": settings.seed, "episode": settings.episode,
            "human_seat": self.seat, "agents": {str(s): settings.agents[s] for s in others}})
        self.actions: list[int] = []
        self.error: str | None = None

    @classmethod
    def restore(cls, settings: TableSettings, actions: list[int]) -> Table:
        """The table after replaying ``actions`` (the agents are not asked; their streams are re-seeded after the log)."""
        table = cls(settings)
        for a in actions:
            table.apply(int(a))
        for s, agent in table.agents.items():  # a restart continues with fresh, still reproducible streams
            agent.reset(derive_seed(settings.seed, s, len(actions)))
        return table

    # ------------------------------------------------------------------ state
    def over(self) -> bool:
        return all(self.env.terminations.values()) or all(self.env.truncations.values())

    def turn(self) -> int | None:
        """The seat to act, or ``None`` once the episode is over."""
        return None if self.over() else int(self.env.game.current)

    def mask(self) -> np.ndarray:
        turn = self.turn()
        if turn is None:
            return np.zeros(NUM_ACTIONS, np.int8)
        return self.env.observe(self.env.possible_agents[turn])["action_mask"]

    # ------------------------------------------------------------------ moves
    def apply(self, action: int) -> None:
        """Apply ``action`` for the seat to act; raises :class:`IllegalMove` (and changes nothing) if it is not legal,
        :class:`MoveError` if the game is over."""
        if self.over():
            raise MoveError("the game is over: start a new table")
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= int(action) < NUM_ACTIONS:
            raise IllegalMove(f"action {action!r} is not an action id: allowed an integer 0..{NUM_ACTIONS - 1}")
        action = int(action)
        legal = np.flatnonzero(self.mask()).tolist()
        if action not in legal:
            raise IllegalMove(f"{describe_action(action)} is not legal now: legal are {', '.join(move_word(a) for a in legal)}")
        self.recorder.observe(self.env.game, action)
        self.env.step(action)
        self.actions.append(action)

    def agent_step(self) -> int:
        """Let the agent whose turn it is act; returns its action. Raises :class:`AgentFailed` (nothing applied)."""
        turn = self.turn()
        if turn is None or turn == self.seat:
            raise MoveError("it is not an agent's turn")
        obs = self.env.observe(self.env.possible_agents[turn])
        spec = self.settings.agents[turn]
        try:
            action = int(self.agents[turn].act(obs))
        except Exception as err:  # any failure of the agent's code: say so, keep the table as it was
            self.error = f"the agent at seat {turn} ({spec}) failed: {type(err).__name__}: {err}"
            raise AgentFailed(self.error) from err
        if not (0 <= action < NUM_ACTIONS and obs["action_mask"][action]):
            self.error = f"the agent at seat {turn} ({spec}) chose an illegal action {action} ({describe_action(action)})"
            raise AgentFailed(self.error)
        self.error = None
        self.apply(action)
        return action

    def hint(self, agent) -> dict[str, Any]:
        """What ``agent`` would play for the person now: its pick and, if it exposes them, its probabilities."""
        if self.turn() != self.seat:
            raise MoveError("a hint is for your own turn")
        obs = self.env.observe(self.me)
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        probs = getattr(agent, "action_probabilities", None)
        out: dict[str, Any] = {"action": int(agent.act(obs)), "probabilities": None}
        if callable(probs):
            p = np.asarray(probs(obs["observation"][None], obs["action_mask"][None]))[0]
            out["probabilities"] = sorted(({"action": a, "label": move_word(a), "p": round(float(p[a]), 4)} for a in legal),
                                          key=lambda d: -d["p"])
        out["label"] = move_word(out["action"])
        return out

    # ---------------------------------------------------------- public record
    def view(self) -> dict[str, Any]:
        """What the person's page may show: their own observation and the public part of the record
        (bids, contract, trump, every card played and who won each trick, the scored rounds), nothing hidden."""
        g, n = self.env.game, self.n
        mine = decode_observation(self.env.observe(self.me))
        turn = self.turn()
        deal = self.recorder.deal_of(g) or {"bids": [], "tricks": [], "passes": None, "declarer": None, "contract": None,
                                            "trump": None}
        tricks = deal["tricks"]  # a scored deal only once the game is over: the next deal has begun otherwise
        won = [sum(1 for t in tricks if t["team"] == k) for k in (0, 1)]
        run = None
        if tricks:
            teams = [t["team"] for t in tricks]
            team, length = E.runs(teams)[-1]
            run = {"team": team, "length": length, "bonus": E.run_bonus(length, self.config.double_run_bonus)}
        legal = np.flatnonzero(self.mask()).tolist() if turn == self.seat else []
        us = self.seat % 2
        public = ("round", "dealer", "declarer", "contract", "trump", "result")
        rounds = [{k: r[k] for k in public} for r in self.recorder.rounds]
        if rounds:
            rounds[-1]["tricks"] = self.recorder.rounds[-1]["tricks"]  # the last trick stays on the table
        return {
            "seat": self.seat, "players": n, "episode": self.settings.episode, "target": self.config.target_score,
            "agents": [None if s == self.seat else self.settings.agents[s] for s in range(n)],
            "over": turn is None, "turn": turn, "phase": PHASES.get(g.phase) if turn is not None else None,
            "legal": legal, "labels": {str(a): move_word(a) for a in legal},
            "hand": [card_str(c) for c in sorted(mine.hand)], "passed": [card_str(c) for c in mine.passed],
            "received": [card_str(c) for c in mine.received], "discarded": [card_str(c) for c in mine.discarded],
            "round": int(g.round_number), "dealer": int(g.dealer), "redeals": int(g.redeals),
            "pass_direction": int(g.pass_direction),
            "passes_done": [len(p) for p in deal["passes"]["picks"]] if deal["passes"] else [0] * n,
            "bids": deal["bids"], "contract": deal["contract"], "declarer": deal["declarer"], "trump": deal["trump"],
            "trick": [{"seat": s, "card": card_str(c)} for s, c in self.recorder.trick],
            "tricks": tricks, "team_tricks": won, "run": run,
            "scores": [int(mine.scores[0 if k == us else 1]) for k in (0, 1)],
            "rounds": rounds, "moves": len(self.actions), "error": self.error,
            "winner": None if turn is not None or g.winner is None or g.winner < 0 else int(g.winner),
            "truncated": all(self.env.truncations.values()),
        }

    def record(self) -> dict[str, Any]:
        """The game so far as a ``pcr-replay`` record (the replay viewer opens it); hidden cards included."""
        return copy.deepcopy(self.recorder).finish(self.env.game)
