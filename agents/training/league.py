"""The league: stages that train exploiters of the main network, and the pool they leave behind.

A stage of kind ``exploiter`` trains a best response to the main network as it stands at the stage's
start (AlphaStar's main exploiter; the trainer of ``evaluate.py --exploit``,
:mod:`agents.training.exploit`, with the target warm start):

1. :meth:`League.freeze_main`: the main network is copied, frozen, into the one-slot pool of kind ``main``,
   the only opponent of the stage; the learner is a copy of it that PPO trains with the stage's ``ppo`` keys.
2. :meth:`League.release_main`: at the stage's end the learner is frozen into the exploiter pool (opponent kind
   ``exploiter`` of ``selfplay.opponents``, drawn uniformly or by PFSP: ``selfplay.exploiter_pfsp_power``),
   and the main network's weights and value normalisation come back, so the next stage trains it on.

No snapshot is added and no evaluation runs while an exploiter trains (``best.pt`` is the main network's);
its curve is ``charts/score_diff_vs_main``. Everything belongs to the run: the pools are in ``latest.pt``
(a resume continues exactly, inside an exploiter stage too) and each exploiter is also written as an
agent file, ``league/exploiter_<n>.pt`` of the run directory (``ppo:RUN_DIR/league/exploiter_1.pt``).

A league is written in YAML without code, e.g. ``stages: [{kind: bc, ...}, {kind: ppo, decisions: 6M},
{kind: exploiter, decisions: 3M, ppo: {learning_rate: 1.0e-4}}, {kind: ppo, decisions: 6M}, ...]`` with
``selfplay.opponents: {self: 0.5, snapshot: 0.2, exploiter: 0.2, heuristic: 0.1}``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from agents.ppo.network import ActorCritic, ValueNorm
from agents.training.config import SelfPlayConfig
from agents.training.opponents import OpponentPool, Opponents, snapshot_agent
from pcr_env.config import RulesConfig

MAIN_MIX = {"main": 1.0}
"""The opponent mix of an exploiter stage: the main network frozen at its start, alone."""


class League:
    """The exploiter pool and, while an exploiter trains, the frozen main network and its value normalisation."""

    def __init__(self, selfplay: SelfPlayConfig, dtype: torch.dtype = torch.float32):
        self.exploiters = OpponentPool(selfplay.exploiters_kept, selfplay.exploiter_pfsp_power, dtype)
        self.main = OpponentPool(1, 0.0, dtype)
        self.main_value_norm: dict[str, Any] | None = None
        self.trained = 0
        """Exploiters trained so far (the number in their file names)."""

    @property
    def pools(self) -> dict[str, OpponentPool]:
        """The league's opponent kinds and their pools (:class:`~agents.training.opponents.Opponents` draws from them)."""
        return {"exploiter": self.exploiters, "main": self.main}

    @property
    def training_exploiter(self) -> bool:
        """Whether an exploiter stage is under way (the main network is frozen, waiting to come back)."""
        return len(self.main) > 0

    def freeze_main(self, model: ActorCritic, value_norm: ValueNorm, opp: Opponents, rng: np.random.Generator,
                    rules: RulesConfig, seed: int, iteration: int) -> None:
        """At an exploiter stage's start: the main network (sampling, as in training) becomes the only opponent
        of every game (``opp`` draws them all again from ``rng``)."""
        self.main.add(snapshot_agent(model, rules, seed, source="league main"), iteration)
        self.main_value_norm = copy.deepcopy(value_norm.state_dict())
        opp.use_mix(MAIN_MIX)
        opp.draw(np.arange(len(opp.kind)), rng)

    def release_main(self, model: ActorCritic, value_norm: ValueNorm, opp: Opponents, rng: np.random.Generator,
                     mix: dict[str, float], rules: RulesConfig, seed: int, iteration: int) -> None:
        """At an exploiter stage's end: the learner joins the exploiter pool; ``model`` and ``value_norm`` are the
        main network's again, bit for bit, and every game draws its opponent from ``mix`` again."""
        self.exploiters.add(snapshot_agent(model, rules, seed, source=f"exploiter {self.trained + 1}"), iteration)
        self.trained += 1
        model.load_state_dict(self.main.agents[0].model.state_dict())
        value_norm.load_state_dict(self.main_value_norm)
        self.main.clear()
        self.main_value_norm = None
        opp.use_mix(mix)
        opp.draw(np.arange(len(opp.kind)), rng)

    def state_dict(self) -> dict[str, Any]:
        """Both pools (weights, iterations, statistics), the frozen main network's value normalisation, the count."""
        return {"exploiters": self.exploiters.state_dict(), "main": self.main.state_dict(),
                "main_value_norm": self.main_value_norm, "trained": self.trained}

    def load_state_dict(self, state: dict[str, Any], make_snapshot: Callable[[], Any], opp: Opponents) -> None:
        """Refill the pools from :meth:`state_dict` (``make_snapshot()`` gives an agent to load each network into);
        inside an exploiter stage, ``opp`` draws from the main network alone again."""
        self.exploiters.load_state_dict(state["exploiters"], make_snapshot)
        self.main.load_state_dict(state["main"], make_snapshot)
        self.main_value_norm, self.trained = state["main_value_norm"], int(state["trained"])
        if self.training_exploiter:
            opp.use_mix(MAIN_MIX)


def needs_league(stage_kinds: list[str]) -> bool:
    """Whether a run's stages train exploiters (a run without them has no league: its files are as before)."""
    return "exploiter" in stage_kinds


__all__ = ["League", "MAIN_MIX", "needs_league"]
