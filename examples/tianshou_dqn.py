"""Masked DQN on Pass Cut Run with Tianshou 2.0: the AEC env through Tianshou's own ``PettingZooEnv``.

    pip install torch==2.13.0 && pip install -e ".[tianshou]"     # its own venv: tianshou needs pandas<3 (ray: 3.x)
    python examples/tianshou_dqn.py --epochs 10 --epoch-steps 5000

This follows Tianshou's PettingZoo example (``test/pettingzoo/tic_tac_toe.py``) with the 2.0 API:

- every env is ``tianshou.env.PettingZooEnv(pass_cut_run_v0.env(...))``; Tianshou turns pcr's
  ``{"observation", "action_mask"}`` dict into ``obs.obs``, ``obs.mask`` and ``obs.agent_id``;
- the learning seats (default: team 0, ``player_0`` and ``player_2``) share one ``DQN``
  (a ``DiscreteQLearningPolicy``, which gives masked actions a Q-value below every legal one, also
  for its epsilon-greedy exploration); the other seats are
  ``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` (uniform over the legal actions);
- ``MultiAgentOffPolicyAlgorithm`` (2.0's replacement of ``MultiAgentPolicyManager``) dispatches
  each step to the algorithm of the seat to act, and ``run_training(OffPolicyTrainerParams(...))``
  trains (the trainer checks the replay buffer for NaNs after every collect step, so pcr's infos
  must be numbers only: they are).

The score reported is the learning team's mean return per episode (``reward="win"``: +1/-1 per
round by default). ``main()`` returns a summary dict (used by ``tests/test_tianshou.py``) including
the number of stored transitions whose action was outside the mask (always 0).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--epoch-steps", type=int, default=5000, help="env steps (all seats) per epoch")
    p.add_argument("--collect-steps", type=int, default=100, help="env steps per collection step")
    p.add_argument("--updates-per-step", type=float, default=0.1, help="gradient steps per collected env step")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--buffer-size", type=int, default=20_000)
    p.add_argument("--train-envs", type=int, default=4)
    p.add_argument("--test-envs", type=int, default=2)
    p.add_argument("--test-episodes", type=int, default=10)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--n-step", type=int, default=3)
    p.add_argument("--target-update-freq", type=int, default=320)
    p.add_argument("--eps-train", type=float, default=0.1)
    p.add_argument("--eps-test", type=float, default=0.0)
    p.add_argument("--learners", type=int, nargs="+", default=[0, 2], help="seats played by the (one, shared) DQN")
    p.add_argument("--episode", choices=["round", "game"], default="round")
    p.add_argument("--reward", choices=["score_diff", "win"], default="win")
    p.add_argument("--rules", type=json.loads, default={}, help='rules fields as JSON, e.g. \'{"passing": false}\'')
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="directory for policy.pt and summary.json (default: none)")
    return p


def make_env(episode: str = "round", reward: str = "win", **rules: Any):
    """Tianshou's documented wrapping of a PettingZoo AEC env: nothing pcr-specific."""
    from tianshou.env.pettingzoo_env import PettingZooEnv

    from pcr_env import pass_cut_run_v0

    return PettingZooEnv(pass_cut_run_v0.env(episode=episode, reward=reward, **rules))


def build_algorithm(env, args: argparse.Namespace):
    """(multi-agent algorithm, the learners' DQN): one DQN for the ``--learners`` seats, masked random for the rest."""
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.utils.net.common import Net

    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=int(env.action_space.n), hidden_sizes=list(args.hidden))
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                     eps_training=args.eps_train, eps_inference=args.eps_test)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=args.lr), gamma=args.gamma,
                  n_step_return_horizon=args.n_step, target_update_freq=args.target_update_freq)
    random = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [int(a.rsplit("_", 1)[1]) for a in env.agents]
    algorithms = [learner if s in args.learners else random for s in seats]
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env), learner


def illegal_transitions(buffer) -> tuple[int, int]:
    """(illegal, stored) transitions of a replay buffer: the stored action against the stored mask."""
    data = buffer[buffer.sample_indices(0)]  # every stored transition, across the vector buffer's sub-buffers
    act = np.asarray(data.act, dtype=np.int64)
    legal = np.asarray(data.obs.mask, dtype=bool)[np.arange(len(act)), act]
    return int((~legal).sum()), len(act)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    import torch
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    args = build_parser().parse_args(argv)
    env_kwargs = {"episode": args.episode, "reward": args.reward, **args.rules}
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    train_envs = DummyVectorEnv([lambda: make_env(**env_kwargs) for _ in range(args.train_envs)])
    test_envs = DummyVectorEnv([lambda: make_env(**env_kwargs) for _ in range(args.test_envs)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 10_000)

    env = make_env(**env_kwargs)
    algorithm, learner = build_algorithm(env, args)
    learner_columns = [env.agent_idx[f"player_{s}"] for s in args.learners]
    before = torch.nn.utils.parameters_to_vector(learner.policy.parameters()).detach().clone()

    buffer = VectorReplayBuffer(args.buffer_size, len(train_envs))
    train_collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=args.batch_size * args.train_envs)  # warm-up, as in Tianshou's example

    def learners_return(rews: np.ndarray) -> np.ndarray:
        """The multi-agent episode returns [episodes, seats] reduced to the learning team's (seat) return."""
        return rews[:, learner_columns[0]]

    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=train_collector,
        test_collector=test_collector,
        max_epochs=args.epochs,
        epoch_num_steps=args.epoch_steps,
        collection_step_num_env_steps=args.collect_steps,
        test_step_num_episodes=args.test_episodes,
        batch_size=args.batch_size,
        update_step_num_gradient_steps_per_sample=args.updates_per_step,
        test_in_training=False,
        multi_agent_return_reduction=learners_return,
        show_progress=False,
        verbose=False,
    ))
    illegal, stored = illegal_transitions(buffer)
    after = torch.nn.utils.parameters_to_vector(learner.policy.parameters()).detach()
    summary = {
        "train_steps": int(result.train_step), "train_episodes": int(result.train_episode),
        "update_steps": int(result.update_step), "test_episodes": int(result.test_episode),
        "best_reward": float(result.best_reward), "stored_transitions": stored, "illegal_transitions": illegal,
        "buffer_has_null": bool(buffer.hasnull()),
        "param_change": float((after - before).norm()), "params_finite": bool(torch.isfinite(after).all()),
    }
    print(json.dumps(summary, indent=2))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        torch.save(learner.state_dict(), args.out / "policy.pt")
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    train_envs.close()
    test_envs.close()
    return summary


if __name__ == "__main__":
    main()
