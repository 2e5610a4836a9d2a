"""A run as stages: behaviour cloning, expert iteration and PPO, in the order a config lists them.

``stages`` in a training config is a list; each entry has a ``kind``, a budget of ``decisions``
(every decision of every game, as ``ppo.total_decisions`` counts them) and its own settings: keys
of the ``ppo`` and ``warmstart`` sections, merged over the config's sections for that stage only.

* ``bc``: behaviour cloning, the teacher (``warmstart.teacher``) plays its own games and the network
  learns its decisions;
* ``expert_iteration``: the network plays, the teacher labels its positions (``warmstart.targets``:
  its action, or a search teacher's per-action values);
* ``ppo``: PPO self-play (``ppo`` and ``selfplay``); its learning-rate and entropy schedules run over
  the stage's own budget.

Without ``stages`` a config is the two-stage shorthand: ``warmstart.decisions`` of warm start
(``bc`` or ``expert_iteration`` by ``warmstart.play``), then ``ppo.total_decisions`` of PPO. Every
stage starts with a fresh optimiser and drops the previous stage's open decisions; the weights,
value normalisation, games, snapshot pool and random streams carry on, so a run is one run:
one directory, one log, one x axis.

>>> plan_stages({"warmstart": {"decisions": 0, "play": "teacher"}, "ppo": {"total_decisions": 5}})
[{'kind': 'ppo', 'decisions': 5, 'ppo': {}, 'warmstart': {}}]
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.training.config_io import SECTION, Int, deep_merge

StageKind = Literal["bc", "expert_iteration", "ppo"]
WARM_KINDS = ("bc", "expert_iteration")

FIXED_KEYS = {"ppo": ("num_envs", "num_steps", "total_decisions"), "warmstart": ("decisions", "play", "init_from")}
"""Keys a stage may not set: the games and the rollout's shape are the run's; budgets are the stage's
``decisions``; who plays is its ``kind``; a starting file is the run's ``warmstart.init_from``."""


class StageConfig(BaseModel):
    """One stage of a run (an entry of ``stages``)."""

    model_config = SECTION

    kind: StageKind
    """``bc`` (the teacher plays, the network learns its decisions), ``expert_iteration`` (the network plays,
    the teacher labels) or ``ppo`` (self-play)."""
    decisions: Int = Field(ge=1)
    """The stage's budget: decisions of all games (every seat), rounded up to whole rollouts."""
    ppo: dict[str, Any] = Field(default_factory=dict)
    """Keys of the ``ppo`` section for this stage (e.g. ``learning_rate``), merged over the config's."""
    warmstart: dict[str, Any] = Field(default_factory=dict)
    """Keys of the ``warmstart`` section for this stage (``teacher``, ``teacher_options``, ``targets``, ``epochs``,
    ``learning_rate``, ``label_phases``), merged over the config's."""


def plan_stages(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The stages of a (plain-data) config: its ``stages``, or the two-stage shorthand."""
    if config.get("stages"):
        return [dict(stage) for stage in config["stages"]]
    warm = config["warmstart"]
    stages = []
    if warm["decisions"]:
        kind = "expert_iteration" if warm["play"] == "learner" else "bc"
        stages.append({"kind": kind, "decisions": warm["decisions"], "ppo": {}, "warmstart": {}})
    stages.append({"kind": "ppo", "decisions": config["ppo"]["total_decisions"], "ppo": {}, "warmstart": {}})
    return stages


def fixed_key_error(index: int, stage: dict[str, Any]) -> str | None:
    """Why stage ``index`` may not be run as written (a key of :data:`FIXED_KEYS`), or None."""
    for section, keys in FIXED_KEYS.items():
        for key in keys:
            if key in stage.get(section, {}):
                return (f"config key 'stages[{index}].{section}.{key}' is not allowed in a stage: "
                        + ("use the stage's 'decisions'" if key in ("total_decisions", "decisions")
                           else "its 'kind' says who plays" if key == "play"
                           else f"it is the run's (set {section}.{key} at the top level)"))
    return None


def stage_config(config: dict[str, Any], stage: dict[str, Any]) -> dict[str, Any]:
    """The whole (plain-data) config that ``stage`` runs with: its sections merged over the config's, its
    budget in ``warmstart.decisions`` or ``ppo.total_decisions``, who plays by its kind."""
    out = {k: v for k, v in config.items() if k != "stages"}
    out = deep_merge(out, {"ppo": stage.get("ppo", {}), "warmstart": stage.get("warmstart", {})})
    if stage["kind"] == "ppo":
        out["ppo"] = {**out.get("ppo", {}), "total_decisions": stage["decisions"]}
    else:
        play = "teacher" if stage["kind"] == "bc" else "learner"
        out["warmstart"] = {**out.get("warmstart", {}), "decisions": stage["decisions"], "play": play}
    return out


__all__ = ["StageConfig", "StageKind", "WARM_KINDS", "FIXED_KEYS", "plan_stages", "fixed_key_error", "stage_config"]
