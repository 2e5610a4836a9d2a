"""Many games stepped at once, returning arrays (a batched engine in the style of EnvPool / Pgx).

:class:`VectorEnv` runs ``num_envs`` independent games of Pass Cut Run. Every
call advances each game by one decision and returns, for every game, the seat
to act, its ego-centric observation (identical to the AEC env's,
:func:`pcr_env.observation.encode_observation`) and its action mask. Finished
games restart at once and report their results in ``infos``.

The games live in packed ``int64`` rows advanced by the numba-compiled rules of
:mod:`pcr_env.engine` (the AEC env steps the same functions on one row), looped
over the rows by :mod:`pcr_env._vector_kernels`; ``tests/test_vector.py`` checks
them against an independent pure-Python reference, decision by decision. The first use in a fresh checkout compiles the kernels
(about 10 s of CPU, once: numba caches them on disk; later processes load them
in well under a second).

Randomness is per game: game ``i`` draws from its own stream seeded from
``(seed, i)``, so with the same seed and actions it plays the same deals
whatever ``num_envs`` is. :class:`DealRng` is that stream as a ``rng`` for the
Python API of :mod:`pcr_env.engine`, to replay a game.

>>> venv = VectorEnv(8, seed=0)
>>> obs, masks, seats = venv.reset()
>>> obs.shape, masks.shape, seats.shape
((8, 797), (8, 70), (8,))
>>> rng = np.random.default_rng(0)
>>> actions = (rng.random(masks.shape) * masks).argmax(axis=1)  # a random legal action per game
>>> obs, masks, seats, rewards, dones, infos = venv.step(actions)
>>> rewards.shape, dones.shape, len(infos), venv.state().shape
((8, 4), (8,), 8, (8, 1369))
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _vector_kernels as K
from . import engine as E
from .actions import NUM_ACTIONS, describe_action
from .config import EPISODES, REWARDS, RulesConfig, check_episode_reward
from .observation import observation_offsets, observation_size, state_offsets, state_size


class VectorEnv:
    """``num_envs`` independent games; every call advances each game by one decision.

    Parameters: ``num_envs`` (>= 1), ``seed`` (an integer in ``0 .. 2**64 - 1``),
    ``episode`` (``"game"``: until the game ends, R8.4; ``"round"``: one scored
    round), ``reward`` (``"score_diff"``: at each round end every seat gets its
    team's round score minus the other's; ``"win"``: +1 / -1 / 0 at the end of the
    episode, in ``"round"`` episodes the sign of the round's score difference),
    and the rules fields of :class:`pcr_env.RulesConfig` as keywords. Rewards and
    episodes follow ``pcr_env.pass_cut_run_v0`` exactly.

    ``step`` returns ``infos[i]["round_result"]`` (``RoundResult.to_info()``) when
    game ``i`` scored a round and ``infos[i]["final"]`` (``scores``, ``winner``,
    ``truncated``, ``rounds``) when its episode ended; game ``i`` has then already
    been restarted and the returned observation is the new game's. Infos hold
    numbers and lists of numbers only, as in the AEC env: ``trump`` is a suit
    index 0..3 and a missing winner (a tie, R8.3, or a truncated game) is ``-1``.

    >>> venv = VectorEnv(2, seed=3, players=6, bidding="auction")
    >>> obs, masks, seats = venv.reset()
    >>> obs.shape, int(masks[0].sum())  # pick one of the 8 cards to pass
    ((2, 1041), 8)
    """

    def __init__(self, num_envs: int, seed: int = 0, episode: str = "game", reward: str = "score_diff", **rules: Any):
        if not (_is_int(num_envs) and num_envs >= 1):
            raise ValueError(f"num_envs {num_envs!r} is not allowed: allowed an integer >= 1")
        _check_seed(seed)
        check_episode_reward(episode, reward)
        self.rules = RulesConfig.from_kwargs(rules, owner="VectorEnv", other_keywords=("num_envs", "seed", "episode", "reward"))
        self.num_envs, self.seed, self.episode, self.reward_kind = int(num_envs), int(seed), episode, reward
        self.n_players = self.rules.players
        self.obs_dim = observation_size(self.n_players)
        self.state_dim = state_size(self.n_players)
        self.num_actions = NUM_ACTIONS
        self._cfg = E.config_array(self.rules, episode, reward)
        self._obs_off = observation_offsets(self.n_players)
        self._state_off = state_offsets(self.n_players)
        n = self.num_envs
        self._games = np.zeros((n, E.STATE_COLUMNS), np.int64)  # one row per game, see pcr_env.engine
        self._rng = np.zeros(n, np.uint64)  # each game's splitmix64 state
        self._round_info = np.zeros((n, E.ROUND_INFO_SIZE), np.int64)
        self._final_info = np.zeros((n, K.FINAL_INFO_SIZE), np.int64)
        self._events = np.zeros(n, np.int64)
        self._started = False

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start every game afresh from its seeded stream; returns ``(obs, masks, seats)``.

        ``seed`` replaces the constructor's seed (kept for later resets).
        """
        if seed is not None:
            _check_seed(seed)
            self.seed = int(seed)
        K.seed_streams(np.uint64(self.seed), self._rng)
        obs, masks, seats = self._new_outputs()
        K.reset_all(self._games, self._rng, self._cfg, self._obs_off, obs, masks, seats)
        self._started = True
        return obs, masks, seats

    def step(self, actions: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Apply ``actions[i]`` (an action id) to game ``i`` for every game.

        Returns ``(obs, masks, seats, rewards, dones, infos)``: ``rewards`` is
        ``[num_envs, n_players]`` float32, what each seat earned on this step.
        Nothing changes if any action is illegal: a ``ValueError`` names the first
        such game, its action and the legal ones. The arrays are new on every call.
        """
        if not self._started:
            raise ValueError("step() was called before reset(): call reset() first")
        acts = self._check_actions(actions)
        n = self.num_envs
        obs, masks, seats = self._new_outputs()
        rewards = np.empty((n, self.n_players), np.float32)
        dones = np.empty(n, bool)
        events = self._events
        count = K.step_all(self._games, self._rng, acts, self._cfg, self._obs_off, rewards, dones, events,
                           self._round_info, self._final_info, obs, masks, seats)
        if count < 0:
            self._raise_illegal(-1 - count, int(acts[-1 - count]))
        infos: list[dict] = [{} for _ in range(n)]
        if count:
            for i in np.flatnonzero(events).tolist():
                ev = events[i]
                if ev & E.EV_ROUND:
                    infos[i]["round_result"] = _round_info(self._round_info[i])
                if ev & E.EV_FINAL:
                    infos[i]["final"] = _final_info(self._final_info[i])
        return obs, masks, seats, rewards, dones, infos

    def state(self) -> np.ndarray:
        """Full-state vectors ``[N, state_dim]``, each from its acting seat's perspective.

        Layout :func:`pcr_env.observation.state_layout` (the observation, then every
        hidden card): for centralised critics only, never for a policy.
        """
        self._require_started()
        out = np.empty((self.num_envs, self.state_dim), np.float32)
        K.state_all(self._games, self._cfg, self._obs_off, self._state_off, out)
        return out

    # ------------------------------------------------------------------ inspection
    def game(self, i: int) -> E.GameState:
        """A copy of game ``i`` as an engine :class:`~pcr_env.engine.GameState`, hidden cards included.

        For tests, debugging and rendering (``pcr_env.render.render_text``); changing
        it does not change the game.
        """
        self._require_started()
        return E.from_row(self._games[self._check_index(i)], self.rules)

    def set_games(self, games: "Sequence[E.GameState] | np.ndarray", *,
                  seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Continue from given positions: game ``i`` becomes ``games[i]``; returns ``(obs, masks, seats)``.

        ``games`` is one :class:`~pcr_env.engine.GameState` per game or an
        ``[num_envs, STATE_COLUMNS]`` int64 array of game rows (the engine's row
        format, e.g. from ``get_state()["games"]``). Later deals (a redeal after
        everyone passed, the next round) come from the random streams: kept as they
        are, or seeded from ``seed`` as ``reset(seed=...)`` does (then the result
        depends only on ``games``, ``seed`` and the actions, not on what the env
        played before). Every game must have a seat to act (not between rounds, not over).
        """
        if isinstance(games, np.ndarray):
            rows = np.array(games, np.int64)
        else:
            games = list(games)
            if len(games) != self.num_envs:
                raise ValueError(f"set_games got {len(games)} games: expected {self.num_envs}, one per game")
            for i, game in enumerate(games):
                if game.config != self.rules:
                    raise ValueError(f"games[{i}] has rules {game.config}: this VectorEnv has {self.rules}")
            rows = np.array([E.row_values(game) for game in games], np.int64).reshape(len(games), -1)
        if rows.shape != self._games.shape:
            raise ValueError(f"set_games got rows of shape {rows.shape}: expected {self._games.shape}")
        acting = rows[:, E.CURRENT]
        bad = np.flatnonzero((acting < 0) | (acting >= self.n_players) | (rows[:, E.PHASE] >= E.PH_ROUND_END))
        if bad.size:
            raise ValueError(f"game {int(bad[0])} has nobody to act (phase {int(rows[bad[0], E.PHASE])}, "
                             f"current {int(acting[bad[0]])}): set_games needs positions with a seat to act")
        if seed is not None:
            _check_seed(seed)
            self.seed = int(seed)
        if seed is not None or not self._started:
            K.seed_streams(np.uint64(self.seed), self._rng)
        self._games[:] = rows
        self._started = True
        obs, masks, seats = self._new_outputs()
        K.observe_all(self._games, self._cfg, self._obs_off, obs, masks, seats)
        return obs, masks, seats

    def observe(self, i: int, seat: int) -> np.ndarray:
        """Observation of any ``seat`` of game ``i`` (``step`` gives only the acting seat's)."""
        self._require_started()
        i = self._check_index(i)
        if not (_is_int(seat) and 0 <= seat < self.n_players):
            raise ValueError(f"seat {seat!r} is not a seat: allowed 0..{self.n_players - 1}")
        row = np.empty(self.obs_dim, np.float32)
        K.observe_one(self._games, i, int(seat), self._cfg, self._obs_off, row, np.empty(NUM_ACTIONS, np.int8))
        return row

    # ------------------------------------------------------------------ snapshots
    def get_state(self) -> dict[str, Any]:
        """Every game and random stream as plain arrays (copies), for checkpoints.

        ``set_state`` on a ``VectorEnv`` built with the same ``num_envs``, rules,
        episode and reward continues exactly where this one stands. Arrays and
        integers only: a checkpoint holding it loads with ``weights_only=True``.

        >>> a = VectorEnv(2, seed=1); _ = a.reset()
        >>> b = VectorEnv(2, seed=9); b.set_state(a.get_state())
        >>> bool((a.state() == b.state()).all())
        True
        """
        return {"games": self._games.copy(), "rng": self._rng.view(np.int64).copy(), "seed": self.seed,
                "started": self._started, "num_envs": self.num_envs, "rules": self.rules.to_dict(),
                "episode": self.episode, "reward": self.reward_kind}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`get_state` returned (a ``ValueError`` names what does not fit)."""
        mine = {"num_envs": self.num_envs, "rules": self.rules.to_dict(), "episode": self.episode,
                "reward": self.reward_kind}
        for key, value in mine.items():
            if state.get(key) != value:
                raise ValueError(f"VectorEnv state has {key}={state.get(key)!r}, this VectorEnv has {value!r}")
        games = np.asarray(state["games"], np.int64)
        rng = np.asarray(state["rng"], np.int64)
        if games.shape != self._games.shape or rng.shape != self._rng.shape:
            raise ValueError(f"VectorEnv state arrays have shapes {games.shape} and {rng.shape}: "
                             f"expected {self._games.shape} and {self._rng.shape}")
        self._games[:] = games
        self._rng[:] = rng.view(np.uint64)
        self.seed, self._started = int(state["seed"]), bool(state["started"])

    # ------------------------------------------------------------------ internals
    def _new_outputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.num_envs
        return np.empty((n, self.obs_dim), np.float32), np.empty((n, NUM_ACTIONS), np.int8), np.empty(n, np.int64)

    def _check_actions(self, actions: ArrayLike) -> np.ndarray:
        if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (self.num_envs,) \
                and actions.flags.c_contiguous:
            return actions  # fast path; the kernel only reads it
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions has shape {acts.shape}: expected ({self.num_envs},), one action id per game")
        if acts.dtype.kind not in "iu":
            raise ValueError(f"actions has dtype {acts.dtype}: expected integer action ids 0..{NUM_ACTIONS - 1}")
        return np.ascontiguousarray(acts, np.int64)

    def _raise_illegal(self, i: int, action: int) -> None:
        game = self.game(i)
        legal = E.legal_actions(game)
        try:
            name = describe_action(action)
        except ValueError:
            name = "out of range"
        raise ValueError(
            f"env {i}: illegal action {action} ({name}) for seat {game.current} in phase {game.phase.name}: "
            f"legal actions are {legal}"
        )

    def _check_index(self, i: int) -> int:
        if not (_is_int(i) and 0 <= i < self.num_envs):
            raise ValueError(f"game index {i!r} is out of range: allowed 0..{self.num_envs - 1}")
        return int(i)

    def _require_started(self) -> None:
        if not self._started:
            raise ValueError("the games have not been dealt yet: call reset() first")


def _round_info(row: np.ndarray) -> dict:
    """``RoundResult.to_info()`` from a kernel round record."""
    return E.round_info(row)


def _final_info(row: np.ndarray) -> dict:
    """``infos[i]["final"]``: numbers only, ``winner`` is ``-1`` when the episode has no winner."""
    r = row.tolist()
    winner = r[K.FI_WINNER]
    return {"scores": r[K.FI_SCORES:K.FI_SCORES + 2], "winner": winner if winner >= 0 else -1,
            "truncated": bool(r[K.FI_TRUNCATED]), "rounds": r[K.FI_ROUNDS]}


class DealRng:
    """Game ``index``'s random stream of ``VectorEnv(seed=seed)``, as an ``rng`` for :mod:`pcr_env.engine`.

    It offers the two calls :mod:`pcr_env.engine` makes of its ``rng``
    (``integers(n)`` for a random first dealer, ``permutation(52)`` for a
    deal), so the engine driven by it deals exactly the cards the vector env
    deals to that game. Streams are splitmix64; bounded draws use Lemire's
    multiply-and-reject on 32-bit outputs, so they are unbiased.

    >>> from pcr_env.engine import new_game
    >>> venv = VectorEnv(4, seed=9)
    >>> _ = venv.reset()
    >>> new_game(venv.rules, DealRng(9, 2)).hands == venv.game(2).hands
    True
    """

    def __init__(self, seed: int, index: int):
        _check_seed(seed)
        if not (_is_int(index) and 0 <= index < 1 << 63):
            raise ValueError(f"index {index!r} is not a game index: allowed an integer >= 0")
        # The kernels' own stream and draws, on a one-game stream array.
        self._stream = np.array([E.stream_start(np.uint64(seed), np.uint64(index))], np.uint64)

    @property
    def state(self) -> int:
        """The splitmix64 state (an integer)."""
        return int(self._stream[0])

    def integers(self, low: int, high: int | None = None) -> int:
        """One uniform integer in ``[0, low)`` (or ``[low, high)``)."""
        lo, hi = (0, low) if high is None else (low, high)
        if not (_is_int(lo) and _is_int(hi) and 0 < hi - lo < 1 << 32):
            raise ValueError(f"integers({low!r}, {high!r}): expected integer bounds with 0 < high - low < 2**32")
        return int(lo) + int(E._below(self._stream, 0, int(hi - lo)))

    def permutation(self, n: int) -> np.ndarray:
        """A uniform permutation of ``0..n-1`` (Fisher-Yates from the top)."""
        order = np.arange(n, dtype=np.int64)
        E._shuffle(self._stream, 0, order)
        return order


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_seed(seed: Any) -> None:
    if not (_is_int(seed) and 0 <= seed < 1 << 64):
        raise ValueError(f"seed {seed!r} is not allowed: allowed an integer 0..2**64-1")


__all__ = ["VectorEnv", "DealRng", "EPISODES", "REWARDS"]
