"""PPO self-play trainer for Pass Cut Run: one YAML config in, a team policy out.

    python train.py --config configs/ppo_selfplay.yaml [--set key=value ...] [--run-dir DIR]
    python train.py --resume RUN_DIR [--set ppo.total_decisions=...]
    python train.py --list-keys                  # every config key, its type and meaning
    tensorboard --logdir runs

What one iteration does, top to bottom (``train()``):

1. **Collect** ``num_steps`` decisions in each of ``num_envs`` games of the batched
   engine (:class:`pcr_env.vector.VectorEnv`). Each game has an opponent drawn from
   ``selfplay.opponents``: the current network itself, a frozen snapshot (PFSP pool)
   or a scripted agent. The learner's seats act with the current network (one
   batched forward pass per step), the other seats with their own policy.
2. **Credit per seat.** Every learner decision joins its seat's trajectory; a
   reward ``rewards[game, seat]`` goes to that seat's latest decision; a
   trajectory ends at the end of the round (``ppo.return_horizon: round``, the
   default: the return of a decision is its team's score difference in that
   round, gamma = 1) or of the game. Nothing bootstraps across seats
   (:mod:`agents.training.rollout`).
3. **GAE** along each seat's chain, value normalisation, then the clipped PPO
   update with masked logits (masks stored at collection and re-applied),
   entropy over legal actions, advantage normalisation per minibatch,
   clipped value loss, gradient clipping and a linear learning-rate schedule.
4. **Log, evaluate, checkpoint.** TensorBoard tags (fixed):
   ``charts/`` throughput, learning rate, rates of bids and made contracts,
   score difference per opponent kind, pool statistics; ``losses/`` policy and
   value loss, entropy (overall and per phase), approx. KL, clip fraction,
   explained variance, gradient norm; ``bc/`` the optional behaviour-cloning
   warm start; ``eval/`` duplicate evaluation against ``eval.opponents``
   (mean score difference per deal and its 95% interval). The run directory
   holds ``config.yaml`` (the resolved config), the TensorBoard events (x axis:
   decisions played, warm start included), ``log.jsonl`` (one JSON object per
   iteration / evaluation / checkpoint / resume) and ``checkpoints/latest.pt``
   (everything needed to resume: weights, optimiser, counters, RNG streams,
   game states; the one before it is kept as ``latest.prev.pt``) and
   ``checkpoints/best.pt`` (best evaluation against ``eval.best_opponent``),
   all written atomically with a checksum (:mod:`agents.ppo.checkpoint`).

Ctrl-C finishes the current iteration, saves ``latest.pt`` and exits; a second
Ctrl-C aborts at once. ``--resume RUN_DIR`` continues that run exactly where it
stopped, with any number of workers: the same optimiser state, counters and
random streams, so a run interrupted and resumed produces the same weights as
one that was not; after a kill, the logs are rewound to the checkpoint so the
redone iterations appear once (:mod:`agents.training.log`). A non-finite loss
or weight stops the run before anything is written over a good checkpoint.

The optional warm start (``warmstart.decisions > 0``) first clones a teacher
agent (default ``heuristic``) by supervised learning on its own games (policy:
cross-entropy on the teacher's actions; critic: the Monte-Carlo returns of those
games), then hands over to PPO. A checkpoint is an agent: ``ppo:RUN_DIR/checkpoints/best.pt``
works wherever an agent spec does (``evaluate.py``, ``agents.make_agent``).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import math
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import yaml
from pydantic import BaseModel, Field, model_validator
from typing_extensions import Self

from agents import parse_spec
from agents.ppo import checkpoint as checkpoint_io
from agents.training.workers import Workers, launched_by_torchrun
from agents.ppo import (
    ActorCritic,
    NetworkConfig,
    PPOAgent,
    ValueNorm,
    atomic_save,
    build_model,
    check_rules_compatible,
    checkpoint_network,
    log_probs,
    make_checkpoint,
    masked_entropy,
    read_checkpoint,
    sample_actions,
)
from agents.training.rollout import SeatRollout, compute_gae
from agents.training.run_state import (
    GracefulInterrupt,
    TrainingError,
    WorkerState,
    check_resume_changes,
    remove_leftovers,
    restore_worker,
    resume_advice,
    validate_resume_checkpoint,
    worker_snapshot,
)
from agents.training.opponents import Opponents, OpponentPool, draw_opponents, round_outcome, snapshot_agent
from agents.ppo.sparse_linear import sparse_pays, sparse_rows
from agents.training.log import RunLog
from agents.training.config_io import SECTION, Bool, Float, Int, apply_overrides, describe, load_yaml, require, to_plain, validate
from pcr_env.config import RulesConfig
from pcr_env.seating import derive_seed as stream_seed  # one seeding scheme for every tool
from pcr_env.engine import Phase
from pcr_env.vector import VectorEnv

ROOT = Path(__file__).resolve().parent
PHASE_NAMES = [p.name.lower() for p in Phase]


# =========================================================================== configuration
class PPOConfig(BaseModel):
    """PPO and rollout hyperparameters (section ``ppo``)."""

    model_config = SECTION

    total_decisions: Int = 60_000_000
    """Training length: decisions taken in all games (every seat, learner or not), warm start excluded."""
    num_envs: Int = 256
    """Games played side by side (all workers together; each worker runs num_envs / num_workers)."""
    num_steps: Int = 128
    """Decisions per game per rollout; one rollout is num_envs * num_steps decisions."""
    learning_rate: Float = 3e-4
    """Adam learning rate at the start of PPO."""
    lr_schedule: Literal["linear", "constant"] = "linear"
    """``linear``: anneal the learning rate to 0 over the run; ``constant``: keep it."""
    adam_eps: Float = 1e-5
    """Adam epsilon."""
    gamma: Float = 1.0
    """Discount per decision of the same seat (1.0: undiscounted round score)."""
    gae_lambda: Float = 0.95
    """GAE lambda."""
    return_horizon: Literal["round", "game"] = "round"
    """Where a seat's trajectory ends: ``round`` (the return is the team's score difference of the
    round; games still run to the target score so pass directions and score context cycle as in
    real play) or ``game`` (the sum over the rest of the game; use gamma < 1)."""
    reward_scale: Float = 0.05
    """Rewards (round score differences, about -40..40) are multiplied by this before learning."""
    value_norm: Bool = True
    """Normalise value targets with running statistics (the critic predicts normalised returns)."""
    update_epochs: Int = 4
    """Passes over each rollout."""
    num_minibatches: Int = 4
    """Minibatches per pass (per worker)."""
    clip_coef: Float = 0.2
    """PPO ratio clipping."""
    clip_vloss: Bool = True
    """Clip the value loss around the old value prediction."""
    norm_adv: Bool = True
    """Normalise advantages within each minibatch."""
    ent_coef: Float = 0.01
    """Entropy bonus coefficient (entropy over the legal actions)."""
    ent_coef_final: Float | None = None
    """If set, the entropy coefficient anneals linearly from ent_coef to this value."""
    vf_coef: Float = 0.5
    """Value loss coefficient."""
    max_grad_norm: Float = 0.5
    """Global gradient-norm clip."""
    target_kl: Float | None = None
    """Stop a rollout's update early once the approximate KL exceeds this (null: never)."""
    skip_forced: Bool = True
    """Play forced moves (a single legal action, about 15% of decisions: last tricks, singletons
    that must follow suit) without the network and leave them out of the trajectories: they carry
    no policy gradient, and the seat's next real decision takes over as the bootstrap point."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        require(self.total_decisions >= 1, "total_decisions", self.total_decisions, "an integer >= 1")
        require(self.num_envs >= 1, "num_envs", self.num_envs, "an integer >= 1")
        require(self.num_steps >= 1, "num_steps", self.num_steps, "an integer >= 1")
        require(self.learning_rate > 0, "learning_rate", self.learning_rate, "a number > 0")
        require(self.adam_eps > 0, "adam_eps", self.adam_eps, "a number > 0")
        require(0 < self.gamma <= 1, "gamma", self.gamma, "a number in (0, 1]")
        require(0 <= self.gae_lambda <= 1, "gae_lambda", self.gae_lambda, "a number in [0, 1]")
        require(self.reward_scale > 0, "reward_scale", self.reward_scale, "a number > 0")
        require(self.update_epochs >= 1, "update_epochs", self.update_epochs, "an integer >= 1")
        require(self.num_minibatches >= 1, "num_minibatches", self.num_minibatches, "an integer >= 1")
        require(0 < self.clip_coef < 1, "clip_coef", self.clip_coef, "a number in (0, 1)")
        require(self.ent_coef >= 0, "ent_coef", self.ent_coef, "a number >= 0")
        require(self.ent_coef_final is None or self.ent_coef_final >= 0, "ent_coef_final", self.ent_coef_final,
                "a number >= 0 or null")
        require(self.vf_coef >= 0, "vf_coef", self.vf_coef, "a number >= 0")
        require(self.max_grad_norm > 0, "max_grad_norm", self.max_grad_norm, "a number > 0")
        require(self.target_kl is None or self.target_kl > 0, "target_kl", self.target_kl, "a number > 0 or null")
        return self


class SelfPlayConfig(BaseModel):
    """Who the learner plays against (section ``selfplay``)."""

    model_config = SECTION

    opponents: dict[str, Float] = Field(default_factory=lambda: {"self": 0.7, "snapshot": 0.2, "heuristic": 0.1})
    """Mix of opponents, drawn per game each time a trajectory ends, as probabilities (summing to 1):
    ``self`` (both teams are the current network), ``snapshot`` (a frozen past network from the
    pool) or any agent spec (``heuristic``, ``random``, ``ppo:PATH``)."""
    snapshot_every: Int = 10
    """Add the current network to the snapshot pool every this many PPO iterations
    (the starting network is always added first)."""
    pool_size: Int = 10
    """Snapshots kept; the newest replaces the oldest."""
    pfsp_power: Float = 2.0
    """Prioritised fictitious self-play: snapshot j is drawn with weight (1 - p_j)^power, p_j the
    learner's round-win rate against it (0: uniform)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        require(len(self.opponents) > 0, "opponents", self.opponents, "a non-empty mapping of opponent to weight")
        for name, weight in self.opponents.items():
            if name not in ("self", "snapshot"):
                try:
                    parse_spec(name)
                except ValueError as err:
                    require(False, f"opponents.{name}", weight, f"'self', 'snapshot' or an agent spec ({err})")
            require(weight >= 0, f"opponents.{name}", weight, "a weight >= 0")
        total = sum(self.opponents.values())
        require(abs(total - 1.0) <= 1e-6, "opponents", self.opponents,
                f"a probability distribution: weights >= 0 that sum to 1 (these sum to {total:g})")
        require(self.snapshot_every >= 1, "snapshot_every", self.snapshot_every, "an integer >= 1")
        require(self.pool_size >= 1, "pool_size", self.pool_size, "an integer >= 1")
        require(self.pfsp_power >= 0, "pfsp_power", self.pfsp_power, "a number >= 0")
        return self


class WarmStartConfig(BaseModel):
    """Optional start before PPO (section ``warmstart``)."""

    model_config = SECTION

    decisions: Int = 0
    """Behaviour-clone the teacher on this many of its own decisions before PPO (0: no warm start)."""
    teacher: str = "heuristic"
    """Agent spec of the teacher; it plays every seat of the warm-start games."""
    teacher_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of the teacher's factory, e.g. ``{worlds: 16, phases: [play]}`` for a ``search:``
    teacher (its budget per label: ``benchmarks/speed/search_cost.py``); an unknown one is a ``TypeError``."""
    epochs: Int = 2
    """Passes over each rollout of teacher decisions."""
    learning_rate: Float = 1e-3
    """Adam learning rate of the warm start (its own optimiser)."""
    init_from: str = ""
    """Start from the weights of this checkpoint (a best.pt / latest.pt / 'pretrained') instead of a
    fresh network; its rules and network shape must match. Empty: fresh network."""
    play: Literal["teacher", "learner"] = "teacher"
    """Who plays the warm-start games: ``teacher`` (behaviour cloning on the teacher's own games) or
    ``learner`` (expert iteration: the network plays, the teacher only labels its positions)."""
    label_phases: tuple[Literal["pass", "bid", "trump", "discard", "play"], ...] = ("pass", "bid", "trump", "discard",
                                                                                   "play")
    """Decisions the teacher labels and the network learns; the others are played but not trained on
    (a search teacher is costly: labelling only ``[bid, trump]``, where contracts are won and lost, is cheap)."""
    targets: Literal["action", "values"] = "action"
    """What the network learns from the teacher: ``action`` (cross-entropy on its chosen action) or ``values``
    (cross-entropy on the teacher's per-action distribution, :meth:`agents.search.SearchAgent.action_targets`:
    the base's probabilities re-weighted by ``exp(advantage / temperature)``, ``temperature`` a teacher option).
    ``values`` needs a ``search:`` teacher and ``play: learner``; its logged ``accuracy`` is agreement with the
    target's most probable action."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        require(self.decisions >= 0, "decisions", self.decisions, "an integer >= 0")
        try:
            parse_spec(self.teacher)
        except ValueError as err:
            require(False, "teacher", self.teacher, f"an agent spec ({err})")
        require(self.epochs >= 1, "epochs", self.epochs, "an integer >= 1")
        require(self.learning_rate > 0, "learning_rate", self.learning_rate, "a number > 0")
        require(len(self.label_phases) > 0, "label_phases", list(self.label_phases), "a non-empty list of phases")
        if self.targets == "values":
            require(self.play == "learner", "play", self.play,
                    "'learner' with targets: values (the teacher labels the network's own positions)")
            require(self.teacher.startswith("search:"), "teacher", self.teacher,
                    "a search: spec with targets: values (per-action values come from its rollouts)")
        return self


class EvalConfig(BaseModel):
    """Duplicate evaluation during training (section ``eval``)."""

    model_config = SECTION

    every: Int = 25
    """Evaluate every this many PPO iterations (0: only at the end)."""
    deals: Int = 500
    """Deals per evaluation and opponent; each deal is played twice with the seats swapped (0: never evaluate)."""
    final_deals: Int = 2000
    """Deals of the evaluation at the end of training."""
    opponents: tuple[str, ...] = ("random", "heuristic")
    """Agent specs to evaluate against."""
    best_opponent: str = "heuristic"
    """best.pt is the checkpoint with the highest mean score difference against this opponent."""
    greedy: Bool = True
    """Evaluate (and export) the policy acting greedily (its most probable legal action)."""
    seed: Int = 2024
    """Seed of the evaluation deals (fixed: every evaluation of a run plays the same deals)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        require(self.every >= 0, "every", self.every, "an integer >= 0")
        require(self.deals >= 0, "deals", self.deals, "an integer >= 0")
        require(self.final_deals >= 0, "final_deals", self.final_deals, "an integer >= 0")
        for spec in self.opponents:
            try:
                parse_spec(spec)
            except ValueError as err:
                require(False, "opponents", list(self.opponents), f"agent specs ({err})")
        require(self.best_opponent in self.opponents or not self.opponents, "best_opponent", self.best_opponent,
                f"one of eval.opponents {list(self.opponents)}")
        require(0 <= self.seed < 2**63, "seed", self.seed, "an integer 0..2**63-1")
        return self


class Config(BaseModel):
    """A training run. Defaults are the shipped configuration; YAML files override them."""

    model_config = SECTION

    run_name: str = ""
    """Name of the run directory under output_dir (empty: <config name>__s<seed>__<date-time>)."""
    output_dir: str = "runs"
    """Folder holding run directories (relative paths are relative to the current directory)."""
    seed: Int = 1
    """Seed of every random stream: games, weights, action sampling, opponent draws."""
    device: str = "auto"
    """``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda`` or ``cuda:N``."""
    precision: Literal["auto", "float32", "bfloat16"] = "auto"
    """Precision of the network's matrix products while training (rollout forward passes and updates):
    ``bfloat16`` is mixed precision (torch.autocast; weights, optimizer state, losses and gradients stay
    float32), about twice as fast on a CPU with native bfloat16 (AVX512-BF16 or AMX) or a recent GPU;
    ``auto`` picks it there and ``float32`` elsewhere. Evaluation and the saved agent always use float32."""
    num_workers: Int = 1
    """Data-parallel worker processes (one torch thread each); 2 uses both cores of a 2-core machine."""
    checkpoint_every: Int = 10
    """Write checkpoints/latest.pt every this many iterations, warm-start ones included (and always at the end or on Ctrl-C)."""
    rules: RulesConfig = Field(default_factory=RulesConfig)
    """Rules of the games (pcr_env.RulesConfig fields: players, passing, double_run_bonus, bidding, ...)."""
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    """Network shape (agents.ppo.NetworkConfig)."""
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    """PPO hyperparameters."""
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    """Opponent mix and snapshot pool."""
    warmstart: WarmStartConfig = Field(default_factory=WarmStartConfig)
    """Behaviour-cloning warm start or initial weights."""
    eval: EvalConfig = Field(default_factory=EvalConfig)
    """Evaluation schedule."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        require(0 <= self.seed < 2**63, "seed", self.seed, "an integer 0..2**63-1")
        require(self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda"), "device",
                self.device, "'auto', 'cpu', 'cuda' or 'cuda:N'")
        require(self.num_workers >= 1, "num_workers", self.num_workers, "an integer >= 1")
        require(self.ppo.num_envs % self.num_workers == 0, "ppo.num_envs", self.ppo.num_envs,
                f"a multiple of num_workers ({self.num_workers})")
        require(self.checkpoint_every >= 1, "checkpoint_every", self.checkpoint_every, "an integer >= 1")
        require(self.run_name == "" or ("/" not in self.run_name and self.run_name not in (".", "..")), "run_name",
                self.run_name, "a plain folder name")
        return self


def load_config(path: str | None, overrides: list[str], base: dict[str, Any] | None = None) -> Config:
    """Config from defaults, then a YAML file (and its ``base:``) or ``base``, then ``key=value`` overrides."""
    data = load_yaml(path) if path else dict(base or {})
    return validate(Config, apply_overrides(data, overrides))


# =========================================================================== helpers
@dataclass(frozen=True)
class Compute:
    """Where the network runs and the precision of its matrix products (``Config.device``, ``Config.precision``)."""

    device: torch.device
    dtype: torch.dtype = torch.float32

    def autocast(self) -> torch.autocast:
        """Mixed precision around forward passes (a no-op in float32); take ``.float()`` of the outputs."""
        return torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype != torch.float32)


def native_bfloat16(device: torch.device) -> bool:
    """Whether bfloat16 matrix products are native (fast) on ``device``, not emulated."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()


def resolve_compute(device: str, precision: str) -> Compute:
    """``Config.device`` and ``Config.precision`` resolved for this machine (``auto`` decided here)."""
    dev = resolve_device(device)
    if precision == "auto":
        precision = "bfloat16" if native_bfloat16(dev) else "float32"
    return Compute(dev, torch.bfloat16 if precision == "bfloat16" else torch.float32)


def resolve_device(name: str) -> torch.device:
    """``auto``/``cpu``/``cuda``/``cuda:N``; under torchrun, plain ``cuda`` is the GPU of the process's
    ``LOCAL_RANK`` (one GPU per process on a machine with several)."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"config key 'device' = {name!r}: CUDA is not available on this machine (use 'auto' or 'cpu')")
    if name == "cuda" and "LOCAL_RANK" in os.environ:
        return torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    return torch.device(name)


def network_outputs(model: ActorCritic, compute: Compute, x: torch.Tensor, mask: torch.Tensor,
                    central: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Masked logits ``[B, A]`` and values ``[B]`` of input rows ``x`` (the observation, then the rest of the
    state for a central critic), as float32; the matrix products run in ``compute``'s precision."""
    if compute.dtype == torch.float32 and sparse_pays(x) and model.sparse_input:
        # Both first layers are sparse-aware (agents.ppo.sparse_linear): find the non-zeros once for both.
        x = sparse_rows(x)
        obs = x.leading_columns(model.obs_dim)
    else:
        obs = x[:, :model.obs_dim]
    with compute.autocast():
        logits, value = model.masked_logits(obs, mask), model.value(x if central else obs)
    return logits.float(), value.float()


# =========================================================================== collection
def collect(cfg: Config, ws: WorkerState, model: ActorCritic, value_norm: ValueNorm, storage: SeatRollout,
            opp: Opponents, pool: OpponentPool, compute: Compute, teacher: Any = None) -> dict[str, float]:
    """Play ``num_steps`` steps of every game, storing the learner's decisions per seat.

    With a ``teacher`` (warm start) the teacher plays every seat and all decisions are stored.
    Returns summed statistics (counts and totals, reduced over workers by the caller).
    """
    n_envs = ws.envs.num_envs
    label_phases = sorted({int(Phase[name.upper()]) for name in cfg.warmstart.label_phases})
    central = model.config.central_critic
    scale = cfg.ppo.reward_scale
    stats = dict.fromkeys(opp.stat_keys(), 0.0)
    pool_wins = np.zeros(pool.capacity)
    pool_rounds = np.zeros(pool.capacity)
    storage.begin()
    for _ in range(cfg.ppo.num_steps):
        obs, masks, seats = ws.obs, ws.masks, ws.seats
        inputs = ws.envs.state() if central else obs
        if teacher is not None:
            learner = np.ones(n_envs, bool)
        else:
            learner = (opp.opponent < 0) | (seats % 2 == opp.learner_team)
        legal_all = masks.astype(bool)
        actions = np.empty(n_envs, np.int64)
        targets = None
        # A forced move (one legal action) is no decision: it is played here for every controller
        # and, for the learner, not stored, so its seat's trajectory runs on to its next real decision.
        forced = legal_all.sum(1) == 1 if cfg.ppo.skip_forced else np.zeros(n_envs, bool)
        actions[forced] = legal_all[forced].argmax(1)
        stored = learner & ~forced
        if teacher is not None and len(label_phases) < Phase.ROUND_END:  # not every decision phase
            stored &= np.isin(obs[:, :len(Phase)].argmax(1), label_phases)  # the observation starts with the phase
        rows = np.flatnonzero(stored)
        legal = legal_all[rows]
        stored_inputs = inputs[rows]
        if teacher is not None:
            # Warm start: the teacher labels the stored decisions; the games are played by the teacher
            # (behaviour cloning) or by the network being trained (expert iteration: its own positions).
            playing = np.flatnonzero(~forced)
            if cfg.warmstart.play == "learner":
                actions[playing] = _network_actions(model, value_norm, inputs[playing], legal_all[playing], ws.action_gen,
                                                    compute, central)[0]
                if cfg.warmstart.targets == "values":
                    targets = teacher.action_targets(obs[rows], masks[rows])
                    act = targets.argmax(1)
                else:
                    act = teacher.act_batch(obs[rows], masks[rows])
            elif len(playing) == len(rows):
                act = teacher.act_batch(obs[rows], masks[rows])
            else:
                actions[playing] = teacher.act_batch(obs[playing], masks[playing])
                act = actions[rows]
            logp = np.zeros(len(rows), np.float32)
            values = np.zeros(len(rows), np.float32)
        else:
            # ALGO LOGIC: the learner's seats act with the current network, one forward pass for all games.
            act, logp, values = _network_actions(model, value_norm, stored_inputs, legal, ws.action_gen, compute, central)
        actions[rows] = act
        others = np.flatnonzero(~learner & ~forced)
        n_baselines = len(opp.baselines)
        for oid in np.unique(opp.opponent[others]):
            if oid < n_baselines:
                sel = others[opp.opponent[others] == oid]
                actions[sel] = opp.baselines[oid].act_batch(obs[sel], masks[sel])
        snapshot_rows = others[opp.opponent[others] >= n_baselines]
        if len(snapshot_rows):  # every snapshot's rows in one batched forward pass
            actions[snapshot_rows] = pool.act_batch(opp.opponent[snapshot_rows] - n_baselines, obs[snapshot_rows],
                                                    masks[snapshot_rows])
        storage.add(stored_inputs, legal, seats, stored, act, logp, values, targets)

        ws.obs, ws.masks, ws.seats, rewards, dones, infos = ws.envs.step(actions)
        storage.credit(rewards * scale)
        stats["decisions"] += n_envs
        stats["learner_decisions"] += len(rows)

        round_end = np.zeros(n_envs, bool)
        for g, info in enumerate(infos):
            rr = info.get("round_result")
            if rr is None:
                continue
            round_end[g] = True
            stats["rounds"] += 1
            stats["made"] += rr["made"]
            stats["bid_sum"] += rr["bid"]
            oid = opp.opponent[g]
            if teacher is not None or oid < 0:
                continue
            team = opp.learner_team[g]
            mine, theirs = rr["scores"][team], rr["scores"][(team + 1) % 2]
            name = opp.controller_name(oid)
            stats[f"vs_{name}_rounds"] += 1
            stats[f"vs_{name}_score"] += mine - theirs
            stats["vs_rounds"] += 1
            if rr["declarer"] % 2 == team:
                stats["vs_declared"] += 1
                stats["vs_declared_made"] += rr["made"]
            if oid >= len(opp.baselines):
                pool_wins[oid - len(opp.baselines)] += round_outcome(mine, theirs)
                pool_rounds[oid - len(opp.baselines)] += 1
        ended = dones | round_end if cfg.ppo.return_horizon == "round" else dones
        storage.end(ended)
        if teacher is None:
            draw_opponents(opp, np.flatnonzero(ended), pool, ws.rng)
    stats["pool_wins"] = pool_wins  # type: ignore[assignment]
    stats["pool_rounds"] = pool_rounds  # type: ignore[assignment]
    return stats


def _network_actions(model: ActorCritic, value_norm: ValueNorm, inputs: np.ndarray, legal: np.ndarray,
                     generator: torch.Generator, compute: Compute, central: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sampled actions, their log-probabilities and the value estimates, one forward pass for all rows."""
    with torch.no_grad():
        x = torch.from_numpy(inputs).to(compute.device)
        m = torch.from_numpy(legal).to(compute.device)
        logits, value = network_outputs(model, compute, x, m, central)
        logp_all = log_probs(logits)
        a = sample_actions(logp_all, generator)
        logp = logp_all.gather(1, a[:, None]).squeeze(1).cpu().numpy()
        values = value_norm.denormalize(value).cpu().numpy()
    return a.cpu().numpy(), logp, values


# =========================================================================== updates
def training_batch(storage: SeatRollout, advantages: np.ndarray, returns: np.ndarray,
                   targets: bool = False) -> dict[str, np.ndarray]:
    """The trainable decisions of a rollout. ``inputs`` stays the whole storage grid (rows
    ``input_rows``): it is by far the widest array, so minibatches gather from it directly
    instead of from a copy (it is overwritten by the next rollout, after the update).
    ``targets``: add the teacher's per-action targets (a warm start with ``targets: values``)."""
    idx = storage.trainable()
    extra = {"targets": storage.flat("targets")[idx]} if targets else {}
    return {**extra,
        "inputs": storage.flat("inputs"),
        "input_rows": idx,
        "masks": storage.flat("masks")[idx],
        "actions": storage.flat("actions")[idx],
        "logprobs": storage.flat("logprobs")[idx],
        "values": storage.flat("values")[idx],
        "advantages": advantages[idx],
        "returns": returns[idx],
    }


def update_value_norm(value_norm: ValueNorm, returns: np.ndarray, workers: Workers) -> None:
    r = returns.astype(np.float64)
    count, total, total_sq = workers.sum([len(r), r.sum(), (r * r).sum()])
    value_norm.update_from_moments(count, total, total_sq)


LOSS_STATS = ("policy_loss", "value_loss", "entropy", "old_approx_kl", "approx_kl", "clipfrac", "grad_norm")
"""Loss statistics of a PPO update, in the order they are reduced over workers."""


def ppo_update(cfg: Config, model: ActorCritic, value_norm: ValueNorm, optimizer: torch.optim.Optimizer,
               batch: dict[str, np.ndarray], workers: Workers, rng: np.random.Generator, ent_coef: float,
               compute: Compute) -> dict[str, float]:
    """Clipped PPO epochs over one rollout; returns loss statistics over all workers.

    Every collective here has a shape fixed by the config, never by this worker's data: each
    worker runs the same number of minibatches (an empty one contributes zero gradients), and
    statistics travel as fixed-length vectors of sums and counts.
    """
    p, device = cfg.ppo, compute.device
    n = len(batch["actions"])
    central = model.config.central_critic
    phase = batch["inputs"][batch["input_rows"], :len(Phase)].argmax(1)  # the observation starts with the phase one-hot
    t = {k: torch.from_numpy(v) for k, v in batch.items()}
    returns_n = value_norm.normalize(t["returns"])
    old_values_n = value_norm.normalize(t["values"])
    sums = np.zeros(len(LOSS_STATS))  # sums weighted by minibatch size, then their weight
    weight = 0.0
    phase_entropy = np.zeros(len(Phase))
    phase_count = np.bincount(phase, minlength=len(Phase)).astype(np.float64)
    approx_kl = 0.0
    epochs_done = 0
    for epoch in range(p.update_epochs):
        for mb in np.array_split(rng.permutation(n), p.num_minibatches):
            optimizer.zero_grad(set_to_none=False)
            if len(mb) == 0:  # this worker has fewer decisions than minibatches: it adds zero gradients
                workers.average_gradients(model.parameters())
                torch.nn.utils.clip_grad_norm_(model.parameters(), p.max_grad_norm)
                optimizer.step()
                continue
            x = t["inputs"].index_select(0, t["input_rows"][mb]).to(device)
            m = t["masks"][mb].to(device)
            a = t["actions"][mb].to(device)
            logits, newvalue = network_outputs(model, compute, x, m, central)
            logp_all = log_probs(logits)
            newlogp = logp_all.gather(1, a[:, None]).squeeze(1)
            entropy = masked_entropy(logp_all, m)
            logratio = newlogp - t["logprobs"][mb].to(device)
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean().item()
                approx_kl = ((ratio - 1) - logratio).mean().item()
                clipfrac = ((ratio - 1.0).abs() > p.clip_coef).float().mean().item()

            adv = t["advantages"][mb].to(device)
            if p.norm_adv and len(mb) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef)).mean()

            target = returns_n[mb].to(device)
            if p.clip_vloss:
                old_v = old_values_n[mb].to(device)
                v_clipped = old_v + (newvalue - old_v).clamp(-p.clip_coef, p.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - target) ** 2, (v_clipped - target) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - target) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ent_coef * entropy_loss + p.vf_coef * v_loss

            loss.backward()
            workers.average_gradients(model.parameters())
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), p.max_grad_norm).item()
            optimizer.step()

            if epoch == 0:
                np.add.at(phase_entropy, phase[mb], entropy.detach().cpu().numpy())
            sums += len(mb) * np.array([pg_loss.item(), v_loss.item(), entropy_loss.item(), old_approx_kl, approx_kl,
                                        clipfrac, grad_norm])
            weight += len(mb)
        epochs_done = epoch + 1
        if p.target_kl is not None and workers.sum([approx_kl])[0] / workers.world_size > p.target_kl:
            break
    # Explained variance from moments summed over workers: n, sum y, sum y^2, sum e, sum e^2 (e = y - prediction).
    y, pred = batch["returns"].astype(np.float64), batch["values"].astype(np.float64)
    e = y - pred
    moments = [len(y), y.sum(), (y * y).sum(), e.sum(), (e * e).sum()]
    total = workers.sum(np.concatenate([sums, [weight], phase_entropy, phase_count, moments]))
    k = len(LOSS_STATS)
    g_sums, g_weight = total[:k], total[k]
    g_phase_entropy, g_phase_count = total[k + 1:k + 1 + len(Phase)], total[k + 1 + len(Phase):k + 1 + 2 * len(Phase)]
    count, sy, syy, se, see = total[k + 1 + 2 * len(Phase):]
    out = {name: float(v / g_weight) if g_weight else float("nan") for name, v in zip(LOSS_STATS, g_sums)}
    out["epochs_done"] = float(epochs_done)
    for i, name in enumerate(PHASE_NAMES):
        if g_phase_count[i] > 0:
            out[f"entropy_{name}"] = float(g_phase_entropy[i] / g_phase_count[i])
    var_y = syy / count - (sy / count) ** 2 if count else 0.0
    var_e = see / count - (se / count) ** 2 if count else 0.0
    out["explained_variance"] = float("nan") if var_y <= 1e-12 else float(1 - var_e / var_y)
    return out


BC_STATS = ("loss", "accuracy", "value_loss", "entropy")
"""Statistics of a warm-start update, in the order they are reduced over workers."""


def bc_update(cfg: Config, model: ActorCritic, value_norm: ValueNorm, optimizer: torch.optim.Optimizer,
              batch: dict[str, np.ndarray], workers: Workers, rng: np.random.Generator,
              compute: Compute) -> dict[str, float]:
    """Warm start: cross-entropy on the teacher's actions (or on its per-action ``targets`` where the batch has
    them), value regression on Monte-Carlo returns.

    Collectives have fixed shapes, as in :func:`ppo_update`; returns statistics over all workers and their
    number of labelled decisions (``labels``; the statistics are NaN when it is 0).
    """
    n, device = len(batch["actions"]), compute.device
    central = model.config.central_critic
    t = {k: torch.from_numpy(v) for k, v in batch.items()}
    returns_n = value_norm.normalize(t["returns"])
    sums = np.zeros(len(BC_STATS))
    weight = 0.0
    for _ in range(cfg.warmstart.epochs):
        for mb in np.array_split(rng.permutation(n), cfg.ppo.num_minibatches):
            optimizer.zero_grad(set_to_none=False)
            if len(mb) == 0:  # fewer decisions than minibatches on this worker: zero gradients
                workers.average_gradients(model.parameters())
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.ppo.max_grad_norm)
                optimizer.step()
                continue
            x = t["inputs"].index_select(0, t["input_rows"][mb]).to(device)
            m, a = t["masks"][mb].to(device), t["actions"][mb].to(device)
            logits, value = network_outputs(model, compute, x, m, central)
            logp_all = log_probs(logits)
            if "targets" in t:
                q = t["targets"][mb].to(device)
                nll = -(q * logp_all).where(q > 0, torch.zeros((), dtype=logp_all.dtype)).sum(1).mean()
            else:
                nll = -logp_all.gather(1, a[:, None]).squeeze(1).mean()
            v_loss = 0.5 * ((value - returns_n[mb].to(device)) ** 2).mean()
            loss = nll + cfg.ppo.vf_coef * v_loss
            loss.backward()
            workers.average_gradients(model.parameters())
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.ppo.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                sums += len(mb) * np.array([nll.item(), (logp_all.argmax(1) == a).float().mean().item(), v_loss.item(),
                                            masked_entropy(logp_all, m).mean().item()])
            weight += len(mb)
    total = workers.sum(np.concatenate([sums, [weight, n]]))
    out = {name: float(v / total[-2]) if total[-2] else float("nan") for name, v in zip(BC_STATS, total[:-2])}
    return {**out, "labels": float(total[-1])}


# =========================================================================== evaluation
def evaluate_policy(ckpt: dict[str, Any], ecfg: EvalConfig, deals: int) -> dict[str, dict[str, float]]:
    """Duplicate evaluation (``agents.evaluation.evaluate``, as ``evaluate.py``) of ``ckpt`` against ``ecfg.opponents``.

    The policy plays from memory: ``build_model`` rebuilds the network from the checkpoint dict exactly as
    ``ppo:PATH`` would load it (same weights, rules and greedy setting), so the figures equal
    ``evaluate.py --agents ppo:best.pt ...`` on the same seed; nothing is written to disk.
    Returns, per opponent spec, the mean score difference per deal (learner team minus
    opponent team, mean of the two duplicate tables), its 95% interval and the share of deals won.
    """
    from agents import evaluation

    rules = RulesConfig.from_kwargs(ckpt["rules"])
    agent = PPOAgent(build_model(ckpt), rules, greedy=bool(ckpt.get("act", {}).get("greedy", True)),
                     source="the network being trained")
    result = evaluation.evaluate([agent, *ecfg.opponents], deals=deals, seed=ecfg.seed, episode="round",
                                 workers=1, progress=False, rules=rules,
                                 pairs=[(0, j + 1) for j in range(len(ecfg.opponents))])
    out = {}
    for pair in result.pairs:
        out[ecfg.opponents[len(out)]] = {"mean": pair.mean_diff, "ci_low": pair.ci95[0], "ci_high": pair.ci95[1],
                                         "win_rate": pair.win_rate, "deals": float(pair.deals),
                                         "bid_rate": pair.a.get("bid_rate", float("nan")),
                                         "make_rate": pair.a.get("make_rate", float("nan"))}
    return out


# =========================================================================== the run
def setup_run(args: argparse.Namespace) -> tuple[Config, Path, dict[str, Any] | None]:
    """Resolve the config and the run directory (new run, or the run to resume)."""
    if args.resume:
        run_dir = Path(args.resume)
        latest = run_dir / "checkpoints" / "latest.pt"
        if args.config:
            raise ValueError("--resume takes the config of the run it continues: drop --config (use --set to change a key)")
        if not latest.is_file():
            prev = checkpoint_io.previous_path(latest)
            hint = f" (there is {str(prev)!r}: rename it to latest.pt to resume from it)" if prev.is_file() else ""
            raise ValueError(f"--resume {str(run_dir)!r}: no checkpoints/latest.pt in that directory{hint}")
        ckpt = checkpoint_io.load(latest, advice=resume_advice(latest), validate=validate_resume_checkpoint)
        cfg = load_config(None, args.set, base=ckpt["config"])
        check_resume_changes(ckpt["config"], to_plain(cfg))
        return cfg, run_dir, ckpt
    if not args.config:
        raise ValueError("give --config FILE (for example configs/ppo_selfplay.yaml) or --resume RUN_DIR")
    cfg = load_config(args.config, args.set)
    if args.run_dir:
        run_dir = Path(args.run_dir)
    else:
        name = cfg.run_name or f"{Path(args.config).stem}__s{cfg.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir = Path(cfg.output_dir) / name
    if (run_dir / "checkpoints" / "latest.pt").exists():
        raise ValueError(f"run directory {str(run_dir)!r} already holds a run: continue it with --resume {run_dir}, "
                         "or choose another --run-dir")
    return cfg, run_dir, None


class Trainer:
    """One worker's training run: the setup, then ``run()`` (warm start, PPO, final evaluation).

    Every worker builds the same model (same seed) and its own games and random streams
    (seeded by its rank); gradients and statistics are reduced over workers, so all of
    them hold the same weights. The main worker (rank 0) writes the run directory.
    """

    def __init__(self, workers: Workers, cfg: Config, run_dir: Path, resume: dict[str, Any] | None, quiet: bool):
        torch.set_num_threads(1)
        self.cfg, self.run_dir = cfg, run_dir
        self.workers = workers
        rank = workers.rank
        self.main = workers.is_main
        self.compute = resolve_compute(cfg.device, cfg.precision)
        self.device = device = self.compute.device
        self.rules = rules = cfg.rules
        p = cfg.ppo
        local_envs = p.num_envs // cfg.num_workers
        self.decisions_per_iteration = p.num_envs * p.num_steps
        self.num_iterations = max(1, math.ceil(p.total_decisions / self.decisions_per_iteration))
        self.bc_iterations = math.ceil(cfg.warmstart.decisions / self.decisions_per_iteration) if cfg.warmstart.decisions else 0

        # TRY NOT TO MODIFY: seeding. Every stream derives from (seed, purpose, worker).
        torch.manual_seed(stream_seed(cfg.seed, 0))  # weight initialisation: identical on every worker
        torch.backends.cudnn.deterministic = True
        envs = VectorEnv(local_envs, seed=stream_seed(cfg.seed, 1, rank), episode="game", reward="score_diff",
                         **rules.to_dict())
        obs, masks, seats = envs.reset()
        self.ws = WorkerState(envs, obs, masks, seats, np.random.default_rng([cfg.seed, 2, rank]),
                              torch.Generator().manual_seed(stream_seed(cfg.seed, 3, rank)))

        self.model = ActorCritic(envs.obs_dim, envs.state_dim, envs.num_actions, cfg.network).to(device)
        self.value_norm = ValueNorm()
        if cfg.warmstart.init_from and resume is None:
            self._init_from(cfg.warmstart.init_from)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=p.learning_rate, eps=p.adam_eps)
        self.bc_optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.warmstart.learning_rate, eps=p.adam_eps)
        self.storage = SeatRollout(p.num_steps, local_envs, envs.n_players,
                                   envs.state_dim if cfg.network.central_critic else envs.obs_dim,
                                   targets=self.bc_iterations > 0 and cfg.warmstart.targets == "values")

        self.pool = OpponentPool(cfg.selfplay.pool_size, cfg.selfplay.pfsp_power, self.compute.dtype)
        names = list(cfg.selfplay.opponents)
        weights = np.array([cfg.selfplay.opponents[k] for k in names], np.float64)
        baseline_names = [k for k in names if k not in ("self", "snapshot")]
        from agents import make_agent

        baselines = [make_agent(spec, seed=stream_seed(cfg.seed, 4, rank, i), rules=rules)
                     for i, spec in enumerate(baseline_names)]
        self.opp = Opponents(names, weights / weights.sum(), baselines, baseline_names,
                             np.full(local_envs, -1, np.int64), np.zeros(local_envs, np.int64))
        self.teacher = (make_agent(cfg.warmstart.teacher, seed=stream_seed(cfg.seed, 5, rank), rules=rules,
                                   **cfg.warmstart.teacher_options)
                        if self.bc_iterations else None)

        self.iteration, self.bc_done, self.decisions, self.best_score = 0, 0, 0, -math.inf
        self.last_saved = "none yet"
        if resume is not None:
            self._restore(resume, rank)
        self.config_dict = to_plain(cfg)
        if self.main and cfg.eval.deals and cfg.eval.opponents:
            from agents import evaluation  # noqa: F401  (fail now, not at the first evaluation)
        if self.main:
            remove_leftovers(run_dir / "checkpoints")
        training = resume["training"] if resume is not None else None
        self.log = RunLog(run_dir, active=self.main, quiet=quiet,
                          config_yaml=yaml.safe_dump(self.config_dict, sort_keys=False),
                          resume_log_bytes=training.get("log_bytes") if training else None,
                          resume_step=self.tb_step if training else None)
        compute = {"device": str(self.compute.device), "precision": str(self.compute.dtype).removeprefix("torch."),
                   "workers": workers.world_size}  # what "auto" resolved to on this machine
        if training is not None:
            self.log.record({"type": "resume", "iteration": self.iteration, "warmstart_iteration": self.bc_done,
                             "decisions": self.decisions, **compute})
        else:
            self.log.record({"type": "start", **compute})
        self.interrupt = GracefulInterrupt(announce=self.main)
        self.interrupt.install()
        self.last_eval = ""

    @property
    def tb_step(self) -> int:
        """TensorBoard's x axis: decisions played so far, warm start included (it only grows)."""
        return self.bc_done * self.decisions_per_iteration + self.decisions

    def _init_from(self, source: str) -> None:
        init = read_checkpoint(source)
        check_rules_compatible(init["rules"], self.rules, f"warmstart.init_from {source!r}")
        network = checkpoint_network(init)
        # A plain network may seed a card-aware one of the same widths: the same logits, card play then learned.
        grafted = (self.cfg.network.card_head and not network.card_head
                   and dataclasses.replace(network, card_head=True, card_width=self.cfg.network.card_width) == self.cfg.network)
        if network != self.cfg.network and not grafted:
            raise ValueError(f"warmstart.init_from {source!r} has network {init['network']}, "
                             f"the config asks for {to_plain(self.cfg)['network']}")
        if grafted:
            plain = build_model(init)
            self.model.actor.load_plain(plain.actor)
            self.model.critic.load_state_dict(plain.critic.state_dict())
        else:
            self.model.load_state_dict(init["model"])
        if "value_norm" in init:
            self.value_norm.load_state_dict(init["value_norm"])

    def _restore(self, resume: dict[str, Any], rank: int) -> None:
        tr = resume["training"]
        self.model.load_state_dict(resume["model"])
        self.value_norm.load_state_dict(resume["value_norm"])
        self.optimizer.load_state_dict(tr["optimizer"])
        self.bc_optimizer.load_state_dict(tr["bc_optimizer"])
        self.iteration, self.bc_done, self.decisions = tr["iteration"], tr["bc_iterations"], tr["decisions"]
        self.best_score = tr["best_score"] if tr["best_score"] is not None else -math.inf
        pool = self.pool
        for state, it_ in zip(tr["pool"]["models"], tr["pool"]["iterations"]):
            snap = snapshot_agent(self.model, self.rules, 0)
            snap.model.load_state_dict(state)
            pool.add(snap, it_)
        pool.wins[:] = tr["pool"]["wins"]
        pool.rounds[:] = tr["pool"]["rounds"]
        pool.next_slot = tr["pool"]["next_slot"]
        restore_worker(tr["workers"][rank], self.ws, self.storage, self.opp, pool, self.teacher)
        self.last_saved = f"iteration {self.iteration}" if self.iteration else f"warm start {self.bc_done}"

    # ---------------------------------------------------------------- checkpoints
    def agent_checkpoint(self, **extra: Any) -> dict[str, Any]:
        return make_checkpoint(self.model, self.config_dict, self.rules, value_norm=self.value_norm.state_dict(),
                               **extra)

    def save_latest(self, reason: str) -> None:
        """Write checkpoints/latest.pt (the previous one kept as latest.prev.pt); collective."""
        if not self.workers.same_weights(self.model.parameters()):  # a desync would be saved as if it were one model
            raise TrainingError(f"the {self.workers.world_size} workers hold different weights at iteration "
                                f"{self.iteration}: checkpoints/latest.pt was not overwritten (it holds {self.last_saved})")
        snapshots = self.workers.gather(worker_snapshot(self.ws, self.storage, self.opp, self.pool, self.teacher))
        if not self.main:
            return
        pool = self.pool
        line = self.log.line({"type": "checkpoint", "file": "latest.pt", "reason": reason, "iteration": self.iteration,
                              "warmstart_iteration": self.bc_done, "decisions": self.decisions})
        training = {
            "num_workers": self.cfg.num_workers, "iteration": self.iteration, "bc_iterations": self.bc_done,
            "decisions": self.decisions, "best_score": self.best_score if math.isfinite(self.best_score) else None,
            "optimizer": self.optimizer.state_dict(), "bc_optimizer": self.bc_optimizer.state_dict(),
            "workers": snapshots, "log_bytes": self.log.size_after(line),
            "pool": {"models": [a.model.state_dict() for a in pool.agents], "iterations": list(pool.iterations),
                     "wins": pool.wins.tolist(), "rounds": pool.rounds.tolist(), "next_slot": pool.next_slot},
        }
        ckpt = self.agent_checkpoint(training=training, meta={"iteration": self.iteration, "decisions": self.decisions,
                                                              "reason": reason})
        if not checkpoint_io.all_finite(ckpt["model"]):  # never replace a good checkpoint by a broken one
            raise TrainingError(f"the weights hold NaN or infinite values at iteration {self.iteration}: "
                                f"checkpoints/latest.pt was not overwritten (it holds {self.last_saved})")
        atomic_save(ckpt, self.run_dir / "checkpoints" / "latest.pt", keep_previous=True)
        self.log.write_line(line)
        self.last_saved = f"iteration {self.iteration}" if self.iteration else f"warm start {self.bc_done}"

    def check_finite(self, stage: str, values: dict[str, float], keys: tuple[str, ...]) -> None:
        """Stop (every worker, in step) before a non-finite loss or weight reaches any file."""
        bad = [k for k in keys if not math.isfinite(values.get(k, 0.0))]
        weights_ok = checkpoint_io.all_finite(self.model.state_dict())
        if not self.workers.any(bool(bad) or not weights_ok):
            return
        what = ", ".join(f"{k} = {values[k]}" for k in bad) if bad else "the weights"
        raise TrainingError(
            f"{stage}: non-finite {what}. Stopped before writing anything: checkpoints/latest.pt still holds "
            f"{self.last_saved} and best.pt is untouched. Resume from there with a smaller step, e.g. "
            f"python train.py --resume {self.run_dir} --set ppo.learning_rate={self.cfg.ppo.learning_rate / 3:.3g}")

    # ---------------------------------------------------------------- evaluation
    def evaluate(self, deals: int, final: bool) -> dict[str, Any] | None:
        """Duplicate evaluation by the main worker (the others wait); updates best.pt."""
        cfg = self.cfg
        results = None
        start = time.time()
        if self.main and deals > 0 and cfg.eval.opponents:
            ckpt = self.agent_checkpoint(act={"greedy": cfg.eval.greedy},
                                         meta={"iteration": self.iteration, "decisions": self.decisions})
            try:
                results = evaluate_policy(ckpt, cfg.eval, deals)
            except Exception as err:  # an evaluation problem must not cost the training run
                self.log.message(f"evaluation at iteration {self.iteration} failed, training continues: {err!r}")
                self.log.record({"type": "eval_error", "iteration": self.iteration, "decisions": self.decisions,
                                 "error": repr(err)})
                results = None
        if results is not None:
            for spec, r in results.items():
                self.log.scalars("eval", {f"{spec}_score_diff": r["mean"], f"{spec}_ci_low": r["ci_low"],
                                          f"{spec}_ci_high": r["ci_high"], f"{spec}_win_rate": r["win_rate"],
                                          f"{spec}_bid_rate": r["bid_rate"], f"{spec}_make_rate": r["make_rate"]},
                                 self.tb_step)
            score = results[cfg.eval.best_opponent]["mean"]
            self.log.record({"type": "eval", "iteration": self.iteration, "decisions": self.decisions, "final": final,
                             "seconds": round(time.time() - start, 1), "results": results})
            if score > self.best_score:
                self.best_score = score
                ckpt["meta"]["eval"] = results
                atomic_save(ckpt, self.run_dir / "checkpoints" / "best.pt")
                self.log.record({"type": "checkpoint", "file": "best.pt", "iteration": self.iteration, "score": score})
            self.last_eval = "eval " + " ".join(f"{k} {v['mean']:+.2f}" for k, v in results.items())
        self.workers.barrier()
        return results

    # ---------------------------------------------------------------- iterations
    def warm_start_iteration(self) -> None:
        """Behaviour cloning: the teacher plays every seat, the network learns its actions."""
        cfg, p = self.cfg, self.cfg.ppo
        start = time.time()
        stats = collect(cfg, self.ws, self.model, self.value_norm, self.storage, self.opp, self.pool, self.compute,
                        teacher=self.teacher)
        _, mc_returns = compute_gae(self.storage.rewards, np.zeros_like(self.storage.values), self.storage.next_index,
                                    self.storage.resolved, p.gamma, 1.0)
        batch = training_batch(self.storage, np.zeros_like(mc_returns), mc_returns,
                               targets=cfg.warmstart.targets == "values")
        if p.value_norm:
            update_value_norm(self.value_norm, batch["returns"], self.workers)
        out = bc_update(cfg, self.model, self.value_norm, self.bc_optimizer, batch, self.workers, self.ws.rng,
                        self.compute)
        # No labelled decision on any worker (a rollout too short to reach label_phases): the statistics
        # are undefined (NaN), not a diverged loss; the weights are still checked.
        self.check_finite(f"warm start iteration {self.bc_done + 1}", out, BC_STATS if out["labels"] else ())
        self.bc_done += 1
        decisions = self.workers.sum([stats["decisions"]])[0]
        bc_stats = {**out, "decisions_per_second": decisions / (time.time() - start)}
        self.log.scalars("bc", bc_stats, self.tb_step)
        self.log.record({"type": "warmstart", "iteration": self.bc_done, "of": self.bc_iterations,
                         "targets": self.cfg.warmstart.targets, **bc_stats})
        self.log.advance(int(decisions), f"accuracy {bc_stats['accuracy']:.3f}")
        if self.bc_done == self.bc_iterations:
            self.storage.pending.fill(-1)  # the teacher's open decisions are not the learner's: drop them

    def ppo_iteration(self) -> None:
        """Collect a rollout with the current network, then update it (CleanRL's loop body)."""
        cfg, p, workers, pool = self.cfg, self.cfg.ppo, self.workers, self.pool
        self.iteration += 1
        start = time.time()
        frac = (self.iteration - 1) / self.num_iterations
        lr = p.learning_rate * (1.0 - frac) if p.lr_schedule == "linear" else p.learning_rate
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        ent_coef = p.ent_coef if p.ent_coef_final is None else p.ent_coef + frac * (p.ent_coef_final - p.ent_coef)

        self.model.eval()
        stats = collect(cfg, self.ws, self.model, self.value_norm, self.storage, self.opp, pool, self.compute)
        collect_seconds = time.time() - start
        # ALGO LOGIC: advantages along each seat's own trajectory.
        advantages, returns = compute_gae(self.storage.rewards, self.storage.values, self.storage.next_index,
                                          self.storage.resolved, p.gamma, p.gae_lambda)
        batch = training_batch(self.storage, advantages, returns)
        if p.value_norm:
            update_value_norm(self.value_norm, batch["returns"], workers)
        self.model.train()
        losses = ppo_update(cfg, self.model, self.value_norm, self.optimizer, batch, workers, self.ws.rng, ent_coef,
                            self.compute)
        self.check_finite(f"PPO iteration {self.iteration}", losses, LOSS_STATS)
        seconds = time.time() - start

        # Reduce statistics over workers: fixed-length vectors, the same keys on every worker.
        pool_delta = workers.sum(np.concatenate([stats.pop("pool_wins"), stats.pop("pool_rounds")]))
        for slot in range(len(pool)):
            pool.record(slot, pool_delta[slot], pool_delta[pool.capacity + slot])
        keys = self.opp.stat_keys()
        totals = dict(zip(keys, workers.sum([stats[k] for k in keys])))
        batch_size = workers.sum([len(batch["actions"])])[0]
        self.decisions += int(totals["decisions"])

        charts = {
            "decisions_per_second": totals["decisions"] / seconds,
            "collect_fraction": collect_seconds / seconds,
            "learning_rate": lr,
            "ent_coef": ent_coef,
            "batch_size": batch_size,
            "make_rate": totals["made"] / max(totals["rounds"], 1),
            "mean_bid": totals["bid_sum"] / max(totals["rounds"], 1),
            "bid_rate": totals["vs_declared"] / totals["vs_rounds"] if totals["vs_rounds"] else float("nan"),
            "learner_make_rate": totals["vs_declared_made"] / totals["vs_declared"] if totals["vs_declared"] else float("nan"),
            "pool_size": len(pool),
        }
        for name in [*self.opp.baseline_names, "snapshot"]:
            if totals[f"vs_{name}_rounds"]:
                charts[f"score_diff_vs_{name}"] = totals[f"vs_{name}_score"] / totals[f"vs_{name}_rounds"]
        if len(pool):
            charts["pool_min_win_rate"] = float(pool.win_rates().min())
        self.log.scalars("charts", charts, self.tb_step)
        self.log.scalars("losses", losses, self.tb_step)
        self.log.record({"type": "iteration", "iteration": self.iteration, "decisions": self.decisions,
                         "seconds": round(seconds, 3), **{f"charts/{k}": v for k, v in charts.items()},
                         **{f"losses/{k}": v for k, v in losses.items()}})
        if self.iteration % cfg.selfplay.snapshot_every == 0:
            pool.add(snapshot_agent(self.model, self.rules, stream_seed(cfg.seed, 6, self.iteration)), self.iteration)
        if cfg.eval.every and self.iteration % cfg.eval.every == 0 and self.iteration < self.num_iterations:
            self.evaluate(cfg.eval.deals, final=False)
        self.log.advance(int(totals["decisions"]), self.last_eval)

    # ---------------------------------------------------------------- the whole run
    def stop_requested(self, done_this_call: int, max_iterations: int | None) -> bool:
        """Ctrl-C on any worker, or ``--max-iterations`` reached (collective: every worker agrees)."""
        return self.workers.any(self.interrupt.requested) or (max_iterations is not None
                                                               and done_this_call >= max_iterations)

    def run(self, max_iterations: int | None) -> None:
        cfg = self.cfg
        dpi = self.decisions_per_iteration
        done_this_call = 0

        stopped = False
        if self.bc_done < self.bc_iterations:
            self.log.start_bar("warm start", self.bc_iterations * dpi, self.bc_done * dpi)
        while self.bc_done < self.bc_iterations:
            self.warm_start_iteration()
            done_this_call += 1
            if self.stop_requested(done_this_call, max_iterations):
                stopped = True
                break
            if self.bc_done % cfg.checkpoint_every == 0:  # a killed run (a search teacher's labels are costly) loses at most these
                self.save_latest("scheduled")
        if not stopped and self.iteration == 0 and len(self.pool) == 0:
            self.pool.add(snapshot_agent(self.model, self.rules, stream_seed(cfg.seed, 6, 0)), 0)
        if not stopped:
            self.log.start_bar("PPO", self.num_iterations * dpi, self.decisions)
        while not stopped and self.iteration < self.num_iterations:
            self.ppo_iteration()
            done_this_call += 1
            stop = self.stop_requested(done_this_call, max_iterations)
            if self.iteration % cfg.checkpoint_every == 0 or self.iteration == self.num_iterations or stop:
                self.save_latest("interrupted" if self.interrupt.requested else "stopped" if stop else "scheduled")
            if stop:
                stopped = self.iteration < self.num_iterations
                break
        self.log.close_bar()
        if stopped:
            if self.bc_done < self.bc_iterations or self.iteration == 0:
                self.save_latest("interrupted" if self.interrupt.requested else "stopped")
            self.log.message(f"stopped at iteration {self.iteration} (warm start {self.bc_done}/{self.bc_iterations}); "
                             f"continue with: python train.py --resume {self.run_dir}")
        else:
            self.evaluate(cfg.eval.final_deals if cfg.eval.deals else 0, final=True)
            best = self.run_dir / "checkpoints" / "best.pt"
            if self.main and not best.exists():
                # No evaluation ran: the final weights are the best we know.
                atomic_save(self.agent_checkpoint(act={"greedy": cfg.eval.greedy},
                                                  meta={"iteration": self.iteration, "decisions": self.decisions}), best)
            in_step = self.workers.same_weights(self.model.parameters())
            self.log.record({"type": "done", "iteration": self.iteration, "decisions": self.decisions,
                             "workers": self.workers.world_size, "workers_in_step": in_step})
        self.log.message(where_results_are(self.run_dir))

    def close(self) -> None:
        self.log.close()
        self.workers.close()


def where_results_are(run_dir: Path) -> str:
    return (f"run directory: {run_dir}\n"
            f"  checkpoints: {run_dir / 'checkpoints'} (best.pt: best evaluation, latest.pt: resume with "
            f"python train.py --resume {run_dir})\n"
            f"  logs: {run_dir / 'log.jsonl'}; TensorBoard: tensorboard --logdir {run_dir}")


def train(workers: Workers, cfg: Config, run_dir: Path, resume: dict[str, Any] | None, max_iterations: int | None,
          quiet: bool) -> None:
    """One worker of a run (rank 0 writes the run directory)."""
    trainer = Trainer(workers, cfg, run_dir, resume, quiet)
    try:
        trainer.run(max_iterations)
    finally:
        trainer.close()


def _spawned(rank: int, cfg: Config, run_dir: Path, resume: dict[str, Any] | None, max_iterations: int | None,
             quiet: bool) -> None:
    workers = Workers(rank, cfg.num_workers, str((run_dir / ".rendezvous").resolve()))
    # torch.multiprocessing hands every worker the same shared-memory tensors. Optimizer.load_state_dict
    # keeps them as they are, so without a private copy the workers would update one Adam state twice.
    train(workers, cfg, run_dir, copy.deepcopy(resume), max_iterations, quiet)
    _exit_worker()


def _exit_worker() -> None:
    """End a worker process that finished cleanly without the interpreter's teardown, where gloo's
    background threads can still abort the process (``terminate called without an active exception``)
    after all work is done and saved."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Config keys: run with --list-keys.")
    parser.add_argument("--config", help="YAML config file (keys: see --list-keys); defaults fill the rest")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key, e.g. --set ppo.learning_rate=1e-4 (repeatable)")
    parser.add_argument("--run-dir", help="run directory (default: <output_dir>/<run_name or generated name>)")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from checkpoints/latest.pt")
    parser.add_argument("--max-iterations", type=int, default=None,
                        help="stop after this many iterations of this invocation (saving latest.pt, schedule unchanged)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--list-keys", action="store_true", help="print every config key with its type and meaning")
    return parser.parse_args(argv)


def _worker_error(err: BaseException) -> str | None:
    """The one-line message of a known error raised in a spawned worker (its traceback's last line)."""
    lines = [ln for ln in str(err).strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    for name in ("TrainingError", "CheckpointError", "ValueError"):
        marker = f"{name}: "
        if marker in last:
            return last.split(marker, 1)[1]
    return None


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.list_keys:
        for key, tp, doc in describe(Config):
            print(f"{key:34s} {tp:40s} {doc}")
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    if launched_by_torchrun():
        return main_torchrun(args)
    try:
        cfg, run_dir, resume = setup_run(args)
    except ValueError as err:
        raise SystemExit(f"train.py: error: {err}") from None
    run_dir.mkdir(parents=True, exist_ok=True)
    if cfg.num_workers == 1:
        try:
            train(Workers(), cfg, run_dir, resume, args.max_iterations, args.quiet)
        except (TrainingError, ValueError) as err:
            raise SystemExit(f"train.py: error: {err}") from None
        return
    rendezvous = run_dir / ".rendezvous"
    rendezvous.unlink(missing_ok=True)
    # Ctrl-C reaches every worker (same process group); each finishes the iteration in step with
    # the others and the main worker saves. The parent only waits, so it ignores the signal.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        torch.multiprocessing.spawn(_spawned, args=(cfg, run_dir, resume, args.max_iterations, args.quiet),
                                    nprocs=cfg.num_workers, join=True)
    except torch.multiprocessing.ProcessRaisedException as err:
        message = _worker_error(err)
        if message is None:
            raise
        raise SystemExit(f"train.py: error: {message}") from None
    finally:
        signal.signal(signal.SIGINT, previous)
        rendezvous.unlink(missing_ok=True)


def main_torchrun(args: argparse.Namespace) -> None:
    """One process of a ``torchrun`` launch, on this machine or one of many.

    The main worker (rank 0) resolves the config and the run directory (and reads latest.pt on
    ``--resume``) and hands them to the others, so the other machines need neither the run
    directory nor a shared file system; ``num_workers`` is torchrun's world size.
    """
    workers = Workers.from_environment()
    setup: tuple[Any, ...] = ()
    if workers.is_main:
        try:
            args.set = [*args.set, f"num_workers={workers.world_size}"] if not args.resume else args.set
            cfg, run_dir, resume = setup_run(args)
            if cfg.num_workers != workers.world_size:
                raise ValueError(f"this run was trained with num_workers={cfg.num_workers}: resume it with as many "
                                 f"torchrun processes in all (this launch has {workers.world_size})")
            setup = (to_plain(cfg), str(run_dir), resume)
        except ValueError as err:
            setup = (f"train.py: error: {err}",)
    setup = workers.broadcast(setup)
    if len(setup) == 1:
        workers.close()
        raise SystemExit(setup[0] if workers.is_main else 1)
    config, run_dir_name, resume = setup
    cfg, run_dir = validate(Config, config), Path(run_dir_name)
    if workers.is_main:
        run_dir.mkdir(parents=True, exist_ok=True)
    try:
        train(workers, cfg, run_dir, resume, args.max_iterations, args.quiet or not workers.is_main)
    except (TrainingError, ValueError) as err:
        raise SystemExit(f"train.py: error: {err}") from None
    if workers.world_size > 1:
        _exit_worker()


if __name__ == "__main__":
    main()
