"""Spec strings to agents: the one place that builds and seeds agents for every tool.

===================  ===============================================================
spec                 agent
===================  ===============================================================
``random``           uniform over the legal actions (:class:`agents.scripted.random_agent.RandomAgent`)
``greedy``           wins each trick as cheaply as it can, naive bids (:class:`agents.scripted.greedy.GreedyAgent`)
``heuristic``        rule-based player (:class:`agents.scripted.heuristic.HeuristicAgent`)
``ppo:PATH``         a trained PPO policy loaded from a checkpoint (:func:`agents.ppo.load_ppo_agent`,
                     imported on demand: it needs torch); ``ppo:pretrained`` is the shipped one,
                     ``ppo:RUN_DIR`` the ``best.pt`` of a run directory
``search:SPEC``      decision-time search with the base policy ``SPEC`` (:mod:`agents.search`, 64 worlds),
                     e.g. ``search:ppo:pretrained``, ``search:heuristic``
``mix:SPEC``         ``SPEC`` except card play, made by the heuristic (:mod:`agents.search.phase_mix`; factory
                     options ``other=`` and ``phases=`` hand other phases to another agent)
``pimc``             double-dummy reference opponent, four players (:mod:`agents.search.pimc`, ``pimc`` extra)
``openspiel:BOT``    OpenSpiel's search bots over sampled worlds (:mod:`agents.search.openspiel_bots`,
                     ``openspiel`` extra): ``openspiel:ismcts`` (IS-MCTS, random rollouts), ``openspiel:mcts``;
                     options after the bot, e.g. ``openspiel:ismcts:sims=200``
``MODULE:FACTORY``   an importable factory of one's own, with options: ``MODULE:FACTORY:OPTIONS``, e.g.
                     ``mypkg.bots:make_bot:depth=3,style=aggressive`` (see *Specs of one's own* below)
``NAME``             a package's entry point ``NAME`` in the group ``pcr.agents``: ``NAME:ARG`` if its
                     factory takes a positional argument, else ``NAME`` or ``NAME:OPTIONS``
===================  ===============================================================

* :func:`make_agent` builds one agent from a spec; :func:`register_agent` adds a kind
  (``sb3:PATH`` in ``examples/sb3_maskable_ppo.py``), which every tool then accepts.
  A factory is passed ``rules=`` (the table's :class:`~pcr_env.RulesConfig`) only if
  its signature declares ``rules`` (or ``**kwargs``): agents that ignore the rules need
  not accept them.
* :func:`make_agents` builds the agents of several seats, from specs or agent objects,
  with the one seat convention and seeding scheme of :mod:`pcr_env.seating`: the agent
  at seat ``s`` of a game seeded ``seed`` is seeded ``derive_seed(seed, s)``. The
  Gymnasium factory, the terminal player (:mod:`agents.play`) and the duplicate
  evaluation (:mod:`agents.evaluation`, whose "seats" are its two sides) use it.
* :func:`make_gym_env` is the entry point of the Gymnasium id ``"PassCutRun-v0"``
  (registered by ``import pcr_env`` as the string ``"agents.registry:make_gym_env"``):
  it resolves spec strings in ``others`` and returns a :class:`pcr_env.gym_env.PassCutRunEnv`.

**Specs of one's own.** An agent written elsewhere (an SB3 policy, a script) reaches
every tool (``evaluate.py``, the ladder, ``evaluate.py --exploit``, training opponents)
without Python code that calls :func:`register_agent`:

* ``MODULE:FACTORY[:OPTIONS]``: a spec whose first part is not a registered kind or an
  entry point, and is a dotted module path (``mypkg.bots``) or an importable top-level
  module, imports ``MODULE`` and calls its attribute ``FACTORY`` (``Class`` or
  ``obj.attr`` too) as registered factories are called: ``seed=``, ``rules=`` only if
  it declares it, and the options as keyword arguments.
* ``OPTIONS`` are ``NAME=VALUE`` items separated by ``,`` or ``:`` (the syntax of
  ``openspiel:ismcts:sims=200,uct_c=1.5``); a value is an ``int`` (``3``), a
  ``float`` (``0.5``, ``1e-3``), a ``bool`` (``true``/``false``, any case) or else
  the text itself (values cannot hold ``,`` or ``:``). The factory must take
  ``seed=``; every option must be one of its parameters (unless it takes
  ``**kwargs``), and every parameter without a default other than ``seed`` and
  ``rules`` must be given (checked when the spec is parsed, from the signature).
* Entry points: a package declaring ``NAME = "mypkg.bots:make_bot"`` in the group
  ``pcr.agents`` (``[project.entry-points."pcr.agents"]`` of its ``pyproject.toml``)
  makes ``NAME`` a spec kind, looked up (:func:`importlib.metadata.entry_points`) and
  registered on first use, when ``NAME`` is not a registered kind. A factory whose first
  parameter is positional without a default (other than ``seed`` or ``rules``) takes
  the spec's argument, verbatim, like ``ppo:PATH``: ``NAME:ARG``
  (``load(path, seed=None)`` gives ``NAME:PATH``); any other factory gives ``NAME`` or
  ``NAME:OPTIONS``. Registered kinds win over entry points, and both over modules; of
  two packages declaring one name the first found wins. :func:`list_agents` (so
  ``evaluate.py --help``) lists entry points not used yet as ``NAME[:ARG]``, unimported.
* The factory must return an agent (an object with ``act(obs)`` and ``reset(seed)``,
  :func:`pcr_env.seating.is_seat_agent`). A spec that does not import, names no such
  factory, has a malformed or unknown option, or whose factory returns anything
  else raises ``ValueError`` naming the spec (and the module and why it did not import).
* A spec parses in every process that imports its module: evaluation workers
  (``--workers``) inherit ``sys.path``; Ray workers need the module on their own path.

>>> agent = make_agent("random", seed=0)
>>> import numpy as np
>>> mask = np.zeros(70, np.int8); mask[[3, 17]] = 1
>>> agent.act({"observation": np.zeros(797, np.float32), "action_mask": mask}) in (3, 17)
True
>>> sorted(make_agents("heuristic", seats=(1, 2, 3), seed=0).items())
[(1, HeuristicAgent(seed=...)), (2, HeuristicAgent(seed=...)), (3, HeuristicAgent(seed=...))]
>>> make_agent("magic")
Traceback (most recent call last):
...
ValueError: unknown agent spec 'magic': valid specs are 'random', 'greedy', 'heuristic', 'ppo:PATH', 'search:SPEC', 'mix:SPEC', 'pimc'...
>>> parse_options("depth=3,style=aggressive:temperature=0.5,greedy=True")
{'depth': 3, 'style': 'aggressive', 'temperature': 0.5, 'greedy': True}
>>> make_agent("agents.scripted.heuristic:HeuristicAgent", seed=0)  # an importable factory (here a class)
HeuristicAgent(seed=0)
>>> make_agent("agents.scripted.heuristic:HeuristicAgent:depth=3")
Traceback (most recent call last):
...
ValueError: agent spec 'agents.scripted.heuristic:HeuristicAgent:depth=3': ... has no option 'depth': its options are params...
>>> make_agent("mypkg.bots:make_bot")
Traceback (most recent call last):
...
ValueError: agent spec 'mypkg.bots:make_bot': module 'mypkg.bots' does not import (ModuleNotFoundError: No module named 'mypkg')
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.base import Agent
from agents.scripted.greedy import GreedyAgent
from agents.scripted.heuristic import HeuristicAgent
from agents.scripted.random_agent import RandomAgent
from agents.spec_options import parse_options, split_options
from pcr_env.config import RulesConfig
from pcr_env.seating import derive_seed, is_seat_agent, per_seat


@dataclass(frozen=True)
class AgentKind:
    """A registered agent family: ``kind`` or ``kind:ARG`` in spec strings (``kind[:OPTIONS]`` with ``options``)."""

    kind: str
    factory: Callable[..., Agent]  # factory(seed=..., **kwargs) or factory(arg, seed=..., **kwargs)
    takes_arg: bool
    arg_name: str
    description: str
    options: bool = False  # the text after ``kind:`` is NAME=VALUE options, keyword arguments of the factory
    source: str = ""  # where an imported kind comes from (an entry point, a module): its result is checked

    @property
    def pattern(self) -> str:
        if self.takes_arg:
            return f"{self.kind}:{self.arg_name}"
        return f"{self.kind}[:OPTIONS]" if self.options else self.kind


_REGISTRY: dict[str, AgentKind] = {}
ENTRY_POINT_GROUP = "pcr.agents"
"""The entry-point group of agent factories that installed packages declare (see the module docstring)."""
_FACTORY_PATTERN = "MODULE:FACTORY[:OPTIONS]"
_SET_BY_TOOLS = ("seed", "rules")  # keyword arguments the tools pass, never options


def _check_kind_name(kind: str) -> None:
    if not kind or ":" in kind or not kind.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"agent kind {kind!r} is not allowed: use letters, digits, '-' and '_'")


def register_agent(kind: str, factory: Callable[..., Agent], *, takes_arg: bool = False,
                   arg_name: str = "ARG", description: str = "", options: bool = False) -> None:
    """Make ``kind`` (or ``kind:ARG``) a valid spec for :func:`make_agent` and every tool.

    ``factory`` is called as ``factory(seed=seed, **kwargs)``, or
    ``factory(arg, seed=seed, **kwargs)`` when ``takes_arg``; ``rules=`` is among
    the keyword arguments only if the factory declares it. With ``options``,
    ``kind:NAME=VALUE,...`` passes the options as keyword arguments (:func:`parse_options`).
    """
    _check_kind_name(kind)
    if takes_arg and options:
        raise ValueError(f"agent kind {kind!r}: takes_arg and options exclude each other (an ARG is passed verbatim)")
    _REGISTRY[kind] = AgentKind(kind, factory, takes_arg, arg_name, description, options)


def list_agents() -> dict[str, str]:
    """Valid spec patterns and what they build, e.g. ``{"random": "...", "ppo:PATH": "..."}``.

    Entry points of the group ``pcr.agents`` not used yet are listed as ``NAME[:ARG]``
    (they are not imported to tell which), and the last pattern is the importable factory.
    """
    listed = {k.pattern: k.description for k in _REGISTRY.values()}
    for name, point in _entry_points().items():
        if name not in _REGISTRY:
            listed[f"{name}[:ARG]"] = f"entry point {point.value} ({ENTRY_POINT_GROUP}), imported on first use"
    listed[_FACTORY_PATTERN] = ("an importable factory of one's own, e.g. mypkg.bots:make_bot:depth=3 "
                                "(options NAME=VALUE separated by ',' or ':')")
    return listed


def _valid_specs() -> str:
    return ", ".join(repr(pattern) for pattern in list_agents())


# ------------------------------------------------------------- kinds from elsewhere
def _entry_points() -> dict[str, Any]:
    """``{name: EntryPoint}`` of the group ``pcr.agents`` of the installed packages (names usable as kinds)."""
    import importlib.metadata

    found: dict[str, Any] = {}
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)  # the first of two packages declaring one name wins, as for scripts
    return found


def _first_arg(factory: Callable[..., Any]) -> str | None:
    """The name of the factory's first parameter if it is positional without a default (not seed/rules): its ARG."""
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return None
    first = params[0] if params else None
    if (first is not None and first.kind in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD)
            and first.default is first.empty and first.name not in _SET_BY_TOOLS):
        return first.name
    return None


def _entry_point_kind(kind: str, spec: str) -> AgentKind | None:
    """The entry point named ``kind``, loaded and registered (None when there is none)."""
    try:
        _check_kind_name(kind)
    except ValueError:
        return None
    point = _entry_points().get(kind)
    if point is None:
        return None
    try:
        factory = point.load()
    except Exception as err:  # an entry point that does not import: say which and why
        raise ValueError(f"agent spec {spec!r}: entry point {kind} = {point.value!r} ({ENTRY_POINT_GROUP}) does not "
                         f"load ({type(err).__name__}: {err})") from err
    if not callable(factory):
        raise ValueError(f"agent spec {spec!r}: entry point {kind} = {point.value!r} is not callable "
                         f"(a {type(factory).__name__}): it must name an agent factory")
    arg = _first_arg(factory)
    source = f"entry point {kind} = {point.value}"
    _REGISTRY[kind] = AgentKind(kind, factory, arg is not None, (arg or "ARG").upper(),
                                f"{point.value} (entry point of {ENTRY_POINT_GROUP})", arg is None, source)
    return _REGISTRY[kind]


def _is_module_path(kind: str) -> bool:
    """Whether a spec's first part names a module: dotted (``mypkg.bots``), or an importable top-level module."""
    if not kind or not all(part.isidentifier() for part in kind.split(".")):
        return False
    return "." in kind or importlib.util.find_spec(kind) is not None


def _factory_kind(module: str, rest: str, spec: str) -> tuple[AgentKind, str | None]:
    """``MODULE:FACTORY[:OPTIONS]``: the module imported, its factory found and the options checked."""
    name, _, options = rest.partition(":")
    name = name.strip()
    if not name or not all(part.isidentifier() for part in name.split(".")):
        raise ValueError(f"agent spec {spec!r} names module {module!r} but no factory: write "
                         f"'{module}:FACTORY[:OPTIONS]', e.g. mypkg.bots:make_bot:depth=3")
    try:
        factory: Any = importlib.import_module(module)
    except Exception as err:  # ModuleNotFoundError, or the module's own error: the spec, the module and why
        raise ValueError(f"agent spec {spec!r}: module {module!r} does not import ({type(err).__name__}: {err})") from err
    for part in name.split("."):
        if not hasattr(factory, part):
            raise ValueError(f"agent spec {spec!r}: module {module!r} has no factory {name!r}")
        factory = getattr(factory, part)
    label = f"{module}:{name}"
    if not callable(factory):
        raise ValueError(f"agent spec {spec!r}: {label} is not callable (a {type(factory).__name__}): "
                         "it must name an agent factory or class")
    entry = AgentKind(label, factory, False, "", f"importable factory {label}", True, label)
    return entry, _checked_options(entry, options, spec)


def _checked_options(entry: AgentKind, text: str, spec: str) -> str | None:
    """The options text of an options kind, its syntax and names checked against the factory's signature."""
    options = split_options(text, spec=spec)
    for name in options:
        if name in _SET_BY_TOOLS:
            raise ValueError(f"agent spec {spec!r}: option {name!r} is not allowed: the tools pass {name}=")
    try:
        params = inspect.signature(entry.factory).parameters
    except (TypeError, ValueError):  # no signature to read: the factory checks its own arguments
        return text or None
    if not _declares(entry.factory, "seed"):
        raise ValueError(f"agent spec {spec!r}: {entry.source or entry.kind} takes no seed=: a factory is called as "
                         "factory(seed=..., **options), e.g. def make_bot(seed=None, depth=3)")
    named = {n: p for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY)}
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        for name in options:
            if name not in named:
                allowed = ", ".join(n for n in named if n not in _SET_BY_TOOLS) or "none"
                raise ValueError(f"agent spec {spec!r}: {entry.source or entry.kind} has no option {name!r}: "
                                 f"its options are {allowed}")
    for name, p in named.items():
        if p.default is p.empty and name not in _SET_BY_TOOLS and name not in options:
            raise ValueError(f"agent spec {spec!r}: {entry.source or entry.kind} needs the option {name}=VALUE")
    return text or None


def parse_spec(spec: str) -> tuple[AgentKind, str | None]:
    """Split and check a spec string; raises ``ValueError`` naming the spec and the valid ones.

    Registered kinds are a dictionary look-up. Another kind is an entry point of the
    group ``pcr.agents`` (registered on first use), else ``MODULE:FACTORY[:OPTIONS]``,
    whose module is imported and factory checked (see the module docstring). For a kind
    with options the second element is the options text.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} is not a non-empty string: valid specs are {_valid_specs()}")
    kind, sep, arg = spec.strip().partition(":")
    entry = _REGISTRY.get(kind) or _entry_point_kind(kind, spec)
    if entry is None:
        if sep and _is_module_path(kind):
            return _factory_kind(kind, arg, spec)
        if sep and kind.isidentifier():  # MODULE:FACTORY whose module is nowhere: say so
            raise ValueError(f"unknown agent spec {spec!r}: {kind!r} is not a registered kind, an entry point of "
                             f"{ENTRY_POINT_GROUP} or an importable module (No module named {kind!r}); "
                             f"valid specs are {_valid_specs()}")
        raise ValueError(f"unknown agent spec {spec!r}: valid specs are {_valid_specs()}")
    if entry.options:
        return entry, _checked_options(entry, arg, spec)
    if entry.takes_arg and not arg:
        raise ValueError(f"agent spec {spec!r} needs an argument: write {entry.pattern!r}; valid specs are {_valid_specs()}")
    if not entry.takes_arg and sep:
        raise ValueError(f"agent spec {spec!r} takes no argument: write {entry.kind!r}; valid specs are {_valid_specs()}")
    return entry, (arg if entry.takes_arg else None)


def _declares(factory: Callable[..., Any], name: str) -> bool:
    """Whether ``factory`` takes a keyword argument ``name`` (by name or through ``**kwargs``)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): pass it, as before
        return True
    return any(p.kind == p.VAR_KEYWORD or (p.name == name and p.kind != p.POSITIONAL_ONLY) for p in params)


def make_agent(spec: str, seed: int | None = None, *, rules: RulesConfig | None = None, **kwargs: Any) -> Agent:
    """Build an agent from its spec string (see the module docstring for the names).

    ``seed`` seeds the agent's randomness. ``rules`` (the rules the table plays,
    which the observation does not carry in full) reaches factories that declare
    it; other keyword arguments go to the factory as given (the PPO loader also
    accepts ``device=...``; for a kind with options they override the spec's).
    """
    return _build(*parse_spec(spec), seed, rules, kwargs)


def _build(entry: AgentKind, arg: str | None, seed: int | None, rules: RulesConfig | None,
           kwargs: dict[str, Any]) -> Agent:
    """Call the factory of a parsed spec (``rules`` only if it declares them)."""
    if rules is not None and _declares(entry.factory, "rules"):
        kwargs = {**kwargs, "rules": rules}
    if entry.options:
        agent = entry.factory(seed=seed, **{**parse_options(arg or ""), **kwargs})
    elif entry.takes_arg:
        agent = entry.factory(arg, seed=seed, **kwargs)
    else:
        agent = entry.factory(seed=seed, **kwargs)
    if entry.source and not is_seat_agent(agent):
        spec = entry.kind if arg is None else f"{entry.kind}:{arg}"
        raise ValueError(f"agent spec {spec!r}: {entry.source} returned {_short(agent)}, not an agent: "
                         "an object with act(obs) -> int and reset(seed) (agents.BaseAgent gives reset)")
    return agent


def _short(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


_SPEC_OR_AGENT = ("an agent spec string ('random', 'heuristic', 'ppo:PATH', 'ppo:pretrained') "
                  "or an agent object with act(obs) -> int and reset(seed)")


def make_agents(specs: str | Agent | Sequence[str | Agent] | Mapping[int, str | Agent], seats: Sequence[int],
                seed: int | None = None, rules: RulesConfig | None = None, *, name: str = "agents") -> dict[int, Agent]:
    """``{seat: agent}`` for ``seats``: specs are built with :func:`make_agent`, objects used as given.

    ``specs`` is one spec or agent for every seat, one per seat in the order of
    ``seats``, or ``{seat: spec}`` naming each seat (:func:`pcr_env.seating.per_seat`;
    ``name`` is what error messages call it). Each seat gets its own agent built from
    a spec string. With a ``seed``, the agent at seat ``s`` is seeded
    ``derive_seed(seed, s)`` (an object by ``reset``: one object at two seats ends up
    with the last seat's seed); without, spec-built agents draw fresh entropy and
    objects keep their state.
    """
    entries = per_seat(specs, seats, name=name, valid=lambda e: isinstance(e, str) or is_seat_agent(e),
                       allowed=_SPEC_OR_AGENT)
    # Every spec is parsed before anything is built, so a bad one fails first, named.
    parsed = {s: parse_spec(entry) for s, entry in entries.items() if isinstance(entry, str)}
    agents: dict[int, Agent] = {}
    for s, entry in entries.items():
        agent_seed = None if seed is None else derive_seed(seed, s)
        if s in parsed:
            agents[s] = _build(*parsed[s], agent_seed, rules, {})
        else:
            if agent_seed is not None:
                entry.reset(agent_seed)
            agents[s] = entry
    return agents


def spec_label(entry: str | Any) -> str:
    """How tools name a seat's player: the spec itself, else the agent's ``name`` or class name."""
    if isinstance(entry, str):
        return entry
    name = getattr(entry, "name", None)
    return name if isinstance(name, str) and name and name != "agent" else type(entry).__name__


# --------------------------------------------------------------------- the Gymnasium id
class _GymEnvFactory:
    """``make_gym_env(seat=0, others="random", **kwargs)``: the entry point of ``"PassCutRun-v0"``.

    ``others`` may hold spec strings, agent objects or both (one for every other
    seat, one per other seat, or ``{seat: spec}``); they are built for the env's rules
    by :func:`make_agents` once, when the env is made, and re-seeded by each seeded
    ``reset``. A factory ``others(seats, rules)`` is passed through. Every other
    keyword goes to :class:`pcr_env.gym_env.PassCutRunEnv` (which checks it).
    """

    @property
    def metadata(self) -> dict[str, Any]:  # gymnasium.make reads the creator's render modes
        from pcr_env.gym_env import PassCutRunEnv

        return PassCutRunEnv.metadata

    def __call__(self, seat: int = 0, others: Any = "random", **kwargs: Any):
        from pcr_env.gym_env import PassCutRunEnv

        if callable(others) and not is_seat_agent(others):
            return PassCutRunEnv(seat, others, **kwargs)

        def build(other_seats: tuple[int, ...], rules: RulesConfig) -> dict[int, Agent]:
            return make_agents(others, other_seats, seed=None, rules=rules, name="others")

        return PassCutRunEnv(seat, build, **kwargs)

    def __repr__(self) -> str:
        return "agents.registry.make_gym_env"


make_gym_env = _GymEnvFactory()


# ----------------------------------------------------------------------- built-in kinds
def _ppo_factory(path: str, seed: int | None = None, **kwargs: Any) -> Agent:
    try:
        from agents.ppo import load_ppo_agent  # imported lazily: it pulls in torch
    except ModuleNotFoundError as err:
        if err.name != "torch":
            raise
        raise ImportError(f"agent spec 'ppo:{path}' needs torch, which is not installed: "
                          "pip install torch==2.13.0, then pip install 'pcr[train]'") from err

    # ``rules`` (the table's rules) lets the loader refuse a checkpoint trained for another variant.
    return load_ppo_agent(path, seed=seed, **kwargs)


def _search_factory(base_spec: str, seed: int | None = None, rules: RulesConfig | None = None, **kwargs: Any) -> Agent:
    from agents.search.agent import SearchAgent  # imported lazily, like ppo

    base = make_agent(base_spec, seed=seed, rules=rules)
    return SearchAgent(base, rules or getattr(base, "rules", None), seed=seed, source=f"search:{base_spec}", **kwargs)


def _mix_factory(base_spec: str, seed: int | None = None, rules: RulesConfig | None = None, *,
                 other: str = "heuristic", phases: Sequence[str] = ("play",), **kwargs: Any) -> Agent:
    from agents.search.phase_mix import PhaseMix

    if not isinstance(other, str):
        raise ValueError(f"mix other={other!r} is not allowed: allowed an agent spec string, e.g. 'heuristic'")
    primary = make_agent(base_spec, seed=seed, rules=rules)
    return PhaseMix(primary, make_agent(other, seed=seed, rules=rules), tuple(phases), seed=seed,
                    name=f"mix:{base_spec}[{'+'.join(phases)}={other}]", **kwargs)


def _pimc_factory(seed: int | None = None, rules: RulesConfig | None = None, **kwargs: Any) -> Agent:
    from agents.search.pimc import PIMCAgent  # needs the double-dummy solver of the pimc extra

    return PIMCAgent(seed=seed, rules=rules, **kwargs)


def _openspiel_factory(arg: str, seed: int | None = None, rules: RulesConfig | None = None, **kwargs: Any) -> Agent:
    from agents.search.openspiel_bots import make_openspiel_agent  # imported lazily: it needs open-spiel

    return make_openspiel_agent(arg, seed=seed, rules=rules, **kwargs)


register_agent("random", RandomAgent, description="uniform over the legal actions")
register_agent("greedy", GreedyAgent, description="wins each trick as cheaply as it can; naive bidding")
register_agent("heuristic", HeuristicAgent, description="rule-based player (pass, bid, trump, play)")
register_agent("ppo", _ppo_factory, takes_arg=True, arg_name="PATH",
               description="PPO policy from a checkpoint file (a run directory: its best.pt); ppo:pretrained is the shipped one")
register_agent("search", _search_factory, takes_arg=True, arg_name="SPEC",
               description="decision-time search: base policy SPEC rolled out over sampled worlds (search:ppo:pretrained)")
register_agent("mix", _mix_factory, takes_arg=True, arg_name="SPEC",
               description="SPEC's decisions except card play, which the heuristic makes (options other=, phases=)")
register_agent("pimc", _pimc_factory, description="double-dummy play and bids over sampled worlds (four players; pimc extra)")
register_agent("openspiel", _openspiel_factory, takes_arg=True, arg_name="BOT",
               description="OpenSpiel's search bots: openspiel:ismcts (IS-MCTS, random rollouts), openspiel:mcts "
                           "(MCTS over sampled worlds); options e.g. openspiel:ismcts:sims=200 (openspiel extra)")


__all__ = ["ENTRY_POINT_GROUP", "AgentKind", "list_agents", "make_agent", "make_agents", "make_gym_env",
           "parse_options", "parse_spec", "register_agent", "spec_label", "split_options"]
