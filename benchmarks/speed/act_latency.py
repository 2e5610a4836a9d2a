"""Milliseconds per decision of an agent's ``act`` at batch 1, and per row of ``act_batch``, on one core.

Times ``ppo:pretrained`` through the compiled actor (:mod:`agents.ppo.compiled_actor`, the default on the CPU)
and through torch (``compiled=False``), beside the heuristic, on the same positions (every decision of seeded
self-play rounds of the shipped file), in alternating repeats; prints medians and the ratio. With
``--check-deals N`` it then plays N seeded deals of the shipped file against itself and checks that both paths
choose the same action at every decision.

    python benchmarks/speed/act_latency.py                       # batch 1 and batches of 16 and 64
    python benchmarks/speed/act_latency.py --check-deals 2000    # and the same actions over 2,000 deals
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents.ppo import PPOAgent, read_checkpoint  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from pcr_env import pass_cut_run_v0  # noqa: E402


def self_play(agent, deals: range, other=None) -> tuple[list[dict[str, np.ndarray]], int]:
    """Every decision's observation of ``agent`` playing all seats of seeded rounds, and (when ``other`` is given)
    the number of decisions where ``other`` would choose another action."""
    env = pass_cut_run_v0.raw_env(episode="round")
    seen, differ = [], 0
    for deal in deals:
        env.reset(seed=deal)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = agent.act(obs)
            if other is not None and other.act(obs) != action:
                differ += 1
                print(f"deal {deal}: the paths differ at decision {len(seen)}", flush=True)
            seen.append(obs)
            env.step(action)
    return seen, differ


def per_decision_ms(agent, positions: list[dict[str, np.ndarray]]) -> float:
    start = time.perf_counter()
    for obs in positions:
        agent.act(obs)
    return 1000 * (time.perf_counter() - start) / len(positions)


def per_row_ms(agent, obs: np.ndarray, masks: np.ndarray, batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(obs) - batch + 1, batch):
        agent.act_batch(obs[i:i + batch], masks[i:i + batch])
    return 1000 * (time.perf_counter() - start) / (len(obs) // batch * batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4, help="self-play rounds whose decisions are timed")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batches", type=int, nargs="*", default=[16, 64])
    parser.add_argument("--check-deals", type=int, default=0, help="deals over which both paths must agree")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ckpt = read_checkpoint("pretrained")
    agents = {"ppo:pretrained (compiled)": PPOAgent.from_checkpoint(ckpt, seed=0),
              "ppo:pretrained (torch)": PPOAgent.from_checkpoint(ckpt, seed=0, compiled=False),
              "heuristic": make_agent("heuristic", seed=0)}
    positions, _ = self_play(agents["ppo:pretrained (compiled)"], range(args.rounds))
    obs = np.stack([p["observation"] for p in positions])
    masks = np.stack([p["action_mask"] for p in positions])
    print(f"{len(positions)} decisions of {args.rounds} self-play rounds of ppo:pretrained, one core, "
          f"medians of {args.repeats} alternating repeats")
    times: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for name, agent in agents.items():
            times.setdefault(f"{name} act", []).append(per_decision_ms(agent, positions))
            for batch in args.batches:
                times.setdefault(f"{name} act_batch {batch}", []).append(per_row_ms(agent, obs, masks, batch))
    for label, values in times.items():
        print(f"  {label:48s} {np.median(values):8.4f} ms per decision   (repeats {min(values):.4f}..{max(values):.4f})")
    for suffix in ["act", *(f"act_batch {b}" for b in args.batches)]:
        compiled, plain = times[f"ppo:pretrained (compiled) {suffix}"], times[f"ppo:pretrained (torch) {suffix}"]
        print(f"  {suffix}: torch / compiled = {np.median(plain) / np.median(compiled):.2f} "
              f"(per repeat {min(p / c for p, c in zip(plain, compiled)):.2f}..{max(p / c for p, c in zip(plain, compiled)):.2f})")
    if args.check_deals:
        seen, differ = self_play(agents["ppo:pretrained (compiled)"], range(10_000, 10_000 + args.check_deals),
                                 agents["ppo:pretrained (torch)"])
        print(f"same actions: {len(seen) - differ} of {len(seen)} decisions over {args.check_deals} deals "
              f"(seeds 10000..{10_000 + args.check_deals - 1}); {differ} differ")


if __name__ == "__main__":
    main()
