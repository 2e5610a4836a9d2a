"""PPO checkpoints: files that are never half-written, never silently damaged and never run code.

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
the temporary files a killed process leaves behind.

The PPO format (:func:`make_checkpoint`, :func:`read_checkpoint`): each file carries the
training config, the rules it was trained on and the observation layout (slice names and
sizes); a checkpoint whose layout differs from this code's, or whose rules differ from the
table's (when the caller passes ``rules=``), is refused with a ``ValueError`` that says which
field differs.

>>> import tempfile, torch
>>> folder = Path(tempfile.mkdtemp())
>>> save({"w": torch.ones(2)}, folder / "a.pt")
>>> load(folder / "a.pt")["w"].tolist()
[1.0, 1.0]
>>> _ = (folder / "a.pt").write_bytes(b"")
>>> load(folder / "a.pt")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
agents.ppo.checkpoint.CheckpointError: checkpoint '...a.pt' is damaged (empty file)...
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import struct
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from agents.ppo.network import ActorCritic, NetworkConfig
from pcr_env.actions import NUM_ACTIONS
from pcr_env.config import RulesConfig
from pcr_env.observation import observation_layout, state_layout

CHECKPOINT_FORMAT = "pcr-ppo"
CHECKPOINT_VERSION = 1
PRETRAINED_PATH = Path(__file__).resolve().parent.parent / "pretrained" / "ppo_pretrained.pt"
# Rules fields that change the game a policy was trained for; the others (first
# dealer, round and redeal limits) only bound or seed an episode.
VARIANT_FIELDS = ("players", "passing", "double_run_bonus", "bidding", "min_bid", "target_score")
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


__all__ = ["CheckpointError", "content_digest", "to_tensors", "to_arrays", "previous_path", "save", "load",
           "remove_stale_temporaries", "all_finite", "CHECKSUM_KEY"]


# --------------------------------------------------------------------------- the PPO checkpoint format
def observation_signature(players: int) -> dict[str, Any]:
    """What a network's input layout depends on: slice names and sizes of observation and state."""
    return {
        "players": players,
        "num_actions": NUM_ACTIONS,
        "observation": [[name, sl.stop - sl.start] for name, sl in observation_layout(players).slices.items()],
        "state": [[name, sl.stop - sl.start] for name, sl in state_layout(players).slices.items()],
    }


def rules_dict(rules: RulesConfig | dict[str, Any]) -> dict[str, Any]:
    return rules.to_dict() if isinstance(rules, RulesConfig) else RulesConfig.from_kwargs(dict(rules)).to_dict()


def check_rules_compatible(trained: dict[str, Any], table: RulesConfig | dict[str, Any], source: str = "checkpoint") -> None:
    """Refuse to play ``table`` rules with a policy trained on ``trained`` rules (variant fields only)."""
    a, b = RulesConfig.from_kwargs(dict(trained)), RulesConfig.from_kwargs(rules_dict(table))
    diffs = [f"{f}: trained {getattr(a, f)!r}, table {getattr(b, f)!r}" for f in VARIANT_FIELDS
             if getattr(a, f) != getattr(b, f) and not (f == "min_bid" and a.min_bid_value == b.min_bid_value)]
    if diffs:
        raise ValueError(f"{source} was trained for another rules variant ({'; '.join(diffs)}): "
                         "train a policy for these rules or play it on the rules it was trained for")


def atomic_save(obj: dict[str, Any], path: str | Path, *, keep_previous: bool = False) -> None:
    """Write a checkpoint atomically with its checksum (:func:`save`)."""
    save(obj, path, keep_previous=keep_previous)


def make_checkpoint(model: ActorCritic, config: dict[str, Any], rules: RulesConfig, **extra: Any) -> dict[str, Any]:
    """The agent part of a checkpoint: weights plus everything needed to rebuild and check them."""
    return {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "config": config,
        "rules": rules.to_dict(),
        "network": dataclasses.asdict(model.config),
        "signature": observation_signature(rules.players),
        "model": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
        **extra,
    }


def resolve_path(path: str | Path) -> Path:
    """``"pretrained"`` is the shipped checkpoint; anything else is a file path."""
    if str(path) == "pretrained":
        if not PRETRAINED_PATH.is_file():
            raise ValueError(f"the pretrained checkpoint {str(PRETRAINED_PATH)!r} is missing from this checkout")
        return PRETRAINED_PATH
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"PPO checkpoint {str(path)!r} does not exist (give a .pt file written by train.py, "
                         "e.g. RUN_DIR/checkpoints/best.pt, or 'pretrained')")
    return p


def read_checkpoint(path: str | Path, map_location: str = "cpu") -> dict[str, Any]:
    """Load and validate a checkpoint written by ``train.py`` (checksum, format, version, observation layout)."""
    p = resolve_path(path)
    return load(p, map_location=map_location, require_checksum=False, validate=validate_checkpoint)


def validate_checkpoint(ckpt: dict[str, Any]) -> None:
    """Raise ``ValueError`` unless ``ckpt`` is a pcr PPO checkpoint this code can use."""
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"it is not a pcr PPO checkpoint (no format {CHECKPOINT_FORMAT!r} marker)")
    if ckpt.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"it has checkpoint version {ckpt.get('version')!r}: this code reads version {CHECKPOINT_VERSION}")
    players = ckpt["rules"]["players"]
    expected = observation_signature(players)
    if ckpt["signature"] != expected:
        mine = dict(map(tuple, expected["observation"]))
        theirs = dict(map(tuple, ckpt["signature"]["observation"]))
        diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        raise ValueError(f"it was trained on an incompatible observation layout (differs in {diff or 'state/actions'}); "
                         "it cannot be used with this version of pcr_env")
    if not all_finite(ckpt["model"]):
        raise ValueError("its weights hold NaN or infinite values")


def checkpoint_network(ckpt: dict[str, Any]) -> NetworkConfig:
    """The :class:`NetworkConfig` a checkpoint was trained with (its layer widths may be stored as lists or tuples)."""
    return NetworkConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in ckpt["network"].items()})


def build_model(ckpt: dict[str, Any]) -> ActorCritic:
    """The network of a checkpoint, weights loaded, in eval mode."""
    players = ckpt["rules"]["players"]
    sig = observation_signature(players)
    obs_dim = sum(size for _, size in sig["observation"])
    state_dim = sum(size for _, size in sig["state"])
    model = ActorCritic(obs_dim, state_dim, sig["num_actions"], checkpoint_network(ckpt))
    model.load_state_dict(ckpt["model"])
    return model.eval()


def export_agent(source: str | Path, path: str | Path, **meta: Any) -> dict[str, Any]:
    """Write the agent part of a checkpoint (e.g. a run's ``latest.pt``, 47 MB with its optimiser and random
    streams) to ``path``: weights, value normaliser, rules and config, about 3 MB, as ``best.pt`` is.

    It acts as the run's evaluations did (``eval.greedy`` of its config, greedy if absent); ``meta`` adds to the
    source's iteration and decision counts. How the shipped file was made::

        export_agent("runs/distill2/checkpoints/latest.pt", "agents/pretrained/ppo_pretrained.pt")
    """
    ckpt = read_checkpoint(source)
    agent = {k: v for k, v in ckpt.items() if k not in ("training", "checksum")}
    agent.setdefault("act", {"greedy": bool(ckpt.get("config", {}).get("eval", {}).get("greedy", True))})
    counts = {k: ckpt.get("meta", {})[k] for k in ("iteration", "decisions") if k in ckpt.get("meta", {})}
    agent["meta"] = {**counts, **meta}
    atomic_save(agent, path)
    return agent
