"""Rollout storage for turn-based self-play: per-seat trajectories inside batched games.

A batched environment returns one decision per game per step, and the seat that
acts changes from step to step. For PPO each *seat* is its own trajectory: a
decision's successor is the same seat's next decision in the same episode, a
reward at a step belongs to the seat it was paid to, and nothing bootstraps from
another seat's value (least of all an opponent's). :class:`SeatRollout` keeps
that bookkeeping:

* ``add`` stores the learner's decisions of one step and links each to the
  previous pending decision of the same (game, seat);
* ``credit`` adds ``rewards[game, seat]`` to that seat's latest decision;
* ``end`` closes every seat's trajectory in the given games (the episode, or
  the round, is over: no bootstrap);
* decisions still open when the rollout ends (their successor lies in the next
  rollout) are carried over: the next rollout stores them in its first
  ``n_players`` rows (row ``s`` for seat ``s``) and they are trained once their
  return is known. For this rollout they are the truncation point, as in any
  PPO rollout: their predecessors bootstrap from their value.

Storage is a grid ``[rows, num_envs]`` with ``rows = n_players + num_steps``,
time-ordered along rows, so a decision's successor always lies in a later row.
:func:`compute_gae` runs backwards over rows, vectorised over games.

>>> import numpy as np
>>> ro = SeatRollout(num_steps=3, num_envs=1, n_players=2, input_dim=1)
>>> ro.begin()
>>> for seat in (0, 1, 0):  # seats 0 and 1 alternate in one game
...     ro.add(np.zeros((1, 1)), np.ones((1, 70), bool), np.array([seat]), np.array([True]),
...            np.zeros(1, np.int64), np.zeros(1), np.zeros(1))
>>> ro.credit(np.array([[1.0, -1.0]])); ro.end(np.array([True]))
>>> adv, ret = compute_gae(ro.rewards, ro.values, ro.next_index, ro.resolved, gamma=1.0, gae_lambda=1.0)
>>> ret[ro.trainable()].tolist()   # seat 0's two decisions both earn +1, seat 1's earns -1
[1.0, -1.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pcr_env.actions import NUM_ACTIONS


class SeatRollout:
    """Learner decisions of one rollout, linked per (game, seat); see the module docstring.

    Arrays (``R = n_players + num_steps`` rows, ``N = num_envs`` columns):
    ``inputs`` ``[R, N, input_dim]`` (the network inputs: observation, or the full
    state whose first ``obs_dim`` entries are the observation), ``masks``,
    ``actions``, ``logprobs``, ``values`` (in reward units), ``rewards`` (credited
    to the decision), ``valid`` (a decision is stored), ``resolved`` (its return is
    known), ``next_index`` (flat index ``row * N + game`` of the same seat's next
    decision, ``-1`` if the trajectory ended first) and ``seats``.
    """

    def __init__(self, num_steps: int, num_envs: int, n_players: int, input_dim: int, num_actions: int = NUM_ACTIONS,
                 *, targets: bool = False):
        self.num_steps, self.num_envs, self.n_players = num_steps, num_envs, n_players
        rows = n_players + num_steps
        self.rows = rows
        self.inputs = np.zeros((rows, num_envs, input_dim), np.float32)
        self.masks = np.zeros((rows, num_envs, num_actions), bool)
        self.actions = np.zeros((rows, num_envs), np.int64)
        # A teacher's per-action targets (a warm start with targets: values); absent otherwise, so PPO
        # rollouts neither fill, carry nor save a [rows, games, actions] array they never read.
        self.targets = np.zeros((rows, num_envs, num_actions), np.float32) if targets else None
        self.open_fields = ("inputs", "masks", "actions", *(("targets",) if targets else ()), "logprobs", "values",
                            "rewards", "seats")
        """Per-decision fields of a decision whose return is still open: carried into the next rollout and saved."""
        self.logprobs = np.zeros((rows, num_envs), np.float32)
        self.values = np.zeros((rows, num_envs), np.float32)
        self.rewards = np.zeros((rows, num_envs), np.float32)
        self.seats = np.zeros((rows, num_envs), np.int64)
        self.valid = np.zeros((rows, num_envs), bool)
        self.resolved = np.zeros((rows, num_envs), bool)
        self.next_index = np.full((rows, num_envs), -1, np.int64)
        # Flat index of each (game, seat)'s latest decision whose return is still open; -1: none.
        self.pending = np.full((num_envs, n_players), -1, np.int64)
        self.step = 0

    def _flat(self, name: str) -> np.ndarray:
        arr = getattr(self, name)
        return arr.reshape(self.rows * self.num_envs, *arr.shape[2:])

    def begin(self) -> None:
        """Start a rollout: carry open decisions into rows ``0..n_players-1``, clear the rest."""
        n = self.num_envs
        games, seats = np.nonzero(self.pending >= 0)
        src = self.pending[games, seats]
        dst = seats * n + games  # row = seat, column = game
        carried = {}
        for name in self.open_fields:
            carried[name] = self._flat(name)[src].copy()
        for name in ("valid", "resolved"):
            getattr(self, name).fill(False)
        self.next_index.fill(-1)
        self.rewards.fill(0.0)
        for name, data in carried.items():
            self._flat(name)[dst] = data
        self._flat("valid")[dst] = True
        self.pending[games, seats] = dst
        self.step = 0

    def add(self, inputs: np.ndarray, masks: np.ndarray, seats: np.ndarray, learner: np.ndarray,
            actions: np.ndarray, logprobs: np.ndarray, values: np.ndarray, targets: np.ndarray | None = None) -> None:
        """Store one step: every game's acting seat, kept where ``learner`` is True.

        ``inputs``, ``masks``, ``actions``, ``logprobs``, ``values`` and ``targets`` (a teacher's
        per-action distribution, optional) hold the learner rows only (in increasing game order);
        ``seats`` and ``learner`` cover every game.
        """
        if self.step >= self.num_steps:
            raise ValueError(f"rollout is full ({self.num_steps} steps): call begin() first")
        row = self.n_players + self.step
        games = np.flatnonzero(learner)
        s = seats[games]
        self.inputs[row, games] = inputs
        self.masks[row, games] = masks
        self.actions[row, games] = actions
        self.logprobs[row, games] = logprobs
        self.values[row, games] = values
        if targets is not None:
            if self.targets is None:
                raise ValueError("targets given to a SeatRollout made without them: create it with targets=True")
            self.targets[row, games] = targets
        self.seats[row, games] = s
        self.valid[row, games] = True
        flat = row * self.num_envs + games
        prev = self.pending[games, s]
        linked = prev >= 0
        # The seat acted again in the same trajectory: its previous decision's return is now defined.
        self._flat("next_index")[prev[linked]] = flat[linked]
        self._flat("resolved")[prev[linked]] = True
        self.pending[games, s] = flat
        self.step += 1

    def credit(self, rewards: np.ndarray) -> None:
        """Add ``rewards[game, seat]`` to that seat's latest decision (opponent seats have none)."""
        games, seats = np.nonzero((rewards != 0) & (self.pending >= 0))
        np.add.at(self._flat("rewards"), self.pending[games, seats], rewards[games, seats])

    def end(self, ended: np.ndarray) -> None:
        """Close every seat's trajectory in the games where ``ended`` is True (no bootstrap)."""
        open_ = self.pending[ended]
        idx = open_[open_ >= 0]
        self._flat("resolved")[idx] = True
        self._flat("next_index")[idx] = -1
        self.pending[ended] = -1

    def trainable(self) -> np.ndarray:
        """Flat indices of the stored decisions whose return is known (the training batch)."""
        return np.flatnonzero((self.valid & self.resolved).ravel())

    def flat(self, name: str) -> np.ndarray:
        """An array reshaped to ``[rows * num_envs, ...]`` (a view)."""
        return self._flat(name)

    def open_state(self) -> dict[str, Any]:
        """The decisions whose return is still open (what the next rollout carries on), for a checkpoint."""
        idx = self.pending[self.pending >= 0]
        return {"pending": self.pending.copy(), "open_rows": {name: self._flat(name)[idx].copy() for name in self.open_fields}}

    def load_open_state(self, state: dict[str, Any]) -> None:
        self.pending[:] = state["pending"]
        idx = self.pending[self.pending >= 0]
        for name in self.open_fields:
            if name in state["open_rows"]:  # a run's own checkpoints hold exactly these
                self._flat(name)[idx] = state["open_rows"][name]

    def batch(self, advantages: np.ndarray, returns: np.ndarray, targets: bool = False) -> dict[str, np.ndarray]:
        """The trainable decisions of this rollout, with their advantages and returns (and, with
        ``targets``, the teacher's per-action targets). ``inputs`` stays the whole storage grid (rows
        ``input_rows``): it is by far the widest array, so minibatches gather from it directly instead
        of from a copy (it is overwritten by the next rollout, after the update)."""
        idx = self.trainable()
        extra = {"targets": self._flat("targets")[idx]} if targets else {}
        fields = ("masks", "actions", "logprobs", "values")
        return {**extra, "inputs": self._flat("inputs"), "input_rows": idx,
                **{name: self._flat(name)[idx] for name in fields},
                "advantages": advantages[idx], "returns": returns[idx]}


def update_value_norm(value_norm: Any, returns: np.ndarray, workers: Any) -> None:
    """Fold a batch's returns, summed over every worker, into the running value statistics."""
    r = returns.astype(np.float64)
    count, total, total_sq = workers.sum([len(r), r.sum(), (r * r).sum()])
    value_norm.update_from_moments(count, total, total_sq)


def compute_gae(rewards: np.ndarray, values: np.ndarray, next_index: np.ndarray, resolved: np.ndarray,
                gamma: float, gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation along per-seat chains.

    All arrays are ``[rows, N]`` grids, rows in time order; ``next_index`` holds
    the flat index (``row * N + column``) of each decision's successor, ``-1`` when
    its trajectory ended after it. For a resolved decision ``k`` with successor ``j``::

        delta_k = r_k + gamma * V_j - V_k         (V_j = 0 when the trajectory ended)
        A_k     = delta_k + gamma * lambda * A_j  (A_j = 0 when j is still open)

    Unresolved decisions get advantage 0 and are not trained on. Returns
    ``(advantages, returns)`` flattened to ``[rows * N]``; ``returns = A + V``.
    """
    rows, n = rewards.shape
    v_flat = values.reshape(-1).astype(np.float64)
    adv = np.zeros(rows * n, np.float64)
    for r in range(rows - 1, -1, -1):
        nxt = next_index[r]
        has_next = nxt >= 0
        safe = np.where(has_next, nxt, 0)
        next_value = np.where(has_next, v_flat[safe], 0.0)
        next_adv = np.where(has_next, adv[safe], 0.0)
        delta = rewards[r] + gamma * next_value - values[r]
        adv[r * n:(r + 1) * n] = np.where(resolved[r], delta + gamma * gae_lambda * next_adv, 0.0)
    returns = adv + v_flat
    return adv.astype(np.float32), returns.astype(np.float32)


__all__ = ["SeatRollout", "compute_gae", "update_value_norm"]
