"""numba's cache judges a function stale from its own file only; pcr_env._jit stamps each package's compiled files
together, and agents' stamp covers pcr_env's, so editing a callee recompiles its callers in every package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agents._jit
from pcr_env import _jit

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pcr_env", "agents")
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def _files(word: str) -> list[Path]:
    """The package files whose text contains ``word``, found by scanning (a new file is seen at once)."""
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if word in p.read_text(encoding="utf-8"))


def _package_stamp(path: Path) -> str:
    return {"pcr_env": _jit.PCR_ENV, "agents": agents._jit.STAMP}[path.relative_to(ROOT).parts[0]]


def test_every_file_that_says_cache_true_is_stamped_with_its_packages_stamp():
    """Found by scanning, here and in pcr_env._jit: a new compiled file is stamped with no list to update."""
    files = _files("cache=True")
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert {"pcr_env/engine.py", "pcr_env/knowledge.py", "pcr_env/worlds.py", "agents/ppo/card_features.py",
            "agents/ppo/compiled_actor.py"} <= names
    assert {p: _jit.stamp_of(p) for p in files} == {p: _package_stamp(p) for p in files}
    assert _jit.PCR_ENV != agents._jit.STAMP  # agents' stamp also hashes its own files


_DISPATCHERS = """
import importlib, json, sys
from pathlib import Path
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

module = importlib.import_module(sys.argv[1])  # this process's first import: its package must stamp it by itself
path, found = Path(module.__file__).resolve(), {}
for name, fn in vars(module).items():
    if isinstance(fn, CPUDispatcher) and Path(fn.py_func.__code__.co_filename).resolve() == path:
        locator = fn._cache._impl._locator if isinstance(fn._cache, FunctionCache) else None
        found[name] = [type(locator).__name__, locator and str(locator.get_source_stamp())]
print(json.dumps(found))
"""


@pytest.mark.skipif(JIT_DISABLED, reason="NUMBA_DISABLE_JIT: nothing is compiled or cached")
def test_every_cached_function_gets_a_pcr_locator_and_its_packages_stamp():
    """Each file that mentions numba, imported first in a fresh interpreter: every compiled function it defines
    is cached under a Pcr locator with its package's stamp, whatever spells its ``cache=``."""
    seen = {}
    for path in _files("numba"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        out = subprocess.run([sys.executable, "-c", _DISPATCHERS, module], cwd=ROOT, capture_output=True, text=True,
                             timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert out.returncode == 0, out.stderr[-3000:]
        for name, (locator, stamp) in json.loads(out.stdout.strip().splitlines()[-1]).items():
            seen[f"{path.name}:{name}"] = locator.startswith("Pcr") and stamp == _package_stamp(path)
    assert all(seen.values()), sorted(k for k, ok in seen.items() if not ok)
    assert {"engine.py:apply_row", "knowledge.py:row_knowledge", "worlds.py:_sample_masks",
            "card_features.py:_features_kernel", "compiled_actor.py:_mlp"} <= set(seen)


_CALL_CARD_KERNEL = """
import json, sys
import numpy as np
from agents.ppo import card_features
from pcr_env import knowledge
from pcr_env.observation import observation_size

assert card_features.__file__.startswith(sys.argv[1]) and knowledge.__file__.startswith(sys.argv[1]), card_features.__file__
card_features.card_features(np.zeros((2, observation_size(4)), np.float32), 4)
print(json.dumps({name: [sum(fn.stats.cache_hits.values()), sum(fn.stats.cache_misses.values())]
                  for name, fn in (("card_features", card_features._features_kernel), ("knowledge", knowledge.row_knowledge))}))
"""


@pytest.mark.skipif(JIT_DISABLED, reason="NUMBA_DISABLE_JIT: nothing is compiled or cached")
def test_editing_a_pcr_env_callee_recompiles_the_cached_agents_kernel_that_calls_it(tmp_path):
    """A copy of both packages with its own cache: card_features' kernel (which calls knowledge.row_knowledge,
    which calls engine.pass_offset) loads from the cache until engine.py changes, then compiles again; a file
    without compiled code changes nothing."""
    src = tmp_path / "src"
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pt"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run() -> dict[str, list[int]]:  # [cache hits, cache misses] of each kernel
        out = subprocess.run([sys.executable, "-c", _CALL_CARD_KERNEL, str(src)], env=env, cwd=src,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run() == {"card_features": [0, 1], "knowledge": [0, 1]}  # compiled and saved
    # Loaded, with its callees' machine code inside: row_knowledge is not even looked up (hence the stamp).
    assert run() == {"card_features": [1, 0], "knowledge": [0, 0]}
    with open(src / "pcr_env" / "render.py", "a") as f:
        f.write("\n# no compiled code in this file\n")
    assert run() == {"card_features": [1, 0], "knowledge": [0, 0]}
    with open(src / "pcr_env" / "engine.py", "a") as f:
        f.write("\n# pass_offset and the rest, edited\n")
    assert run() == {"card_features": [0, 1], "knowledge": [0, 1]}  # stale: compiled again, though neither file changed


def test_a_packages_stamp_hashes_the_files_its_compiled_code_imports(tmp_path):
    """Compiled code freezes the globals it reads (compiled_actor's activation codes, from agents.ppo.activations;
    MASKED_LOGIT, from agents.ppo.network) as constants: the stamp hashes the package's files that compiled files
    import, so editing one changes it; a file no compiled file imports does not."""
    hashed = {p.relative_to(ROOT).as_posix() for p in _jit.hashed_files(ROOT / "agents")}
    assert {"agents/ppo/activations.py", "agents/ppo/network.py", "agents/ppo/compiled_actor.py"} <= hashed
    assert "agents/play.py" not in hashed

    def stamp(root: Path) -> str:
        _jit._PACKAGES.pop(root.resolve(), None)  # recomputed, not the process's first stamp of this folder
        return _jit.stamp_package(root, below=(_jit.PCR_ENV,))

    copy = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", copy, ignore=shutil.ignore_patterns("__pycache__", "*.pt"))
    before = stamp(copy)
    with open(copy / "play.py", "a") as f:
        f.write("\n# not read by compiled code\n")
    assert stamp(copy) == before
    with open(copy / "ppo" / "activations.py", "a") as f:
        f.write("\n# the kernels' activation codes, edited\n")
    assert stamp(copy) != before
