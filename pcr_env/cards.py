"""Cards of the 52-card deck (R1.4) as small integers.

A card is ``suit * 13 + rank`` with suits ``C D H S`` (0..3) and ranks ``2 .. A``
(0..12), so a higher rank index is a stronger card inside its suit. Sets of
cards are Python ``int`` bitmasks (bit ``c`` set = card ``c`` present), which
keeps the engine fast without giving up exactness.

>>> card_str(parse_card("10h"))
'10H'
>>> [card_str(c) for c in parse_cards("AS, th 2c")]
['AS', '10H', '2C']
"""

from __future__ import annotations

import numpy as np
from numba import config as _numba_config
from numba import njit

from . import _jit  # noqa: F401 - the numba cache stamp of pcr_env's compiled files (before the first njit below)

SUITS = "CDHS"
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
NUM_CARDS = 52
NUM_SUITS = 4
NUM_RANKS = 13

FULL_DECK = (1 << NUM_CARDS) - 1
SUIT_MASKS = tuple(((1 << NUM_RANKS) - 1) << (s * NUM_RANKS) for s in range(NUM_SUITS))

_RANK_ALIASES = {r: i for i, r in enumerate(RANKS)} | {"T": 8, "1": 12}


def suit_of(card: int) -> int:
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    return card % NUM_RANKS


def beats(card: int, best: int, led: int, trump: int) -> bool:
    """R6.4: does ``card`` take the trick from ``best`` (the best card so far), ``led`` being the led suit?

    A trump beats any non-trump and a lower trump; otherwise only a higher card of
    the led suit beats a card of the led suit. The one definition: the rules
    compile it (``pcr_env.engine``, ``njit(beats)``) and the scripted agents call it
    as plain Python (cheaper than a compiled call from Python).

    >>> beats(parse_card("2S"), parse_card("AH"), 2, 3), beats(parse_card("KH"), parse_card("AH"), 2, 3)
    (True, False)
    """
    s, bs = card // NUM_RANKS, best // NUM_RANKS
    if s == trump:
        return bs != trump or card > best
    return s == led and bs == led and card > best


if _numba_config.DISABLE_JIT:  # plain Python (NUMBA_DISABLE_JIT=1, for debugging and coverage)
    def trailing_zeros(x) -> int:
        """Index of the lowest set bit of a non-zero ``x``."""
        x = int(x)
        return (x & -x).bit_length() - 1
else:
    try:  # LLVM's count-trailing-zeros, numba's own intrinsic (one instruction per card of a set)
        from numba.cpython.unsafe.numbers import trailing_zeros
    except ImportError:  # pragma: no cover - a numba without it: the same result by binary search
        @njit(cache=True)
        def trailing_zeros(x):
            x &= -x
            c = 0
            for shift in (32, 16, 8, 4, 2, 1):
                if x >> shift:
                    c += shift
                    x >>= shift
            return c


@njit(cache=True)
def popcount(x) -> int:
    """Number of cards in a bitmask."""
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


def make_card(suit: int, rank: int) -> int:
    return suit * NUM_RANKS + rank


def card_str(card: int) -> str:
    """``"10H"``-style name of a card index."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card index {card!r} is out of range: allowed 0..51")
    return RANKS[rank_of(card)] + SUITS[suit_of(card)]


def parse_card(text: str) -> int:
    """Card index from a name such as ``"AS"``, ``"10H"`` or ``"th"`` (any case)."""
    if not isinstance(text, str):
        raise ValueError(f"card {text!r} is not a card name: expected a string such as 'AS' or '10H'")
    name = text.strip().upper()
    if len(name) < 2 or name[-1] not in SUITS or name[:-1] not in _RANK_ALIASES or name[:-1] == "1":
        raise ValueError(
            f"card {text!r} is not a card name: expected a rank (2-10, T, J, Q, K, A) "
            f"followed by a suit (C, D, H, S), e.g. 'AS' or '10H'"
        )
    return make_card(SUITS.index(name[-1]), _RANK_ALIASES[name[:-1]])


def parse_cards(text: str) -> list[int]:
    """Card indices from names separated by spaces and/or commas."""
    return [parse_card(tok) for tok in text.replace(",", " ").split()]


def cards_of(mask: int) -> list[int]:
    """Card indices held in a bitmask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(cards) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def card_bits(mask: int) -> np.ndarray:
    """One bitmask -> ``[52]`` uint8 array of 0/1 (index = card)."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(8, "little"), np.uint8), bitorder="little")[:NUM_CARDS]


def highest(mask: int) -> int:
    """Highest card index in a non-empty bitmask (the strongest card if one suit)."""
    return mask.bit_length() - 1


def lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def hand_str(mask: int) -> str:
    """Hand grouped by suit, strongest first: ``"S: A K 4  H: 10 ..."``."""
    parts = []
    for s in reversed(range(NUM_SUITS)):
        ranks = [RANKS[rank_of(c)] for c in reversed(cards_of(mask & SUIT_MASKS[s]))]
        parts.append(f"{SUITS[s]}: {' '.join(ranks) if ranks else '-'}")
    return "  ".join(parts)
