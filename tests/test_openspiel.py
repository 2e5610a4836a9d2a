"""The OpenSpiel game ``python_pass_cut_run`` (pcr_env.openspiel): OpenSpiel's own checks, a differential test
against ``raw_env``, and the resampler's leak tests. Skipped when open-spiel is not installed (failed in CI, which installs it).

``PCR_OPENSPIEL_DEALS`` scales the differential test (default 2000 one-round episodes over the variants,
plus 40 short games); the figures in docs/openspiel.md were measured with it larger.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from conftest import require_library

pyspiel = require_library("pyspiel")

from pcr_env import engine as E  # noqa: E402
from pcr_env.cards import cards_of  # noqa: E402
from pcr_env.observation import observation_layout  # noqa: E402
from pcr_env.openspiel import DEFAULT_PARAMS, params_from_rules, rules_from_params  # noqa: E402
from pcr_env.pass_cut_run_v0 import raw_env  # noqa: E402

GAME = "python_pass_cut_run"
DEALS = int(os.environ.get("PCR_OPENSPIEL_DEALS", "2000"))

# (parameters, random_sim_test games): round episodes are cheap; whole games use a low target (random play
# fails many contracts, so a game to 100 takes dozens of rounds).
SIM_VARIANTS = [
    ({"episode": "round"}, 60),
    ({"episode": "round", "players": 6}, 30),
    ({"episode": "round", "bidding": "auction"}, 30),
    ({"episode": "round", "passing": False, "double_run_bonus": True}, 30),
    ({"episode": "round", "players": 6, "bidding": "auction", "min_bid": 6, "first_dealer": 3}, 20),
    ({"target_score": 30}, 6),
    ({"target_score": 20, "reward": "win", "players": 6, "max_rounds": 5}, 6),
]


def _load(params: dict) -> pyspiel.Game:
    import pcr_env.openspiel  # noqa: F401 - registers the game

    return pyspiel.load_game(GAME, params)


@pytest.mark.parametrize("params,games", SIM_VARIANTS, ids=[str(p) for p, _ in SIM_VARIANTS])
def test_random_sim_test(params, games):
    pyspiel.random_sim_test(_load(params), num_sims=games, serialize=False, verbose=False)


def test_game_type_and_parameters():
    game = _load({})
    kind = game.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.reward_model == pyspiel.GameType.RewardModel.REWARDS  # a score difference every round
    for params in ({"episode": "round"}, {"reward": "win"}):  # one reward, at the end
        assert _load(params).get_type().reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert game.num_players() == 4 and game.num_distinct_actions() == 70 and game.max_chance_outcomes() == 52
    assert game.max_utility() == 51 * 200 and _load({"episode": "round"}).max_utility() == 51  # 13 + 25 + 13 (R7.2, R8.2)
    six = _load({"players": 6})
    assert six.num_players() == 6 and six.observation_tensor_size() == six.information_state_tensor_size() == 1041
    assert set(DEFAULT_PARAMS) == set(game.get_parameters())
    for rules_params in ({}, {"players": 6, "min_bid": 6, "first_dealer": 2, "bidding": "auction"}):
        rules = rules_from_params({**DEFAULT_PARAMS, **rules_params})
        assert rules_from_params(params_from_rules(rules)) == rules
    with pytest.raises(ValueError, match="'players' = 5"):
        _load({"players": 5})
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'frameskip'"):
        _load({"frameskip": 1})


def test_tensors_are_our_observation_with_its_named_slices():
    game = _load({"episode": "round"})
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while state.is_chance_node():
        state.apply_action(int(rng.choice(state.legal_actions())))
    player = state.current_player()
    observer = game.make_py_observer()
    observer.set_from(state, player)
    assert set(observer.dict) == set(observation_layout(4).slices)
    assert observer.dict["hand"].sum() == 13
    assert np.array_equal(state.observation_tensor(player), state.information_state_tensor(player))
    env_like = state.seat_observation(player)["observation"]
    assert np.array_equal(np.array(state.observation_tensor(player), np.float32), env_like)
    text = state.information_state_string(player)
    assert text.startswith(f"p{player} PASS") and "hand " in text
    assert state.action_to_string(player, 51) == "AS" and state.action_to_string(player, 65) == "no bid"


# ------------------------------------------------------------------ differential test against raw_env
def _deal_like(state, env) -> None:
    """Apply the chance outcomes that deal ``env``'s current hands (its dealer first, in round 1)."""
    game = env.game
    n = game.config.players
    if not state._dealer_drawn:
        state.apply_action(game.dealer)
    hands = [sorted(cards_of(h)) for h in game.hands]
    while state.is_chance_node():
        i = len(state._order)
        state.apply_action(hands[(game.dealer + 1 + i) % n][i // n])  # R2.2: one card at a time from the dealer's left


def _play_both(params: dict, seed: int) -> int:
    """One episode through both with the same deals and random actions; returns the decisions compared."""
    game = _load(params)
    rules = game.rules
    env = raw_env(episode=game.episode, reward=game.reward_kind, **rules.to_dict())
    env.reset(seed=seed)
    state = game.new_initial_state()
    _deal_like(state, env)
    rng = np.random.default_rng(seed)
    env_returns = np.zeros(rules.players)
    steps = 0
    while not state.is_terminal():
        seat = state.current_player()
        agent = env.agent_selection
        assert agent == f"player_{seat}"
        obs = env.observe(agent)
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        assert state.legal_actions() == legal, (seed, steps)
        if steps % 7 == 0:  # the tensors are the same encoder's; a sample of steps keeps the test quick
            assert np.array_equal(np.array(state.observation_tensor(seat), np.float32), obs["observation"])
        action = legal[rng.integers(len(legal))]
        env.step(action)
        state.apply_action(action)
        env_returns += [env.rewards[a] for a in env.possible_agents]
        steps += 1
        if state.is_chance_node():
            _deal_like(state, env)
    assert all(env.terminations[a] or env.truncations[a] for a in env.agents)
    assert np.array_equal(np.array(state.returns()), env_returns), (params, seed)
    return steps


DIFF_VARIANTS = [
    {"episode": "round"},
    {"episode": "round", "players": 6},
    {"episode": "round", "bidding": "auction", "double_run_bonus": True},
    {"episode": "round", "passing": False, "min_bid": 9},
]


def test_same_legal_actions_and_returns_as_raw_env_over_thousands_of_deals():
    started = time.perf_counter()
    decisions = 0
    per = max(1, DEALS // len(DIFF_VARIANTS))
    for k, params in enumerate(DIFF_VARIANTS):
        for i in range(per):
            decisions += _play_both(params, seed=10_000 * k + i)
    for i in range(max(4, DEALS // 50)):  # whole games: later deals, rewards every round, the game's end (R8.4)
        params = {"target_score": 40, "reward": "win" if i % 4 == 3 else "score_diff", "players": 6 if i % 2 else 4}
        decisions += _play_both(params, seed=99_000 + i)
    print(
        f"differential: {per * len(DIFF_VARIANTS)} rounds + {max(4, DEALS // 50)} games, "
        f"{decisions} decisions in {time.perf_counter() - started:.1f}s"
    )


# ------------------------------------------------------------------ the resampler reads no hidden card
def _random_positions(params: dict, seed: int, every: int = 5):
    game = _load(params)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    k = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = [a for a, _ in state.chance_outcomes()]
            state.apply_action(outcomes[rng.integers(len(outcomes))])
            continue
        if k % every == 0:
            yield state
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])
        k += 1


@pytest.mark.parametrize("params", [{"episode": "round"}, {"episode": "round", "players": 6}])
def test_resampled_states_keep_every_information_state(params):
    """OpenSpiel's ResampleInfostateTest: same information state, tensor and player to act, for every player."""
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for seed in range(3):
        for state in _random_positions(params, seed, every=9):
            for p in range(state.num_players()):
                other = state.resample_from_infostate(p, sampler)
                assert other.information_state_string(p) == state.information_state_string(p)
                assert other.information_state_tensor(p) == state.information_state_tensor(p)
                assert other.current_player() == state.current_player()
                assert other.legal_actions() == state.legal_actions() or p != state.current_player()


@pytest.mark.parametrize("params", [{"episode": "round"}, {"episode": "round", "players": 6}])
def test_resampler_never_reads_hidden_cards(params):
    """Two states that differ only in cards ``p`` cannot see resample identically from the same generator."""
    checked = 0
    for seed in range(2):
        for state in _random_positions(params, seed, every=11):
            p = state.current_player()
            twin = state.resample_from_infostate(p, np.random.default_rng(seed + 1000))  # other hidden cards
            a = state.resample_from_infostate(p, np.random.default_rng(7))
            b = twin.resample_from_infostate(p, np.random.default_rng(7))
            assert np.array_equal(a._S, b._S)
            checked += not np.array_equal(state._S, twin._S)
    assert checked > 5  # the twins did differ in hidden cards


def test_openspiel_policy_gradient_example_trains_on_the_game():
    """OpenSpiel's own A2C through its rl_environment on our game (examples/openspiel_policy_gradient.py)."""
    from conftest import load_example

    require_library("torch")
    summary = load_example("openspiel_policy_gradient").main(["--minutes", "1", "--max-rounds", "3", "--eval-rounds", "2"])
    assert summary["training_rounds"] == 3 and summary["eval_rounds"] == 2
    for key in ("team0_return_before", "team0_return_after"):  # reward="win": +1/-1/0 per round
        assert -1.0 <= summary[key] <= 1.0


def test_resampled_state_plays_on_in_the_engine():
    for state in _random_positions({"target_score": 30}, 3, every=23):
        other = state.resample_from_infostate(state.current_player(), np.random.default_rng(0))
        rng = np.random.default_rng(1)
        while not other.is_terminal():
            legal = [a for a, _ in other.chance_outcomes()] if other.is_chance_node() else other.legal_actions()
            other.apply_action(legal[rng.integers(len(legal))])
        assert sum(other.returns()) == 0
        assert E.Phase(int(other._S[0, E.PHASE])) in (E.Phase.GAME_OVER,)
