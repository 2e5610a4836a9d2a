"""The PettingZoo AEC environment: API conformance, seeding, options, errors, rewards, infos, render, state.

PettingZoo's ``api_test`` and ``seed_test`` run on the default rules and on every
variant, for both ``env()`` (standard wrappers) and ``raw_env``, with warnings as
errors (see ``conftest.py``: only PettingZoo's notes about Dict observation spaces
are filtered, by message).
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pettingzoo
import pytest
from conftest import VARIANT_IDS, VARIANTS, strict_warnings
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import api_test, seed_test

import pcr_env
from pcr_env import engine as E
from pcr_env import pass_cut_run_v0
from pcr_env.actions import NUM_ACTIONS, PASS_BID, bid_action, trump_action
from pcr_env.cards import card_str, cards_of, make_card, parse_card
from pcr_env.engine import PassDirection, Phase
from pcr_env.observation import encode_observation, state_layout, state_size

SUIT_DEAL = [[card_str(make_card(s, r)) for r in range(13)] for s in range(4)]
ROUND_RESULT_KEYS = {"round", "dealer", "tricks", "run_bonus", "scores", "declarer", "bid", "trump", "made",
                     "trick_winners", "total_scores", "winner"}


# ----------------------------------------------------------------------------- PettingZoo's checkers

@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
@pytest.mark.parametrize("make", [pass_cut_run_v0.env, pass_cut_run_v0.raw_env], ids=["env", "raw_env"])
def test_pettingzoo_api_test(make, variant):
    with strict_warnings():
        api_test(make(**variant), num_cycles=1000)


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
@pytest.mark.parametrize("make", [pass_cut_run_v0.env, pass_cut_run_v0.raw_env], ids=["env", "raw_env"])
def test_pettingzoo_seed_test(make, variant):
    with strict_warnings():
        seed_test(lambda: make(**variant), num_cycles=500)


def test_strict_warnings_still_fail_on_other_warnings():
    import warnings

    with pytest.raises(UserWarning, match="something else"), strict_warnings():
        warnings.warn("something else", UserWarning)
    with strict_warnings():
        warnings.warn("Observation is not a NumPy array", UserWarning)  # PettingZoo's Dict note: filtered


# ----------------------------------------------------------------------------- spaces and metadata

@pytest.mark.parametrize("players, obs_size", [(4, 797), (6, 1041)])
def test_spaces_agents_and_metadata(players, obs_size):
    env = pass_cut_run_v0.raw_env(players=players)
    env.reset(seed=0)
    assert env.metadata["name"] == "pass_cut_run_v0" and set(env.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert env.possible_agents == env.agents == [f"player_{i}" for i in range(players)]
    for agent in env.agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent).n == NUM_ACTIONS
        space = env.observation_space(agent)
        assert space["observation"].shape == (obs_size,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
    assert env.state_space.shape == (state_size(players),)


def test_only_the_acting_agent_has_a_non_zero_mask_and_observations_are_copies():
    env = pass_cut_run_v0.raw_env()
    env.reset(seed=1)
    actor = env.agent_selection
    for agent in env.agents:
        obs = env.observe(agent)
        assert obs["action_mask"].dtype == np.int8
        assert obs["action_mask"].any() == (agent == actor)
    obs = env.observe(actor)
    obs["observation"][:] = 5.0
    obs["action_mask"][:] = 0
    fresh = env.observe(actor)
    assert fresh["observation"].max() <= 1.0 and fresh["action_mask"].any()


# ----------------------------------------------------------------------------- seeding

def _trajectory(env, seed, steps=300, options=None):
    env.reset(seed=seed, options=options)
    rng = np.random.default_rng(99)
    out = []
    for agent in env.agent_iter(steps):
        obs, reward, term, trunc, info = env.last()
        out.append((agent, obs, reward, term, trunc, info))
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return out


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_reseeding_the_same_instance_reproduces(variant):
    env = pass_cut_run_v0.raw_env(**variant)
    first = _trajectory(env, 7)
    _trajectory(env, 8)
    again = _trajectory(env, 7)
    assert data_equivalence(first, again)
    # A fresh instance with the same seed plays the same game too.
    assert data_equivalence(first, _trajectory(pass_cut_run_v0.raw_env(**variant), 7))


def test_different_seeds_give_different_deals_and_unseeded_resets_continue_the_stream():
    env = pass_cut_run_v0.raw_env()
    deals = set()
    for seed in range(30):
        env.reset(seed=seed)
        deals.add(tuple(env.game.hands))
    assert len(deals) == 30
    env.reset(seed=3)
    first = tuple(env.game.hands)
    env.reset()
    assert tuple(env.game.hands) != first
    env.reset(seed=3)
    assert tuple(env.game.hands) == first


# ----------------------------------------------------------------------------- reset options

def test_options_set_dealer_round_and_a_chosen_deal():
    env = pass_cut_run_v0.raw_env()
    hands = [list(h) for h in SUIT_DEAL]
    hands[2] = [c.lower().replace("10", "T") for c in hands[2]]  # any case, "T" for ten
    env.reset(seed=0, options={"dealer": 2, "round": 3, "hands": hands})
    game = env.game
    assert (game.dealer, game.round_number, game.pass_direction) == (2, 3, PassDirection.RIGHT)
    assert [cards_of(h) for h in game.hands] == [[make_card(s, r) for r in range(13)] for s in range(4)]
    assert env.agent_selection == "player_3"
    # Card indices work too, as does a whitespace-separated string per seat.
    env.reset(options={"hands": [list(range(13 * s, 13 * s + 13)) for s in range(4)], "dealer": 0})
    assert cards_of(env.game.hands[1]) == list(range(13, 26))
    env.reset(options={"hands": [" ".join(h) for h in SUIT_DEAL], "dealer": 1})
    assert cards_of(env.game.hands[3]) == list(range(39, 52))
    # Unknown keys are ignored (PettingZoo's api_test passes one).
    env.reset(seed=0, options={"options": 1})


def test_options_six_players_with_kitty():
    env = pass_cut_run_v0.raw_env(players=6)
    hands = [[card_str(c) for c in range(8 * s, 8 * s + 8)] for s in range(6)]
    env.reset(options={"hands": hands, "kitty": ["JS", "QS", "KS", "AS"], "dealer": 5, "round": 4})
    assert cards_of(env.game.kitty) == [parse_card(c) for c in ("JS", "QS", "KS", "AS")]
    assert env.agent_selection == "player_0" and env.game.phase == Phase.BID


BAD_OPTIONS = [
    ({"dealer": 4}, "options['dealer'] = 4 is not a seat: allowed 0..3"),
    ({"dealer": -1}, "options['dealer'] = -1 is not a seat: allowed 0..3"),
    ({"dealer": "2"}, "options['dealer'] = '2' is not a seat"),
    ({"dealer": True}, "options['dealer'] = True is not a seat"),
    ({"dealer": 1.0}, "options['dealer'] = 1.0 is not a seat"),
    ({"round": 0}, "options['round'] = 0 is not a round number: allowed an integer >= 1"),
    ({"round": 2.5}, "options['round'] = 2.5 is not a round number"),
    ({"round": "3"}, "options['round'] = '3' is not a round number"),
    ({"hands": 5}, "options['hands'] must be a list of 4 card lists, not int"),
    ({"hands": [list(h) for h in SUIT_DEAL[:3]]}, "hands has 3 entries: expected one per seat (4)"),
    ({"hands": [SUIT_DEAL[0][:12]] + [list(h) for h in SUIT_DEAL[1:]]}, "hands[0] has 12 distinct of 12 cards"),
    ({"hands": [SUIT_DEAL[0][:12] + ["ZZ"]] + [list(h) for h in SUIT_DEAL[1:]]},
     "options['hands'][0]: card 'ZZ' is not a card name"),
    ({"hands": [SUIT_DEAL[0][:12] + [52]] + [list(h) for h in SUIT_DEAL[1:]]},
     "options['hands'][0]: 52 is not a card"),
    ({"hands": [SUIT_DEAL[0][:12] + ["2D"]] + [list(h) for h in SUIT_DEAL[1:]]}, "repeats card(s) ['2D']"),
    ({"hands": [SUIT_DEAL[0][:12] + ["2C"]] + [list(h) for h in SUIT_DEAL[1:]]}, "hands[0] has 12 distinct of 13 cards"),
    ({"hands": [list(h) for h in SUIT_DEAL], "kitty": ["AS"]}, "kitty has 1 cards: expected 0 distinct cards"),
    ({"kitty": ["AS"]}, "options['kitty'] was given without options['hands']"),
    ({"hands": [list(h) for h in SUIT_DEAL[:3]] + [{"AS": 1}]}, "options['hands'][3] must be a list of cards"),
]


@pytest.mark.parametrize("options, message", BAD_OPTIONS, ids=[str(i) for i in range(len(BAD_OPTIONS))])
def test_malformed_options_raise_value_error_saying_what_is_wrong(options, message):
    env = pass_cut_run_v0.raw_env()
    with pytest.raises(ValueError, match=re.escape(message)):
        env.reset(seed=0, options=options)


def test_options_must_be_a_dict_and_six_players_need_a_kitty():
    with pytest.raises(ValueError, match="options must be a dict, not str"):
        pass_cut_run_v0.raw_env().reset(options="dealer=1")
    env = pass_cut_run_v0.raw_env(players=6)
    hands = [list(range(8 * s, 8 * s + 8)) for s in range(6)]
    with pytest.raises(ValueError, match=re.escape("kitty has 0 cards: expected 4 distinct cards")):
        env.reset(options={"hands": hands})
    with pytest.raises(ValueError, match=re.escape("options['dealer'] = 6 is not a seat: allowed 0..5")):
        env.reset(options={"dealer": 6})


# ----------------------------------------------------------------------------- illegal actions

@pytest.mark.parametrize("action", [
    parse_card("AS"),  # a card the agent does not hold (seat 1 holds the diamonds)
    PASS_BID,          # not a pass-phase action
    70, -1,            # out of range
    3.0,               # an integral float is action 3 (3C), which seat 1 does not hold
], ids=["AS", "PASS_BID", "70", "-1", "3.0"])
def test_illegal_action_in_raw_env_names_agent_phase_action_and_legal_actions(action):
    """Malformed input (None, True, 8.5, arrays) is tested in test_action_input.py."""
    env = pass_cut_run_v0.raw_env()
    env.reset(seed=0, options={"hands": SUIT_DEAL, "dealer": 0, "round": 1})
    with pytest.raises(ValueError) as err:
        env.step(action)
    message = str(err.value)
    legal = ", ".join(str(c) for c in range(13, 26))
    assert message.startswith(f"illegal action {int(action)} (")
    assert "by player_1 in phase PASS" in message
    assert f"legal actions are [{legal}]" in message and "2D, 3D" in message
    # Nothing changed: the same agent still acts and a legal action works.
    assert env.agent_selection == "player_1" and env.game.passed == [0, 0, 0, 0]
    env.step(13)


def test_illegal_action_in_bidding_phase_lists_the_legal_bids():
    env = pass_cut_run_v0.raw_env(passing=False, first_dealer=3)
    env.reset(seed=0)
    env.step(bid_action(9))
    with pytest.raises(ValueError, match=re.escape("by player_1 in phase BID: legal actions are [61, 62, 63, 64, 65] "
                                                   "(bid 10, bid 11, bid 12, bid 13, no bid)")):
        env.step(bid_action(8))


def test_wrapped_env_ends_the_game_on_a_masked_action_and_asserts_on_out_of_range(caplog):
    env = pass_cut_run_v0.env()
    env.reset(seed=0)
    actor = env.agent_selection
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    env.step(illegal)  # TerminateIllegalWrapper: the mover loses, the game ends (logged, not raised)
    assert "Illegal move made" in caplog.text
    assert all(env.terminations.values())
    assert env.rewards[actor] == -1 and all(r == 0 for a, r in env.rewards.items() if a != actor)
    env = pass_cut_run_v0.env()
    env.reset(seed=0)
    with pytest.raises(AssertionError):
        env.step(NUM_ACTIONS)


# ----------------------------------------------------------------------------- rewards, infos, episodes

def _round_results_by_step(env, seed, rng_seed=0):
    """Random episode; return (per-agent reward sums, [round_result at each round end], final game)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    totals = {a: 0.0 for a in env.possible_agents}
    results = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        game = env.game
        n, tricks = game.config.players, game.config.num_tricks
        # This action completes the round: the last card of the last trick.
        ends_round = game.phase == Phase.PLAY and len(game.trick_winners) == tricks - 1 and len(game.trick) == n - 1
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
        if ends_round:
            assert set(env.infos) == set(env.possible_agents)
            rr = env.infos[env.possible_agents[0]]["round_result"]
            assert all(env.infos[a]["round_result"] == rr for a in env.possible_agents)
            results.append(rr)
    return totals, results, env.game


@pytest.mark.parametrize("players", [4, 6])
def test_round_result_in_every_agents_info_at_each_round_end(players):
    env = pass_cut_run_v0.raw_env(players=players, target_score=60)
    totals, results, game = _round_results_by_step(env, seed=2)
    assert results, "no round was completed"
    running = [0, 0]
    for rr in results:
        assert ROUND_RESULT_KEYS <= set(rr)
        assert sum(rr["tricks"]) == len(rr["trick_winners"]) == game.config.num_tricks
        assert rr["tricks"] == [sum(E.team_of(w) == t for w in rr["trick_winners"]) for t in (0, 1)]
        assert rr["trump"] in (0, 1, 2, 3) and rr["bid"] >= game.config.min_bid_value  # a suit index (C D H S)
        assert rr["winner"] == (-1 if rr["tricks"][0] == rr["tricks"][1] else int(rr["tricks"][1] > rr["tricks"][0]))
        assert rr["made"] == (rr["tricks"][rr["declarer"] % 2] >= rr["bid"])
        running = [running[t] + rr["scores"][t] for t in (0, 1)]
        assert rr["total_scores"] == running
    assert running == game.scores


@pytest.mark.parametrize("players", [4, 6])
def test_score_diff_rewards_sum_to_the_final_score_difference(players):
    env = pass_cut_run_v0.raw_env(players=players, target_score=60)
    totals, results, game = _round_results_by_step(env, seed=4)
    diff = game.scores[0] - game.scores[1]
    for seat, agent in enumerate(env.possible_agents):
        assert totals[agent] == (diff if seat % 2 == 0 else -diff)
    assert game.phase == Phase.GAME_OVER and len(results) >= 1


def test_win_reward_is_plus_minus_one_for_the_game():
    env = pass_cut_run_v0.raw_env(reward="win", target_score=40)
    for seed in range(3):
        totals, results, game = _round_results_by_step(env, seed=seed)
        assert game.winner in (0, 1) and not game.truncated
        sign = 1 if game.winner == 0 else -1
        assert [totals[a] for a in env.possible_agents] == [sign, -sign, sign, -sign]


def test_win_reward_is_zero_when_the_game_is_truncated():
    """Decided by the engine (RULES.md is silent): a truncated game has no winner, so "win" gives 0."""
    env = pass_cut_run_v0.raw_env(reward="win", max_rounds=1, target_score=1000)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    seen_truncation = False
    totals = {a: 0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            assert trunc and not term
            seen_truncation = True
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    assert seen_truncation and set(totals.values()) == {0}


def test_round_episode_with_win_reward_gives_the_sign_of_the_round_score_difference():
    """Decided by the engine: in "round" episodes, reward="win" is the sign of the round's score difference."""
    for seed in range(4):
        env = pass_cut_run_v0.raw_env(episode="round", reward="win")
        totals, results, game = _round_results_by_step(env, seed=seed)
        assert len(results) == 1
        diff = results[0]["scores"][0] - results[0]["scores"][1]
        sign = int(np.sign(diff))
        assert [totals[a] for a in env.possible_agents] == [sign, -sign, sign, -sign]


def test_round_episode_ends_after_one_scored_round_with_terminations():
    env = pass_cut_run_v0.raw_env(episode="round")
    env.reset(seed=0, options={"hands": SUIT_DEAL, "dealer": 0, "round": 4})
    assert env.agent_selection == "player_1" and env.game.phase == Phase.BID
    # Seat 2 (every heart) declares 7, names hearts and takes all 13 tricks: 13 + 25 for team 0.
    for action in (PASS_BID, bid_action(7), PASS_BID, PASS_BID):
        env.step(action)
    assert env.agent_selection == "player_2" and env.game.phase == Phase.TRUMP
    env.step(trump_action("H"))
    while not any(env.terminations.values()):
        assert not any(env.rewards.values())
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards == {"player_0": 38, "player_1": -38, "player_2": 38, "player_3": -38}
    rr = env.infos["player_0"]["round_result"]
    assert (rr["declarer"], rr["bid"], rr["trump"], rr["made"], rr["tricks"]) == (2, 7, 2, True, [13, 0])
    assert pcr_env.cards.SUITS[rr["trump"]] == "H" and rr["winner"] == 0
    assert rr["run_bonus"] == [25, 0] and rr["scores"] == [38, 0] and rr["total_scores"] == [38, 0]
    assert rr["trick_winners"] == [2] * 13
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        assert term and info["round_result"] == rr and reward == (38 if agent in ("player_0", "player_2") else -38)
        env.step(None)
    assert env.agents == []


def test_too_many_redeals_truncate_the_episode():
    env = pass_cut_run_v0.raw_env(passing=False, max_redeals=1)
    env.reset(seed=0)
    for _ in range(8):
        env.step(PASS_BID)
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert all(r == 0 for r in env.rewards.values())
    assert env.game.truncated and env.game.phase == Phase.GAME_OVER


# ----------------------------------------------------------------------------- state()

@pytest.mark.parametrize("players", [4, 6])
def test_state_holds_every_hand_for_a_centralised_critic(players):
    env = pass_cut_run_v0.raw_env(players=players)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    layout = state_layout(players)
    for _ in range(40):
        state = env.state()
        assert env.state_space.contains(state) and state.dtype == np.float32
        np.testing.assert_array_equal(state[layout["observation"]], encode_observation(env.game, 0))
        hidden = state[layout["other_hands"]].reshape(players - 1, 52)
        for k in range(1, players):
            assert np.flatnonzero(hidden[k - 1]).tolist() == cards_of(env.game.hands[k])
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))


# ----------------------------------------------------------------------------- render

def test_render_ansi_returns_the_table_as_text():
    env = pass_cut_run_v0.raw_env(render_mode="ansi")
    env.reset(seed=0, options={"hands": SUIT_DEAL, "dealer": 3, "round": 4})
    text = env.render()
    assert isinstance(text, str)
    assert "Round 4" in text and "dealer 3" in text and "phase BID" in text
    assert "S: A K Q J 10 9 8 7 6 5 4 3 2" in text  # seat 3's spades, spectator view
    env.step(bid_action(7))
    for _ in range(3):
        env.step(PASS_BID)
    env.step(trump_action("C"))
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    text = env.render()
    assert "Contract 7 by seat 0" in text and "trump C" in text and "Trick: 0:2C" in text


def test_render_human_prints_on_reset_and_step(capsys):
    env = pass_cut_run_v0.env(render_mode="human")
    env.reset(seed=0)
    assert "Round 1" in capsys.readouterr().out
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert env.render() is None
    assert "phase PASS" in capsys.readouterr().out
    env.close()


def test_render_without_a_mode_warns():
    env = pass_cut_run_v0.raw_env()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert env.render() is None


# ----------------------------------------------------------------------------- pickling

@pytest.mark.parametrize("variant", [{}, {"players": 6, "bidding": "auction"}], ids=["default", "six-auction"])
@pytest.mark.parametrize("make", [pass_cut_run_v0.env, pass_cut_run_v0.raw_env], ids=["env", "raw_env"])
def test_pickled_environment_plays_the_same_game(make, variant):
    env = make(**variant)
    clone = pickle.loads(pickle.dumps(env))
    assert type(clone) is type(env)
    assert data_equivalence(_trajectory(env, 11, steps=200), _trajectory(clone, 11, steps=200))
    # Mid-game pickling works too (EzPickle rebuilds from the constructor arguments).
    clone2 = pickle.loads(pickle.dumps(env))
    assert data_equivalence(_trajectory(clone2, 11, steps=200), _trajectory(env, 11, steps=200))


@pytest.mark.skipif(not hasattr(pettingzoo, "register"), reason="PettingZoo < 1.27 has no registry")
def test_registered_in_pettingzoos_registry_with_rules_keywords():
    env = pettingzoo.make("aec", "pcr/pass_cut_run-v0", players=6, episode="round")
    env.reset(seed=3)
    assert env.unwrapped.metadata["name"] == "pass_cut_run_v0"
    assert env.possible_agents == [f"player_{i}" for i in range(6)]
