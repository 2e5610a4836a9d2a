"""Typed dataclass configs loaded from YAML, with ``key=value`` overrides.

``train.py`` declares its configuration as nested dataclasses, each field with a
type annotation, a default and a docstring. This module turns YAML (or a plain
dict) into those dataclasses and back, checking every value against its field's
annotation. A key the dataclass does not declare, or a value of the wrong type,
is a ``ValueError`` that names the dotted key, the value and what is allowed.
Range checks belong to each dataclass's ``__post_init__``; they raise
:class:`ConfigValueError` with the field's name and this module prefixes the
section.

Supported annotations: ``bool``, ``int``, ``float`` (an integer is accepted),
``str``, ``Literal[...]``, ``X | None``, ``tuple[T, ...]``, ``dict[str, T]`` and
nested dataclasses.

>>> from pcr_env.config import RulesConfig
>>> from_dict(RulesConfig, apply_overrides({"players": 6}, ["bidding=auction"])).min_bid_value
5
>>> from_dict(RulesConfig, {"player": 6}, prefix="rules")
Traceback (most recent call last):
...
ValueError: unknown config key 'rules.player' (did you mean 'rules.players'?): allowed keys in 'rules' are ['bidding', 'double_run_bonus', 'first_dealer', 'max_redeals', 'max_rounds', 'min_bid', 'passing', 'players', 'target_score']
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import math
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Literal, Mapping, Union

import yaml


class ConfigValueError(ValueError):
    """A field's value is out of range; raised by a config dataclass's ``__post_init__``."""

    def __init__(self, key: str, value: Any, allowed: str):
        self.key, self.value, self.allowed = key, value, allowed
        super().__init__(f"config key {key!r} = {value!r} is not allowed: allowed {allowed}")

    def prefixed(self, prefix: str) -> "ConfigValueError":
        return ConfigValueError(_join(prefix, self.key), self.value, self.allowed)


def require(ok: bool, key: str, value: Any, allowed: str) -> None:
    """Raise :class:`ConfigValueError` unless ``ok`` (for ``__post_init__`` range checks)."""
    if not ok:
        raise ConfigValueError(key, value, allowed)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _describe(tp: Any) -> str:
    """Human-readable name of an annotation, for error messages."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return " or ".join(repr(a) for a in args)
    if origin in (Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _describe(a) for a in args)
    if origin is tuple:
        return f"a list of {_plural(args[0])}" if len(args) == 2 and args[1] is Ellipsis else "a list"
    if origin is dict:
        return f"a mapping of {_plural(args[0])} to {_plural(args[1])}"
    if dataclasses.is_dataclass(tp):
        return f"a mapping of the fields of {tp.__name__}"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(tp, str(tp))


def _plural(tp: Any) -> str:
    return {bool: "booleans", int: "integers", float: "numbers", str: "strings"}.get(tp, _describe(tp))


def _convert(tp: Any, value: Any, key: str) -> Any:
    """Check ``value`` against annotation ``tp`` and return it in the dataclass's type."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)

    def bad() -> ValueError:
        return ValueError(f"config key {key!r} = {value!r} is not allowed: expected {_describe(tp)}")

    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, Mapping):
            raise bad()
        return from_dict(tp, value, prefix=key)
    if origin is Literal:
        if value in args and type(value) in {type(a) for a in args}:
            return value
        raise bad()
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(option, value, key)
            except ValueError:
                continue
        raise bad()
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise bad()
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{key}[{i}]") for i, v in enumerate(value))
        if len(args) != len(value):
            raise bad()
        return tuple(_convert(a, v, f"{key}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise bad()
        return {_convert(args[0], k, key): _convert(args[1], v, _join(key, str(k))) for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise bad()
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            return int(value)  # 1e6 in YAML is a float
        raise bad()
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise bad()
            return float(value)
        if isinstance(value, str):
            # PyYAML reads "1e-4" (no dot) as a string (YAML 1.1); accept numeric strings.
            try:
                number = float(value)
            except ValueError:
                raise bad() from None
            if math.isfinite(number):
                return number
        raise bad()
    if tp is str:
        if isinstance(value, str):
            return value
        raise bad()
    if tp is Any:
        return value
    raise TypeError(f"config key {key!r}: unsupported annotation {tp!r}")


def from_dict(cls: type, data: Mapping[str, Any] | None, prefix: str = "") -> Any:
    """Build dataclass ``cls`` from a mapping; missing keys keep their defaults."""
    data = {} if data is None else data
    if not isinstance(data, Mapping):
        raise ValueError(f"config section {prefix or '<top>'!r} = {data!r} is not allowed: expected a mapping")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs = {}
    for key, value in data.items():
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean {_join(prefix, close[0])!r}?)" if close else ""
            where = f"in {prefix!r}" if prefix else "at the top level"
            raise ValueError(f"unknown config key {_join(prefix, str(key))!r}{hint}: allowed keys {where} are {sorted(fields)}")
        kwargs[key] = _convert(hints[key], value, _join(prefix, key))
    try:
        return cls(**kwargs)
    except ConfigValueError as err:
        raise err.prefixed(prefix) from None
    except ValueError as err:
        # A dataclass with its own validation (pcr_env.RulesConfig) names the field itself.
        raise ValueError(f"config section {prefix or '<top>'!r}: {err}") from None


def to_dict(obj: Any) -> Any:
    """Plain YAML-safe data (dicts, lists, scalars) from a config dataclass."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, Mapping):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping of config keys.

    A file with no keys at all (empty, or only comments) is refused: it would silently
    train the built-in defaults. Write ``{}`` to ask for the defaults on purpose. A
    syntax error is one line naming the file, the line and the column.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config file {str(path)!r} does not exist")
    try:
        with path.open() as f:
            data = yaml.safe_load(f)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"
        problem = err.problem or err.context or "syntax error"
        raise ValueError(f"config file {str(path)!r} is not valid YAML: {where}: {problem}") from None
    except yaml.YAMLError as err:
        raise ValueError(f"config file {str(path)!r} is not valid YAML: {str(err).splitlines()[0]}") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"config file {str(path)!r} is not a text file ({err.reason} at byte {err.start})") from None
    if data is None:
        raise ValueError(f"config file {str(path)!r} holds no config keys (it is empty or only comments): "
                         "it would train the built-in defaults; write {} to do that on purpose, "
                         "or see the keys with --list-keys")
    if not isinstance(data, dict):
        raise ValueError(f"config file {str(path)!r} holds {type(data).__name__}: expected a mapping of keys")
    return data


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``dotted.key=value`` strings (values parsed as YAML) to a nested dict copy."""
    out = _deep_copy(data)
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ValueError(f"override {item!r} is not allowed: expected key=value, e.g. ppo.learning_rate=1e-4")
        value = yaml.safe_load(raw) if raw.strip() else ""
        node = out
        parts = key.split(".")
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ValueError(f"override {item!r}: config key {'.'.join(parts[:i + 1])!r} is not a section")
            node = child
        node[parts[-1]] = value
    return out


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data


def field_docs(cls: type) -> dict[str, str]:
    """Docstrings written under each field of a dataclass (the ``x: int = 0`` / ``\"\"\"doc\"\"\"`` idiom)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)):
            docs[node.target.id] = inspect.cleandoc(nxt.value.value)
    return docs


def describe_config(cls: type, prefix: str = "") -> list[tuple[str, str, str]]:
    """``(dotted key, type, doc)`` of every leaf field, for ``--help`` style listings."""
    rows: list[tuple[str, str, str]] = []
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        key = _join(prefix, f.name)
        if dataclasses.is_dataclass(tp):
            rows.extend(describe_config(tp, key))
        else:
            rows.append((key, _describe(tp), docs.get(f.name, "").split("\n")[0]))
    return rows


__all__ = ["ConfigValueError", "require", "from_dict", "to_dict", "load_yaml", "apply_overrides", "field_docs",
           "describe_config"]
