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
   (:mod:`agents.rollout`).
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
   holds ``config.yaml`` (the resolved config), the TensorBoard events,
   ``log.jsonl`` (one JSON object per iteration / evaluation / checkpoint) and
   ``checkpoints/latest.pt`` (everything needed to resume: weights, optimiser,
   counters, RNG streams, game states) and ``checkpoints/best.pt`` (best
   evaluation against ``eval.best_opponent``), both written atomically.

Ctrl-C finishes the current iteration, saves ``latest.pt`` and exits; a second
Ctrl-C aborts at once. ``--resume RUN_DIR`` continues that run exactly where it
stopped: the same optimiser state, counters and random streams, so a run
interrupted and resumed produces the same weights as one that was not.

The optional warm start (``warmstart.decisions > 0``) first clones a teacher
agent (default ``heuristic``) by supervised learning on its own games (policy:
cross-entropy on the teacher's actions; critic: the Monte-Carlo returns of those
games), then hands over to PPO. A checkpoint is an agent: ``ppo:RUN_DIR/checkpoints/best.pt``
works wherever an agent spec does (``evaluate.py``, ``agents.make_agent``).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import pickle
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import yaml

from agents.parallel import Workers
from agents.ppo import (
    ActorCritic,
    NetworkConfig,
    PPOAgent,
    ValueNorm,
    atomic_save,
    check_rules_compatible,
    log_probs,
    make_checkpoint,
    masked_entropy,
    read_checkpoint,
    sample_actions,
)
from agents.rollout import SeatRollout, compute_gae
from agents.selfplay import OpponentPool, round_outcome
from agents.typed_config import apply_overrides, describe_config, from_dict, load_yaml, require, to_dict
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase
from pcr_env.vector import VectorEnv

ROOT = Path(__file__).resolve().parent
PHASE_NAMES = [p.name.lower() for p in Phase]


# =========================================================================== configuration
@dataclass
class PPOConfig:
    """PPO and rollout hyperparameters (section ``ppo``)."""

    total_decisions: int = 60_000_000
    """Training length: decisions taken in all games (every seat, learner or not), warm start excluded."""
    num_envs: int = 256
    """Games played side by side (all workers together; each worker runs num_envs / num_workers)."""
    num_steps: int = 128
    """Decisions per game per rollout; one rollout is num_envs * num_steps decisions."""
    learning_rate: float = 3e-4
    """Adam learning rate at the start of PPO."""
    lr_schedule: Literal["linear", "constant"] = "linear"
    """``linear``: anneal the learning rate to 0 over the run; ``constant``: keep it."""
    adam_eps: float = 1e-5
    """Adam epsilon."""
    gamma: float = 1.0
    """Discount per decision of the same seat (1.0: undiscounted round score)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    return_horizon: Literal["round", "game"] = "round"
    """Where a seat's trajectory ends: ``round`` (the return is the team's score difference of the
    round; games still run to the target score so pass directions and score context cycle as in
    real play) or ``game`` (the sum over the rest of the game; use gamma < 1)."""
    reward_scale: float = 0.05
    """Rewards (round score differences, about -40..40) are multiplied by this before learning."""
    value_norm: bool = True
    """Normalise value targets with running statistics (the critic predicts normalised returns)."""
    update_epochs: int = 4
    """Passes over each rollout."""
    num_minibatches: int = 4
    """Minibatches per pass (per worker)."""
    clip_coef: float = 0.2
    """PPO ratio clipping."""
    clip_vloss: bool = True
    """Clip the value loss around the old value prediction."""
    norm_adv: bool = True
    """Normalise advantages within each minibatch."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient (entropy over the legal actions)."""
    ent_coef_final: float | None = None
    """If set, the entropy coefficient anneals linearly from ent_coef to this value."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Global gradient-norm clip."""
    target_kl: float | None = None
    """Stop a rollout's update early once the approximate KL exceeds this (null: never)."""
    skip_forced: bool = True
    """Play forced moves (a single legal action, about 15% of decisions: last tricks, singletons
    that must follow suit) without the network and leave them out of the trajectories: they carry
    no policy gradient, and the seat's next real decision takes over as the bootstrap point."""

    def __post_init__(self) -> None:
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


@dataclass
class SelfPlayConfig:
    """Who the learner plays against (section ``selfplay``)."""

    opponents: dict[str, float] = field(default_factory=lambda: {"self": 0.7, "snapshot": 0.2, "heuristic": 0.1})
    """Mix of opponents, drawn per game each time a trajectory ends, as relative weights:
    ``self`` (both teams are the current network), ``snapshot`` (a frozen past network from the
    pool) or any agent spec (``heuristic``, ``random``, ``ppo:PATH``)."""
    snapshot_every: int = 10
    """Add the current network to the snapshot pool every this many PPO iterations
    (the starting network is always added first)."""
    pool_size: int = 10
    """Snapshots kept; the newest replaces the oldest."""
    pfsp_power: float = 2.0
    """Prioritised fictitious self-play: snapshot j is drawn with weight (1 - p_j)^power, p_j the
    learner's round-win rate against it (0: uniform)."""

    def __post_init__(self) -> None:
        from agents.base import parse_spec

        require(len(self.opponents) > 0, "opponents", self.opponents, "a non-empty mapping of opponent to weight")
        for name, weight in self.opponents.items():
            if name not in ("self", "snapshot"):
                try:
                    parse_spec(name)
                except ValueError as err:
                    require(False, f"opponents.{name}", weight, f"'self', 'snapshot' or an agent spec ({err})")
            require(weight >= 0, f"opponents.{name}", weight, "a weight >= 0")
        require(sum(self.opponents.values()) > 0, "opponents", self.opponents, "weights with a positive sum")
        require(self.snapshot_every >= 1, "snapshot_every", self.snapshot_every, "an integer >= 1")
        require(self.pool_size >= 1, "pool_size", self.pool_size, "an integer >= 1")
        require(self.pfsp_power >= 0, "pfsp_power", self.pfsp_power, "a number >= 0")


@dataclass
class WarmStartConfig:
    """Optional start before PPO (section ``warmstart``)."""

    decisions: int = 0
    """Behaviour-clone the teacher on this many of its own decisions before PPO (0: no warm start)."""
    teacher: str = "heuristic"
    """Agent spec of the teacher; it plays every seat of the warm-start games."""
    epochs: int = 2
    """Passes over each rollout of teacher decisions."""
    learning_rate: float = 1e-3
    """Adam learning rate of the warm start (its own optimiser)."""
    init_from: str = ""
    """Start from the weights of this checkpoint (a best.pt / latest.pt / 'pretrained') instead of a
    fresh network; its rules and network shape must match. Empty: fresh network."""

    def __post_init__(self) -> None:
        from agents.base import parse_spec

        require(self.decisions >= 0, "decisions", self.decisions, "an integer >= 0")
        try:
            parse_spec(self.teacher)
        except ValueError as err:
            require(False, "teacher", self.teacher, f"an agent spec ({err})")
        require(self.epochs >= 1, "epochs", self.epochs, "an integer >= 1")
        require(self.learning_rate > 0, "learning_rate", self.learning_rate, "a number > 0")


@dataclass
class EvalConfig:
    """Duplicate evaluation during training (section ``eval``)."""

    every: int = 25
    """Evaluate every this many PPO iterations (0: only at the end)."""
    deals: int = 500
    """Deals per evaluation and opponent; each deal is played twice with the seats swapped (0: never evaluate)."""
    final_deals: int = 2000
    """Deals of the evaluation at the end of training."""
    opponents: tuple[str, ...] = ("random", "heuristic")
    """Agent specs to evaluate against."""
    best_opponent: str = "heuristic"
    """best.pt is the checkpoint with the highest mean score difference against this opponent."""
    greedy: bool = True
    """Evaluate (and export) the policy acting greedily (its most probable legal action)."""
    seed: int = 2024
    """Seed of the evaluation deals (fixed: every evaluation of a run plays the same deals)."""

    def __post_init__(self) -> None:
        from agents.base import parse_spec

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


@dataclass
class Config:
    """A training run. Defaults are the shipped configuration; YAML files override them."""

    run_name: str = ""
    """Name of the run directory under output_dir (empty: <config name>__s<seed>__<date-time>)."""
    output_dir: str = "runs"
    """Folder holding run directories (relative paths are relative to the current directory)."""
    seed: int = 1
    """Seed of every random stream: games, weights, action sampling, opponent draws."""
    device: str = "auto"
    """``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda`` or ``cuda:N``."""
    num_workers: int = 1
    """Data-parallel worker processes (one torch thread each); 2 uses both cores of a 2-core machine."""
    checkpoint_every: int = 10
    """Write checkpoints/latest.pt every this many iterations (and always at the end or on Ctrl-C)."""
    rules: RulesConfig = field(default_factory=RulesConfig)
    """Rules of the games (pcr_env.RulesConfig fields: players, passing, double_run_bonus, bidding, ...)."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    """Network shape (agents.ppo.NetworkConfig)."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """PPO hyperparameters."""
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    """Opponent mix and snapshot pool."""
    warmstart: WarmStartConfig = field(default_factory=WarmStartConfig)
    """Behaviour-cloning warm start or initial weights."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """Evaluation schedule."""

    def __post_init__(self) -> None:
        require(0 <= self.seed < 2**63, "seed", self.seed, "an integer 0..2**63-1")
        require(self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda"), "device",
                self.device, "'auto', 'cpu', 'cuda' or 'cuda:N'")
        require(self.num_workers >= 1, "num_workers", self.num_workers, "an integer >= 1")
        require(self.ppo.num_envs % self.num_workers == 0, "ppo.num_envs", self.ppo.num_envs,
                f"a multiple of num_workers ({self.num_workers})")
        require(self.checkpoint_every >= 1, "checkpoint_every", self.checkpoint_every, "an integer >= 1")
        require(self.run_name == "" or ("/" not in self.run_name and self.run_name not in (".", "..")), "run_name",
                self.run_name, "a plain folder name")


def load_config(path: str | None, overrides: list[str], base: dict[str, Any] | None = None) -> Config:
    """Config from defaults, then a YAML file (or ``base``), then ``key=value`` overrides."""
    data = load_yaml(path) if path else dict(base or {})
    return from_dict(Config, apply_overrides(data, overrides))


# =========================================================================== helpers
def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"config key 'device' = {name!r}: CUDA is not available on this machine (use 'auto' or 'cpu')")
    return torch.device(name)


def _finite(x: Any) -> Any:
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def stream_seed(*keys: int) -> int:
    """A 63-bit seed derived from ``keys`` (independent streams per purpose and worker)."""
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1, np.uint64)[0] >> np.uint64(1))


class GracefulInterrupt:
    """First Ctrl-C (SIGINT/SIGTERM) sets a flag checked between iterations; a second one aborts."""

    def __init__(self) -> None:
        self.requested = False

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\ninterrupt: finishing this iteration, then saving checkpoints/latest.pt "
              "(press Ctrl-C again to abort without saving)", file=sys.stderr, flush=True)


@dataclass
class Opponents:
    """Per-game opponent assignment of one worker: who plays the seats the learner does not."""

    names: list[str]          # opponent kinds of selfplay.opponents, in order
    probs: np.ndarray         # their drawing probabilities
    baselines: list[Any]      # agent objects for the agent-spec kinds (same order as baseline_names)
    baseline_names: list[str]
    opponent: np.ndarray      # per game: -1 self-play, b < len(baselines) a baseline, len(baselines)+j snapshot j
    learner_team: np.ndarray  # per game: the learner's team (ignored in self-play games)

    def controller_name(self, oid: int) -> str:
        if oid < 0:
            return "self"
        return self.baseline_names[oid] if oid < len(self.baselines) else "snapshot"


def draw_opponents(opp: Opponents, games: np.ndarray, pool: OpponentPool, rng: np.random.Generator) -> None:
    """New opponent kind (and learner team) for each game in ``games``."""
    if len(games) == 0:
        return
    kinds = rng.choice(len(opp.names), size=len(games), p=opp.probs)
    teams = rng.integers(2, size=len(games))
    for g, k, team in zip(games, kinds, teams):
        name = opp.names[k]
        if name == "self" or (name == "snapshot" and len(pool) == 0):
            opp.opponent[g] = -1
        elif name == "snapshot":
            opp.opponent[g] = len(opp.baselines) + pool.sample(rng)
        else:
            opp.opponent[g] = opp.baseline_names.index(name)
        opp.learner_team[g] = team


# =========================================================================== collection
@dataclass
class WorkerState:
    """Everything a worker carries from one rollout to the next (saved in latest.pt)."""

    envs: VectorEnv
    obs: np.ndarray
    masks: np.ndarray
    seats: np.ndarray
    rng: np.random.Generator          # opponent draws, minibatch order
    action_gen: torch.Generator       # action sampling of the learner


def collect(cfg: Config, ws: WorkerState, model: ActorCritic, value_norm: ValueNorm, storage: SeatRollout,
            opp: Opponents, pool: OpponentPool, device: torch.device, teacher: Any = None) -> dict[str, float]:
    """Play ``num_steps`` steps of every game, storing the learner's decisions per seat.

    With a ``teacher`` (warm start) the teacher plays every seat and all decisions are stored.
    Returns summed statistics (counts and totals, reduced over workers by the caller).
    """
    n_envs = ws.envs.num_envs
    central = model.config.central_critic
    obs_dim = model.obs_dim
    scale = cfg.ppo.reward_scale
    stats: dict[str, float] = {"decisions": 0.0, "learner_decisions": 0.0, "rounds": 0.0, "made": 0.0, "bid_sum": 0.0,
                               "vs_rounds": 0.0, "vs_declared": 0.0, "vs_declared_made": 0.0}
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
        # A forced move (one legal action) is no decision: it is played here for every controller
        # and, for the learner, not stored, so its seat's trajectory runs on to its next real decision.
        forced = legal_all.sum(1) == 1 if cfg.ppo.skip_forced else np.zeros(n_envs, bool)
        actions[forced] = legal_all[forced].argmax(1)
        stored = learner & ~forced
        rows = np.flatnonzero(stored)
        legal = legal_all[rows]
        stored_inputs = inputs[rows]
        if teacher is not None:
            act = teacher.act_batch(obs[rows], masks[rows])
            logp = np.zeros(len(rows), np.float32)
            values = np.zeros(len(rows), np.float32)
        else:
            # ALGO LOGIC: the learner's seats act with the current network, one forward pass for all games.
            with torch.no_grad():
                x = torch.from_numpy(stored_inputs).to(device)
                m = torch.from_numpy(legal).to(device)
                logp_all = log_probs(model.masked_logits(x[:, :obs_dim], m))
                a = sample_actions(logp_all, ws.action_gen)
                logp = logp_all.gather(1, a[:, None]).squeeze(1).cpu().numpy()
                values = value_norm.denormalize(model.value(x if central else x[:, :obs_dim])).cpu().numpy()
                act = a.cpu().numpy()
        actions[rows] = act
        others = np.flatnonzero(~learner & ~forced)
        for oid in np.unique(opp.opponent[others]):
            sel = others[opp.opponent[others] == oid]
            agent = opp.baselines[oid] if oid < len(opp.baselines) else pool.agents[oid - len(opp.baselines)]
            actions[sel] = agent.act_batch(obs[sel], masks[sel])
        storage.add(stored_inputs, legal, seats, stored, act, logp, values)

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
            stats[f"vs_{name}_rounds"] = stats.get(f"vs_{name}_rounds", 0.0) + 1
            stats[f"vs_{name}_score"] = stats.get(f"vs_{name}_score", 0.0) + (mine - theirs)
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


# =========================================================================== updates
def training_batch(storage: SeatRollout, advantages: np.ndarray, returns: np.ndarray) -> dict[str, np.ndarray]:
    """The trainable decisions of a rollout. ``inputs`` stays the whole storage grid (rows
    ``input_rows``): it is by far the widest array, so minibatches gather from it directly
    instead of from a copy (it is overwritten by the next rollout, after the update)."""
    idx = storage.trainable()
    return {
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


def ppo_update(cfg: Config, model: ActorCritic, value_norm: ValueNorm, optimizer: torch.optim.Optimizer,
               batch: dict[str, np.ndarray], workers: Workers, rng: np.random.Generator, ent_coef: float,
               device: torch.device) -> dict[str, float]:
    """Clipped PPO epochs over one rollout; returns loss statistics (this worker's means)."""
    p = cfg.ppo
    n = len(batch["actions"])
    obs_dim, central = model.obs_dim, model.config.central_critic
    phase = batch["inputs"][batch["input_rows"], :len(Phase)].argmax(1)  # the observation starts with the phase one-hot
    t = {k: torch.from_numpy(v) for k, v in batch.items()}
    returns_n = value_norm.normalize(t["returns"])
    old_values_n = value_norm.normalize(t["values"])
    sums: dict[str, float] = {}
    counts = {"updates": 0}
    phase_entropy = np.zeros(len(Phase))
    phase_count = np.bincount(phase, minlength=len(Phase)).astype(np.float64)
    approx_kl = 0.0
    for epoch in range(p.update_epochs):
        for mb in np.array_split(rng.permutation(n), p.num_minibatches):
            x = t["inputs"].index_select(0, t["input_rows"][mb]).to(device)
            m = t["masks"][mb].to(device)
            a = t["actions"][mb].to(device)
            logp_all = log_probs(model.masked_logits(x[:, :obs_dim], m))
            newlogp = logp_all.gather(1, a[:, None]).squeeze(1)
            entropy = masked_entropy(logp_all, m)
            newvalue = model.value(x if central else x[:, :obs_dim])
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

            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            workers.average_gradients(model.parameters())
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), p.max_grad_norm).item()
            optimizer.step()

            if epoch == 0:
                np.add.at(phase_entropy, phase[mb], entropy.detach().cpu().numpy())
            for k, v in (("policy_loss", pg_loss.item()), ("value_loss", v_loss.item()),
                         ("entropy", entropy_loss.item()), ("old_approx_kl", old_approx_kl),
                         ("approx_kl", approx_kl), ("clipfrac", clipfrac), ("grad_norm", grad_norm)):
                sums[k] = sums.get(k, 0.0) + v
            counts["updates"] += 1
        if p.target_kl is not None and workers.sum([approx_kl])[0] / workers.world_size > p.target_kl:
            break
    out = {k: v / counts["updates"] for k, v in sums.items()}
    out["epochs_done"] = float(epoch + 1)
    for i, name in enumerate(PHASE_NAMES):
        if phase_count[i] > 0:
            out[f"entropy_{name}"] = float(phase_entropy[i] / phase_count[i])
    y, pred = batch["returns"].astype(np.float64), batch["values"].astype(np.float64)
    var_y = np.var(y)
    out["explained_variance"] = float("nan") if var_y == 0 else float(1 - np.var(y - pred) / var_y)
    return out


def bc_update(cfg: Config, model: ActorCritic, value_norm: ValueNorm, optimizer: torch.optim.Optimizer,
              batch: dict[str, np.ndarray], workers: Workers, rng: np.random.Generator,
              device: torch.device) -> dict[str, float]:
    """Warm start: cross-entropy on the teacher's actions, value regression on Monte-Carlo returns."""
    n = len(batch["actions"])
    obs_dim, central = model.obs_dim, model.config.central_critic
    t = {k: torch.from_numpy(v) for k, v in batch.items()}
    returns_n = value_norm.normalize(t["returns"])
    sums = {"loss": 0.0, "accuracy": 0.0, "value_loss": 0.0, "entropy": 0.0}
    updates = 0
    for _ in range(cfg.warmstart.epochs):
        for mb in np.array_split(rng.permutation(n), cfg.ppo.num_minibatches):
            x = t["inputs"].index_select(0, t["input_rows"][mb]).to(device)
            m, a = t["masks"][mb].to(device), t["actions"][mb].to(device)
            logp_all = log_probs(model.masked_logits(x[:, :obs_dim], m))
            nll = -logp_all.gather(1, a[:, None]).squeeze(1).mean()
            v_loss = 0.5 * ((model.value(x if central else x[:, :obs_dim]) - returns_n[mb].to(device)) ** 2).mean()
            loss = nll + cfg.ppo.vf_coef * v_loss
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            workers.average_gradients(model.parameters())
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.ppo.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                sums["loss"] += nll.item()
                sums["value_loss"] += v_loss.item()
                sums["accuracy"] += (logp_all.argmax(1) == a).float().mean().item()
                sums["entropy"] += masked_entropy(logp_all, m).mean().item()
            updates += 1
    return {k: v / updates for k, v in sums.items()}


# =========================================================================== evaluation
def evaluate_policy(model: ActorCritic, ckpt: dict[str, Any], ecfg: EvalConfig, deals: int, path: Path) -> dict[str, dict[str, float]]:
    """Duplicate evaluation (``agents.evaluation.evaluate``, as ``evaluate.py``) of ``ckpt`` against ``ecfg.opponents``.

    The weights are written to ``path`` and played as the agent spec ``ppo:<path>``.
    Returns, per opponent spec, the mean score difference per deal (learner team minus
    opponent team, mean of the two duplicate tables), its 95% interval and the share of deals won.
    """
    from agents import evaluation

    atomic_save(ckpt, path)
    spec = f"ppo:{path}"
    try:
        result = evaluation.evaluate([spec, *ecfg.opponents], deals=deals, seed=ecfg.seed, episode="round",
                                     workers=1, progress=False, rules=ckpt["rules"],
                                     pairs=[(0, j + 1) for j in range(len(ecfg.opponents))])
    finally:
        path.unlink(missing_ok=True)
        # evaluate() caches agents by spec; the file is gone, so drop its entries.
        for key in [k for k in getattr(evaluation, "_AGENT_CACHE", {}) if k[0] == spec]:
            evaluation._AGENT_CACHE.pop(key)
    out = {}
    for pair in result.pairs:
        out[ecfg.opponents[len(out)]] = {"mean": pair.mean_diff, "ci_low": pair.ci95[0], "ci_high": pair.ci95[1],
                                         "win_rate": pair.win_rate, "deals": float(pair.deals),
                                         "bid_rate": pair.a.get("bid_rate", float("nan")),
                                         "make_rate": pair.a.get("make_rate", float("nan"))}
    return out


# =========================================================================== checkpoints
def worker_snapshot(ws: WorkerState, storage: SeatRollout, opp: Opponents) -> bytes:
    """A worker's collection state (games, open decisions, opponents, RNG streams) as bytes."""
    pending = storage.pending
    idx = pending[pending >= 0]
    open_rows = {name: storage.flat(name)[idx].copy() for name in
                 ("inputs", "masks", "actions", "logprobs", "values", "rewards", "seats")}
    return pickle.dumps({
        "envs": ws.envs, "obs": ws.obs, "masks": ws.masks, "seats": ws.seats,
        "rng": ws.rng.bit_generator.state, "action_gen": ws.action_gen.get_state(),
        "pending": pending.copy(), "open_rows": open_rows,
        "opponent": opp.opponent.copy(), "learner_team": opp.learner_team.copy(),
        "baseline_rng": [agent_rng_state(a) for a in opp.baselines],
    })


def restore_worker(blob: bytes, ws: WorkerState, storage: SeatRollout, opp: Opponents) -> None:
    s = pickle.loads(blob)
    ws.envs, ws.obs, ws.masks, ws.seats = s["envs"], s["obs"], s["masks"], s["seats"]
    ws.rng.bit_generator.state = s["rng"]
    ws.action_gen.set_state(s["action_gen"])
    storage.pending[:] = s["pending"]
    idx = storage.pending[storage.pending >= 0]
    for name, data in s["open_rows"].items():
        storage.flat(name)[idx] = data
    opp.opponent[:], opp.learner_team[:] = s["opponent"], s["learner_team"]
    for agent, state in zip(opp.baselines, s["baseline_rng"]):
        set_agent_rng_state(agent, state)


def agent_rng_state(agent: Any) -> Any:
    state = {}
    if hasattr(agent, "rng"):
        state["rng"] = agent.rng.bit_generator.state
    if isinstance(getattr(agent, "generator", None), torch.Generator):
        state["generator"] = agent.generator.get_state()
    return state


def set_agent_rng_state(agent: Any, state: dict[str, Any]) -> None:
    if "rng" in state:
        agent.rng.bit_generator.state = state["rng"]
    if "generator" in state:
        agent.generator.set_state(state["generator"])


def snapshot_agent(model: ActorCritic, rules: RulesConfig, seed: int) -> PPOAgent:
    """A frozen copy of the current policy (sampling, like the learner) for the pool."""
    frozen = copy.deepcopy(model).cpu()
    for prm in frozen.parameters():
        prm.requires_grad_(False)
    return PPOAgent(frozen, rules, greedy=False, seed=seed, source="snapshot")


# =========================================================================== the run
def setup_run(args: argparse.Namespace) -> tuple[Config, Path, dict[str, Any] | None]:
    """Resolve the config and the run directory (new run, or the run to resume)."""
    if args.resume:
        run_dir = Path(args.resume)
        latest = run_dir / "checkpoints" / "latest.pt"
        if not latest.is_file():
            raise ValueError(f"--resume {str(run_dir)!r}: no checkpoints/latest.pt in that directory")
        if args.config:
            raise ValueError("--resume takes the config of the run it continues: drop --config (use --set to change a key)")
        ckpt = torch.load(latest, map_location="cpu", weights_only=True)
        cfg = load_config(None, args.set, base=ckpt["config"])
        if ckpt["training"]["num_workers"] != cfg.num_workers:
            raise ValueError(f"this run was trained with num_workers={ckpt['training']['num_workers']}: "
                             "resume it with the same number (its games and random streams are split that way)")
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


def train(rank: int, cfg: Config, run_dir: Path, resume: dict[str, Any] | None, max_iterations: int | None,
          quiet: bool) -> None:
    torch.set_num_threads(1)
    workers = Workers(rank, cfg.num_workers, str((run_dir / ".rendezvous").resolve()) if cfg.num_workers > 1 else None)
    main_worker = workers.is_main
    device = resolve_device(cfg.device)
    rules = cfg.rules
    p = cfg.ppo
    local_envs = p.num_envs // cfg.num_workers
    decisions_per_iteration = p.num_envs * p.num_steps
    num_iterations = max(1, math.ceil(p.total_decisions / decisions_per_iteration))
    bc_iterations = math.ceil(cfg.warmstart.decisions / decisions_per_iteration) if cfg.warmstart.decisions else 0

    # TRY NOT TO MODIFY: seeding. Every stream derives from (seed, purpose, worker).
    torch.manual_seed(stream_seed(cfg.seed, 0))  # weight initialisation: identical on every worker
    torch.backends.cudnn.deterministic = True
    envs = VectorEnv(local_envs, seed=stream_seed(cfg.seed, 1, rank), episode="game", reward="score_diff",
                     **rules.to_dict())
    obs, masks, seats = envs.reset()
    ws = WorkerState(envs, obs, masks, seats, np.random.default_rng([cfg.seed, 2, rank]),
                     torch.Generator().manual_seed(stream_seed(cfg.seed, 3, rank)))

    model = ActorCritic(envs.obs_dim, envs.state_dim, envs.num_actions, cfg.network).to(device)
    value_norm = ValueNorm()
    if cfg.warmstart.init_from and resume is None:
        init = read_checkpoint(cfg.warmstart.init_from)
        check_rules_compatible(init["rules"], rules, f"warmstart.init_from {cfg.warmstart.init_from!r}")
        if init["network"] != {k: list(v) if isinstance(v, tuple) else v for k, v in to_dict(cfg.network).items()}:
            raise ValueError(f"warmstart.init_from {cfg.warmstart.init_from!r} has network {init['network']}, "
                             f"the config asks for {to_dict(cfg.network)}")
        model.load_state_dict(init["model"])
        if "value_norm" in init:
            value_norm.load_state_dict(init["value_norm"])
    optimizer = torch.optim.Adam(model.parameters(), lr=p.learning_rate, eps=p.adam_eps)
    bc_optimizer = torch.optim.Adam(model.parameters(), lr=cfg.warmstart.learning_rate, eps=p.adam_eps)
    storage = SeatRollout(p.num_steps, local_envs, envs.n_players,
                          envs.state_dim if cfg.network.central_critic else envs.obs_dim)

    pool = OpponentPool(cfg.selfplay.pool_size, cfg.selfplay.pfsp_power)
    names = list(cfg.selfplay.opponents)
    weights = np.array([cfg.selfplay.opponents[k] for k in names], np.float64)
    baseline_names = [k for k in names if k not in ("self", "snapshot")]
    from agents import make_agent

    baselines = [make_agent(spec, seed=stream_seed(cfg.seed, 4, rank, i), rules=rules)
                 for i, spec in enumerate(baseline_names)]
    opp = Opponents(names, weights / weights.sum(), baselines, baseline_names,
                    np.full(local_envs, -1, np.int64), np.zeros(local_envs, np.int64))
    teacher = make_agent(cfg.warmstart.teacher, seed=stream_seed(cfg.seed, 5, rank), rules=rules) if bc_iterations else None

    iteration, bc_done, decisions, best_score = 0, 0, 0, -math.inf
    if resume is not None:
        tr = resume["training"]
        model.load_state_dict(resume["model"])
        value_norm.load_state_dict(resume["value_norm"])
        optimizer.load_state_dict(tr["optimizer"])
        bc_optimizer.load_state_dict(tr["bc_optimizer"])
        iteration, bc_done, decisions, best_score = tr["iteration"], tr["bc_iterations"], tr["decisions"], tr["best_score"]
        torch.set_rng_state(tr["torch_rng"])
        for slot, (state, it_) in enumerate(zip(tr["pool"]["models"], tr["pool"]["iterations"])):
            snap = snapshot_agent(model, rules, 0)
            snap.model.load_state_dict(state)
            pool.add(snap, it_)
            set_agent_rng_state(snap, tr["pool"]["rng"][slot])
        pool.wins[:] = tr["pool"]["wins"]
        pool.rounds[:] = tr["pool"]["rounds"]
        pool.next_slot = tr["pool"]["next_slot"]
        restore_worker(tr["workers"][rank], ws, storage, opp)
        if teacher is not None and tr.get("teacher_rng") is not None:
            set_agent_rng_state(teacher, tr["teacher_rng"][rank])
    config_dict = to_dict(cfg)

    def save_latest(reason: str) -> None:
        blobs = workers.gather(worker_snapshot(ws, storage, opp))
        teacher_rng = workers.gather(agent_rng_state(teacher) if teacher is not None else None)
        if not main_worker:
            return
        training = {
            "num_workers": cfg.num_workers, "iteration": iteration, "bc_iterations": bc_done, "decisions": decisions,
            "best_score": best_score, "optimizer": optimizer.state_dict(), "bc_optimizer": bc_optimizer.state_dict(),
            "torch_rng": torch.get_rng_state(), "workers": blobs, "teacher_rng": teacher_rng,
            "pool": {"models": [a.model.state_dict() for a in pool.agents], "iterations": list(pool.iterations),
                     "rng": [agent_rng_state(a) for a in pool.agents], "wins": pool.wins.copy().tolist(),
                     "rounds": pool.rounds.copy().tolist(), "next_slot": pool.next_slot},
        }
        ckpt = make_checkpoint(model, config_dict, rules, value_norm=value_norm.state_dict(), training=training,
                               meta={"iteration": iteration, "decisions": decisions, "reason": reason})
        atomic_save(ckpt, run_dir / "checkpoints" / "latest.pt")
        log({"type": "checkpoint", "file": "latest.pt", "reason": reason})

    if main_worker and cfg.eval.deals and cfg.eval.opponents:
        from agents import evaluation  # noqa: F401  (fail now, not at the first evaluation)
    # Logging (main worker only).
    writer = None
    log_file = None
    if main_worker:
        from torch.utils.tensorboard import SummaryWriter

        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.yaml").write_text(yaml.safe_dump(config_dict, sort_keys=False))
        writer = SummaryWriter(str(run_dir))
        if resume is None:
            writer.add_text("config", "```yaml\n" + yaml.safe_dump(config_dict, sort_keys=False) + "```")
        log_file = (run_dir / "log.jsonl").open("a")

    def log(record: dict[str, Any]) -> None:
        if log_file is not None:
            log_file.write(json.dumps(_finite({"time": round(time.time(), 3), **record})) + "\n")
            log_file.flush()

    def scalars(prefix: str, values: dict[str, float], step: int) -> None:
        if writer is not None:
            for k, v in values.items():
                if isinstance(v, (int, float)) and math.isfinite(v):
                    writer.add_scalar(f"{prefix}/{k}", v, step)

    def run_eval(deals: int, final: bool) -> dict[str, Any] | None:
        nonlocal best_score
        results = None
        if main_worker and deals > 0 and cfg.eval.opponents:
            start = time.time()
            ckpt = make_checkpoint(model, config_dict, rules, value_norm=value_norm.state_dict(),
                                   act={"greedy": cfg.eval.greedy}, meta={"iteration": iteration, "decisions": decisions})
            try:
                results = evaluate_policy(model, ckpt, cfg.eval, deals, run_dir / "checkpoints" / f".eval-{iteration}.pt")
            except Exception as err:  # an evaluation problem must not cost the training run
                print(f"\nevaluation at iteration {iteration} failed, training continues: {err!r}", file=sys.stderr)
                log({"type": "eval_error", "iteration": iteration, "decisions": decisions, "error": repr(err)})
                results = None
        if results is not None:
            for spec, r in results.items():
                scalars("eval", {f"{spec}_score_diff": r["mean"], f"{spec}_ci_low": r["ci_low"],
                                 f"{spec}_ci_high": r["ci_high"], f"{spec}_win_rate": r["win_rate"],
                                 f"{spec}_bid_rate": r["bid_rate"], f"{spec}_make_rate": r["make_rate"]}, decisions)
            score = results[cfg.eval.best_opponent]["mean"]
            log({"type": "eval", "iteration": iteration, "decisions": decisions, "final": final,
                 "seconds": round(time.time() - start, 1), "results": results})
            if score > best_score:
                best_score = score
                ckpt["meta"]["eval"] = results
                atomic_save(ckpt, run_dir / "checkpoints" / "best.pt")
                log({"type": "checkpoint", "file": "best.pt", "iteration": iteration, "score": score})
        workers.barrier()
        return results

    interrupt = GracefulInterrupt()
    interrupt.install()
    progress = None
    if main_worker and not quiet:
        from tqdm import tqdm

        progress = tqdm(total=num_iterations * decisions_per_iteration, initial=min(decisions, num_iterations * decisions_per_iteration),
                        unit="dec", unit_scale=True, dynamic_ncols=True, desc=run_dir.name)
    last_eval = "-"
    iterations_this_call = 0
    stopped_early = False

    # ---------------------------------------------------------------- warm start (behaviour cloning)
    while bc_done < bc_iterations:
        start = time.time()
        stats = collect(cfg, ws, model, value_norm, storage, opp, pool, device, teacher=teacher)
        _, mc_returns = compute_gae(storage.rewards, np.zeros_like(storage.values), storage.next_index,
                                    storage.resolved, p.gamma, 1.0)
        batch = training_batch(storage, np.zeros_like(mc_returns), mc_returns)
        if p.value_norm:
            update_value_norm(value_norm, batch["returns"], workers)
        out = bc_update(cfg, model, value_norm, bc_optimizer, batch, workers, ws.rng, device)
        bc_done += 1
        iterations_this_call += 1
        sums = workers.sum([stats["decisions"], out["loss"], out["accuracy"], out["value_loss"], out["entropy"]])
        w = workers.world_size
        bc_stats = {"loss": sums[1] / w, "accuracy": sums[2] / w, "value_loss": sums[3] / w, "entropy": sums[4] / w,
                    "decisions_per_second": sums[0] / (time.time() - start)}
        scalars("bc", bc_stats, bc_done * decisions_per_iteration)
        log({"type": "warmstart", "iteration": bc_done, "of": bc_iterations, **bc_stats})
        if progress is not None:
            progress.set_postfix_str(f"warm start {bc_done}/{bc_iterations} acc {bc_stats['accuracy']:.3f}")
        if bc_done == bc_iterations:
            storage.pending.fill(-1)  # the teacher's open decisions are not the learner's: drop them
        if workers.any(interrupt.requested) or (max_iterations is not None and iterations_this_call >= max_iterations):
            stopped_early = True
            break

    # ---------------------------------------------------------------- PPO self-play
    if not stopped_early and iteration == 0 and len(pool) == 0:
        pool.add(snapshot_agent(model, rules, stream_seed(cfg.seed, 6, 0)), 0)
    while not stopped_early and iteration < num_iterations:
        iteration += 1
        start = time.time()
        frac = (iteration - 1) / num_iterations
        lr = p.learning_rate * (1.0 - frac) if p.lr_schedule == "linear" else p.learning_rate
        for group in optimizer.param_groups:
            group["lr"] = lr
        ent_coef = p.ent_coef if p.ent_coef_final is None else p.ent_coef + frac * (p.ent_coef_final - p.ent_coef)

        model.eval()
        stats = collect(cfg, ws, model, value_norm, storage, opp, pool, device)
        collect_seconds = time.time() - start
        # ALGO LOGIC: advantages along each seat's own trajectory.
        advantages, returns = compute_gae(storage.rewards, storage.values, storage.next_index, storage.resolved,
                                          p.gamma, p.gae_lambda)
        batch = training_batch(storage, advantages, returns)
        if p.value_norm:
            update_value_norm(value_norm, batch["returns"], workers)
        model.train()
        out = ppo_update(cfg, model, value_norm, optimizer, batch, workers, ws.rng, ent_coef, device)
        seconds = time.time() - start

        # Reduce statistics over workers.
        pool_delta = workers.sum(np.concatenate([stats.pop("pool_wins"), stats.pop("pool_rounds")]))
        for slot in range(len(pool)):
            pool.record(slot, pool_delta[slot], pool_delta[pool.capacity + slot])
        keys = sorted(set().union(*workers.gather(sorted(stats))))
        totals = dict(zip(keys, workers.sum([stats.get(k, 0.0) for k in keys])))
        loss_keys = sorted(out)
        losses = dict(zip(loss_keys, workers.sum([out[k] for k in loss_keys]) / workers.world_size))
        batch_size = workers.sum([len(batch["actions"])])[0]
        decisions += int(totals["decisions"])

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
        for k in keys:
            if k.startswith("vs_") and k.endswith("_rounds") and k != "vs_rounds":
                name = k[3:-7]
                charts[f"score_diff_vs_{name}"] = totals[f"vs_{name}_score"] / max(totals[k], 1)
        if len(pool):
            charts["pool_min_win_rate"] = float(pool.win_rates().min())
        scalars("charts", charts, decisions)
        scalars("losses", losses, decisions)
        log({"type": "iteration", "iteration": iteration, "decisions": decisions, "seconds": round(seconds, 3),
             **{f"charts/{k}": v for k, v in charts.items()}, **{f"losses/{k}": v for k, v in losses.items()}})

        if iteration % cfg.selfplay.snapshot_every == 0:
            pool.add(snapshot_agent(model, rules, stream_seed(cfg.seed, 6, iteration)), iteration)
        if cfg.eval.every and iteration % cfg.eval.every == 0 and iteration < num_iterations:
            results = run_eval(cfg.eval.deals, final=False)
            if results:
                last_eval = " ".join(f"{k} {v['mean']:+.2f}" for k, v in results.items())
        iterations_this_call += 1
        stop = workers.any(interrupt.requested) or (max_iterations is not None and iterations_this_call >= max_iterations)
        if iteration % cfg.checkpoint_every == 0 or iteration == num_iterations or stop:
            save_latest("interrupted" if interrupt.requested else "stopped" if stop else "scheduled")
        if progress is not None:
            progress.update(int(totals["decisions"]))
            progress.set_postfix_str(f"{charts['decisions_per_second']:,.0f} dec/s | eval {last_eval}")
        if stop:
            stopped_early = iteration < num_iterations
            break

    if stopped_early:
        if bc_done < bc_iterations or iteration == 0:
            save_latest("interrupted" if interrupt.requested else "stopped")
        if main_worker:
            print(f"stopped at iteration {iteration} (warm start {bc_done}/{bc_iterations}); "
                  f"continue with: python train.py --resume {run_dir}", file=sys.stderr)
    else:
        results = run_eval(cfg.eval.final_deals if cfg.eval.deals else 0, final=True)
        if main_worker and not (run_dir / "checkpoints" / "best.pt").exists():
            # No evaluation ran: the final weights are the best we know.
            atomic_save(make_checkpoint(model, config_dict, rules, value_norm=value_norm.state_dict(),
                                        act={"greedy": cfg.eval.greedy}, meta={"iteration": iteration, "decisions": decisions}),
                        run_dir / "checkpoints" / "best.pt")
        log({"type": "done", "iteration": iteration, "decisions": decisions})
    if progress is not None:
        progress.close()
    if writer is not None:
        writer.close()
    if log_file is not None:
        log_file.close()
    workers.close()


def _spawned(rank: int, cfg: Config, run_dir: Path, resume: dict[str, Any] | None, max_iterations: int | None,
             quiet: bool) -> None:
    train(rank, cfg, run_dir, resume, max_iterations, quiet)


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


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.list_keys:
        for key, tp, doc in describe_config(Config):
            print(f"{key:34s} {tp:40s} {doc}")
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    try:
        cfg, run_dir, resume = setup_run(args)
    except ValueError as err:
        raise SystemExit(f"train.py: error: {err}") from None
    run_dir.mkdir(parents=True, exist_ok=True)
    if cfg.num_workers == 1:
        train(0, cfg, run_dir, resume, args.max_iterations, args.quiet)
    else:
        rendezvous = run_dir / ".rendezvous"
        rendezvous.unlink(missing_ok=True)
        # Ctrl-C reaches every worker (same process group); each finishes the iteration in step with
        # the others and the main worker saves. The parent only waits, so it ignores the signal.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            torch.multiprocessing.spawn(_spawned, args=(cfg, run_dir, resume, args.max_iterations, args.quiet),
                                        nprocs=cfg.num_workers, join=True)
        finally:
            signal.signal(signal.SIGINT, previous)
            rendezvous.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
