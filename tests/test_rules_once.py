"""The rules' parameters written once (issue 50 item 2): a rules field is its RulesConfig field (type, default,
docstring, marks) and its rule in the engine; the OpenSpiel parameters, the checkpoint's variant fields and the
command-line rules flags of evaluate.py, python -m agents.play and python -m agents.serve are derived from the
fields, so a new field shows up in each. The phase names are one list, pcr_env.engine.PHASE_NAMES."""

from __future__ import annotations

import argparse
import inspect
import typing
from dataclasses import dataclass
from typing import Literal

import pytest
from conftest import require_library

import evaluate
from agents import play, serve
from agents.scripted.random_agent import RandomAgent
from pcr_env import rules_flags
from pcr_env.config import RulesConfig, rule, rule_fields, variant_differences, variant_fields
from pcr_env.engine import PHASE_NAMES, Phase
from pcr_env.rules_flags import add_rules_arguments, flag_of, rules_from_args


@dataclass(frozen=True)
class WithJokers(RulesConfig):
    """A made-up variant: the rules of record plus two fields, written the way a new field is written."""

    jokers: int = rule(0, variant=True)
    """Jokers shuffled into the deck (a made-up variant)."""
    hand_limit: int | Literal["none"] = rule("none", variant=False, plain={"none": -1})
    """Cards a hand may hold (a made-up limit; ``"none"``: no limit)."""
    speed: Literal["slow", "fast"] = rule("slow", variant=False)
    """How fast the made-up clock runs (50% faster when ``"fast"``)."""


def _parser(cls: type = RulesConfig, **kwargs) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tool")
    add_rules_arguments(parser, cls=cls, **kwargs)
    return parser


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    group = next(g for g in parser._action_groups if g.title == rules_flags.TITLE)
    return {option for action in group._group_actions for option in action.option_strings}


def _expected_flags(cls: type = RulesConfig, exclude: tuple[str, ...] = ()) -> set[str]:
    out = set()
    for f in rule_fields(cls):
        if f.name not in exclude:
            out |= {flag_of(f.name), *(["--no-" + flag_of(f.name)[2:]] if f.kind is bool else [])}
    return out


# --------------------------------------------------------------------------- the fields and their marks
def test_every_field_is_marked_and_the_marks_give_todays_lists():
    assert [f.name for f in rule_fields()] == list(RulesConfig.field_names())
    assert all(f.doc for f in rule_fields()), "every rules field has a docstring (the flags' help)"
    assert variant_fields() == ("players", "passing", "double_run_bonus", "bidding", "min_bid", "target_score")
    assert RulesConfig().to_plain() == {"players": 4, "passing": True, "double_run_bonus": False, "bidding": "single",
                                        "min_bid": 0, "target_score": 100, "max_rounds": 200, "max_redeals": 10,
                                        "first_dealer": -1}
    rules = RulesConfig(players=6, passing=False, bidding="auction", min_bid=3, first_dealer=5, max_redeals=0)
    assert RulesConfig.from_plain(rules.to_plain()) == rules


def test_a_field_without_marks_or_a_code_for_its_other_values_is_refused():
    @dataclass(frozen=True)
    class Unmarked(RulesConfig):
        jokers: int = 0

    @dataclass(frozen=True)
    class NoCode(RulesConfig):
        jokers: int | None = rule(None, variant=True)

    @dataclass(frozen=True)
    class TwoTypes(RulesConfig):
        jokers: int | str = rule(0, variant=True)

    with pytest.raises(TypeError, match="rules field 'jokers' has no marks: write it as rule"):
        rule_fields(Unmarked)
    with pytest.raises(TypeError, match=r"rules field 'jokers' takes int or \(None,\): its rule\(\.\.\., plain=\.\.\.\)"):
        rule_fields(NoCode)
    with pytest.raises(TypeError, match="rules field 'jokers' has type"):
        rule_fields(TwoTypes)


# --------------------------------------------------------------------------- a new field shows up in each
def test_a_new_field_shows_up_in_the_variant_fields_and_the_plain_parameters():
    assert variant_fields(WithJokers) == (*variant_fields(), "jokers")  # hand_limit, speed only bound an episode
    assert variant_differences(WithJokers(), WithJokers(jokers=2, hand_limit=5)) == ("jokers",)
    assert variant_differences(WithJokers(), WithJokers(min_bid=7)) == ()  # None is the majority, 7
    rules = WithJokers(jokers=2, hand_limit=9, speed="fast")
    assert rules.to_plain() == {**RulesConfig().to_plain(), "jokers": 2, "hand_limit": 9, "speed": "fast"}
    assert WithJokers().to_plain()["hand_limit"] == -1
    assert WithJokers.from_plain(rules.to_plain()) == rules and WithJokers.from_plain(WithJokers().to_plain()) == WithJokers()


def test_a_new_field_shows_up_in_the_openspiel_parameters():
    require_library("pyspiel")
    from pcr_env import openspiel

    assert openspiel.DEFAULT_PARAMS == {**RulesConfig().to_plain(), "episode": "game", "reward": "score_diff"}
    params = openspiel.params_from_rules(WithJokers(jokers=1), "round", "win")
    assert params == {**RulesConfig().to_plain(), "jokers": 1, "hand_limit": -1, "speed": "slow", "episode": "round",
                      "reward": "win"}


def test_the_checkpoint_variant_fields_are_the_marked_ones():
    require_library("torch")
    from agents.ppo import checkpoint

    assert checkpoint.VARIANT_FIELDS == variant_fields()
    checkpoint.check_rules_compatible(RulesConfig().to_dict(), RulesConfig(min_bid=7, max_rounds=3, first_dealer=1))
    with pytest.raises(ValueError, match=r"trained for another rules variant \(players: trained 4, table 6\)"):
        checkpoint.check_rules_compatible(RulesConfig().to_dict(), RulesConfig(players=6))


def test_a_new_field_shows_up_in_the_flags_with_its_type_choices_and_docstring(capsys):
    parser = _parser(WithJokers)
    assert _flags(parser) == _expected_flags(WithJokers) >= {"--jokers", "--hand-limit", "--speed"}
    args = parser.parse_args(["--jokers", "3", "--hand-limit", "5", "--speed", "fast", "--players", "6"])
    assert rules_from_args(args, WithJokers) == WithJokers(players=6, jokers=3, hand_limit=5, speed="fast")
    assert rules_from_args(parser.parse_args(["--hand-limit", "none"]), WithJokers).hand_limit == "none"
    text = parser.format_help()
    assert "Jokers shuffled into the deck (a made-up variant). (default: 0)" in " ".join(text.split())
    assert "--speed {slow,fast}" in text and "50% faster" in text and "--hand-limit N|none" in text
    with pytest.raises(SystemExit):
        parser.parse_args(["--speed", "warp"])
    assert "argument --speed: invalid choice: 'warp'" in capsys.readouterr().err


def test_every_tool_has_the_one_set_of_rules_flags(monkeypatch):
    tools = {"evaluate.py": (evaluate.build_parser, ("first_dealer",)),  # every deal of the suite names its dealer
             "agents.play": (play.build_parser, ()), "agents.serve": (serve.build_parser, ())}
    for name, (build, exclude) in tools.items():
        assert _flags(build()) == _expected_flags(RulesConfig, exclude), name
    # A new field needs no edit of any tool: the three parsers read the fields.
    monkeypatch.setattr(rules_flags, "rule_fields", lambda cls=RulesConfig: rule_fields(WithJokers))
    for name, (build, exclude) in tools.items():
        assert _flags(build()) == _expected_flags(WithJokers, exclude), name


# --------------------------------------------------------------------------- the flags: spellings and errors
@pytest.mark.parametrize("argv, passing, bonus", [
    ([], True, False),
    (["--passing", "false", "--double-run-bonus"], False, True),  # evaluate.py's spelling
    (["--no-passing"], False, False),  # play.py's and serve.py's spelling
    (["--passing", "--double-run-bonus", "true"], True, True),
    (["--passing", "no", "--no-double-run-bonus"], False, False),
    (["--passing=off", "--double-run-bonus=1"], False, True),
])
def test_yes_no_flags_take_every_tools_old_spelling(argv, passing, bonus):
    for build in (evaluate.build_parser, play.build_parser, serve.build_parser):
        args = build().parse_args(["--agents", "random", *argv])
        rules = rules_from_args(args)
        assert (rules.passing, rules.double_run_bonus) == (passing, bonus)


def test_flags_reach_the_rules_and_default_to_the_rules_of_record():
    assert rules_from_args(_parser().parse_args([])) == RulesConfig()
    argv = ["--players", "6", "--bidding", "auction", "--min-bid", "6", "--target-score", "50", "--max-rounds", "9",
            "--max-redeals", "0", "--first-dealer", "4"]
    assert rules_from_args(_parser().parse_args(argv)) == RulesConfig(
        players=6, bidding="auction", min_bid=6, target_score=50, max_rounds=9, max_redeals=0, first_dealer=4)
    assert rules_from_args(_parser().parse_args(["--min-bid", "none", "--first-dealer", "random"])) == RulesConfig()
    args = _parser(exclude=["first_dealer"]).parse_args([])
    assert not hasattr(args, "first_dealer") and rules_from_args(args) == RulesConfig()
    with pytest.raises(ValueError, match="exclude names no rules field"):
        _parser(exclude=["first_deeler"])


@pytest.mark.parametrize("argv, message", [
    (["--passing", "maybe"], "argument --passing: 'maybe' is not a boolean: allowed true or false"),
    (["--bidding", "open"], "argument --bidding: invalid choice: 'open'"),
    (["--players", "four"], "argument --players: 'four' is not allowed: allowed an integer"),
    (["--first-dealer", "left"], "argument --first-dealer: 'left' is not allowed: allowed an integer or random"),
    (["--min-bid", "x"], "argument --min-bid: 'x' is not allowed: allowed an integer or none"),
])
def test_a_value_of_the_wrong_type_is_a_usage_error_naming_the_flag(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        _parser().parse_args(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--players", "5"], "argument --players: rules field 'players' = 5 is not allowed: allowed 4 or 6"),
    (["--players", "6", "--min-bid", "9"], "argument --min-bid: rules field 'min_bid' = 9 is not allowed: allowed an integer 1..8"),
    (["--first-dealer", "4"], "argument --first-dealer: rules field 'first_dealer' = 4 is not allowed: allowed 'random' or a seat 0..3"),
    (["--max-redeals", "-1"], "argument --max-redeals: rules field 'max_redeals' = -1 is not allowed: allowed an integer >= 0"),
])
def test_a_value_the_rules_refuse_names_the_flag_and_what_is_allowed(argv, message):
    with pytest.raises(ValueError) as err:
        rules_from_args(_parser().parse_args(argv))
    assert message in str(err.value)


def test_play_and_serve_report_a_bad_rules_value_naming_the_flag(capsys):
    assert play.main(["--players", "5"]) == 2
    assert "argument --players: rules field 'players' = 5 is not allowed: allowed 4 or 6" in capsys.readouterr().err
    assert serve.main(["--min-bid", "14"]) == 2
    assert "argument --min-bid: rules field 'min_bid' = 14" in capsys.readouterr().err


# --------------------------------------------------------------------------- the phase names
def test_the_phase_names_are_one_list():
    assert PHASE_NAMES == ("pass", "bid", "trump", "discard", "play")
    assert [Phase[name.upper()] for name in PHASE_NAMES] == [p for p in Phase if p < Phase.ROUND_END]
    from agents.search.agent import SearchAgent
    from agents.search.phase_mix import PhaseMix
    from agents.web.table import PHASES

    assert inspect.signature(SearchAgent).parameters["phases"].default == PHASE_NAMES
    assert tuple(PHASES.values()) == PHASE_NAMES and list(PHASES) == [Phase[p.upper()] for p in PHASE_NAMES]
    with pytest.raises(ValueError, match=r"search phases \['deal'\] are not phases: allowed pass, bid, trump, discard, play"):
        SearchAgent(RandomAgent(), phases=("deal",))
    with pytest.raises(ValueError, match="allowed a non-empty subset of pass, bid, trump, discard, play"):
        PhaseMix(RandomAgent(), RandomAgent(), ("deal",))


def test_the_training_configs_phase_literal_is_the_one_list():
    require_library("pydantic")
    from agents.training import config

    assert typing.get_args(config.PhaseName) == PHASE_NAMES  # a Literal is written out for pydantic
    assert config.WarmStartConfig().label_phases == PHASE_NAMES
