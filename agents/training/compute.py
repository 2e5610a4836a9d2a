"""Where the network runs and in which precision, and its forward passes during training.

>>> import torch
>>> resolve_compute("cpu", "float32")
Compute(device=device(type='cpu'), dtype=torch.float32)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.ppo.network import ActorCritic, ValueNorm, log_probs, sample_actions
from agents.ppo.shapes import padded_size
from agents.ppo.sparse_linear import sparse_pays, sparse_rows


@dataclass(frozen=True)
class Compute:
    """Where the network runs and the precision of its matrix products (``Config.device``, ``Config.precision``)."""

    device: torch.device
    dtype: torch.dtype = torch.float32

    def autocast(self) -> torch.autocast:
        """Mixed precision around forward passes (a no-op in float32); take ``.float()`` of the outputs."""
        return torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype != torch.float32)

    @property
    def pads(self) -> bool:
        """Whether batches are padded to :func:`agents.ppo.shapes.padded_size` rows: on the CPU in bfloat16, where
        oneDNN builds a kernel for every new shape."""
        return self.device.type == "cpu" and self.dtype == torch.bfloat16

    def describe(self) -> dict[str, str]:
        """What ``auto`` resolved to on this machine (logged at the start of a run)."""
        return {"device": str(self.device), "precision": str(self.dtype).removeprefix("torch.")}


def native_bfloat16(device: torch.device) -> bool:
    """Whether bfloat16 matrix products are native (fast) on ``device``, not emulated."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()


def resolve_compute(device: str, precision: str) -> Compute:
    """``Config.device`` and ``Config.precision`` resolved for this machine (``auto`` decided here)."""
    dev = resolve_device(device)
    if precision == "auto":
        precision = "bfloat16" if native_bfloat16(dev) else "float32"
    return Compute(dev, torch.bfloat16 if precision == "bfloat16" else torch.float32)


def resolve_device(name: str) -> torch.device:
    """``auto``/``cpu``/``cuda``/``cuda:N``; under torchrun, plain ``cuda`` is the GPU of the process's
    ``LOCAL_RANK`` (one GPU per process on a machine with several)."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"config key 'device' = {name!r}: CUDA is not available on this machine (use 'auto' or 'cpu')")
    if name == "cuda" and "LOCAL_RANK" in os.environ:
        return torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    return torch.device(name)


def network_outputs(model: ActorCritic, compute: Compute, x: torch.Tensor, mask: torch.Tensor,
                    central: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Masked logits ``[B, A]`` and values ``[B]`` of input rows ``x`` (:meth:`ActorCritic.rollout_inputs`), as float32;
    the matrix products run in ``compute``'s precision, on rows padded to :func:`padded_size` where ``compute.pads``
    (copies of the first row, their outputs dropped: the real rows' values are the same)."""
    n = len(x)
    size = padded_size(n) if compute.pads else n
    if size == n:
        return _network_outputs(model, compute, x, mask, central)
    logits, value = _network_outputs(model, compute, torch.cat([x, x[:1].expand(size - n, -1)]),
                                     torch.cat([mask, mask[:1].expand(size - n, -1)]), central)
    return logits[:n], value[:n]


def minibatch_outputs(model: ActorCritic, compute: Compute, t: dict[str, torch.Tensor],
                      mb: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`network_outputs` of minibatch ``mb`` of a :meth:`SeatRollout.batch` (as tensors): its rows gathered
    from the storage grid already padded (repeats of the first), so nothing more is copied."""
    size = padded_size(len(mb)) if compute.pads else len(mb)
    rows = np.concatenate([mb, np.repeat(mb[:1], size - len(mb))])
    x = t["inputs"].index_select(0, t["input_rows"][rows]).to(compute.device)
    logits, value = network_outputs(model, compute, x, t["masks"][rows].to(compute.device), model.config.central_critic)
    return logits[:len(mb)], value[:len(mb)]


def _network_outputs(model: ActorCritic, compute: Compute, x: torch.Tensor, mask: torch.Tensor,
                     central: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`network_outputs` of exactly the rows given."""
    x, packed = model.split_rollout_inputs(x)
    if packed is None and compute.dtype == torch.float32 and sparse_pays(x) and model.sparse_input:
        # Both first layers are sparse-aware (agents.ppo.sparse_linear): find the non-zeros once for both.
        x = sparse_rows(x)
        obs = x.leading_columns(model.obs_dim)
    else:
        # The observation is the state's first columns: cast once for actor and critic (autocast would cast each
        # first layer's input on its own, to the same values).
        x = x.to(compute.dtype)
        obs = x[:, :model.obs_dim]
    with compute.autocast():
        logits = model.masked_logits(obs, mask, packed, pad=compute.pads)
        value = model.value(x if central else obs)
    return logits.float(), value.float()


def network_actions(model: ActorCritic, value_norm: ValueNorm, inputs: np.ndarray, legal: np.ndarray,
                    generator: torch.Generator, compute: Compute) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sampled actions, their log-probabilities and the value estimates, one forward pass for all rows."""
    with torch.no_grad():
        x = torch.from_numpy(inputs).to(compute.device)
        m = torch.from_numpy(legal).to(compute.device)
        logits, value = network_outputs(model, compute, x, m, model.config.central_critic)
        logp_all = log_probs(logits)
        a = sample_actions(logp_all, generator)
        logp = logp_all.gather(1, a[:, None]).squeeze(1).cpu().numpy()
        values = value_norm.denormalize(value).cpu().numpy()
    return a.cpu().numpy(), logp, values


def optimizer_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, workers: Any, max_grad_norm: float) -> float:
    """Average the gradients over workers, clip their global norm, step; returns the norm before clipping.

    A worker with an empty minibatch calls it too (with zero gradients): every worker joins every collective.
    """
    workers.average_gradients(model.parameters())
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm).item()
    optimizer.step()
    return grad_norm


def minibatches(rng: np.random.Generator, n: int, count: int) -> list[np.ndarray]:
    """A random split of ``n`` rows into ``count`` minibatches (some empty when ``n < count``)."""
    return np.array_split(rng.permutation(n), count)


__all__ = ["Compute", "optimizer_step", "minibatches", "native_bfloat16", "resolve_compute", "resolve_device",
           "minibatch_outputs", "network_outputs", "network_actions"]
