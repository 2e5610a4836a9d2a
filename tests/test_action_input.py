"""What step() accepts as an action, and what it does after the game is over.

The rule (``pcr_env.actions.action_id``, the same for ``raw_env``, ``env()`` and
the Gymnasium view): any integer-valued scalar is that action (Python and numpy
integers, 0-d arrays, 0-d tensors, integral floats such as ``8.0``). Anything else
is refused before the state changes: ``TypeError`` when the input is not one
number (``None`` on a live agent, bools, strings, arrays with ``ndim > 0``),
``ValueError`` when it is a number that is not whole (``8.5``), and, in
``raw_env``, when a well-formed id is not legal now (every message names the
agent, the phase and the legal actions and never contradicts itself).
"""

from __future__ import annotations

import logging
import re
from fractions import Fraction

import gymnasium
import numpy as np
import pytest
from conftest import non_numeric_leaves

import pcr_env  # noqa: F401  (registers PassCutRun-v0)
from pcr_env import pass_cut_run_v0
from pcr_env.actions import action_id
from pcr_env.cards import card_str, make_card
from pcr_env.gym_env import PassCutRunEnv

SUIT_DEAL = [[card_str(make_card(s, r)) for r in range(13)] for s in range(4)]
# Dealer 0, round 1: seat 1 passes first and holds the diamonds, action ids 13..25; 21 is 10D.
LEGAL = list(range(13, 26))

try:
    import torch
except ImportError:  # pragma: no cover - torch is a core dependency, but the rule does not need it
    torch = None


def _fresh_raw():
    env = pass_cut_run_v0.raw_env()
    env.reset(seed=0, options={"hands": SUIT_DEAL, "dealer": 0, "round": 1})
    return env


def _fresh_wrapped():
    env = pass_cut_run_v0.env()
    env.reset(seed=0, options={"hands": SUIT_DEAL, "dealer": 0, "round": 1})
    return env


ACCEPTED = [
    pytest.param(21, id="int"),
    pytest.param(np.int64(21), id="np.int64"),
    pytest.param(np.uint8(21), id="np.uint8"),
    pytest.param(np.array(21), id="0-d array"),
    pytest.param(np.array(21, dtype=np.int32), id="0-d int32 array"),
    pytest.param(21.0, id="float 21.0"),
    pytest.param(np.float32(21.0), id="np.float32"),
    pytest.param(np.array(21.0), id="0-d float array"),
    pytest.param(Fraction(42, 2), id="Fraction"),
]
if torch is not None:
    ACCEPTED += [pytest.param(torch.tensor(21), id="0-d tensor"), pytest.param(torch.tensor(21.0), id="0-d float tensor")]

NOT_A_NUMBER = [  # TypeError
    pytest.param(True, id="True"),
    pytest.param(False, id="False"),
    pytest.param(np.bool_(True), id="np.bool_"),
    pytest.param(np.array(True), id="0-d bool array"),
    pytest.param("21", id="str"),
    pytest.param(b"21", id="bytes"),
    pytest.param(np.array([21]), id="array (1,)"),
    pytest.param(np.array([[21]]), id="array (1,1)"),
    pytest.param([21], id="list"),
    pytest.param((21,), id="tuple"),
    pytest.param(None, id="None"),
    pytest.param(object(), id="object"),
    pytest.param(21 + 0j, id="complex"),
]
if torch is not None:
    NOT_A_NUMBER += [pytest.param(torch.tensor([21]), id="tensor (1,)"), pytest.param(torch.tensor(True), id="bool tensor")]

NOT_WHOLE = [  # ValueError
    pytest.param(21.5, id="21.5"),
    pytest.param(np.float64(21.5), id="np 21.5"),
    pytest.param(float("nan"), id="nan"),
    pytest.param(float("inf"), id="inf"),
]


# ------------------------------------------------------------------------------- the rule itself
@pytest.mark.parametrize("action", ACCEPTED)
def test_action_id_accepts_every_integer_valued_scalar(action):
    assert action_id(action) == 21 and type(action_id(action)) is int


@pytest.mark.parametrize("action", NOT_A_NUMBER)
def test_action_id_refuses_what_is_not_one_number_with_type_error(action):
    with pytest.raises(TypeError, match="expected (one|an) integer 0..69"):
        action_id(action)


@pytest.mark.parametrize("action", NOT_WHOLE)
def test_action_id_refuses_a_non_whole_number_with_value_error(action):
    with pytest.raises(ValueError, match="is not a whole number: expected an integer 0..69"):
        action_id(action)


def test_action_id_does_not_check_the_range():
    assert action_id(70) == 70 and action_id(-1.0) == -1  # range and legality are the env's business


# ------------------------------------------------------------------------------- raw_env
@pytest.mark.parametrize("action", ACCEPTED)
def test_raw_env_plays_every_integer_valued_scalar_as_that_action(action):
    env = _fresh_raw()
    env.step(action)
    assert env.game.passed[1] == 1 << 21  # 10D picked
    assert type(env.agent_selection) is str


@pytest.mark.parametrize("action", NOT_A_NUMBER)
def test_raw_env_refuses_non_numbers_with_type_error_naming_the_table_and_changes_nothing(action):
    env = _fresh_raw()
    with pytest.raises(TypeError) as err:
        env.step(action)
    message = str(err.value)
    assert message.startswith(f"action {action!r} ") and re.search(r"not (an|a single) action id", message)
    assert "player_1 is to act in phase PASS" in message and f"legal actions are {LEGAL}" in message
    assert "illegal action" not in message  # it is not an action at all, so no "illegal action X (name)" claim
    assert env.game.passed == [0, 0, 0, 0] and env.agent_selection == "player_1"
    env.step(13)


@pytest.mark.parametrize("action", NOT_WHOLE)
def test_raw_env_refuses_non_whole_numbers_with_value_error(action):
    env = _fresh_raw()
    with pytest.raises(ValueError, match=re.escape("is not a whole number: expected an integer 0..69; player_1 is to act")):
        env.step(action)
    assert env.game.passed == [0, 0, 0, 0]


def test_well_formed_but_illegal_input_is_named_by_its_id_without_contradiction():
    """np.array(8) used to be refused as "illegal action array(8) (10C) ... legal actions are [8, ...]"."""
    env = pass_cut_run_v0.raw_env()
    env.reset(seed=0, options={"hands": SUIT_DEAL, "dealer": 0, "round": 1})
    for given, shown in ((np.array(0), "array(0)"), (np.int64(0), "np.int64(0)"), (0.0, "0.0")):
        with pytest.raises(ValueError) as err:
            env.step(given)
        message = str(err.value)
        assert message.startswith(f"illegal action 0 (2C, given as {shown}) by player_1 in phase PASS: legal actions are [13,")
        assert "0" not in re.findall(r"legal actions are \[([^\]]*)\]", message)[0].split(", ")
    with pytest.raises(ValueError, match=re.escape("illegal action 0 (2C) by player_1")):
        env.step(0)  # a plain int is not repeated


def test_true_is_not_action_one_anywhere():
    env = _fresh_raw()
    with pytest.raises(TypeError, match="action True is a bool"):
        env.step(True)
    wrapped = _fresh_wrapped()
    with pytest.raises(TypeError, match="action True is a bool"):  # not numpy's "truth value of an array" error
        wrapped.step(True)
    assert not any(wrapped.terminations.values())


# ------------------------------------------------------------------------------- env() (PettingZoo's wrappers)
@pytest.mark.parametrize("action", ACCEPTED)
def test_wrapped_env_plays_every_integer_valued_scalar(action):
    env = _fresh_wrapped()
    env.step(action)
    assert env.unwrapped.game.passed[1] == 1 << 21 and not any(env.terminations.values())


@pytest.mark.parametrize("action", NOT_A_NUMBER)
def test_wrapped_env_refuses_non_numbers_with_the_raw_envs_type_error(action):
    env = _fresh_wrapped()
    with pytest.raises(TypeError, match=re.escape(f"player_1 is to act in phase PASS: legal actions are {LEGAL}")):
        env.step(action)
    assert not any(env.terminations.values()) and env.unwrapped.game.passed == [0, 0, 0, 0]


def test_wrapped_env_keeps_pettingzoos_illegal_move_and_out_of_range_rules(caplog):
    env = _fresh_wrapped()
    env.step(np.array(0))  # masked out: TerminateIllegalWrapper ends the game, the mover gets -1
    assert "Illegal move made" in caplog.text and all(env.terminations.values())
    assert env.rewards["player_1"] == -1
    env = _fresh_wrapped()
    with pytest.raises(AssertionError):
        env.step(70.0)  # out of the action space: AssertOutOfBoundsWrapper


# ------------------------------------------------------------------------------- after the game
def _play_to_the_end(env, rng):
    """Play random legal actions until every agent is done (not yet removed)."""
    while not all(env.terminations.values()) and not all(env.truncations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def test_raw_env_after_the_game_is_over_raises_clear_errors_not_key_errors():
    env = pass_cut_run_v0.raw_env(episode="round")
    env.reset(seed=1)
    _play_to_the_end(env, np.random.default_rng(0))
    agent = env.agent_selection
    # A done agent's only action is None (PettingZoo's dead step); anything else is a ValueError saying so.
    with pytest.raises(ValueError, match=re.escape(f"{agent} is done (terminated): when an agent is dead, the only "
                                                   "valid action is None")):
        env.step(0)
    obs, reward, term, trunc, info = env.last()
    assert term and "round_result" in info
    for _ in env.possible_agents:
        env.step(None)
    assert env.agents == []
    # Everyone has left: step and last say so and point at reset(), instead of a bare KeyError.
    for action in (None, 0):
        with pytest.raises(RuntimeError, match=r"after the end of the game.*call reset\(\)"):
            env.step(action)
    with pytest.raises(RuntimeError, match=r"the game is over.*call reset\(\)"):
        env.last()
    assert env.observe("player_0")["action_mask"].sum() == 0  # observe still works: nothing to do
    env.reset(seed=2)
    assert env.agents == env.possible_agents and env.last()[0]["action_mask"].any()


def test_raw_env_before_reset_says_to_reset():
    env = pass_cut_run_v0.raw_env()
    for call in (lambda: env.step(0), env.last, lambda: env.observe("player_0")):
        with pytest.raises(RuntimeError, match=r"before reset\(\): call reset\(\) first"):
            call()


def test_wrapped_env_follows_pettingzoos_dead_step_convention(caplog):
    env = pass_cut_run_v0.env(episode="round")
    env.reset(seed=1)
    _play_to_the_end(env.unwrapped, np.random.default_rng(0))
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        assert term or trunc
        env.step(None)  # the dead step is a no-op apart from removing the agent
    assert env.agents == []
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.mqueue.clear()
    with caplog.at_level(logging.WARNING):
        env.step(None)  # OrderEnforcingWrapper: a logged warning, nothing changes, no exception
    assert any("step() called after all agents are terminated or truncated" in m for m in EnvLogger.mqueue)
    assert env.agents == []


def test_unknown_agent_is_named():
    env = _fresh_raw()
    with pytest.raises(KeyError, match="'player_9' is not an agent of this env"):
        env.observe("player_9")


# ------------------------------------------------------------------------------- the Gymnasium view
class _First:
    def reset(self, seed=None):
        pass

    def act(self, obs):
        return int(np.flatnonzero(obs["action_mask"])[0])


def _gym():
    env = PassCutRunEnv(1, _First(), episode="round")
    env.reset(seed=0, options={"hands": SUIT_DEAL, "dealer": 0, "round": 1})
    return env


@pytest.mark.parametrize("action", ACCEPTED)
def test_gym_view_plays_every_integer_valued_scalar(action):
    env = _gym()
    _, reward, terminated, _, info = env.step(action)
    assert not terminated and "illegal_action" not in info and env.game.passed[1] == 1 << 21


@pytest.mark.parametrize("action", NOT_A_NUMBER)
def test_gym_view_raises_type_error_for_non_numbers_and_changes_nothing(action):
    env = _gym()
    with pytest.raises(TypeError, match="expected (one|an) integer 0..69"):
        env.step(action)
    _, _, terminated, _, info = env.step(13)  # the episode goes on
    assert not terminated and env.game.passed[1] == 1 << 13


@pytest.mark.parametrize("action", NOT_WHOLE)
def test_gym_view_raises_value_error_for_non_whole_numbers(action):
    env = _gym()
    with pytest.raises(ValueError, match="is not a whole number"):
        env.step(action)


@pytest.mark.parametrize("action", [0, np.array(0), 0.0, 70, -1])
def test_gym_view_ends_the_episode_on_a_well_formed_illegal_action(action):
    env = _gym()
    _, reward, terminated, truncated, info = env.step(action)
    assert terminated and not truncated and info["illegal_action"] is True and reward == -100.0
    detail = env.illegal_action_detail
    assert detail.startswith(f"action {action_id(action)} (") and "is not legal for seat 1 in phase PASS" in detail
    assert non_numeric_leaves(info) == [] and "illegal_action_detail" not in info  # numbers only: no detail string
    with pytest.raises(RuntimeError, match="reset"):
        env.step(13)
    env.reset(seed=0)
    assert env.illegal_action_detail is None


def test_gymnasium_make_with_an_unknown_keyword_raises_type_error_for_torchrl():
    with pytest.raises(TypeError, match=re.escape("unexpected keyword argument 'frameskip'")):
        gymnasium.make("PassCutRun-v0", frameskip=4)
    with pytest.raises(TypeError, match=re.escape("PassCutRunEnv() got an unexpected keyword argument 'sead' "
                                                  "(did you mean 'seat'?)")):
        PassCutRunEnv(sead=1)
