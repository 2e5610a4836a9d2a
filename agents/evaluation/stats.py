"""Statistics of duplicate results: Student's t interval of a mean and Bradley–Terry ratings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)
"""Elo points per unit of log strength (400 points: ten times the odds)."""


@dataclass
class Rating:
    agent: str
    elo: float
    se: float


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """``(mean, low, high, sd)``: Student's t interval of the mean (a point when all values agree)."""
    from scipy import stats

    values = np.asarray(values, float)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, float("nan"), float("nan"), float("nan")
    sd = float(values.std(ddof=1))
    if sd == 0.0:
        return mean, mean, mean, 0.0
    half = float(stats.t.ppf(0.5 + level / 2, len(values) - 1)) * sd / math.sqrt(len(values))
    return mean, mean - half, mean + half, sd


def bradley_terry(names: Sequence[str], wins: np.ndarray, anchor: int = 0, prior: float = 0.5,
                  iters: int = 10_000, tol: float = 1e-10) -> list[Rating]:
    """Bradley–Terry strengths from ``wins[i, j]`` (deals i won against j, ties as halves).

    Fitted with Hunter's MM updates; ``prior`` adds that many wins each way to
    every pair that met (a drawn pseudo-game keeps sweeps finite). Returned on
    the Elo scale (400·log10 strength ratio) with ``names[anchor]`` at 0.

    >>> r = bradley_terry(["a", "b"], np.array([[0, 75], [25, 0]]), prior=0)
    >>> round(r[1].elo - r[0].elo, 1)  # 75% for a is about 191 Elo
    -190.8
    """
    w = np.asarray(wins, float).copy()
    k = len(names)
    met = (w + w.T) > 0
    w = w + prior * met
    games = w + w.T
    p = np.ones(k)
    for _ in range(iters):
        total = w.sum(axis=1)
        denom = np.array([sum(games[i, j] / (p[i] + p[j]) for j in range(k) if j != i and games[i, j] > 0) for i in range(k)])
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1), p)
        new = new / np.exp(np.mean(np.log(np.maximum(new, 1e-300))))
        if np.max(np.abs(np.log(np.maximum(new, 1e-300)) - np.log(np.maximum(p, 1e-300)))) < tol:
            p = new
            break
        p = new
    theta = np.log(np.maximum(p, 1e-300))
    theta = theta - theta[anchor]
    # Fisher information of theta with theta[anchor] fixed at 0.
    info = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j and games[i, j] > 0:
                q = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
                v = games[i, j] * q * (1 - q)
                info[i, i] += v
                info[i, j] -= v
    keep = [i for i in range(k) if i != anchor]
    se = np.zeros(k)
    if keep:
        try:
            cov = np.linalg.inv(info[np.ix_(keep, keep)])
            se[keep] = np.sqrt(np.maximum(np.diag(cov), 0.0))
        except np.linalg.LinAlgError:
            se[keep] = float("nan")
    return [Rating(names[i], float(theta[i] * ELO_SCALE), float(se[i] * ELO_SCALE)) for i in range(k)]


@dataclass
class SeedSummary:
    """One recipe's duplicate score over training seeds: each seed's mean, and the recipe's."""

    means: list[float]
    """Each seed's mean difference per deal, in the order given."""
    mean: float
    """The mean of the seeds' means."""
    low: float
    """The lower end of Student's t interval of the recipe's mean over seeds (``len(means) - 1`` degrees of freedom)."""
    high: float
    """Its upper end."""
    sd: float
    """The standard deviation between seeds' means."""
    paired: tuple[float, float, float] | None
    """``(mean, low, high)`` over deals of the seeds' per-deal average: these networks on these deals
    (the deal noise alone); ``None`` unless every seed played the same deals."""


def over_seeds(diffs: Sequence[Sequence[float]], level: float = 0.95, same_deals: bool = True) -> SeedSummary:
    """Summarise per-deal differences of one recipe trained from several seeds (one sequence per seed).

    >>> s = over_seeds([[1.0, 3.0], [3.0, 5.0], [2.0, 4.0]])
    >>> s.means, s.mean, round(s.sd, 2), s.paired[0]
    ([2.0, 4.0, 3.0], 3.0, 1.0, 3.0)
    """
    if len(diffs) < 2:
        raise ValueError(f"over_seeds: diffs has {len(diffs)} seed(s); at least 2 are needed for a spread")
    means = [float(np.mean(d)) for d in diffs]
    mean, low, high, sd = t_interval(np.array(means), level)
    paired = None
    if same_deals and len({len(d) for d in diffs}) == 1:
        p_mean, p_low, p_high, _ = t_interval(np.mean(np.array(diffs, float), axis=0), level)
        paired = (p_mean, p_low, p_high)
    return SeedSummary(means, mean, low, high, sd, paired)
