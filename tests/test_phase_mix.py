"""agents.search.phase_mix.PhaseMix: each decision goes to the agent of its phase (R4 bidding, R5 trump, R6 play)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.base import BaseAgent
from agents.evaluation import evaluate
from agents.scripted.greedy import GreedyAgent
from agents.scripted.heuristic import HeuristicAgent
from agents.search.phase_mix import PhaseMix
from pcr_env.engine import Phase
from pcr_env.observation import decode_observation
from pcr_env.vector import VectorEnv


class Recorder(BaseAgent):
    """Plays like ``inner`` and records the phase of every decision it is asked."""

    def __init__(self, inner):
        self.inner = inner
        self.phases: list[Phase] = []
        super().__init__(0)

    def act(self, obs):
        self.phases.append(decode_observation(obs).phase)
        return self.inner.act(obs)


def test_each_decision_goes_to_the_agent_of_its_phase():
    primary, other = Recorder(HeuristicAgent(seed=0)), Recorder(GreedyAgent(seed=0))
    mix = PhaseMix(primary, other, ("bid", "trump"), seed=1)
    envs = VectorEnv(8, seed=3)
    obs, masks, _ = envs.reset()
    for _ in range(200):
        actions = mix.act_batch(obs, masks)
        assert masks[np.arange(len(actions)), actions].all()
        obs, masks = envs.step(actions)[:2]
    assert set(other.phases) == {Phase.BID, Phase.TRUMP}
    assert Phase.PLAY in primary.phases and not {Phase.BID, Phase.TRUMP} & set(primary.phases)


def test_act_agrees_with_act_batch():
    mix = PhaseMix(HeuristicAgent(seed=0), GreedyAgent(seed=0), ("play",), seed=2)
    obs, masks, _ = VectorEnv(6, seed=5).reset()
    single = [mix.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert list(mix.act_batch(obs, masks)) == single


def test_bad_phases_name_the_field_and_the_allowed_values():
    with pytest.raises(ValueError, match="phases=.*'deal'.*allowed.*pass, bid, trump, discard, play"):
        PhaseMix(HeuristicAgent(), GreedyAgent(), ("deal",))
    with pytest.raises(ValueError, match="phases=\\(\\)"):
        PhaseMix(HeuristicAgent(), GreedyAgent(), ())
    with pytest.raises(TypeError):
        PhaseMix(HeuristicAgent(), GreedyAgent(), ("play",), worlds=3)


def test_smoke_match_is_reproducible_across_workers():
    """Handing every phase to the other agent is that agent: a duplicate match against it is a tie."""
    everything = ("pass", "bid", "trump", "discard", "play")
    mix = PhaseMix(GreedyAgent(), HeuristicAgent(), everything)
    result = evaluate([mix, "heuristic"], deals=4, seed=11, workers=1, progress=False)
    assert result.pairs[0].mean_diff == 0.0
    one = evaluate([PhaseMix(HeuristicAgent(), GreedyAgent(), ("play",)), "heuristic"], deals=4, seed=11,
                   workers=1, progress=False)
    two = evaluate([PhaseMix(HeuristicAgent(), GreedyAgent(), ("play",)), "heuristic"], deals=4, seed=11,
                   workers=2, progress=False)
    assert one.pairs[0].mean_diff == two.pairs[0].mean_diff


def _phase_credit(*args: str) -> dict[str, float]:
    """The summary rows (label -> mean difference per deal) of benchmarks/studies/phase_credit.py."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "studies" / "phase_credit.py"
    out = subprocess.run([sys.executable, str(script), "--a", "random", "--b", "heuristic", "--deals", "6", "--seed", "3",
                          "--workers", "1", *args], capture_output=True, text=True, check=True).stdout
    summary = out[out.rindex("duplicate deals, seed 3"):].splitlines()[1:]
    return {line.split()[0]: float(line.split()[1]) for line in summary}


@pytest.mark.parametrize("against", ["a", "b"])
def test_phase_credit_handing_every_phase_to_b_is_b(against):
    """phase_credit.py: A with B deciding every phase is B, so against A it scores A - B (the 'whole' row) and,
    with --against b, exactly 0 against B; a mix of one phase sits strictly between."""
    rows = _phase_credit("--groups", "pass,bid,trump,play", "pass", "--against", against)
    whole, every, passes = rows["whole"], rows["pass+bid+trump+play"], rows["pass"]
    assert whole < 0  # random against the heuristic
    if against == "a":  # A - mix
        assert every == whole
        assert whole < passes < 0
    else:  # mix - B
        assert every == 0.0
        assert whole < passes < 0
