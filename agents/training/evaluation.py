"""Duplicate evaluation of the network being trained, from memory (no file is written).

The policy is rebuilt from the checkpoint dict exactly as ``ppo:PATH`` would load it (same
weights, rules and greedy setting), so the figures equal ``evaluate.py --agents ppo:best.pt ...``
on the same seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.ppo import PPOAgent

EVAL_TAGS = (("score_diff", "mean"), ("ci_low", "ci_low"), ("ci_high", "ci_high"), ("win_rate", "win_rate"),
             ("bid_rate", "bid_rate"), ("make_rate", "make_rate"))
"""TensorBoard tags ``eval/<opponent>_<tag>`` and the result field each one shows."""


def evaluate_checkpoint(ckpt: dict[str, Any], opponents: Sequence[str], deals: int, seed: int) -> dict[str, dict[str, float]]:
    """Per opponent spec: the mean score difference per deal (the checkpoint's team minus the opponent's,
    mean of the two duplicate tables), its 95% interval, the share of deals won, bid and make rates."""
    from agents import evaluation

    agent = PPOAgent.from_checkpoint(ckpt, source="the network being trained")
    rules = agent.rules
    result = evaluation.evaluate([agent, *opponents], deals=deals, seed=seed, episode="round", workers=1,
                                 progress=False, rules=rules, pairs=[(0, j + 1) for j in range(len(opponents))])
    return {spec: {"mean": pair.mean_diff, "ci_low": pair.ci95[0], "ci_high": pair.ci95[1],
                   "win_rate": pair.win_rate, "deals": float(pair.deals),
                   "bid_rate": pair.a.get("bid_rate", float("nan")), "make_rate": pair.a.get("make_rate", float("nan"))}
            for spec, pair in zip(opponents, result.pairs)}


__all__ = ["EVAL_TAGS", "evaluate_checkpoint"]
