"""Decisions per second of the batched VectorEnv beside the AEC env, in one process.

A decision is one action applied plus the next observation and action mask
produced for the seat to act (every game, every step). For each batch size N
the script runs ``--repeats`` timed blocks of random legal play and prints the
median rate twice: "env only" counts the time inside ``VectorEnv.step``; "with
actions" adds the vectorised action choice (an exponential race / Gumbel-max
over the masks with numpy), as a trainer's random policy would. The AEC row is
``pass_cut_run_v0.raw_env`` played decision by decision (``last()`` then
``step()``) in the same run, with the same two timings. It also measures the
first use of the numba kernels in a fresh process, with an empty cache
(compilation; in a subprocess with its own cache directory, so the project's
cache is left alone) and with that cache filled (loading). CPU seconds are
printed beside wall seconds because a shared machine stretches the latter.

Target of issue 4: >= 250,000 decisions/s at N = 1024 on one core.

``--against DIR`` also loads another checkout's ``pcr_env`` (e.g. a git worktree
of the previous commit) into the same process, under another package name, and
measures both side by side: blocks alternate between the two (the order flips
every repeat) and the script prints each side's median and the median of the
per-repeat ratios, ours / theirs (the project rule: ratios measured in the same
run).

    python benchmarks/speed/vector_throughput.py                 # N = 1, 64, 256, 1024
    python benchmarks/speed/vector_throughput.py --quick         # a smoke run (seconds)
    python benchmarks/speed/vector_throughput.py --against /tmp/prev --sizes 1024 --no-compile
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# One core: no BLAS/OpenMP threads behind numpy (numba's kernels are single-threaded).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pcr_env import pass_cut_run_v0  # noqa: E402
from pcr_env.vector import VectorEnv  # noqa: E402

TARGET = 250_000

_COMPILE_SNIPPET = """
import time
from pcr_env.vector import VectorEnv
wall, cpu = time.perf_counter(), time.process_time()
venv = VectorEnv(4, seed=0)
obs, masks, seats = venv.reset()
for _ in range(3):
    obs, masks, seats, *_ = venv.step(masks.argmax(axis=1))
venv.state(); venv.observe(0, 1)
print(f"{time.perf_counter() - wall:.3f} {time.process_time() - cpu:.3f}")
"""


def compile_times() -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) seconds of the first use with an empty numba cache, then with that cache filled."""
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env, cwd=ROOT, check=True,
                                 capture_output=True, text=True)
            wall, cpu = map(float, res.stdout.split())
            out.append((wall, cpu))
    return out[0], out[1]


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row (Gumbel-max over the mask)."""
    keys = rng.random(masks.shape)
    keys[masks == 0] = -1.0
    return keys.argmax(axis=1)


def bench_vector(n: int, decisions: int, repeats: int, seed: int, vector_env=VectorEnv) -> tuple[float, float]:
    """Median decisions/s over ``repeats`` blocks: (env only, with action selection)."""
    venv = vector_env(n, seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks, seats = venv.reset()
    for _ in range(20):  # warm-up (caches, allocator)
        obs, masks, seats, *_ = venv.step(random_legal(masks, rng))
    steps = max(50, decisions // n)
    env_rates, all_rates = [], []
    for _ in range(repeats):
        env_time = 0.0
        start = time.perf_counter()
        for _ in range(steps):
            actions = random_legal(masks, rng)
            t = time.perf_counter()
            obs, masks, seats, rewards, dones, infos = venv.step(actions)
            env_time += time.perf_counter() - t
        total = time.perf_counter() - start
        env_rates.append(steps * n / env_time)
        all_rates.append(steps * n / total)
    return statistics.median(env_rates), statistics.median(all_rates)


def bench_aec(decisions: int, repeats: int, seed: int, raw_env=pass_cut_run_v0.raw_env) -> tuple[float, float]:
    """Median decisions/s of the AEC raw_env: (env only, with action selection)."""
    env = raw_env()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    env_rates, all_rates = [], []
    for r in range(repeats + 1):  # the first block is a warm-up
        env_time = 0.0
        start = time.perf_counter()
        for _ in range(decisions):
            t = time.perf_counter()
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.reset(seed=seed + r)
                obs, reward, terminated, truncated, info = env.last()
            env_time += time.perf_counter() - t
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(len(legal))])
            t = time.perf_counter()
            env.step(action)
            env_time += time.perf_counter() - t
        total = time.perf_counter() - start
        if r:
            env_rates.append(decisions / env_time)
            all_rates.append(decisions / total)
    return statistics.median(env_rates), statistics.median(all_rates)


def load_checkout(path: str):
    """``path``/pcr_env imported as the package ``pcr_env_against`` (its own modules, its own numba cache entries)."""
    root = Path(path).resolve() / "pcr_env"
    spec = importlib.util.spec_from_file_location("pcr_env_against", root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["pcr_env_against"] = module
    spec.loader.exec_module(module)
    vector = importlib.import_module("pcr_env_against.vector")
    aec = importlib.import_module("pcr_env_against.pass_cut_run_v0")
    return vector.VectorEnv, aec.raw_env


def compare(args) -> None:
    """Ours and the ``--against`` checkout, block by block in one process: medians and the median ratio."""
    theirs_vec, theirs_aec = load_checkout(args.against)
    sides = {"ours": (VectorEnv, pass_cut_run_v0.raw_env), "theirs": (theirs_vec, theirs_aec)}
    cases = [("AEC raw_env", None)] + [(f"VectorEnv N={n}", n) for n in args.sizes]
    print(f"ours = {ROOT}, theirs = {Path(args.against).resolve()}; env-only decisions/s, "
          f"{args.repeats} alternating blocks each")
    print(f"{'env':>16} {'ours':>12} {'theirs':>12} {'ours/theirs':>12}")
    for label, n in cases:
        rates: dict[str, list[float]] = {"ours": [], "theirs": []}
        for r in range(args.repeats):
            for side in (("ours", "theirs") if r % 2 == 0 else ("theirs", "ours")):
                vec, aec = sides[side]
                if n is None:
                    rate = bench_aec(args.aec_decisions, 1, args.seed + r, raw_env=aec)[0]
                else:
                    rate = bench_vector(n, args.decisions, 1, args.seed + r, vector_env=vec)[0]
                rates[side].append(rate)
        ratio = statistics.median(a / b for a, b in zip(rates["ours"], rates["theirs"]))
        print(f"{label:>16} {statistics.median(rates['ours']):>12,.0f} {statistics.median(rates['theirs']):>12,.0f} "
              f"{ratio:>12.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 256, 1024], help="batch sizes N")
    parser.add_argument("--decisions", type=int, default=300_000, help="decisions per timed block (per N)")
    parser.add_argument("--aec-decisions", type=int, default=20_000, help="decisions per timed AEC block")
    parser.add_argument("--repeats", type=int, default=5, help="timed blocks per measurement (median reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-compile", action="store_true", help="skip the cold/warm compile measurement")
    parser.add_argument("--quick", action="store_true", help="small blocks, 3 repeats: a smoke run")
    parser.add_argument("--against", metavar="DIR", help="also measure DIR/pcr_env (another checkout), side by side")
    args = parser.parse_args()
    if args.quick:
        args.decisions, args.aec_decisions, args.repeats = 20_000, 2_000, 3
    if args.against:
        compare(args)
        return

    if not args.no_compile:
        (cold_wall, cold_cpu), (warm_wall, warm_cpu) = compile_times()
        print(f"numba kernels, first use in a fresh process: empty cache (compile) {cold_wall:.2f} s wall, "
              f"{cold_cpu:.2f} s CPU; filled cache (load) {warm_wall:.2f} s wall, {warm_cpu:.2f} s CPU")

    aec_env, aec_all = bench_aec(args.aec_decisions, args.repeats, args.seed)
    rows = [(n, *bench_vector(n, args.decisions, args.repeats, args.seed)) for n in args.sizes]

    print(f"\nmedian of {args.repeats} blocks, one process, decisions/s "
          f"(each: one action + next observation and mask)")
    print(f"{'env':>16} {'env only':>12} {'x AEC':>7} {'with actions':>13} {'x AEC':>7}")
    print(f"{'AEC raw_env':>16} {aec_env:>12,.0f} {1:>7.1f} {aec_all:>13,.0f} {1:>7.1f}")
    for n, env_rate, all_rate in rows:
        print(f"{f'VectorEnv N={n}':>16} {env_rate:>12,.0f} {env_rate / aec_env:>7.1f} "
              f"{all_rate:>13,.0f} {all_rate / aec_all:>7.1f}")
    if 1024 in args.sizes:
        rate = dict((n, e) for n, e, _ in rows)[1024]
        verdict = "meets" if rate >= TARGET else "MISSES"
        print(f"\nN=1024 env only: {rate:,.0f} decisions/s {verdict} the target of {TARGET:,} (issue 4)")


if __name__ == "__main__":
    main()
