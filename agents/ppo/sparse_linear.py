"""A linear layer for mostly-zero inputs: it multiplies only the non-zero entries.

The network's inputs are the observation and state encodings of :mod:`pcr_env.observation`:
one-hot and bit-field slices, about 7% non-zero (53 of 797 observation entries, 92 of 1369
state entries in random play). A dense first layer spends more than nine tenths of its
multiply-adds on zeros, and the two first layers hold about four fifths of the network's
arithmetic. On the CPU, :class:`SparseInputLinear` gathers the weight rows of the non-zero
inputs instead (``torch.nn.functional.embedding_bag`` with the inputs' values as per-sample
weights), and its backward pass sums the output gradient into those rows only. It is the same
linear map as :class:`torch.nn.Linear` (up to float rounding: the sums run over the non-zero
terms, in another order), with the same parameters and ``state_dict``, so checkpoints do not
change. Elsewhere it is a plain ``nn.Linear``: on a GPU, in another dtype or under bfloat16
autocast (a dense bfloat16 product beat it on a CPU with AVX512-BF16), for an input that needs a
gradient, and for batches under :data:`MIN_ROWS` rows (acting one decision at a time).

Finding the non-zero entries costs about as much as the layer itself, so a caller that feeds
the same rows to two layers (the trainer: the actor reads the observation, which is the first
columns of the critic's state input) finds them once with :func:`sparse_rows` and passes the
:class:`SparseRows` (``.leading_columns(k)`` for the observation part).

>>> import torch
>>> layer = SparseInputLinear(6, 3)
>>> x = torch.tensor([[0.0, 1.0, 0.0, 0.0, 0.5, 0.0], [0.0] * 6])
>>> torch.allclose(layer(sparse_rows(x)), torch.nn.functional.linear(x, layer.weight, layer.bias), atol=1e-6)
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SparseRows(NamedTuple):
    """The non-zero entries of a 2-D float32 CPU tensor, row-major (``rows`` non-decreasing)."""

    rows: torch.Tensor
    cols: torch.Tensor
    values: torch.Tensor
    shape: tuple[int, int]

    def leading_columns(self, k: int) -> SparseRows:
        """The same rows restricted to columns ``[0, k)`` (``x[:, :k]``)."""
        if k >= self.shape[1]:  # the whole row (the critic reads the observation alone): nothing to drop
            return self
        keep = self.cols < k
        return SparseRows(self.rows[keep], self.cols[keep], self.values[keep], (self.shape[0], k))

    def dense(self) -> torch.Tensor:
        out = torch.zeros(self.shape, dtype=self.values.dtype)
        out[self.rows, self.cols] = self.values
        return out


def sparse_rows(x: torch.Tensor) -> SparseRows:
    """The non-zero entries of ``x`` (2-D, float32, CPU)."""
    if x.dim() != 2 or x.device.type != "cpu" or x.dtype != torch.float32:
        raise ValueError(f"sparse_rows: x must be a 2-D float32 CPU tensor, got {tuple(x.shape)} {x.dtype} on {x.device}")
    x = x.detach().contiguous()
    flat = torch.from_numpy(np.flatnonzero(x.numpy()))
    n_cols = x.shape[1]
    return SparseRows(flat // n_cols, flat % n_cols, x.view(-1)[flat], (x.shape[0], n_cols))


MIN_ROWS = 512
"""Fewer rows than this take the dense path: the sparse one has a fixed cost per call (finding the
non-zeros, transposing the weight) that a small batch does not repay (``benchmarks/speed/sparse_layer.py``,
float32 on one AVX2 core: the actor's forward pass 0.82x dense at 256 rows, 1.03x at 512, 1.29x at
5,000; a PPO step through actor and critic 1.15x, 1.34x and 1.54x)."""


def sparse_pays(x: torch.Tensor) -> bool:
    """Whether the sparse path is the faster one for dense input ``x``: a 2-D float32 CPU batch of at least
    :data:`MIN_ROWS` rows that needs no gradient, outside CPU autocast (a bfloat16 dense product is faster)."""
    return (x.device.type == "cpu" and x.dim() == 2 and x.dtype == torch.float32 and x.shape[0] >= MIN_ROWS
            and not x.requires_grad and not torch.is_autocast_enabled("cpu"))


def _bag_offsets(sorted_ids: torch.Tensor, bags: int) -> torch.Tensor:
    """Start of each bag in ``sorted_ids`` (non-decreasing bag ids in ``[0, bags)``), empty bags included."""
    counts = torch.bincount(sorted_ids, minlength=bags)
    return torch.cumsum(counts, 0) - counts


class _SparseRowsLinear(torch.autograd.Function):
    """``x @ weight.T + bias`` over the non-zero entries of ``x`` (given as rows, cols, values)."""

    @staticmethod
    def forward(ctx: Any, rows: torch.Tensor, cols: torch.Tensor, values: torch.Tensor, n_rows: int, n_cols: int,
                weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        with torch.autocast("cpu", enabled=False):  # float32 sums, whatever precision the layers after it use
            out = F.embedding_bag(cols, weight.t().contiguous(), _bag_offsets(rows, n_rows), mode="sum",
                                  per_sample_weights=values)
        ctx.save_for_backward(rows, cols, values)
        ctx.n_cols, ctx.has_bias = n_cols, bias is not None
        return out if bias is None else out + bias

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[Any, ...]:
        rows, cols, values = ctx.saved_tensors
        grad_weight = grad_bias = None
        if ctx.needs_input_grad[5]:
            # grad_weight.T[j] = sum over the rows b where x[b, j] != 0 of x[b, j] * grad_out[b]:
            # the same gather-and-sum with the non-zeros grouped by column instead of by row
            # (numpy's stable argsort of 16-bit keys is a radix sort, three times torch's here).
            key = np.int16 if ctx.n_cols <= np.iinfo(np.int16).max else np.int64
            order = torch.from_numpy(np.argsort(cols.numpy().astype(key), kind="stable"))
            with torch.autocast("cpu", enabled=False):
                grad_weight = F.embedding_bag(rows[order], grad_out.float().contiguous(),
                                              _bag_offsets(cols[order], ctx.n_cols), mode="sum",
                                              per_sample_weights=values[order]).t()
        if ctx.has_bias and ctx.needs_input_grad[6]:
            grad_bias = grad_out.sum(0)
        return None, None, None, None, None, grad_weight, grad_bias


class SparseInputLinear(nn.Linear):
    """:class:`torch.nn.Linear` that skips the zero entries of its input on the CPU (module docstring).

    ``forward`` takes a dense tensor or the :class:`SparseRows` of one.
    """

    def forward(self, x: torch.Tensor | SparseRows) -> torch.Tensor:
        if isinstance(x, SparseRows):
            if x.shape[1] != self.in_features:
                raise ValueError(f"SparseInputLinear: input has {x.shape[1]} columns, the layer takes {self.in_features}")
            if self.weight.device.type != "cpu" or self.weight.dtype != torch.float32 or x.shape[0] == 0:
                return super().forward(x.dense().to(self.weight))
        elif not sparse_pays(x) or self.weight.dtype != torch.float32 or self.weight.device.type != "cpu":
            return super().forward(x)
        else:
            x = sparse_rows(x)
        return _SparseRowsLinear.apply(x.rows, x.cols, x.values, x.shape[0], x.shape[1], self.weight, self.bias)
