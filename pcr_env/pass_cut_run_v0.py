"""
# Pass Cut Run

| Import | `from pcr_env import pass_cut_run_v0` |
|---|---|
| Actions | Discrete |
| Parallel API | No |
| Manual control | No (see `python -m agents.play`) |
| Render modes | `ansi`, `human` (text), `rgb_array` (720 x 960 x 3 picture) |
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
`ValueError` naming the field). An unknown keyword raises `TypeError`
("raw_env() got an unexpected keyword argument 'frameskip'", Python's wording,
which wrappers such as TorchRL's `GymEnv` rely on to retry without it).
`episode="game"` runs until the game ends (R8.4);
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

`step()` takes any integer-valued scalar as that action: a Python or numpy
integer, a 0-d numpy array, a 0-d tensor (torch, JAX: anything with `ndim == 0`
and `.item()`), or an integral float such as `8.0`
(`pcr_env.actions.action_id`). Anything else is refused before the state
changes: `TypeError` for what is not one number (`None` on a live agent, `True`
/ `False`, strings, arrays with `ndim > 0`), `ValueError` for a number that is
not whole (`8.5`) and, in `raw_env`, for a well-formed action that is not legal
now; every message names the agent, the phase and the legal actions. `env()`
accepts the same inputs (its `ActionIdWrapper` hands PettingZoo's wrappers a
plain `int`), and there a masked-out action ends the game with -1 for the mover
(`TerminateIllegalWrapper`) and an id outside 0..69 fails
`AssertOutOfBoundsWrapper`'s assertion, as in PettingZoo's classic games.

After the game: each done agent steps `None` (PettingZoo's dead step; any other
action raises `ValueError`). Once every agent has left `env.agents`, `raw_env`'s
`step()` and `last()` raise `RuntimeError` ("call reset()"), while `env()`
follows `OrderEnforcingWrapper` (a logged warning, no change). `observe(agent)`
keeps working (the mask is then all zeros).

### Observation

`observation` is the ego-centric vector described in `pcr_env.observation`
(relative seat k = the player k seats to the observer's left). Decode it with
`pcr_env.decode_observation`. `action_mask` (int8) marks the legal actions of the
agent to act and is all zeros for the others.

### Rewards and infos

See `reward` above. On the step that ends a round, every agent's info is
`{"round_result": {...}}` with `round`, `dealer`, `declarer`, `bid`, `trump`
(suit index 0..3 = C D H S; the letter is `pcr_env.cards.SUITS[trump]`), `made`,
`tricks`, `run_bonus`, `scores`, `total_scores` (per team, team 0 = even seats),
`trick_winners` (one seat per trick) and `winner` (R8.3: the team with more
tricks, `-1` on a tie). An agent's info stays until it next acts, and is `{}`
otherwise. `state()` returns the full state (all hands) for centralised critics.

Infos hold numbers only: every leaf is an `int`, `bool` or a list of `int`, and
`round_result` has the same keys and list lengths every time (the Gym view and
`VectorEnv` follow the same rule). Its presence is the signal "a round ended
here", so it is not on every step; replay buffers that stack infos over steps
(Tianshou's `Batch`) fill the steps without it with zeros, never with `None`,
and a filled-in row is recognisable by `round == 0` (rounds count from 1).

### Rendering

`render_mode="ansi"` returns the table as text, `"human"` prints it (on every
`reset` and `step`), and `"rgb_array"` returns a picture, a `(720, 960, 3)`
`uint8` array drawn with Pillow (`pcr_env.render_image`). Both are a spectator's
view of the whole table: seat 0 at the bottom and the others clockwise
(seat 1 on the left), every hand face up, the agent to act outlined in gold with
its illegal cards dimmed, the current trick in the middle, every bid, the
contract and trump, tricks won, the current run and its bonus, and the scores.
The Gymnasium view (`PassCutRun-v0`) draws its learner's own view instead,
from the observation, with no hidden card.

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
from pettingzoo.utils.wrappers import BaseWrapper

from . import engine as E
from .actions import NUM_ACTIONS, PASS_BID, action_id, describe_action
from .cards import NUM_CARDS, parse_card
from .config import RulesConfig, check_episode_reward, unexpected_keywords
from .observation import (
    encode_row,
    encode_state_row,
    observation_bounds,
    observation_offsets,
    observation_size,
    state_offsets,
    state_size,
)
from .render import render_text

_ENV_KEYWORDS = ("episode", "reward", "render_mode")


def env(**kwargs) -> AECEnv:
    """The environment with PettingZoo's standard classic-game wrappers.

    Outside in: ``OrderEnforcingWrapper``, :class:`ActionIdWrapper` (any
    integer-valued scalar becomes its ``int``; anything else is refused with
    the raw env's ``TypeError``/``ValueError``), ``AssertOutOfBoundsWrapper``,
    ``TerminateIllegalWrapper(illegal_reward=-1)``.
    """
    unknown = set(kwargs) - set(_ENV_KEYWORDS) - set(RulesConfig.field_names())
    if unknown:
        raise unexpected_keywords("env", unknown, [*_ENV_KEYWORDS, *RulesConfig.field_names()])
    environment = raw_env(**kwargs)
    environment = wrappers.TerminateIllegalWrapper(environment, illegal_reward=-1)
    environment = wrappers.AssertOutOfBoundsWrapper(environment)
    environment = ActionIdWrapper(environment)
    environment = wrappers.OrderEnforcingWrapper(environment)
    return environment


class ActionIdWrapper(BaseWrapper):
    """Passes every integer-valued scalar on as a Python ``int`` and refuses anything else.

    PettingZoo's ``AssertOutOfBoundsWrapper`` rejects ``8.0`` or a 0-d tensor
    with a bare ``AssertionError``, and ``TerminateIllegalWrapper`` indexes the
    mask with the action, so ``True`` would fail inside numpy. This wrapper sits
    outside both and gives them a plain ``int``: the rules of
    :func:`pcr_env.actions.action_id` hold for ``env()`` as for ``raw_env()``.
    ``None`` is passed on for an agent that is done (PettingZoo's dead step).
    """

    def step(self, action) -> None:
        raw = self.unwrapped
        agent = self.agent_selection
        if action is None and (raw.terminations.get(agent) or raw.truncations.get(agent)):
            super().step(None)
            return
        super().step(raw._checked_action_id(agent, action))


class raw_env(AECEnv, EzPickle):
    """Pass Cut Run as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "name": "pass_cut_run_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, episode: str = "game", reward: str = "score_diff", render_mode: str | None = None, **rules: Any):
        EzPickle.__init__(self, episode=episode, reward=reward, render_mode=render_mode, **rules)
        super().__init__()
        self.rules = RulesConfig.from_kwargs(rules, owner="raw_env", other_keywords=_ENV_KEYWORDS)
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
        # The game is one row of the engine's compiled form, stepped by the same functions as VectorEnv's rows.
        self._S = np.zeros((1, E.STATE_COLUMNS), np.int64)
        self._cfg = E.config_array(self.rules, episode, reward)
        self._obs_off, self._state_off = observation_offsets(n), state_offsets(n)
        self._obs_size = observation_size(n)
        self._step_rewards = np.zeros((1, n), np.float32)
        self._round_record = np.zeros((1, E.ROUND_INFO_SIZE), np.int64)
        self._started = False
        self._zero_mask = np.zeros(NUM_ACTIONS, np.int8)
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._mask_valid = False

    @property
    def game(self) -> E.GameState | None:
        """A snapshot of the game (:class:`~pcr_env.engine.GameState`, hidden cards included); ``None`` before reset.

        Changing the snapshot does not change the game; assigning one
        (``env.game = state``) continues from it.
        """
        return E.from_row(self._S[0], self.rules) if self._started else None

    @game.setter
    def game(self, state: E.GameState) -> None:
        E.to_row(state, self._S[0])
        self._started = True
        self._mask_valid = False
        if state.current >= 0:
            self.agent_selection = self.possible_agents[state.current]

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        deal = _parse_options(self.rules, options or {})
        E.start_row(self._S, 0, self.rules, self._cfg, self.np_random, **deal)
        self._started = True
        self._mask_valid = False
        self._rewards_pending = False
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[int(self._S[0, E.CURRENT])]
        if self.render_mode == "human":
            self.render()

    # ---------------------------------------------------------------- observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation; it still works once the game is over (the mask is then all zeros)."""
        self._require_reset("observe()")
        if agent not in self.agent_name_mapping:
            raise KeyError(f"{agent!r} is not an agent of this env: possible agents are {self.possible_agents}")
        seat = self.agent_name_mapping[agent]
        mask = self._current_mask().copy() if seat == self._S[0, E.CURRENT] else self._zero_mask.copy()
        obs = np.empty(self._obs_size, np.float32)
        encode_row(self._S, 0, seat, self._cfg, self._obs_off, obs)
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True):
        """PettingZoo's ``last()``; after the game, once every agent has taken its dead step, a clear error."""
        self._require_reset("last()")
        if self.agent_selection not in self._cumulative_rewards:
            raise RuntimeError(
                "the game is over and every agent has left env.agents (each took its dead step): "
                "there is no agent to report on; call reset() to play again"
            )
        return super().last(observe)

    def _require_reset(self, what: str) -> None:
        if not self._started:
            raise RuntimeError(f"{what} was called before reset(): call reset() first")

    def _current_mask(self) -> np.ndarray:
        """The acting seat's legal-action mask, built once per decision (observe and step both ask)."""
        if not self._mask_valid:
            E.legal_mask_row(self._S, 0, self._cfg, self._mask)
            self._mask_valid = True
        return self._mask

    def _legal(self, action: int) -> bool:
        return 0 <= action < NUM_ACTIONS and self._current_mask()[action] == 1

    def _phase_name(self) -> str:
        return E.Phase(int(self._S[0, E.PHASE])).name

    def _legal_text(self) -> str:
        legal = np.flatnonzero(self._current_mask()).tolist()
        return f"legal actions are {legal} ({', '.join(describe_action(a) for a in legal)})"

    def _checked_action_id(self, agent: str, action) -> int:
        """The action id of ``action`` (:func:`pcr_env.actions.action_id`), with the table's context on errors."""
        try:
            return action_id(action)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{err}; {agent} is to act in phase {self._phase_name()}: {self._legal_text()}") from None

    def state(self) -> np.ndarray:
        """Full state (every hand, the kitty and discards), seen from seat 0."""
        self._require_reset("state()")
        vec = np.empty(self.state_space.shape, np.float32)
        encode_state_row(self._S, 0, 0, self._cfg, self._obs_off, self._state_off, vec)
        return vec

    # ------------------------------------------------------------------- step
    def step(self, action) -> None:
        """Apply ``action`` for the agent to act (see "Actions" in the module docstring for what is accepted)."""
        self._require_reset("step()")
        agent = self.agent_selection
        if agent not in self.terminations:
            raise RuntimeError(
                f"step({action!r}) after the end of the game: every agent has already left env.agents; "
                f"call reset() to play again"
            )
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                done = "terminated" if self.terminations[agent] else "truncated"
                raise ValueError(
                    f"{agent} is done ({done}): when an agent is dead, the only valid action is None "
                    f"(its dead step, which removes it from env.agents), got {action!r}; call reset() for a new game"
                )
            self._was_dead_step(action)
            return
        action_int = self._checked_action_id(agent, action)
        if not self._legal(action_int):
            given = "" if type(action) is int else f", given as {action!r}"
            raise ValueError(
                f"illegal action {action_int} ({_describe(action_int)}{given}) by {agent} in phase {self._phase_name()}: "
                f"{self._legal_text()}"
            )
        self._cumulative_rewards[agent] = 0
        if self.infos[agent]:
            self.infos[agent] = {}  # it has read the last round's result through last()
        if self._rewards_pending:  # rewards are per step: clear the last round's
            self._clear_rewards()
            self._rewards_pending = False
        S = self._S
        # The rules, the round's scoring, the episode's end and the rewards: engine.step_game, as VectorEnv.
        events = E.step_game(S, E.NO_STREAM, 0, action_int, self._cfg, self._step_rewards, self._round_record)
        if S[0, E.PHASE] == E.PH_DEAL:  # a redeal (R4.4) or the next round (R2.1): dealt from np_random
            E.deal_from(S, 0, self._cfg, self.np_random)
        self._mask_valid = False
        if events & E.EV_ROUND:
            info = E.round_info(self._round_record[0])
            rewards = self._step_rewards[0].tolist()
            for seat, a in enumerate(self.possible_agents):
                self.infos[a] = {"round_result": info}
                self.rewards[a] = int(rewards[seat])
            self._rewards_pending = True
        if events & E.EV_FINAL:
            done = self.truncations if events & E.EV_TRUNCATED else self.terminations
            for a in self.agents:
                done[a] = True
        current = int(S[0, E.CURRENT])
        if current >= 0:
            self.agent_selection = self.possible_agents[current]
        if self._rewards_pending:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ----------------------------------------------------------------- render
    def render(self) -> str | np.ndarray | None:
        """The whole table (spectator view, every hand shown): text, printed text or a picture.

        ``"ansi"`` returns :func:`pcr_env.render.render_text`, ``"human"`` prints
        it, ``"rgb_array"`` returns :func:`pcr_env.render_image.render_state`
        (a ``(720, 960, 3)`` ``uint8`` array, seat 0 at the bottom, every hand
        face up, the agent to act outlined).
        """
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        self._require_reset("render()")
        if self.render_mode == "rgb_array":
            from .render_image import render_state  # Pillow is imported only when a picture is asked for

            return render_state(self.game)
        text = render_text(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def _is_int_like(action) -> bool:
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)


def _describe(action: int) -> str:
    try:
        return describe_action(action)
    except ValueError:
        return "out of range"


_OPTION_KEYS = ("dealer", "round", "hands", "kitty")


def _parse_options(rules: RulesConfig, options: dict) -> dict:
    """Validated keyword arguments for :func:`engine.start_row` (as :func:`engine.new_game`) from reset options."""
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


__all__ = ["env", "raw_env", "ActionIdWrapper", "PASS_BID"]
