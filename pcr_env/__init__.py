"""pcr: the Pass Cut Run card game for reinforcement learning.

>>> from pcr_env import pass_cut_run_v0
>>> env = pass_cut_run_v0.env()
>>> env.reset(seed=0)

Layers: this package is the game and its environments. It imports numpy, numba,
gymnasium and pettingzoo (pillow for pictures), never :mod:`agents` nor torch.
The rules modules (``cards``, ``actions``, ``config``, ``engine``, ``observation``)
are imported here; the adapters (``pass_cut_run_v0``, ``gym_env``, ``vector``,
``rllib_env``, ...) only when first used (``pcr_env.gym_env``), so
``import pcr_env.engine`` loads neither Gymnasium nor PettingZoo.

Registration still comes with ``import pcr_env``, by entry-point strings (no adapter
is imported for it): the Gymnasium id ``"PassCutRun-v0"`` (entry point
``"agents.registry:make_gym_env"``, which resolves agent specs and returns
:class:`pcr_env.gym_env.PassCutRunEnv`) and, with PettingZoo >= 1.27,
``pettingzoo.make("aec", "pcr/pass_cut_run-v0")``. If Gymnasium or PettingZoo is
already imported this happens at once; otherwise it happens the moment they are
(a finder on ``sys.meta_path`` that runs the registration after their import).
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
from typing import Any

from . import actions, cards, config, engine, observation
from .actions import NUM_ACTIONS, PASS_BID, action_id, bid_action, card_action, describe_action, trump_action
from .cards import card_str, parse_card, parse_cards
from .config import RulesConfig
from .engine import GameState, Phase, RoundResult
from .observation import ObservationView, decode_observation, encode_observation, encode_state

__version__ = "0.1.0"

GYM_ID = "PassCutRun-v0"
GYM_ENTRY_POINT = "agents.registry:make_gym_env"  # resolves agent specs, returns pcr_env.gym_env.PassCutRunEnv
PETTINGZOO_ID = "pcr/pass_cut_run-v0"
PETTINGZOO_ENTRY_POINT = "pcr_env.pass_cut_run_v0:env"

# Adapters and tools, imported on first attribute access (PEP 562).
_LAZY_MODULES = ("pass_cut_run_v0", "gym_env", "vector", "rllib_env", "render", "render_image", "replay", "seating")


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_MODULES))


# ---------------------------------------------------------------------------- registration
def _register_gymnasium(gymnasium: Any) -> None:
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_ID, entry_point=GYM_ENTRY_POINT)


def _register_pettingzoo(pettingzoo: Any) -> None:
    # PettingZoo >= 1.27 has a registry: pettingzoo.make("aec", "pcr/pass_cut_run-v0", players=6).
    if hasattr(pettingzoo, "register"):
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point=PETTINGZOO_ENTRY_POINT)


class _Then(importlib.abc.Loader):
    """A loader that runs ``hook(module)`` once the wrapped loader has executed the module."""

    def __init__(self, loader: Any, hook: Any):
        self._loader, self._hook = loader, hook

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        module.__loader__ = self._loader  # tools that inspect the loader see the real one
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._hook(module)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ... of the real loader
        return getattr(self._loader, name)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Runs each hook right after its top-level module is first imported, then steps aside."""

    def __init__(self, hooks: dict[str, Any]):
        self.hooks = hooks

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.hooks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        hook = self.hooks.pop(name)
        if not self.hooks and self in sys.meta_path:
            sys.meta_path.remove(self)
        if spec.loader is not None:
            spec.loader = _Then(spec.loader, hook)
        return spec


def _register_on_import() -> None:
    hooks = {}
    for module_name, hook in (("gymnasium", _register_gymnasium), ("pettingzoo", _register_pettingzoo)):
        module = sys.modules.get(module_name)
        if module is not None:
            hook(module)
        else:
            hooks[module_name] = hook
    if hooks and not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport(hooks))


_register_on_import()

__all__ = [
    "actions", "cards", "config", "engine", "observation", "pass_cut_run_v0", "gym_env", "NUM_ACTIONS", "PASS_BID",
    "action_id", "bid_action", "card_action", "describe_action", "trump_action", "card_str", "parse_card", "parse_cards",
    "RulesConfig", "GameState", "Phase", "RoundResult", "ObservationView", "decode_observation", "encode_observation",
    "encode_state",
]
