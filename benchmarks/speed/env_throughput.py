"""AEC throughput of Pass Cut Run beside PettingZoo's connect_four_v3 and leduc_holdem_v4, in one process.

Every environment is driven by the same standard AEC loop: ``agent_iter()``,
``last()`` (which builds the observation and action mask), then ``step()`` with
a random legal action. The action choice is cheap and identical for all:
a pre-drawn uniform float indexes ``np.flatnonzero(mask)``. When an episode
ends the dead agents are stepped with ``None`` and the env is reset.

* steps/s counts live decisions only (steps of agents that were not done);
  the dead-agent ``step(None)`` calls are done but not counted.
* rounds/s counts scored rounds of Pass Cut Run (a game to 100 has several;
  a redeal is not a round) and episodes of the peers (a game of connect four,
  a hand of leduc hold'em).

Each measurement runs for ``--seconds``; ``--repeats`` rounds of measurements
interleave the environments (the order rotates every repeat, because the
machine is noisy), and the script prints medians, plus the median over repeats
of the ratio ours/peer measured side by side. Both ``raw_env`` against
``raw_env`` and ``env()`` (PettingZoo's standard wrappers) against ``env()``.

Target: our raw_env >= 4x the faster peer's raw_env, in steps/s (issue "One source of truth";
issue 2 asked for 3x). Our raw_env steps the engine's compiled rules on a one-game row.

    python benchmarks/speed/env_throughput.py                       # 2 s x 5 repeats per env
    python benchmarks/speed/env_throughput.py --seconds 0.5 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pcr_env import pass_cut_run_v0  # noqa: E402

with warnings.catch_warnings():
    # PettingZoo 1.27 deprecates importing envs by module in favour of its registry; the envs are unchanged.
    warnings.filterwarnings("ignore", message="The old environment creation API", category=DeprecationWarning)
    from pettingzoo.classic import connect_four_v3, leduc_holdem_v4  # noqa: E402

TARGET_RATIO = 4.0
NUM_UNIFORMS = 1 << 16


def _count_pcr(env, done: bool) -> int:
    """Scored rounds of the current Pass Cut Run game (read only at the end of a measurement or episode)."""
    game = env.unwrapped.game
    scored = game.round_number - 1  # the rounds before the current one were all scored
    if done and game.redeals <= game.config.max_redeals:
        scored += 1  # the game ended on a scored round, not on too many redeals (R4.4)
    return scored


def run_loop(env, seconds: float, uniforms: np.ndarray, seed: int, count_rounds) -> tuple[int, int, float]:
    """Drive ``env`` with the standard AEC loop for about ``seconds``: (decisions, rounds, elapsed)."""
    mask_bits = NUM_UNIFORMS - 1
    decisions = rounds = 0
    episode = 0
    env.reset(seed=seed)
    check_every = 256
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(legal[int(uniforms[decisions & mask_bits] * len(legal))])
            decisions += 1
            if decisions % check_every == 0 and time.perf_counter() >= deadline:
                rounds += count_rounds(env, done=False)
                return decisions, rounds, time.perf_counter() - start
        rounds += count_rounds(env, done=True)
        episode += 1
        env.reset(seed=seed + episode)


def _count_episodes(env, done: bool) -> int:
    return 1 if done else 0


ENVS = {
    "pass_cut_run raw_env": (pass_cut_run_v0.raw_env, _count_pcr),
    "pass_cut_run env()": (pass_cut_run_v0.env, _count_pcr),
    "connect_four raw_env": (connect_four_v3.raw_env, _count_episodes),
    "connect_four env()": (connect_four_v3.env, _count_episodes),
    "leduc_holdem raw_env": (leduc_holdem_v4.raw_env, _count_episodes),
    "leduc_holdem env()": (leduc_holdem_v4.env, _count_episodes),
}
PAIRS = [  # (ours, peer)
    ("pass_cut_run raw_env", "connect_four raw_env"),
    ("pass_cut_run raw_env", "leduc_holdem raw_env"),
    ("pass_cut_run env()", "connect_four env()"),
    ("pass_cut_run env()", "leduc_holdem env()"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="duration of one measurement (per env, per repeat)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved measurements per env (medians reported)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be > 0 and --repeats >= 1")

    uniforms = np.random.default_rng(args.seed).random(NUM_UNIFORMS)
    envs = {name: make() for name, (make, _) in ENVS.items()}
    for name, env in envs.items():  # warm-up: imports, caches, allocator
        run_loop(env, min(0.2, args.seconds), uniforms, args.seed, ENVS[name][1])

    names = list(envs)
    steps: dict[str, list[float]] = {n: [] for n in names}
    rounds: dict[str, list[float]] = {n: [] for n in names}
    for r in range(args.repeats):
        order = names[r % len(names):] + names[:r % len(names)]  # rotate: no env always runs first
        for name in order:
            d, k, elapsed = run_loop(envs[name], args.seconds, uniforms, args.seed + 1000 * r, ENVS[name][1])
            steps[name].append(d / elapsed)
            rounds[name].append(k / elapsed)

    print(f"AEC loop (agent_iter, last, mask, step), random legal actions; median of {args.repeats} "
          f"interleaved runs of {args.seconds:g} s each; numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{'env':<22} {'steps/s':>10} {'(min-max)':>19} {'rounds/s':>10}")
    for name in names:
        s = steps[name]
        print(f"{name:<22} {statistics.median(s):>10,.0f} {f'({min(s):,.0f}-{max(s):,.0f})':>19} "
              f"{statistics.median(rounds[name]):>10,.1f}")
    print("\nratios, ours / peer (median over repeats of side-by-side ratios)")
    print(f"{'pair':<46} {'steps/s':>8} {'rounds/s':>9}")
    for ours, peer in PAIRS:
        step_ratio = statistics.median(a / b for a, b in zip(steps[ours], steps[peer]))
        round_ratio = statistics.median(a / b for a, b in zip(rounds[ours], rounds[peer]))
        print(f"{ours + ' / ' + peer:<46} {step_ratio:>8.2f} {round_ratio:>9.3f}")
    faster = max(("connect_four raw_env", "leduc_holdem raw_env"), key=lambda n: statistics.median(steps[n]))
    ratio = statistics.median(a / b for a, b in zip(steps["pass_cut_run raw_env"], steps[faster]))
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    print(f"\nraw_env steps/s vs the faster peer ({faster}): {ratio:.2f}x, {verdict} the target of "
          f"{TARGET_RATIO:g}x")


if __name__ == "__main__":
    main()
