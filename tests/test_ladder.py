"""The reference ladder (``agents.evaluation.ladder``, ``evaluate.py --ladder``): the quick ladder's published
ratings are reproduced on a clean clone, a new checkpoint is rated in one command on the pinned scale, the one-agent
fit agrees with the Bradley–Terry fit it extends, and bad requests are refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.evaluation import ladder as ladders
from agents.evaluation.stats import bradley_terry
from agents.ppo import ActorCritic, NetworkConfig
from agents.ppo.checkpoint import make_checkpoint
from agents.ppo.files import save
from pcr_env.config import RulesConfig

ROOT = Path(__file__).resolve().parent.parent


def _evaluate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "evaluate.py"), *args, "--no-progress"], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)


def test_the_quick_ladder_reproduces_its_published_ratings():
    published = ladders.load_published(ladders.LADDERS["quick"])
    assert published["commit"] != "unknown" and published["command"].startswith("python evaluate.py --ladder quick")
    out = _evaluate("--ladder", "quick", "--workers", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [line.split("|")[1:-1] for line in out.stdout.splitlines() if line.startswith("| ") and "reference" not in line]
    assert {r[0].strip() for r in rows} == {"random", "greedy", "heuristic"} and all(r[4].strip() == "yes" for r in rows)


def test_a_new_checkpoint_is_rated_in_one_command(tmp_path):
    torch.manual_seed(0)
    model = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(16,), critic_hidden_sizes=(8,)))
    save(make_checkpoint(model, {}, RulesConfig()), tmp_path / "new.pt")
    out = _evaluate("--ladder", "quick", "--agents", f"ppo:{tmp_path / 'new.pt'}", "--workers", "2")
    assert out.returncode == 0, out.stderr
    rated = [line for line in out.stdout.splitlines() if "rated now" in line]
    assert len(rated) == 1 and "random" in rated[0] and "heuristic" in rated[0]
    elo = float(rated[0].split("|")[2])
    heuristic = ladders.load_published(ladders.LADDERS["quick"])["ratings"]["heuristic"]["elo"]
    assert np.isfinite(elo) and elo < heuristic  # an untrained network is below the heuristic on the pinned scale
    assert "references published at commit" in out.stdout


def test_the_one_agent_fit_is_the_bradley_terry_fit_with_the_others_held():
    wins = np.array([[0, 60, 90], [40, 0, 80], [10, 20, 0]], float)
    joint = {r.agent: r.elo for r in bradley_terry(["a", "b", "c"], wins, anchor=2, prior=0.0)}
    elo, se = ladders.fixed_reference_rating([60, 90], [100, 100], [joint["b"], joint["c"]], prior=0.0)
    # the joint fit also uses b against c, so a's score equation holds there too: the same rating
    assert elo == pytest.approx(joint["a"], abs=0.5) and 0 < se < 100
    even, _ = ladders.fixed_reference_rating([50], [100], [300.0], prior=0.0)
    assert even == pytest.approx(300.0)
    _, se_more = ladders.fixed_reference_rating([500], [1000], [300.0], prior=0.0)
    assert se_more < ladders.fixed_reference_rating([50], [100], [300.0], prior=0.0)[1]


def test_publishing_writes_the_ratings_with_their_commit_and_command(tmp_path, monkeypatch):
    ladder = ladders.Ladder("tiny", ("random", "heuristic"), deals=4, seed=1)
    monkeypatch.setattr(ladders, "LADDER_DIR", tmp_path)
    result = ladders.play_references(ladder, progress=False)
    path = ladders.publish(ladder, result, "python evaluate.py --ladder tiny --publish")
    data = json.loads(path.read_text())
    assert data["ratings"]["random"] == {"elo": 0.0, "se": 0.0} and data["ratings"]["heuristic"]["elo"] > 0
    assert data["command"] == "python evaluate.py --ladder tiny --publish" and data["commit"]
    assert all(ok for *_, ok in ladders.reproduced(ladder, result))
    with pytest.raises(ValueError, match="another definition"):
        ladders.load_published(ladders.Ladder("tiny", ("random", "heuristic"), deals=5, seed=1))


def test_bad_ladder_requests_are_refused():
    with pytest.raises(ValueError, match="ladder 'huge' is not allowed: allowed \\['full', 'quick'\\]"):
        ladders.get_ladder("huge")
    out = _evaluate("--ladder", "quick", "--agents", "heuristic", "--publish")
    assert out.returncode == 2 and "give no --agents" in out.stderr
    out = _evaluate("--ladder", "huge")
    assert out.returncode == 2 and "invalid choice: 'huge'" in out.stderr
