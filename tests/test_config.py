"""Rules configuration: defaults, derived values and validation (bad values name field, value and what is allowed)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pcr_env import pass_cut_run_v0
from pcr_env.config import RulesConfig


def test_defaults_are_the_rules_of_record():
    cfg = RulesConfig()
    assert (cfg.players, cfg.passing, cfg.double_run_bonus, cfg.bidding) == (4, True, False, "single")
    assert (cfg.min_bid, cfg.target_score, cfg.max_rounds, cfg.max_redeals, cfg.first_dealer) == (None, 100, 200, 10, "random")


@pytest.mark.parametrize("players, hand, kitty, min_bid", [(4, 13, 0, 7), (6, 8, 4, 5)])
def test_derived_sizes(players, hand, kitty, min_bid):
    # R2.2, R4.2, R6.5, R9.3.
    cfg = RulesConfig(players=players)
    assert (cfg.hand_size, cfg.num_tricks, cfg.kitty_size, cfg.min_bid_value) == (hand, hand, kitty, min_bid)
    assert RulesConfig(players=players, min_bid=3).min_bid_value == 3


def test_config_is_frozen_and_round_trips_through_a_dict():
    cfg = RulesConfig(players=6, bidding="auction", min_bid=6, first_dealer=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.players = 4  # type: ignore[misc]
    assert RulesConfig.from_kwargs(cfg.to_dict()) == cfg
    assert set(RulesConfig.field_names()) == set(cfg.to_dict())


# (field, bad value, text that must appear in "allowed ...")
BAD_VALUES = [
    ("players", 5, "4 or 6"),
    ("players", "4", "4 or 6"),
    ("players", 4.0, "4 or 6"),
    ("passing", 1, "true or false"),
    ("passing", "yes", "true or false"),
    ("double_run_bonus", None, "true or false"),
    ("bidding", "open", "'single' or 'auction'"),
    ("bidding", "Single", "'single' or 'auction'"),
    ("min_bid", 0, "an integer 1..13 or null"),
    ("min_bid", 14, "an integer 1..13 or null"),
    ("min_bid", 7.0, "an integer 1..13 or null"),
    ("min_bid", True, "an integer 1..13 or null"),
    ("target_score", 0, "an integer >= 1"),
    ("target_score", 100.5, "an integer >= 1"),
    ("target_score", False, "an integer >= 1"),
    ("max_rounds", 0, "an integer >= 1"),
    ("max_rounds", "200", "an integer >= 1"),
    ("max_redeals", -1, "an integer >= 0"),
    ("first_dealer", 4, "'random' or a seat 0..3"),
    ("first_dealer", -1, "'random' or a seat 0..3"),
    ("first_dealer", "left", "'random' or a seat 0..3"),
    ("first_dealer", True, "'random' or a seat 0..3"),
]


@pytest.mark.parametrize("field, value, allowed", BAD_VALUES, ids=[f"{f}={v!r}" for f, v, _ in BAD_VALUES])
def test_bad_rules_values_raise_naming_field_value_and_allowed(field, value, allowed):
    message = f"rules field '{field}' = {value!r} is not allowed: allowed {allowed}"
    with pytest.raises(ValueError, match=re.escape(message)):
        RulesConfig(**{field: value})
    # The environment passes its rules keywords through the same validation.
    with pytest.raises(ValueError, match=re.escape(message)):
        pass_cut_run_v0.raw_env(**{field: value})


def test_limits_depend_on_the_table_size():
    assert RulesConfig(players=6, min_bid=8).min_bid_value == 8
    with pytest.raises(ValueError, match=re.escape("'min_bid' = 9 is not allowed: allowed an integer 1..8 or null")):
        RulesConfig(players=6, min_bid=9)
    assert RulesConfig(players=6, first_dealer=5).first_dealer == 5
    with pytest.raises(ValueError, match=re.escape("allowed 'random' or a seat 0..5")):
        RulesConfig(players=6, first_dealer=6)
    assert RulesConfig(max_redeals=0).max_redeals == 0


def test_unknown_rules_field_is_a_type_error_worded_like_pythons():
    """An unknown keyword is a TypeError with Python's own wording (TorchRL's GymEnv retries on exactly that)."""
    with pytest.raises(TypeError, match=re.escape(
            "RulesConfig() got an unexpected keyword argument 'colour': allowed players, passing,")):
        RulesConfig.from_kwargs({"colour": "red"})
    with pytest.raises(TypeError, match=re.escape("unexpected keyword argument 'colour'")):
        RulesConfig(colour="red")  # the dataclass constructor: Python's own TypeError
    with pytest.raises(TypeError, match=re.escape(
            "env() got an unexpected keyword argument 'player' (did you mean 'players'?): allowed episode, reward, "
            "render_mode, players")):
        pass_cut_run_v0.env(player=4)
    with pytest.raises(TypeError, match=re.escape("raw_env() got an unexpected keyword argument 'frameskip': allowed")):
        pass_cut_run_v0.raw_env(frameskip=4)
    # Several unknown names: each is named with the same phrase, so a search for one still finds it.
    with pytest.raises(TypeError) as err:
        pass_cut_run_v0.raw_env(frameskip=4, colour=1, players=4)
    assert "unexpected keyword argument 'colour'" in str(err.value)
    assert "unexpected keyword argument 'frameskip'" in str(err.value)


def test_a_mapping_of_fields_with_unknown_keys_is_a_bad_value():
    with pytest.raises(ValueError, match=re.escape("rules has unknown rules field(s) ['colour']: allowed ['players'")):
        RulesConfig.from_mapping({"colour": 1, "players": 4})
    assert RulesConfig.from_mapping({"players": 6}) == RulesConfig(players=6)


@pytest.mark.parametrize("kwargs, message", [
    ({"episode": "match"}, "episode 'match' is not allowed: allowed ['game', 'round']"),
    ({"reward": "points"}, "reward 'points' is not allowed: allowed ['score_diff', 'win']"),
    ({"render_mode": "rgb"}, "render_mode 'rgb' is not allowed: allowed ['ansi', 'human', 'rgb_array'] or None"),
    ({"players": 5}, "rules field 'players' = 5 is not allowed"),
])
def test_bad_environment_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        pass_cut_run_v0.raw_env(**kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        pass_cut_run_v0.env(**kwargs)
