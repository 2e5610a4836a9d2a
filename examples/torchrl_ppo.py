"""Masked multi-agent PPO on Pass Cut Run with TorchRL: the AEC env through TorchRL's own PettingZoo wrapper.

    pip install torch==2.13.0 && pip install -e ".[torchrl]"
    python examples/torchrl_ppo.py --frames 20000 --frames-per-batch 1000

The env is built the way TorchRL documents for a turn-based (AEC) PettingZoo env::

    PettingZooWrapper(pass_cut_run_v0.env(), use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP)

``use_mask=True`` (compulsory for AEC envs) makes TorchRL write ``("agents", "mask")``, True for
the seat to act, and ``("agents", "action_mask")``, the legal actions TorchRL reads from pcr's
observation dict. ``ALL_IN_ONE_GROUP`` stacks the four seats under one ``"agents"`` group, so
one network (parameters shared by all seats: self-play) handles them in one batch.

The recipe is TorchRL's multi-agent PPO tutorial with a masked action distribution:

- actor: ``ProbabilisticActor`` with ``MaskedCategorical`` fed ``logits`` and ``("agents", "action_mask")``,
  so an illegal action has probability zero (sampled and trained alike);
- critic: a per-seat value head on the seat's own observation;
- ``ClipPPOLoss`` + ``GAE`` on the per-seat reward/done keys; ``loss_mask_key = ("agents", "mask")``
  restricts the loss to the seat that acted at each step (the other three seats' entries are
  TorchRL's placeholders for agents that did not move);
- ``torchrl.collectors.Collector`` (TorchRL 0.14's name for the former ``SyncDataCollector``).

The script counts illegal actions in every batch (the acting seat's action against its mask) and
prints the losses; ``main()`` returns a summary dict (used by ``tests/test_torchrl.py``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Sequence

OBS_KEY = ("agents", "observation", "observation")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frames", type=int, default=20_000, help="env steps in total (one step = one seat's action)")
    p.add_argument("--frames-per-batch", type=int, default=1_000)
    p.add_argument("--epochs", type=int, default=4, help="PPO epochs per batch")
    p.add_argument("--minibatch", type=int, default=250)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    p.add_argument("--gamma", type=float, default=1.0)
    p.add_argument("--lmbda", type=float, default=0.95)
    p.add_argument("--episode", choices=["round", "game"], default="round")
    p.add_argument("--reward", choices=["score_diff", "win"], default="win")
    p.add_argument("--rules", type=json.loads, default={}, help='rules fields as JSON, e.g. \'{"passing": false}\'')
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="directory for policy.pt and summary.json (default: none)")
    return p


def make_env(episode: str = "round", reward: str = "win", seed: int | None = 0, **rules: Any):
    """TorchRL's documented AEC wrapping of ``pass_cut_run_v0.env()``: nothing pcr-specific."""
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType

    from pcr_env import pass_cut_run_v0

    return PettingZooWrapper(pass_cut_run_v0.env(episode=episode, reward=reward, **rules), use_mask=True,
                             group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, categorical_actions=True, seed=seed)


def build_modules(env, hidden: Sequence[int]):
    """The masked actor and the per-seat critic (parameters shared by the four seats)."""
    from tensordict.nn import TensorDictModule
    from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

    n_obs = env.observation_spec[OBS_KEY].shape[-1]
    n_act = env.full_action_spec["agents", "action"].space.n
    logits = TensorDictModule(MLP(in_features=n_obs, out_features=n_act, num_cells=list(hidden)),
                              in_keys=[OBS_KEY], out_keys=[("agents", "logits")])
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
        out_keys=[("agents", "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=("agents", "sample_log_prob"),
    )
    critic = TensorDictModule(MLP(in_features=n_obs, out_features=1, num_cells=list(hidden)),
                              in_keys=[OBS_KEY], out_keys=[("agents", "state_value")])
    return actor, critic


def build_loss(actor, critic, gamma: float, lmbda: float):
    """``ClipPPOLoss`` + ``GAE`` on the ``agents`` group, the loss restricted to the acting seat."""
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    # No advantage normalisation: its statistics would include the placeholder rows of the seats that
    # did not act (TorchRL normalises over every entry, not only the masked ones); reward="win" is +-1.
    loss = ClipPPOLoss(actor_network=actor, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01,
                       normalize_advantage=False)
    loss.set_keys(reward=("agents", "reward"), action=("agents", "action"),
                  sample_log_prob=("agents", "sample_log_prob"), value=("agents", "state_value"),
                  done=("agents", "done"), terminated=("agents", "terminated"),
                  advantage=("agents", "advantage"), value_target=("agents", "value_target"))
    loss.loss_mask_key = ("agents", "mask")  # only the seat that acted at a step contributes to the loss
    loss.make_value_estimator(ValueEstimators.GAE, gamma=gamma, lmbda=lmbda)
    return loss


def illegal_actions(batch) -> tuple[int, int]:
    """(illegal, acting) counts of one collected batch: the acting seat's action against its action mask."""
    acting = batch["agents", "mask"]                       # [T, seats] True for the seat to act
    action = batch["agents", "action"]                     # [T, seats]
    legal = batch["agents", "action_mask"].gather(-1, action.unsqueeze(-1)).squeeze(-1)
    return int((acting & ~legal).sum()), int(acting.sum())


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    import torch
    from torchrl.collectors import Collector

    args = build_parser().parse_args(argv)
    torch.manual_seed(args.seed)
    env_kwargs = {"episode": args.episode, "reward": args.reward, **args.rules}
    actor, critic = build_modules(make_env(seed=args.seed, **env_kwargs), args.hidden)
    loss_module = build_loss(actor, critic, args.gamma, args.lmbda)
    optim = torch.optim.Adam(loss_module.parameters(), lr=args.lr)
    collector = Collector(lambda: make_env(seed=args.seed, **env_kwargs), policy=actor,
                          frames_per_batch=args.frames_per_batch, total_frames=args.frames,
                          # a memoryless policy: no InitTracker needed (TorchRL 0.14 warns otherwise)
                          auto_register_policy_transforms=False)
    history: list[dict[str, Any]] = []
    frames = illegal = acting = episodes = 0
    start = time.perf_counter()
    try:
        for i, batch in enumerate(collector, 1):
            bad, act = illegal_actions(batch)
            illegal, acting, frames = illegal + bad, acting + act, frames + batch.numel()
            episodes += int(batch["next", "done"].sum())
            with torch.no_grad():
                loss_module.value_estimator(batch, params=loss_module.critic_network_params,
                                            target_params=loss_module.target_critic_network_params)
            flat = batch.reshape(-1)
            sums = {"loss_objective": 0.0, "loss_critic": 0.0, "loss_entropy": 0.0}
            n = 0
            for _ in range(args.epochs):
                for idx in torch.randperm(flat.numel()).split(args.minibatch):
                    out = loss_module(flat[idx])
                    total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                    optim.zero_grad()
                    total.backward()
                    torch.nn.utils.clip_grad_norm_(loss_module.parameters(), 1.0)
                    optim.step()
                    for k in sums:
                        sums[k] += float(out[k].detach())
                    n += 1
            collector.update_policy_weights_()
            row = {"batch": i, "frames": frames, "illegal": bad, "episodes": episodes,
                   **{k: v / max(n, 1) for k, v in sums.items()}, "seconds": round(time.perf_counter() - start, 1)}
            history.append(row)
            print(f"batch {i:3d}  frames {frames:7d}  illegal {bad}  episodes {episodes:5d}  "
                  f"loss_objective {row['loss_objective']:+.4f}  loss_critic {row['loss_critic']:.4f}  "
                  f"loss_entropy {row['loss_entropy']:+.4f}", flush=True)
    finally:
        collector.shutdown()
    summary = {"frames": frames, "acting_steps": acting, "illegal_actions": illegal, "episodes": episodes,
               "seconds": round(time.perf_counter() - start, 1), "history": history}
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        torch.save(actor.state_dict(), args.out / "policy.pt")
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
