"""A reference ladder: a fixed set of agents on a fixed deal suite, with published ratings on a pinned scale.

A researcher with a new agent plays it against every reference of a ladder on the ladder's own suite (duplicate
deals, :func:`agents.evaluation.evaluate`) and gets one number that means the same on any day: its Bradley–Terry
rating with the references held at their **published** ratings (stored in ``agents/evaluation/ladders/NAME.json``
with the commit and command that produced them). The scale is Elo's (400·log10 odds of winning a deal, a tie
counting half) with ``random`` at 0; because the references never move, ratings from different days and
different agents compare directly.

* :data:`LADDERS`: ``quick`` (the scripted agents, 150 deals a pair: a smoke test, run by CI) and ``full`` (the
  scripted agents and four pinned networks, 1,000 deals a pair: the one to cite).
* :func:`play_references` plays the references' round robin (to publish the ratings, or to check that a clone
  reproduces them); :func:`rate` rates new agents against them.

    python evaluate.py --ladder full --agents ppo:runs/mine/checkpoints/best.pt --workers 2   # rate an agent
    python evaluate.py --ladder quick                                                        # reproduce the ratings
    python evaluate.py --ladder full --publish --workers 2                                   # (maintainers) republish

>>> round(fixed_reference_rating(wins=[75.0], games=[100.0], reference_elos=[0.0], prior=0.0)[0], 1)  # 75% against a 0
190.8
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents.base import Agent
from agents.evaluation.duplicate import evaluate
from agents.evaluation.report import EvaluationResult, PairResult
from agents.evaluation.stats import ELO_SCALE as ELO
from agents.evaluation.stats import Rating
from agents.registry import spec_label

LADDER_DIR = Path(__file__).resolve().parent / "ladders"
"""Where the published ratings live (package data: they install with ``pcr``)."""

PRIOR = 0.5
"""Drawn pseudo-deals added each way to every pair, as in :func:`~agents.evaluation.stats.bradley_terry` (a sweep
stays finite)."""


@dataclass(frozen=True)
class Ladder:
    """A ladder's definition: its references (agent specs whose files never change), deals per pair and seed."""

    name: str
    references: tuple[str, ...]
    deals: int
    seed: int
    anchor: str = "random"

    @property
    def published_path(self) -> Path:
        return LADDER_DIR / f"{self.name}.json"


LADDERS = {
    "quick": Ladder("quick", ("random", "greedy", "heuristic"), deals=150, seed=20_261_207),
    "full": Ladder("full", ("random", "greedy", "heuristic", "ppo:pretrained/ppo_hour.pt", "ppo:pretrained/ppo_run3.pt",
                            "ppo:pretrained/ppo_pretrained_2026-12-03.pt"),
                   deals=1000, seed=20_261_208),
}


@dataclass(frozen=True)
class LadderRating:
    """One agent's rating on a ladder: the 95% interval is ±1.96 standard errors (the references held fixed)."""

    agent: str
    elo: float
    se: float
    pairs: tuple[PairResult, ...]

    @property
    def ci95(self) -> tuple[float, float]:
        return self.elo - 1.96 * self.se, self.elo + 1.96 * self.se


def get_ladder(name: str) -> Ladder:
    if name not in LADDERS:
        raise ValueError(f"ladder {name!r} is not allowed: allowed {sorted(LADDERS)}")
    return LADDERS[name]


def load_published(ladder: Ladder) -> dict[str, Any]:
    """The published file of ``ladder``: ``ratings`` ({agent: {elo, se}}), ``commit``, ``command``, ``date``, ..."""
    if not ladder.published_path.is_file():
        raise FileNotFoundError(f"ladder {ladder.name!r} has no published ratings ({ladder.published_path}): run "
                                f"python evaluate.py --ladder {ladder.name} --publish")
    published = json.loads(ladder.published_path.read_text())
    if tuple(published["references"]) != ladder.references or published["deals"] != ladder.deals \
            or published["seed"] != ladder.seed:
        raise ValueError(f"{ladder.published_path} was published for another definition of ladder {ladder.name!r}")
    return published


def play_references(ladder: Ladder, **evaluate_kwargs: Any) -> EvaluationResult:
    """The references' round robin on the ladder's suite (ratings with ``random`` at 0)."""
    return evaluate(list(ladder.references), deals=ladder.deals, seed=ladder.seed, **evaluate_kwargs)


def reference_ratings(result: EvaluationResult) -> dict[str, Rating]:
    return {r.agent: r for r in result.ratings}


def publish(ladder: Ladder, result: EvaluationResult, command: str) -> Path:
    """Write the ratings of ``result`` (:func:`play_references`) as the ladder's published file."""
    ratings = reference_ratings(result)
    data = {"ladder": ladder.name, "references": list(ladder.references), "deals": ladder.deals, "seed": ladder.seed,
            "scale": f"Elo (400 log10 odds of winning a duplicate deal, a tie counting half), {ladder.anchor} = 0",
            "ratings": {a: {"elo": round(ratings[a].elo, 2), "se": round(ratings[a].se, 2)} for a in ladder.references},
            "pairs": [{"a": p.agent_a, "b": p.agent_b, "mean_diff": round(p.mean_diff, 4),
                       "ci95": [round(x, 4) for x in p.ci95], "score_share": round(p.score_share, 4)}
                      for p in result.pairs],
            "commit": _commit(), "command": command, "date": date.today().isoformat()}
    ladder.published_path.parent.mkdir(parents=True, exist_ok=True)
    ladder.published_path.write_text(json.dumps(data, indent=1) + "\n")
    return ladder.published_path


def reproduced(ladder: Ladder, result: EvaluationResult) -> list[tuple[str, float, float, float, bool]]:
    """Per reference: ``(agent, published elo, its 95% half-width, elo now, within the published interval)``."""
    published = load_published(ladder)["ratings"]
    now = reference_ratings(result)
    return [(a, published[a]["elo"], 1.96 * published[a]["se"], now[a].elo,
             abs(now[a].elo - published[a]["elo"]) <= 1.96 * published[a]["se"] + 1e-6) for a in ladder.references]


def fixed_reference_rating(wins: Sequence[float], games: Sequence[float], reference_elos: Sequence[float],
                           prior: float = PRIOR) -> tuple[float, float]:
    """``(elo, se)`` of one agent that won ``wins[j]`` of ``games[j]`` deals against references at ``reference_elos``,
    by maximum likelihood with the references held fixed (Newton's method; ``prior`` drawn deals each way)."""
    w = np.asarray(wins, float) + prior
    n = np.asarray(games, float) + 2 * prior
    ref = np.asarray(reference_elos, float) / ELO
    theta = float(np.average(ref, weights=n))
    for _ in range(200):
        q = 1.0 / (1.0 + np.exp(ref - theta))
        gradient, information = float((w - n * q).sum()), float((n * q * (1 - q)).sum())
        step = gradient / information
        theta += max(-2.0, min(2.0, step))
        if abs(step) < 1e-12:
            break
    q = 1.0 / (1.0 + np.exp(ref - theta))
    return theta * ELO, ELO / math.sqrt(float((n * q * (1 - q)).sum()))


def rate(ladder: Ladder, agents: Sequence[str | Agent], **evaluate_kwargs: Any) -> list[LadderRating]:
    """Each of ``agents`` against every reference on the ladder's suite, rated with the references at their
    published ratings."""
    published = load_published(ladder)["ratings"]
    out = []
    for agent in agents:
        specs = [agent, *ladder.references]
        result = evaluate(specs, deals=ladder.deals, seed=ladder.seed,
                          pairs=[(0, k) for k in range(1, len(specs))], **evaluate_kwargs)
        wins = [p.deals * p.score_share for p in result.pairs]
        elo, se = fixed_reference_rating(wins, [p.deals for p in result.pairs],
                                         [published[ref]["elo"] for ref in ladder.references])
        out.append(LadderRating(spec_label(agent), elo, se, tuple(result.pairs)))
    return out


def ladder_table(ladder: Ladder, rated: Sequence[LadderRating]) -> str:
    """The rated agents among the references (published ratings), best first, as a markdown table."""
    published = load_published(ladder)
    rows = [(r["elo"], a, f"{r['elo']:.0f}", f"[{r['elo'] - 1.96 * r['se']:.0f}, {r['elo'] + 1.96 * r['se']:.0f}]",
             "reference (published)", "") for a, r in published["ratings"].items()]
    for r in rated:
        lo, hi = r.ci95
        against = ", ".join(f"{p.agent_b} {p.mean_diff:+.2f}" for p in r.pairs)
        rows.append((r.elo, r.agent, f"{r.elo:.0f}", f"[{lo:.0f}, {hi:.0f}]", "rated now", against))
    lines = [f"Ladder {ladder.name!r}: {len(ladder.references)} references, {ladder.deals} duplicate deals a pair, "
             f"seed {ladder.seed}; Elo scale, {ladder.anchor} = 0; references published at commit "
             f"{published['commit']} by `{published['command']}` ({published['date']}).", "",
             "| agent | rating | 95% interval | | points per deal against each reference |", "|---|---|---|---|---|"]
    lines += [f"| {a} | {e} | {ci} | {kind} | {against} |" for _, a, e, ci, kind, against in sorted(rows, key=lambda r: -r[0])]
    return "\n".join(lines)


def _commit() -> str:
    """The repository's commit (with ``+changes`` when the work tree differs), or ``unknown`` outside git."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


__all__ = ["LADDERS", "LADDER_DIR", "Ladder", "LadderRating", "fixed_reference_rating", "get_ladder", "ladder_table",
           "load_published", "play_references", "publish", "rate", "reference_ratings", "reproduced"]
