"""Data-parallel training over worker processes (torch.distributed, gloo backend, CPU).

Each worker process runs its share of the games and computes gradients on its
own decisions; gradients are averaged across workers before every optimiser
step, so all workers hold identical weights. With one worker every method here
is a no-op and nothing of torch.distributed is touched. On this project's
two-core machines ``num_workers: 2`` uses both cores while each process keeps a
single torch thread (several threads per process measured 40-70x slower here).

>>> w = Workers(rank=0, world_size=1)
>>> w.is_main, w.sum([1.0, 2.0]).tolist(), w.gather("x")
(True, [1.0, 2.0], ['x'])
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import torch
import torch.distributed as dist


class Workers:
    """This process's rank among ``world_size`` data-parallel workers."""

    def __init__(self, rank: int = 0, world_size: int = 1, init_file: str | None = None):
        self.rank, self.world_size = rank, world_size
        if world_size > 1:
            if init_file is None:
                raise ValueError("several workers need an init_file to rendezvous")
            dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def average_gradients(self, params: Iterable[torch.nn.Parameter]) -> None:
        """Replace every gradient by its mean over workers (one all-reduce of a flat buffer).

        The buffer holds every parameter, a missing gradient as zeros, so its size is the
        same on every worker whatever each one's minibatch touched.
        """
        if self.world_size == 1:
            return
        params = [p for p in params if p.requires_grad]
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        dist.all_reduce(flat)
        flat /= self.world_size
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p.grad))
            offset += p.numel()

    def sum(self, values: Any) -> np.ndarray:
        """Element-wise sum of a float array over workers (float64)."""
        arr = np.asarray(values, np.float64)
        if self.world_size == 1:
            return arr
        t = torch.from_numpy(arr.copy())
        dist.all_reduce(t)
        return t.numpy()

    def any(self, flag: bool) -> bool:
        return bool(self.sum([float(flag)])[0] > 0)

    def gather(self, obj: Any) -> list[Any]:
        """Every worker's ``obj``, in rank order (on every worker)."""
        if self.world_size == 1:
            return [obj]
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()

    def close(self) -> None:
        if self.world_size > 1 and dist.is_initialized():
            dist.destroy_process_group()


__all__ = ["Workers"]
