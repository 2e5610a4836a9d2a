"""The statistics of a PPO update, reduced over workers in one fixed-length vector (``train.ppo_update``'s summary)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pcr_env.engine import PHASE_NAMES, Phase

LOSS_STATS = ("policy_loss", "value_loss", "entropy", "old_approx_kl", "approx_kl", "clipfrac", "grad_norm")
"""Loss statistics of a PPO update, in the order they are reduced over workers."""


def update_summary(sums: np.ndarray, weight: float, phase_entropy: np.ndarray, phase_count: np.ndarray,
                   batch: dict[str, np.ndarray], workers: Any) -> dict[str, float]:
    """Loss statistics, entropy per phase and the critic's explained variance, reduced over workers
    in one fixed-length vector (explained variance from moments: n, sum y, sum y^2, sum e, sum e^2)."""
    y, pred = batch["returns"].astype(np.float64), batch["values"].astype(np.float64)
    e = y - pred
    moments = [len(y), y.sum(), (y * y).sum(), e.sum(), (e * e).sum()]
    total = workers.sum(np.concatenate([sums, [weight], phase_entropy, phase_count, moments]))
    k, n_phases = len(LOSS_STATS), len(Phase)
    g_sums, g_weight = total[:k], total[k]
    g_phase_entropy, g_phase_count = total[k + 1:k + 1 + n_phases], total[k + 1 + n_phases:k + 1 + 2 * n_phases]
    count, sy, syy, se, see = total[k + 1 + 2 * n_phases:]
    out = {name: float(v / g_weight) if g_weight else float("nan") for name, v in zip(LOSS_STATS, g_sums)}
    for i, name in enumerate(PHASE_NAMES):
        if g_phase_count[i] > 0:
            out[f"entropy_{name}"] = float(g_phase_entropy[i] / g_phase_count[i])
    var_y = syy / count - (sy / count) ** 2 if count else 0.0
    var_e = see / count - (se / count) ** 2 if count else 0.0
    out["explained_variance"] = float("nan") if var_y <= 1e-12 else float(1 - var_e / var_y)
    return out


__all__ = ["LOSS_STATS", "update_summary"]
