"""The single-agent Gymnasium view (pcr_env.gym_env.PassCutRunEnv, id "PassCutRun-v0").

What matters most is credit: a step must return exactly what the learner's seat
(its team with ``team=True``) earned from its action until its next decision,
including rounds that end on another seat's card (R8 scores, counted once per
team), and nothing of the other team's. The AEC env's per-seat rewards are the
reference: the wrapper is replayed against a bare ``raw_env`` fed the same
actions, and the sum of every seat's AEC rewards between two learner decisions
must equal the wrapper's step reward.
"""

from __future__ import annotations

import copy
import re

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import pcr_env
from pcr_env import engine as E
from pcr_env.actions import NUM_ACTIONS, PASS_BID, bid_action
from pcr_env.config import RulesConfig
from pcr_env.gym_env import ENV_ID, PassCutRunEnv
from pcr_env.observation import encode_observation, observation_size
from pcr_env.pass_cut_run_v0 import raw_env

# check_env warns that the observation Box is unbounded: only the `scores` slice is
# (game totals can go arbitrarily negative, R8.2), and that is by design.
UNBOUNDED_BOX = "ignore:.*A Box observation space (minimum|maximum) value is:UserWarning"
# check_env on a gymnasium.make() env notes that the env is wrapped; we check both on purpose.
WRAPPED_ENV = "ignore:.*is different from the unwrapped version:UserWarning"


class SeededRandom:
    """A uniformly random legal player; ``reset(seed)`` (the agents convention) lets the wrapper re-seed it."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs: dict) -> int:
        return int(self.rng.choice(np.flatnonzero(obs["action_mask"])))


class Recording:
    """Wraps an agent and records (seat-agnostic) every action it chose, in order."""

    def __init__(self, inner):
        self.inner, self.actions = inner, []

    def reset(self, seed: int) -> None:
        self.inner.reset(seed)

    def act(self, obs: dict) -> int:
        a = self.inner.act(obs)
        self.actions.append(a)
        return a


def run_episode(env: PassCutRunEnv, seed: int, policy_rng: np.random.Generator, **reset_kwargs):
    """Play one episode with a random masked learner; returns the list of (seat, action, reward, info)."""
    obs, info = env.reset(seed=seed, **reset_kwargs)
    steps = []
    while True:
        mask = env.action_masks()
        assert np.array_equal(mask, info["action_mask"])
        action = int(policy_rng.choice(np.flatnonzero(mask)))
        seat = info["seat"]
        obs, reward, terminated, truncated, info = env.step(action)
        steps.append((seat, action, reward, info, terminated, truncated))
        if terminated or truncated:
            return steps


# --------------------------------------------------------------- registration
def test_import_registers_the_gymnasium_id():
    assert ENV_ID == "PassCutRun-v0"
    assert ENV_ID in gymnasium.registry
    env = gymnasium.make(ENV_ID, others=SeededRandom())
    assert isinstance(env.unwrapped, PassCutRunEnv)
    assert env.observation_space.shape == (observation_size(4),)
    assert env.action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    # Also without importing pcr_env first: Gymnasium's "module:id" form.
    assert gymnasium.make(f"pcr_env:{ENV_ID}", others=SeededRandom()).unwrapped.seat == 0


def test_make_takes_the_rules_config_and_the_other_seats_specs_as_keywords():
    env = gymnasium.make(ENV_ID, rules=RulesConfig(players=6, passing=False), others=[SeededRandom()] * 5, seat=3)
    assert env.unwrapped.rules.players == 6 and env.unwrapped.rules.passing is False
    assert env.observation_space.shape == (observation_size(6),)
    env = gymnasium.make(ENV_ID, rules={"double_run_bonus": True}, target_score=50,
                         others={1: SeededRandom(), 2: SeededRandom(), 3: SeededRandom()})
    assert env.unwrapped.rules.double_run_bonus and env.unwrapped.rules.target_score == 50


@pytest.mark.filterwarnings(UNBOUNDED_BOX)
@pytest.mark.filterwarnings(WRAPPED_ENV)
@pytest.mark.parametrize("kwargs", [
    {},
    {"episode": "round", "seat": 2},
    {"team": True, "seat": 1, "reward": "win"},
    {"rules": {"players": 6, "bidding": "auction"}, "seat": 5},
], ids=["default", "round-seat2", "team-win", "six-auction"])
def test_passes_gymnasiums_env_checker(kwargs):
    env = gymnasium.make(ENV_ID, others=SeededRandom(), **kwargs)
    check_env(env.unwrapped)
    check_env(env)  # through gymnasium.make's wrappers, with the render modes made from the spec


@pytest.mark.filterwarnings(UNBOUNDED_BOX)
def test_agent_specs_are_resolved_by_the_agents_package_when_made():
    import agents

    assert gymnasium.registry[ENV_ID].entry_point == "agents.registry:make_gym_env"  # a string: no import for it
    env = gymnasium.make(ENV_ID, others=["random", "heuristic", "random"], episode="round")
    resolved = env.unwrapped.other_agents  # built once, by agents.make_agents, for the env's rules
    first = run_episode(env.unwrapped, seed=3, policy_rng=np.random.default_rng(0))
    assert isinstance(resolved[1], agents.RandomAgent) and isinstance(resolved[2], agents.HeuristicAgent)
    again = run_episode(env.unwrapped, seed=3, policy_rng=np.random.default_rng(0))
    assert [s[:3] for s in first] == [s[:3] for s in again]  # seeded reset re-seeds the spec-built agents
    assert env.unwrapped.other_agents[1] is resolved[1]  # built once, re-seeded with reset(seed)
    check_env(gymnasium.make(ENV_ID, others="heuristic").unwrapped)
    # Specs and objects mix; a factory (other_seats, rules) -> {seat: agent} is passed through.
    mixed = gymnasium.make(ENV_ID, others={1: "heuristic", 2: SeededRandom(), 3: "random"}).unwrapped
    assert isinstance(mixed.other_agents[1], agents.HeuristicAgent) and isinstance(mixed.other_agents[2], SeededRandom)
    made = gymnasium.make(ENV_ID, others=lambda seats, rules: agents.make_agents("greedy", seats, rules=rules)).unwrapped
    assert all(isinstance(a, agents.GreedyAgent) for a in made.other_agents.values())


def test_the_env_class_takes_agent_objects_or_a_factory_never_spec_strings():
    from agents import make_agents

    env = PassCutRunEnv(others=lambda seats, rules: make_agents("random", seats, rules=rules), episode="round")
    assert sorted(env.other_agents) == [1, 2, 3]
    with pytest.raises(ValueError, match=r"others\[1\] = 'random' is not allowed: PassCutRunEnv takes agent objects"):
        PassCutRunEnv(others="random")
    with pytest.raises(ValueError, match="others is required"):
        PassCutRunEnv()

    class ActOnly:
        def act(self, obs):
            return int(np.flatnonzero(obs["action_mask"])[0])

    with pytest.raises(ValueError, match=r"others\[1\] = .*ActOnly.* is not allowed: allowed an agent object with act"):
        PassCutRunEnv(others=ActOnly())


def test_a_seeded_reset_seeds_each_other_seat_from_the_seed_and_the_seat():
    from pcr_env.seating import derive_seed

    others = {s: Recording(SeededRandom()) for s in (1, 2, 3)}
    seen = {}
    for s, rec in others.items():
        rec.reset = lambda seed, s=s, rec=rec: (seen.__setitem__(s, seed), Recording.reset(rec, seed))
    env = PassCutRunEnv(0, others, episode="round")
    env.reset(seed=7)
    assert seen == {s: derive_seed(7, s) for s in (1, 2, 3)}
    seen.clear()
    env.reset()  # no seed: the agents run on
    assert seen == {}


# ---------------------------------------------------------------------- credit
def clone_aec(env: PassCutRunEnv) -> raw_env:
    """A fresh bare AEC env in the wrapper's current game state (same deck RNG state)."""
    ref = raw_env(episode=env.episode, reward=env.reward_kind, **env.rules.to_dict())
    ref.reset()
    ref.game = env.game.copy()
    ref.np_random = copy.deepcopy(env.np_random)
    tracker = getattr(ref, "_tracker", None)  # an observation cache, in engines that keep one
    if tracker is not None:
        tracker.reset()  # re-encode observations from the copied game
    ref.agent_selection = ref.possible_agents[ref.game.current]
    return ref


@pytest.mark.parametrize("seat,team", [(0, False), (1, False), (3, False), (2, True), (1, True)])
@pytest.mark.parametrize("episode,reward", [("game", "score_diff"), ("round", "score_diff"), ("game", "win")])
def test_step_rewards_equal_the_aec_rewards_of_the_learner_until_its_next_decision(seat, team, episode, reward):
    n = 4
    learner = [s for s in range(n) if (s % 2 == seat % 2 if team else s == seat)]
    others = {s: Recording(SeededRandom()) for s in range(n) if s not in learner}
    env = PassCutRunEnv(seat, others, team=team, episode=episode, reward=reward, target_score=30)
    learner_agent = f"player_{seat}"  # team rewards are identical within a team: one seat counts the team once
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        aec = clone_aec(env)  # the reference: a bare AEC env at the learner's first decision
        for rec in others.values():
            rec.actions.clear()
        policy = np.random.default_rng(seed + 100)
        got, expected_seats = [], []
        while True:
            action = int(policy.choice(np.flatnonzero(env.action_masks())))
            expected_seats.append(info["seat"])
            obs, reward, terminated, truncated, info = env.step(action)
            got.append((action, reward))
            if terminated or truncated:
                break
        queues = {s: list(r.actions) for s, r in others.items()}
        expected = []
        for (action, _), s in zip(got, expected_seats):
            assert aec.game.current == s
            aec.step(action)
            total = float(aec.rewards[learner_agent])
            while not (all(aec.terminations.values()) or all(aec.truncations.values())) and aec.game.current not in learner:
                aec.step(queues[aec.game.current].pop(0))
                total += float(aec.rewards[learner_agent])
            expected.append(total)
        assert all(not q for q in queues.values()), "the replay used every recorded opponent action"
        assert [r for _, r in got] == expected
        assert all(aec.terminations.values()) == terminated and all(aec.truncations.values()) == truncated


@pytest.mark.parametrize("seat,team", [(0, False), (1, False), (2, True), (3, True)])
def test_each_round_score_reaches_the_learner_once_on_the_step_it_ended(seat, team):
    """R8: a round's margin for the learner's team arrives on exactly the step during which it ended,
    also when the round's last card was an opponent's (the learner is then not the one who acted last)."""
    n = 4
    learner = [s for s in range(n) if (s % 2 == seat % 2 if team else s == seat)]
    env = PassCutRunEnv(seat, SeededRandom(), team=team, episode="game", target_score=40)
    mine = seat % 2
    ended_on_opponents_card = 0
    for seed in range(4):
        steps = run_episode(env, seed, np.random.default_rng(seed))
        for _, _, reward, info, _, _ in steps:
            result = info.get("round_result")
            expected = 0.0 if result is None else result["scores"][mine] - result["scores"][1 - mine]
            assert reward == expected
            if result is not None:
                last_leader = result["trick_winners"][-2]  # R6.1: it led the final trick
                if (last_leader - 1) % n not in learner:  # so its right-hand neighbour played the round's last card
                    ended_on_opponents_card += 1
        final = steps[-1][3]["final_scores"]
        assert sum(s[2] for s in steps) == final[mine] - final[1 - mine]
    assert ended_on_opponents_card > 0


@pytest.mark.parametrize("players,team_seats", [(4, {1, 3}), (6, {1, 3, 5})])
def test_team_mode_plays_every_partner_from_their_own_chairs(players, team_seats):
    env = PassCutRunEnv(1, SeededRandom(), team=True, episode="round", players=players)
    assert set(env.learner_seats) == team_seats and len(env.other_seats) == players - len(team_seats)
    seats_seen = set()
    obs, info = env.reset(seed=5)
    while True:
        seat = info["seat"]
        seats_seen.add(seat)
        assert seat in team_seats and env.game.current == seat
        assert np.array_equal(obs, encode_observation(env.game, seat))  # its own view only: no partner's hand
        assert np.array_equal(env.action_masks(), info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if terminated or truncated:
            break
    assert seats_seen == team_seats


def test_observation_is_the_learner_seats_own_and_mask_is_its_legal_set():
    env = PassCutRunEnv(2, SeededRandom(), episode="round")
    obs, info = env.reset(seed=9)
    rng = np.random.default_rng(0)
    while True:
        game = env.game
        assert game.current == 2
        assert np.array_equal(obs, encode_observation(game, 2))
        legal = np.zeros(NUM_ACTIONS, np.int8)
        legal[E.legal_actions(game)] = 1
        assert np.array_equal(env.action_masks(), legal) and env.action_masks().dtype == np.int8
        obs, _, terminated, truncated, info = env.step(int(rng.choice(E.legal_actions(game))))
        if terminated or truncated:
            break
    assert env.action_masks().all()  # after the end: all allowed (no division by zero in masked softmaxes)


def test_win_reward_is_plus_or_minus_one_at_the_end_only():
    env = PassCutRunEnv(1, SeededRandom(), reward="win", target_score=25)
    steps = run_episode(env, 4, np.random.default_rng(4))
    rewards = [s[2] for s in steps]
    assert all(r == 0 for r in rewards[:-1])
    final = steps[-1][3]["final_scores"]
    assert rewards[-1] == (1.0 if final[1] > final[0] else -1.0)  # R8.4 from team 1's side


# ----------------------------------------------------------- illegal / errors
def test_illegal_learner_action_ends_the_episode_with_the_penalty():
    env = PassCutRunEnv(0, SeededRandom())
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(bid_action(7))  # a bid during the pass phase
    assert terminated and not truncated and reward == -100.0 and info["illegal_action"]
    assert "not legal" in env.illegal_action_detail and "illegal_action_detail" not in info  # infos: numbers only
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env = PassCutRunEnv(0, SeededRandom(), reward="win", illegal_reward=-5)
    env.reset(seed=0)
    assert env.step(NUM_ACTIONS)[1] == -5.0


def test_an_opponent_agent_that_cheats_is_named():
    class Cheater:
        def reset(self, seed=None):
            pass

        def act(self, obs):
            return PASS_BID if obs["action_mask"][PASS_BID] == 0 else 0

    env = PassCutRunEnv(0, {1: Cheater(), 2: SeededRandom(), 3: SeededRandom()}, rules={"first_dealer": 0})
    with pytest.raises(ValueError, match="seat 1 chose 65"):
        env.reset(seed=0)  # seat 1 passes first when seat 0 deals


@pytest.mark.parametrize("kwargs,match", [
    ({"seat": 4}, "seat 4 is not allowed: allowed a seat 0..3"),
    ({"seat": True}, "seat True is not allowed"),
    ({"others": ["random"] * 2}, "others has 2 entries: expected one per other seat"),
    ({"others": {1: "random", 2: "random"}}, "must name exactly the other seats"),
    ({"others": [1, 2, 3]}, r"others\[1\] = 1 is not allowed"),
    ({"team": True, "others": ["random"] * 3}, r"others has 3 entries: expected one per other seat \[1, 3\]"),
    ({"team": "yes"}, "team 'yes' is not allowed"),
    ({"episode": "hand"}, "episode 'hand' is not allowed"),
    ({"reward": "tricks"}, "reward 'tricks' is not allowed"),
    ({"render_mode": "rgb"}, r"render_mode 'rgb' is not allowed: allowed \['ansi', 'human', 'rgb_array'\]"),
    ({"rules": {"players": 5}}, "rules field 'players' = 5 is not allowed"),
    ({"rules": {"colour": 1}}, r"rules has unknown rules field\(s\) \['colour'\]"),  # a bad value of rules=
    ({"players": 6, "seat": 6}, "seat 6 is not allowed: allowed a seat 0..5"),
    ({"rules": {"passing": False}, "passing": True}, "given both in rules= and as keyword arguments"),
    ({"rules": 7}, "rules must be a RulesConfig or a mapping"),
])
def test_bad_arguments_raise_naming_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PassCutRunEnv(**kwargs)
    if "render_mode" not in kwargs:  # gymnasium.make warns about an unknown render mode before the env refuses it
        with pytest.raises(ValueError, match=match):
            gymnasium.make(ENV_ID, **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    ({"frameskip": 4}, "frameskip"),  # TorchRL's GymEnv passes it and retries without it only on this TypeError
    ({"player": 6}, "player' (did you mean 'players'?)"),
    ({"rules": {"passing": False}, "colour": 1}, "colour"),
])
def test_unknown_keywords_raise_type_error_naming_them(kwargs, name):
    message = f"PassCutRunEnv() got an unexpected keyword argument '{name}"
    with pytest.raises(TypeError, match=re.escape(message)):
        PassCutRunEnv(**kwargs)
    with pytest.raises(TypeError, match=re.escape(message)):
        gymnasium.make(ENV_ID, **kwargs)


# ------------------------------------------------------------------- seeding
def test_seeded_reset_replays_the_same_episode_including_opponents():
    env = PassCutRunEnv(1, SeededRandom(), episode="game", target_score=30)
    a = run_episode(env, 11, np.random.default_rng(0))
    run_episode(env, 12, np.random.default_rng(0))
    b = run_episode(env, 11, np.random.default_rng(0))
    assert [(s, x, r) for s, x, r, *_ in a] == [(s, x, r) for s, x, r, *_ in b]
    c = run_episode(env, 12, np.random.default_rng(0))
    assert [x for _, x, *_ in a] != [x for _, x, *_ in c]


def test_reset_options_choose_the_deal():
    env = PassCutRunEnv(0, SeededRandom(), episode="round")
    hands = [[s * 13 + r for r in range(13)] for s in range(4)]  # seat s holds every card of suit s
    obs, info = env.reset(seed=0, options={"dealer": 3, "hands": hands})
    view = pcr_env.decode_observation(obs)
    assert view.hand == list(range(13)) and view.dealer == 3  # relative seat 3: seat 0's right-hand neighbour
    assert env.game.dealer == 3


def test_render_shows_the_learners_view_only():
    env = PassCutRunEnv(0, SeededRandom(), render_mode="ansi", episode="round")
    env.reset(seed=2)
    text = env.render()
    hand = pcr_env.decode_observation(env._aec.observe("player_0")).hand
    partner = E.cards_of(env.game.hands[2])
    assert "Your hand (13)" in text and "Legal:" in text
    assert all(pcr_env.card_str(c) in text for c in hand)
    assert not any(pcr_env.card_str(c) in text.split("Legal:")[0] for c in partner)  # no hidden card is shown
