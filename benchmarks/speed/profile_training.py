"""Where the time of one training iteration, one ``act`` and one search decision goes (measured, not guessed).

* **Training**: ``train.py`` in this process with one worker (the config's network and opponent mix, PPO only, no
  evaluation), first a warm-up run (numba compiled, torch warmed up), then ``--iterations`` iterations under
  ``cProfile``. The iteration's time is split by the functions it spends it in: the engine's step (the batched
  engine's numba ``step_all``, which also encodes the next observations), the full state for the central critic,
  the card actor's per-card features (``card_inputs``), the learner's forward passes in the rollout, the opponents'
  moves, the rollout storage, and the update's forward pass, backward pass and optimizer step. Module hooks time
  the forward passes of the network's parts (trunk, card scorer, output head, critic), rollout and update
  together; the backward pass is one figure (hooks cannot split it by module). With ``--wall`` the same iterations
  are split by wall-clock timers around the main functions instead, without cProfile (which charges every Python
  call and so inflates a path of many small torch calls against one of a few large ones).
* **act**: ``PPOAgent.act`` at batch 1 on positions of real games, under ``cProfile``.
* **search**: ``search:SPEC`` decisions on positions of real games, under ``cProfile``, grouped the same way.

    python benchmarks/speed/profile_training.py                                   # the main job's network
    python benchmarks/speed/profile_training.py --set network.card_head=false     # the plain network
    python benchmarks/speed/profile_training.py --iterations 3 --acts 300 --searches 10
    python benchmarks/speed/profile_training.py --wall --acts 0 --searches 0           # wall-clock timers, no cProfile

Run it on an idle machine; the shares are what matters (a busy machine slows every part).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_cost import positions  # noqa: E402  (real decisions of seeded heuristic rounds)

import train  # noqa: E402
from agents import make_agent  # noqa: E402

TRAINING_PARTS = (
    # (label, the functions whose cumulative time inside the profiled run it is: (file suffix, function name))
    ("engine step + next observations (numba step_all)", [("run_state.py", "step")]),
    ("full state for the central critic", [("vector.py", "state")]),
    ("card features (card_inputs)", [("card_features.py", "card_inputs")]),
    ("learner forward + sampling (rollout)", [("compute.py", "network_actions")]),
    ("opponents' moves (heuristic, snapshots)", [("opponents.py", "act")]),
    ("rollout storage (add, credit, end)", [("rollout.py", "add"), ("rollout.py", "credit"), ("rollout.py", "end")]),
    ("collect (the whole rollout)", [("train.py", "collect")]),
    ("update forward (ppo_loss)", [("train.py", "ppo_loss")]),
    ("update backward", [("_tensor.py", "backward")]),
    ("update optimizer step", [("compute.py", "optimizer_step")]),
    ("ppo_update (the whole update)", [("train.py", "ppo_update")]),
    ("the iteration (Trainer.ppo_iteration)", [("train.py", "ppo_iteration")]),
)


def cumulative(stats: pstats.Stats, suffix: str, name: str) -> float:
    """Cumulative seconds of the functions called ``name`` in files ending with ``suffix``."""
    return sum(row[3] for (path, _, func), row in stats.stats.items() if func == name and path.endswith(suffix))


class ModuleTimer:
    """Wall time of named modules' forward passes (forward pre- and post-hooks). Backward passes are not split
    by module: full backward hooks do not fire for a first layer, whose input needs no gradient."""

    def __init__(self, modules: dict[str, torch.nn.Module]):
        self.seconds: dict[str, float] = defaultdict(float)
        self.started: dict[str, float] = {}
        self.handles = []
        for name, module in modules.items():
            self.handles += [module.register_forward_pre_hook(lambda m, a, n=name: self._start(n)),
                             module.register_forward_hook(lambda m, a, o, n=name: self._stop(n))]

    def _start(self, name: str) -> None:
        self.started[name] = time.perf_counter()

    def _stop(self, name: str) -> None:
        self.seconds[name] += time.perf_counter() - self.started.pop(name, time.perf_counter())

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def network_parts(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    """The parts of an ActorCritic worth timing: a card actor's trunk, card scorer layers and head, or a plain
    actor whole; the critic."""
    actor = model.actor
    if hasattr(actor, "card_out"):
        parts = {"actor trunk": actor.trunk, "actor head (non-card actions)": actor.head,
                 "card scorer: context": actor.context, "card scorer: card_in": actor.card_in,
                 "card scorer: card_hidden": actor.card_hidden, "card scorer: card_out": actor.card_out}
    else:
        parts = {"actor (plain MLP)": actor}
    return {**parts, "critic": model.critic}


def training_args(config: str, sets: list[str], run_dir: Path, iterations: int) -> list[str]:
    one_worker = ["num_workers=1", "eval.every=0", "eval.deals=0", "eval.final_deals=0", "checkpoint_every=1000",
                  "stages=[{kind: ppo, decisions: 100000000}]"]
    return ["--config", config, "--run-dir", str(run_dir), "--quiet", "--max-iterations", str(iterations),
            *[x for s in [*one_worker, *sets] for x in ("--set", s)]]


def profile_training(config: str, sets: list[str], iterations: int) -> None:
    captured: dict[str, Any] = {}
    original = train.Trainer.__init__

    def keep(self: Any, *a: Any, **k: Any) -> None:  # the trainer's model, to hook its parts
        original(self, *a, **k)
        captured["trainer"] = self

    train.Trainer.__init__ = keep
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        train.main(training_args(config, sets, Path(tmp) / "warmup", 2))
        print(f"warm-up (compilation, 2 iterations): {time.perf_counter() - t0:.1f} s")
        timer: list[ModuleTimer] = []
        original_iteration = train.Trainer.ppo_iteration

        def hooked(self: Any) -> None:
            if not timer:
                timer.append(ModuleTimer(network_parts(self.model)))
            original_iteration(self)

        train.Trainer.ppo_iteration = hooked
        profiler = cProfile.Profile()
        profiler.enable()
        train.main(training_args(config, sets, Path(tmp) / "profiled", iterations))
        profiler.disable()
        train.Trainer.ppo_iteration = original_iteration
    train.Trainer.__init__ = original
    stats = pstats.Stats(profiler)
    total = cumulative(stats, "train.py", "ppo_iteration")
    trainer = captured["trainer"]
    decisions = trainer.decisions / max(trainer.iteration, 1)
    print(f"\nTraining: {iterations} PPO iterations profiled, {total / iterations:.2f} s per iteration "
          f"(about {decisions:,.0f} decisions each, one worker)")
    print(f"{'part':52s} {'s/iteration':>11s} {'share':>6s}")
    for label, functions in TRAINING_PARTS:
        seconds = sum(cumulative(stats, suffix, name) for suffix, name in functions) / iterations
        print(f"{label:52s} {seconds:11.3f} {seconds / (total / iterations):6.1%}")
    if timer:
        timer[0].remove()
        print("\nThe network's parts, forward passes of the rollout and the update together (module hooks):")
        print(f"{'module':34s} {'forward s/it':>12s} {'share':>6s}")
        hooked_total = sum(timer[0].seconds.values())
        for name in network_parts(trainer.model):
            seconds = timer[0].seconds[name] / iterations
            print(f"{name:34s} {seconds:12.3f} {seconds * iterations / hooked_total:6.1%}")


def wall_parts() -> list[tuple[str, Any, str]]:
    """(label, owner, attribute) of the functions :func:`time_training` times: each looked up where its caller
    finds it (``train.network_actions``, not the module it comes from)."""
    from agents.ppo.network import ActorCritic
    from agents.training.opponents import Opponents

    return [("card features (rollout_inputs)", ActorCritic, "rollout_inputs"),
            ("learner forward + sampling (rollout)", train, "network_actions"),
            ("opponents' moves (heuristic, snapshots)", Opponents, "act"),
            ("collect (the whole rollout)", train, "collect"),
            ("update forward (ppo_loss)", train, "ppo_loss"),
            ("update backward", torch.Tensor, "backward"),
            ("update optimizer step", train, "optimizer_step"),
            ("ppo_update (the whole update)", train, "ppo_update"),
            ("the iteration (Trainer.ppo_iteration)", train.Trainer, "ppo_iteration")]


def time_training(config: str, sets: list[str], iterations: int) -> None:
    """The iteration split by wall-clock timers around a few functions, no profiler: cProfile charges every Python
    call, which inflates a path of many small torch calls (the card actor's) against one of a few large ones."""
    seconds: dict[str, float] = defaultdict(float)
    originals = []
    for label, owner, name in wall_parts():
        function = getattr(owner, name)
        originals.append((owner, name, function))

        def timed(*a: Any, _f: Any = function, _label: str = label, **k: Any) -> Any:
            start = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                seconds[_label] += time.perf_counter() - start

        setattr(owner, name, timed)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            train.main(training_args(config, sets, Path(tmp) / "warmup", 2))
            seconds.clear()
            train.main(training_args(config, sets, Path(tmp) / "timed", iterations))
    finally:
        for owner, name, function in originals:
            setattr(owner, name, function)
    total = seconds["the iteration (Trainer.ppo_iteration)"] / iterations
    print(f"\nTraining: {iterations} PPO iterations timed (wall clock, no profiler), {total:.3f} s per iteration")
    print(f"{'part':52s} {'s/iteration':>11s} {'share':>6s}")
    for label, _, _ in wall_parts():
        print(f"{label:52s} {seconds[label] / iterations:11.3f} {seconds[label] / iterations / total:6.1%}")


def top_functions(profiler: cProfile.Profile, calls: int, limit: int = 12) -> None:
    stats = pstats.Stats(profiler)
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:limit]  # by own (total) time
    print(f"{'function (own time)':60s} {'ms/call':>8s}")
    for (path, line, func), row in rows:
        print(f"{Path(path).name + ':' + func:60s} {1000 * row[2] / calls:8.3f}")


def profile_agent(spec: str, count: int, label: str) -> None:
    agent = make_agent(spec, seed=0)
    obs = positions(count // 40 + 1, 0)[:count]  # a round holds about 50 real decisions
    for o in obs[:10]:  # warm-up
        agent.act(o)
    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    for o in obs:
        agent.act(o)
    profiler.disable()
    seconds = time.perf_counter() - t0
    print(f"\n{label} ({spec}): {count} decisions, {1000 * seconds / count:.3f} ms per decision under the profiler")
    top_functions(profiler, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "card_hour.yaml"), help="the training config")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="train.py overrides")
    parser.add_argument("--iterations", type=int, default=5, help="PPO iterations profiled (after 2 of warm-up)")
    parser.add_argument("--agent", default="ppo:pretrained", help="agent whose act is profiled")
    parser.add_argument("--acts", type=int, default=1000, help="act calls profiled (0: skip)")
    parser.add_argument("--search", default="search:ppo:pretrained", help="search agent profiled")
    parser.add_argument("--searches", type=int, default=20, help="search decisions profiled (0: skip)")
    parser.add_argument("--wall", action="store_true",
                        help="time the training iterations' parts with wall-clock timers instead of cProfile")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    if args.iterations:
        (time_training if args.wall else profile_training)(args.config, args.set, args.iterations)
    if args.acts:
        profile_agent(args.agent, args.acts, "act at batch 1")
    if args.searches:
        profile_agent(args.search, args.searches, "search decision")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
