"""PPO self-play trainer for Pass Cut Run: one YAML config in, a team policy out.

    python train.py --config configs/ppo_selfplay.yaml [--set key=value ...] [--run-dir DIR]
    python train.py --resume RUN_DIR [--set ppo.total_decisions=...]
    python train.py --list-keys                  # every config key, its type and meaning
    tensorboard --logdir runs

One iteration, top to bottom (:meth:`Trainer.ppo_iteration`):

1. **Collect** ``num_steps`` decisions in each of ``num_envs`` games of the batched engine
   (:func:`collect`). Each game has an opponent from ``selfplay.opponents``: the network itself,
   a frozen snapshot (PFSP pool) or any agent (:mod:`agents.training.opponents`).
2. **Credit per seat.** Each learner decision joins its seat's trajectory; a reward goes to the
   seat that earned it; a trajectory ends at the end of the round (``ppo.return_horizon``) and
   nothing bootstraps across seats (:mod:`agents.training.rollout`).
3. **GAE** along each seat's chain, value normalisation, then the clipped PPO update
   (:func:`ppo_update`) with masked logits, entropy over legal actions and gradient clipping.
4. **Log, evaluate, checkpoint**: TensorBoard (``charts/``, ``losses/``, ``bc/``, ``eval/``),
   ``log.jsonl``, duplicate evaluation against ``eval.opponents``, ``checkpoints/latest.pt``
   (everything a resume needs) and ``checkpoints/best.pt``, written atomically.

A run is a list of stages (``stages``: behaviour cloning and expert iteration from a teacher,
:mod:`agents.training.warmstart`, and PPO, each with its own budget and keys), resolved once from the
config (:mod:`agents.training.config`: its models, marks and stages),
by default a warm start then PPO. Ctrl-C finishes the iteration, saves and exits;
``--resume RUN_DIR`` continues bit for bit (:mod:`agents.training.run_state`). A checkpoint is
an agent: ``ppo:RUN_DIR/checkpoints/best.pt`` works wherever an agent spec does.
"""


from __future__ import annotations

import argparse
import copy
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from agents import make_agent
from agents.ppo import files, make_checkpoint
from agents.ppo.network import ActorCritic, ValueNorm, log_probs, masked_entropy
from agents.run_dir import RunDir
from agents.training import config_io, run_state
from agents.training.compute import (
    Compute,
    minibatch_outputs,
    minibatches,
    network_actions,
    network_outputs,
    optimizer_step,
    resolve_compute,
)
from agents.training.config import LEARNER_TEACHER, Config, PPOConfig, Run, check_resume_changes, key_listing, load_config, load_run
from agents.training.evaluation import EVAL_TAGS, evaluate_checkpoint
from agents.training.league import League, needs_league
from agents.training.log import RunLog
from agents.training.opponents import OpponentPool, Opponents, snapshot_agent
from agents.training.rollout import SeatRollout, compute_gae, update_value_norm
from agents.training.run_state import TrainingError, WorkerState
from agents.training.update_stats import LOSS_STATS, update_summary
from agents.training.warmstart import (
    BC_STATS,
    count_rounds,
    init_weights,
    initial_network,
    make_teacher,
    phase_of,
    searched_weights,
    warm_start_update,
)
from agents.training.workers import Workers, exit_worker, launched_by_torchrun, spawn
from pcr_env.engine import Phase
from pcr_env.seating import derive_seed as stream_seed  # one seeding scheme for every tool
from pcr_env.vector import VectorEnv

__all__ = ["Config", "Run", "Compute", "ActorCritic", "ValueNorm", "Trainer", "load_config", "load_run", "collect",
           "ppo_update", "resolve_compute", "network_outputs", "check_start", "launch", "main"]


# =========================================================================== seeding
def seeded_worker(cfg: Config, rank: int) -> WorkerState:
    """TRY NOT TO MODIFY: every random stream derives from (seed, purpose, worker); the weights'
    initialisation (purpose 0) is the same on every worker."""
    torch.manual_seed(stream_seed(cfg.seed, 0))
    torch.backends.cudnn.deterministic = True
    envs = VectorEnv(cfg.ppo.num_envs // cfg.num_workers, seed=stream_seed(cfg.seed, 1, rank), episode="game",
                     reward="score_diff", **cfg.rules.to_dict())
    return WorkerState.start(envs, np.random.default_rng([cfg.seed, 2, rank]),
                             torch.Generator().manual_seed(stream_seed(cfg.seed, 3, rank)))



# =========================================================================== collection
def collect(cfg: Config, ws: WorkerState, model: ActorCritic, value_norm: ValueNorm, storage: SeatRollout,
            opp: Opponents, compute: Compute) -> dict[str, Any]:
    """Play ``num_steps`` steps of every game, storing the learner's decisions per seat.

    Returns summed statistics (counts and totals, reduced over workers by the caller) and
    ``pool_results``: round wins and rounds against each slot of each pool.
    """
    p = cfg.ppo
    central = model.config.central_critic
    stats: dict[str, Any] = dict.fromkeys(opp.stat_keys(), 0.0)
    pool_results = opp.pool_results()
    storage.begin()
    for _ in range(p.num_steps):
        obs, masks, seats = ws.obs, ws.masks, ws.seats
        inputs = ws.envs.state() if central else obs
        legal = masks.astype(bool)
        learner = opp.learner_games(seats)
        # A forced move (one legal action) is no decision: it is played here for every controller
        # and, for the learner, not stored, so its seat's trajectory runs on to its next real decision.
        forced = legal.sum(1) == 1 if p.skip_forced else np.zeros(len(obs), bool)
        actions = np.where(forced, legal.argmax(1), 0)
        stored = learner & ~forced
        rows = np.flatnonzero(stored)
        # ALGO LOGIC: the learner's seats act with the current network, one forward pass for all games.
        x = model.rollout_inputs(inputs[rows], obs[rows])
        act, logp, values = network_actions(model, value_norm, x, legal[rows], ws.action_gen, compute)
        actions[rows] = act
        opp.act(actions, np.flatnonzero(~learner & ~forced), obs, masks)
        storage.add(x, legal[rows], seats, stored, act, logp, values, None)

        rewards, dones, infos = ws.step(actions)
        storage.credit(rewards * p.reward_scale)
        stats["decisions"] += len(obs)
        stats["learner_decisions"] += len(rows)
        round_end = count_rounds(stats, infos)
        for g in np.flatnonzero(round_end):
            opp.record_round(stats, g, infos[g]["round_result"], pool_results)
        ended = dones | round_end if p.return_horizon == "round" else dones
        storage.end(ended)
        opp.draw(np.flatnonzero(ended), ws.rng)
    stats["pool_results"] = pool_results
    return stats


# =========================================================================== PPO update
def ppo_loss(p: PPOConfig, model: ActorCritic, compute: Compute, t: dict[str, torch.Tensor], mb: np.ndarray,
             ent_coef: float) -> tuple[torch.Tensor, list[float], np.ndarray]:
    """The clipped PPO loss of minibatch ``mb``, its statistics (``LOSS_STATS`` but the gradient norm)
    and the entropy of each row."""
    device = compute.device
    m, a = t["masks"][mb].to(device), t["actions"][mb].to(device)
    logits, newvalue = minibatch_outputs(model, compute, t, mb)
    logp_all = log_probs(logits)
    newlogp = logp_all.gather(1, a[:, None]).squeeze(1)
    entropy = masked_entropy(logp_all, m)  # after the gather: the backward pass sums in the same order
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

    target = t["returns_n"][mb].to(device)
    if p.clip_vloss:
        old_v = t["values_n"][mb].to(device)
        v_clipped = old_v + (newvalue - old_v).clamp(-p.clip_coef, p.clip_coef)
        v_loss = 0.5 * torch.max((newvalue - target) ** 2, (v_clipped - target) ** 2).mean()
    else:
        v_loss = 0.5 * ((newvalue - target) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - ent_coef * entropy_loss + p.vf_coef * v_loss
    stats = [pg_loss.item(), v_loss.item(), entropy_loss.item(), old_approx_kl, approx_kl, clipfrac]
    return loss, stats, entropy.detach().cpu().numpy()


def ppo_update(cfg: Config, model: ActorCritic, value_norm: ValueNorm, optimizer: torch.optim.Optimizer,
               batch: dict[str, np.ndarray], workers: Workers, rng: np.random.Generator, ent_coef: float,
               compute: Compute) -> dict[str, float]:
    """Clipped PPO epochs over one rollout; returns loss statistics over all workers.

    Every collective here has a shape fixed by the config, never by this worker's data: each
    worker runs the same number of minibatches (an empty one contributes zero gradients), and
    statistics travel as fixed-length vectors of sums and counts.
    """
    p = cfg.ppo
    phase = phase_of(batch["inputs"][batch["input_rows"]])
    t = {k: torch.from_numpy(v) for k, v in batch.items()}
    t["returns_n"], t["values_n"] = value_norm.normalize(t["returns"]), value_norm.normalize(t["values"])
    sums, weight = np.zeros(len(LOSS_STATS)), 0.0  # sums weighted by minibatch size, then their weight
    phase_entropy = np.zeros(len(Phase))
    approx_kl, epochs_done = 0.0, 0
    for epoch in range(p.update_epochs):
        for mb in minibatches(rng, len(batch["actions"]), p.num_minibatches):
            optimizer.zero_grad(set_to_none=False)
            if len(mb) == 0:  # this worker has fewer decisions than minibatches: it adds zero gradients
                optimizer_step(model, optimizer, workers, p.max_grad_norm)
                continue
            loss, stats, entropy = ppo_loss(p, model, compute, t, mb, ent_coef)
            loss.backward()
            grad_norm = optimizer_step(model, optimizer, workers, p.max_grad_norm)
            if epoch == 0:
                np.add.at(phase_entropy, phase[mb], entropy)
            sums += len(mb) * np.array([*stats, grad_norm])
            weight += len(mb)
            approx_kl = stats[4]
        epochs_done = epoch + 1
        if p.target_kl is not None and workers.sum([approx_kl])[0] / workers.world_size > p.target_kl:
            break
    phase_count = np.bincount(phase, minlength=len(Phase)).astype(np.float64)
    return {**update_summary(sums, weight, phase_entropy, phase_count, batch, workers),
            "epochs_done": float(epochs_done)}


# =========================================================================== the run
def setup_run(args: argparse.Namespace) -> tuple[Run, Path, dict[str, Any] | None]:
    """The run (its config validated once) and its directory: a new run, or the run to resume."""
    if args.resume:
        if args.config:
            raise ValueError("--resume takes the config of the run it continues: drop --config (use --set to change a key)")
        ckpt = run_state.read_resume(Path(args.resume))
        run = load_run(None, args.set, base=ckpt["config"])
        check_resume_changes(ckpt["config"], config_io.to_plain(run.config))
        return run, Path(args.resume), ckpt
    if not args.config:
        raise ValueError("give --config FILE (for example configs/ppo_selfplay.yaml) or --resume RUN_DIR")
    run = load_run(args.config, args.set)
    cfg = run.config
    name = cfg.run_name or f"{Path(args.config).stem}__s{cfg.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    return run, run_state.new_run_dir(Path(args.run_dir) if args.run_dir else Path(cfg.output_dir) / name), None


def check_start(run: Run, resume: dict[str, Any] | None) -> None:
    """What a start needs beyond a valid config, checked before anything is written: the device exists here,
    ``warmstart.init_from`` loads and fits the run's rules and network, and every agent the run plays or learns
    from (opponents, evaluation opponents, teachers with their options) can be built."""
    cfg = run.config
    resolve_compute(cfg.device, cfg.precision)
    if cfg.warmstart.init_from and resume is None:
        initial_network(cfg.warmstart.init_from, cfg.network, cfg.rules)
    for spec in {*cfg.selfplay.agent_specs, *cfg.eval.opponents}:
        make_agent(spec, rules=cfg.rules)
    for stage in run.stages:
        warm = stage.config.warmstart
        if not stage.by_ppo and warm.teacher != LEARNER_TEACHER:
            make_agent(warm.teacher, rules=cfg.rules, **warm.teacher_options)


class Trainer:
    """One worker's training run: the setup, then ``run()`` (warm start, PPO, final evaluation).

    Every worker builds the same model (same seed) and its own games and random streams
    (seeded by its rank); gradients and statistics are reduced over workers, so all of
    them hold the same weights. The main worker (rank 0) writes the run directory.
    """

    def __init__(self, workers: Workers, run: Run, run_dir: Path, resume: dict[str, Any] | None, quiet: bool):
        torch.set_num_threads(1)
        cfg = run.config
        self.cfg, self.run_dir, self.workers, self.main = cfg, run_dir, workers, workers.is_main
        self.paths = RunDir(run_dir)
        self.compute = resolve_compute(cfg.device, cfg.precision)
        self.rules, p = cfg.rules, cfg.ppo
        self.decisions_per_iteration = run.decisions_per_iteration
        self.stages = run.stages
        self.config_dict = config_io.to_plain(cfg)

        self.ws = seeded_worker(cfg, workers.rank)
        envs = self.ws.envs
        self.model = ActorCritic(envs.obs_dim, envs.state_dim, envs.num_actions, cfg.network).to(self.compute.device)
        self.value_norm = ValueNorm()
        if cfg.warmstart.init_from and resume is None:
            init_weights(self.model, self.value_norm, cfg.warmstart.init_from, self.rules)
        values = any(not s.by_ppo and s.config.warmstart.targets == "values" for s in self.stages)
        self.storage = SeatRollout(p.num_steps, envs.num_envs, envs.n_players,
                                   (envs.state_dim if cfg.network.central_critic else envs.obs_dim)
                                   + self.model.card_input_size, targets=values)
        self.pool = OpponentPool(cfg.selfplay.pool_size, cfg.selfplay.pfsp_power, self.compute.dtype)
        self.league = League(cfg.selfplay, self.compute.dtype) if needs_league([s.kind for s in self.stages]) else None
        pools = {"snapshot": self.pool, **(self.league.pools if self.league else {})}
        self.opp = Opponents.from_config(cfg.selfplay, self.rules, cfg.seed, workers.rank, envs.num_envs, pools)
        if resume is None:
            self.opp.start(self.ws.rng)
        # Every teacher is built now (a bad option fails at the start, not hours in); each has its own stream.
        self.teachers = [self.stage_teacher(k) for k in range(len(self.stages))]

        # stage: the current stage, stage_done: its iterations done; iteration / bc_done: PPO / warm-start
        # iterations of all stages; decisions: all decisions played (the x axis).
        self.stage = self.stage_done = self.iteration = self.bc_done = self.decisions = 0
        self.optimizer = self.stage_optimizer()
        self.best_score, self.last_saved, self.last_eval = -math.inf, "none yet", ""
        if resume is not None:
            self._restore(resume)
        if self.main:
            run_state.remove_leftovers(self.paths.checkpoints)
        self.log = self._open_log(resume["training"] if resume is not None else None, quiet)
        self.interrupt = run_state.GracefulInterrupt(announce=self.main)
        self.interrupt.install()

    def _open_log(self, training: dict[str, Any] | None, quiet: bool) -> RunLog:
        log = RunLog(self.run_dir, active=self.main, quiet=quiet,
                     config_yaml=yaml.safe_dump(self.config_dict, sort_keys=False),
                     resume_log_bytes=training.get("log_bytes") if training else None,
                     resume_step=self.tb_step if training else None)
        compute = {**self.compute.describe(), "workers": self.workers.world_size}  # what "auto" resolved to
        if training is not None:
            log.record({"type": "resume", "iteration": self.iteration, "warmstart_iteration": self.bc_done,
                        "decisions": self.decisions, **compute})
        else:
            log.record({"type": "start", **compute})
        return log

    @property
    def tb_step(self) -> int:
        """TensorBoard's x axis: decisions played so far in all stages (it only grows)."""
        return self.decisions

    @property
    def kind(self) -> str:
        return self.stages[self.stage].kind if self.stage < len(self.stages) else "done"

    @property
    def scfg(self) -> Config:
        """The config of the current stage (the last one's once all are done)."""
        return self.stages[min(self.stage, len(self.stages) - 1)].config

    @property
    def teacher(self) -> Any:
        return self.teachers[self.stage] if self.stage < len(self.stages) else None

    def stage_teacher(self, k: int) -> Any:
        """Stage ``k``'s teacher (None for PPO), with its own stream; ``search:learner`` searches the network as it is now."""
        if self.stages[k].by_ppo:
            return None
        c = self.stages[k].config
        return make_teacher(c.warmstart.teacher, self.model, self.rules, stream_seed(self.cfg.seed, 5, self.workers.rank,
                                                                                     *([k] if k else [])),
                            greedy=self.cfg.eval.greedy, options=c.warmstart.teacher_options)

    def stage_optimizer(self) -> torch.optim.Optimizer:
        """A fresh Adam for the current stage (at its learning rate; PPO's follows its schedule)."""
        c = self.scfg
        by_ppo = self.stages[min(self.stage, len(self.stages) - 1)].by_ppo  # the last stage's once all are done
        lr = c.ppo.learning_rate if by_ppo else c.warmstart.learning_rate
        return torch.optim.Adam(self.model.parameters(), lr=lr, eps=c.ppo.adam_eps)

    def _restore(self, resume: dict[str, Any]) -> None:
        warm = self.stages[0].iterations if not self.stages[0].by_ppo else 0
        tr = run_state.with_stages(resume["training"], warm, self.decisions_per_iteration)
        self.model.load_state_dict(resume["model"])
        self.value_norm.load_state_dict(resume["value_norm"])
        self.stage, self.stage_done = tr["stage"], tr["stage_iterations"]
        self.iteration, self.bc_done, self.decisions = tr["iteration"], tr["bc_iterations"], tr["decisions"]
        self.optimizer = self.stage_optimizer()
        self.optimizer.load_state_dict(tr["optimizer"])
        self.best_score = tr["best_score"] if tr["best_score"] is not None else -math.inf
        self.pool.load_state_dict(tr["pool"], lambda: snapshot_agent(self.model, self.rules, 0))
        if self.league is not None:  # inside an exploiter stage, the main network is its opponent again
            self.league.load_state_dict(tr["league"], lambda: snapshot_agent(self.model, self.rules, 0), self.opp)
        if tr.get("searched_weights") is not None:  # a search:learner stage: the network it searches, frozen at its start
            self.teacher.base.model.load_state_dict(tr["searched_weights"])
        run_state.restore_worker(tr["workers"][self.workers.rank], self.ws, self.storage, self.opp, self.teacher)
        self.last_saved = self._position()

    def _position(self) -> str:
        if self.stage >= len(self.stages):
            return f"the end of all {len(self.stages)} stages"
        return (f"stage {self.stage + 1}/{len(self.stages)} ({self.kind}) after {self.stage_done} of its "
                f"{self.stages[self.stage].iterations} iterations")

    # ---------------------------------------------------------------- checkpoints
    def agent_checkpoint(self, **extra: Any) -> dict[str, Any]:
        return make_checkpoint(self.model, self.config_dict, self.rules, value_norm=self.value_norm.state_dict(), **extra)

    def save_latest(self, reason: str) -> None:
        """Write checkpoints/latest.pt (the previous one kept as latest.prev.pt); collective."""
        if not self.workers.same_weights(self.model.parameters()):  # a desync would be saved as if it were one model
            raise TrainingError(f"the {self.workers.world_size} workers hold different weights at iteration "
                                f"{self.iteration}: checkpoints/latest.pt was not overwritten (it holds {self.last_saved})")
        snapshots = self.workers.gather(run_state.worker_snapshot(self.ws, self.storage, self.opp, self.teacher))
        if not self.main:
            return
        line = self.log.line({"type": "checkpoint", "file": "latest.pt", "reason": reason, "stage": self.stage,
                              "iteration": self.iteration, "warmstart_iteration": self.bc_done, "decisions": self.decisions})
        training = {
            "num_workers": self.cfg.num_workers, "stage": self.stage, "stage_iterations": self.stage_done,
            "iteration": self.iteration, "bc_iterations": self.bc_done, "decisions": self.decisions,
            "best_score": self.best_score if math.isfinite(self.best_score) else None,
            "optimizer": self.optimizer.state_dict(), "workers": snapshots, "log_bytes": self.log.size_after(line),
            "pool": self.pool.state_dict(), "searched_weights": searched_weights(self.teacher),
            **({"league": self.league.state_dict()} if self.league is not None else {}),
        }
        ckpt = self.agent_checkpoint(training=training, meta={"iteration": self.iteration, "decisions": self.decisions,
                                                              "reason": reason})
        if not files.all_finite(ckpt["model"]):  # never replace a good checkpoint by a broken one
            raise TrainingError(f"the weights hold NaN or infinite values at iteration {self.iteration}: "
                                f"checkpoints/latest.pt was not overwritten (it holds {self.last_saved})")
        files.save(ckpt, self.paths.latest, keep_previous=True)
        self.log.write_line(line)
        self.last_saved = self._position()

    def check_finite(self, stage: str, values: dict[str, float], keys: tuple[str, ...]) -> None:
        """Stop (every worker, in step) before a non-finite loss or weight reaches any file."""
        bad = [k for k in keys if not math.isfinite(values.get(k, 0.0))]
        weights_ok = files.all_finite(self.model.state_dict())
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
        cfg, results, start = self.cfg, None, time.time()
        if self.main and deals > 0 and cfg.eval.opponents:
            ckpt = self.agent_checkpoint(act={"greedy": cfg.eval.greedy},
                                         meta={"iteration": self.iteration, "decisions": self.decisions})
            try:
                results = evaluate_checkpoint(ckpt, cfg.eval.opponents, deals, cfg.eval.seed)
            except Exception as err:  # an evaluation problem must not cost the training run
                self.log.message(f"evaluation at iteration {self.iteration} failed, training continues: {err!r}")
                self.log.record({"type": "eval_error", "iteration": self.iteration, "decisions": self.decisions,
                                 "error": repr(err)})
        if results is not None:
            for spec, r in results.items():
                self.log.scalars("eval", {f"{spec}_{name}": r[key] for name, key in EVAL_TAGS}, self.tb_step)
            score = results[cfg.eval.best_opponent]["mean"]
            self.log.record({"type": "eval", "stage": self.stage, "iteration": self.iteration, "decisions": self.decisions,
                             "final": final,
                             "seconds": round(time.time() - start, 1), "results": results})
            if score > self.best_score:
                self.best_score = score
                ckpt["meta"]["eval"] = results
                files.save(ckpt, self.paths.best)
                self.log.record({"type": "checkpoint", "file": "best.pt", "iteration": self.iteration, "score": score})
            self.last_eval = "eval " + " ".join(f"{k} {v['mean']:+.2f}" for k, v in results.items())
        self.workers.barrier()
        return results

    # ---------------------------------------------------------------- iterations
    def warm_start_iteration(self) -> None:
        """Behaviour cloning or expert iteration (:mod:`agents.training.warmstart`)."""
        start = time.time()
        c = self.scfg
        out, decisions = warm_start_update(c.warmstart, c.ppo, self.ws, self.model, self.value_norm,
                                           self.optimizer, self.storage, self.teacher, self.workers, self.compute)
        # No labelled decision on any worker (a rollout too short to reach label_phases): the statistics
        # are undefined (NaN), not a diverged loss; the weights are still checked.
        self.check_finite(f"warm start iteration {self.bc_done + 1}", out, BC_STATS if out["labels"] else ())
        self.bc_done += 1
        self.decisions += int(decisions)
        bc_stats = {**out, "decisions_per_second": decisions / (time.time() - start)}
        self.log.scalars("bc", bc_stats, self.tb_step)
        self.log.record({"type": "warmstart", "stage": self.stage, "kind": self.kind, "iteration": self.bc_done,
                         "of": self.stages[self.stage].iterations, "decisions": self.decisions,
                         "targets": c.warmstart.targets, **bc_stats})
        self.log.advance(int(decisions), f"accuracy {bc_stats['accuracy']:.3f}")

    def ppo_iteration(self) -> None:
        """Collect a rollout with the current network, then update it (CleanRL's loop body)."""
        cfg, workers = self.scfg, self.workers
        p = cfg.ppo
        self.iteration += 1
        start = time.time()
        frac = self.stage_done / self.stages[self.stage].iterations
        lr = p.learning_rate * (1.0 - frac) if p.lr_schedule == "linear" else p.learning_rate
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        ent_coef = p.ent_coef if p.ent_coef_final is None else p.ent_coef + frac * (p.ent_coef_final - p.ent_coef)

        self.model.eval()
        stats = collect(cfg, self.ws, self.model, self.value_norm, self.storage, self.opp, self.compute)
        collect_seconds = time.time() - start
        # ALGO LOGIC: advantages along each seat's own trajectory.
        advantages, returns = compute_gae(self.storage.rewards, self.storage.values, self.storage.next_index,
                                          self.storage.resolved, p.gamma, p.gae_lambda)
        batch = self.storage.batch(advantages, returns)
        if p.value_norm:
            update_value_norm(self.value_norm, batch["returns"], workers)
        self.model.train()
        losses = ppo_update(cfg, self.model, self.value_norm, self.optimizer, batch, workers, self.ws.rng, ent_coef,
                            self.compute)
        self.check_finite(f"PPO iteration {self.iteration}", losses, LOSS_STATS)
        seconds = time.time() - start

        # Reduce statistics over workers: fixed-length vectors, the same keys on every worker.
        self.opp.record_pools(stats.pop("pool_results"), workers.sum)
        keys = self.opp.stat_keys()
        totals = dict(zip(keys, workers.sum([stats[k] for k in keys])))
        self.decisions += int(totals["decisions"])
        charts = {"decisions_per_second": totals["decisions"] / seconds, "collect_fraction": collect_seconds / seconds,
                  "learning_rate": lr, "ent_coef": ent_coef, "batch_size": workers.sum([len(batch["actions"])])[0],
                  **self.opp.charts(totals)}
        self.log.scalars("charts", charts, self.tb_step)
        self.log.scalars("losses", losses, self.tb_step)
        self.log.record({"type": "iteration", "stage": self.stage, "iteration": self.iteration, "decisions": self.decisions,
                         "seconds": round(seconds, 3), **{f"charts/{k}": v for k, v in charts.items()},
                         **{f"losses/{k}": v for k, v in losses.items()}})
        main = self.kind == "ppo"  # snapshots and evaluations are the main network's, never an exploiter's
        if main and self.iteration % cfg.selfplay.snapshot_every == 0:
            self.pool.add(snapshot_agent(self.model, self.rules, stream_seed(cfg.seed, 6, self.iteration)), self.iteration)
        if main and cfg.eval.every and self.iteration % cfg.eval.every == 0 and self.stage_done + 1 < self.stages[self.stage].iterations:
            self.evaluate(cfg.eval.deals, final=False)
        self.log.advance(int(totals["decisions"]), self.last_eval)

    # ---------------------------------------------------------------- the whole run
    def stop_requested(self, done_this_call: int, max_iterations: int | None) -> bool:
        """Ctrl-C on any worker, or ``--max-iterations`` reached (collective: every worker agrees)."""
        return self.workers.any(self.interrupt.requested) or (max_iterations is not None
                                                               and done_this_call >= max_iterations)

    def stop_reason(self, stop: bool) -> str:
        return "interrupted" if self.interrupt.requested else "stopped" if stop else "scheduled"

    def run(self, max_iterations: int | None) -> None:
        """The stages in order from where the run stands, then the final evaluation; a stop saves latest.pt."""
        done_this_call, stop = 0, False
        while self.stage < len(self.stages) and not stop:
            (kind, _, total), dpi = self.stages[self.stage], self.decisions_per_iteration
            if kind == "ppo" and len(self.pool) == 0:  # the network PPO starts from is the pool's first snapshot
                self.pool.add(snapshot_agent(self.model, self.rules, stream_seed(self.cfg.seed, 6, self.iteration)),
                              self.iteration)
            if kind == "exploiter" and not self.league.training_exploiter:  # its opponent: the main network as it is now
                self.league.freeze_main(self.model, self.value_norm, self.opp, self.ws.rng, self.rules,
                                        stream_seed(self.cfg.seed, 7, self.iteration), self.iteration)
            self.log.start_bar(f"stage {self.stage + 1}/{len(self.stages)} {kind}", total * dpi, self.stage_done * dpi)
            stage = self.stage
            while self.stage == stage and not stop:
                self.ppo_iteration() if self.stages[stage].by_ppo else self.warm_start_iteration()
                self.stage_done += 1
                done_this_call += 1
                stop = self.stop_requested(done_this_call, max_iterations)
                if self.stage_done == total:
                    self.next_stage()
                count = self.iteration if self.stages[stage].by_ppo else self.bc_done
                if count % self.cfg.checkpoint_every == 0 or self.stage_done == 0 or stop:
                    self.save_latest(self.stop_reason(stop))
            self.log.close_bar()
        if self.stage < len(self.stages):
            self.log.message(f"stopped in {self._position()}; continue with: python train.py --resume {self.run_dir}")
        else:
            self.finish()
        self.log.message(self.paths.summary())

    def next_stage(self) -> None:
        """After a stage's last iteration: drop its open decisions (the next stage's own games start from
        the same positions), evaluate unless it was the last, and set up the next one's optimiser; after an
        exploiter stage, the exploiter is kept (``league/exploiter_<n>.pt``) and the main network comes back."""
        after_exploiter = self.kind == "exploiter"
        if after_exploiter:
            if self.main:
                files.save(self.agent_checkpoint(act={"greedy": self.cfg.eval.greedy}, meta={
                    "iteration": self.iteration, "decisions": self.decisions}), self.paths.exploiter(self.league.trained + 1))
            self.league.release_main(self.model, self.value_norm, self.opp, self.ws.rng, self.cfg.selfplay.opponents,
                                     self.rules, stream_seed(self.cfg.seed, 8, self.iteration), self.iteration)
        self.storage.pending.fill(-1)
        self.stage, self.stage_done = self.stage + 1, 0
        if self.stage < len(self.stages):
            self.log.record({"type": "stage", "stage": self.stage, "kind": self.kind, "decisions": self.decisions})
            if self.cfg.eval.every and self.cfg.eval.deals and not after_exploiter:  # where the recipe changes (the main
                self.evaluate(self.cfg.eval.deals, final=False)                   # network is back as evaluated before)
            self.optimizer = self.stage_optimizer()
            self.teachers[self.stage] = self.stage_teacher(self.stage)  # search:learner: over the network as it is now

    def finish(self) -> None:
        """The final evaluation; best.pt is the final network when no evaluation ran."""
        cfg = self.cfg
        self.evaluate(cfg.eval.final_deals if cfg.eval.deals else 0, final=True)
        best = self.paths.best
        if self.main and not best.exists():
            files.save(self.agent_checkpoint(act={"greedy": cfg.eval.greedy},
                                              meta={"iteration": self.iteration, "decisions": self.decisions}), best)
        in_step = self.workers.same_weights(self.model.parameters())
        self.log.record({"type": "done", "iteration": self.iteration, "decisions": self.decisions,
                         "workers": self.workers.world_size, "workers_in_step": in_step})

    def close(self, clean: bool = True) -> None:
        """Close the log and leave the worker group (``clean=False`` after an error: no barrier)."""
        self.log.close()
        self.workers.close(clean)


def train(workers: Workers, run: Run, run_dir: Path, resume: dict[str, Any] | None, max_iterations: int | None,
          quiet: bool) -> None:
    """One worker of a run (rank 0 writes the run directory, created when its log opens)."""
    trainer = Trainer(workers, run, run_dir, resume, quiet)
    try:
        trainer.run(max_iterations)
    except BaseException:
        # A peer may be waiting in a collective this worker will never join: leave without the closing barrier,
        # so the error ends the run (spawn stops the other workers) instead of hanging it.
        trainer.close(clean=False)
        raise
    trainer.close()


def _spawned(rank: int, run: Run, run_dir: Path, resume: dict[str, Any] | None, max_iterations: int | None,
             quiet: bool, rendezvous: Path) -> None:
    workers = Workers(rank, run.config.num_workers, str(rendezvous))
    # torch.multiprocessing hands every worker the same shared-memory tensors. Optimizer.load_state_dict
    # keeps them as they are, so without a private copy the workers would update one Adam state twice.
    train(workers, run, run_dir, copy.deepcopy(resume), max_iterations, quiet)
    exit_worker()


# =========================================================================== command line
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
    parser.add_argument("--dry-run", action="store_true",
                        help="validate the config, the run directory, the device and warmstart.init_from; "
                             "print the plan, write nothing")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.list_keys:
        return print("\n".join(key_listing()))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    if launched_by_torchrun():
        return main_torchrun(args)
    try:
        run, run_dir, resume = setup_run(args)
        check_start(run, resume)
    except ValueError as err:
        raise SystemExit(f"train.py: error: {err}") from None
    if args.dry_run:  # the config, the run directory, the device and the starting weights are valid
        return print(f"train.py --dry-run: would {'resume' if resume else 'start'} {run_dir}: stages (iterations) "
                     f"{run.plan()}; {run.config.num_workers} worker(s); nothing written")
    launch(run, run_dir, resume, args.max_iterations, args.quiet)


def launch(run: Run, run_dir: Path, resume: dict[str, Any] | None, max_iterations: int | None = None,
           quiet: bool = False, program: str = "train.py") -> None:
    """Train ``run`` in ``run_dir`` (checked by :func:`check_start`) with its ``num_workers`` processes on this machine."""
    if run.config.num_workers == 1:
        try:
            train(Workers(), run, run_dir, resume, max_iterations, quiet)
        except (TrainingError, ValueError) as err:
            raise SystemExit(f"{program}: error: {err}") from None
        return
    with tempfile.TemporaryDirectory(prefix="pcr-rendezvous-") as meeting:  # not in the run directory: nothing left there
        rendezvous = Path(meeting) / "rendezvous"
        spawn(_spawned, run.config.num_workers, (run, run_dir, resume, max_iterations, quiet, rendezvous),
              rendezvous, program)


def main_torchrun(args: argparse.Namespace) -> None:
    """One process of a ``torchrun`` launch, on this machine or one of many.

    The main worker (rank 0) resolves the run and its directory (and reads latest.pt on ``--resume``) and
    hands them to the others, so the other machines need neither the run directory nor a shared file
    system, and no process validates the config again; ``num_workers`` is torchrun's world size.
    """
    workers = Workers.from_environment()
    setup: tuple[Any, ...] = ()
    if workers.is_main:
        try:
            args.set = [*args.set, f"num_workers={workers.world_size}"] if not args.resume else args.set
            run, run_dir, resume = setup_run(args)
            if run.config.num_workers != workers.world_size:
                raise ValueError(f"this run was trained with num_workers={run.config.num_workers}: resume it with as "
                                 f"many torchrun processes in all (this launch has {workers.world_size})")
            check_start(run, resume)
            setup = (run, str(run_dir), resume)
        except ValueError as err:
            setup = (f"train.py: error: {err}",)
    setup = workers.broadcast(setup)
    if len(setup) == 1:
        workers.close()
        raise SystemExit(setup[0] if workers.is_main else 1)
    run, run_dir_name, resume = setup
    try:
        train(workers, run, Path(run_dir_name), resume, args.max_iterations, args.quiet or not workers.is_main)
    except (TrainingError, ValueError) as err:
        raise SystemExit(f"train.py: error: {err}") from None
    if workers.world_size > 1:
        exit_worker()


if __name__ == "__main__":
    main()
