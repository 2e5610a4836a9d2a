"""Checkpoint files that are never half-written, never silently damaged and never run code.

A checkpoint is a ``torch.save`` dictionary of tensors and plain data (numbers,
strings, lists, dicts): it loads with ``torch.load(weights_only=True)``, which
unpickles nothing but those types, so a file someone shared cannot run code.
Numpy arrays are stored as tensors (:func:`to_tensors` / :func:`to_arrays`).

Every file written by :func:`save` carries ``checksum``: the SHA-256 of its
contents (:func:`content_digest`, over every key, value, dtype, shape and
byte). :func:`load` recomputes it, so a truncated, emptied, overwritten or
bit-flipped file is refused with a :class:`CheckpointError` (a ``ValueError``)
of one line that names the file and says what to do, instead of a torch
traceback or, worse, weights that load and train NaNs.

Writes are atomic (a temporary file in the same folder, ``fsync``, then
``os.replace``). With ``keep_previous=True`` the file being replaced is kept as
``NAME.prev.pt`` (a hard link taken before the replace, so some complete
``NAME.pt`` exists at every instant). :func:`remove_stale_temporaries` deletes
the temporary files a killed process leaves behind. What the files hold is the
business of :mod:`agents.ppo.checkpoint` (the PPO format).

>>> import tempfile, torch
>>> folder = Path(tempfile.mkdtemp())
>>> save({"w": torch.ones(2)}, folder / "a.pt")
>>> load(folder / "a.pt")["w"].tolist()
[1.0, 1.0]
>>> _ = (folder / "a.pt").write_bytes(b"")
>>> load(folder / "a.pt")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
agents.ppo.files.CheckpointError: checkpoint '...a.pt' is damaged (empty file)...
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

CHECKSUM_KEY = "checksum"
TEMP_SUFFIX = ".tmp"


class CheckpointError(ValueError):
    """A checkpoint file cannot be used (missing, damaged, foreign or incompatible)."""


# --------------------------------------------------------------------------- digest
def content_digest(obj: Any) -> str:
    """SHA-256 (hex) of a nested structure of dicts, lists, tensors, arrays and scalars.

    Types are part of the digest (``1`` and ``1.0`` differ), dict keys are taken
    in sorted order, tensors by dtype, shape and raw bytes.
    """
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()


def _feed(h: Any, obj: Any) -> None:
    if isinstance(obj, dict):
        h.update(b"d" + struct.pack("<q", len(obj)))
        for key in sorted(obj, key=lambda k: (type(k).__name__, str(k))):
            _feed(h, key)
            _feed(h, obj[key])
    elif isinstance(obj, (list, tuple)):
        h.update((b"l" if isinstance(obj, list) else b"t") + struct.pack("<q", len(obj)))
        for item in obj:
            _feed(h, item)
    elif isinstance(obj, torch.Tensor):
        # A fresh copy: .contiguous() keeps odd strides of size-1 dimensions (e.g. an expanded
        # optimizer step counter), which .view(uint8) refuses.
        t = torch.empty(obj.shape, dtype=obj.dtype).copy_(obj.detach())
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"N{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    elif isinstance(obj, (bytes, bytearray)):
        h.update(b"B" + struct.pack("<q", len(obj)) + bytes(obj))
    elif isinstance(obj, str):
        data = obj.encode()
        h.update(b"S" + struct.pack("<q", len(data)) + data)
    elif obj is None or isinstance(obj, (bool, int, float, np.generic)):
        h.update(f"{type(obj).__name__}:{obj!r}".encode())
    else:
        raise TypeError(f"cannot checksum a {type(obj).__name__} in a checkpoint: store tensors and plain data only")


# --------------------------------------------------------------------------- numpy <-> tensors
def to_tensors(obj: Any) -> Any:
    """Replace every numpy array in a nested structure by a tensor (``uint64`` as its ``int64`` bits)."""
    if isinstance(obj, np.ndarray):
        arr = obj.view(np.int64) if obj.dtype == np.uint64 else obj
        return torch.from_numpy(np.array(arr, copy=True))
    if isinstance(obj, dict):
        return {k: to_tensors(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_tensors(v) for v in obj)
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def to_arrays(obj: Any) -> Any:
    """Inverse of :func:`to_tensors` for the arrays a caller asks back (tensors become numpy arrays)."""
    if isinstance(obj, torch.Tensor):
        return obj.numpy().copy()
    if isinstance(obj, dict):
        return {k: to_arrays(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_arrays(v) for v in obj)
    return obj


# --------------------------------------------------------------------------- files
def previous_path(path: str | Path) -> Path:
    """``latest.pt`` -> ``latest.prev.pt``: where :func:`save` keeps the file it replaces."""
    path = Path(path)
    return path.with_name(f"{path.stem}.prev{path.suffix}")


def save(obj: dict[str, Any], path: str | Path, *, keep_previous: bool = False) -> None:
    """Write ``obj`` with its checksum to ``path`` atomically (see the module docstring)."""
    if not isinstance(obj, dict):
        raise TypeError(f"a checkpoint is a dict, not {type(obj).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {k: v for k, v in obj.items() if k != CHECKSUM_KEY}
    payload[CHECKSUM_KEY] = content_digest(payload)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(payload, f)
            f.flush()
            os.fsync(f.fileno())
        if keep_previous and path.is_file():
            prev = previous_path(path)
            link = f"{tmp}.prev"
            os.link(path, link)  # the old file stays at `path` until the final replace
            os.replace(link, prev)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        for leftover in (tmp, f"{tmp}.prev"):
            if os.path.exists(leftover):
                os.unlink(leftover)
        raise


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # not every file system lets a folder be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load(path: str | Path, *, map_location: str = "cpu", require_checksum: bool = True,
         advice: str = "", validate: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save`, verifying its checksum.

    Raises :class:`CheckpointError` (one line: the file, what is wrong, then
    ``advice``) when the file is missing, unreadable, not a dict, or its
    contents do not match its checksum. Files without a checksum (written by an
    older version) are accepted only with ``require_checksum=False``.
    ``validate`` may raise ``ValueError`` for further checks; its message is
    reported the same way.
    """
    path = Path(path)
    tail = f": {advice}" if advice else ""

    def fail(problem: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {str(path)!r} is damaged ({problem}){tail}")

    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist{tail}")
    if path.stat().st_size == 0:
        raise fail("empty file")
    try:
        obj = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # truncated, random or foreign bytes: torch raises many kinds
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise fail(f"not a readable torch file: {first[:160]}") from None
    if not isinstance(obj, dict):
        raise fail(f"holds a {type(obj).__name__}, not a checkpoint dict")
    stored = obj.get(CHECKSUM_KEY)
    if stored is None:
        if require_checksum:
            raise fail("it has no checksum: it was not written by this version of the trainer")
    else:
        actual = content_digest({k: v for k, v in obj.items() if k != CHECKSUM_KEY})
        if actual != stored:
            raise fail("its contents do not match its checksum: the file was changed or corrupted after it was written")
    if validate is not None:
        try:
            validate(obj)
        except CheckpointError:
            raise
        except (ValueError, KeyError, TypeError) as err:
            raise CheckpointError(f"checkpoint {str(path)!r} cannot be used: {err}{tail}") from None
    return obj


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Delete the temporary files (``.NAME.XXXX.tmp``) that a killed writer left in ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for p in folder.iterdir():
        if p.name.startswith(".") and (p.name.endswith(TEMP_SUFFIX) or p.name.endswith(TEMP_SUFFIX + ".prev")):
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def all_finite(tensors: Any) -> bool:
    """True when every floating-point tensor in a nested structure is finite."""
    if isinstance(tensors, torch.Tensor):
        return not tensors.is_floating_point() or bool(torch.isfinite(tensors).all())
    if isinstance(tensors, dict):
        return all(all_finite(v) for v in tensors.values())
    if isinstance(tensors, (list, tuple)):
        return all(all_finite(v) for v in tensors)
    return True


__all__ = ["CHECKSUM_KEY", "CheckpointError", "all_finite", "content_digest", "load", "previous_path",
           "remove_stale_temporaries", "save", "to_arrays", "to_tensors"]
