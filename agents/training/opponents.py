"""Opponents for self-play: the mix of opponent kinds and a pool of frozen snapshots.

Every game of a training batch has an opponent, drawn again whenever a
trajectory ends (see ``train.py``): ``"self"`` (both teams are the current
network and both produce training data), ``"snapshot"`` (a frozen past version
of the network from :class:`OpponentPool`) or any agent spec accepted by
:func:`agents.make_agent` (``"heuristic"``, ``"random"``, ``"ppo:PATH"``).

The pool is sampled by prioritised fictitious self-play (AlphaStar's PFSP with
the "hard" weighting): snapshot ``j`` is drawn with weight ``(1 - p_j) ** power``
where ``p_j`` is the learner's estimated probability of winning a round against
it (ties count one half, Laplace prior), so the learner meets the snapshots it
struggles against more often; ``power = 0`` is uniform.

:meth:`OpponentPool.act_batch` plays every snapshot's rows of a step in one batched forward
pass over the pool's stacked weights (``torch.baddbmm``; card actors through
:class:`agents.ppo.card_net.StackedCardActors`, their features computed once for all rows): ten small
forward passes per step cost ten times the per-call overhead, which grew the rollout time by about a
third once the pool was full. Each snapshot still samples with its own random stream.

>>> import numpy as np
>>> pool = OpponentPool(capacity=2, pfsp_power=2.0)
>>> pool.add(object(), iteration=0), pool.add(object(), iteration=5)  # slots
(0, 1)
>>> pool.record(0, wins=9.0, rounds=10.0); pool.record(1, wins=1.0, rounds=10.0)
>>> pool.weights().round(3).tolist()   # snapshot 1 beats the learner: drawn far more often
[0.038, 0.962]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from agents import make_agent
from agents.ppo.agent import PPOAgent
from agents.ppo.card_features import card_inputs
from agents.ppo.card_net import StackedCardActors, stacked_linear
from agents.ppo.checkpoint import make_checkpoint
from agents.ppo.mlp import MlpLayers, mlp_layers
from agents.ppo.network import MASKED_LOGIT, ActorCritic, log_probs, sample_actions
from agents.training.config import SelfPlayConfig
from pcr_env.config import RulesConfig
from pcr_env.seating import derive_seed as stream_seed

Layer = tuple[torch.Tensor, torch.Tensor, Callable[[torch.Tensor], torch.Tensor] | None]
"""One stacked MLP layer of :meth:`OpponentPool._stacked`: weights, biases, the activation after it (or none)."""


class OpponentPool:
    """Up to ``capacity`` frozen policies (the newest replaces the oldest) with per-slot win statistics.

    ``dtype`` is the precision of :meth:`act_batch`'s matrix products: the trainer passes its own
    (``Config.precision``), so snapshots play in the precision the learner's rollouts use.
    """

    def __init__(self, capacity: int, pfsp_power: float, dtype: torch.dtype = torch.float32):
        self.capacity, self.pfsp_power, self.dtype = capacity, pfsp_power, dtype
        self.agents: list[Any] = []
        self.iterations: list[int] = []
        self.wins = np.zeros(capacity, np.float64)
        self.rounds = np.zeros(capacity, np.float64)
        self.next_slot = 0
        self._stack: StackedCardActors | list[Layer] | None = None

    def __len__(self) -> int:
        return len(self.agents)

    def clear(self) -> None:
        """Empty the pool (its capacity and sampling stay)."""
        self.agents, self.iterations, self._stack = [], [], None
        self.wins[:] = self.rounds[:] = 0.0
        self.next_slot = 0

    def add(self, agent: Any, iteration: int) -> int:
        """Store ``agent`` (a frozen policy); returns its slot. Statistics of a reused slot restart."""
        slot = self.next_slot
        if slot == len(self.agents):
            self.agents.append(agent)
            self.iterations.append(iteration)
        else:
            self.agents[slot], self.iterations[slot] = agent, iteration
        self.wins[slot] = self.rounds[slot] = 0.0
        self.next_slot = (slot + 1) % self.capacity
        self._stack = None  # rebuilt at the next act_batch
        return slot

    def act_batch(self, slots: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for rows ``obs``/``masks``, row ``i`` played by the snapshot in ``slots[i]``.

        The same policies and random streams as ``self.agents[slot].act_batch`` on each slot's rows
        (in float32 the logits agree to float rounding), computed in one batched pass when every
        snapshot is a CPU :class:`PPOAgent` with the same actor shape (plain MLP or card actor, whose
        features are computed once for all rows); otherwise slot by slot.
        """
        slots = np.asarray(slots)
        actions = np.empty(len(slots), np.int64)
        present = np.unique(slots)
        stack = self._stacked()
        if stack is None:
            for slot in present:
                rows = np.flatnonzero(slots == slot)
                actions[rows] = self.agents[slot].act_batch(obs[rows], masks[rows])
            return actions
        # Rows grouped by slot into zero-padded [slots, widest group, columns] blocks.
        order = np.argsort(slots, kind="stable")
        counts = np.bincount(slots, minlength=len(self.agents))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        position = np.arange(len(slots)) - np.repeat(starts, counts)  # rank of each sorted row in its group
        sorted_slots = torch.from_numpy(slots[order])
        sorted_pos = torch.from_numpy(position)

        def block(x: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
            out = torch.zeros(len(self.agents), int(counts.max()), x.shape[1], dtype=dtype)
            out[sorted_slots, sorted_pos] = torch.as_tensor(x[order]).to(dtype)
            return out

        with torch.no_grad():
            if isinstance(stack, StackedCardActors):
                out = stack(block(obs, torch.float32), block(card_inputs(obs, stack.players), torch.float32))
            else:
                out = block(obs, self.dtype)
                for weight, bias, activation in stack:
                    out = torch.baddbmm(bias, out, weight)
                    if activation is not None:
                        out = activation(out)
            logits = out[sorted_slots, sorted_pos].float().masked_fill(
                ~torch.as_tensor(masks[order], dtype=torch.bool), MASKED_LOGIT)
            sorted_rows = slots[order]
            for slot in present:  # each snapshot chooses as its own act_batch does, with its own stream
                sel = np.flatnonzero(sorted_rows == slot)
                agent = self.agents[slot]
                group = logits[sel]
                chosen = group.argmax(-1) if agent.greedy else sample_actions(log_probs(group), agent.generator)
                actions[order[sel]] = chosen.numpy()
        return actions

    def _stacked(self) -> StackedCardActors | list[Layer] | None:
        """The snapshots' actors as one batched pass: a :class:`StackedCardActors`, or per MLP layer the weights
        ``[slots, in, out]``, biases ``[slots, 1, out]`` and the activation after it; ``None`` if the snapshots are
        not all CPU PPOAgents of one actor shape whose layers are known (:func:`agents.ppo.mlp.mlp_layers`,
        :func:`agents.ppo.card_net.card_actor_layers`)."""
        if self._stack is not None:
            return self._stack
        agents = self.agents
        if not agents or not all(isinstance(a, PPOAgent) and a.device.type == "cpu" for a in agents):
            return None
        actors = [a.model.actor for a in agents]
        if StackedCardActors.fits(actors):
            self._stack = StackedCardActors(actors, self.dtype)
            return self._stack
        plain = [mlp_layers(actor) for actor in actors]
        if any(each is None for each in plain) or not _one_shape(plain):
            return None
        activation, depth = plain[0].activation.function, len(plain[0].linears)
        layers = []
        for i, linears in enumerate(zip(*(each.linears for each in plain))):  # layer i of every snapshot
            layers.append((*stacked_linear(list(linears), self.dtype), activation if i < depth - 1 else None))
        self._stack = layers
        return layers

    def win_rates(self) -> np.ndarray:
        """Learner's estimated round-win probability against each stored snapshot."""
        n = len(self.agents)
        return (self.wins[:n] + 1.0) / (self.rounds[:n] + 2.0)

    def weights(self) -> np.ndarray:
        """PFSP sampling probabilities of the stored snapshots."""
        w = (1.0 - self.win_rates()) ** self.pfsp_power
        return w / w.sum()

    def sample(self, rng: np.random.Generator) -> int:
        if not self.agents:
            raise ValueError("the snapshot pool is empty")
        return int(rng.choice(len(self.agents), p=self.weights()))

    def record(self, slot: int, wins: float, rounds: float) -> None:
        """Add results against slot ``slot`` (``wins`` counts a tie as one half)."""
        self.wins[slot] += wins
        self.rounds[slot] += rounds

    def state_dict(self) -> dict[str, Any]:
        """The snapshots' weights, their iterations and win statistics (the same on every worker)."""
        return {"models": [a.model.state_dict() for a in self.agents], "iterations": list(self.iterations),
                "wins": self.wins.tolist(), "rounds": self.rounds.tolist(), "next_slot": self.next_slot}

    def load_state_dict(self, state: dict[str, Any], make_snapshot: Callable[[], Any]) -> None:
        """Refill the pool from :meth:`state_dict`; ``make_snapshot()`` gives an agent to load each model into."""
        self.agents, self.iterations, self._stack = [], [], None
        for weights, iteration in zip(state["models"], state["iterations"]):
            agent = make_snapshot()
            agent.model.load_state_dict(weights)
            self.agents.append(agent)
            self.iterations.append(int(iteration))
        self.wins[:], self.rounds[:] = state["wins"], state["rounds"]
        self.next_slot = int(state["next_slot"])

    def stream_states(self) -> list[Any]:
        """Each snapshot's random stream (per worker: each worker's copies played other games)."""
        return [a.get_state() for a in self.agents]

    def set_stream_states(self, states: list[Any]) -> None:
        for agent, state in zip(self.agents, states):
            agent.set_state(state)


def _one_shape(plain: list[MlpLayers]) -> bool:
    """Whether plain MLPs have the same activation and linear layers of the same shapes (so they stack)."""
    def shape(each: MlpLayers) -> list[tuple[int, ...]]:
        return [tuple(linear.weight.shape) for linear in each.linears]

    return all(each.activation is plain[0].activation and shape(each) == shape(plain[0]) for each in plain)


def round_outcome(learner_score: float, opponent_score: float) -> float:
    """1 for a round the learner's team outscored, 0.5 for a tie, 0 for a loss."""
    return 1.0 if learner_score > opponent_score else 0.5 if learner_score == opponent_score else 0.0


SELF = 0
"""Index of ``"self"`` in :attr:`Opponents.names` (the pools' kinds follow it, then the agent specs)."""


class Opponents:
    """Who plays the seats the learner does not, per game of one worker.

    ``mix`` is ``selfplay.opponents`` (kind -> probability), ``agents`` the agent objects of its
    agent-spec kinds, ``pools`` the frozen-network pools by kind (``"snapshot"``; a league adds
    ``"exploiter"`` and ``"main"``, :mod:`agents.training.league`). Game ``g`` is played against
    ``names[kind[g]]``: ``"self"`` (the learner holds every seat), a pool's kind (its slot ``slot[g]``)
    or an agent spec; the learner's team is ``learner_team[g]``. A game is drawn again whenever a
    trajectory ends; a pool kind is self-play while its pool is empty.
    """

    def __init__(self, mix: dict[str, float], agents: dict[str, Any], n_games: int,
                 pools: dict[str, OpponentPool] | None = None):
        self.agents = dict(agents)
        self.pools = dict(pools) if pools is not None else {"snapshot": OpponentPool(1, 0.0)}
        self.names = ["self", *self.pools, *self.agents]
        self.use_mix(mix)
        self.kind = np.full(n_games, SELF, np.int64)
        self.slot = np.full(n_games, -1, np.int64)
        self.learner_team = np.zeros(n_games, np.int64)

    @classmethod
    def from_config(cls, selfplay: SelfPlayConfig, rules: RulesConfig, seed: int, rank: int, n_games: int,
                    pools: dict[str, OpponentPool]) -> Opponents:
        """The mix of ``selfplay.opponents``, its agent specs built with this worker's seeds."""
        agents = {spec: make_agent(spec, seed=stream_seed(seed, 4, rank, i), rules=rules)
                  for i, spec in enumerate(selfplay.agent_specs)}
        return cls(selfplay.opponents, agents, n_games, pools)

    def use_mix(self, mix: dict[str, float]) -> None:
        """Draw from now on from ``mix`` (kinds of :attr:`names`; the games already drawn keep their opponents)."""
        unknown = set(mix) - set(self.names)
        if unknown:
            raise ValueError(f"opponent kinds {sorted(unknown)} are not among this run's {self.names}")
        self.mix = list(mix)
        self.probs = np.array([mix[k] for k in self.mix], np.float64)
        self.probs /= self.probs.sum()

    def learner_games(self, seats: np.ndarray) -> np.ndarray:
        """Per game: whether the seat to act is the learner's."""
        return (self.kind == SELF) | (seats % 2 == self.learner_team)

    def act(self, actions: np.ndarray, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Fill ``actions[rows]`` (games whose seat to act is an opponent's): each agent its own rows,
        each pool's rows in one batched pass."""
        kind = self.kind[rows]
        for k, name in enumerate(self.names[1:], start=1):
            sel = rows[kind == k]
            if not len(sel):
                continue
            if name in self.pools:
                actions[sel] = self.pools[name].act_batch(self.slot[sel], obs[sel], masks[sel])
            else:
                actions[sel] = self.agents[name].act_batch(obs[sel], masks[sel])

    def start(self, rng: np.random.Generator) -> None:
        """At a run's start: a mix without ``self`` (a best response's: the target alone) draws every game's
        opponent now, so no game opens in self-play; a mix with it keeps its games in self-play until
        their first trajectory ends (no draw, so such runs' streams are unchanged)."""
        if "self" not in self.mix:
            self.draw(np.arange(len(self.kind)), rng)

    def draw(self, games: np.ndarray, rng: np.random.Generator) -> None:
        """A new opponent (and learner team) for each game in ``games``; a pool's kind is self-play
        while that pool is empty."""
        if len(games) == 0:
            return
        drawn = rng.choice(len(self.mix), size=len(games), p=self.probs)
        teams = rng.integers(2, size=len(games))
        for g, d, team in zip(games, drawn, teams):
            name = self.mix[d]
            pool = self.pools.get(name)
            kind = SELF if name == "self" or (pool is not None and len(pool) == 0) else self.names.index(name)
            self.kind[g] = kind
            self.slot[g] = pool.sample(rng) if kind != SELF and pool is not None else -1
            self.learner_team[g] = team

    def stat_keys(self) -> list[str]:
        """The collection statistics, a fixed list (the same on every worker, whatever its games held)."""
        keys = ["decisions", "learner_decisions", "rounds", "made", "bid_sum", "vs_rounds", "vs_declared",
                "vs_declared_made"]
        for name in [*self.agents, *self.pools]:
            keys += [f"vs_{name}_rounds", f"vs_{name}_score"]
        return keys

    def pool_results(self) -> dict[str, np.ndarray]:
        """Empty tallies for :meth:`record_round`: per pool, ``[round wins, rounds]`` by slot."""
        return {name: np.zeros((2, pool.capacity)) for name, pool in self.pools.items()}

    def record_round(self, stats: dict[str, Any], g: int, result: dict[str, Any],
                     pool_results: dict[str, np.ndarray]) -> None:
        """Count game ``g``'s finished round against its opponent (self-play rounds count for nobody) and,
        against a pool's network, in that pool's tally of :meth:`pool_results`."""
        if self.kind[g] == SELF:
            return
        team = self.learner_team[g]
        mine, theirs = result["scores"][team], result["scores"][(team + 1) % 2]
        name = self.names[self.kind[g]]
        stats[f"vs_{name}_rounds"] += 1
        stats[f"vs_{name}_score"] += mine - theirs
        stats["vs_rounds"] += 1
        if result["declarer"] % 2 == team:
            stats["vs_declared"] += 1
            stats["vs_declared_made"] += result["made"]
        if name in self.pools:
            pool_results[name][:, self.slot[g]] += (round_outcome(mine, theirs), 1)

    def record_pools(self, pool_results: dict[str, np.ndarray], total: Callable[[np.ndarray], np.ndarray]) -> None:
        """Add every worker's tallies (``total`` sums a vector over workers) to the pools' win statistics."""
        for name, pool in self.pools.items():
            summed = np.asarray(total(pool_results[name].ravel())).reshape(2, -1)
            for slot in range(len(pool)):
                pool.record(slot, summed[0, slot], summed[1, slot])

    def charts(self, totals: dict[str, float]) -> dict[str, float]:
        """How a rollout's games went, from the :meth:`stat_keys` totals of every worker: bids and contracts,
        the learner's score difference per opponent kind, the pools (``pool_*`` the snapshots', then by kind)."""
        def rate(num: str, den: str) -> float:
            return totals[num] / totals[den] if totals[den] else float("nan")

        charts = {"make_rate": totals["made"] / max(totals["rounds"], 1), "mean_bid": totals["bid_sum"] / max(totals["rounds"], 1),
                  "bid_rate": rate("vs_declared", "vs_rounds"), "learner_make_rate": rate("vs_declared_made", "vs_declared")}
        for name, pool in self.pools.items():
            prefix = "pool" if name == "snapshot" else f"{name}_pool"
            charts[f"{prefix}_size"] = len(pool)
        for name in [*self.agents, *self.pools]:
            if totals[f"vs_{name}_rounds"]:
                charts[f"score_diff_vs_{name}"] = rate(f"vs_{name}_score", f"vs_{name}_rounds")
        for name, pool in self.pools.items():
            if len(pool):
                charts["pool_min_win_rate" if name == "snapshot" else f"{name}_pool_min_win_rate"] = float(pool.win_rates().min())
        return charts

    def state_dict(self) -> dict[str, Any]:
        """Per-game assignments and the agents' random streams (each worker's copies saw other games)."""
        return {"kind": self.kind.copy(), "slot": self.slot.copy(), "learner_team": self.learner_team.copy(),
                "agent_rng": [a.get_state() for a in self.agents.values()]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.kind[:], self.slot[:], self.learner_team[:] = state["kind"], state["slot"], state["learner_team"]
        for agent, stream in zip(self.agents.values(), state["agent_rng"]):
            agent.set_state(stream)


def snapshot_agent(model: ActorCritic, rules: RulesConfig, seed: int, *, greedy: bool = False,
                   source: str = "snapshot") -> PPOAgent:
    """A frozen copy of the current policy, on the CPU (sampling, like the learner, unless ``greedy``)."""
    return PPOAgent.from_checkpoint(make_checkpoint(model, {}, rules), greedy=greedy, seed=seed, source=source)


__all__ = ["OpponentPool", "Opponents", "SELF", "round_outcome", "snapshot_agent"]
