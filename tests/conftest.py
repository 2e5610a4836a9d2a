"""Shared fixtures and helpers for the pcr test suite.

Warnings are errors
-------------------
Every test collected under ``tests/`` runs with warnings turned into errors, so a
warning from our environment (or from a library about how we use it) fails the
test that caused it. The only exceptions are the two warnings PettingZoo's
``api_test`` emits for *any* environment with a ``Dict`` observation space that
is not on its own hard-coded list of environment names (``env_obs_dicts`` and
``env_obs_space`` in ``pettingzoo/test/api_test.py``); they say nothing about our
environment and are filtered by their exact message, not by category. A test
that expects a warning checks it with ``pytest.warns``; a test that must allow
another warning adds its own ``@pytest.mark.filterwarnings`` mark, which takes
precedence over the defaults below.

Helpers
-------
``VARIANTS`` lists the environment configurations the issue asks every
API-level test to cover. ``random_game`` plays a seeded random legal game on the
pure engine and yields after every action, which the property, observation and
leak tests build on. ``play`` applies a list of actions (ids or card names).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

with warnings.catch_warnings():
    # PettingZoo 1.27's test module imports connect_four_v3 the deprecated way; not ours to fix.
    warnings.filterwarnings("ignore", message="The old environment creation API", category=DeprecationWarning)
    import pettingzoo.test  # noqa: F401

from pcr_env import engine as E
from pcr_env.actions import PASS_BID, card_action
from pcr_env.config import RulesConfig

# PettingZoo's api_test warnings for Dict observation spaces of environments not on
# its own lists (exact texts from pettingzoo/test/api_test.py, version 1.27).
PETTINGZOO_DICT_OBS_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
)

WARNING_FILTERS = ("error",) + tuple(
    # filterwarnings marks take a regex matched at the start of the message.
    f"ignore:{msg.replace('.', '[.]')}$:UserWarning" for msg in PETTINGZOO_DICT_OBS_WARNINGS
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Prepended, so a test's own filterwarnings marks are applied later and win.
    mark = pytest.mark.filterwarnings(*WARNING_FILTERS)
    for item in items:
        item.add_marker(mark, append=False)


class strict_warnings(warnings.catch_warnings):
    """Context manager: every warning is an error except PettingZoo's Dict-observation notes.

    Used around ``api_test``/``seed_test`` so they are strict even when this file's
    collection hook is bypassed (for instance when a test is called directly).
    """

    def __enter__(self):
        result = super().__enter__()
        warnings.simplefilter("error")
        for msg in PETTINGZOO_DICT_OBS_WARNINGS:
            warnings.filterwarnings("ignore", message=msg.replace(".", "[.]") + "$", category=UserWarning)
        return result


# Hypothesis: no per-example deadline (a full random game takes tens of milliseconds
# and CI machines are noisy); "ci" also derandomizes so CI runs are reproducible.
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("dev"), derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# The variants of the issue: every API-level test runs on each.
VARIANTS: list[dict[str, Any]] = [
    {},
    {"players": 6},
    {"passing": False},
    {"double_run_bonus": True},
    {"bidding": "auction"},
    {"episode": "round"},
    {"reward": "win"},
]
VARIANT_IDS = ["default" if not v else ",".join(f"{k}={val}" for k, val in v.items()) for v in VARIANTS]

# Rules-only variants (engine level: no episode/reward keys).
RULE_VARIANTS: list[dict[str, Any]] = [
    {},
    {"players": 6},
    {"passing": False},
    {"double_run_bonus": True},
    {"bidding": "auction"},
    {"players": 6, "bidding": "auction", "passing": False},
]


ROOT = Path(__file__).resolve().parents[1]


IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
"""CI (``CI=true``, as ``.ci/run`` sets): a missing integration library fails instead of skipping."""


def require_library(module: str):
    """Import ``module``; outside CI skip the calling test module when it is missing, in CI fail."""
    if IN_CI:
        return importlib.import_module(module)
    return pytest.importorskip(module)


def load_example(name: str):
    """Import ``examples/<name>.py`` as a module (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def non_numeric_leaves(info: Any, path: str = "info") -> list[str]:
    """Paths of the leaves of an info structure that are not numbers (int, float, bool, numeric numpy).

    Dicts and lists/tuples are walked; numpy arrays must have a numeric or bool dtype.
    ``None`` and strings are reported: replay buffers (Tianshou's) cannot store them as numbers.
    """
    if isinstance(info, dict):
        return [bad for k, v in info.items() for bad in non_numeric_leaves(v, f"{path}[{k!r}]")]
    if isinstance(info, (list, tuple)):
        return [bad for i, v in enumerate(info) for bad in non_numeric_leaves(v, f"{path}[{i}]")]
    if isinstance(info, np.ndarray):
        return [] if info.dtype.kind in "biuf" else [f"{path}: array of dtype {info.dtype}"]
    if isinstance(info, (bool, int, float, np.bool_, np.integer, np.floating)):
        return []
    return [f"{path}: {info!r} ({type(info).__name__})"]


def rules_of(variant: dict[str, Any]) -> dict[str, Any]:
    """The rules keyword arguments of an environment variant."""
    return {k: v for k, v in variant.items() if k not in ("episode", "reward", "render_mode")}


def play(state: E.GameState, actions: Sequence[int | str], rng: np.random.Generator | None = None) -> E.RoundResult | None:
    """Apply actions in order (ids, or card names such as ``"QS"``); return the last round result."""
    rng = np.random.default_rng(0) if rng is None else rng
    result = None
    for a in actions:
        result = E.apply_action(state, card_action(a) if isinstance(a, str) else a, rng)
    return result


def random_action(state: E.GameState, rng: np.random.Generator, pass_bid_prob: float | None = None) -> int:
    """A uniformly random legal action; ``pass_bid_prob`` biases bidding towards "no bid"."""
    legal = E.legal_actions(state)
    if state.phase == E.Phase.BID and pass_bid_prob is not None and rng.random() < pass_bid_prob:
        return PASS_BID
    return int(legal[rng.integers(len(legal))])


def random_game(
    config: RulesConfig,
    seed: int,
    *,
    max_rounds: int | None = None,
    pass_bid_prob: float | None = None,
) -> Iterator[tuple[E.GameState, int, int, E.RoundResult | None]]:
    """Play a random legal game on the engine, yielding ``(state, seat, action, result)`` after each action.

    ``state`` is the live state (copy it to keep it). Between rounds the next round
    is dealt after the yield of the round-ending action; the game stops at
    ``GAME_OVER`` or after ``max_rounds`` scored rounds.
    """
    rng = np.random.default_rng(seed)
    state = E.new_game(config, rng)
    rounds = 0
    while state.phase != E.Phase.GAME_OVER:
        seat = state.current
        action = random_action(state, rng, pass_bid_prob)
        result = E.apply_action(state, action, rng)
        yield state, seat, action, result
        if result is not None:
            rounds += 1
            if max_rounds is not None and rounds >= max_rounds:
                return
            if state.phase == E.Phase.ROUND_END:
                E.start_next_round(state, rng)


# ----------------------------------------------------------------------------- training runs' logs
TIMING_KEYS = ("time", "seconds", "decisions_per_second", "charts/decisions_per_second", "charts/collect_fraction")
"""The records' keys that differ between two runs of the same training (wall-clock time and speeds)."""


def run_records(run_dir: Path) -> list[dict]:
    """A training run's ``log.jsonl``, one dict per record."""
    return [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]


def kept_records(run_dir: Path) -> list[dict]:
    """The records that must match a straight run's: training, evaluations, stage changes and the end, timing dropped."""
    return [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in run_records(run_dir)
            if r["type"] in ("warmstart", "iteration", "eval", "stage", "done")]


def stop_then_resume(train_main: Callable[[list[str]], None], run_dir: Path, args: list[str], stop_after: int) -> None:
    """Train ``args`` (``train.main``'s) for ``stop_after`` iterations, which saves latest.pt and stops, then resume
    ``run_dir`` to the end."""
    train_main([*args, "--max-iterations", str(stop_after)])
    assert run_records(run_dir)[-1]["reason"] == "stopped"
    train_main(["--resume", str(run_dir), "--quiet"])
