"""Batch sizes rounded up to a few buckets, so that CPU bfloat16 matrix products reuse their kernels.

oneDNN, which runs torch's bfloat16 matrix products on the CPU, compiles a kernel for every new shape and caches
it (0.4-1.1 ms a new shape on the project's machine: ``benchmarks/speed/padded_shapes.py``). A trainer's batches
come in every size (a rollout step's learner rows, the legal cards in hand, a minibatch), so its callers pad the
rows to :func:`padded_size` (at most 1/8 more, eight sizes per doubling) and drop the padding rows' outputs; the
real rows' values are unchanged.

>>> [padded_size(n) for n in (0, 1, 16, 17, 100, 129, 2500, 12500)]
[0, 16, 16, 32, 112, 144, 2560, 13312]
"""

from __future__ import annotations

MIN_BUCKET = 16
"""The smallest padded size and the step below 128 rows."""


def padded_size(n: int) -> int:
    """``n`` rounded up to a multiple of ``max(16, 2 ** (bit_length(n) - 4))`` (0 stays 0)."""
    if n <= 0:
        return 0
    step = max(MIN_BUCKET, 1 << max(n.bit_length() - 4, 0))
    return -(-n // step) * step
