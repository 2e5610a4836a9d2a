"""How often the search's card-play choice differs from its base policy's, by deviation threshold.

The search agent keeps its base's card unless another beats it by more than ``threshold`` standard
errors of the paired difference over the same sampled worlds (``agents.search.SearchAgent.choose``).
As distillation labels, every deviation is a lesson for the network; one decided by noise teaches it to
spread its probability instead. This script plays the base policy in self-play on a batched engine and,
at each unforced card-play decision, computes the search's rollout values once and applies each
threshold to them: the share of labels that differ from the base's card, per threshold.
With ``--temperatures`` it also forms, from the same values, the soft targets of
``train.py``'s ``warmstart.targets: values`` (``SearchAgent.action_targets``: the base's probabilities
re-weighted by ``exp(advantage / temperature)``) and prints, per temperature, how often their mode
differs from the base's card, the probability they leave on that card and their entropy.

    python benchmarks/studies/label_noise.py --base ppo:pretrained --worlds 16 --thresholds 1 1.5 2 3 --temperatures 1 2 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents import make_agent
from agents.base import legal_actions
from pcr_env.engine import Phase
from pcr_env.observation import decode_observation
from pcr_env.vector import VectorEnv


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="ppo:pretrained", help="base policy spec (it plays every seat)")
    p.add_argument("--worlds", type=int, default=16, help="sampled worlds per decision")
    p.add_argument("--thresholds", type=float, nargs="+", default=[1.0, 1.5, 2.0, 3.0])
    p.add_argument("--temperatures", type=float, nargs="*", default=[], help="soft-target temperatures (points)")
    p.add_argument("--games", type=int, default=16, help="games played side by side")
    p.add_argument("--steps", type=int, default=120, help="batched steps (about two rounds per game)")
    p.add_argument("--seed", type=int, default=5)
    args = p.parse_args(argv)
    torch.set_num_threads(1)

    base = make_agent(args.base, seed=args.seed)
    search = make_agent(f"search:{args.base}", seed=args.seed, worlds=args.worlds, phases=["play"])
    envs = VectorEnv(args.games, seed=args.seed, episode="round")
    obs, masks, _ = envs.reset()
    deviations = np.zeros(len(args.thresholds))
    soft = np.zeros((len(args.temperatures), 3))  # mode differs, probability on the base's card, entropy
    decisions, candidates, start = 0, 0, time.perf_counter()
    for _ in range(args.steps):
        actions = base.act_batch(obs, masks)
        for i in range(len(obs)):
            if masks[i].sum() < 2:
                continue
            o = {"observation": obs[i], "action_mask": masks[i]}
            if decode_observation(o).phase != Phase.PLAY:
                continue
            legal = legal_actions(masks[i])
            values = search.rollout_values(o, legal)
            decisions, candidates = decisions + 1, candidates + len(legal)
            for j, threshold in enumerate(args.thresholds):
                search.threshold = threshold
                deviations[j] += search.choose(legal, values, int(actions[i])) != actions[i]
            if args.temperatures:
                prior = search.prior(obs[i][None], masks[i][None])[0][legal]
                own = int(np.flatnonzero(legal == actions[i])[0])
                for j, temperature in enumerate(args.temperatures):
                    t = search.target(legal, prior, legal, values, int(actions[i]), temperature)
                    soft[j] += [int(t.argmax()) != own, t[own], -(t * np.log(np.maximum(t, 1e-12))).sum()]
        obs, masks, *_ = envs.step(actions)
    print(f"{decisions} unforced card-play decisions of {args.base} self-play (seed {args.seed}), "
          f"{candidates / max(decisions, 1):.1f} legal cards on average, {args.worlds} worlds; "
          f"{time.perf_counter() - start:.0f} s")
    print("| threshold (standard errors) | labels that differ from the base's card |")
    print("|---|---|")
    for threshold, d in zip(args.thresholds, deviations):
        print(f"| {threshold:g} | {d / max(decisions, 1):.1%} |")
    if args.temperatures:
        print("\n| soft-target temperature (points) | mode differs from the base's card | mean probability on it "
              "| mean entropy (nats) |")
        print("|---|---|---|---|")
        for temperature, (differs, kept, entropy) in zip(args.temperatures, soft / max(decisions, 1)):
            print(f"| {temperature:g} | {differs:.1%} | {kept:.2f} | {entropy:.2f} |")


if __name__ == "__main__":
    main()
