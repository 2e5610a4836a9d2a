"""The layout of a training run's directory, written once (no torch needed).

``train.py`` writes, under ``RUN_DIR``: ``config.yaml`` (the resolved config), ``log.jsonl`` (one
JSON record per line), TensorBoard events, and ``checkpoints/`` with ``latest.pt`` (everything a
resume needs; the one it replaced kept as ``latest.prev.pt``) and ``best.pt`` (the agent of the best
evaluation). A league (stages of kind ``exploiter``) adds ``league/exploiter_<n>.pt``, one agent file per
exploiter. ``ppo:RUN_DIR`` is that run's ``best.pt``.

>>> run = RunDir("runs/default")
>>> run.best.as_posix(), run.latest_prev.name, run.log.name
('runs/default/checkpoints/best.pt', 'latest.prev.pt', 'log.jsonl')
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunDir:
    """Where each file of the run in ``path`` lives."""

    path: Path

    def __init__(self, path: str | Path) -> None:
        object.__setattr__(self, "path", Path(path))

    @property
    def config(self) -> Path:
        """The config the run was started (or last resumed) with, resolved: ``config.yaml``."""
        return self.path / "config.yaml"

    @property
    def log(self) -> Path:
        """The run's records, one JSON object per line: ``log.jsonl``."""
        return self.path / "log.jsonl"

    @property
    def checkpoints(self) -> Path:
        """The folder of the run's checkpoints."""
        return self.path / "checkpoints"

    @property
    def latest(self) -> Path:
        """The resume point: weights, optimiser, pool, random streams (``checkpoints/latest.pt``)."""
        return self.checkpoints / "latest.pt"

    @property
    def latest_prev(self) -> Path:
        """The resume point that ``latest.pt`` replaced (``checkpoints/latest.prev.pt``)."""
        return self.checkpoints / "latest.prev.pt"

    @property
    def best(self) -> Path:
        """The agent of the run's best evaluation, or its final network (``checkpoints/best.pt``)."""
        return self.checkpoints / "best.pt"

    def exploiter(self, number: int) -> Path:
        """The agent file of the run's ``number``-th exploiter, counted from 1 (``league/exploiter_<number>.pt``)."""
        return self.path / "league" / f"exploiter_{number}.pt"

    def summary(self) -> str:
        """Where the run's checkpoints and logs are, and how to continue it (printed at its end)."""
        return (f"run directory: {self.path}\n"
                f"  checkpoints: {self.checkpoints} (best.pt: best evaluation, as the agent ppo:{self.path}; "
                f"latest.pt: resume with python train.py --resume {self.path})\n"
                f"  logs: {self.log}; TensorBoard: tensorboard --logdir {self.path}")


__all__ = ["RunDir"]
