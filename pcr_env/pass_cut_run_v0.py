"""
# Pass Cut Run

| Import | `from pcr_env import pass_cut_run_v0` |
|---|---|
| Actions | Discrete |
| Parallel API | No |
| Manual control | No (see `python -m pcr_env.play`) |
| Agents | `agents = ['player_0', 'player_1', 'player_2', 'player_3']` (six with `players=6`) |
| Action shape | Discrete(70) |
| Action values | 0..69 |
| Observation shape | `{"observation": (797,), "action_mask": (70,)}` (1041 with six players) |
| Observation values | [0, 1] except the `scores` slice |

A four-player partnership trick-taking game: pass 3 cards, bid 7-13 tricks, the
declarer names trump, must-follow play, and bonuses for runs of consecutive
tricks. The rules of record are `RULES.md` (rule numbers R1-R9); agent
`player_i` sits in seat i, partners sit opposite (team = seat % 2).

### Arguments

``env(players=4, passing=True, double_run_bonus=False, bidding="single", min_bid=None,
target_score=100, max_rounds=200, max_redeals=10, first_dealer="random",
episode="game", reward="score_diff", render_mode=None)``

The first nine are the rules (`pcr_env.RulesConfig`, validated: a bad value raises
`ValueError` naming the field). `episode="game"` runs until the game ends (R8.4);
`"round"` ends after one scored round. `reward="score_diff"` gives every agent, at
the end of each round, its team's round score minus the other team's; `"win"`
gives +1/-1 when the game is won (0 if truncated; in `"round"` episodes, the sign
of the round's score difference).

### Actions

| ids | meaning |
|---|---|
| 0-51 | a card `suit*13 + rank` (suits C D H S, ranks 2..A): pass, discard or play it |
| 52-64 | bid 1..13 tricks (legal: above the highest bid, from `min_bid` to the number of tricks) |
| 65 | no bid |
| 66-69 | name trump C, D, H, S |

Phases: pass (each player picks its 3 cards one action at a time, seat by seat
from the dealer's left; nobody sees another's picks before the exchange, R3.1),
bid, trump, discard (six players: the declarer's 4 discards, R9.3), play.

### Observation

`observation` is the ego-centric vector described in `pcr_env.observation`
(relative seat k = the player k seats to the observer's left). Decode it with
`pcr_env.decode_observation`. `action_mask` (int8) marks the legal actions of the
agent to act and is all zeros for the others.

### Rewards and infos

See `reward` above. At the end of every round each agent's info has
`"round_result"`: `tricks`, `run_bonus`, `scores` (per team, team 0 = even seats),
`declarer`, `bid`, `trump`, `made`, `trick_winners` (seats), `total_scores`,
`winner` (R8.3), `round`, `dealer`. `state()` returns the full state (all hands)
for centralised critics.

### Reset options

`reset(seed=..., options={"dealer": 2, "round": 3, "hands": [[...], ...], "kitty": [...]})`:
dealer seat, round number (sets the pass direction, R3.2), and a chosen deal as
card names (`"AS"`, `"10H"`) or indices. Unknown keys are ignored (PettingZoo's
api_test passes one).

### Version history

* v0: first release.

>>> env = raw_env(first_dealer=0, episode="round")
>>> env.reset(seed=7)
>>> env.agent_selection
'player_1'
>>> obs, reward, terminated, truncated, info = env.last()
>>> int(obs["action_mask"].sum())  # any of the 13 cards may be picked to pass
13
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import engine as E
from .actions import NUM_ACTIONS, PASS_BID, describe_action
from .cards import NUM_CARDS, parse_card
from .config import RulesConfig, check_episode_reward
from .observation import ObservationTracker, encode_state, observation_bounds, state_size
from .render import render_text


def env(**kwargs) -> AECEnv:
    """The environment with PettingZoo's standard classic-game wrappers."""
    environment = raw_env(**kwargs)
    environment = wrappers.TerminateIllegalWrapper(environment, illegal_reward=-1)
    environment = wrappers.AssertOutOfBoundsWrapper(environment)
    environment = wrappers.OrderEnforcingWrapper(environment)
    return environment


class raw_env(AECEnv, EzPickle):
    """Pass Cut Run as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "pass_cut_run_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, episode: str = "game", reward: str = "score_diff", render_mode: str | None = None, **rules: Any):
        EzPickle.__init__(self, episode=episode, reward=reward, render_mode=render_mode, **rules)
        super().__init__()
        self.rules = RulesConfig.from_kwargs(rules)
        check_episode_reward(episode, reward)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not allowed: allowed {self.metadata['render_modes']} or None")
        self.episode, self.reward_kind, self.render_mode = episode, reward, render_mode
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        low, high = observation_bounds(n)
        obs_space = spaces.Dict({
            "observation": spaces.Box(low, high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, (state_size(n),), dtype=np.float32)
        self.np_random, _ = seeding.np_random(None)
        self.game: E.GameState | None = None
        self._tracker = ObservationTracker(n)
        self._zero_mask = np.zeros(NUM_ACTIONS, np.int8)
        self._cached_mask: np.ndarray | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        deal = _parse_options(self.rules, options or {})
        self.game = E.new_game(self.rules, self.np_random, **deal)
        self._tracker.reset()
        self._cached_mask = None
        self._rewards_pending = False
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current]
        if self.render_mode == "human":
            self.render()

    # ---------------------------------------------------------------- observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        game = self.game
        if seat == game.current:
            mask = self._current_mask().copy()
        else:
            mask = self._zero_mask.copy()
        return {"observation": self._tracker.observation(game, seat), "action_mask": mask}

    def _current_mask(self) -> np.ndarray:
        """The acting seat's legal-action mask, built once per decision (observe and step both ask)."""
        if self._cached_mask is None:
            self._cached_mask = E.legal_mask(self.game)
        return self._cached_mask

    def _legal(self, action: int) -> bool:
        return 0 <= action < NUM_ACTIONS and self._current_mask()[action] == 1

    def state(self) -> np.ndarray:
        """Full state (every hand, the kitty and discards), seen from seat 0."""
        return encode_state(self.game, 0)

    # ------------------------------------------------------------------- step
    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        if not (_is_int_like(action) and self._legal(int(action))):
            raise ValueError(
                f"illegal action {action!r} ({_describe(action)}) by {agent} in phase {game.phase.name}: "
                f"legal actions are {E.legal_actions(game)} ({', '.join(describe_action(a) for a in E.legal_actions(game))})"
            )
        self._cumulative_rewards[agent] = 0
        if self.infos[agent]:
            self.infos[agent] = {}  # it has read the last round's result through last()
        if self._rewards_pending:  # rewards are per step: clear the last round's
            self._clear_rewards()
            self._rewards_pending = False
        action, seat, phase, led = int(action), game.current, game.phase, game.led_suit
        result = E.apply_action(game, action, self.np_random, validate=False)
        self._tracker.update(phase, led, seat, action, game)
        self._cached_mask = None
        if result is not None:
            self._end_round(result)
        elif game.phase == E.Phase.GAME_OVER:  # truncated by too many redeals (R4.4)
            self._end_episode(truncated=True)
        if game.current >= 0:
            self.agent_selection = self.possible_agents[game.current]
        if self._rewards_pending:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_round(self, result: E.RoundResult) -> None:
        game = self.game
        info = result.to_info()
        for a in self.agents:
            self.infos[a] = {"round_result": info}
        diff = result.scores[0] - result.scores[1]
        self._rewards_pending = True
        if self.reward_kind == "score_diff":
            for seat, a in enumerate(self.possible_agents):
                self.rewards[a] = diff if seat % 2 == 0 else -diff
        if self.episode == "round" or game.phase == E.Phase.GAME_OVER:
            if self.reward_kind == "win":
                sign = (1 if game.winner == 0 else -1 if game.winner == 1 else 0) if self.episode == "game" else int(np.sign(diff))
                for seat, a in enumerate(self.possible_agents):
                    self.rewards[a] = sign if seat % 2 == 0 else -sign
            self._end_episode(truncated=self.episode == "game" and game.truncated)
        else:
            E.start_next_round(game, self.np_random)

    def _end_episode(self, truncated: bool) -> None:
        for a in self.agents:
            if truncated:
                self.truncations[a] = True
            else:
                self.terminations[a] = True

    # ----------------------------------------------------------------- render
    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = render_text(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def _is_int_like(action) -> bool:
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)


def _describe(action) -> str:
    try:
        return describe_action(int(action))
    except (TypeError, ValueError):
        return "not an action"


_OPTION_KEYS = ("dealer", "round", "hands", "kitty")


def _parse_options(rules: RulesConfig, options: dict) -> dict:
    """Validated keyword arguments for :func:`engine.new_game` from reset options."""
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict, not {type(options).__name__}")
    out: dict[str, Any] = {}
    n = rules.players
    if options.get("dealer") is not None:
        d = options["dealer"]
        if not (_is_int_like(d) and 0 <= d < n):
            raise ValueError(f"options['dealer'] = {d!r} is not a seat: allowed 0..{n - 1}")
        out["dealer"] = int(d)
    if options.get("round") is not None:
        r = options["round"]
        if not (_is_int_like(r) and r >= 1):
            raise ValueError(f"options['round'] = {r!r} is not a round number: allowed an integer >= 1")
        out["round_number"] = int(r)
    if options.get("hands") is not None:
        hands = options["hands"]
        if not isinstance(hands, (list, tuple)):
            raise ValueError(f"options['hands'] must be a list of {n} card lists, not {type(hands).__name__}")
        out["hands"] = [_cards(h, f"options['hands'][{i}]") for i, h in enumerate(hands)]
        out["kitty"] = _cards(options.get("kitty") or [], "options['kitty']")
    elif options.get("kitty"):
        raise ValueError("options['kitty'] was given without options['hands']: give both")
    return out


def _cards(items, where: str) -> list[int]:
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"{where} must be a list of cards such as 'AS' or '10H', not {type(items).__name__}")
    out = []
    for c in items:
        if isinstance(c, str):
            try:
                out.append(parse_card(c))
            except ValueError as err:
                raise ValueError(f"{where}: {err}") from None
        elif _is_int_like(c) and 0 <= c < NUM_CARDS:
            out.append(int(c))
        else:
            raise ValueError(f"{where}: {c!r} is not a card: allowed names such as 'AS', '10H' or indices 0..51")
    return out


__all__ = ["env", "raw_env", "PASS_BID"]
