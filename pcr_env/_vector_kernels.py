"""Batch loops behind :class:`pcr_env.vector.VectorEnv`: the engine's per-game functions over every row.

There are no rules here: each loop calls :mod:`pcr_env.engine` (the rules, the
episodes and rewards: :func:`~pcr_env.engine.step_game`) and
:func:`pcr_env.observation.encode_row` (the observation) for every game row.
What only the batch adds is the auto-reset: a game whose episode ended reports
its final record and starts a new game from its own stream at once.

Randomness: one splitmix64 stream per game (``uint64`` state), seeded from
``(seed, game index)`` only (:func:`pcr_env.engine.stream_start`), so game ``i``
deals the same cards whatever the number of games.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .engine import (
    CURRENT,
    EV_FINAL,
    EV_TRUNCATED,
    PH_GAME_OVER,
    PHASE,
    ROUND,
    SCORES,
    WINNER,
    _new_game,
    apply_row,
    episode_events,
    is_legal_row,
    legal_mask_row,
    stream_start,
)
from .observation import encode_row, encode_state_row

FI_SCORES, FI_WINNER, FI_TRUNCATED, FI_ROUNDS = 0, 2, 3, 4
FINAL_INFO_SIZE = 5


@njit(cache=True)
def seed_streams(seed, rng):
    """``rng[i]`` = the start of game ``i``'s stream; depends on ``(seed, i)`` only."""
    for i in range(rng.shape[0]):
        rng[i] = stream_start(seed, np.uint64(i))


@njit(cache=True)
def observe_all(S, cfg, off, obs, masks, seats):
    """Acting seat, its observation and its action mask for every game."""
    for g in range(S.shape[0]):
        seat = S[g, CURRENT]
        seats[g] = seat
        encode_row(S, g, seat, cfg, off, obs[g])
        legal_mask_row(S, g, cfg, masks[g])


@njit(cache=True)
def observe_one(S, g, seat, cfg, off, row, mrow):
    """Observation of any ``seat`` of game ``g``; the mask is the acting seat's."""
    encode_row(S, g, seat, cfg, off, row)
    legal_mask_row(S, g, cfg, mrow)


@njit(cache=True)
def state_all(S, cfg, off, soff, out):
    """Full-state vectors from each acting seat (observation.encode_state layout)."""
    for g in range(S.shape[0]):
        encode_state_row(S, g, S[g, CURRENT], cfg, off, soff, out[g])


@njit(cache=True)
def reset_all(S, rng, cfg, off, obs, masks, seats):
    """Start every game (engine.new_game) and observe it."""
    for g in range(S.shape[0]):
        _new_game(S, rng, g, cfg)
    observe_all(S, cfg, off, obs, masks, seats)


@njit(cache=True)
def step_all(S, rng, actions, cfg, off, rewards, dones, events, round_info, final_info, obs, masks, seats):
    """One action per game (:func:`pcr_env.engine.step_game`), with auto-reset, then the next observations.

    Returns ``-1 - g`` if game ``g`` is the first with an illegal action (then no
    game has moved and no output is written), else the number of games with
    events. Otherwise every entry of ``rewards``, ``dones``, ``events``, ``obs``,
    ``masks`` and ``seats`` is written; ``round_info[g]`` / ``final_info[g]`` only
    where ``events[g]`` has :data:`EV_ROUND` / :data:`EV_FINAL`.
    """
    for g in range(S.shape[0]):
        if not is_legal_row(S, g, actions[g], cfg):
            return -1 - g
    count = 0
    rewards[:] = 0.0  # step_game writes a game's rewards only when it scored a round
    for g in range(S.shape[0]):
        # engine.step_game, spelled out so that the common path compiles inline (apply_row, one test).
        scored = apply_row(S, rng, g, actions[g], cfg, round_info)
        ev = 0
        if scored or S[g, PHASE] == PH_GAME_OVER:
            ev = episode_events(S, rng, g, cfg, scored, rewards, round_info)
        events[g] = ev
        dones[g] = (ev & EV_FINAL) != 0
        if ev & EV_FINAL:
            fi = final_info[g]
            fi[FI_SCORES] = S[g, SCORES]
            fi[FI_SCORES + 1] = S[g, SCORES + 1]
            fi[FI_WINNER] = S[g, WINNER]
            fi[FI_TRUNCATED] = (ev & EV_TRUNCATED) != 0
            fi[FI_ROUNDS] = S[g, ROUND]
            _new_game(S, rng, g, cfg)
        if ev:
            count += 1
    observe_all(S, cfg, off, obs, masks, seats)
    return count
