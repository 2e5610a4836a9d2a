"""Who sits where, and how their randomness is seeded: the one convention every tool follows.

* :func:`per_seat` turns "one entry for every seat", "one entry per seat in seat
  order" or "a ``{seat: entry}`` mapping naming each seat" into ``{seat: entry}``,
  with the same error messages everywhere (the Gymnasium view, :func:`agents.make_agents`,
  the terminal player).
* :func:`is_seat_agent` is what may sit at a seat: ``act(obs)`` and ``reset(seed)``.
* :func:`derive_seed` is the one seeding scheme: a 63-bit seed from a tuple of
  integers (``SeedSequence(keys)``), so independent streams come from one run seed
  plus what they are for, e.g. ``derive_seed(seed, seat)`` for a seat's agent or
  ``derive_seed(seed, deal, table, side)`` in duplicate evaluation.

Imports the standard library and numpy only.

>>> per_seat("x", (1, 2, 3))
{1: 'x', 2: 'x', 3: 'x'}
>>> per_seat(["a", "b"], (1, 3))
{1: 'a', 3: 'b'}
>>> derive_seed(0, 1) == derive_seed(0, 1) != derive_seed(0, 2)
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def derive_seed(*keys: int) -> int:
    """A 63-bit seed derived from ``keys`` (``np.random.SeedSequence(keys)``): independent streams per purpose."""
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def is_seat_agent(entry: Any) -> bool:
    """Whether ``entry`` can sit at a table: an object (not a spec string) with ``act(obs)`` and ``reset(seed)``."""
    return not isinstance(entry, str) and callable(getattr(entry, "act", None)) and callable(getattr(entry, "reset", None))


def per_seat(value: Any, seats: Sequence[int], *, name: str = "others",
             valid: Callable[[Any], bool] | None = None, allowed: str = "") -> dict[int, Any]:
    """``{seat: entry}`` for ``seats`` from one entry, a sequence (one per seat, in order) or a mapping.

    A ``str`` and any object that is neither a mapping nor a sequence count as one
    entry for every seat. ``valid(entry)`` (optional) checks each entry; a failing one
    raises ``ValueError("{name}[{seat}] = ... is not allowed: allowed {allowed}")``.
    """
    seats = tuple(int(s) for s in seats)
    if isinstance(value, Mapping):
        if set(value) != set(seats):
            raise ValueError(f"{name} {dict(value)!r} must name exactly the other seats {list(seats)}")
        entries = {s: value[s] for s in seats}
    elif isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != len(seats):
            raise ValueError(f"{name} has {len(value)} entries: expected one per other seat {list(seats)} "
                             "(or a single entry for all)")
        entries = dict(zip(seats, value))
    else:
        entries = {s: value for s in seats}
    if valid is not None:
        for s, entry in entries.items():
            if not valid(entry):
                raise ValueError(f"{name}[{s}] = {entry!r} is not allowed: allowed {allowed}")
    return entries


__all__ = ["derive_seed", "is_seat_agent", "per_seat"]
