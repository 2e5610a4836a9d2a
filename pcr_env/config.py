"""The validated rules configuration (RULES.md, every "config" field).

Errors follow Python's own convention, in every constructor of :mod:`pcr_env`
(``RulesConfig``, ``pass_cut_run_v0.env``/``raw_env``, ``gymnasium.make("PassCutRun-v0")``,
``VectorEnv``): an unknown keyword argument raises ``TypeError`` with
"got an unexpected keyword argument 'name'" (the text wrappers such as TorchRL's
``GymEnv`` look for before retrying without an optional keyword), and a bad
value of a known keyword raises ``ValueError`` naming the field, the value and
what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .cards import NUM_CARDS


@dataclass(frozen=True)
class RulesConfig:
    """Rules of one game of Pass Cut Run. Defaults are the rules of record.

    >>> RulesConfig().min_bid_value, RulesConfig(players=6).min_bid_value
    (7, 5)
    >>> RulesConfig(players=5)
    Traceback (most recent call last):
    ...
    ValueError: rules field 'players' = 5 is not allowed: allowed 4 or 6
    >>> RulesConfig.from_kwargs({"player": 6})
    Traceback (most recent call last):
    ...
    TypeError: RulesConfig() got an unexpected keyword argument 'player' (did you mean 'players'?): allowed players, ...
    """

    players: int = 4
    """Seats at the table (R1.1): 4, or 6 for the R9.3 variant."""
    passing: bool = True
    """Whether the passing phase is played (R3); ``False`` is the "no pass" variant (R3.4)."""
    double_run_bonus: bool = False
    """Double every run bonus (R7.3)."""
    bidding: Literal["single", "auction"] = "single"
    """One turn around the table (``"single"``) or an open auction (``"auction"``), R4.3."""
    min_bid: int | None = None
    """Lowest bid (R4.2); ``None`` means a majority of the tricks (7 with four players, 5 with six)."""
    target_score: int = 100
    """Score that ends the game (R8.4)."""
    max_rounds: int = 200
    """Scored rounds after which an unfinished game is truncated (R8.4)."""
    max_redeals: int = 10
    """Consecutive all-pass redeals allowed before the episode is truncated (R4.4)."""
    first_dealer: int | Literal["random"] = "random"
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


def _check(ok: bool, name: str, value: Any, allowed: str) -> None:
    if not ok:
        raise ValueError(f"rules field {name!r} = {value!r} is not allowed: allowed {allowed}")


__all__ = ["RulesConfig", "EPISODES", "REWARDS", "check_episode_reward", "check_field_names", "unexpected_keywords"]
