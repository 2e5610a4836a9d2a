"""The command-line rules flags, one set for every tool (``evaluate.py``, ``python -m agents.play``,
``python -m agents.serve``), derived from :class:`~pcr_env.config.RulesConfig`'s fields.

Each field is a flag ``--NAME`` (underscores as dashes) with the field's type, its choices, its docstring as
the help and its default; a yes/no field is ``--NAME`` / ``--no-NAME``, and ``--NAME BOOL`` (true/false,
yes/no, 1/0, on/off) says it outright. A field whose values are an integer or a word takes either
(``--first-dealer 2``, ``--first-dealer random``; ``--min-bid none`` is the majority). A value that is not of
the field's type is argparse's usage error naming the flag; a value the rules refuse (``--min-bid 14``,
``--players 5``) is a ``ValueError`` from :func:`rules_from_args` naming the flag and what is allowed.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> _ = add_rules_arguments(parser)
>>> rules_from_args(parser.parse_args(["--players", "6", "--no-passing", "--bidding", "auction"]))
RulesConfig(players=6, passing=False, double_run_bonus=False, bidding='auction', min_bid=None, target_score=100, \
max_rounds=200, max_redeals=10, first_dealer='random')
>>> rules_from_args(parser.parse_args(["--passing", "false", "--double-run-bonus", "--first-dealer", "1"])).first_dealer
1
>>> rules_from_args(parser.parse_args(["--min-bid", "14"]))
Traceback (most recent call last):
...
ValueError: argument --min-bid: rules field 'min_bid' = 14 is not allowed: allowed an integer 1..13 or null
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any

from .config import RuleField, RulesConfig, RulesValueError, rule_fields

TITLE = "rules (RULES.md; defaults are the rules of record)"


def flag_of(name: str) -> str:
    """The flag of a rules field: ``min_bid`` is ``--min-bid``."""
    return "--" + name.replace("_", "-")


def add_rules_arguments(parser: argparse.ArgumentParser, *, exclude: Iterable[str] = (),
                        cls: type = RulesConfig) -> argparse._ArgumentGroup:
    """Add a group of one flag per field of ``cls`` (but ``exclude``'s) to ``parser``; the destination is the
    field's name. :func:`rules_from_args` builds the rules from the parsed arguments."""
    exclude = set(exclude)
    unknown = exclude - {f.name for f in rule_fields(cls)}
    if unknown:
        raise ValueError(f"add_rules_arguments: exclude names no rules field {sorted(unknown)}")
    group = parser.add_argument_group(TITLE)
    for field in rule_fields(cls):
        if field.name not in exclude:
            _add_flag(group, field)
    return group


def rules_from_args(args: argparse.Namespace, cls: type = RulesConfig) -> Any:
    """The ``cls`` of the flags that :func:`add_rules_arguments` added (a field left out keeps its default).

    A value the rules refuse is a ``ValueError`` "argument --FLAG: rules field ... is not allowed: allowed ...".
    """
    values = {f.name: getattr(args, f.name) for f in rule_fields(cls) if hasattr(args, f.name)}
    try:
        return cls(**values)
    except RulesValueError as err:
        if err.field not in values:
            raise
        raise ValueError(f"argument {flag_of(err.field)}: {err}") from None


def _add_flag(group: argparse._ArgumentGroup, field: RuleField) -> None:
    flag = flag_of(field.name)
    if field.kind is bool:
        group.add_argument(flag, dest=field.name, type=parse_bool, nargs="?", const=True, default=field.default,
                           metavar="BOOL", help=_help(field, f"; {flag} alone: true"))
        group.add_argument("--no-" + flag[2:], dest=field.name, action="store_false", default=field.default,
                           help=f"the same as {flag} false")
    elif field.choices is not None:
        group.add_argument(flag, dest=field.name, type=field.kind, choices=field.choices, default=field.default,
                           help=_help(field))
    else:
        words = ["none" if v is None else str(v) for v in field.others]
        group.add_argument(flag, dest=field.name, type=_parse_value(field), default=field.default,
                           metavar="|".join(["N" if field.kind is int else "X", *words]), help=_help(field))


def _help(field: RuleField, more: str = "") -> str:
    """The field's docstring (one line, no markup) and its default."""
    doc = " ".join(field.doc.replace("``", "").split()).replace("%", "%%")
    default = field.default
    shown = "none" if default is None else str(default).lower() if isinstance(default, bool) else str(default)
    return f"{doc} (default: {shown}{more})".lstrip()


def parse_bool(text: str) -> bool:
    """``true``/``yes``/``1``/``on`` or ``false``/``no``/``0``/``off`` (any case), else argparse's type error."""
    value = text.strip().lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean: allowed true or false")


def _parse_value(field: RuleField) -> Callable[[str], Any]:
    """The type of a flag whose values are of ``field.kind`` or one of ``field.others`` (``none`` is None)."""
    words = {("none" if v is None else str(v)): v for v in field.others}
    name = {int: "an integer", float: "a number", str: "a text"}.get(field.kind, field.kind.__name__)

    def parse(text: str) -> Any:
        if text.strip().lower() in words:
            return words[text.strip().lower()]
        try:
            return field.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not allowed: allowed {name}" + "".join(f" or {w}" for w in words)) from None

    parse.__name__ = field.kind.__name__
    return parse


__all__ = ["TITLE", "add_rules_arguments", "flag_of", "parse_bool", "rules_from_args"]
