"""The rules' parameters written once (issue 50 item 2). The phase names are one list, pcr_env.engine.PHASE_NAMES."""

from __future__ import annotations

import inspect
import typing

import pytest
from conftest import require_library

from agents.scripted.random_agent import RandomAgent
from pcr_env.engine import PHASE_NAMES, Phase


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
