"""Decision-time search (agents/search.py, ``search:<base>``) and the double-dummy reference (agents/pimc.py,
``pimc``): they read only their observation, search picks its best candidate over common worlds, pimc's
double-dummy values agree with hand-checked positions, and short matches of each run through evaluate()."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_library

from agents.evaluation import evaluate
from agents.registry import make_agent
from agents.search import SearchAgent
from pcr_env import engine as E
from pcr_env import pass_cut_run_v0
from pcr_env.cards import mask_of, parse_cards
from pcr_env.config import RulesConfig
from pcr_env.observation import encode_observation


def _decision(seed: int, phase: E.Phase):
    """The first real decision of ``phase`` in a seeded heuristic round: (observation dict, acting seat, state)."""
    heuristic = make_agent("heuristic", seed=seed)
    env = pass_cut_run_v0.raw_env(episode="round", first_dealer=0)
    env.reset(seed=seed)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if env.game.phase == phase and obs["action_mask"].sum() > 1:
            return obs, env.agent_name_mapping[name], env.game
        env.step(heuristic.act(obs))
    raise AssertionError(f"no {phase.name} decision")


def hidden_twin(seed: int, phase: E.Phase) -> tuple[dict, dict]:
    """The observation dict of :func:`_decision` and the same seat's observation of a table where two other seats
    swapped one card of a suit both hold (hand sizes and voids kept): the two must be equal, so an agent that
    reads only its observation acts the same on both."""
    obs, seat, state = _decision(seed, phase)
    a, b = [s for s in range(4) if s != seat][:2]
    changed = state.copy()
    for suit in range(4):
        ca = [c for c in range(suit * 13, suit * 13 + 13) if changed.hands[a] >> c & 1 and not changed.passed[seat] >> c & 1]
        cb = [c for c in range(suit * 13, suit * 13 + 13) if changed.hands[b] >> c & 1 and not changed.passed[seat] >> c & 1]
        if ca and cb:
            changed.hands[a] ^= (1 << ca[0]) | (1 << cb[0])
            changed.hands[b] ^= (1 << ca[0]) | (1 << cb[0])
            break
    assert changed.hands != state.hands
    twin = {"observation": encode_observation(changed, seat), "action_mask": obs["action_mask"]}
    assert np.array_equal(twin["observation"], obs["observation"])
    return obs, twin


def test_search_acts_by_its_deviation_rule_over_the_same_worlds():
    obs, _, _ = _decision(3, E.Phase.PLAY)
    legal = np.flatnonzero(obs["action_mask"])
    agent = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=5, worlds=4)
    twin = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=5, worlds=4)
    blueprint = int(twin.base.act(obs))
    values = twin.rollout_values(obs, legal)
    assert values.shape == (len(legal), 4) and np.isfinite(values).all()
    assert agent.act(obs) == twin.choose(legal, values, blueprint)  # same seed: the same worlds, the same choice


def test_the_deviation_rule_leaves_the_base_only_for_a_clear_gain():
    agent = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=0, worlds=4)
    candidates = np.array([3, 7, 9])
    base = np.array([0.0, 10.0, -5.0, 5.0])
    clear = np.stack([base, base + 4.0, base - 1.0])  # 7 beats 3 in every world
    assert agent.choose(candidates, clear, blueprint=3) == 7
    noisy = np.stack([base, base + np.array([30.0, -28.0, 25.0, -26.0]), base])  # +0.25 on average, huge spread
    assert agent.choose(candidates, noisy, blueprint=3) == 3
    assert agent.choose(candidates, np.stack([base, base - 2.0, base - 1.0]), blueprint=3) == 3


@pytest.mark.parametrize("phase", [E.Phase.PASS, E.Phase.BID, E.Phase.PLAY])
def test_search_reads_only_its_observation(phase):
    """Swapping two other seats' hidden cards (same observation for the actor) changes nothing."""
    obs, twin = hidden_twin(11, phase)
    first = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=9, worlds=3).act(obs)
    again = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=9, worlds=3).act(twin)
    assert first == again


def test_search_agent_plays_a_duplicate_match():
    agent = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=0, worlds=2)
    result = evaluate([agent, "heuristic"], deals=1, seed=4, progress=False)
    assert result.pairs[0].deals == 1


def test_the_search_spec_names_its_base_and_checks_it():
    agent = make_agent("search:heuristic", seed=0)
    assert isinstance(agent, SearchAgent) and "heuristic" in repr(agent)
    with pytest.raises(ValueError, match="unknown agent spec 'wizard'"):
        make_agent("search:wizard", seed=0)


# ----------------------------------------------------------------------------- pimc
@pytest.fixture(scope="module")
def pimc():
    require_library("endplay")
    from agents.search import pimc as module

    return module


def _position(hands: dict[int, str], trick: list[tuple[int, str]], trump: int, current: int) -> E.GameState:
    state = E.new_game(RulesConfig(), np.random.default_rng(0), dealer=3)
    state.phase, state.trump, state.declarer, state.high_bid, state.current = E.Phase.PLAY, trump, 0, 7, current
    state.hands = [mask_of(parse_cards(hands.get(s, ""))) for s in range(4)]
    state.trick = [(s, parse_cards(c)[0]) for s, c in trick]
    return state


def test_double_dummy_card_values_of_a_hand_checked_ending(pimc):
    # Two cards each, spades trump (suit 3); seat 0 to lead. AS and KS take both tricks for the even team.
    state = _position({0: "AS 2H", 1: "3C 4C", 2: "KS 3H", 3: "5C 6C"}, [], trump=3, current=0)
    values = pimc.card_values(state)
    assert values == {parse_cards("AS")[0]: 2, parse_cards("2H")[0]: 2}
    # Seat 1 on a trick led with the 2H: it cannot win anything (no hearts, no trumps).
    state = _position({0: "AS", 1: "3C 4C", 2: "KS 3H", 3: "5C 6C"}, [(0, "2H")], trump=3, current=1)
    assert set(pimc.card_values(state).values()) == {0}


def test_declarer_tricks_count_a_solid_trump_suit(pimc):
    spades = " ".join(f"{r}S" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"))
    hands = {0: spades, 1: " ".join(f"{r}H" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")),
             2: " ".join(f"{r}D" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")),
             3: " ".join(f"{r}C" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"))}
    state = _position(hands, [], trump=3, current=0)
    tricks = pimc.declarer_tricks(state, 0)
    assert tricks[3] == 13 and tricks[0] < 13  # spades trump: all 13; clubs trump: West ruffs the spades


def test_pimc_plays_a_duplicate_match_and_refuses_six_players(pimc):
    from agents.search.pimc import PIMCAgent

    result = evaluate([PIMCAgent(seed=0, worlds=2, bid_worlds=1), "heuristic"], deals=1, seed=2, progress=False)
    assert result.pairs[0].deals == 1
    with pytest.raises(ValueError, match="four-player tables only"):
        PIMCAgent(rules=RulesConfig(players=6))


def test_search_with_a_ppo_base_tries_the_policys_most_likely_passes():
    obs, _, _ = _decision(5, E.Phase.PASS)
    base = make_agent("ppo:pretrained", seed=0)
    agent = SearchAgent(base, RulesConfig(), seed=0, worlds=2, pass_candidates=3)
    probs = base.action_probabilities(obs["observation"][None], obs["action_mask"][None])[0]
    legal = np.flatnonzero(obs["action_mask"])
    assert probs[legal].sum() == pytest.approx(1.0, abs=1e-5) and probs[np.flatnonzero(obs["action_mask"] == 0)].sum() == 0
    candidates = agent._candidates(obs, legal, E.Phase.PASS, int(base.act(obs)))
    assert sorted(candidates.tolist()) == sorted(legal[np.argsort(-probs[legal], kind="stable")[:3]].tolist())
    assert agent.act(obs) in candidates


def test_value_targets_reweight_the_base_policy_by_the_searched_advantages():
    """action_targets (distillation, train.py ``warmstart.targets: values``): prior(a) * exp(advantage(a) / T)
    over the legal actions, the advantages those of the rollouts act() runs (same seed, same worlds)."""
    obs, _, _ = _decision(3, E.Phase.PLAY)
    mask = obs["action_mask"].astype(bool)
    legal = np.flatnonzero(mask)
    base = make_agent("ppo:pretrained", seed=0)
    agent = SearchAgent(base, RulesConfig(), seed=5, worlds=4, temperature=2.0)
    twin = SearchAgent(base, RulesConfig(), seed=5, worlds=4)
    target = agent.action_targets(obs["observation"][None], obs["action_mask"][None])[0]
    assert target.sum() == pytest.approx(1.0, abs=1e-5) and (target[~mask] == 0).all()
    blueprint = int(base.act(obs))
    values = twin.rollout_values(obs, legal)
    advantage = (values - values[np.flatnonzero(legal == blueprint)[0]]).mean(1)
    prior = base.action_probabilities(obs["observation"][None], obs["action_mask"][None])[0][legal]
    expected = prior * np.exp(advantage / 2.0)
    assert target[legal] == pytest.approx(expected / expected.sum(), rel=1e-4, abs=1e-7)


def test_value_targets_are_the_prior_where_nothing_is_searched_and_one_hot_when_forced():
    base = make_agent("ppo:pretrained", seed=0)
    agent = SearchAgent(base, RulesConfig(), seed=0, worlds=2, phases=("play",))
    obs, _, _ = _decision(4, E.Phase.BID)
    target = agent.action_targets(obs["observation"][None], obs["action_mask"][None])[0]
    prior = base.action_probabilities(obs["observation"][None], obs["action_mask"][None])[0]
    assert target == pytest.approx(prior, abs=1e-6)
    forced = np.zeros_like(obs["action_mask"])
    forced[np.flatnonzero(obs["action_mask"])[0]] = 1
    one = agent.action_targets(obs["observation"][None], forced[None])[0]
    assert one[np.flatnonzero(forced)[0]] == 1.0 and one.sum() == 1.0


def test_a_cold_value_target_points_where_a_threshold_free_search_acts():
    """As the temperature falls, the target's mode is the candidate with the best mean advantage: the
    action of a search with threshold 0 (a heuristic base has no probabilities: a uniform prior)."""
    obs, _, _ = _decision(7, E.Phase.PLAY)
    cold = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=2, worlds=4, temperature=1e-3)
    plain = SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), seed=2, worlds=4, threshold=0.0)
    target = cold.action_targets(obs["observation"][None], obs["action_mask"][None])[0]
    assert int(target.argmax()) == plain.act(obs)


@pytest.mark.parametrize("temperature", [0, -1.0, "1", True])
def test_a_bad_search_temperature_is_a_value_error(temperature):
    with pytest.raises(ValueError, match="temperature"):
        SearchAgent(make_agent("heuristic", seed=0), RulesConfig(), temperature=temperature)


class _Counting:
    """An agent that plays ``inner`` and counts the rows it is asked for (an opponent model's view of a search)."""

    def __init__(self, inner):
        self.inner, self.rows = inner, 0

    def act_batch(self, obs, masks):
        self.rows += len(obs)
        return self.inner.act_batch(obs, masks)

    def reset(self, seed=None):
        self.inner.reset(seed)

    def get_state(self):
        return self.inner.get_state()

    def set_state(self, state):
        self.inner.set_state(state)


def test_an_opponent_model_plays_the_other_team_in_the_rollouts():
    """``opponent``: the other team's seats play it in every rollout (a best response by search to a frozen agent).
    The base itself as the opponent model changes nothing; another model changes the values."""
    obs, _, _ = _decision(3, E.Phase.BID)
    legal = np.flatnonzero(obs["action_mask"])

    def values(opponent=None):
        return SearchAgent(make_agent("greedy", seed=0), RulesConfig(), seed=5, worlds=4, opponent=opponent).rollout_values(obs, legal)

    plain = values()
    np.testing.assert_array_equal(values(make_agent("greedy", seed=0)), plain)
    model = _Counting(make_agent("random", seed=1))
    base_rows = _Counting(make_agent("greedy", seed=0))
    modelled = SearchAgent(base_rows, RulesConfig(), seed=5, worlds=4, opponent=model).rollout_values(obs, legal)
    assert not np.array_equal(modelled, plain)
    assert 0.3 < model.rows / (model.rows + base_rows.rows) < 0.7  # about half the seats of every rollout
