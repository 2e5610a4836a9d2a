"""What a new batch shape costs a CPU bfloat16 matrix product, and what padding to a few sizes saves.

oneDNN (torch's CPU bfloat16 products) compiles a kernel for each new shape and caches it. The trainer's batches
come in ever new sizes (a minibatch of the trainable decisions, the legal cards of a batch), so it pays that
compilation again and again unless the rows are padded to :func:`agents.ppo.shapes.padded_size`. For each layer
shape of the card-aware network and a range of row counts like the trainer's, this times one ``nn.Linear`` in
bfloat16 on a sequence of distinct row counts (every one new), then on the same row counts padded (a few sizes,
compiled on first use), then on the padded sizes again (all cached), and prints the median per call.

    python benchmarks/speed/padded_shapes.py
    python benchmarks/speed/padded_shapes.py --calls 200

One torch thread; run it on an idle machine. Run-to-run noise is about 10%, the differences here are larger.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from agents.ppo.shapes import padded_size  # noqa: E402

CASES = (
    # (what, in features, out features, fewest rows, most rows): the card-aware network's layers, trainer-like rows
    ("card scorer, rollout step (legal held cards)", 31, 64, 100, 600),
    ("card scorer, update minibatch", 64, 64, 8_000, 16_000),
    ("actor trunk, rollout step (learner rows)", 836, 256, 40, 130),
    ("critic, update minibatch", 1369, 256, 2_000, 3_000),
)


def per_call_us(layer: torch.nn.Linear, rows: list[int]) -> float:
    """Median microseconds of ``layer`` on a bfloat16 batch of each row count, in order."""
    batches = [torch.randn(n, layer.in_features, dtype=torch.bfloat16) for n in rows]
    times = []
    with torch.no_grad():
        for x in batches:
            start = time.perf_counter()
            layer(x)
            times.append(time.perf_counter() - start)
    return 1e6 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100, help="distinct row counts per case")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{'case':48s} {'new shapes':>11s} {'padded':>9s} {'cached':>9s} {'distinct padded':>16s}")
    for what, fan_in, fan_out, low, high in CASES:
        layer = torch.nn.Linear(fan_in, fan_out).to(torch.bfloat16)
        step = max(1, (high - low) // args.calls)
        rows = list(range(low, high, step))[:args.calls]
        # Row counts no earlier case used, so the first pass meets every shape for the first time.
        exact = per_call_us(layer, rows)
        padded_rows = [padded_size(n) for n in rows]
        padded = per_call_us(layer, padded_rows)
        cached = per_call_us(layer, padded_rows)
        print(f"{what:48s} {exact:9.0f} us {padded:7.0f} us {cached:7.0f} us {len(set(padded_rows)):16d}")


if __name__ == "__main__":
    main()
