"""Duplicate evaluation on a Ray cluster: each chunk of deals is a Ray task (``evaluate(..., ray_address=...)``).

A chunk's result depends on its deals and the seed alone (agents are re-seeded before every table), so the
cluster gives the same result as ``workers=N`` on one machine, whatever the number of nodes and the order in
which chunks finish. A chunk whose worker process dies (a node lost, a process killed) is run again, up to
:data:`RETRIES` times; after that the evaluation fails, naming the chunk: no deal is dropped silently.

Ray comes with the ``rllib`` extra (``pip install 'pcr[rllib]'``). ``address`` is what ``ray.init`` takes:
``"auto"`` (the cluster this machine belongs to, e.g. after ``ray start --head``), ``"HOST:PORT"`` of a head node,
``"ray://HOST:10001"`` (Ray Client) or ``"local"`` (a new single-machine instance for this call). Workers need
``pcr`` importable, as on the driver: install the package on every node (or give a ``runtime_env``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

RETRIES = 3
"""How many times a chunk whose worker died is run again before the evaluation fails."""

WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""Environment of the worker processes: one thread each, parallelism comes from the tasks."""


def run_on_ray(tasks: Sequence[tuple], address: str, run: Callable[[tuple], Any], deals_of: Callable[[Any], int],
               describe: Callable[[tuple], str], bar: Any) -> list[Any]:
    """``run(task)`` for every task as Ray tasks on the cluster at ``address``; the results in completion order.

    Joins (and afterwards leaves) the cluster unless this process is already connected to one. ``bar`` advances
    by ``deals_of(result)`` as results arrive; a task that fails for good is named by ``describe(task)``.
    """
    try:
        import ray
    except ImportError as err:
        raise ImportError("evaluation on a Ray cluster needs Ray: pip install 'pcr[rllib]'") from err
    joined_here = not ray.is_initialized()
    if joined_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": dict(WORKER_ENV)})
    try:
        remote = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(run)
        pending = {remote.remote(task): task for task in tasks}
        results = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(done[0])
            try:
                result = ray.get(done[0])
            except ray.exceptions.RayError as err:
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise RuntimeError(f"{describe(task)} failed on the Ray cluster after {RETRIES} retries: {err}") from err
            results.append(result)
            bar.update(deals_of(result))
        return results
    finally:
        if joined_here:
            ray.shutdown()


__all__ = ["RETRIES", "WORKER_ENV", "run_on_ray"]
