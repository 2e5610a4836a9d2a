"""train.py under torchrun: two "nodes" on 127.0.0.1 (two torchrun launches, env:// rendezvous) train the
smoke config in step, end with the weights of two spawned workers (same seed, same total worker count),
and resume a torchrun run exactly."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from test_train import SMOKE, records, run, weights

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun_two_nodes(args: list[str]) -> None:
    """Launch train.py as two torchrun "nodes" of one process each, as on two machines."""
    port = _free_port()
    procs = [subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1",
                               "--node-rank", str(node), "--master-addr", "127.0.0.1", "--master-port", str(port),
                               str(ROOT / "train.py"), *args, "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
             for node in (0, 1)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    for node, (p, out) in enumerate(zip(procs, outputs)):
        assert p.returncode == 0, f"node {node}:\n{out[-3000:]}"


def same(a: Path, b: Path) -> bool:
    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


@pytest.mark.slow
def test_two_torchrun_nodes_train_in_step_like_two_spawned_workers(tmp_path):
    torchrun_dir, spawned_dir = tmp_path / "torchrun", tmp_path / "spawned"
    torchrun_two_nodes(["--config", SMOKE, "--run-dir", str(torchrun_dir)])
    done = records(torchrun_dir)[-1]
    assert done["type"] == "done" and done["workers"] == 2 and done["workers_in_step"] is True  # every rank
    run(["--config", SMOKE, "--run-dir", str(spawned_dir), "--set", "num_workers=2"])
    assert same(torchrun_dir / "checkpoints" / "latest.pt", spawned_dir / "checkpoints" / "latest.pt")

    resumed = tmp_path / "resumed"
    torchrun_two_nodes(["--config", SMOKE, "--run-dir", str(resumed), "--max-iterations", "3"])
    assert records(resumed)[-1]["reason"] == "stopped"
    torchrun_two_nodes(["--resume", str(resumed)])
    assert same(torchrun_dir / "checkpoints" / "latest.pt", resumed / "checkpoints" / "latest.pt")
