"""Learning from a teacher before (or instead of) PPO: behaviour cloning and expert iteration.

A teacher agent labels positions and the network learns its labels (policy: cross-entropy; critic:
the Monte-Carlo returns of the same games). Who plays the games (``warmstart.play``):

* ``teacher``: behaviour cloning, the teacher plays every seat of its own games;
* ``learner``: expert iteration (DAgger), the network being trained plays and the teacher labels the
  positions the network reaches, with its chosen action (``targets: action``) or, for a ``search:``
  teacher, its per-action distribution (``targets: values``).

The teacher ``search:learner`` (:data:`LEARNER_TEACHER`) is decision-time search over the network itself,
frozen as it is when its stage starts: a staged recipe improves its own policy by search with no file of an
earlier run (the chain of ``configs/experiments/distill_search.yaml`` in one config).

Also here: :func:`init_weights`, a network's starting weights taken from a checkpoint
(``warmstart.init_from``), where a plain network may seed a card-aware one of the same widths.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from agents import make_agent
from agents.ppo import PPOAgent, read_checkpoint
from agents.ppo.network import ActorCritic, NetworkConfig, ValueNorm, log_probs, masked_entropy
from agents.training.compute import Compute, minibatch_outputs, minibatches, network_actions, optimizer_step
from agents.training.config import LEARNER_TEACHER, PPOConfig, WarmStartConfig
from agents.training.opponents import snapshot_agent
from agents.training.rollout import SeatRollout, compute_gae, update_value_norm
from agents.training.run_state import WorkerState
from agents.training.workers import Workers
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase


def make_teacher(spec: str, model: ActorCritic, rules: RulesConfig, seed: int, *, greedy: bool,
                 options: dict[str, Any]) -> Any:
    """A warm-start teacher: ``search:learner`` over a frozen copy of ``model`` (acting ``greedy`` or
    sampling, as the run's evaluations do), or the agent of any other spec."""
    if spec != LEARNER_TEACHER:
        return make_agent(spec, seed=seed, rules=rules, **options)
    from agents.search.agent import SearchAgent  # imported lazily, like the registry does

    base = snapshot_agent(model, rules, seed, greedy=greedy, source="learner")
    return SearchAgent(base, rules, seed=seed, source=LEARNER_TEACHER, **options)


def searched_weights(teacher: Any) -> dict[str, torch.Tensor] | None:
    """The frozen network a ``search:learner`` teacher searches over (latest.pt keeps it), else None."""
    return teacher.base.model.state_dict() if getattr(teacher, "source", "") == LEARNER_TEACHER else None


BC_STATS = ("loss", "accuracy", "value_loss", "entropy")
"""Statistics of a warm-start update, in the order they are reduced over workers."""


def phase_of(obs: np.ndarray) -> np.ndarray:
    """The decision phase of each observation row (the observation starts with the phase one-hot)."""
    return obs[:, :len(Phase)].argmax(1)


def collect_labels(settings: WarmStartConfig, ppo: PPOConfig, ws: WorkerState, model: ActorCritic, value_norm: ValueNorm,
                   storage: SeatRollout, teacher: Any, compute: Compute) -> dict[str, float]:
    """Play ``ppo.num_steps`` steps of every game, storing the teacher's labels of every seat's decisions
    in ``settings.label_phases`` (``settings`` is the ``warmstart`` section). Returns summed counts."""
    label_phases = sorted({int(Phase[name.upper()]) for name in settings.label_phases})
    central = model.config.central_critic
    stats = dict.fromkeys(("decisions", "learner_decisions", "rounds", "made", "bid_sum"), 0.0)
    storage.begin()
    for _ in range(ppo.num_steps):
        obs, masks = ws.obs, ws.masks
        inputs = ws.envs.state() if central else obs
        legal = masks.astype(bool)
        forced = legal.sum(1) == 1 if ppo.skip_forced else np.zeros(len(obs), bool)
        actions = np.where(forced, legal.argmax(1), 0)
        stored = ~forced
        if len(label_phases) < Phase.ROUND_END:  # not every decision phase
            stored &= np.isin(phase_of(obs), label_phases)
        rows, playing = np.flatnonzero(stored), np.flatnonzero(~forced)
        targets = None
        x = model.rollout_inputs(inputs[playing], obs[playing])
        if settings.play == "learner":  # expert iteration: the network plays, the teacher labels its positions
            actions[playing] = network_actions(model, value_norm, x, legal[playing], ws.action_gen, compute)[0]
            if settings.targets == "values":
                targets = teacher.action_targets(obs[rows], masks[rows])
                act = targets.argmax(1)
            else:
                act = teacher.act_batch(obs[rows], masks[rows])
        elif len(playing) == len(rows):
            act = teacher.act_batch(obs[rows], masks[rows])
        else:
            actions[playing] = teacher.act_batch(obs[playing], masks[playing])
            act = actions[rows]
        actions[rows] = act
        zeros = np.zeros(len(rows), np.float32)
        storage.add(x[np.searchsorted(playing, rows)], legal[rows], ws.seats, stored, act, zeros, zeros, targets)
        rewards, dones, infos = ws.step(actions)
        storage.credit(rewards * ppo.reward_scale)
        stats["decisions"] += len(obs)
        stats["learner_decisions"] += len(rows)
        round_end = count_rounds(stats, infos)
        storage.end(dones | round_end if ppo.return_horizon == "round" else dones)
    return stats


def count_rounds(stats: dict[str, Any], infos: list[dict[str, Any]]) -> np.ndarray:
    """Add the rounds finished this step (count, contracts made, bids) to ``stats``; returns which games ended one."""
    round_end = np.zeros(len(infos), bool)
    for g, info in enumerate(infos):
        result = info.get("round_result")
        if result is not None:
            round_end[g] = True
            stats["rounds"] += 1
            stats["made"] += result["made"]
            stats["bid_sum"] += result["bid"]
    return round_end


def bc_update(settings: WarmStartConfig, ppo: PPOConfig, model: ActorCritic, value_norm: ValueNorm, optimizer: torch.optim.Optimizer,
              batch: dict[str, np.ndarray], workers: Workers, rng: np.random.Generator, compute: Compute) -> dict[str, float]:
    """Cross-entropy on the teacher's actions (or on its per-action ``targets`` where the batch has them),
    value regression on Monte-Carlo returns.

    Collectives have fixed shapes, as in PPO's update; returns statistics over all workers and their
    number of labelled decisions (``labels``; the statistics are NaN when it is 0).
    """
    n, device = len(batch["actions"]), compute.device
    t = {k: torch.from_numpy(v) for k, v in batch.items()}
    returns_n = value_norm.normalize(t["returns"])
    sums = np.zeros(len(BC_STATS))
    weight = 0.0
    for _ in range(settings.epochs):
        for mb in minibatches(rng, n, ppo.num_minibatches):
            optimizer.zero_grad(set_to_none=False)
            if len(mb) == 0:  # fewer decisions than minibatches on this worker: zero gradients
                optimizer_step(model, optimizer, workers, ppo.max_grad_norm)
                continue
            m, a = t["masks"][mb].to(device), t["actions"][mb].to(device)
            logits, value = minibatch_outputs(model, compute, t, mb)
            logp_all = log_probs(logits)
            if "targets" in t:
                q = t["targets"][mb].to(device)
                nll = -(q * logp_all).where(q > 0, torch.zeros((), dtype=logp_all.dtype)).sum(1).mean()
            else:
                nll = -logp_all.gather(1, a[:, None]).squeeze(1).mean()
            v_loss = 0.5 * ((value - returns_n[mb].to(device)) ** 2).mean()
            (nll + ppo.vf_coef * v_loss).backward()
            optimizer_step(model, optimizer, workers, ppo.max_grad_norm)
            with torch.no_grad():
                sums += len(mb) * np.array([nll.item(), (logp_all.argmax(1) == a).float().mean().item(), v_loss.item(),
                                            masked_entropy(logp_all, m).mean().item()])
            weight += len(mb)
    total = workers.sum(np.concatenate([sums, [weight, n]]))
    out = {name: float(v / total[-2]) if total[-2] else float("nan") for name, v in zip(BC_STATS, total[:-2])}
    return {**out, "labels": float(total[-1])}


def warm_start_update(settings: WarmStartConfig, ppo: PPOConfig, ws: WorkerState, model: ActorCritic, value_norm: ValueNorm,
                      optimizer: torch.optim.Optimizer, storage: SeatRollout, teacher: Any, workers: Workers,
                      compute: Compute) -> tuple[dict[str, float], float]:
    """One warm-start iteration: collect labels, then learn them. Returns the update's statistics and
    the decisions played by all workers."""
    stats = collect_labels(settings, ppo, ws, model, value_norm, storage, teacher, compute)
    _, mc_returns = compute_gae(storage.rewards, np.zeros_like(storage.values), storage.next_index, storage.resolved,
                                ppo.gamma, 1.0)
    batch = storage.batch(np.zeros_like(mc_returns), mc_returns, targets=settings.targets == "values")
    if ppo.value_norm:
        update_value_norm(value_norm, batch["returns"], workers)
    out = bc_update(settings, ppo, model, value_norm, optimizer, batch, workers, ws.rng, compute)
    return out, workers.sum([stats["decisions"]])[0]


def initial_network(source: str, network: NetworkConfig, rules: RulesConfig) -> tuple[ActorCritic, dict[str, Any], bool]:
    """The network saved in checkpoint ``source`` (``warmstart.init_from``), its value normalisation and whether it
    is a plain network seeding a card-aware one: its rules must be compatible and its network ``network``, except
    that a plain network may seed a card-aware one of the same widths (the same logits; card play is then learned)."""
    try:
        init = read_checkpoint(source)
    except ValueError as err:
        raise ValueError(f"warmstart.init_from {source!r}: {err}") from None
    loaded = PPOAgent.from_checkpoint(init, rules=rules, source=f"warmstart.init_from {source!r}").model
    saved = loaded.config
    grafted = (network.card_head and not saved.card_head
               and dataclasses.replace(saved, card_head=True, card_width=network.card_width) == network)
    if saved != network and not grafted:
        raise ValueError(f"warmstart.init_from {source!r} has network {init['network']}, "
                         f"the config asks for {dataclasses.asdict(network)}")
    return loaded, init.get("value_norm", {}), grafted


def init_weights(model: ActorCritic, value_norm: ValueNorm, source: str, rules: RulesConfig) -> None:
    """Load ``model`` and ``value_norm`` from the checkpoint ``source`` (:func:`initial_network` checks it)."""
    loaded, norm, grafted = initial_network(source, model.config, rules)
    if grafted:
        model.actor.load_plain(loaded.actor)
        model.critic.load_state_dict(loaded.critic.state_dict())
    else:
        model.load_state_dict(loaded.state_dict())
    if norm:
        value_norm.load_state_dict(norm)


__all__ = ["BC_STATS", "LEARNER_TEACHER", "collect_labels", "make_teacher", "searched_weights", "count_rounds", "bc_update",
           "warm_start_update", "initial_network", "init_weights", "phase_of"]
