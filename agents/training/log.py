"""What a training run writes for people to read: ``log.jsonl``, TensorBoard events, the progress bars.

Only the main worker writes; the others hold a silent :class:`RunLog`. A run
that resumes after a kill redoes the iterations after its last checkpoint, so
both logs are rewound to that checkpoint first and nothing appears twice:

* ``log.jsonl`` is cut back to ``log_bytes``, its length when the checkpoint
  was written (the checkpoint stores it), then gets a ``{"type": "resume"}``
  record;
* TensorBoard events are purged from the checkpoint's step on
  (``SummaryWriter(purge_step=...)``: TensorBoard drops every event at or after
  that step from the earlier event files).

TensorBoard's x axis (``step``) is the number of decisions played so far,
warm start included, so it only ever grows across warm start and PPO.

Progress: one bar per phase (warm start, then PPO), each counting its own
decisions, so each has its own rate and ETA; the bar's postfix carries the
last evaluation. :meth:`RunLog.message` prints above the bar, on its own line.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from agents.evaluation.report import finite_json
from agents.run_dir import RunDir


def rewind(path: Path, size: int) -> None:
    """Cut ``path`` back to ``size`` bytes (what the checkpoint saw), and never leave half a line.

    A kill can land while a record is being written, after the checkpoint: the file may then
    be shorter than ``size`` and end inside a line; everything after the last newline goes.
    """
    with path.open("r+b") as f:
        end = min(size, f.seek(0, 2))
        f.seek(0)
        head = f.read(end)
        cut = head.rfind(b"\n") + 1 if not head.endswith(b"\n") else end
        f.truncate(cut)


class RunLog:
    """``log.jsonl``, TensorBoard and progress of one run (silent unless ``active``)."""

    def __init__(self, run_dir: Path, *, active: bool, quiet: bool, config_yaml: str,
                 resume_log_bytes: int | None = None, resume_step: int | None = None):
        self.run_dir, self.active, self.quiet = run_dir, active, quiet
        self.writer = None
        self._file = None
        self._bar = None
        if not active:
            return
        from torch.utils.tensorboard import SummaryWriter

        run = RunDir(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        run.config.write_text(config_yaml)
        path = run.log
        if resume_log_bytes is not None and path.is_file():
            rewind(path, resume_log_bytes)
        self._file = path.open("ab")
        purge = None if resume_step is None else resume_step + 1
        self.writer = SummaryWriter(str(run_dir), purge_step=purge)
        if resume_step is None:
            self.writer.add_text("config", "```yaml\n" + config_yaml + "```")

    # ------------------------------------------------------------------ log.jsonl
    def line(self, record: dict[str, Any]) -> bytes:
        return (json.dumps(finite_json({"time": round(time.time(), 3), **record})) + "\n").encode()

    def write_line(self, line: bytes) -> None:
        if self._file is not None:
            self._file.write(line)
            self._file.flush()

    def record(self, record: dict[str, Any]) -> None:
        """Append one JSON record to ``log.jsonl``."""
        if self._file is not None:
            self.write_line(self.line(record))

    def size_after(self, line: bytes) -> int:
        """The length ``log.jsonl`` will have once ``line`` is appended (stored in checkpoints)."""
        return 0 if self._file is None else self._file.tell() + len(line)

    # ------------------------------------------------------------------ TensorBoard
    def scalars(self, prefix: str, values: dict[str, Any], step: int) -> None:
        if self.writer is not None:
            for k, v in values.items():
                if isinstance(v, (int, float)) and math.isfinite(v):
                    self.writer.add_scalar(f"{prefix}/{k}", v, step)

    # ------------------------------------------------------------------ progress
    def start_bar(self, desc: str, total: int, done: int) -> None:
        """A progress bar over ``total`` decisions of one phase, ``done`` of them already played."""
        self.close_bar()
        if not self.active or self.quiet:
            return
        from tqdm import tqdm

        self._bar = tqdm(total=total, initial=min(done, total), desc=desc, unit="dec", unit_scale=True,
                         dynamic_ncols=True, file=sys.stderr)

    def advance(self, decisions: int, postfix: str = "") -> None:
        if self._bar is not None:
            self._bar.update(decisions)
            if postfix:
                self._bar.set_postfix_str(postfix, refresh=False)
            self._bar.refresh()

    def close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def message(self, text: str) -> None:
        """A line for the user (main worker only), above the progress bar rather than inside it."""
        if not self.active:
            return
        if self._bar is not None:
            self._bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        self.close_bar()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self._file is not None:
            self._file.close()
            self._file = None


__all__ = ["RunLog", "finite_json"]
