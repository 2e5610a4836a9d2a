"""Duplicate evaluation on a Ray cluster (``evaluate(..., ray_address=...)``, ``evaluate.py --ray``): a local Ray head
bound to 127.0.0.1 with two worker CPUs gives exactly the result of ``workers=2``; a worker killed mid-match has
its chunk run again, not dropped; a chunk that keeps failing fails the evaluation, naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_library

from agents.evaluation import evaluate
from agents.scripted.random_agent import RandomAgent

ray = require_library("ray")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from rllib_multiagent import LOOPBACK, bind_local_ray  # noqa: E402  (the loopback switch, written once)


@pytest.fixture(scope="module")
def ray_head():
    """A single-machine Ray instance bound to the loopback with two CPUs; its address for other drivers."""
    bind_local_ray(LOOPBACK)
    ray.init(num_cpus=2, _node_ip_address=LOOPBACK, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the test's agents, for the workers
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


class DiesOnce(RandomAgent):
    """A random agent whose process dies at its first move if ``marker`` does not exist yet (it creates it)."""

    name = "random"

    def __init__(self, marker: str, always: bool = False, seed: int | None = None):
        super().__init__(seed)
        self.marker, self.always = marker, always

    def act(self, obs):
        if self.always:
            os._exit(3)
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return super().act(obs)
        os._exit(3)  # a lost worker, as a node going down


def _same(a, b) -> None:
    def strip(r):
        return ({k: v for k, v in r.to_dict().items() if k not in ("seconds", "timing")}
                | {"config": {**r.config, "workers": 0, "ray": None}})
    assert strip(a) == strip(b)


def test_the_cluster_gives_the_result_of_local_workers(ray_head):
    on_ray = evaluate(["heuristic", "random", "greedy"], deals=60, seed=11, progress=False, ray_address=ray_head)
    local = evaluate(["heuristic", "random", "greedy"], deals=60, seed=11, progress=False, workers=2)
    _same(on_ray, local)
    assert on_ray.config["ray"] is True and [p.deals for p in on_ray.pairs] == [60, 60, 60]
    assert "on a Ray cluster" in on_ray.table()


def test_a_worker_lost_mid_match_is_retried_not_dropped(ray_head, tmp_path):
    marker = tmp_path / "died"
    on_ray = evaluate([DiesOnce(str(marker)), "heuristic"], deals=75, seed=3, progress=False, ray_address=ray_head)
    assert marker.exists()  # a worker did die: its chunk was run again
    local = evaluate([DiesOnce(str(marker)), "heuristic"], deals=75, seed=3, progress=False, workers=1)
    _same(on_ray, local)
    assert on_ray.pairs[0].deals == 75


def test_a_chunk_that_keeps_failing_fails_the_evaluation_naming_it(ray_head, tmp_path):
    with pytest.raises(RuntimeError, match=r"the chunk of pair 0, deals 0\.\.24 failed on the Ray cluster after 3 retries"):
        evaluate([DiesOnce(str(tmp_path / "m"), always=True), "heuristic"], deals=25, seed=3, progress=False,
                 ray_address=ray_head)


def test_bad_ray_arguments_are_refused_before_any_game():
    with pytest.raises(ValueError, match="workers 2 is not allowed with ray_address"):
        evaluate(["heuristic", "random"], deals=5, workers=2, ray_address="auto")
    with pytest.raises(ValueError, match="ray_address '' is not allowed"):
        evaluate(["heuristic", "random"], deals=5, ray_address="")


def test_the_command_line_joins_a_running_cluster(ray_head, tmp_path):
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    out = subprocess.run([sys.executable, str(ROOT / "evaluate.py"), "--agents", "heuristic", "random", "--deals", "50",
                          "--seed", "2", "--ray", ray_head, "--no-progress", "--out", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    saved = json.loads((tmp_path / "results.json").read_text())
    local = evaluate(["heuristic", "random"], deals=50, seed=2, progress=False)
    assert saved["pairs"][0]["diffs"] == local.pairs[0].diffs and saved["config"]["ray"] is True
