"""Every module of both packages imports on its own (no broken import hides behind a lazy one)."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import agents
import pcr_env

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(m.name for pkg in (pcr_env, agents) for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."))


def test_the_package_lists_are_complete():
    files = {f"{p.parent.name}.{p.stem}" for d in ("pcr_env", "agents") for p in (ROOT / d).glob("*.py")
             if p.stem != "__init__"}
    assert files <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_module_imports_in_a_fresh_interpreter(name):
    if name == "pcr_env.openspiel" and importlib.util.find_spec("pyspiel") is None:
        pytest.skip("pcr_env.openspiel needs the openspiel extra (open-spiel)")
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_calibrate_heuristic_runs():
    module = importlib.import_module("agents.scripted.calibrate")
    rows = module.forced_contracts(players=4, rounds=5, seed=1)
    assert rows.shape == (5, 4)
