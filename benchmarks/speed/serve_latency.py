"""Response time of the browser table (``python -m agents.serve``) to a move, heuristic agents, over real HTTP.

Starts the server as its own process on a free loopback port (temporary folders for tables and
records), plays ``--rounds`` one-round tables with the standard library's HTTP client, and prints
the median, 90th percentile and maximum milliseconds of: ``move`` (the person's action, checked,
written to the record on disk, answered), ``advance`` (one agent's action, the same way) and
``until my turn`` (a move plus every agent action up to the person's next turn: what a person
waits for with the page's animation delay set to 0). The target is a median ``move`` under 100 ms
on 2 cores. The server is stopped at the end; nothing but 127.0.0.1 is contacted.

    python benchmarks/speed/serve_latency.py                 # 5 rounds
    python benchmarks/speed/serve_latency.py --rounds 20 --agents heuristic
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TARGET_MS = 100.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base: str, method: str, path: str, body: dict | None = None, token: str | None = None) -> tuple[float, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("X-PCR-Token", token)
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=30) as res:
        out = json.loads(res.read())
    return 1000 * (time.perf_counter() - start), out


def wait_until_up(base: str, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(base + "/", timeout=2).read()
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise SystemExit("the server did not start in time")


def play(base: str, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"move": [], "advance": [], "until my turn": []}
    for _ in range(rounds):
        _, made = call(base, "POST", "/api/tables", {"episode": "round"})
        tid, token = made["id"], made["token"]
        _, s = call(base, "GET", f"/api/tables/{tid}", token=token)
        wait = 0.0
        while not s["over"]:
            if s["turn"] == s["seat"]:
                if wait:
                    times["until my turn"].append(wait)
                ms, s = call(base, "POST", f"/api/tables/{tid}/move", {"action": s["legal"][0]}, token)
                times["move"].append(ms)
                wait = ms
            else:
                ms, s = call(base, "POST", f"/api/tables/{tid}/advance", {}, token)
                times["advance"].append(ms)
                wait += ms
    return times


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="one-round tables to play (default 5)")
    p.add_argument("--agents", nargs="+", default=["heuristic"], metavar="SPEC")
    args = p.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "agents.serve", "--agents", *args.agents, "--port", str(port), "--seed", "0",
               "--tables", f"{tmp}/tables", "--records", f"{tmp}/records"]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS="1"), stdout=subprocess.DEVNULL)
        try:
            wait_until_up(base, proc)
            times = play(base, args.rounds)
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"serve latency, agents {' '.join(args.agents)}, {args.rounds} one-round tables, milliseconds:")
    for name, values in times.items():
        v = np.asarray(values)
        print(f"  {name:14s} n={len(v):4d}  median {np.median(v):6.1f}  p90 {np.percentile(v, 90):6.1f}  max {v.max():6.1f}")
    median = float(np.median(times["move"]))
    verdict = "meets" if median < TARGET_MS else "MISSES"
    print(f"median move {median:.1f} ms: {verdict} the {TARGET_MS:.0f} ms target")
    return 0 if median < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
