"""OpenSpiel's bots as agents (agents/search/openspiel_bots.py, ``openspiel:BOT``): the spec and its options,
legal and seeded play through ``raw_env``, no hidden card read, and a duplicate match through evaluate().
Skipped when open-spiel is not installed (failed in CI, which installs it)."""

from __future__ import annotations

import pytest
from conftest import require_library

require_library("pyspiel")

from test_search_agents import hidden_twin  # noqa: E402

from agents.evaluation import evaluate  # noqa: E402
from agents.registry import list_agents, make_agent  # noqa: E402
from agents.search.openspiel_bots import OpenSpielAgent  # noqa: E402
from pcr_env import engine as E  # noqa: E402
from pcr_env.config import RulesConfig  # noqa: E402
from pcr_env.pass_cut_run_v0 import raw_env  # noqa: E402


def test_the_spec_carries_the_bot_and_its_options():
    assert "openspiel:BOT" in list_agents()
    agent = make_agent("openspiel:ismcts:sims=30,uct_c=1.5", seed=0)
    assert isinstance(agent, OpenSpielAgent) and agent.bot == "ismcts"
    assert agent.options == {"sims": 30, "uct_c": 1.5, "rollouts": 1, "worlds": -1}
    assert agent.name == "openspiel:ismcts:sims=30,uct_c=1.5"
    assert make_agent("openspiel:mcts", seed=0).options == {"sims": 50, "uct_c": 2.0, "rollouts": 1, "worlds": 4}
    assert make_agent("openspiel:ismcts:sims=9", seed=0, sims=7).options["sims"] == 7  # a keyword overrides the spec
    with pytest.raises(ValueError, match="openspiel bot 'alphazero' is not allowed: allowed 'ismcts', 'mcts'"):
        make_agent("openspiel:alphazero")
    with pytest.raises(TypeError, match="unexpected option 'depth': allowed sims, uct_c, rollouts, worlds"):
        make_agent("openspiel:ismcts:depth=3")
    with pytest.raises(ValueError, match="option 'sims' = '0' is not allowed: allowed an integer >= 1"):
        make_agent("openspiel:ismcts:sims=0")
    with pytest.raises(ValueError, match="not NAME=VALUE"):
        make_agent("openspiel:ismcts:sims")


@pytest.mark.parametrize("spec", ["openspiel:ismcts:sims=8", "openspiel:mcts:sims=4,worlds=2"])
def test_bots_play_legal_seeded_rounds_in_raw_env(spec):
    """Every action is legal under the mask, and the same seed plays the same round (a six-player table too)."""
    def play(seed: int, players: int) -> list[int]:
        rules = RulesConfig(players=players)
        agent = make_agent(spec, seed=seed, rules=rules)
        env = raw_env(episode="round", **rules.to_dict())
        env.reset(seed=3)
        actions = []
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = agent.act(obs)
            assert obs["action_mask"][action] == 1
            actions.append(action)
            env.step(action)
        return actions

    assert play(5, 4) == play(5, 4)
    assert len(play(1, 6)) > 0


@pytest.mark.parametrize("phase", [E.Phase.PASS, E.Phase.BID, E.Phase.PLAY])
def test_ismcts_reads_only_its_observation(phase):
    """Swapping two other seats' hidden cards (same observation for the actor) changes nothing."""
    obs, twin = hidden_twin(11, phase)
    assert make_agent("openspiel:ismcts:sims=12", seed=4).act(obs) == make_agent("openspiel:ismcts:sims=12", seed=4).act(twin)


def test_ismcts_plays_a_duplicate_match_through_evaluate():
    result = evaluate(["openspiel:ismcts:sims=4", "random"], deals=1, seed=0, progress=False)
    assert result.pairs[0].deals == 1
    assert [t.decisions > 0 for t in result.timing] == [True, True]
