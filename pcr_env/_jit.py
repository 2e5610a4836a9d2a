"""One freshness stamp for all of pcr_env's compiled code in numba's on-disk cache (``cache=True``).

numba decides whether a cached function is stale from its own source file only,
but the compiled rules span files: ``_vector_kernels.step_all`` calls
``engine.apply_row``, which calls ``cards.beats`` (compiled), and the encoder in
``observation`` reads the engine's row columns. Editing a rule in ``engine.py``
would leave ``step_all``'s cached machine code running the old rule. So every
function of the files below is stamped with a hash of all of them: changing any
one recompiles them all. Imported by :mod:`pcr_env.cards` before its first
compiled function; a numba without this internal hook keeps its own behaviour.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMPILED_FILES = ("cards.py", "engine.py", "observation.py", "_vector_kernels.py")


def _stamp() -> str:
    digest = hashlib.sha256()
    for name in COMPILED_FILES:
        digest.update((HERE / name).read_bytes())
    return digest.hexdigest()


def _install() -> None:
    from numba.core import caching

    stamp = _stamp()
    ours = {str(HERE / name) for name in COMPILED_FILES}

    def locator(base):
        class _PcrLocator(base):
            @classmethod
            def from_function(cls, py_func, py_file):
                if str(Path(py_file).resolve()) not in ours:
                    return None
                return super().from_function(py_func, py_file)

            def get_source_stamp(self):
                return stamp

        _PcrLocator.__name__ = f"Pcr{base.__name__}"
        return _PcrLocator

    bases = (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)
    classes = caching.CacheImpl._locator_classes
    if not any(getattr(c, "__name__", "").startswith("Pcr") for c in classes):
        classes[:0] = [locator(b) for b in bases]


try:
    _install()
except (ImportError, AttributeError):  # pragma: no cover - another numba: per-file staleness only
    pass
