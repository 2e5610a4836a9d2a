"""Agents of one's own by spec (agents/registry.py): ``MODULE:FACTORY[:OPTIONS]`` and entry points of ``pcr.agents``.

The agents are defined in ``tests/spec_agents.py`` (importable: pytest puts ``tests/`` on ``sys.path``) and reached
only by spec: through :func:`agents.make_agent`, :func:`agents.evaluation.evaluate`, a training config and the
``evaluate.py --agents`` command line. Entry points come from a small ``dist-info`` written to ``tmp_path``.
Every bad spec is a ``ValueError`` naming it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import spec_agents
from conftest import require_library

from agents import make_agent, make_agents, parse_spec, registry
from agents.registry import list_agents, parse_options
from pcr_env.config import RulesConfig

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent


def _obs(*legal: int) -> dict[str, np.ndarray]:
    mask = np.zeros(70, np.int8)
    mask[list(legal)] = 1
    return {"observation": np.zeros(797, np.float32), "action_mask": mask}


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed package (a dist-info on ``sys.path``) declaring three ``pcr.agents`` entry points."""
    dist = tmp_path / "pcr_spec_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pcr-spec-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pcr.agents]\nfirstlegal = spec_agents:first_legal\n"
                                           "named = spec_agents:named\nbroken = spec_agents_nowhere:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for kind in ("firstlegal", "named", "broken"):
        registry._REGISTRY.pop(kind, None)


# ------------------------------------------------------------------ MODULE:FACTORY[:OPTIONS]
def test_a_factory_spec_builds_the_agent_seeded_with_the_rules_it_declares():
    agent = make_agent("spec_agents:first_legal", seed=5, rules=RulesConfig(players=6))
    assert isinstance(agent, spec_agents.FirstLegal) and agent.seed == 5 and agent.rules == RulesConfig(players=6)
    assert agent.options == {"last": False, "depth": 1, "style": "plain", "temperature": 0.0}
    assert agent.act(_obs(4, 9, 30)) == 4
    entry, options = parse_spec("spec_agents:first_legal")
    assert entry.kind == "spec_agents:first_legal" and options is None and entry.factory is spec_agents.first_legal
    assert make_agent("spec_agents:FirstLegal", seed=1).options == {}  # a class is a factory
    assert make_agent("spec_agents:FirstLegal.quiet", seed=1).options == {"style": "quiet"}  # so is an attribute's


def test_options_are_keyword_arguments_with_their_values_parsed():
    agent = make_agent("spec_agents:first_legal:depth=3,style=aggressive:temperature=0.5,last=TRUE", seed=0)
    assert agent.options == {"last": True, "depth": 3, "style": "aggressive", "temperature": 0.5}
    assert agent.act(_obs(4, 9, 30)) == 30
    assert make_agent("spec_agents:first_legal:depth=2", depth=7).options["depth"] == 7  # a keyword overrides the spec
    assert make_agent("spec_agents:with_kwargs:anything=x,n=-2,e=1e-3,b=false").options == {
        "anything": "x", "n": -2, "e": 0.001, "b": False}
    assert make_agent("spec_agents:needs_model:model=runs/x/model.zip").options == {"model": "runs/x/model.zip"}
    assert parse_spec("spec_agents:first_legal:depth=3")[1] == "depth=3"
    assert parse_options("") == {} and parse_options("a=,b= 1 ") == {"a": "", "b": 1}
    assert parse_options("x=inf,y=1.,z=.5,w=+4") == {"x": "inf", "y": 1.0, "z": 0.5, "w": 4}


def test_a_dotted_module_path_is_a_factory_spec():
    from agents.scripted.heuristic import HeuristicAgent

    agent = make_agent("agents.scripted.heuristic:HeuristicAgent", seed=3, rules=RulesConfig())
    assert isinstance(agent, HeuristicAgent) and agent.seed == 3


def test_make_agents_and_a_duplicate_match_take_factory_specs():
    from agents.evaluation import evaluate

    seated = make_agents(["spec_agents:first_legal:last=true", "random"], seats=(1, 2), seed=4)
    assert isinstance(seated[1], spec_agents.FirstLegal) and seated[1].options["last"] is True
    result = evaluate(["spec_agents:first_legal", "spec_agents:first_legal:last=true"], deals=2, seed=0, progress=False)
    (pair,) = result.pairs
    assert (pair.agent_a, pair.agent_b, pair.deals) == ("spec_agents:first_legal", "spec_agents:first_legal:last=true", 2)


def test_the_sb3_examples_factory_is_the_spec_the_docs_show(monkeypatch):
    require_library("torch")  # the example imports torch (sb3_contrib only when it loads a model)
    monkeypatch.syspath_prepend(str(ROOT))  # as `python evaluate.py` has the repository root on sys.path
    try:
        entry, options = parse_spec("examples.sb3_maskable_ppo:load_sb3_agent:path=runs/sb3/model.zip")
        assert entry.factory.__name__ == "load_sb3_agent" and options == "path=runs/sb3/model.zip"
        with pytest.raises(ValueError, match="load_sb3_agent needs the option path=VALUE"):
            parse_spec("examples.sb3_maskable_ppo:load_sb3_agent")
    finally:
        sys.modules.pop("examples.sb3_maskable_ppo", None)
        sys.modules.pop("examples", None)


def test_a_training_config_accepts_factory_specs_as_opponents():
    from agents.training.config import load_config
    from agents.training.config_io import ConfigError

    config = load_config(None, ['selfplay.opponents={self: 0.5, "spec_agents:first_legal:depth=2": 0.5}'])
    assert "spec_agents:first_legal:depth=2" in config.selfplay.opponents
    with pytest.raises(ConfigError, match="agent spec 'spec_agents:first_legal:depth=2,colour=red'"):
        load_config(None, ['selfplay.opponents={self: 0.5, "spec_agents:first_legal:depth=2,colour=red": 0.5}'])


# ------------------------------------------------------------------ errors name the spec
@pytest.mark.parametrize("spec, expected", [
    ("nowhere.bots:make", "agent spec 'nowhere.bots:make': module 'nowhere.bots' does not import "
                          "(ModuleNotFoundError: No module named 'nowhere')"),
    ("spec_agents_nowhere:make", "unknown agent spec 'spec_agents_nowhere:make': 'spec_agents_nowhere' is not a "
                                 "registered kind, an entry point of pcr.agents or an importable module"),
    ("spec_agents:missing", "agent spec 'spec_agents:missing': module 'spec_agents' has no factory 'missing'"),
    ("spec_agents:", "agent spec 'spec_agents:' names module 'spec_agents' but no factory"),
    ("spec_agents:DEPTH", "agent spec 'spec_agents:DEPTH': spec_agents:DEPTH is not callable (a int)"),
    ("spec_agents:first_legal:depth", "agent spec 'spec_agents:first_legal:depth': option 'depth' is not NAME=VALUE"),
    ("spec_agents:first_legal:=3", "option '=3' is not NAME=VALUE"),
    ("spec_agents:first_legal:depth=1,depth=2", "agent spec 'spec_agents:first_legal:depth=1,depth=2': option "
                                                "'depth' is given twice"),
    ("spec_agents:first_legal:colour=red", "spec_agents:first_legal has no option 'colour': its options are last, "
                                           "depth, style, temperature"),
    ("spec_agents:first_legal:seed=3", "option 'seed' is not allowed: the tools pass seed="),
    ("spec_agents:needs_model", "agent spec 'spec_agents:needs_model': spec_agents:needs_model needs the option "
                                "model=VALUE"),
    ("spec_agents:no_seed", "agent spec 'spec_agents:no_seed': spec_agents:no_seed takes no seed="),
])
def test_a_bad_factory_spec_is_a_value_error_naming_it(spec, expected):
    with pytest.raises(ValueError) as err:
        parse_spec(spec)
    assert expected in str(err.value)
    with pytest.raises(ValueError, match="agent spec"):
        make_agent(spec)


def test_a_factory_that_returns_no_agent_is_a_value_error_naming_the_spec():
    parse_spec("spec_agents:not_an_agent")  # the signature is fine: only building tells
    with pytest.raises(ValueError, match=r"agent spec 'spec_agents:not_an_agent': spec_agents:not_an_agent returned "
                                         r"str 'a plan, not an agent', not an agent: an object with act"):
        make_agent("spec_agents:not_an_agent")


def test_a_module_whose_own_import_fails_says_why(tmp_path, monkeypatch):
    (tmp_path / "spec_agents_broken.py").write_text("import a_dependency_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"agent spec 'spec_agents_broken:make': module 'spec_agents_broken' does not "
                                         r"import \(ModuleNotFoundError: No module named 'a_dependency_not_installed'\)"):
        parse_spec("spec_agents_broken:make")
    sys.modules.pop("spec_agents_broken", None)


def test_plain_unknown_kinds_keep_their_message():
    for spec in ("magic", "test", "spec_agents", "agents.scripted.heuristic"):
        with pytest.raises(ValueError, match=f"unknown agent spec '{spec}': valid specs are 'random', 'greedy'"):
            parse_spec(spec)
    assert "MODULE:FACTORY[:OPTIONS]" in list_agents()


def test_registered_kinds_win_and_stay_a_lookup(monkeypatch):
    def no_lookup(*args, **kwargs):
        raise AssertionError("a registered kind looked further")

    monkeypatch.setattr(registry, "_entry_points", no_lookup)
    monkeypatch.setattr(registry.importlib, "import_module", no_lookup)
    assert parse_spec("heuristic")[0].kind == "heuristic"
    assert parse_spec("search:spec_agents:first_legal")[1] == "spec_agents:first_legal"
    assert parse_spec("ppo:runs/x.pt")[1] == "runs/x.pt"


# ------------------------------------------------------------------ entry points (pcr.agents)
def test_an_entry_point_is_a_kind_registered_on_first_use(plugin):
    listed = list_agents()
    assert "firstlegal[:ARG]" in listed and "named[:ARG]" in listed  # listed, not imported
    assert "firstlegal" not in registry._REGISTRY
    agent = make_agent("firstlegal:depth=4", seed=2, rules=RulesConfig())
    assert isinstance(agent, spec_agents.FirstLegal) and agent.options["depth"] == 4 and agent.seed == 2
    assert registry._REGISTRY["firstlegal"].pattern == "firstlegal[:OPTIONS]"
    assert make_agent("firstlegal").options["depth"] == 1
    # A factory whose first parameter is positional takes the spec's argument verbatim, like ppo:PATH.
    assert make_agent("named:alice:b,c", seed=1).options == {"player": "alice:b,c"}
    assert registry._REGISTRY["named"].pattern == "named:NAME"
    with pytest.raises(ValueError, match="agent spec 'named' needs an argument: write 'named:NAME'"):
        parse_spec("named")
    with pytest.raises(ValueError, match="agent spec 'firstlegal:colour=red': entry point firstlegal = "
                                         "spec_agents:first_legal has no option 'colour'"):
        parse_spec("firstlegal:colour=red")


def test_an_entry_point_that_does_not_load_names_the_spec_and_why(plugin):
    with pytest.raises(ValueError, match=r"agent spec 'broken': entry point broken = 'spec_agents_nowhere:make' "
                                         r"\(pcr.agents\) does not load \(ModuleNotFoundError: No module named "
                                         r"'spec_agents_nowhere'\)"):
        parse_spec("broken")


def test_the_registry_reads_the_group_pcr_agents(monkeypatch):
    import importlib.metadata

    seen = []

    def entry_points(**kwargs):
        seen.append(kwargs)
        return [importlib.metadata.EntryPoint("fake", "spec_agents:with_kwargs", "pcr.agents")]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    try:
        assert make_agent("fake:k=v").options == {"k": "v"}
    finally:
        registry._REGISTRY.pop("fake", None)
    assert seen == [{"group": "pcr.agents"}]


# ------------------------------------------------------------------ the command line
def test_evaluate_command_line_takes_factory_specs_and_entry_points(plugin):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(plugin), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "evaluate.py", "--agents", "spec_agents:first_legal:last=true",
                          "named:bob", "--deals", "2", "--no-progress"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "| spec_agents:first_legal:last=true | named:bob |" in run.stdout.replace("  ", " ").replace("  ", " ")
    bad = subprocess.run([sys.executable, "evaluate.py", "--agents", "spec_agents:missing", "random"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "agent spec 'spec_agents:missing': module 'spec_agents' has no factory 'missing'" in bad.stderr
