"""Multi-agent PPO with action masking on Pass Cut Run with RLlib (Ray): one shared policy per team.

    pip install -e ".[rllib]"
    python examples/rllib_multiagent.py --iterations 50 --num-env-runners 2        # local Ray instance
    python examples/rllib_multiagent.py --address auto --num-env-runners 32 \\
        --num-learners 2 --iterations 1000                                          # on a running Ray cluster

The AEC env (:mod:`pcr_env.pass_cut_run_v0`) goes through RLlib's own PettingZoo
support (``PettingZooEnv``) via :func:`pcr_env.rllib_env.rllib_env`, which only
renames the observation key to RLlib's action-masking layout. Agents
``player_0``/``player_2`` map to policy ``team_0`` and ``player_1``/``player_3`` to
``team_1`` (R1.2), each an ``ActionMaskingTorchRLModule``: illegal actions get
zero probability. Both teams learn (self-play between two team policies).

Scaling out is Ray's job, not ours: the same script runs on a cluster by
pointing ``--address`` at it (or setting ``RAY_ADDRESS``); env runners and
learners are then placed on the cluster's nodes. ``--num-env-runners`` sets the
sampling processes, ``--num-learners`` the training processes (add
``--num-gpus-per-learner 1`` on GPU nodes).

Network exposure: the local Ray instance this script starts (no ``--address``) binds every Ray
service to ``127.0.0.1`` (``--node-ip-address``, default loopback) and starts no dashboard, so
nothing listens on the machine's network interfaces. Ray binds to the loopback only when its
"cluster" switch is off, ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, which the script sets for a
loopback address (``--node-ip-address 127.0.0.1`` alone is turned back into the eth0 address by
Ray 2.60). To let other machines join, pass this machine's address on the cluster's private
network instead (``--node-ip-address 10.0.0.5``). A cluster started with ``ray start`` is bound
by ``ray start``'s own flags: see examples/README.md ("On a Ray cluster"). Whatever reaches
Ray's ports (with its token, where token authentication is on) can run code on the cluster, so
open them only to a trusted network.

A training iteration that sampled no environment steps (RLlib logs "No samples returned from
remote workers" when the env runners miss ``--sample-timeout``, typically on an overloaded
machine) stops the script with exit status 1 and a message, instead of "training" on nothing.

Per iteration the script prints the mean episode return of each team policy
(score-difference rewards: zero-sum, so the two means mirror each other) and
saves a checkpoint under ``--out``. With ``--eval-deals N`` it also plays the
``team_0`` policy (agent spec ``rllib:CHECKPOINT``) in duplicate against the
heuristic baseline through :func:`agents.evaluation.evaluate`, so results
compare with the project's own agents.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pcr_env.rllib_env import rllib_env, team_policy

ENV_NAME = "pass_cut_run"
POLICIES = ("team_0", "team_1")
LOOPBACK = "127.0.0.1"
# Ray 2.x: with this switch off, Ray resolves the node address to the loopback and binds its
# services (GCS, raylet, object manager, workers) there. Read by ``ray`` when it is imported.
RAY_CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


class NoSamplesError(RuntimeError):
    """A training iteration sampled no environment steps (the script exits with status 1)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=50, help="training iterations (each samples one train batch)")
    p.add_argument("--address", default=None, help="Ray cluster address ('auto' = the running cluster); default: a local instance")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance (default: all)")
    p.add_argument("--node-ip-address", default=LOOPBACK,
                   help="address the local Ray instance binds to (default 127.0.0.1: reachable from this machine only); "
                        "this machine's address on a trusted cluster network lets other nodes join. Ignored with --address")
    p.add_argument("--sample-timeout", type=float, default=60.0,
                   help="seconds RLlib waits for the env runners' samples each iteration (RLlib's default: 60)")
    p.add_argument("--num-env-runners", type=int, default=1, help="sampling processes (0: sample in the driver)")
    p.add_argument("--num-envs-per-runner", type=int, default=1)
    p.add_argument("--num-learners", type=int, default=0, help="learner processes (0: learn in the driver)")
    p.add_argument("--num-gpus-per-learner", type=float, default=0)
    p.add_argument("--train-batch", type=int, default=4000, help="env steps per training batch (per learner)")
    p.add_argument("--minibatch", type=int, default=500)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256], help="policy/value MLP sizes")
    p.add_argument("--episode", choices=["round", "game"], default="round")
    p.add_argument("--reward", choices=["score_diff", "win"], default="score_diff")
    p.add_argument("--rules", type=json.loads, default={}, help='rules fields as JSON, e.g. \'{"passing": false}\'')
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-deals", type=int, default=0, help="duplicate deals of team_0 vs the heuristic at the end (0: skip)")
    p.add_argument("--out", type=Path, default=Path("runs/rllib_multiagent"))
    return p


def build_config(args: argparse.Namespace):
    """The RLlib ``PPOConfig`` (new API stack): masked team policies on the PettingZoo AEC env."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    env_config = {"episode": args.episode, "reward": args.reward, **args.rules}
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"head_fcnet_hiddens": list(args.hidden), "head_fcnet_activation": "relu", "vf_share_layers": False},
    )
    return (
        PPOConfig()
        # RLlib's env pre-check steps an unmasked random action, which a masked card game rejects
        # (PettingZoo's TerminateIllegalWrapper ends that episode with a warning); pcr's own
        # conformance tests (PettingZoo api_test) cover the env instead.
        .environment(ENV_NAME, env_config=env_config, disable_env_checking=True)
        .multi_agent(policies=set(POLICIES), policy_mapping_fn=team_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={p: module for p in POLICIES}))
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs_per_runner,
                     num_cpus_per_env_runner=1, sample_timeout_s=args.sample_timeout)
        .learners(num_learners=args.num_learners, num_gpus_per_learner=args.num_gpus_per_learner)
        .training(train_batch_size_per_learner=args.train_batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs, lr=args.lr, gamma=1.0, lambda_=0.95, entropy_coeff=0.01,
                  vf_clip_param=100.0)  # score margins are tens of points: don't clip the value loss at RLlib's 10
        .debugging(seed=args.seed)
    )


def sampled_env_steps(result: dict[str, Any], lifetime_before: int) -> tuple[int, int]:
    """(env steps sampled in this ``algo.train()`` iteration, env steps sampled in total so far)."""
    lifetime = (result.get("env_runners") or {}).get("num_env_steps_sampled_lifetime")
    if lifetime is None:  # no env runner reported anything this iteration
        return 0, lifetime_before
    return int(lifetime) - lifetime_before, int(lifetime)


def check_sampled(steps: int, iteration: int, sample_timeout_s: float) -> None:
    """Raise :class:`NoSamplesError` when an iteration sampled no environment steps.

    RLlib only logs "No samples returned from remote workers" (a warning, easy to miss) when no env
    runner returned its sample within ``sample_timeout_s``, then updates on an empty batch and
    reports 0 env steps: the run would otherwise "succeed" without training.
    """
    if steps <= 0:
        raise NoSamplesError(
            f"training iteration {iteration} sampled no environment steps: no env runner returned its "
            f"samples within --sample-timeout {sample_timeout_s:g} s (RLlib logs 'No samples returned from "
            "remote workers'), so nothing was trained. The machine or cluster is probably overloaded or an env "
            "runner died: raise --sample-timeout, lower --train-batch, or check `ray status` and the runners' logs.")


def bind_local_ray(node_ip_address: str) -> None:
    """Make a local ``ray.init`` bind to ``node_ip_address``; a loopback address needs Ray's cluster switch off."""
    if node_ip_address not in (LOOPBACK, "localhost"):
        return
    os.environ[RAY_CLUSTER_SWITCH] = "0"  # inherited by the raylet, the GCS and every worker process
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # ray was imported before the switch was set (for example by another test)
        constants.ENABLE_RAY_CLUSTER = False


def policy_returns(result: dict[str, Any]) -> dict[str, float]:
    """Mean episode return per team policy from one ``algo.train()`` result."""
    env_runners = result.get("env_runners", {})
    returns = env_runners.get("module_episode_returns_mean", {}) or {}
    return {p: float(returns[p]) for p in POLICIES if p in returns}


class RLlibTeamAgent:
    """An RLlib team module behind pcr's agent interface, playing greedily (so nothing to seed)."""

    name = "rllib-ppo"

    def __init__(self, module: Any):
        import torch

        self.module, self.torch = module, torch

    def reset(self, seed: int | None = None) -> None:
        """Greedy play has no randomness."""

    def get_state(self) -> dict[str, Any]:
        """No random streams to save (the agent protocol's resume hook)."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        torch = self.torch
        batch = {"obs": {"observations": torch.as_tensor(np.asarray(obs, np.float32)),
                         "action_mask": torch.as_tensor(np.asarray(masks, np.float32))}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"]
        return logits.argmax(dim=-1).numpy().astype(np.int64)

    def act(self, obs: dict[str, np.ndarray]) -> int:
        return int(self.act_batch(obs["observation"][None], obs["action_mask"][None])[0])


def load_rllib_agent(path: str, seed: int | None = None, **kwargs: Any) -> RLlibTeamAgent:
    """Factory of the ``rllib:PATH`` agent spec: an algorithm checkpoint (its ``team_0`` module) or a module dir."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    module_dir = Path(path)
    if (module_dir / "learner_group").is_dir():
        module_dir = module_dir / "learner_group" / "learner" / "rl_module" / POLICIES[0]
    if not (module_dir / "module_state.pkl").is_file():
        raise ValueError(f"agent spec 'rllib:{path}': {module_dir} holds no RLlib module checkpoint")
    return RLlibTeamAgent(RLModule.from_checkpoint(str(module_dir)))


def register_rllib_agent() -> None:
    """Make ``rllib:PATH`` a valid agent spec for pcr's tools in this process."""
    from agents import register_agent

    register_agent("rllib", load_rllib_agent, takes_arg=True, arg_name="PATH",
                   description="a team policy from an RLlib checkpoint of examples/rllib_multiagent.py")


def ray_init_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``ray.init`` arguments: join ``--address``, or start a local instance bound to ``--node-ip-address``, no dashboard."""
    kwargs: dict[str, Any] = {"address": args.address, "include_dashboard": False, "ignore_reinit_error": True,
                              "log_to_driver": False}
    if args.address is None:
        kwargs.update(num_cpus=args.num_cpus, _node_ip_address=args.node_ip_address)
    return kwargs


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    if args.address is None:
        bind_local_ray(args.node_ip_address)
    import ray
    from ray.tune.registry import register_env

    args.out.mkdir(parents=True, exist_ok=True)
    ray.init(**ray_init_kwargs(args))
    ray_address = ray.get_runtime_context().gcs_address
    register_env(ENV_NAME, rllib_env)
    algo = build_config(args).build_algo()
    history = []
    try:
        total = 0
        for it in range(1, args.iterations + 1):
            start = time.perf_counter()
            result = algo.train()
            returns = policy_returns(result)
            sampled, total = sampled_env_steps(result, total)
            history.append({"iteration": it, "env_steps": total, "sampled": sampled, "returns": returns,
                            "seconds": round(time.perf_counter() - start, 2)})
            print(f"iter {it:4d}  env steps {total:8d}  " + "  ".join(f"{p} {r:+.2f}" for p, r in returns.items()))
            check_sampled(sampled, it, args.sample_timeout)
        checkpoint = algo.save_to_path(str((args.out / "checkpoint").resolve()))
        summary: dict[str, Any] = {"checkpoint": str(checkpoint), "ray_address": ray_address, "history": history}
        if args.eval_deals > 0:
            from agents.evaluation import evaluate

            register_rllib_agent()
            result = evaluate([f"rllib:{checkpoint}", "heuristic"], deals=args.eval_deals, seed=args.seed,
                              episode="round", rules=dict(args.rules), progress=False)
            print(result.table())
            summary["evaluation"] = result.to_dict(with_diffs=False)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
        return summary
    finally:
        algo.stop()
        if args.address is None:
            ray.shutdown()


def cli(argv: Sequence[str] | None = None) -> int:
    """The command line: 0 on success, 1 with the message on stderr when an iteration sampled nothing."""
    try:
        main(argv)
    except NoSamplesError as err:
        print(f"error: {err}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli())
