"""How often a student agent chooses what a teacher would, per phase, on the teacher's own games.

The teacher plays every seat of ``--games`` side-by-side rounds; at every decision with more than one legal
action both are asked, and the agreement is counted by phase. This measures how well a network imitates its
warm-start teacher (docs/experiments/run7-card-net.md: the card-aware network against the plain one on the teacher
``mix:ppo:pretrained``) on positions the teacher reaches, not only on those of the network's own games.

    python benchmarks/studies/imitation.py --student ppo:runs/card_net2/checkpoints/latest.pt --teacher mix:ppo:pretrained
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents import make_agent  # noqa: E402
from pcr_env.engine import Phase  # noqa: E402
from pcr_env.vector import VectorEnv  # noqa: E402


def agreement(student: str, teacher: str, games: int, steps: int, seed: int) -> dict[str, tuple[int, float]]:
    """``{phase name: (decisions, share where the student chose the teacher's action)}`` and ``"all"``."""
    s_agent, t_agent = make_agent(student, seed=seed), make_agent(teacher, seed=seed)
    env = VectorEnv(games, seed=seed, episode="round")
    obs, masks, _ = env.reset()
    agree, count = np.zeros(len(Phase)), np.zeros(len(Phase))
    for _ in range(steps):
        chosen = t_agent.act_batch(obs, masks)
        mine = s_agent.act_batch(obs, masks)
        real = masks.sum(1) > 1
        phase = obs[:, :len(Phase)].argmax(1)  # the observation starts with the phase one-hot
        np.add.at(count, phase[real], 1)
        np.add.at(agree, phase[real], (chosen == mine)[real])
        obs, masks, *_ = env.step(chosen)
    out = {p.name.lower(): (int(count[p]), float(agree[p] / count[p])) for p in Phase if count[p]}
    out["all"] = (int(count.sum()), float(agree.sum() / count.sum()))
    return out


def main() -> None:
    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--student", required=True, help="agent spec of the imitator, e.g. ppo:PATH")
    parser.add_argument("--teacher", default="mix:ppo:pretrained", help="agent spec of the teacher (plays every seat)")
    parser.add_argument("--games", type=int, default=256, help="rounds played side by side")
    parser.add_argument("--steps", type=int, default=300, help="decisions per game slot (rounds restart as they end)")
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args()
    print(f"student {args.student} against teacher {args.teacher}: {args.games} games x {args.steps} steps, seed {args.seed}")
    print("| phase | decisions | agreement |\n|---|---|---|")
    for name, (n, share) in agreement(args.student, args.teacher, args.games, args.steps, args.seed).items():
        print(f"| {name} | {n} | {100 * share:.1f}% |")


if __name__ == "__main__":
    main()
