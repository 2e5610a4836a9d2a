"""Training configs: YAML files validated by pydantic models, ``key=value`` overrides, one-line errors.

``train.py`` declares its config as pydantic models, one per section, each field typed, bounded
(``Field(gt=..., le=...)``) and documented by the docstring under it. ``rules`` and ``network`` are
the stdlib dataclasses :class:`pcr_env.RulesConfig` and :class:`agents.ppo.NetworkConfig`, which
pydantic validates as nested fields (the environment package does not depend on pydantic;
:func:`section` gives them this module's settings). Pydantic does the checking; this module adds:

* YAML files that derive from another: ``base: ppo_selfplay.yaml`` (relative to the file) is
  loaded first and the file's own keys are deep-merged over it;
* ``--set dotted.key=value`` overrides (values parsed as YAML);
* every validation error as one line naming the dotted key, the value and what is allowed;
* :func:`describe`: every key, its type and its docstring's first paragraph on one line
  (``--list-keys``), read from the model's JSON schema.

>>> from pydantic import BaseModel, Field
>>> class Section(BaseModel):
...     model_config = SECTION
...     rate: Float = Field(0.1, gt=0)
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
>>> validate(Top, {"opt": {"rate": -1}})
Traceback (most recent call last):
...
agents.training.config_io.ConfigError: config key 'opt.rate' = -1 is not allowed: expected a number > 0
"""


import difflib
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StrictBool, ValidationError
from pydantic_core import PydanticCustomError

SECTION = ConfigDict(extra="forbid", use_attribute_docstrings=True, validate_default=True)
"""The model config of every section: unknown keys are errors, field docstrings are descriptions."""


class ConfigError(ValueError):
    """A config file, override or value is not allowed (one line: the dotted key and what is allowed)."""


def _number(kind: str) -> BeforeValidator:
    """Refuse booleans (YAML `true` is no number, though pydantic's lax mode takes it as 1) and inf/nan."""
    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise PydanticCustomError(f"{kind}_type", "not a boolean")
        if isinstance(value, float) and not math.isfinite(value):
            raise PydanticCustomError("finite_number", "expected a finite number")
        return value
    return BeforeValidator(check)


Int = Annotated[int, _number("int")]
"""An integer (``1e6`` in YAML is accepted: it is an integral float); booleans are refused."""
Float = Annotated[float, _number("float")]
"""A finite number; booleans are refused."""
Bool = StrictBool
"""``true`` or ``false`` only."""


def section(cls: type) -> type:
    """Give a stdlib dataclass the settings of :data:`SECTION` (unknown keys refused, docstrings kept)."""
    cls.__pydantic_config__ = SECTION  # type: ignore[attr-defined]
    return cls


def allowed(check: Callable[[Any], bool], expected: str) -> AfterValidator:
    """A field validator refusing values for which ``check`` is false (or raises ``ValueError``)."""
    def validator(value: Any) -> Any:
        try:
            ok = check(value)
        except ValueError as err:
            raise PydanticCustomError("not_allowed", "expected {expected}", {"expected": f"{expected} ({err})"}) from None
        if not ok:
            raise PydanticCustomError("not_allowed", "expected {expected}", {"expected": expected})
        return value
    return AfterValidator(validator)


def not_allowed(key: str, value: Any, expected: str) -> ValueError:
    """The error a cross-field validator raises (``key`` relative to its section)."""
    return ValueError(f"config key {key!r} = {value!r} is not allowed: expected {expected}")


# --------------------------------------------------------------------------- files and overrides
def load_yaml(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Read a YAML mapping of config keys, merged over its ``base:`` file if it names one.

    A file with no keys (empty, or only comments) is refused: it would silently train the built-in
    defaults; ``{}`` asks for them on purpose.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {where}{err.problem or err.context}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {' '.join(str(err).split())}") from None
    if data is None:
        raise ConfigError(f"config file {str(path)!r} holds no config keys (it is empty or only comments): "
                          "write {} to train the built-in defaults on purpose, or see the keys with --list-keys")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} holds {type(data).__name__}: expected a mapping of keys")
    base = data.pop("base", None)
    if base is None:
        return data
    base_path = (path.parent / str(base)).resolve()
    if base_path in _seen or base_path == path.resolve():
        raise ConfigError(f"config file {str(path)!r}: base {base!r} leads back to itself")
    return deep_merge(load_yaml(base_path, (*_seen, path.resolve())), data)


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``: nested sections merge, other values replace."""
    out = dict(base)
    for key, value in over.items():
        merge = isinstance(value, dict) and isinstance(out.get(key), dict) and key != "opponents"
        out[key] = deep_merge(out[key], value) if merge else value  # an opponent mix is one distribution: replaced
    return out


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``dotted.key=value`` strings (values parsed as YAML) to a nested copy of ``data``; an entry of a
    list of sections is ``list.N.key`` or ``list[N].key``."""
    out = deep_merge(data, {})
    for item in overrides:
        key, sep, raw = item.partition("=")
        parts = re.sub(r"\[(\d+)\]", r".\1", key.strip()).split(".")  # stages[1].ppo.x is stages.1.ppo.x
        if not sep or not all(parts):
            raise ConfigError(f"override {item!r} is not allowed: expected key=value, e.g. ppo.learning_rate=1e-4")
        node: Any = out
        for i, part in enumerate(parts):
            if isinstance(node, list):  # a list of sections (``stages``): the part is an index
                if not (part.isdigit() and int(part) < len(node)):
                    raise ConfigError(f"override {item!r}: {'.'.join(parts[:i])!r} has {len(node)} entries, "
                                      f"so {part!r} is not allowed: expected an index 0..{len(node) - 1}")
                part = int(part)
            elif not isinstance(node, dict):
                raise ConfigError(f"override {item!r}: config key {'.'.join(parts[:i])!r} is not a section")
            if i == len(parts) - 1:
                node[part] = yaml.safe_load(raw) if raw.strip() else ""
                break
            child = node[part] if isinstance(node, list) else node.get(part)
            child = {} if child is None else type(child)(child) if isinstance(child, (dict, list)) else child
            node[part] = node = child  # a copy: ``data`` stays as it was
    return out


# --------------------------------------------------------------------------- validation
def validate(model: type[BaseModel], data: dict[str, Any], at: tuple[str, ...] = ()) -> Any:
    """``model`` built from ``data``; the first error as one :class:`ConfigError` line (its key under ``at``,
    the dotted place of ``data`` in a larger config)."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(describe_error(model, err.errors()[0], at)) from None


_BOUNDS = {"greater_than": ("gt", ">"), "greater_than_equal": ("ge", ">="), "less_than": ("lt", "<"),
           "less_than_equal": ("le", "<=")}
_EXPECTED = {"int": "an integer", "float": "a number", "bool": "true or false", "string": "a string",
             "dict": "a mapping of keys", "model": "a mapping of keys", "dataclass": "a mapping of keys",
             "list": "a list", "tuple": "a list", "finite": "a finite number"}


def describe_error(model: type[BaseModel], error: Any, at: tuple[str, ...] = ()) -> str:
    """One line for one pydantic error: the dotted key (under ``at``), the value and what is allowed."""
    loc = [str(part) for part in error["loc"]]
    place = [*at, *loc]
    key, kind, value = _dotted(place), error["type"], error.get("input")
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        allowed = sorted(_schema_at(model, loc[:-1]).get("properties", {}))
        close = difflib.get_close_matches(loc[-1], allowed, n=1)
        hint = f" (did you mean {_dotted([*place[:-1], close[0]])!r}?)" if close else ""
        where = f"in {_dotted(place[:-1])!r}" if place[:-1] else "at the top level"
        return f"unknown config key {key!r}{hint}: allowed keys {where} are {allowed}"
    if kind == "value_error":  # a cross-field validator, or RulesConfig / NetworkConfig naming its own field
        message = str(error["ctx"]["error"])
        prefix = "config key '"
        return message.replace(prefix, f"{prefix}{key}.", 1) if key and message.startswith(prefix) else message
    if kind in _BOUNDS:
        name, op = _BOUNDS[kind]
        bound = error["ctx"][name]
        what = "an integer" if isinstance(bound, int) and isinstance(value, int) else "a number"
        expected = f"{what} {op} {bound:g}" if isinstance(bound, float) else f"{what} {op} {bound}"
    elif "expected" in error.get("ctx", {}):  # a Literal's choices, or an `allowed` validator
        expected = error["ctx"]["expected"]
    else:
        expected = next((v for k, v in _EXPECTED.items() if kind.startswith(k)), error["msg"])
    return f"config key {key!r} = {value!r} is not allowed: expected {expected}"


def _dotted(parts: list[str]) -> str:
    return "".join(f"[{p}]" if p.isdigit() and i else (f".{p}" if i else p) for i, p in enumerate(parts))


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """A schema node with its ``$ref`` (a nested section) followed."""
    ref = node.get("$ref")
    return schema["$defs"][ref.rsplit("/", 1)[1]] if ref else node


def _schema_at(model: type[BaseModel], path: list[str]) -> dict[str, Any]:
    schema = model.model_json_schema()
    node = schema
    for part in path:
        node = _resolve(schema, node.get("properties", {}).get(part, {}))
    return node


# --------------------------------------------------------------------------- listing keys
def describe(model: type[BaseModel]) -> list[tuple[str, str, str]]:
    r"""``(dotted key, type, meaning)`` of every leaf field; the meaning is its docstring's first paragraph
    on one line (a docstring wrapped over several lines is whole, not cut at its first line break).

    >>> from pydantic import BaseModel, Field
    >>> class Top(BaseModel):
    ...     model_config = SECTION
    ...     rate: Float = Field(0.1, description="Step size: larger is faster\n  and less stable.\n\nMore, left out.")
    >>> describe(Top)
    [('rate', 'float', 'Step size: larger is faster and less stable.')]
    """
    schema = model.model_json_schema()

    def walk(node: dict[str, Any], prefix: str) -> list[tuple[str, str, str]]:
        rows = []
        for name, field in node["properties"].items():
            inner = _resolve(schema, field)
            items = _resolve(schema, inner.get("items", {})) if inner.get("type") == "array" else {}
            if "properties" in inner:
                rows += walk(inner, f"{prefix}{name}.")
            else:
                doc = field.get("description") or inner.get("description") or ""
                rows.append((prefix + name, _type_name(field), _first_paragraph(doc)))
                if "properties" in items:  # a list of sections (stages): the keys of an entry, as name[N].key
                    rows += walk(items, f"{prefix}{name}[N].")
        return rows

    return walk(schema, "")


def _first_paragraph(doc: str) -> str:
    """The text up to the first blank line, its lines joined by single spaces."""
    return " ".join(re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0].split())


_JSON_TYPES = {"number": "float", "integer": "int", "boolean": "bool", "string": "str", "null": "null"}


def _type_name(node: dict[str, Any] | bool) -> str:
    if not isinstance(node, dict) or not node:
        return "any"
    if "enum" in node or "const" in node:
        return " | ".join(repr(v) for v in node.get("enum", [node.get("const")]))
    if "anyOf" in node:
        return " | ".join(_type_name(n) for n in node["anyOf"])
    kind = node.get("type", "object")
    if kind == "array":
        return f"list[{_type_name(node.get('items', {}))}]"
    if kind == "object":
        return f"dict[str, {_type_name(node.get('additionalProperties', {}))}]" if "additionalProperties" in node \
            else "mapping"
    return _JSON_TYPES.get(kind, kind)


def to_plain(config: BaseModel) -> dict[str, Any]:
    """The config as YAML- and checkpoint-safe data (dicts, lists, scalars)."""
    return config.model_dump(mode="json")


__all__ = ["SECTION", "ConfigError", "Int", "Float", "Bool", "section", "allowed", "not_allowed", "load_yaml", "deep_merge",
           "apply_overrides", "validate", "describe", "describe_error", "to_plain"]
