"""The sparse-aware first layer (``agents.ppo.sparse_linear``) against a dense ``nn.Linear``, same process.

Inputs are real critic inputs (``VectorEnv.state()`` of random play, ~7% non-zero). Two timings
per batch size, each the median of ``--repeats`` calls, in float32 on one thread:

* *acting*: the actor's forward pass without gradients (``PPOAgent.act_batch``, search rollouts);
  the layer's own choice of path, so small batches show the dense path it falls back to under
  ``MIN_ROWS``, and the table says which path ran;
* *update*: actor and critic forward and backward through ``train.network_outputs`` (the PPO
  minibatch step; the non-zeros found once for both networks), against the same network with
  dense first layers.

    python benchmarks/speed/sparse_layer.py
    python benchmarks/speed/sparse_layer.py --sizes 256 1024 5000 --repeats 9

The ratio column is dense time / sparse time (above 1: the sparse layer is faster). Run it on
an idle machine; a figure from another machine or day is not comparable.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import train  # noqa: E402
from agents.ppo import sparse_linear  # noqa: E402
from agents.ppo.network import ActorCritic, log_probs  # noqa: E402
from pcr_env.vector import VectorEnv  # noqa: E402


def real_inputs(rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` critic inputs and legal masks from random play of 256 games."""
    venv = VectorEnv(256, seed=0)
    _, masks, _ = venv.reset()
    rng = np.random.default_rng(0)
    states, legal = [], []
    while sum(len(s) for s in states) < rows:
        states.append(venv.state().copy())
        legal.append(masks.astype(bool))
        _, masks, _, _, _, _ = venv.step((rng.random(masks.shape) * masks).argmax(1))
    return torch.from_numpy(np.concatenate(states)[:rows]), torch.from_numpy(np.concatenate(legal)[:rows])


def dense_twin(model: ActorCritic) -> ActorCritic:
    """The same weights with plain ``nn.Linear`` first layers."""
    twin = ActorCritic(model.obs_dim, model.state_dim, model.num_actions, model.config)
    twin.load_state_dict(model.state_dict())
    for net in (twin.actor, twin.critic):
        first = nn.Linear(net[0].in_features, net[0].out_features)
        first.load_state_dict(net[0].state_dict())
        net[0] = first
    return twin


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 256, 1024, 2048, 5000])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    sparse = ActorCritic(797, 1369)
    dense = dense_twin(sparse)
    x_all, m_all = real_inputs(max(args.sizes))
    compute = train.Compute(torch.device("cpu"), torch.float32)
    print(f"non-zero share of the inputs: {(x_all != 0).float().mean():.3f}; MIN_ROWS = {sparse_linear.MIN_ROWS}")
    print(f"{'rows':>6s} {'acting dense':>13s} {'acting ours':>12s} {'path':>7s} {'ratio':>6s} "
          f"{'update dense':>13s} {'update ours':>12s} {'ratio':>6s}")

    def update(model: ActorCritic, x: torch.Tensor, m: torch.Tensor) -> None:
        model.zero_grad()
        logits, value = train.network_outputs(model, compute, x, m, True)
        (log_probs(logits).max(1).values.sum() + (value ** 2).sum()).backward()

    for rows in args.sizes:
        x, m = x_all[:rows], m_all[:rows]
        obs = x[:, :797].contiguous()
        with torch.no_grad():
            act_dense = median_ms(lambda: dense.actor(obs), args.repeats)
            act_ours = median_ms(lambda: sparse.actor(obs), args.repeats)
        path = "sparse" if sparse_linear.sparse_pays(obs) else "dense"
        upd_dense = median_ms(lambda: update(dense, x, m), args.repeats)
        upd_ours = median_ms(lambda: update(sparse, x, m), args.repeats)
        print(f"{rows:6d} {act_dense:11.3f}ms {act_ours:10.3f}ms {path:>7s} {act_dense / act_ours:6.2f} "
              f"{upd_dense:11.2f}ms {upd_ours:10.2f}ms {upd_dense / upd_ours:6.2f}")


if __name__ == "__main__":
    main()
