"""The single discrete action space shared by every phase.

======  =========================================================
ids     meaning
======  =========================================================
0-51    a card (``card_action``): pass it, discard it or play it
52-64   a bid of 1..13 tricks (``bid_action(k)``); rules allow ``min_bid..tricks``
65      ``PASS_BID``: no bid
66-69   trump suit C, D, H, S (``trump_action``)
======  =========================================================

>>> describe_action(bid_action(7)), describe_action(PASS_BID), describe_action(trump_action("S"))
('bid 7', 'no bid', 'trump S')
"""

from __future__ import annotations

import operator
from numbers import Integral, Real
from typing import Any

from .cards import NUM_CARDS, SUITS, card_str, parse_card

MAX_BID = 13
BID_BASE = NUM_CARDS
PASS_BID = BID_BASE + MAX_BID
TRUMP_BASE = PASS_BID + 1
NUM_ACTIONS = TRUMP_BASE + len(SUITS)


def card_action(card: int | str) -> int:
    """Action id of a card (index or name such as ``"QS"``)."""
    if isinstance(card, str):
        return parse_card(card)
    if not (_is_int(card) and 0 <= card < NUM_CARDS):
        raise ValueError(f"card {card!r} is out of range: allowed 0..51 or a card name")
    return int(card)


def bid_action(k: int) -> int:
    """Action id of a bid of ``k`` tricks (1..13)."""
    if not (_is_int(k) and 1 <= k <= MAX_BID):
        raise ValueError(f"bid {k!r} is out of range: allowed 1..{MAX_BID}")
    return BID_BASE + int(k) - 1


def trump_action(suit: str | int) -> int:
    """Action id naming ``suit`` ("C", "D", "H", "S" or 0..3) as trump."""
    if isinstance(suit, str):
        if suit.upper() not in SUITS or len(suit) != 1:
            raise ValueError(f"trump suit {suit!r} is not a suit: allowed C, D, H, S")
        return TRUMP_BASE + SUITS.index(suit.upper())
    if not (_is_int(suit) and 0 <= suit < len(SUITS)):
        raise ValueError(f"trump suit {suit!r} is out of range: allowed 0..3")
    return TRUMP_BASE + int(suit)


def action_id(value: Any) -> int:
    """The action id that ``value`` stands for, as a Python ``int`` (the range is not checked here).

    Accepted: any integer-valued scalar: Python and numpy integers, 0-d numpy
    arrays and 0-d tensors of any framework (anything with ``ndim == 0`` and
    ``.item()``; torch is never imported), objects with ``__index__``, and
    floats with an integral value such as ``8.0``.

    Refused, consistently for every environment of :mod:`pcr_env`:

    * ``TypeError`` when ``value`` is not a number at all or not one scalar:
      ``None``, ``bool`` (``True`` is not action 1), strings, arrays or tensors
      with ``ndim > 0``, any other object;
    * ``ValueError`` when it is a number but not a whole one (``8.5``, ``nan``, ``inf``).

    >>> import numpy as np
    >>> action_id(8), action_id(8.0), action_id(np.int16(8)), action_id(np.array(8))
    (8, 8, 8, 8)
    >>> action_id(True)
    Traceback (most recent call last):
    ...
    TypeError: action True is a bool, not an action id: expected an integer 0..69
    >>> action_id(8.5)
    Traceback (most recent call last):
    ...
    ValueError: action 8.5 is not a whole number: expected an integer 0..69
    """
    original = value
    ndim = getattr(value, "ndim", None)
    if ndim is not None and not isinstance(value, (str, bytes)):
        if ndim != 0:
            shape = tuple(getattr(value, "shape", ())) or f"ndim {ndim}"
            raise TypeError(
                f"action {original!r} has shape {shape}, not a single action id: expected one integer 0..{NUM_ACTIONS - 1} "
                f"(index the batch first, e.g. actions[0])"
            )
        item = getattr(value, "item", None)
        if callable(item):
            value = item()  # numpy scalar / 0-d array / 0-d tensor -> Python scalar
    if isinstance(value, bool):
        raise TypeError(f"action {original!r} is a bool, not an action id: expected an integer 0..{NUM_ACTIONS - 1}")
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(
            f"action {original!r} of type {type(original).__name__} is not an action id: "
            f"expected an integer 0..{NUM_ACTIONS - 1}"
        )
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, Real):
        number = float(value)
        if not number.is_integer():
            raise ValueError(f"action {original!r} is not a whole number: expected an integer 0..{NUM_ACTIONS - 1}")
        return int(number)
    raise TypeError(
        f"action {original!r} of type {type(original).__name__} is not an action id: expected an integer 0..{NUM_ACTIONS - 1}"
    )


def _is_int(value) -> bool:
    # Python and numpy integers; bool is an int subclass but never an action.
    return isinstance(value, Integral) and not isinstance(value, bool)


def is_card(a: int) -> bool:
    return 0 <= a < NUM_CARDS


def is_bid(a: int) -> bool:
    return BID_BASE <= a < PASS_BID


def bid_value(a: int) -> int:
    return a - BID_BASE + 1


def is_trump(a: int) -> bool:
    return TRUMP_BASE <= a < NUM_ACTIONS


def trump_suit(a: int) -> int:
    return a - TRUMP_BASE


def describe_action(a: int) -> str:
    """Readable name of an action id."""
    if not _is_int(a):
        raise ValueError(f"action {a!r} is out of range: allowed 0..{NUM_ACTIONS - 1}")
    a = int(a)
    if is_card(a):
        return card_str(a)
    if is_bid(a):
        return f"bid {bid_value(a)}"
    if a == PASS_BID:
        return "no bid"
    if is_trump(a):
        return f"trump {SUITS[trump_suit(a)]}"
    raise ValueError(f"action {a!r} is out of range: allowed 0..{NUM_ACTIONS - 1}")
