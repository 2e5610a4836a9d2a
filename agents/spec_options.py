"""The options of an agent spec, ``NAME=VALUE`` items separated by ``,`` or ``:`` (``openspiel:ismcts:sims=200``,
``mypkg.bots:make_bot:depth=3``): one syntax for every kind, below the registry and the agents that read it.

>>> parse_options("depth=3,style=aggressive:temperature=0.5,greedy=True")
{'depth': 3, 'style': 'aggressive', 'temperature': 0.5, 'greedy': True}
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")


def _option_value(text: str) -> Any:
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def split_options(text: str, *, spec: str | None = None, example: str = "depth=3,style=aggressive") -> dict[str, str]:
    """``"a=1,b=x:c=2"`` -> ``{"a": "1", "b": "x", "c": "2"}``: ``NAME=VALUE`` items separated by ``,`` or ``:``.

    Values stay text (:func:`parse_options` converts them). A malformed item, a name
    that is not an identifier or a name given twice raises ``ValueError`` (naming ``spec``).
    """
    where = f"agent spec {spec!r}: " if spec is not None else ""
    options: dict[str, str] = {}
    for item in text.replace(",", ":").split(":"):
        if not item.strip():
            continue
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise ValueError(f"{where}option {item!r} is not NAME=VALUE: write options as NAME=VALUE separated by "
                             f"',' or ':', e.g. {example}")
        if name in options:
            raise ValueError(f"{where}option {name!r} is given twice")
        options[name] = value.strip()
    return options


def parse_options(text: str, *, spec: str | None = None) -> dict[str, Any]:
    """The options of a spec as keyword arguments: :func:`split_options`, each value an int, float, bool or text."""
    return {name: _option_value(value) for name, value in split_options(text, spec=spec).items()}


__all__ = ["parse_options", "split_options"]
