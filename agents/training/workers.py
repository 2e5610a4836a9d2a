"""Data-parallel training over worker processes (torch.distributed, gloo backend, CPU).

Workers meet in one of two ways: ``train.py`` with ``num_workers: N`` spawns N processes on
this machine that rendezvous through a file in the run directory; under ``torchrun``
(one machine or many) every process is launched by torchrun and meets the others through
its ``env://`` variables (``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``):
:meth:`Workers.from_environment`. Rank ``r`` seeds its games the same way either way, so a
run gives the same weights for the same total worker count and seed.

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

import hashlib
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import torch
import torch.distributed as dist


def launched_by_torchrun() -> bool:
    """True in a process that ``torchrun`` started (it sets the ``env://`` variables)."""
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))


class Workers:
    """This process's rank among ``world_size`` data-parallel workers."""

    def __init__(self, rank: int = 0, world_size: int = 1, init_file: str | None = None):
        self.rank, self.world_size = rank, world_size
        if world_size > 1:
            if init_file is None:
                raise ValueError("several workers need an init_file to rendezvous")
            dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)

    @classmethod
    def from_environment(cls) -> "Workers":
        """This process's place in a ``torchrun`` launch (``env://`` rendezvous)."""
        world = int(os.environ["WORLD_SIZE"])
        rank = int(os.environ["RANK"])
        workers = cls.__new__(cls)
        workers.rank, workers.world_size = rank, world
        if world > 1:
            dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
        return workers

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

    def broadcast(self, obj: Any) -> Any:
        """The main worker's ``obj`` on every worker (the others pass anything, e.g. ``None``)."""
        if self.world_size == 1:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def same_weights(self, params: Iterable[torch.Tensor]) -> bool:
        """True when every worker holds bit-identical ``params`` (compares SHA-256 digests)."""
        h = hashlib.sha256()
        for p in params:
            h.update(p.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        digests = self.gather(h.hexdigest())
        return len(set(digests)) == 1

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()

    def close(self, clean: bool = True) -> None:
        """Leave the group once every worker is done: a barrier first, so no collective is still in
        flight on a peer when the group is torn down (gloo aborts the process otherwise). After an error
        (``clean=False``) a peer may wait in a collective this worker never joins: no barrier, nothing
        torn down, so the error ends the process and the launcher stops the others."""
        if clean and self.world_size > 1 and dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()


def exit_worker() -> None:
    """End a worker process that finished cleanly without the interpreter's teardown, where gloo's
    background threads can still abort the process (``terminate called without an active exception``)
    after all work is done and saved."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def worker_error(err: BaseException, names: tuple[str, ...] = ("TrainingError", "CheckpointError", "ValueError")) -> str | None:
    """The one-line message of a known error raised in a spawned worker (its traceback's last line)."""
    lines = [ln for ln in str(err).strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return next((last.split(f"{name}: ", 1)[1] for name in names if f"{name}: " in last), None)


def spawn(fn: Callable[..., None], nprocs: int, args: tuple[Any, ...], rendezvous: Path, prog: str) -> None:
    """Run ``fn(rank, *args)`` in ``nprocs`` processes of this machine that meet at the file ``rendezvous``;
    a known error raised in a worker ends this process with its one-line message."""
    rendezvous.unlink(missing_ok=True)
    # Ctrl-C reaches every worker (same process group); each finishes the iteration in step with
    # the others and the main worker saves. The parent only waits, so it ignores the signal.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        torch.multiprocessing.spawn(fn, args=args, nprocs=nprocs, join=True)
    except torch.multiprocessing.ProcessRaisedException as err:
        message = worker_error(err)
        if message is None:
            raise
        raise SystemExit(f"{prog}: error: {message}") from None
    finally:
        signal.signal(signal.SIGINT, previous)
        rendezvous.unlink(missing_ok=True)


__all__ = ["Workers", "launched_by_torchrun", "exit_worker", "worker_error", "spawn"]
