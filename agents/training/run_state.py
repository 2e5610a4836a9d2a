"""A training run's state across interruptions: worker snapshots (what ``--resume`` may change is marked
on the config's fields, :mod:`agents.training.config`), damaged-file advice, leftovers of a killed run, and the Ctrl-C handler.

A worker's snapshot (:func:`worker_snapshot`) holds its games, its open decisions and every
random stream it draws from, as tensors and plain data only, so ``latest.pt`` loads with
``torch.load(weights_only=True)`` and nothing inside it is unpickled; :func:`restore_worker`
puts it back so the resumed run continues bit for bit.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.ppo import files
from agents.ppo.checkpoint import validate_checkpoint
from agents.ppo.files import to_arrays, to_tensors
from agents.run_dir import RunDir
from agents.training.opponents import Opponents
from agents.training.rollout import SeatRollout
from pcr_env.vector import VectorEnv


class TrainingError(RuntimeError):
    """Training cannot go on (for example a non-finite loss); nothing good on disk was overwritten."""


class GracefulInterrupt:
    """First Ctrl-C (SIGINT/SIGTERM) sets a flag checked between iterations; a second one aborts.

    Only the worker that ``announce``-s prints, once, on a line of its own (every worker of a
    multi-worker run receives the signal). The write is a single ``os.write``: a signal handler
    must not take the progress bar's lock.
    """

    def __init__(self, announce: bool = True) -> None:
        self.requested = False
        self.announce = announce

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        if self.announce:
            os.write(2, b"\r\x1b[K\ninterrupt: finishing this iteration, then saving checkpoints/latest.pt "
                        b"(press Ctrl-C again to abort without saving)\n")


@dataclass
class WorkerState:
    """A worker's games and the random streams it draws from (saved in latest.pt)."""

    envs: VectorEnv
    obs: np.ndarray
    masks: np.ndarray
    seats: np.ndarray
    rng: np.random.Generator          # opponent draws, minibatch order
    action_gen: torch.Generator       # action sampling of the learner

    @classmethod
    def start(cls, envs: VectorEnv, rng: np.random.Generator, action_gen: torch.Generator) -> WorkerState:
        return cls(envs, *envs.reset(), rng, action_gen)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Play one action in every game; returns rewards ``[games, seats]``, game ends and infos."""
        self.obs, self.masks, self.seats, rewards, dones, infos = self.envs.step(actions)
        return rewards, dones, infos

    def state_dict(self) -> dict[str, Any]:
        return {"envs": self.envs.get_state(), "obs": self.obs, "masks": self.masks, "seats": self.seats,
                "rng": self.rng.bit_generator.state, "action_gen": self.action_gen.get_state(),
                "torch_rng": torch.get_rng_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        s = to_arrays({k: v for k, v in state.items() if k not in ("action_gen", "torch_rng")})
        self.envs.set_state(s["envs"])
        self.obs, self.masks, self.seats = s["obs"], s["masks"], s["seats"]
        self.rng.bit_generator.state = s["rng"]
        self.action_gen.set_state(state["action_gen"])
        torch.set_rng_state(state["torch_rng"])


def worker_snapshot(ws: WorkerState, storage: SeatRollout, opp: Opponents, teacher: Any) -> dict[str, Any]:
    """A worker's own collection state, each part saved by its owner: games and streams, open
    decisions, opponents, and the random streams of its copies of the pools' networks and of the
    teacher (each worker's copies played other games). Tensors and plain data only (no pickle)."""
    others = {name: pool.stream_states() for name, pool in opp.pools.items() if name != "snapshot"}
    return to_tensors({"games": ws.state_dict(), "storage": storage.open_state(), "opponents": opp.state_dict(),
                       "pool_rng": opp.pools["snapshot"].stream_states(), **({"league_rng": others} if others else {}),
                       "teacher_rng": teacher.get_state() if teacher is not None else None})


def restore_worker(saved: dict[str, Any], ws: WorkerState, storage: SeatRollout, opp: Opponents, teacher: Any) -> None:
    """Put back what :func:`worker_snapshot` saved (the pools' networks must be loaded first)."""
    ws.load_state_dict(saved["games"])
    storage.load_open_state(to_arrays(saved["storage"]))
    opp.load_state_dict(saved["opponents"])
    opp.pools["snapshot"].set_stream_states(saved["pool_rng"])
    for name, streams in saved.get("league_rng", {}).items():
        opp.pools[name].set_stream_states(streams)
    if teacher is not None and saved["teacher_rng"] is not None:
        teacher.set_state(saved["teacher_rng"])


def with_stages(training: dict[str, Any], warm_iterations: int, decisions_per_iteration: int) -> dict[str, Any]:
    """The training state of a latest.pt written before runs had stages (a warm start, then PPO; one
    optimiser each) in today's terms: the stage, its iterations done, all decisions, its optimiser."""
    if "stage" in training:
        return training
    in_ppo = training["iteration"] > 0 or training["bc_iterations"] >= warm_iterations
    stage = int(warm_iterations > 0) if in_ppo else 0
    return {**training, "stage": stage, "stage_iterations": training["iteration"] if in_ppo else training["bc_iterations"],
            "decisions": training["decisions"] + training["bc_iterations"] * decisions_per_iteration,
            "optimizer": training["optimizer"] if in_ppo else training["bc_optimizer"]}


def resume_advice(latest: Path) -> str:
    """What to do when ``latest`` cannot be used."""
    prev = files.previous_path(latest)
    best = RunDir(latest.parent.parent).best
    if prev.is_file():
        return (f"the previous checkpoint {str(prev)!r} is kept: move the bad file away "
                f"(mv {latest} {latest}.bad), rename the previous one (mv {prev} {latest}) and --resume again")
    if best.is_file():
        return (f"start a new run from the best weights of this one: "
                f"python train.py --config ... --set warmstart.init_from={best}")
    return "start a new run"


def validate_resume_checkpoint(ckpt: dict[str, Any]) -> None:
    validate_checkpoint(ckpt)
    training = ckpt.get("training")
    if not isinstance(training, dict) or not isinstance(training.get("workers"), list):
        raise ValueError("it holds no training state (it is an agent checkpoint such as best.pt, not a latest.pt)")


def read_resume(run_dir: Path) -> dict[str, Any]:
    """The ``checkpoints/latest.pt`` of the run in ``run_dir``, checked to be a resumable checkpoint."""
    run = RunDir(run_dir)
    latest = run.latest
    if not latest.is_file():
        prev = run.latest_prev
        hint = f" (there is {str(prev)!r}: rename it to latest.pt to resume from it)" if prev.is_file() else ""
        raise ValueError(f"--resume {str(run_dir)!r}: no checkpoints/latest.pt in that directory{hint}")
    return files.load(latest, advice=resume_advice(latest), validate=validate_resume_checkpoint)


def new_run_dir(run_dir: Path) -> Path:
    """``run_dir`` for a new run, refused if it already holds one."""
    if RunDir(run_dir).latest.exists():
        raise ValueError(f"run directory {str(run_dir)!r} already holds a run: continue it with --resume {run_dir}, "
                         "or choose another --run-dir")
    return run_dir


def remove_leftovers(checkpoints: Path) -> None:
    """Temporary files a killed run left behind (half-written checkpoints; the in-training evaluation
    plays the live network and writes no file)."""
    files.remove_stale_temporaries(checkpoints)


__all__ = ["TrainingError", "GracefulInterrupt", "WorkerState", "worker_snapshot", "restore_worker", "with_stages",
           "resume_advice", "validate_resume_checkpoint",
           "remove_leftovers", "read_resume", "new_run_dir"]
