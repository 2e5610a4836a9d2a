"""The validated rules configuration (RULES.md, every "config" field).

Errors follow Python's own convention, in every constructor of :mod:`pcr_env`
(``RulesConfig``, ``pass_cut_run_v0.env``/``raw_env``, ``gymnasium.make("PassCutRun-v0")``,
``VectorEnv``): an unknown keyword argument raises ``TypeError`` with
"got an unexpected keyword argument 'name'" (the text wrappers such as TorchRL's
``GymEnv`` look for before retrying without an optional keyword), and a bad
value of a known keyword raises ``ValueError`` naming the field, the value and
what is allowed.

**A rules field is written once**: its type, default, docstring and marks (:func:`rule`) here, and its
rule in :mod:`pcr_env.engine`. What else knows the rules is derived from :func:`rule_fields`: the OpenSpiel
parameters and defaults (:meth:`RulesConfig.to_plain`), the fields a checkpoint's policy depends on
(:func:`variant_fields`) and the command-line rules flags (:mod:`pcr_env.rules_flags`); see
docs/environment.md, "Adding a variant".
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import textwrap
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .cards import NUM_CARDS


def rule(default: Any, *, variant: bool, effective: str | None = None, plain: Mapping[Any, Any] | None = None) -> Any:
    """A rules field: its default and its marks (every field of :class:`RulesConfig` is one; tested).

    ``variant``: whether the field changes the game a policy was trained for (a checkpoint trained on
    another value is refused: :func:`variant_fields`); ``False`` for a field that only bounds or seeds an
    episode. ``effective``: a property that must differ too for two values to be two games (``min_bid``:
    ``min_bid_value``, so ``None`` and the majority it means are one game). ``plain``: for a field
    whose values are not all of one plain type, the value of that type that stands for each other value
    where a parameter has one type (OpenSpiel's): ``{None: 0}``, ``{"random": -1}``.
    """
    marks = {"variant": variant, "effective": effective, "plain": dict(plain or {})}
    return dataclasses.field(default=default, metadata=marks)


@dataclass(frozen=True)
class RulesConfig:
    """Rules of one game of Pass Cut Run. Defaults are the rules of record.

    >>> RulesConfig().min_bid_value, RulesConfig(players=6).min_bid_value
    (7, 5)
    >>> RulesConfig(players=5)
    Traceback (most recent call last):
    ...
    pcr_env.config.RulesValueError: rules field 'players' = 5 is not allowed: allowed 4 or 6
    >>> RulesConfig.from_kwargs({"player": 6})
    Traceback (most recent call last):
    ...
    TypeError: RulesConfig() got an unexpected keyword argument 'player' (did you mean 'players'?): allowed players, ...
    """

    players: int = rule(4, variant=True)
    """Seats at the table (R1.1): 4, or 6 for the R9.3 variant."""
    passing: bool = rule(True, variant=True)
    """Whether the passing phase is played (R3); ``False`` is the "no pass" variant (R3.4)."""
    double_run_bonus: bool = rule(False, variant=True)
    """Double every run bonus (R7.3)."""
    bidding: Literal["single", "auction"] = rule("single", variant=True)
    """One turn around the table (``"single"``) or an open auction (``"auction"``), R4.3."""
    min_bid: int | None = rule(None, variant=True, effective="min_bid_value", plain={None: 0})
    """Lowest bid (R4.2); ``None`` means a majority of the tricks (7 with four players, 5 with six)."""
    target_score: int = rule(100, variant=True)
    """Score that ends the game (R8.4)."""
    max_rounds: int = rule(200, variant=False)
    """Scored rounds after which an unfinished game is truncated (R8.4)."""
    max_redeals: int = rule(10, variant=False)
    """Consecutive all-pass redeals allowed before the episode is truncated (R4.4)."""
    first_dealer: int | Literal["random"] = rule("random", variant=False, plain={"random": -1})
    """Dealer of round 1: ``"random"`` (drawn from the seeded RNG) or a seat (R2.1)."""

    def __post_init__(self) -> None:
        _check(_is_int(self.players) and self.players in (4, 6), "players", self.players, "4 or 6")
        for name in ("passing", "double_run_bonus"):
            _check(isinstance(getattr(self, name), bool), name, getattr(self, name), "true or false")
        _check(self.bidding in ("single", "auction"), "bidding", self.bidding, "'single' or 'auction'")
        if self.min_bid is not None:
            _check(
                _is_int(self.min_bid) and 1 <= self.min_bid <= self.num_tricks,
                "min_bid", self.min_bid, f"an integer 1..{self.num_tricks} or null",
            )
        _check(_is_int(self.target_score) and self.target_score >= 1, "target_score", self.target_score, "an integer >= 1")
        _check(_is_int(self.max_rounds) and self.max_rounds >= 1, "max_rounds", self.max_rounds, "an integer >= 1")
        _check(_is_int(self.max_redeals) and self.max_redeals >= 0, "max_redeals", self.max_redeals, "an integer >= 0")
        _check(
            self.first_dealer == "random" or (_is_int(self.first_dealer) and 0 <= self.first_dealer < self.players),
            "first_dealer", self.first_dealer, f"'random' or a seat 0..{self.players - 1}",
        )

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player (R2.2)."""
        return 13 if self.players == 4 else 8

    @property
    def num_tricks(self) -> int:
        """Tricks per round (R6.5)."""
        return self.hand_size

    @property
    def kitty_size(self) -> int:
        """Cards left face down after the deal (R9.3)."""
        return NUM_CARDS - self.players * self.hand_size

    @property
    def min_bid_value(self) -> int:
        """The effective minimum bid (R4.2)."""
        return self.num_tricks // 2 + 1 if self.min_bid is None else self.min_bid

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any], *, owner: str = "RulesConfig",
                    other_keywords: Iterable[str] = ()) -> "RulesConfig":
        """Build from keyword arguments (rules fields only), rejecting unknown names clearly.

        An unknown name raises ``TypeError`` "OWNER() got an unexpected keyword
        argument 'name'", like a Python function; ``other_keywords`` are the
        caller's own keywords, listed with the fields as allowed. Bad values raise
        ``ValueError`` (see the class).
        """
        unknown = sorted(set(kwargs) - set(cls.field_names()))
        if unknown:
            raise unexpected_keywords(owner, unknown, [*other_keywords, *cls.field_names()])
        return cls(**kwargs)

    @classmethod
    def from_mapping(cls, mapping: Any, *, where: str = "rules") -> "RulesConfig":
        """Build from a mapping of fields given as a *value* (``rules={...}``, a config file).

        Unknown or non-string keys are a bad value, so they raise ``ValueError``
        naming them (unlike :meth:`from_kwargs`, whose names are keyword arguments).
        """
        check_field_names(mapping, where)
        return cls(**dict(mapping))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_plain(self) -> dict[str, Any]:
        """The fields as values of one plain type each (an int, bool or str), as OpenSpiel's parameters are:
        a value outside the field's type is its ``plain`` mark's code (``min_bid`` ``None`` is 0).

        >>> RulesConfig().to_plain()["min_bid"], RulesConfig(first_dealer=2).to_plain()["first_dealer"]
        (0, 2)
        """
        return {f.name: f.plain.get(getattr(self, f.name), getattr(self, f.name)) for f in rule_fields(type(self))}

    @classmethod
    def from_plain(cls, params: Mapping[str, Any]) -> "RulesConfig":
        """The inverse of :meth:`to_plain` (every field's plain value; a ``plain`` mark's code is its value)."""
        values = {}
        for f in rule_fields(cls):
            codes = {code: value for value, code in f.plain.items()}
            values[f.name] = codes.get(params[f.name], params[f.name])
        return cls(**values)


@dataclass(frozen=True)
class RuleField:
    """What a rules field says of itself: read by everything derived from the fields (:func:`rule_fields`)."""

    name: str
    default: Any
    doc: str
    """Its docstring (the text under the field), "" where the source cannot be read."""
    kind: type
    """The one plain type of its values: ``int``, ``bool``, ``float`` or ``str``."""
    choices: tuple[Any, ...] | None
    """Every allowed value, where the type is a ``Literal``."""
    others: tuple[Any, ...]
    """Allowed values outside ``kind`` (``None``, a literal string beside ``int``), each with a ``plain`` code."""
    variant: bool
    effective: str
    plain: dict[Any, Any]


@functools.lru_cache(maxsize=None)
def rule_fields(cls: type = RulesConfig) -> tuple[RuleField, ...]:
    """The fields of ``cls`` (:class:`RulesConfig` or a dataclass like it) with their types, docstrings and marks.

    A field without the marks of :func:`rule`, of a type that is not one plain type (plus ``None`` or
    literal values), or whose ``plain`` mark does not cover its other values is a ``TypeError``.

    >>> [(f.name, f.kind.__name__, f.others) for f in rule_fields() if f.others]
    [('min_bid', 'int', (None,)), ('first_dealer', 'int', ('random',))]
    """
    hints, docs, out = typing.get_type_hints(cls), _field_docs(cls), []
    for f in dataclasses.fields(cls):
        if "variant" not in f.metadata:
            raise TypeError(f"rules field {f.name!r} has no marks: write it as rule(default, variant=...) (pcr_env.config.rule)")
        kind, choices, others = _field_type(f.name, hints[f.name])
        if set(others) != set(f.metadata["plain"]):
            raise TypeError(f"rules field {f.name!r} takes {kind.__name__} or {others!r}: its rule(..., plain=...) "
                            f"must give a {kind.__name__} for each of {list(others)}, not {f.metadata['plain']!r}")
        out.append(RuleField(f.name, f.default, docs.get(f.name, ""), kind, choices, others, f.metadata["variant"],
                             f.metadata["effective"] or f.name, f.metadata["plain"]))
    return tuple(out)


def variant_fields(cls: type = RulesConfig) -> tuple[str, ...]:
    """The fields that change the game a policy was trained for (marked ``variant=True``)."""
    return tuple(f.name for f in rule_fields(cls) if f.variant)


def variant_differences(a: RulesConfig, b: RulesConfig) -> tuple[str, ...]:
    """The variant fields on which ``a`` and ``b`` are different games: their values differ, and so do their
    ``effective`` values (``min_bid`` ``None`` and 7 are one game with four players).

    >>> variant_differences(RulesConfig(), RulesConfig(min_bid=7, max_rounds=5, target_score=50))
    ('target_score',)
    """
    return tuple(f.name for f in rule_fields(type(a)) if f.variant and getattr(a, f.name) != getattr(b, f.name)
                 and getattr(a, f.effective) != getattr(b, f.effective))


_PLAIN_TYPES = (bool, int, float, str)


def _field_type(name: str, hint: Any) -> tuple[type, tuple[Any, ...] | None, tuple[Any, ...]]:
    """``(kind, choices, others)`` of a field's type: ``int`` (int, None, ()), ``Literal["a", "b"]`` (str, ("a",
    "b"), ()), ``int | None`` (int, None, (None,)), ``int | Literal["random"]`` (int, None, ("random",))."""
    parts = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    kinds, literals = [p for p in parts if p in _PLAIN_TYPES], []
    for part in parts:
        if part is type(None):
            literals.append(None)
        elif typing.get_origin(part) is Literal:
            literals.extend(typing.get_args(part))
        elif part not in _PLAIN_TYPES:
            raise TypeError(f"rules field {name!r} has type {hint!r}: allowed one of int, bool, float, str, a Literal, "
                            "and None or literal values beside one of those types")
    if not kinds and literals and len({type(v) for v in literals}) == 1 and type(literals[0]) in _PLAIN_TYPES:
        return type(literals[0]), tuple(literals), ()
    if len(kinds) != 1:
        raise TypeError(f"rules field {name!r} has type {hint!r}: its values must be of one plain type (plus None "
                        "or literal values)")
    return kinds[0], None, tuple(literals)


def _field_docs(cls: type) -> dict[str, str]:
    """The docstrings under the fields of ``cls`` and its dataclass bases (read from the source)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body  # type: ignore[attr-defined]
        except (OSError, TypeError, SyntaxError, IndexError, AttributeError):
            continue
        for node, after in zip(body, body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


EPISODES = ("game", "round")
"""Episode lengths of the environments: a whole game (R8.4) or one scored round."""
REWARDS = ("score_diff", "win")
"""Reward kinds: each round's score difference, or +1/-1 when the game is won."""


def check_episode_reward(episode: str, reward: str) -> None:
    """Validate the ``episode`` and ``reward`` keywords shared by every environment."""
    if episode not in EPISODES:
        raise ValueError(f"episode {episode!r} is not allowed: allowed {list(EPISODES)}")
    if reward not in REWARDS:
        raise ValueError(f"reward {reward!r} is not allowed: allowed {list(REWARDS)}")


def check_field_names(mapping: Any, where: str = "rules") -> None:
    """``ValueError`` naming the keys of ``mapping`` that are not rules fields (a bad *value*, not a keyword)."""
    unknown = sorted(map(repr, set(mapping) - set(RulesConfig.field_names())))
    if unknown:
        raise ValueError(f"{where} has unknown rules field(s) [{', '.join(unknown)}]: allowed {list(RulesConfig.field_names())}")


def unexpected_keywords(owner: str, names: Iterable[str], allowed: Iterable[str]) -> TypeError:
    """The ``TypeError`` for unknown keyword arguments, worded as Python words it.

    >>> unexpected_keywords("raw_env", ["frameskip"], ["episode", "players"])
    TypeError("raw_env() got an unexpected keyword argument 'frameskip': allowed episode, players")
    """
    allowed = list(allowed)
    parts = []
    for name in sorted(names, key=str):
        close = difflib.get_close_matches(name, allowed, n=1) if isinstance(name, str) else []
        parts.append(f"an unexpected keyword argument {name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return TypeError(f"{owner}() got {' and '.join(parts)}: allowed {', '.join(allowed)}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class RulesValueError(ValueError):
    """A bad value of a rules field: a ``ValueError`` whose ``field`` names the field (a command line names its flag)."""

    field: str = ""


def _check(ok: bool, name: str, value: Any, allowed: str) -> None:
    if not ok:
        err = RulesValueError(f"rules field {name!r} = {value!r} is not allowed: allowed {allowed}")
        err.field = name  # an attribute, not an argument: the error pickles (worker processes) as a plain one does
        raise err


__all__ = ["RulesConfig", "RuleField", "RulesValueError", "EPISODES", "REWARDS", "check_episode_reward", "check_field_names",
           "rule", "rule_fields", "unexpected_keywords", "variant_differences", "variant_fields"]
