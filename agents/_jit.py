"""The numba cache stamp of agents' compiled files: one hash of them and of pcr_env's stamp (:mod:`pcr_env._jit`).

Imported first by :mod:`agents`, so before any agents module compiles: editing a compiled file of agents, or one of
pcr_env's that they call (``engine.py``, ``knowledge.py``, ...), recompiles every cached function of agents.
"""

from __future__ import annotations

from pathlib import Path

from pcr_env import _jit

STAMP = _jit.stamp_package(Path(__file__).parent, below=(_jit.PCR_ENV,))
