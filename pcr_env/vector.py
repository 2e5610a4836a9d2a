"""Many games stepped at once, returning arrays (reference implementation).

This first version loops over :mod:`pcr_env.engine` states in Python; the API
is pinned and a faster engine may replace the internals.

>>> venv = VectorEnv(8, seed=0)
>>> obs, masks, seats = venv.reset()
>>> obs.shape, masks.shape, seats.shape
((8, 797), (8, 70), (8,))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import engine as E
from .actions import NUM_ACTIONS, TRUMP_BASE
from .cards import NUM_CARDS
from .config import RulesConfig
from .observation import card_bits, encode_observation, encode_state, observation_size, state_size

EPISODES = ("game", "round")
REWARDS = ("score_diff", "win")


class VectorEnv:
    """``num_envs`` independent games; every call advances each game by one decision."""

    def __init__(self, num_envs: int, seed: int = 0, episode: str = "game", reward: str = "score_diff", **rules: Any):
        if not (isinstance(num_envs, int) and num_envs >= 1):
            raise ValueError(f"num_envs {num_envs!r} is not allowed: allowed an integer >= 1")
        if episode not in EPISODES:
            raise ValueError(f"episode {episode!r} is not allowed: allowed {list(EPISODES)}")
        if reward not in REWARDS:
            raise ValueError(f"reward {reward!r} is not allowed: allowed {list(REWARDS)}")
        self.rules = RulesConfig.from_kwargs(rules)
        self.num_envs, self.seed, self.episode, self.reward_kind = num_envs, seed, episode, reward
        self.n_players = self.rules.players
        self.obs_dim = observation_size(self.n_players)
        self.state_dim = state_size(self.n_players)
        self.num_actions = NUM_ACTIONS
        self._rngs = [np.random.default_rng([seed, i]) for i in range(num_envs)]
        self.games: list[E.GameState] = []

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._rngs = [np.random.default_rng([self.seed, i]) for i in range(self.num_envs)]
        self.games = [E.new_game(self.rules, rng) for rng in self._rngs]
        return self._observe()

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        actions = np.asarray(actions)
        n = self.num_envs
        rewards = np.zeros((n, self.n_players), np.float32)
        dones = np.zeros(n, bool)
        infos: list[dict] = [{} for _ in range(n)]
        for i, game in enumerate(self.games):
            a = int(actions[i])
            if not E.is_legal(game, a):
                raise ValueError(f"env {i}: illegal action {a} in phase {game.phase.name}: legal {E.legal_actions(game)}")
            result = E.apply_action(game, a, self._rngs[i], validate=False)
            if result is not None:
                infos[i]["round_result"] = result.to_info()
                diff = result.scores[0] - result.scores[1]
                if self.reward_kind == "score_diff":
                    rewards[i, 0::2], rewards[i, 1::2] = diff, -diff
                if self.episode == "round" or game.phase == E.Phase.GAME_OVER:
                    if self.reward_kind == "win":
                        if self.episode == "game":
                            sign = 0 if game.winner is None else (1 if game.winner == 0 else -1)
                        else:
                            sign = int(np.sign(diff))
                        rewards[i, 0::2], rewards[i, 1::2] = sign, -sign
                    self._finish(i, infos[i], truncated=self.episode == "game" and game.truncated)
                    dones[i] = True
                else:
                    E.start_next_round(game, self._rngs[i])
            elif game.phase == E.Phase.GAME_OVER:
                self._finish(i, infos[i], truncated=True)
                dones[i] = True
        obs, masks, seats = self._observe()
        return obs, masks, seats, rewards, dones, infos

    def _finish(self, i: int, info: dict, truncated: bool) -> None:
        game = self.games[i]
        info["final"] = {"scores": list(game.scores), "winner": game.winner, "truncated": truncated,
                         "rounds": game.round_number}
        self.games[i] = E.new_game(self.rules, self._rngs[i])

    def _observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.num_envs
        obs = np.zeros((n, self.obs_dim), np.float32)
        masks = np.zeros((n, NUM_ACTIONS), np.int8)
        seats = np.zeros(n, np.int64)
        for i, game in enumerate(self.games):
            seats[i] = game.current
            encode_observation(game, game.current, obs[i])
            phase = game.phase
            if phase == E.Phase.BID:
                masks[i, E.legal_actions(game)] = 1
            elif phase == E.Phase.TRUMP:
                masks[i, TRUMP_BASE:] = 1
            else:
                masks[i, :NUM_CARDS] = card_bits(E.legal_card_mask(game))
        return obs, masks, seats

    def state(self) -> np.ndarray:
        """Full-state vectors ``[N, state_dim]``, each from its acting seat's perspective."""
        return np.stack([encode_state(g, g.current) for g in self.games])
