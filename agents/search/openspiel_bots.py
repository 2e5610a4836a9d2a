"""``openspiel:BOT``: OpenSpiel's own search bots playing through our environments (``openspiel`` extra).

=====================  ==========================================================================
spec                   bot
=====================  ==========================================================================
``openspiel:ismcts``   OpenSpiel's IS-MCTS (``open_spiel.python.algorithms.ismcts.ISMCTSBot``, Cowling et al.
                       2012) with random rollouts (``mcts.RandomRolloutEvaluator``); every simulation starts
                       from a world drawn by :mod:`pcr_env.worlds` (the bot's resampler)
``openspiel:mcts``     OpenSpiel's MCTS (``mcts.MCTSBot``, UCT, random rollouts) run on ``worlds`` sampled
                       worlds, each searched as if its cards were seen (determinized MCTS); the action
                       explored most over all worlds is played
=====================  ==========================================================================

Options follow the bot, separated by ``:`` or ``,`` (``openspiel:ismcts:sims=200,uct_c=1.5``) or come as
keyword arguments of :func:`agents.make_agent`:

* ``sims``: simulations per decision (ismcts, default 200) or per world (mcts, default 50);
* ``uct_c``: the UCT exploration constant (default 2.0; returns are round score differences, tens of points);
* ``rollouts``: random rollouts per leaf (default 1);
* ``worlds``: ismcts: distinct root worlds to draw (-1, the default: a new one every simulation);
  mcts: worlds searched (default 4).

An unknown option raises ``TypeError`` naming it and the allowed ones; a bad value ``ValueError`` naming the
option, the value and what is allowed.

What the bot knows: only its observation dict, like every agent. At each decision it rebuilds an OpenSpiel
state (:mod:`pcr_env.openspiel`, one-round episodes: a move is worth the round's score difference, as for
:mod:`agents.search.agent`) from one world of the sampler, with itself at seat 0 (observations are
ego-centric), and the search draws every other world from the same sampler: no true hidden card reaches it.
Forced moves (one legal action) are played without a search (:class:`agents.base.SearchingAgent`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from agents.base import SearchingAgent
from agents.spec_options import split_options  # the one option syntax of specs
from pcr_env.actions import NUM_ACTIONS
from pcr_env.config import RulesConfig

# bot -> option -> (default, kind, allowed text); "count" = integer >= 1, "worlds" = -1 or >= 1, "positive" = number > 0.
BOTS: dict[str, dict[str, tuple[Any, str, str]]] = {
    "ismcts": {
        "sims": (200, "count", "an integer >= 1"),
        "uct_c": (2.0, "positive", "a number > 0"),
        "rollouts": (1, "count", "an integer >= 1"),
        "worlds": (-1, "worlds", "-1 (a new world every simulation) or an integer >= 1"),
    },
    "mcts": {
        "sims": (50, "count", "an integer >= 1"),
        "uct_c": (2.0, "positive", "a number > 0"),
        "rollouts": (1, "count", "an integer >= 1"),
        "worlds": (4, "count", "an integer >= 1"),
    },
}


def _pyspiel_modules() -> tuple[Any, Any, Any]:
    """``(pcr_env.openspiel, ismcts, mcts)``, or an ImportError that says how to install OpenSpiel."""
    try:
        from open_spiel.python.algorithms import ismcts, mcts

        import pcr_env.openspiel as game_module
    except ImportError as err:
        raise ImportError("agent spec 'openspiel:...' needs OpenSpiel: pip install 'pcr[openspiel]' (open-spiel==2.0.2)") from err
    return game_module, ismcts, mcts


@functools.lru_cache(maxsize=16)
def _round_game(rules: RulesConfig) -> Any:
    """The OpenSpiel game a bot searches: the table's rules, one-round episodes, score-difference returns."""
    game_module, _, _ = _pyspiel_modules()
    import pyspiel

    return pyspiel.load_game(game_module.SHORT_NAME, game_module.params_from_rules(rules, "round", "score_diff"))


def parse_bot(arg: str) -> tuple[str, dict[str, str]]:
    """``"ismcts:sims=200,uct_c=1.5"`` -> ``("ismcts", {"sims": "200", "uct_c": "1.5"})`` (values still text)."""
    bot, _, rest = arg.partition(":")
    return bot, split_options(rest, spec=f"openspiel:{arg}", example="sims=200,uct_c=1.5")


def check_options(bot: str, options: dict[str, Any]) -> dict[str, Any]:
    """Every option of ``bot`` with its value checked (text from a spec is converted); defaults filled in."""
    if bot not in BOTS:
        raise ValueError(f"openspiel bot {bot!r} is not allowed: allowed {', '.join(map(repr, BOTS))}")
    allowed = BOTS[bot]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"openspiel:{bot} got an unexpected option {unknown[0]!r}: allowed {', '.join(allowed)}")
    out = {}
    for name, (default, kind, text) in allowed.items():
        out[name] = _value(bot, name, options.get(name, default), kind, text)
    return out


def _value(bot: str, name: str, value: Any, kind: str, text: str) -> Any:
    raw = value
    try:
        if isinstance(value, str):
            value = float(value) if kind == "positive" else int(value)
    except ValueError:
        value = None
    if isinstance(value, bool) or value is None:
        ok = False
    elif kind == "positive":
        ok = isinstance(value, (int, float)) and value > 0
    elif kind == "worlds":
        ok = isinstance(value, (int, np.integer)) and (value == -1 or value >= 1)
    else:
        ok = isinstance(value, (int, np.integer)) and value >= 1
    if not ok:
        raise ValueError(f"openspiel:{bot} option {name!r} = {raw!r} is not allowed: allowed {text}")
    return float(value) if kind == "positive" else int(value)


class OpenSpielAgent(SearchingAgent):
    """One of OpenSpiel's search bots as an agent (see the module docstring)."""

    def __init__(self, bot: str = "ismcts", rules: RulesConfig | None = None, seed: int | None = None, **options: Any):
        self.options = check_options(bot, options)
        super().__init__(seed)
        self.bot, self.rules = bot, rules or RulesConfig()
        self.game = _round_game(self.rules)
        _, self._ismcts, self._mcts = _pyspiel_modules()
        shown = ",".join(f"{k}={v}" for k, v in options.items())
        self.name = f"openspiel:{bot}" + (f":{shown}" if shown else "")

    def __repr__(self) -> str:
        return f"OpenSpielAgent({self.name!r}, seed={self.seed!r})"

    def search(self, obs: dict[str, np.ndarray], legal: np.ndarray) -> int:
        obs = {"observation": np.asarray(obs["observation"], np.float32), "action_mask": np.asarray(obs["action_mask"], np.int8)}
        seed = int(self.rng.integers(2**31 - 1))
        action = self._ismcts_action(obs, seed) if self.bot == "ismcts" else self._mcts_action(obs, seed)
        if action not in legal:
            raise RuntimeError(f"{self.name} chose {action}, not a legal action of {legal.tolist()}")
        return action

    def root_state(self, obs: dict[str, np.ndarray], rng: np.random.Generator) -> Any:
        """An OpenSpiel state this seat cannot tell from the table: one sampled world, the seat at 0."""
        world = self.game.world_sampler(obs, {}).sample(rng, 1)[0]
        return self.game.state_from_world(world)

    def _evaluator(self, seed: int) -> Any:
        return self._mcts.RandomRolloutEvaluator(self.options["rollouts"], np.random.RandomState(seed))

    def _ismcts_action(self, obs: dict[str, np.ndarray], seed: int) -> int:
        rng = np.random.default_rng(seed)
        bot = self._ismcts.ISMCTSBot(
            self.game,
            self._evaluator(seed),
            self.options["uct_c"],
            self.options["sims"],
            max_world_samples=self.options["worlds"],
            random_state=np.random.RandomState(seed + 1),
        )
        # The resampler draws from the world sampler with the searcher's own generator: reproducible per seed.
        bot.set_resampler(lambda state, player: state.resample_from_infostate(player, rng))
        return int(bot.step(self.root_state(obs, rng)))

    def _mcts_action(self, obs: dict[str, np.ndarray], seed: int) -> int:
        rng = np.random.default_rng(seed)
        bot = self._mcts.MCTSBot(
            self.game,
            self.options["uct_c"],
            self.options["sims"],
            self._evaluator(seed),
            solve=False,
            random_state=np.random.RandomState(seed + 1),
        )
        visits = np.zeros(NUM_ACTIONS)
        for world in self.game.world_sampler(obs, {}).sample(rng, self.options["worlds"]):
            root = bot.mcts_search(self.game.state_from_world(world))
            for child in root.children:
                visits[child.action] += child.explore_count
        legal = np.flatnonzero(obs["action_mask"])
        best = legal[visits[legal] == visits[legal].max()]
        return int(best[rng.integers(len(best))]) if len(best) > 1 else int(best[0])


def make_openspiel_agent(arg: str, seed: int | None = None, rules: RulesConfig | None = None, **kwargs: Any) -> OpenSpielAgent:
    """The agent of spec ``openspiel:ARG`` (``ARG`` = ``BOT[:NAME=VALUE,...]``); keyword options override the spec's."""
    bot, options = parse_bot(arg)
    return OpenSpielAgent(bot, rules=rules, seed=seed, **{**options, **kwargs})


__all__ = ["BOTS", "OpenSpielAgent", "check_options", "make_openspiel_agent", "parse_bot"]
