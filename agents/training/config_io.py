"""Training configs: YAML files validated by pydantic models, ``key=value`` overrides, one-line errors.

``train.py`` declares its config as pydantic models, one per section, each field typed and
documented by the docstring under it (``use_attribute_docstrings``); ``rules`` and
``network`` are the stdlib dataclasses :class:`pcr_env.RulesConfig` and
:class:`agents.ppo.NetworkConfig`, which pydantic validates as nested fields (the
environment package does not depend on pydantic). Pydantic does the type checking,
coercion and unknown-key detection; this module adds what an application has to:

* YAML files that derive from another: ``base: ppo_selfplay.yaml`` (relative to the file)
  is loaded first and the file's own keys are deep-merged over it, so a variant recipe
  states only what differs;
* ``--set dotted.key=value`` overrides (values parsed as YAML);
* every validation error as one line naming the dotted key, the value and what is allowed,
  with a did-you-mean for unknown keys;
* :func:`describe`: every key, its type and its docstring's first line (``--list-keys``).

>>> from pydantic import BaseModel
>>> class Section(BaseModel):
...     model_config = SECTION
...     rate: Float = 0.1
>>> class Top(BaseModel):
...     model_config = SECTION
...     seed: Int = 0
...     opt: Section = Section()
>>> validate(Top, apply_overrides({}, ["opt.rate=1e-4"])).opt.rate
0.0001
>>> validate(Top, {"opt": {"rat": 1}})
Traceback (most recent call last):
...
agents.training.config_io.ConfigError: unknown config key 'opt.rat' (did you mean 'opt.rate'?): allowed keys in 'opt' are ['rate']
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
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictBool, ValidationError
from pydantic_core import PydanticCustomError

SECTION = ConfigDict(extra="forbid", use_attribute_docstrings=True, validate_default=True)
"""The model config of every section: unknown keys are errors, field docstrings are descriptions."""


class ConfigError(ValueError):
    """A config file, override or value is not allowed (one line: the dotted key and what is allowed)."""


# --------------------------------------------------------------------------- field types
def _integer(value: Any) -> Any:
    if isinstance(value, bool):  # YAML `true` is no number (pydantic's lax mode would take it as 1)
        raise PydanticCustomError("int_type", "expected an integer, not a boolean")
    return value


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("number_type", "expected a number, not a boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise PydanticCustomError("finite_number", "expected a finite number")
    return value


Int = Annotated[int, BeforeValidator(_integer)]
"""An integer (``1e6`` in YAML is accepted: it is an integral float); booleans are refused."""
Float = Annotated[float, BeforeValidator(_number)]
"""A finite number (PyYAML's ``1e-4`` string is accepted, as pydantic parses numeric strings)."""
Bool = StrictBool
"""``true`` or ``false`` only."""


def require(ok: bool, key: str, value: Any, allowed: str) -> None:
    """A range check for a validator: unless ``ok``, the error names ``key`` (relative to its section)."""
    if not ok:
        raise PydanticCustomError("not_allowed", "config key {key} = {value} is not allowed: allowed {allowed}",
                                  {"key": key, "value": repr(value), "allowed": allowed})


# --------------------------------------------------------------------------- files and overrides
def load_yaml(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Read a YAML mapping of config keys, merged over its ``base:`` file if it names one.

    A file with no keys at all (empty, or only comments) is refused: it would silently
    train the built-in defaults; ``{}`` asks for them on purpose. A syntax error is one line
    naming the file, the line and the column.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {where}: "
                          f"{err.problem or err.context or 'syntax error'}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {str(err).splitlines()[0]}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"config file {str(path)!r} is not a text file ({err.reason} at byte {err.start})") from None
    if data is None:
        raise ConfigError(f"config file {str(path)!r} holds no config keys (it is empty or only comments): "
                          "it would train the built-in defaults; write {} to do that on purpose, "
                          "or see the keys with --list-keys")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} holds {type(data).__name__}: expected a mapping of keys")
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise ConfigError(f"config file {str(path)!r}: base = {base!r} is not allowed: expected a file name")
    base_path = (path.parent / base).resolve()
    if base_path in _seen or base_path == path.resolve():
        raise ConfigError(f"config file {str(path)!r}: base {base!r} leads back to itself")
    return deep_merge(load_yaml(base_path, (*_seen, path.resolve())), data)


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``: nested sections merge, other values replace."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "opponents":
            out[key] = deep_merge(out[key], value)
        else:  # a mapping of opponent weights replaces the base's whole (it is one distribution)
            out[key] = value
    return out


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``dotted.key=value`` strings (values parsed as YAML) to a nested copy of ``data``."""
    out = deep_merge(data, {})
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"override {item!r} is not allowed: expected key=value, e.g. ppo.learning_rate=1e-4")
        value = yaml.safe_load(raw) if raw.strip() else ""
        node = out
        parts = key.split(".")
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ConfigError(f"override {item!r}: config key {'.'.join(parts[:i + 1])!r} is not a section")
            else:
                child = node[part] = dict(child)
            node = child
        node[parts[-1]] = value
    return out


# --------------------------------------------------------------------------- validation
def validate(model: type[BaseModel], data: dict[str, Any]) -> Any:
    """``model`` built from ``data``; the first error as one :class:`ConfigError` line."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(describe_error(model, err.errors()[0], data)) from None


def describe_error(model: type, error: dict[str, Any], data: Any) -> str:
    loc = [str(part) for part in error["loc"]]
    key = _dotted(loc)
    kind, value = error["type"], error.get("input")
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        section = _section_type(model, loc[:-1])
        allowed = sorted(_field_names(section)) if section is not None else []
        close = difflib.get_close_matches(loc[-1], allowed, n=1)
        hint = f" (did you mean {_dotted([*loc[:-1], close[0]])!r}?)" if close else ""
        where = f"in {_dotted(loc[:-1])!r}" if loc[:-1] else "at the top level"
        return f"unknown config key {key!r}{hint}: allowed keys {where} are {allowed}"
    if kind == "not_allowed":
        ctx = error["ctx"]
        inner = _dotted([*loc, ctx["key"]])
        return f"config key {inner!r} = {ctx['value']} is not allowed: allowed {ctx['allowed']}"
    if kind == "value_error":  # RulesConfig / NetworkConfig validate themselves and name the field
        message = str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
        if message.startswith("config key '"):
            message = f"config key '{key}." + message[len("config key '"):]
        return f"config section {key!r}: {message}" if not message.startswith("config key") else message
    return f"config key {key!r} = {value!r} is not allowed: {_expected(kind, error)}"


def _expected(kind: str, error: dict[str, Any]) -> str:
    if kind.startswith("int"):
        return "expected an integer"
    if kind.startswith("float") or kind in ("number_type", "finite_number"):
        return "expected a number" if kind != "finite_number" else "expected a finite number"
    if kind.startswith("bool"):
        return "expected true or false"
    if kind.startswith("string"):
        return "expected a string"
    if kind == "literal_error":
        return "expected " + error["ctx"]["expected"]
    if kind in ("dict_type", "model_type", "dataclass_type", "model_attributes_type"):
        return "expected a mapping of keys"
    if kind in ("list_type", "tuple_type", "iterable_type"):
        return "expected a list"
    return error["msg"]


def _dotted(parts: list[str]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if part.isdigit() and out else (f".{part}" if out else part)
    return out


def _unwrap(tp: Any) -> Any:
    for arg in typing.get_args(tp) or ():
        if isinstance(arg, type) and (issubclass(arg, BaseModel) or dataclasses.is_dataclass(arg)):
            return arg
    return tp


def _section_type(model: type, path: list[str]) -> Any:
    tp: Any = model
    for part in path:
        hints = _field_types(tp)
        if part not in hints:
            return None
        tp = _unwrap(hints[part])
    return tp


def _field_types(tp: Any) -> dict[str, Any]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return {name: f.annotation for name, f in tp.model_fields.items()}
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return {f.name: hints[f.name] for f in dataclasses.fields(tp) if f.init}
    return {}


def _field_names(tp: Any) -> list[str]:
    return list(_field_types(tp))


# --------------------------------------------------------------------------- listing keys
def describe(model: type, prefix: str = "") -> list[tuple[str, str, str]]:
    """``(dotted key, type, first line of its docstring)`` of every leaf field."""
    rows: list[tuple[str, str, str]] = []
    docs = _docs(model)
    for name, tp in _field_types(model).items():
        key = f"{prefix}{name}"
        inner = _unwrap(tp) if not typing.get_origin(tp) is dict else tp
        if isinstance(inner, type) and (issubclass(inner, BaseModel) or dataclasses.is_dataclass(inner)):
            rows.extend(describe(inner, key + "."))
        else:
            rows.append((key, _type_name(tp), docs.get(name, "").split("\n")[0]))
    return rows


def _docs(tp: type) -> dict[str, str]:
    if issubclass(tp, BaseModel):
        return {name: f.description or "" for name, f in tp.model_fields.items()}
    # A stdlib dataclass (RulesConfig, NetworkConfig) documents fields the same way: read them.
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(tp))).body[0].body  # type: ignore[attr-defined]
    except (OSError, TypeError):
        return {}
    return {node.target.id: inspect.cleandoc(nxt.value.value) for node, nxt in zip(body, body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)}


def _type_name(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join("null" if a is type(None) else _type_name(a) for a in args)
    if origin is tuple:
        return f"list[{_type_name(args[0])}]"
    if origin is dict:
        return f"dict[{_type_name(args[0])}, {_type_name(args[1])}]"
    return getattr(tp, "__name__", str(tp))


def to_plain(config: BaseModel) -> dict[str, Any]:
    """The config as YAML- and checkpoint-safe data (dicts, lists, scalars)."""
    return config.model_dump(mode="json")


__all__ = ["SECTION", "ConfigError", "Int", "Float", "Bool", "require", "load_yaml", "deep_merge", "apply_overrides",
           "validate", "describe", "to_plain"]
