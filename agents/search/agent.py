"""``search:<base spec>``: decision-time search with a base policy (``search:ppo:pretrained``, ``search:heuristic``).

At a decision with more than one legal action the agent

1. samples ``worlds`` complete deals consistent with its own observation (:mod:`pcr_env.worlds`;
   the engine's hidden state is never read);
2. plays every candidate action in every world, then lets the **base policy play every seat**
   to the end of the round, all ``candidates x worlds`` games in one batched engine
   (:meth:`pcr_env.vector.VectorEnv.set_games`, one ``act_batch`` call per step);
   With an ``opponent`` model (an agent object) the other team's seats play that agent in the rollouts
   instead: a best response by search to a known, frozen opponent (``evaluate.py --exploit``'s report);
3. picks the candidate with the best mean **round score difference** of its team under the real
   scoring (R7 runs and R8 contracts: the batched engine's ``score_diff`` reward at the round's
   end). Every candidate is tried on the same worlds (common random numbers), so differences
   between candidates are not drowned by the luck of the deal.

Candidates are every legal action, except in the passing phase (R3), where they are the base
policy's ``pass_candidates`` most likely picks when it exposes probabilities
(``action_probabilities``, as the PPO agent does), else its pick and the other legal cards in
rank order, up to ``pass_candidates``. Forced moves (one legal action) are played at once (:class:`agents.base.SearchingAgent`).

Budget (``worlds``, ``pass_candidates``): a decision costs about ``candidates x worlds`` round
rollouts; ``benchmarks/speed/search_cost.py`` measures milliseconds per decision for each setting.

As a distillation teacher (``warmstart.targets: values`` in ``train.py``) it gives a distribution
per decision instead of one action (:meth:`SearchAgent.action_targets`): the base policy's
probabilities re-weighted by ``exp(advantage / temperature)``, the advantage being each candidate's
mean paired difference to the base's own choice over the same worlds (in points of the round score).
A noisy small advantage moves the target a little instead of flipping a hard label.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, SearchingAgent
from pcr_env.actions import NUM_ACTIONS
from pcr_env.cards import rank_of
from pcr_env.config import RulesConfig
from pcr_env.engine import PHASE_NAMES, Phase
from pcr_env.observation import decode_observation
from pcr_env.vector import VectorEnv


class SearchAgent(SearchingAgent):
    """Base-policy rollouts over sampled worlds at every decision (see the module docstring)."""

    name = "search"

    def __init__(self, base: Agent, rules: RulesConfig | None = None, *, seed: int | None = None, worlds: int = 64,
                 pass_candidates: int = 3, phases: tuple[str, ...] = PHASE_NAMES,
                 threshold: float = 1.0, temperature: float = 1.0, source: str = "", opponent: Agent | None = None):
        self.base = base  # before BaseAgent.__init__, whose reset re-seeds the base too
        self.opponent = opponent
        super().__init__(seed)
        if not (isinstance(worlds, int) and worlds >= 1):
            raise ValueError(f"search worlds={worlds!r} is not allowed: allowed an integer >= 1")
        if not (isinstance(pass_candidates, int) and pass_candidates >= 1):
            raise ValueError(f"search pass_candidates={pass_candidates!r} is not allowed: allowed an integer >= 1")
        self.rules = rules or getattr(base, "rules", None) or RulesConfig()
        unknown = sorted(set(phases) - set(PHASE_NAMES))
        if unknown:
            raise ValueError(f"search phases {unknown} are not phases: allowed {', '.join(PHASE_NAMES)}")
        self.worlds, self.pass_candidates, self.source = worlds, pass_candidates, source
        self.phases = frozenset(Phase[p.upper()] for p in phases)
        self.threshold = float(threshold)
        if not (isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature > 0):
            raise ValueError(f"search temperature={temperature!r} is not allowed: allowed a number > 0 (points)")
        self.temperature = float(temperature)
        self._envs: dict[int, VectorEnv] = {}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.base.reset(int(self.rng.integers(2**63)))
        if self.opponent is not None:
            self.opponent.reset(int(self.rng.integers(2**63)))

    def get_state(self) -> dict[str, Any]:
        state = {**super().get_state(), "base": self.base.get_state()}
        return state if self.opponent is None else {**state, "opponent": self.opponent.get_state()}

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        if "opponent" in state and self.opponent is not None:
            self.opponent.set_state(state["opponent"])
        if "base" in state:
            self.base.set_state(state["base"])

    def __repr__(self) -> str:
        return f"SearchAgent({self.source or self.base!r}, worlds={self.worlds}, seed={self.seed!r})"

    # ------------------------------------------------------------------ acting
    def search(self, obs: dict[str, np.ndarray], legal: np.ndarray) -> int:
        blueprint, candidates = self._searched(obs, legal)
        if len(candidates) == 1:
            return int(candidates[0])
        return int(self.choose(candidates, self.rollout_values(obs, candidates), blueprint))

    def _searched(self, obs: dict[str, np.ndarray], legal: np.ndarray) -> tuple[int, np.ndarray]:
        """The base policy's choice and the candidates to search (only that choice in a phase left to the base)."""
        phase = decode_observation(obs).phase
        blueprint = int(self.base.act(obs))
        if phase not in self.phases:
            return blueprint, np.array([blueprint])
        candidates = self._candidates(obs, legal, phase, blueprint)
        if blueprint not in candidates:
            candidates = np.sort(np.append(candidates, blueprint))
        return blueprint, candidates

    def action_targets(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Distillation targets ``[B, NUM_ACTIONS]``: per decision, a distribution over the legal actions,
        ``prior(a) * exp(advantage(a) / temperature)`` normalised.

        ``prior`` is the base policy's ``action_probabilities`` (uniform over the legal actions for a base
        without them); ``advantage`` is a searched candidate's mean difference to the base's own choice over
        the same worlds (0 for an action not searched: a phase left to the base, a pass card outside the
        candidates), so where nothing is searched the target is the prior itself. A forced move gets
        probability 1. The rollouts are those :meth:`act` would run.

        >>> import numpy as np
        >>> from agents import make_agent
        >>> from pcr_env.vector import VectorEnv
        >>> obs, masks, _ = VectorEnv(1, seed=0).reset()
        >>> t = make_agent("search:heuristic", seed=0, worlds=2).action_targets(obs, masks)
        >>> bool(np.isclose(t.sum(), 1.0)) and bool((t[~masks.astype(bool)] == 0).all())
        True
        """
        obs, masks = np.asarray(obs), np.asarray(masks).astype(bool)
        out = np.zeros((len(obs), NUM_ACTIONS))
        for i, (o, m) in enumerate(zip(obs, masks)):
            legal = np.flatnonzero(m)
            if len(legal) == 1:
                out[i, legal[0]] = 1.0
                continue
            one = {"observation": o, "action_mask": m}
            blueprint, candidates = self._searched(one, legal)
            values = self.rollout_values(one, candidates) if len(candidates) > 1 else None
            # One row at a time, as the shipped run 3 was labelled: a batched forward pass rounds differently.
            out[i, legal] = self.target(legal, self.prior(o[None], m[None])[0][legal], candidates, values, blueprint)
        return out.astype(np.float32)

    def prior(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The base policy's probabilities ``[B, NUM_ACTIONS]`` (its ``action_probabilities``), or uniform over
        the legal actions for a base without them."""
        probs = getattr(self.base, "action_probabilities", None)
        if probs is not None:
            return np.asarray(probs(obs, masks), np.float64)
        masks = np.asarray(masks).astype(bool)
        return masks / masks.sum(1, keepdims=True)

    def target(self, legal: np.ndarray, prior: np.ndarray, candidates: np.ndarray, values: np.ndarray | None,
               blueprint: int, temperature: float | None = None) -> np.ndarray:
        """The distribution over ``legal`` of :meth:`action_targets`, from rollout ``values`` ``[candidates,
        worlds]`` (``None``: nothing searched) and the ``prior`` over ``legal``."""
        logits = np.log(np.maximum(np.asarray(prior, np.float64), 1e-12))
        if values is not None:
            advantage = (values - values[int(np.flatnonzero(candidates == blueprint)[0])]).mean(1)
            logits[np.searchsorted(legal, candidates)] += advantage / (self.temperature if temperature is None
                                                                       else temperature)
        p = np.exp(logits - logits.max())
        return p / p.sum()

    def choose(self, candidates: np.ndarray, values: np.ndarray, blueprint: int) -> int:
        """The candidate whose paired difference to the base policy's own choice (over the same worlds)
        has the highest mean minus ``threshold`` standard errors, if that is above 0; else the base's choice.

        Round scores vary by tens of points from world to world, so with a few dozen worlds most
        differences between candidates are noise: deviating on noise alone makes play worse (the
        first version of this agent, which took the plain argmax, lost to the heuristic).
        """
        diff = values - values[int(np.flatnonzero(candidates == blueprint)[0])]
        mean = diff.mean(1)
        se = diff.std(1, ddof=1) / np.sqrt(diff.shape[1]) if diff.shape[1] > 1 else np.zeros(len(mean))
        best = int(np.argmax(mean - self.threshold * se))
        return int(candidates[best]) if mean[best] - self.threshold * se[best] > 0 else blueprint

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)], np.int64)

    def _candidates(self, obs: dict[str, np.ndarray], legal: np.ndarray, phase: Phase, blueprint: int) -> np.ndarray:
        if phase != Phase.PASS or len(legal) <= self.pass_candidates:
            return legal
        probs = getattr(self.base, "action_probabilities", None)
        if probs is not None:
            p = np.asarray(probs(np.asarray(obs["observation"])[None], np.asarray(obs["action_mask"])[None]))[0]
            order = legal[np.argsort(-p[legal], kind="stable")]
            return np.sort(order[: self.pass_candidates])
        others = sorted((int(c) for c in legal if c != blueprint), key=rank_of)
        return np.array([blueprint, *others[: self.pass_candidates - 1]])

    def evaluate(self, obs: dict[str, np.ndarray], candidates: np.ndarray) -> np.ndarray:
        """Mean round score difference of the acting team for each candidate, over the same sampled worlds."""
        return self.rollout_values(obs, candidates).mean(1)

    def rollout_values(self, obs: dict[str, np.ndarray], candidates: np.ndarray) -> np.ndarray:
        """Round score difference of the acting team ``[candidates, worlds]``: each candidate played in
        each sampled world (the same worlds for all), then the base policy at every seat."""
        from pcr_env.worlds import sample_worlds

        worlds = sample_worlds(obs, self.rules, self.rng, self.worlds)
        seat = worlds[0].current
        n = len(candidates) * len(worlds)
        envs = self._envs.get(n)
        if envs is None:
            envs = self._envs[n] = VectorEnv(n, seed=0, episode="round", reward="score_diff", **self.rules.to_dict())
        # Reseeded from this agent's stream: a rollout's redeals (everyone passed) must not depend on the
        # games this cached env played before (a resumed run, or another worker, would play other deals).
        envs.set_games([w for _ in candidates for w in worlds], seed=int(self.rng.integers(2**63)))
        actions = np.repeat(np.asarray(candidates, np.int64), len(worlds))
        totals = np.zeros(n)
        done = np.zeros(n, bool)
        while True:
            obs_b, masks_b, seats, rewards, dones, _ = envs.step(actions)
            totals[~done] += rewards[~done, seat]
            done |= dones
            if done.all():
                break
            if not done.any() and self.opponent is None:  # the usual case: every game ends on the same step
                actions = self.base.act_batch(obs_b, masks_b)
                continue
            actions = masks_b.argmax(1).astype(np.int64)  # finished games restarted: any legal move will do
            live = np.flatnonzero(~done)
            self._rollout_actions(actions, live, obs_b, masks_b, seats, seat)
        return totals.reshape(len(candidates), len(worlds))

    def _rollout_actions(self, actions: np.ndarray, live: np.ndarray, obs: np.ndarray, masks: np.ndarray,
                         seats: np.ndarray, seat: int) -> None:
        """``actions[live]``: the base policy's, or with an ``opponent`` model the opponent's at the other team's
        seats (the team of a seat is ``seat % 2``: partners sit opposite)."""
        if self.opponent is None:
            actions[live] = self.base.act_batch(obs[live], masks[live])
            return
        theirs = seats[live] % 2 != seat % 2
        for rows, agent in ((live[~theirs], self.base), (live[theirs], self.opponent)):
            if len(rows):
                actions[rows] = agent.act_batch(obs[rows], masks[rows])


__all__ = ["SearchAgent"]
