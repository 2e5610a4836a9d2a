"""Single-agent Gymnasium view of Pass Cut Run: one learner, the other seats played by given agents.

The learner controls one seat (``seat=``) or, with ``team=True``, every seat of
that seat's team (R1.2: partners share a team, so one policy plays both chairs,
always from the chair to act). Every other seat is played inside :meth:`step`
by an agent object: anything with ``act(obs_dict) -> int`` and ``reset(seed)``
(:class:`SeatAgent`; every agent of :mod:`agents` is one), or a factory
``others(seats, rules) -> {seat: agent}`` called once by the constructor.

Spec strings (``"random"``, ``"heuristic"``, ``"ppo:PATH"``, ``"ppo:pretrained"``)
are the :mod:`agents` package's business, one layer up: the Gymnasium id
``"PassCutRun-v0"`` is registered with the entry point
``"agents.registry:make_gym_env"``, which turns specs into agents
(:func:`agents.make_agents`) and returns this env, so
``gymnasium.make("PassCutRun-v0", others=["heuristic"] * 3)`` works while
:mod:`pcr_env` itself never imports :mod:`agents`. ``PassCutRunEnv(others="random")``
is refused with a message pointing there.

Credit: one :meth:`step` returns everything the learner's seat (its team, with
``team=True``) earned from its own action up to its next decision or the end of
the episode. Rounds end on other seats' cards too, and the reward of such a
round lands on the learner's next step rather than being lost (the bug that
stopped PettingZoo's SB3 tutorial learning, PettingZoo#1147).

Spaces: the observation is the flat ego-centric vector of
:mod:`pcr_env.observation` (``Box``, float32; decode it with
:func:`pcr_env.decode_observation`) and the action space is ``Discrete(70)``.
:meth:`action_masks` returns the int8 legal-action mask (sb3-contrib's
convention); it is also ``info["action_mask"]``. Once the episode has ended
every action is marked allowed, because an all-zero mask makes masked softmaxes
divide by zero (Pgx's convention), although none is legal then.

Actions: :meth:`step` takes any integer-valued scalar (Python or numpy integer,
0-d array or tensor, integral float such as ``8.0``; see
:func:`pcr_env.actions.action_id`). An illegal learner action that is a
well-formed id (e.g. an unmasked ``action_space.sample()``, or ``70``) ends the
episode with ``illegal_reward`` and ``info["illegal_action"] = True``, like
PettingZoo's ``TerminateIllegalWrapper``; why it was illegal is in
:attr:`PassCutRunEnv.illegal_action_detail` (infos hold numbers only). Input that
is not an action id at all is a programming error and raises instead:
``TypeError`` for ``None``, ``True``/``False``, strings or arrays with ``ndim > 0``,
``ValueError`` for a non-whole number such as ``8.5``. Unknown constructor
keywords raise ``TypeError`` ("got an unexpected keyword argument ..."), bad
values of known ones ``ValueError``.

Infos: ``seat`` (the learner seat to act), ``action_mask`` (int8 array),
``round_result`` on the step during which a round ended (numbers only, as in
:mod:`pcr_env.pass_cut_run_v0`: ``trump`` is a suit index, ``winner`` ``-1`` on a
tie), ``final_scores`` once the episode is over and ``illegal_action`` after an
illegal action. Every leaf is a number, a list of numbers or a numeric array.

Seeding: ``reset(seed=s)`` deals from ``s`` and re-seeds the agent at each other
seat ``k`` with ``agent.reset(derive_seed(s, k))`` (:mod:`pcr_env.seating`), so the
same seed and the same learner actions replay the same episode; ``reset()`` without
a seed leaves the agents' randomness running on.

Rendering: ``"ansi"``/``"human"`` give the learner's view as text (:func:`pcr_env.render.render_view`) and
``"rgb_array"`` as a ``(720, 960, 3)`` ``uint8`` picture
(:func:`pcr_env.render_image.render_observation`): the learner seat to act at
the bottom with its own hand face up, the other hands face down, the public
table around. Both are drawn from the learner's observation, so nothing hidden
is shown. ``RecordVideo`` and SB3's ``make_vec_env`` (which asks for
``render_mode="rgb_array"``) work as they are.

>>> import gymnasium, pcr_env
>>> env = gymnasium.make("PassCutRun-v0", others=["random"] * 3, rules={"first_dealer": 0}, episode="round")
>>> obs, info = env.reset(seed=0)
>>> obs.shape, info["seat"], int(env.unwrapped.action_masks().sum())  # seat 0 picks 3 cards to pass
((797,), 0, 13)
>>> while True:
...     legal = env.unwrapped.action_masks().nonzero()[0]
...     obs, reward, terminated, truncated, info = env.step(int(legal[0]))
...     if terminated or truncated:
...         break
>>> reward == info["round_result"]["scores"][0] - info["round_result"]["scores"][1]  # R8: team 0's margin
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, SupportsFloat, SupportsInt, Union, runtime_checkable

import gymnasium
import numpy as np
from gymnasium import spaces

from . import GYM_ENTRY_POINT  # "agents.registry:make_gym_env": resolves agent specs, then builds PassCutRunEnv
from . import GYM_ID as ENV_ID  # "PassCutRun-v0"
from . import engine as E
from .actions import NUM_ACTIONS, action_id, describe_action
from .config import RulesConfig, check_episode_reward, check_field_names, unexpected_keywords
from .pass_cut_run_v0 import raw_env
from .render import render_view
from .seating import derive_seed, is_seat_agent, per_seat


@runtime_checkable
class SeatAgent(Protocol):
    """What plays a seat here: a legal action id for its seat's observation dict, and ``reset(seed)``.

    A structural type: :class:`agents.base.Agent` (which adds ``act_batch``,
    ``get_state`` and ``set_state``) satisfies it, and so does any small class
    with these two methods.
    """

    def act(self, obs: dict[str, np.ndarray]) -> SupportsInt: ...

    def reset(self, seed: int | None = None) -> None: ...


SeatAgents = Union[SeatAgent, Sequence[SeatAgent], Mapping[int, SeatAgent],
                   Callable[[tuple[int, ...], RulesConfig], Mapping[int, SeatAgent]]]
"""What ``others=`` takes: one agent for every other seat, one per other seat in seat order,
``{seat: agent}``, or a factory ``(other_seats, rules) -> {seat: agent}``."""


class PassCutRunEnv(gymnasium.Env):
    """One seat (or one team) of Pass Cut Run as a ``gymnasium.Env``; see the module docstring.

    Args:
        seat: the learner's seat, ``0 .. players-1``.
        others: who plays the other seats (:class:`SeatAgent` objects). One agent
            for all of them, a sequence with one entry per other seat in increasing
            seat order, a mapping ``{seat: agent}`` naming each other seat exactly,
            or a factory ``others(other_seats, rules)`` returning such a mapping.
            Spec strings go through ``gymnasium.make("PassCutRun-v0", others=...)``.
        team: the learner also plays its partners (every seat ``s`` with
            ``s % 2 == seat % 2``); rewards are the team's, counted once.
        rules: a :class:`~pcr_env.RulesConfig` or a mapping of its fields;
            single rule fields may also be given as keyword arguments.
        episode: ``"game"`` (to the target score, R8.4) or ``"round"``.
        reward: ``"score_diff"`` or ``"win"``, as in :mod:`pcr_env.pass_cut_run_v0`.
        illegal_reward: reward of an illegal learner action, which ends the
            episode; ``None`` means ``-1`` for ``reward="win"`` and
            ``-target_score`` for ``"score_diff"`` (worse than losing any round).
        render_mode: ``"ansi"`` (:meth:`render` returns the learner's view as
            text), ``"human"`` (prints it), ``"rgb_array"`` (returns it as a
            ``(720, 960, 3)`` ``uint8`` picture) or ``None``.

    Attributes:
        illegal_action_detail: after an illegal learner action, what was wrong
            with it (a sentence naming the action, the seat and the phase);
            ``None`` otherwise. It is not in ``info``, which holds numbers only.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        seat: int = 0,
        others: SeatAgents | None = None,
        *,
        team: bool = False,
        rules: RulesConfig | Mapping[str, Any] | None = None,
        episode: str = "game",
        reward: str = "score_diff",
        illegal_reward: float | None = None,
        render_mode: str | None = None,
        **rule_fields: Any,
    ):
        self.rules = _rules_config(rules, rule_fields)
        n = self.rules.players
        if not (isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < n):
            raise ValueError(f"seat {seat!r} is not allowed: allowed a seat 0..{n - 1}")
        if not isinstance(team, bool):
            raise ValueError(f"team {team!r} is not allowed: allowed True or False")
        check_episode_reward(episode, reward)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not allowed: allowed {self.metadata['render_modes']} or None")
        self.seat = int(seat)
        self.team = team
        self.learner_seats = tuple(s for s in range(n) if s % 2 == seat % 2) if team else (self.seat,)
        self.other_seats = tuple(s for s in range(n) if s not in self.learner_seats)
        self._agents: dict[int, SeatAgent] = _other_agents(others, self.other_seats, self.rules)
        self.episode, self.reward_kind, self.render_mode = episode, reward, render_mode
        if illegal_reward is None:
            illegal_reward = -1.0 if reward == "win" else -float(self.rules.target_score)
        self.illegal_reward = float(illegal_reward)
        self.illegal_action_detail: str | None = None

        self._aec = raw_env(episode=episode, reward=reward, **self.rules.to_dict())
        # Every learner seat earns the same (team) reward: count one of them, once.
        self._reward_agent = self._aec.possible_agents[self.seat]
        self.observation_space = self._aec.observation_space(self._reward_agent)["observation"]
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._acting = self.seat  # learner seat to act now (the view rendered / observed)
        self._done = True
        self._round_result = self._seen_result = None
        self._all_allowed = np.ones(NUM_ACTIONS, np.int8)

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new game (``options`` as in the AEC env: ``dealer``, ``round``, ``hands``, ``kitty``).

        A seed also re-seeds the other seats' agents (``agent.reset(derive_seed(seed, seat))``),
        so ``reset(seed=s)`` then the same learner actions replay the same episode.
        """
        super().reset(seed=seed)
        if seed is not None:
            for s, agent in self._agents.items():
                agent.reset(derive_seed(seed, s))
        # One generator for the whole env: the deals come from self.np_random.
        self._aec.np_random = self.np_random
        self._aec.reset(options=options)
        self._done = False
        self._round_result = self._seen_result = None
        self.illegal_action_detail = None
        earned = self._play_others()
        assert earned == 0.0, "nothing is scored before the learner's first decision"
        return self._observation(), self._info()

    def step(self, action: SupportsInt) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict]:
        """Play the learner's ``action``, then the other seats up to the learner's next decision."""
        if self._done:
            raise RuntimeError("the episode is over: call reset() before step()")
        game = self._aec.game
        action_int = action_id(action)  # TypeError / ValueError: not an action id at all
        self._round_result = None
        if not E.is_legal(game, action_int):
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            given = "" if type(action) is int else f", given as {action!r}"
            self.illegal_action_detail = (
                f"action {action_int} ({_describe(action_int)}{given}) is not legal for seat {game.current} "
                f"in phase {game.phase.name}: legal actions are {E.legal_actions(game)}"
            )
            return self._observation(), self.illegal_reward, True, False, info
        self._aec.step(action_int)
        earned = float(self._aec.rewards[self._reward_agent])
        self._take_round_result()
        earned += self._play_others()
        terminated, truncated = self._episode_over()
        return self._observation(), earned, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner's seat to act (int8, 70); all ones once the episode has ended."""
        if self._done:
            return self._all_allowed.copy()
        return self._aec.observe(self._aec.agent_selection)["action_mask"]

    def render(self) -> str | np.ndarray | None:
        """The learner's view of the table (no hidden cards): text, or a picture for ``"rgb_array"``."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self._aec.game is None:
            raise RuntimeError("render() was called before reset(): call reset() first")
        obs = self._aec.observe(self._aec.possible_agents[self._acting])
        if self.render_mode == "rgb_array":
            from .render_image import render_observation  # Pillow is imported only when a picture is asked for

            # The round number is public (the observation does not carry it); nothing else comes from the engine.
            return render_observation(obs, self._acting, rules=self.rules, round_number=self._aec.game.round_number)
        text = render_view(obs, self._acting)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self._aec.close()

    # -------------------------------------------------------------- helpers
    @property
    def game(self) -> E.GameState | None:
        """The engine state (hidden cards included): for tests and debugging, never for agents."""
        return self._aec.game

    @property
    def other_agents(self) -> dict[int, SeatAgent]:
        """The agents playing the other seats, ``{seat: agent}``."""
        return dict(self._agents)

    def _play_others(self) -> float:
        """Let the other seats act until a learner seat must decide or the episode ends.

        Returns the learner's reward earned meanwhile (rounds can end on another seat's card).
        """
        aec, earned = self._aec, 0.0
        while True:
            if all(aec.terminations.values()) or all(aec.truncations.values()):
                self._done = True
                return earned
            seat = aec.game.current
            if seat in self.learner_seats:
                self._acting = seat
                return earned
            agent_name = aec.agent_selection
            obs = aec.observe(agent_name)
            action = self._agents[seat].act(obs)
            try:
                chosen = action_id(action)
            except (TypeError, ValueError):
                chosen = None
            if chosen is None or not (0 <= chosen < NUM_ACTIONS) or not obs["action_mask"][chosen]:
                name = "not an action id" if chosen is None else _describe(chosen)
                raise ValueError(
                    f"agent {self._agents[seat]!r} at seat {seat} chose {action!r} ({name}), "
                    f"not a legal action in phase {aec.game.phase.name}: legal {np.flatnonzero(obs['action_mask']).tolist()}"
                )
            aec.step(chosen)
            earned += float(aec.rewards[self._reward_agent])
            self._take_round_result()

    def _take_round_result(self) -> None:
        """Remember a round result the last AEC step produced (infos keep it until the next round ends)."""
        result = self._aec.infos[self._reward_agent].get("round_result")
        if result is not None and result is not self._seen_result:
            self._seen_result = self._round_result = result

    def _episode_over(self) -> tuple[bool, bool]:
        aec = self._aec
        if not self._done:
            return False, False
        truncated = all(aec.truncations.values())
        return not truncated, truncated

    def _observation(self) -> np.ndarray:
        return self._aec.observe(self._aec.possible_agents[self._acting])["observation"]

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"seat": self._acting, "action_mask": self.action_masks()}
        if self._round_result is not None:
            info["round_result"] = self._round_result
        if self._done:
            game = self._aec.game
            info["final_scores"] = list(game.scores)
        return info


_OWN_KEYWORDS = ("seat", "others", "team", "rules", "episode", "reward", "illegal_reward", "render_mode")


def _rules_config(rules: RulesConfig | Mapping[str, Any] | None, fields: dict[str, Any]) -> RulesConfig:
    unknown = set(fields) - set(RulesConfig.field_names())
    if unknown:  # an unknown keyword argument: TypeError, as Python (and TorchRL's GymEnv retry) expects
        raise unexpected_keywords("PassCutRunEnv", unknown, [*_OWN_KEYWORDS, *RulesConfig.field_names()])
    if rules is None:
        return RulesConfig(**fields)
    if isinstance(rules, RulesConfig):
        base = rules.to_dict()
    elif isinstance(rules, Mapping):
        check_field_names(rules, "rules")  # unknown keys are a bad value of the known keyword rules=: ValueError
        base = dict(rules)
    else:
        raise ValueError(f"rules must be a RulesConfig or a mapping of its fields, not {type(rules).__name__}")
    both = sorted(set(base) & set(fields))
    if both:
        raise ValueError(f"rules field(s) {both} given both in rules= and as keyword arguments: give each once")
    return RulesConfig(**{**base, **fields})


_SEAT_AGENT = "an agent object with act(obs) -> int and reset(seed) (e.g. agents.make_agent('random'))"


def _other_agents(others: Any, seats: tuple[int, ...], rules: RulesConfig) -> dict[int, SeatAgent]:
    """``{seat: agent}`` for the other seats from what ``others=`` was given (see the class docstring)."""
    if others is None:
        raise ValueError(f"others is required: give {_SEAT_AGENT}, one per other seat {list(seats)}, or a "
                         "{seat: agent} dict; for agent specs use gymnasium.make('PassCutRun-v0', others=['random'] * 3)")
    if callable(others) and not is_seat_agent(others):  # a factory (other_seats, rules) -> {seat: agent}
        others = others(seats, rules)
        if not isinstance(others, Mapping):
            raise ValueError(f"the others factory returned {type(others).__name__}, not a {{seat: agent}} mapping")
    agents = per_seat(others, seats, name="others")
    for s, agent in agents.items():
        if isinstance(agent, str):
            raise ValueError(
                f"others[{s}] = {agent!r} is not allowed: PassCutRunEnv takes agent objects, not spec strings; "
                f"use gymnasium.make('PassCutRun-v0', others=...) (the agents package resolves specs) "
                f"or agents.make_agents(specs, seats)")
        if not is_seat_agent(agent):
            raise ValueError(f"others[{s}] = {agent!r} is not allowed: allowed {_SEAT_AGENT}")
    return agents


def _describe(action: int) -> str:
    try:
        return describe_action(action)
    except ValueError:
        return "out of range"


def register() -> None:
    """Register :data:`ENV_ID` with Gymnasium at :data:`GYM_ENTRY_POINT` (``import pcr_env`` does it; idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=GYM_ENTRY_POINT)


__all__ = ["ENV_ID", "GYM_ENTRY_POINT", "PassCutRunEnv", "SeatAgent", "SeatAgents", "register"]
