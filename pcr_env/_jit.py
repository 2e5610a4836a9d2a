"""Freshness stamps for numba's on-disk cache (``cache=True``): one per package, covering the packages it calls.

numba judges a cached function stale from its own source file only, but compiled code calls across files and
packages (``agents.ppo.card_features._features_kernel`` calls ``pcr_env.knowledge.row_knowledge``, which calls
``pcr_env.engine.pass_offset``), and a cached caller holds its callees' machine code. So:

- :func:`stamp_package` stamps every compiled function of a package's files that say ``cache=True`` (found by
  scanning its folder, nothing listed by hand) with one hash: of those files, of the package's files they import
  (compiled code freezes the globals it reads, such as ``agents.ppo.activations``' codes, as constants) and of the
  stamps ``below`` it. Editing any of them, or anything below, recompiles the whole package.
- pcr_env stamps itself here (:data:`PCR_ENV`); :mod:`pcr_env.cards` imports this module before its first
  compiled function. A package above stamps itself before its own first one, with ``below=(PCR_ENV,)``
  (:mod:`agents._jit`); pcr_env knows nothing of it.
- A package's stamp is fixed on its first call within a process; a file keeps the first stamp it was given.
- Under another numba (without this internal locator hook), or with ``NUMBA_CACHE_LOCATOR_CLASSES`` set, numba's
  per-file staleness applies.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_CACHED = re.compile(rb"\bcache\s*=\s*True\b")
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\n]*))|import[ \t]+([\w.]+))", re.M)
_PACKAGES: dict[Path, str] = {}  # package folder -> its stamp
_STAMPS: dict[str, str] = {}  # source file (resolved) -> the stamp of the package that holds it


def compiled_files(folder: str | Path) -> list[Path]:
    """The ``.py`` files under ``folder`` (recursively, resolved, sorted) whose text says ``cache=True``."""
    return sorted(p for p in Path(folder).resolve().rglob("*.py") if _CACHED.search(p.read_bytes()))


def imported_files(path: Path, root: Path) -> list[Path]:
    """The files of the package in ``root`` that ``path`` imports by absolute name (resolved, sorted)."""
    found = set()
    for match in _IMPORT.finditer(path.read_bytes()):
        name, names = (match.group(1) or match.group(4)).decode(), (match.group(2) or match.group(3) or b"").decode()
        if name.split(".")[0] != root.name:
            continue
        module = root.parent.joinpath(*name.split("."))
        candidates = [module.with_suffix(".py"), module / "__init__.py"]
        candidates += [module / f"{word}.py" for word in re.findall(r"\w+", names)]  # from a.b import submodule
        found |= {f.resolve() for f in candidates if f.is_file()}
    return sorted(found)


def hashed_files(folder: str | Path) -> list[Path]:
    """What a package's stamp hashes: its compiled files and the package's files they import (resolved, sorted)."""
    root = Path(folder).resolve()
    compiled = compiled_files(root)
    return sorted({*compiled, *(f for path in compiled for f in imported_files(path, root))})


def stamp_package(folder: str | Path, below: tuple[str, ...] = ()) -> str:
    """Stamp the compiled files under ``folder`` with one hash of :func:`hashed_files` and of ``below``; returns it."""
    root = Path(folder).resolve()
    if root not in _PACKAGES:
        digest = hashlib.sha256()
        for stamp in below:
            digest.update(stamp.encode() + b"\0")
        for path in hashed_files(root):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        _PACKAGES[root] = digest.hexdigest()
        for path in compiled_files(root):
            _STAMPS.setdefault(str(path), _PACKAGES[root])
    return _PACKAGES[root]


def stamp_of(py_file: str | Path) -> str | None:
    """The stamp of a source file's compiled functions (``None``: not stamped, numba's per-file check)."""
    return _STAMPS.get(str(Path(py_file).resolve()))


def _install() -> None:
    from numba.core import caching

    def locator(base):
        class _PcrLocator(base):
            @classmethod
            def from_function(cls, py_func, py_file):
                stamp = stamp_of(py_file)
                if stamp is None:
                    return None
                self = super().from_function(py_func, py_file)
                if self is not None:
                    self._pcr_stamp = stamp
                return self

            def get_source_stamp(self):
                return self._pcr_stamp

        _PcrLocator.__name__ = f"Pcr{base.__name__}"
        return _PcrLocator

    bases = (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)
    classes = caching.CacheImpl._locator_classes
    if not any(getattr(c, "__name__", "").startswith("Pcr") for c in classes):
        classes[:0] = [locator(b) for b in bases]


PCR_ENV = stamp_package(Path(__file__).parent)

try:
    _install()
except (ImportError, AttributeError):  # pragma: no cover - another numba: per-file staleness only
    pass
