"""Train sb3-contrib's MaskablePPO on one seat of Pass Cut Run, then evaluate it with pcr's duplicate evaluation.

    pip install -e ".[sb3]"
    python examples/sb3_maskable_ppo.py --timesteps 300000 --others heuristic --out runs/sb3
    python examples/sb3_maskable_ppo.py --team --others random --episode game   # one learner plays both partners

The environment is the Gymnasium view ``PassCutRun-v0`` (:mod:`pcr_env.gym_env`):
the learner holds one seat (``--team``: both seats of its team) and the other
seats are played by agent specs. It exposes ``action_masks()``, which
MaskablePPO reads through the vector env; nothing else is needed to plug it in.
Rewards are the learner team's round score margins (R8), scaled by
``--reward-scale`` so the value targets are of order one.

After training, the saved model becomes the agent spec ``sb3:PATH`` (registered
with :func:`agents.register_agent`; it implements ``act``/``act_batch``/``reset``)
and is played in duplicate (:func:`agents.evaluation.evaluate`) against the
baselines, so its numbers are comparable with every other agent of the project.
From the command line, with no registration, the factory is the agent spec
``examples.sb3_maskable_ppo:load_sb3_agent:path=runs/sb3/model.zip`` of every tool
(``python evaluate.py --agents SPEC heuristic``; docs/agents.md, "Your own agent from the command line").
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Sequence

import gymnasium
import numpy as np
import torch

import pcr_env  # noqa: F401  (registers PassCutRun-v0)


class MaskablePPOAgent:
    """A trained MaskablePPO model behind pcr's agent interface, playing greedily (so nothing to seed)."""

    name = "sb3-maskable-ppo"

    def __init__(self, model: Any):
        self.model = model

    def reset(self, seed: int | None = None) -> None:
        """Greedy play has no randomness; sampling would draw from torch's global generator, which SB3 owns."""

    def get_state(self) -> dict[str, Any]:
        """No random streams to save (the agent protocol's resume hook)."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def act(self, obs: dict[str, np.ndarray]) -> int:
        action, _ = self.model.predict(obs["observation"], action_masks=obs["action_mask"], deterministic=True)
        return int(action)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = self.model.predict(np.asarray(obs), action_masks=np.asarray(masks), deterministic=True)
        return np.asarray(actions, np.int64)


def make_env_fn(args: argparse.Namespace, rank: int):
    """A thunk for SB3's vector envs: ``PassCutRun-v0`` with scaled rewards."""

    def thunk() -> gymnasium.Env:
        env = gymnasium.make(
            "PassCutRun-v0", seat=args.seat, team=args.team, others=list(args.others) if len(args.others) > 1 else args.others[0],
            episode=args.episode, reward=args.reward, rules=dict(args.rules),
        )
        if args.reward_scale != 1.0:
            env = gymnasium.wrappers.TransformReward(env, lambda r: r * args.reward_scale)
        return env

    return thunk


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timesteps", type=int, default=200_000, help="learner decisions to train for")
    p.add_argument("--seat", type=int, default=0)
    p.add_argument("--team", action="store_true", help="the learner plays every seat of its team")
    p.add_argument("--others", nargs="+", default=["heuristic"], metavar="SPEC",
                   help="agent specs of the other seats: one for all or one per seat ('random', 'heuristic', 'ppo:PATH')")
    p.add_argument("--episode", choices=["round", "game"], default="round")
    p.add_argument("--reward", choices=["score_diff", "win"], default="score_diff")
    p.add_argument("--reward-scale", type=float, default=0.05, help="multiplies rewards (score margins are tens of points)")
    p.add_argument("--rules", type=json.loads, default={}, help='rules fields as JSON, e.g. \'{"passing": false}\'')
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--n-steps", type=int, default=512, help="rollout length per env")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-deals", type=int, default=200, help="duplicate deals per opponent (0: skip the evaluation)")
    p.add_argument("--eval-opponents", nargs="+", default=["heuristic", "random"], metavar="SPEC")
    p.add_argument("--out", type=Path, default=Path("runs/sb3_maskable_ppo"))
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    args = build_parser().parse_args(argv)
    torch.set_num_threads(1)  # the project's rule: parallelism from processes, not threads
    args.out.mkdir(parents=True, exist_ok=True)
    venv = make_vec_env(lambda: make_env_fn(args, 0)(), n_envs=args.n_envs, seed=args.seed)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=args.n_steps, batch_size=args.batch_size, learning_rate=args.learning_rate,
        gamma=1.0, gae_lambda=0.95, ent_coef=0.01, seed=args.seed, verbose=0,
        tensorboard_log=str(args.out / "tb"), policy_kwargs={"net_arch": [256, 256]},
    )
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, progress_bar=False)
    seconds = time.perf_counter() - start
    model_path = args.out / "model.zip"
    model.save(model_path)
    episodes = [ep_info["r"] / args.reward_scale for ep_info in model.ep_info_buffer]
    summary: dict[str, Any] = {
        "model": str(model_path), "timesteps": int(model.num_timesteps), "train_seconds": round(seconds, 1),
        "mean_episode_score_diff": float(np.mean(episodes)) if episodes else None, "episodes_seen": len(episodes),
    }
    print(f"trained {model.num_timesteps} steps in {seconds:.0f}s; recent mean score margin {summary['mean_episode_score_diff']}")
    if args.eval_deals > 0:
        summary["evaluation"] = evaluate_model(model_path, args)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    venv.close()
    return summary


def load_sb3_agent(path: str, seed: int | None = None, **kwargs: Any) -> MaskablePPOAgent:
    """Factory of the ``sb3:PATH`` agent spec: a saved MaskablePPO model (``model.zip``)."""
    from sb3_contrib import MaskablePPO

    kwargs.pop("rules", None)  # the model's input size fixes the table size
    agent = MaskablePPOAgent(MaskablePPO.load(path, device="cpu"))
    agent.reset(seed)
    return agent


def register_sb3_agent() -> None:
    """Make ``sb3:PATH`` a valid agent spec for every pcr tool (evaluation, play, the Gymnasium view)."""
    from agents import register_agent

    register_agent("sb3", load_sb3_agent, takes_arg=True, arg_name="PATH",
                   description="a MaskablePPO model saved by examples/sb3_maskable_ppo.py")


def evaluate_model(model_path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Duplicate head-to-head of the trained policy against each baseline (:func:`agents.evaluation.evaluate`)."""
    from agents.evaluation import evaluate

    register_sb3_agent()
    spec = f"sb3:{model_path}"
    result = evaluate([spec, *args.eval_opponents], deals=args.eval_deals, seed=args.seed, episode="round",
                      rules=dict(args.rules), pairs=[(0, j) for j in range(1, len(args.eval_opponents) + 1)],
                      progress=False)
    print(result.table())
    return result.to_dict(with_diffs=False)


if __name__ == "__main__":
    main()
