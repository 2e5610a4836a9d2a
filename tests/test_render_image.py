"""render_mode="rgb_array": pictures of the table (pcr_env.render_image) for the AEC env and the Gymnasium view.

The AEC env draws a spectator's view from the engine (every hand face up); the
Gymnasium view draws its learner's own view from the observation only, so a
hidden card can never reach the picture. Both are ``(720, 960, 3)`` ``uint8``,
deterministic, and work with Gymnasium's video/frame wrappers and SB3's
``make_vec_env`` (which asks for ``render_mode="rgb_array"``).
"""

from __future__ import annotations

import dataclasses

import gymnasium
import numpy as np
import pytest
from conftest import require_library

import pcr_env  # noqa: F401  (registers PassCutRun-v0)
from pcr_env import engine as E
from pcr_env import pass_cut_run_v0
from pcr_env.cards import suit_of
from pcr_env.config import RulesConfig
from pcr_env.gym_env import ENV_ID, PassCutRunEnv
from pcr_env.observation import encode_observation
from pcr_env.render_image import HEIGHT, SIZE, WIDTH, TableScene, draw_scene, render_observation, render_state

SHAPE = (HEIGHT, WIDTH, 3)
RED = np.array([204, 28, 44])


def _random_state(players=4, steps=60, seed=3):
    rng = np.random.default_rng(seed)
    game = E.new_game(RulesConfig(players=players, first_dealer=0), rng)
    for _ in range(steps):
        legal = E.legal_actions(game)
        E.apply_action(game, legal[rng.integers(len(legal))], rng)
        if game.phase == E.Phase.ROUND_END:
            E.start_next_round(game, rng)
    return game


def _obs(game, seat):
    mask = E.legal_mask(game) if game.current == seat else np.zeros(70, np.int8)
    return {"observation": encode_observation(game, seat), "action_mask": mask}


def _reddish(image):
    return int((np.abs(image.astype(int) - RED).sum(axis=2) < 40).sum())


def test_size_is_video_friendly():
    assert SIZE == (960, 720) and WIDTH % 16 == 0 and HEIGHT % 16 == 0


# ------------------------------------------------------------------------------------------ AEC env
@pytest.mark.parametrize("variant", [{}, {"players": 6}, {"passing": False, "bidding": "auction"}],
                         ids=["default", "six", "auction"])
def test_aec_rgb_array_is_an_hxwx3_uint8_picture_that_follows_the_game(variant):
    env = pass_cut_run_v0.raw_env(render_mode="rgb_array", **variant)
    assert "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=4)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.shape == SHAPE and first.dtype == np.uint8
    assert first.std() > 10  # a picture, not a blank
    rng = np.random.default_rng(0)
    seen = [first]
    for _ in range(40):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        frame = env.render()
        assert frame.shape == SHAPE and frame.dtype == np.uint8
        assert not np.array_equal(frame, seen[-1])  # every decision changes the table
        seen.append(frame)


def test_aec_picture_is_deterministic_for_a_seeded_state():
    a, b = (pass_cut_run_v0.raw_env(render_mode="rgb_array") for _ in range(2))
    a.reset(seed=11)
    b.reset(seed=11)
    assert np.array_equal(a.render(), b.render())
    b.reset(seed=12)
    assert not np.array_equal(a.render(), b.render())


def test_aec_picture_is_the_spectator_view_with_every_hand():
    game = _random_state(steps=5)
    scene = TableScene.from_state(game)
    assert scene.viewer == 0 and all(hand is not None for hand in scene.hands)
    assert [sorted(h) for h in scene.hands] == [E.cards_of(h) for h in game.hands]
    # Changing a hidden hand changes the spectator's picture (it shows every hand)...
    other = game.copy()
    other.hands[1], other.hands[3] = other.hands[3], other.hands[1]
    assert not np.array_equal(render_state(game), render_state(other))


def test_red_suits_are_drawn_red_and_black_suits_are_not():
    game = _random_state(steps=5)  # passing: seat 0's whole hand is on show at the bottom
    scene = TableScene.from_state(game)
    black = dataclasses.replace(scene, hands=[[c for c in h if suit_of(c) in (0, 3)] for h in scene.hands])
    red = dataclasses.replace(scene, hands=[[c for c in h if suit_of(c) in (1, 2)] for h in scene.hands])
    assert any(suit_of(c) in (1, 2) for c in scene.hands[0])
    assert _reddish(draw_scene(black)) * 5 < _reddish(draw_scene(scene)) <= _reddish(draw_scene(red)) + 50


def test_wrapped_env_renders_too_and_pettingzoos_render_test_passes():
    from pettingzoo.test import render_test

    env = pass_cut_run_v0.env(render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render().shape == SHAPE
    render_test(lambda render_mode=None: pass_cut_run_v0.env(render_mode=render_mode))


def test_render_before_reset_says_so():
    env = pass_cut_run_v0.raw_env(render_mode="rgb_array")
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        env.render()


# ------------------------------------------------------------------------------------------ Gym view
class _Random:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, obs):
        return int(self.rng.choice(np.flatnonzero(obs["action_mask"])))


@pytest.mark.parametrize("kwargs", [{}, {"seat": 3, "players": 6}, {"team": True, "seat": 1}],
                         ids=["seat0", "six-seat3", "team"])
def test_gym_rgb_array_is_the_learners_own_view(kwargs):
    env = PassCutRunEnv(others=_Random(), render_mode="rgb_array", episode="round", **kwargs)
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(1)
    previous = None
    while True:
        frame = env.render()
        assert frame.shape == SHAPE and frame.dtype == np.uint8
        seat = info["seat"]
        # Drawn from the learner's observation only (plus the public round number).
        expected = render_observation(env._aec.observe(f"player_{seat}"), seat, rules=env.rules,
                                      round_number=env.game.round_number)
        assert np.array_equal(frame, expected)
        assert previous is None or not np.array_equal(frame, previous)
        previous = frame
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            break
    assert env.render().shape == SHAPE  # the final table, after the episode


@pytest.mark.parametrize("players, steps", [(4, 5), (4, 70), (6, 40)])
def test_gym_picture_shows_no_hidden_card(players, steps):
    game = _random_state(players=players, steps=steps)
    seat = game.current
    scene = TableScene.from_observation(_obs(game, seat), seat)
    assert sorted(scene.hands[seat]) == E.cards_of(game.hands[seat])
    assert all(h is None for s, h in enumerate(scene.hands) if s != seat)
    # Swap two other seats' hands (and their private passes): the learner's picture cannot change.
    others = [s for s in range(players) if s != seat]
    pairs = [(a, b) for a in others for b in others if a < b
             and game.hands[a].bit_count() == game.hands[b].bit_count()
             and game.passed[a].bit_count() == game.passed[b].bit_count()]
    assert pairs
    a, b = pairs[0]
    swapped = game.copy()
    swapped.hands[a], swapped.hands[b] = swapped.hands[b], swapped.hands[a]
    swapped.passed[a], swapped.passed[b] = swapped.passed[b], swapped.passed[a]
    assert np.array_equal(render_observation(_obs(game, seat), seat), render_observation(_obs(swapped, seat), seat))
    assert not np.array_equal(render_state(game, seat), render_state(swapped, seat))  # the spectator's does change


def test_gym_picture_is_deterministic_and_marks_the_legal_cards():
    envs = [PassCutRunEnv(others=_Random(), render_mode="rgb_array") for _ in range(2)]
    frames = []
    for env in envs:
        env.reset(seed=5)
        frames.append(env.render())
    assert np.array_equal(*frames)
    scene = TableScene.from_observation(envs[0]._aec.observe("player_0"), 0)
    assert scene.current == 0 and scene.legal == [int(a) for a in np.flatnonzero(envs[0].action_masks())]


def test_gymnasium_make_with_rgb_array_and_render_collection():
    env = gymnasium.make(ENV_ID, others=_Random(), episode="round", render_mode="rgb_array")
    env = gymnasium.wrappers.RenderCollection(env)
    env.reset(seed=0)
    done, steps = False, 0
    while not done:
        *_, terminated, truncated, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        done, steps = terminated or truncated, steps + 1
    frames = env.render()
    assert len(frames) == steps + 1 and all(f.shape == SHAPE and f.dtype == np.uint8 for f in frames)


def test_record_video_writes_a_video(tmp_path):
    require_library("moviepy")  # the `video` extra (in `all`); fails instead of skipping in CI
    env = gymnasium.make(ENV_ID, others=_Random(), episode="round", render_mode="rgb_array")
    folder = tmp_path / "videos"  # a new folder: RecordVideo warns when it overwrites one
    env = gymnasium.wrappers.RecordVideo(env, str(folder), episode_trigger=lambda e: True, disable_logger=True)
    env.reset(seed=0)
    done = False
    while not done:
        *_, terminated, truncated, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        done = terminated or truncated
    env.close()
    videos = list(folder.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_sb3_make_vec_env_builds_and_steps_with_its_default_rgb_array():
    """make_vec_env("PassCutRun-v0") asks for render_mode="rgb_array" (and used to fail on it)."""
    require_library("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(ENV_ID, n_envs=2, seed=0)  # exactly the documented one-liner: no render_mode=None glue
    try:
        venv.reset()
        for _ in range(30):
            masks = np.stack(venv.env_method("action_masks"))
            actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
            venv.step(actions)
        images = venv.get_images()
        assert len(images) == 2 and all(i.shape == SHAPE and i.dtype == np.uint8 for i in images)
    finally:
        venv.close()
