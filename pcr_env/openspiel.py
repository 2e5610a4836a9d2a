"""Pass Cut Run as an OpenSpiel game: ``import pcr_env.openspiel`` registers ``"python_pass_cut_run"``.

>>> import pyspiel
>>> import pcr_env.openspiel
>>> game = pyspiel.load_game("python_pass_cut_run", {"episode": "round"})
>>> game.num_players(), game.num_distinct_actions(), game.observation_tensor_size()
(4, 70, 797)

The game card
-------------
==========================  =====================================================================
short name                  ``python_pass_cut_run`` (OpenSpiel's pattern: ``python/games/kuhn_poker.py``)
dynamics                    sequential: one seat acts at a time (the passing picks too, R3.1, as in the AEC env)
chance                      explicit stochastic: round 1's dealer (``first_dealer=-1``: one chance node, n
                            outcomes, R2.1), then every deal card by card (R2.2) as OpenSpiel's bridge and
                            hearts deal: one chance node per card, uniform over the cards not yet dealt
                            (at most 52 outcomes). The last card of a four-player deal is forced and the
                            six-player kitty is what is left, so they are no chance nodes. Redeals (R4.4)
                            and the next round (R2.1) are new deals.
information                 imperfect: the other hands, their passes and the kitty are hidden (RULES.md,
                            "What no player sees")
utility                     zero-sum: partners get the same return (R1.2) and the two teams opposite ones,
                            so the returns of every state sum to 0 (``utility_sum`` 0)
reward model                ``reward="score_diff"`` with ``episode="game"``: **rewards** (each round's
                            score difference is paid when the round is scored, as in ``raw_env``; the
                            return is the game's final score difference). Where the only reward is paid
                            at the end (``episode="round"``, or ``reward="win"``: +1/-1/0 when the game
                            ends) the game declares **terminal** rewards, so algorithms that need them
                            (OpenSpiel's MCTS) accept it. The type is chosen per parameter set.
actions                     ``Discrete(70)`` of :mod:`pcr_env.actions` (0-51 cards, 52-64 bids, 65 no bid,
                            66-69 trump); chance outcomes 0-51 are cards (0..n-1 seats for the dealer)
observation tensor          the AEC env's observation of that seat (:mod:`pcr_env.observation`), same size
                            (797, six players 1041) and the same named slices (``observer.dict``)
information-state tensor    the same tensor. It is the round's whole public record plus the seat's own
                            cards; it is **not perfect recall**: the order of past tricks, an auction's
                            order of bids and earlier rounds (beyond the scores) are not kept. During a
                            deal (chance nodes) both tensors are zero
strings                     readable views of the same content (relative seats ``+k`` = k seats to the left)
``resample_from_infostate``  :mod:`pcr_env.worlds`' sampler, given only the seat's observation and the
                            public move counts; it never reads the hidden cards
==========================  =====================================================================

Parameters (OpenSpiel parameters, derived from and checked by :class:`~pcr_env.config.RulesConfig`): every rules
field under its own name and default (``players`` (4 or 6), ``passing``, ``double_run_bonus``, ``bidding``
(``"single"``/``"auction"``), ``min_bid`` (0 = the default majority), ``target_score``, ``max_rounds``,
``max_redeals``, ``first_dealer`` (-1 = drawn by chance)), and the environment's ``episode`` (``"game"``/``"round"``)
and ``reward`` (``"score_diff"``/``"win"``).

The rules are the engine's (:mod:`pcr_env.engine`): a state holds one game row and every move is
:func:`pcr_env.engine.step_game`, the function ``raw_env`` and ``VectorEnv`` step. Nothing here
decides a rule. OpenSpiel is optional (``pip install 'pcr[openspiel]'``); this module imports
neither :mod:`agents` nor torch.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as err:  # the optional extra
    raise ImportError("pcr_env.openspiel needs OpenSpiel: pip install 'pcr[openspiel]' (open-spiel==2.0.2)") from err

from . import engine as E
from .actions import NUM_ACTIONS, describe_action
from .cards import NUM_CARDS, card_str, popcount
from .config import RulesConfig
from .engine import PASS_SIZE, Phase
from .observation import decode_observation, encode_row, observation_layout, observation_offsets, observation_size
from .worlds import WorldSampler

SHORT_NAME = "python_pass_cut_run"


def params_from_rules(rules: RulesConfig, episode: str = "game", reward: str = "score_diff") -> dict[str, Any]:
    """OpenSpiel parameters of ``rules``: every :class:`RulesConfig` field as its plain value
    (:meth:`RulesConfig.to_plain`: ``min_bid`` 0 = the majority, ``first_dealer`` -1 = drawn), then the environment's
    ``episode`` and ``reward`` (the inverse of :func:`rules_from_params`)."""
    return {**rules.to_plain(), "episode": episode, "reward": reward}


DEFAULT_PARAMS: dict[str, Any] = params_from_rules(RulesConfig())
"""The parameters and their defaults: the rules of record, a whole game, the score difference."""


def rules_from_params(params: dict[str, Any]) -> RulesConfig:
    """The :class:`RulesConfig` of OpenSpiel parameters (:meth:`RulesConfig.from_plain`; ``episode`` and ``reward``
    are not rules)."""
    return RulesConfig.from_plain(params)


def _game_type(reward_model: Any) -> Any:
    return pyspiel.GameType(
        short_name=SHORT_NAME,
        long_name="Pass Cut Run (pcr)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=reward_model,
        max_num_players=6,
        min_num_players=4,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=DEFAULT_PARAMS,
    )


def _max_round_diff(rules: RulesConfig) -> int:
    """Largest round score difference: every trick in one run (R7.2) against a failed maximum bid (R8.2)."""
    tricks = rules.num_tricks
    return tricks + int(E.run_bonus(tricks, rules.double_run_bonus)) + tricks


def _max_moves(rules: RulesConfig, episode: str) -> int:
    """Bound on the decisions of an episode: the throw-ins a round may have (R4.4) plus one full round."""
    n, tricks = rules.players, rules.num_tricks
    passes = n * PASS_SIZE if rules.passing else 0
    bids = n + (tricks - rules.min_bid_value + 1 if rules.bidding == "auction" else 0)
    full = passes + bids + 1 + rules.kitty_size + n * tricks
    per_round = (rules.max_redeals + 1) * (passes + n) + full
    return per_round * (1 if episode == "round" else rules.max_rounds)


class PassCutRunGame(pyspiel.Game):
    """The game: its parameters, its rules as the engine reads them, and a factory of initial states."""

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**DEFAULT_PARAMS, **(params or {})}
        self.rules = rules_from_params(params)
        self.episode, self.reward_kind = params["episode"], params["reward"]
        from .config import check_episode_reward

        check_episode_reward(self.episode, self.reward_kind)
        terminal = self.episode == "round" or self.reward_kind == "win"
        reward_model = pyspiel.GameType.RewardModel.TERMINAL if terminal else pyspiel.GameType.RewardModel.REWARDS
        bound = 1 if self.reward_kind == "win" else _max_round_diff(self.rules) * (1 if self.episode == "round" else self.rules.max_rounds)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=self.rules.players,
            min_utility=-float(bound),
            max_utility=float(bound),
            utility_sum=0.0,
            max_game_length=_max_moves(self.rules, self.episode),
        )
        super().__init__(_game_type(reward_model), info, params)
        self.cfg = E.config_array(self.rules, self.episode, self.reward_kind)
        self.offsets = observation_offsets(self.rules.players)
        self.samplers: OrderedDict = OrderedDict()  # world samplers of recent information states (their tables)

    def new_initial_state(self) -> "PassCutRunState":
        return PassCutRunState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> "PassCutRunObserver":
        return PassCutRunObserver(self, iig_obs_type, params)

    def state_from_world(
        self, world: E.GameState, picks: int | None = None, discards_done: int | None = None, returns: Any = None
    ) -> "PassCutRunState":
        """A state at the position ``world`` (a complete :class:`~pcr_env.engine.GameState`, e.g. a sampled world).

        ``picks`` / ``discards_done`` are the public move counts of the round (default: counted in ``world``),
        ``returns`` what each seat has earned so far (default 0).
        """
        state = PassCutRunState(self)
        E.to_row(world, state._S[0])
        state._dealer_drawn = True
        state._picks = (
            3 * world.pass_done + popcount(world.passed[world.current])
            if picks is None and world.phase == Phase.PASS and world.current >= 0
            else (picks or 0)
        )
        state._discards_done = popcount(world.discards) if discards_done is None else discards_done
        if returns is not None:
            state._returns[:] = returns
        state._terminal = world.phase == Phase.GAME_OVER or (self.episode == "round" and world.phase == Phase.ROUND_END)
        return state

    def world_sampler(self, obs: dict[str, np.ndarray], facts: dict[str, int]) -> WorldSampler:
        """The :class:`~pcr_env.worlds.WorldSampler` of one seat's view, built once per information state."""
        key = (obs["observation"].tobytes(), obs["action_mask"].tobytes(), tuple(sorted(facts.items())))
        sampler = self.samplers.get(key)
        if sampler is None:
            sampler = self.samplers[key] = WorldSampler(obs, self.rules, **facts)
            if len(self.samplers) > 64:
                self.samplers.popitem(last=False)
        return sampler


class PassCutRunState(pyspiel.State):
    """One game in progress: a game row of the engine, the deal under way, the returns so far."""

    def __init__(self, game: PassCutRunGame):
        super().__init__(game)
        n = game.rules.players
        self._S = np.zeros((1, E.STATE_COLUMNS), np.int64)
        self._order: list[int] = []  # cards dealt so far in the deal under way (the chance outcomes)
        self._dealer_drawn = game.rules.first_dealer != "random"
        self._picks = 0  # pass picks made this round: a public count of moves (which cards is private)
        self._discards_done = 0  # the declarer's discards so far (R9.3): public count
        self._returns = np.zeros(n)
        self._rewards = np.zeros(n)
        self._terminal = False
        if self._dealer_drawn:
            self._start(int(game.rules.first_dealer))

    @property
    def _game_ref(self) -> PassCutRunGame:
        # The game is not kept in the state's dict: clone() deep-copies that dict, and a copied game would lose its rules.
        return self.get_game()

    def _start(self, dealer: int) -> None:
        """R2.1: an empty game with its dealer; the first deal follows by chance."""
        E.start_game(self._S, 0, dealer, 1, 0, 0)
        self._S[0, E.PHASE], self._S[0, E.CURRENT] = E.PH_DEAL, -1

    # ------------------------------------------------------------------ OpenSpiel API
    def current_player(self) -> int:
        if self._terminal:
            return pyspiel.PlayerId.TERMINAL
        if self._dealing():
            return pyspiel.PlayerId.CHANCE
        return int(self._S[0, E.CURRENT])

    def _dealing(self) -> bool:
        return not self._dealer_drawn or self._S[0, E.PHASE] == E.PH_DEAL

    def _legal_actions(self, player: int) -> list[int]:
        mask = np.zeros(NUM_ACTIONS, np.int8)
        E.legal_mask_row(self._S, 0, self._game_ref.cfg, mask)
        return np.flatnonzero(mask).tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self._dealer_drawn:
            n = self._game_ref.rules.players
            return [(s, 1.0 / n) for s in range(n)]
        dealt = set(self._order)
        left = [c for c in range(NUM_CARDS) if c not in dealt]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        if self._dealing():
            self._deal_card(int(action))
            return
        game = self._game_ref
        phase = self._S[0, E.PHASE]
        self._picks += phase == E.PH_PASS
        self._discards_done += phase == E.PH_DISCARD
        step_rewards = np.zeros((1, game.rules.players), np.float32)
        record = np.zeros((1, E.ROUND_INFO_SIZE), np.int64)
        events = E.step_game(self._S, E.NO_STREAM, 0, int(action), game.cfg, step_rewards, record)
        self._rewards = step_rewards[0].astype(np.float64)
        self._returns += self._rewards
        self._terminal = bool(events & E.EV_FINAL)

    def _deal_card(self, outcome: int) -> None:
        """A chance outcome: round 1's dealer, or the next card of the deal (R2.2, engine.deal_order).

        ``rewards()`` stays that of the last decision: OpenSpiel sums rewards at decision nodes, so a round's
        score paid just before the next deal is counted at the first decision after it.
        """
        if not self._dealer_drawn:
            self._dealer_drawn = True
            self._start(outcome)
            return
        self._order.append(outcome)
        rules = self._game_ref.rules
        # The kitty (six players) is what is left; a four-player deal's last card is forced.
        chance_cards = rules.players * rules.hand_size if rules.kitty_size else NUM_CARDS - 1
        if len(self._order) < chance_cards:
            return
        dealt = set(self._order)
        order = self._order + [c for c in range(NUM_CARDS) if c not in dealt]
        E.deal_order(self._S, 0, self._game_ref.cfg, np.array(order, np.int64))
        self._order, self._picks, self._discards_done = [], 0, 0

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if not self._dealer_drawn:
                return f"dealer {action}"
            return f"deal {card_str(int(action))}"
        return describe_action(int(action))

    def is_terminal(self) -> bool:
        return self._terminal

    def returns(self) -> list[float]:
        return self._returns.tolist()

    def rewards(self) -> list[float]:
        return self._rewards.tolist()

    def __str__(self) -> str:
        if self._dealing():
            return f"dealing: {len(self._order)} cards dealt" + ("" if self._dealer_drawn else ", dealer to draw")
        from .render import render_text

        return render_text(E.from_row(self._S[0], self._game_ref.rules))

    # ------------------------------------------------------------------ what one seat knows
    def seat_observation(self, player: int) -> dict[str, np.ndarray]:
        """``player``'s observation dict, as ``raw_env.observe`` gives it (the mask is zeros off turn)."""
        game = self._game_ref
        vec = np.zeros(observation_size(game.rules.players), np.float32)
        mask = np.zeros(NUM_ACTIONS, np.int8)
        if not self._dealing():
            encode_row(self._S, 0, int(player), game.cfg, game.offsets, vec)
            if not self._terminal and player == self._S[0, E.CURRENT]:
                E.legal_mask_row(self._S, 0, game.cfg, mask)
        return {"observation": vec, "action_mask": mask}

    def public_facts(self, player: int) -> dict[str, int]:
        """What :mod:`pcr_env.worlds` needs beyond the observation: seat, round, turn and move counts (all public)."""
        S = self._S[0]
        facts = {"seat": int(player), "round_number": int(S[E.ROUND]), "rounds_played": int(S[E.ROUNDS_PLAYED])}
        if S[E.PHASE] == E.PH_PASS:
            facts["current"] = int(S[E.CURRENT])
            if S[E.CURRENT] != player:
                facts["current_picks"] = self._picks % PASS_SIZE  # seats pick in turn, 3 each (R3.1)
        if S[E.PHASE] == E.PH_DISCARD and S[E.DECLARER] != player:
            facts["discards_done"] = self._discards_done
        return facts

    def resample_from_infostate(self, player: int, probability_sampler: Any = None) -> "PassCutRunState":
        """A state drawn uniformly among those ``player`` cannot tell from this one (:mod:`pcr_env.worlds`).

        Reads ``player``'s observation and the public facts only. ``probability_sampler`` is OpenSpiel's
        (a callable giving uniforms; it seeds the draw), a ``numpy.random.Generator``, a seed or ``None``.
        """
        if self._dealing():
            raise ValueError("resample_from_infostate during a deal: no seat has seen its cards yet")
        rng = _generator(probability_sampler)
        sampler = self._game_ref.world_sampler(self.seat_observation(player), self.public_facts(player))
        world = sampler.sample(rng, 1)[0]
        return self._game_ref.state_from_world(world, self._picks, self._discards_done, self._returns)

    def view_string(self, player: int) -> str:
        """``player``'s observation as text (relative seats: ``+k`` sits k seats to the left)."""
        if self._dealing():
            return f"p{player} dealing ({len(self._order)} cards dealt)"
        return view_text(self.seat_observation(player)["observation"], player)


def _generator(source: Any) -> np.random.Generator:
    if isinstance(source, np.random.Generator):
        return source
    if source is None or isinstance(source, (int, np.integer)):
        return np.random.default_rng(source)
    if callable(source):  # an OpenSpiel probability sampler: three uniforms seed the draw
        return np.random.default_rng([int(float(source()) * 2**32) for _ in range(3)])
    raise TypeError(f"probability_sampler {source!r} is not a sampler: allowed a callable, a numpy Generator or a seed")


def view_text(vector: np.ndarray, player: int) -> str:
    """A readable line of one observation vector: the information-state and observation strings."""
    v = decode_observation(vector)
    n = v.players

    def seat(k: int | None) -> str:
        return "-" if k is None else ("me" if k == 0 else f"+{k}")

    def cards(cs: list[int]) -> str:
        return " ".join(card_str(c) for c in cs) or "-"

    bids = ", ".join(f"{seat(k)} {'.' if b is None else ('pass' if b == 0 else b)}" for k, b in enumerate(v.bids))
    parts = [f"p{player} {v.phase.name}", f"dealer {seat(v.dealer)}", f"pass {v.pass_direction.name.lower()}", f"hand {cards(v.hand)}"]
    if v.passed or v.received:
        parts.append(f"passed {cards(v.passed)} received {cards(v.received)}")
    if v.discarded:
        parts.append(f"discarded {cards(v.discarded)}")
    parts.append(f"bids {bids}")
    if v.contract:
        trump = "-" if v.trump is None else "CDHS"[v.trump]
        parts.append(f"contract {v.contract} by {seat(v.declarer)} trump {trump}")
    played = "; ".join(f"{seat(k)} {cards(v.played[k])}" for k in range(n) if v.played[k])
    if played:
        parts.append(f"played {played}")
    trick = " ".join(f"{seat(k)}:{card_str(c)}" for k, c in enumerate(v.trick) if c is not None)
    if trick:
        parts.append(f"trick {trick}")
    voids = " ".join(f"{seat(k)}:{''.join('CDHS'[s] for s in sorted(v.voids[k]))}" for k in range(n) if v.voids[k])
    if voids:
        parts.append(f"void {voids}")
    if v.trick_winners:
        parts.append(f"won {' '.join(seat(k) for k in v.trick_winners)}")
    run = "-" if v.run[0] is None else f"{'us' if v.run[0] == 0 else 'them'} x{v.run[1]}"  # team-relative (R7.1)
    parts.append(f"tricks us {v.team_tricks[0]} them {v.team_tricks[1]} run {run}")
    parts.append(f"score us {v.scores[0]} them {v.scores[1]} of {v.target} redeals {v.redeals}")
    return " | ".join(parts)


class PassCutRunObserver:
    """OpenSpiel's PyObserver: one flat tensor (our observation) and named views of its slices."""

    def __init__(self, game: PassCutRunGame, iig_obs_type: Any, params: Any):
        if params:
            raise ValueError(f"observation parameters are not supported: got {params}")
        if iig_obs_type is not None and iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError(
                f"observation type {iig_obs_type} is not supported: allowed the seat's own view "
                "(private_info SINGLE_PLAYER; perfect_recall either, both are the same tensor)"
            )
        layout = observation_layout(game.rules.players)
        self.tensor = np.zeros(layout.size, np.float32)
        self.dict = {name: self.tensor[s] for name, s in layout.slices.items()}

    def set_from(self, state: PassCutRunState, player: int) -> None:
        """Fill ``tensor`` (and so ``dict``) with ``player``'s observation of ``state``."""
        self.tensor[:] = state.seat_observation(player)["observation"]

    def string_from(self, state: PassCutRunState, player: int) -> str:
        return state.view_string(player)


if SHORT_NAME not in pyspiel.registered_names():
    pyspiel.register_game(_game_type(pyspiel.GameType.RewardModel.REWARDS), PassCutRunGame)

__all__ = [
    "DEFAULT_PARAMS",
    "SHORT_NAME",
    "PassCutRunGame",
    "PassCutRunObserver",
    "PassCutRunState",
    "params_from_rules",
    "rules_from_params",
    "view_text",
]
