"""The PPO checkpoint format: what a file written by ``train.py`` holds, and how it is read back.

Each file (written by :func:`agents.ppo.files.save`: atomic, checksummed, pickle-free) carries the
training config, the rules it was trained on and the observation layout (slice names and sizes); a
checkpoint whose layout differs from this code's, or whose rules differ from the table's (when the
caller passes ``rules=``), is refused with a ``ValueError`` that says which field differs. Agent
files (``best.pt``, the shipped ones) also say how they act (``act.greedy``; :func:`acts_greedy`).

``ppo:PATH`` names a file, ``pretrained`` (the shipped file) or a run directory (its ``best.pt``):
:func:`resolve_path`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agents.ppo.files import all_finite, load, save
from agents.ppo.network import ActorCritic, NetworkConfig
from agents.run_dir import RunDir
from pcr_env.actions import NUM_ACTIONS
from pcr_env.config import RulesConfig, variant_differences, variant_fields
from pcr_env.observation import observation_layout, state_layout

CHECKPOINT_FORMAT = "pcr-ppo"
CHECKPOINT_VERSION = 1
PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"
"""The shipped networks (package data): ``ppo:pretrained/NAME.pt`` plays ``PRETRAINED_DIR / NAME.pt``."""
PRETRAINED_PATH = PRETRAINED_DIR / "ppo_pretrained_2026-12-03.pt"
"""The file ``ppo:pretrained`` plays, named here and nowhere else. A shipped file never changes: a new network ships
as a new dated file and this name moves to it, while ``ppo:pretrained/<the old file>`` (a rung of the ``full``
ladder) keeps playing the old one."""
VARIANT_FIELDS = variant_fields()
"""Rules fields that change the game a policy was trained for (marked ``variant=True`` on :class:`RulesConfig`);
the others (first dealer, round and redeal limits) only bound or seed an episode."""


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
    diffs = [f"{f}: trained {getattr(a, f)!r}, table {getattr(b, f)!r}" for f in variant_differences(a, b)]
    if diffs:
        raise ValueError(f"{source} was trained for another rules variant ({'; '.join(diffs)}): "
                         "train a policy for these rules or play it on the rules it was trained for")


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
    """The file ``ppo:PATH`` names: ``"pretrained"`` is the shipped one, ``"pretrained/NAME.pt"`` another file shipped
    beside it (``agents/pretrained/``, wherever the package is installed), a run directory its ``best.pt``."""
    if str(path) == "pretrained" or str(path).startswith("pretrained/"):
        shipped = PRETRAINED_PATH if str(path) == "pretrained" else PRETRAINED_DIR / str(path)[len("pretrained/"):]
        if not shipped.is_file():
            raise ValueError(f"the shipped checkpoint {str(shipped)!r} ({path}) is missing from this installation")
        return shipped
    p = Path(path)
    if p.is_dir():
        best = RunDir(p).best
        if not best.is_file():
            raise ValueError(f"PPO checkpoint {str(path)!r} is a directory without checkpoints/best.pt: a run directory "
                             "has one once its first evaluation (or its end) is written; give a .pt file otherwise")
        return best
    if not p.is_file():
        raise ValueError(f"PPO checkpoint {str(path)!r} does not exist (give a .pt file written by train.py, "
                         "a run directory (its checkpoints/best.pt), or 'pretrained')")
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


def acts_greedy(ckpt: dict[str, Any]) -> bool:
    """How the file's agent acts: its ``act.greedy``, else its training config's ``eval.greedy``, else greedy."""
    if "act" in ckpt:
        return bool(ckpt["act"].get("greedy", True))
    return bool(ckpt.get("config", {}).get("eval", {}).get("greedy", True))


def export_agent(source: str | Path, path: str | Path, **meta: Any) -> dict[str, Any]:
    """Write the agent part of a checkpoint (e.g. a run's ``latest.pt``, 47 MB with its optimiser and random
    streams) to ``path``: weights, value normaliser, rules and config, about 3 MB, as ``best.pt`` is.

    It acts as the run's evaluations did (:func:`acts_greedy`); ``meta`` adds to the source's iteration and
    decision counts. How the shipped file was made (a new one ships under a new dated name, see ``PRETRAINED_PATH``)::

        export_agent("runs/card_net2/checkpoints/latest.pt", "agents/pretrained/ppo_pretrained_2026-12-03.pt")
    """
    ckpt = read_checkpoint(source)
    agent = {k: v for k, v in ckpt.items() if k not in ("training", "checksum")}
    agent["act"] = {"greedy": acts_greedy(ckpt)}
    counts = {k: ckpt.get("meta", {})[k] for k in ("iteration", "decisions") if k in ckpt.get("meta", {})}
    agent["meta"] = {**counts, **meta}
    save(agent, path)
    return agent


__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "PRETRAINED_DIR", "PRETRAINED_PATH", "VARIANT_FIELDS", "acts_greedy",
           "build_model", "check_rules_compatible", "checkpoint_network", "export_agent", "make_checkpoint",
           "observation_signature", "read_checkpoint", "resolve_path", "rules_dict", "validate_checkpoint"]
