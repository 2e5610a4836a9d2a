"""Duplicate head-to-head evaluation of agents: the machinery behind ``evaluate.py``.

Every pair of agents plays the **same deals** twice with the teams swapped, so the
luck of the cards cancels (the duplicate method of bridge and of poker research):

* A *deal* is ``(hands, dealer, round number)`` drawn from ``default_rng([seed, i])``
  for deal index ``i``; round numbers cycle 1, 2, 3, 4 over the deals so the four
  pass directions (R3.2) are balanced. Every pair sees the same deals.
* Table A seats agent X at the even seats (team 0) and Y at the odd ones; table
  B swaps them. Partners are copies of one agent.
* If every player passes (R4.4) the engine redeals from a generator seeded per
  deal, so both tables get the same redeal cards as long as both throw in.
* With ``episode="game"`` a deal is a whole game to ``target_score``: round ``r``
  of game ``i`` uses cards drawn from ``default_rng([seed, i, r])`` at both tables.
* Agents are re-seeded with ``agent.reset(derive_seed(seed, i, table, side))``
  (:func:`pcr_env.seating.derive_seed`) before every table, so a result depends on
  the seed alone, not on ``workers``.

Agents are spec strings (:mod:`agents.registry`) or agent objects (``act``,
``act_batch``, ``reset``: :class:`agents.base.Agent`), e.g. a policy built from a
network that is still training. Spec-built agents are made once per process and
side; an object is played as it is (its ``reset`` is called before every table, so
its random streams are not left where they were: save them with ``get_state()``
first if that matters). With ``workers > 1`` objects travel to the worker
processes by pickling (once per work item of ``CHUNK`` deals), so they must be
picklable and rebuild the same agent there; a torch network on the CPU is.
Results are the same either way.

**Score difference per deal** = X's (team score − opponent score) at table A plus
the same at table B, divided by 2: X's average margin per round played on those
cards (per game for ``episode="game"``). An agent against a deterministic copy of
itself scores exactly 0 on every deal. The 95% interval is Student's t on the
per-deal differences. A deal is *won* when its difference is positive (ties count
half in ``score_share`` and in the ratings).

Ratings: a Bradley–Terry model fitted by the MM algorithm (Hunter 2004) to the
deal wins of every pair, with one drawn pseudo-deal per pair so a clean sweep
stays finite, reported on the Elo scale (400·log10 odds) with ``random`` (else the
first agent) at 0, and standard errors from the Fisher information.

>>> result = evaluate(["heuristic", "random"], deals=8, seed=1, progress=False)
>>> pair = result.pairs[0]
>>> (pair.agent_a, pair.agent_b, pair.deals), pair.mean_diff > 0
(('heuristic', 'random', 8), True)
"""

from __future__ import annotations

import copy
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from agents.base import Agent
from agents.evaluation.report import EvaluationResult, PairResult, Timing
from agents.evaluation.stats import Rating, bradley_terry, t_interval
from agents.registry import make_agents, parse_spec, spec_label
from pcr_env import engine as E
from pcr_env.actions import NUM_ACTIONS
from pcr_env.cards import NUM_CARDS
from pcr_env.config import EPISODES, RulesConfig
from pcr_env.observation import encode_observation
from pcr_env.replay import GameRecorder
from pcr_env.seating import derive_seed, is_seat_agent

CHUNK = 25  # deals per work item: small enough for a smooth progress bar, large enough to amortise IPC


# ----------------------------------------------------------------------------- deals
@dataclass(frozen=True)
class Deal:
    """One duplicate board: the cards, the dealer and the round number (pass direction)."""

    index: int
    hands: tuple[tuple[int, ...], ...]
    kitty: tuple[int, ...]
    dealer: int
    round_number: int
    redeal_seed: int


def make_deal(rules: RulesConfig, seed: int, index: int, round_in_game: int | None = None) -> Deal:
    """Deal ``index`` of the evaluation suite for ``seed`` (round ``round_in_game`` of a game if given)."""
    key = [seed, index] if round_in_game is None else [seed, index, round_in_game]
    rng = np.random.default_rng(key)
    n, size = rules.players, rules.hand_size
    order = [int(c) for c in rng.permutation(NUM_CARDS)]
    hands = tuple(tuple(sorted(order[s * size:(s + 1) * size])) for s in range(n))
    kitty = tuple(sorted(order[n * size:]))
    dealer = int(rng.integers(n))
    round_number = 1 + index % 4 if round_in_game is None else round_in_game
    return Deal(index, hands, kitty, dealer, round_number, int(rng.integers(2**63 - 1)))


def agent_seed(seed: int, index: int, table: int, side: int) -> int:
    """Seed of the agent playing ``side`` (0 = X, 1 = Y) at ``table`` (0 = A, 1 = B) of deal ``index``."""
    return derive_seed(seed, index, table, side)


# ------------------------------------------------------------------------ playing
def play_round(state: E.GameState, seat_agents: Sequence[Agent], rng: np.random.Generator,
               names: Sequence[str] | None = None, recorder: GameRecorder | None = None,
               clock: np.ndarray | None = None) -> E.RoundResult | None:
    """Play ``state`` to the end of its round; ``None`` if truncated by redeals (R4.4).

    Each agent sees only the acting seat's observation and mask. A ``recorder``
    (:class:`pcr_env.replay.GameRecorder`) sees every action before it is applied.
    ``clock[seat]`` (``[decisions, seconds]``), if given, adds each ``act`` call's count and wall time.
    """
    obs = np.zeros(0, np.float32)
    while state.phase < E.Phase.ROUND_END:
        seat = state.current
        obs = encode_observation(state, seat)
        mask = E.legal_mask(state)
        if clock is None:
            action = seat_agents[seat].act({"observation": obs, "action_mask": mask})
        else:
            started = time.perf_counter()
            action = seat_agents[seat].act({"observation": obs, "action_mask": mask})
            clock[seat] += (1.0, time.perf_counter() - started)
        if not (isinstance(action, (int, np.integer)) and 0 <= action < NUM_ACTIONS and mask[action]):
            who = names[seat] if names else type(seat_agents[seat]).__name__
            raise RuntimeError(f"agent {who} at seat {seat} chose illegal action {action!r} in phase {state.phase.name}")
        if recorder is not None:
            recorder.observe(state, int(action))
        result = E.apply_action(state, int(action), rng, validate=False)
        if result is not None:
            return result
    return None


@dataclass
class SideStats:
    """Round-level figures of one side (an agent's team) summed over a pair's tables."""

    rounds: int = 0
    declared: int = 0
    made: int = 0
    contract_sum: int = 0
    tricks: int = 0
    run_bonus: int = 0
    score: int = 0
    set_opponents: int = 0  # opponents' contracts this side defeated

    def add(self, other: "SideStats") -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def summary(self) -> dict[str, float]:
        r = max(self.rounds, 1)
        return {
            "bid_rate": self.declared / r,
            "make_rate": self.made / self.declared if self.declared else float("nan"),
            "mean_contract": self.contract_sum / self.declared if self.declared else float("nan"),
            "tricks_per_round": self.tricks / r,
            "run_bonus_per_round": self.run_bonus / r,
            "score_per_round": self.score / r,
        }


def _record(result: E.RoundResult, x_team: int, stats: tuple[SideStats, SideStats]) -> None:
    for side, team in ((0, x_team), (1, 1 - x_team)):
        st = stats[side]
        st.rounds += 1
        st.tricks += result.tricks[team]
        st.run_bonus += result.run_bonus[team]
        st.score += result.scores[team]
        if result.declarer % 2 == team:
            st.declared += 1
            st.made += result.made
            st.contract_sum += result.bid
        elif not result.made:
            st.set_opponents += 1


def play_table(rules: RulesConfig, deal: Deal, seat_agents: Sequence[Agent], x_team: int, episode: str,
               seed: int, stats: tuple[SideStats, SideStats], names: Sequence[str] | None = None,
               recorder: GameRecorder | None = None, clock: np.ndarray | None = None) -> tuple[float, int | None, int, int]:
    """One table of a duplicate deal. Returns ``(X margin, X won? (game), throw-ins, truncated)``.

    A ``recorder`` records the table's game and is finished with its last state; ``clock`` is
    :func:`play_round`'s.
    """
    if recorder is None:
        return _play_table(rules, deal, seat_agents, x_team, episode, seed, stats, names, None, clock=clock)
    final: list[E.GameState] = []
    try:
        return _play_table(rules, deal, seat_agents, x_team, episode, seed, stats, names, recorder, final, clock)
    finally:
        recorder.finish(final[-1] if final else None)


def _play_table(rules: RulesConfig, deal: Deal, seat_agents: Sequence[Agent], x_team: int, episode: str, seed: int,
                stats: tuple[SideStats, SideStats], names: Sequence[str] | None, recorder: GameRecorder | None,
                final: list[E.GameState] | None = None,
                clock: np.ndarray | None = None) -> tuple[float, int | None, int, int]:
    n = rules.players
    if episode == "round":
        rng = np.random.default_rng(deal.redeal_seed)
        state = E.new_game(rules, rng, dealer=deal.dealer, round_number=deal.round_number,
                           hands=[list(h) for h in deal.hands], kitty=list(deal.kitty))
        if final is not None:
            final.append(state)
        result = play_round(state, seat_agents, rng, names, recorder, clock)
        if result is None:
            return 0.0, None, state.redeals, 1
        _record(result, x_team, stats)
        return float(result.scores[x_team] - result.scores[1 - x_team]), None, state.redeals, 0
    # A whole game: every round's cards come from the suite, so both tables see the same deals.
    scores = [0, 0]
    throw_ins = 0
    dealer = deal.dealer
    for r in range(1, rules.max_rounds + 1):
        rd = deal if r == 1 else make_deal(rules, seed, deal.index, r)
        rng = np.random.default_rng(rd.redeal_seed)
        state = E.new_game(rules, rng, dealer=(dealer + r - 1) % n, round_number=r,
                           hands=[list(h) for h in rd.hands], kitty=list(rd.kitty), scores=scores)
        if final is not None:
            final.append(state)
        result = play_round(state, seat_agents, rng, names, recorder, clock)
        throw_ins += state.redeals
        if result is None:  # truncated by redeals: the game ends undecided
            return float(scores[x_team] - scores[1 - x_team]), None, throw_ins, 1
        _record(result, x_team, stats)
        scores = list(state.scores)
        if state.phase == E.Phase.GAME_OVER and state.winner is not None:
            return float(scores[x_team] - scores[1 - x_team]), int(state.winner == x_team), throw_ins, 0
    # R8.4: max_rounds scored rounds without a winner (each round is a fresh engine state, so counted here).
    return float(scores[x_team] - scores[1 - x_team]), None, throw_ins, 1


# ------------------------------------------------------------------------- workers
@dataclass
class ChunkResult:
    pair: int
    start: int
    diffs: list[float]
    games_won: list[int]  # per deal: X's games won (0..2) for episode="game"; empty otherwise
    stats: tuple[SideStats, SideStats]
    throw_ins: int
    truncated: int
    replays: list[dict[str, Any]] = field(default_factory=list)  # game records of the recorded deals
    clock: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))  # per side: decisions, seconds


# Agents built from specs in this process, by (spec, side, rules): a checkpoint is loaded once per
# worker, not per deal. Agent objects given to evaluate() are never cached: they are used as they are.
_AGENT_CACHE: dict[tuple[str, int, RulesConfig], Agent] = {}


def _get_agent(entry: str | Agent, side: int, rules: RulesConfig) -> Agent:
    if not isinstance(entry, str):
        return entry
    key = (entry, side, rules)
    if key not in _AGENT_CACHE:
        _AGENT_CACHE[key] = make_agents({side: entry}, (side,), seed=None, rules=rules)[side]
        _single_thread()
    return _AGENT_CACHE[key]


def _single_thread() -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _worker_init() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")


def run_chunk(task: tuple) -> ChunkResult:
    """Play deals ``start .. start+count-1`` of one pair (a picklable, top-level work item).

    An optional ninth item ``(record_deals, label_x, label_y)`` records both tables of every
    deal with index below ``record_deals`` as replay records (:mod:`pcr_env.replay`).
    """
    pair, spec_x, spec_y, start, count, seed, rules_dict, episode, *extra = task
    record_deals, label_x, label_y = extra[0] if extra and extra[0] else (0, spec_label(spec_x), spec_label(spec_y))
    rules = RulesConfig(**rules_dict)
    replays: list[dict[str, Any]] = []
    ax, ay = _get_agent(spec_x, 0, rules), _get_agent(spec_y, 1, rules)
    if ay is ax:  # one object on both sides (a self-play check): each side gets its own, seeded apart
        ay = copy.deepcopy(ax)
    stats = (SideStats(), SideStats())
    diffs: list[float] = []
    games_won: list[int] = []
    throw_ins = truncated = 0
    side_clock = np.zeros((2, 2))
    names = (spec_label(spec_x), spec_label(spec_y))
    for i in range(start, start + count):
        deal = make_deal(rules, seed, i)
        margin = 0.0
        won = 0
        for table, x_team in ((0, 0), (1, 1)):
            ax.reset(agent_seed(seed, i, table, 0))
            ay.reset(agent_seed(seed, i, table, 1))
            seats = [ax if s % 2 == x_team else ay for s in range(rules.players)]
            seat_names = [names[0] if s % 2 == x_team else names[1] for s in range(rules.players)]
            recorder = None
            if i < record_deals:
                label = "AB"[table]
                recorder = GameRecorder(
                    rules, seats=[label_x if s % 2 == x_team else label_y for s in range(rules.players)],
                    meta={"source": "duplicate evaluation", "name": f"pair{pair}-deal{i:04d}-{label}",
                          "pair": f"{label_x} vs {label_y}", "agent_a": label_x, "agent_b": label_y,
                          "agent_a_team": x_team, "deal": i, "table": label, "seed": seed, "episode": episode})
            clock = np.zeros((rules.players, 2))
            m, w, t, tr = play_table(rules, deal, seats, x_team, episode, seed, stats, seat_names, recorder, clock)
            side_clock[0] += clock[[s for s in range(rules.players) if s % 2 == x_team]].sum(0)
            side_clock[1] += clock[[s for s in range(rules.players) if s % 2 != x_team]].sum(0)
            if recorder is not None:
                replays.append(recorder.finish())
            margin += m
            won += w or 0
            throw_ins += t
            truncated += tr
        diffs.append(margin / 2.0)
        if episode == "game":
            games_won.append(won)
    return ChunkResult(pair, start, diffs, games_won, stats, throw_ins, truncated, replays,
                       (tuple(side_clock[0].tolist()), tuple(side_clock[1].tolist())))


def summarise_pair(a: str, b: str, diffs: Sequence[float], games_won: Sequence[int], stats: tuple[SideStats, SideStats],
                   throw_ins: int, truncated: int) -> PairResult:
    d = np.asarray(diffs, float)
    mean, lo, hi, sd = t_interval(d)
    outcome = np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5))
    share, s_lo, s_hi, _ = t_interval(outcome)
    s_lo, s_hi = max(0.0, s_lo), min(1.0, s_hi)  # a share lies in [0, 1] whatever the normal approximation says
    return PairResult(
        agent_a=a, agent_b=b, deals=len(d), mean_diff=mean, ci95=(lo, hi), sd=sd,
        win_rate=float((d > 0).mean()), tie_rate=float((d == 0).mean()), loss_rate=float((d < 0).mean()),
        score_share=share, score_share_ci95=(s_lo, s_hi),
        game_win_rate=float(np.sum(games_won) / (2 * len(d))) if len(games_won) else None,
        throw_ins_per_deal=throw_ins / max(len(d), 1), truncated_tables=truncated,
        a=stats[0].summary(), b=stats[1].summary(), diffs=[float(x) for x in d],
    )


def _labels(specs: Sequence[str]) -> list[str]:
    """Unique display names: a repeated spec becomes ``spec#2``, ``spec#3`` ..."""
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        seen[s] = seen.get(s, 0) + 1
        out.append(s if seen[s] == 1 else f"{s}#{seen[s]}")
    return out


# ---------------------------------------------------------------------------- driver
def evaluate(agents: Sequence[str | Agent], deals: int = 1000, seed: int = 0, episode: str = "round",
             workers: int = 1, progress: bool = True, rules: RulesConfig | dict[str, Any] | None = None,
             pairs: Iterable[tuple[int, int]] | None = None, record_deals: int = 0,
             ray_address: str | None = None) -> EvaluationResult:
    """Play every pair of ``agents`` (spec strings or agent objects) in duplicate over ``deals`` deals.

    A single agent is played against a copy of itself; a repeated spec is a
    separate entry (``heuristic`` and ``heuristic#2``). An object is named by its
    ``name`` attribute (else its class name) in the results, and is re-seeded with
    ``reset`` before every table; with ``workers > 1`` it is pickled to the workers
    (see the module docstring). ``pairs`` (index pairs)
    restricts the pairings. ``rules`` is a :class:`~pcr_env.RulesConfig` or its
    fields. Results are identical for any ``workers``.

    ``record_deals`` > 0 records both tables of each pair's first ``record_deals``
    deals as game records in ``result.replays`` (ordered by pair, deal, table;
    write them with :func:`pcr_env.replay.write_replays`). Recording does not
    change any result.

    ``ray_address`` plays the chunks of deals as tasks on a Ray cluster instead (:mod:`agents.evaluation.on_ray`:
    ``"auto"``, ``"HOST:PORT"``, ``"local"``), with the same result; ``workers`` must then be 1.
    """
    if isinstance(rules, dict) or rules is None:
        rules = RulesConfig.from_kwargs(dict(rules or {}))
    _check_arguments(agents, deals, episode, workers, record_deals, ray_address)
    specs = list(agents) if len(agents) > 1 else [agents[0], agents[0]]
    names = _labels([spec_label(s) for s in specs])
    pair_list = sorted(pairs) if pairs is not None else [(i, j) for i in range(len(specs)) for j in range(i + 1, len(specs))]
    rules_dict = rules.to_dict()
    tasks = [(p, specs[i], specs[j], start, min(CHUNK, deals - start), seed, rules_dict, episode)
             + (((record_deals, names[i], names[j]),) if start < record_deals else ())
             for p, (i, j) in enumerate(pair_list) for start in range(0, deals, CHUNK)]
    started = time.perf_counter()
    chunks = _run_tasks(tasks, workers, ray_address, _progress_bar(total=deals * len(pair_list), enabled=progress))
    _check_complete(tasks, chunks)
    elapsed = time.perf_counter() - started
    results, wins = _pair_results(chunks, pair_list, names)
    config = {"agents": names, "specs": [spec_label(s) for s in specs], "deals": deals, "seed": seed, "episode": episode,
              "rules": rules_dict, "workers": workers, "ray": ray_address is not None, "duplicate": True,
              "score_difference": "mean over the two tables of (agent_a team score - agent_b team score)"}
    replays = [r for c in sorted(chunks, key=lambda c: (c.pair, c.start)) for r in c.replays]
    clock = _agent_clock(chunks, pair_list, len(specs))
    timing = [Timing(names[k], int(clock[k, 0]), float(clock[k, 1])) for k in range(len(specs))]
    return EvaluationResult(config=config, pairs=results, ratings=_ratings(specs, names, wins), seconds=elapsed,
                            replays=replays, timing=timing)


def _check_arguments(agents: Sequence[str | Agent], deals: int, episode: str, workers: int, record_deals: int,
                     ray_address: str | None) -> None:
    """Refuse bad arguments of :func:`evaluate` before any game, naming the bad one."""
    if ray_address is not None and not (isinstance(ray_address, str) and ray_address):
        raise ValueError(f"ray_address {ray_address!r} is not allowed: allowed None or a Ray address "
                         "('auto', 'HOST:PORT', 'ray://HOST:PORT', 'local')")
    if ray_address is not None and workers != 1:
        raise ValueError(f"workers {workers!r} is not allowed with ray_address: allowed 1 (the cluster's CPUs are the "
                         "workers)")
    if episode not in EPISODES:
        raise ValueError(f"episode {episode!r} is not allowed: allowed {list(EPISODES)}")
    if not (isinstance(deals, int) and deals >= 1):
        raise ValueError(f"deals {deals!r} is not allowed: allowed an integer >= 1")
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers {workers!r} is not allowed: allowed an integer >= 1")
    if not (isinstance(record_deals, int) and record_deals >= 0):
        raise ValueError(f"record_deals {record_deals!r} is not allowed: allowed an integer >= 0")
    if not agents:
        raise ValueError("agents is empty: give at least one agent spec, e.g. ['heuristic', 'random']")
    for k, entry in enumerate(agents):
        if isinstance(entry, str):
            parse_spec(entry)  # fail fast, naming the bad spec
        elif not is_seat_agent(entry):
            raise ValueError(f"agents[{k}] = {entry!r} is not allowed: allowed an agent spec string "
                             "('random', 'heuristic', 'ppo:PATH') or an agent object with act(obs) and reset(seed)")


def _run_tasks(tasks: list[tuple], workers: int, ray_address: str | None, bar: Any) -> list[ChunkResult]:
    """Play every chunk task, here, in ``workers`` spawned processes or on a Ray cluster (in completion order),
    advancing ``bar``."""
    chunks: list[ChunkResult] = []
    try:
        if ray_address is not None:
            from agents.evaluation.on_ray import run_on_ray

            chunks = run_on_ray(tasks, ray_address, run_chunk, lambda chunk: len(chunk.diffs), _describe_task, bar)
        elif workers == 1:
            for task in tasks:
                chunks.append(run_chunk(task))
                bar.update(task[4])
        else:
            ctx = mp.get_context("spawn")
            with ctx.Pool(workers, initializer=_worker_init) as pool:
                for chunk in pool.imap_unordered(run_chunk, tasks):
                    chunks.append(chunk)
                    bar.update(len(chunk.diffs))
    finally:
        bar.close()
    return chunks


def _describe_task(task: tuple) -> str:
    pair, _, _, start, count = task[:5]
    return f"the chunk of pair {pair}, deals {start}..{start + count - 1}"


def _check_complete(tasks: list[tuple], chunks: list[ChunkResult]) -> None:
    """Every task came back once with all its deals (a backend must never drop a chunk silently)."""
    played = {(c.pair, c.start): len(c.diffs) for c in chunks}
    missing = [_describe_task(t) for t in tasks if played.get((t[0], t[3])) != t[4]]
    if missing or len(chunks) != len(tasks):
        raise RuntimeError(f"{len(missing)} of {len(tasks)} chunks did not come back complete "
                           f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})")


def _pair_results(chunks: list[ChunkResult], pair_list: list[tuple[int, int]],
                  names: list[str]) -> tuple[list[PairResult], np.ndarray]:
    """Each pair's summary from its chunks in deal order, and the win matrix (a tie counts half) for the ratings."""
    results = []
    wins = np.zeros((len(names), len(names)))
    for p, (i, j) in enumerate(pair_list):
        mine = sorted((c for c in chunks if c.pair == p), key=lambda c: c.start)
        stats = (SideStats(), SideStats())
        for c in mine:
            stats[0].add(c.stats[0])
            stats[1].add(c.stats[1])
        diffs = [d for c in mine for d in c.diffs]
        games = [g for c in mine for g in c.games_won]
        res = summarise_pair(names[i], names[j], diffs, games, stats, sum(c.throw_ins for c in mine),
                             sum(c.truncated for c in mine))
        results.append(res)
        d = np.asarray(diffs)
        wins[i, j] += (d > 0).sum() + 0.5 * (d == 0).sum()
        wins[j, i] += (d < 0).sum() + 0.5 * (d == 0).sum()
    return results, wins


def _agent_clock(chunks: list[ChunkResult], pair_list: list[tuple[int, int]], count: int) -> np.ndarray:
    """Per agent: decisions made and seconds spent making them, over every chunk it played."""
    clock = np.zeros((count, 2))
    for c in chunks:
        i, j = pair_list[c.pair]
        clock[i] += c.clock[0]
        clock[j] += c.clock[1]
    return clock


def _ratings(specs: list[str | Agent], names: list[str], wins: np.ndarray) -> list[Rating]:
    """Bradley-Terry ratings, anchored on ``random`` when present, best first; none for one agent against itself."""
    distinct = {s if isinstance(s, str) else id(s) for s in specs}
    if len(distinct) < 2 and len(specs) <= 2:
        return []
    anchor = next((k for k, s in enumerate(specs) if spec_label(s) == "random"), 0)  # a RandomAgent too
    return sorted(bradley_terry(names, wins, anchor=anchor), key=lambda r: -r.elo)


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="deal", disable=not enabled, desc="duplicate deals", dynamic_ncols=True)


__all__ = ["Deal", "EvaluationResult", "PairResult", "SideStats", "Timing", "agent_seed", "evaluate", "make_deal",
           "play_round", "play_table", "run_chunk", "summarise_pair"]
