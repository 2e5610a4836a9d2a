"""The actor-critic network of the PPO team policy and its masked action distribution.

The actor reads the acting seat's ego-centric observation (so both partners, and the other team,
share one set of weights: a *team policy*) and outputs 70 logits, one per action id. Illegal
actions get the logit ``MASKED_LOGIT`` (-1e8, not ``-inf``: ``0 * -inf`` would make the entropy
NaN), and the entropy is summed over legal actions only. The critic reads either the same
observation or, with ``central_critic`` (default), the full state of
:meth:`pcr_env.vector.VectorEnv.state` (all hands: known at training time, never used for
acting), which lowers the variance of the value target without biasing the policy gradient.
Layers use orthogonal initialisation (gain sqrt(2) for hidden layers, 0.01 for the policy head,
1 for the value head).

>>> import torch
>>> net = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(32,), critic_hidden_sizes=(32,)))
>>> mask = torch.zeros(1, 70, dtype=torch.bool); mask[0, [3, 9]] = True
>>> log_probs(net.masked_logits(torch.zeros(1, 797), mask)).exp()[0, [3, 9]].sum().item()
1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import torch.nn as nn

from agents.ppo.activations import ACTIVATIONS
from agents.ppo.card_features import card_inputs
from agents.ppo.card_net import CardActor
from agents.ppo.mlp import mlp
from agents.ppo.sparse_linear import SparseInputLinear, SparseRows
from pcr_env.actions import NUM_ACTIONS
from pcr_env.observation import players_for_size

MASKED_LOGIT = -1e8


@dataclass
class NetworkConfig:
    """Shape of the actor-critic network (section ``network`` of a training config)."""

    hidden_sizes: tuple[int, ...] = (256, 256)
    """Widths of the actor's hidden layers (observation -> ... -> 70 logits)."""
    critic_hidden_sizes: tuple[int, ...] = (256, 256)
    """Widths of the critic's hidden layers (critic input -> ... -> 1 value)."""
    activation: Literal["relu", "tanh"] = "relu"
    """Hidden-layer nonlinearity (a name in :data:`agents.ppo.activations.ACTIVATIONS`)."""
    central_critic: bool = True
    """The critic reads the full state (every hand; ``VectorEnv.state()``) instead of the
    acting seat's observation. Only the actor is used to play, so no hidden information
    leaks into decisions; the value target just gets less noisy."""
    card_head: bool = False
    """The actor is :class:`agents.ppo.card_net.CardActor`: the trunk also reads per-row card-play features, and
    one small network shared by all 52 cards scores each card action from that card's features (which are
    still out, boss cards, what would take the trick, what an opponent to play could hold). ``false``: the
    plain MLP of ``hidden_sizes``."""
    card_width: int = 64
    """Width of the card scorer's layers (with ``card_head``)."""

    def __post_init__(self) -> None:
        for name in ("hidden_sizes", "critic_hidden_sizes"):
            sizes = getattr(self, name)
            if not (len(sizes) >= 1 and all(isinstance(s, int) and s >= 1 for s in sizes)):
                raise ValueError(f"network.{name} = {sizes!r} is not allowed: a non-empty list of positive integers")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"network.activation = {self.activation!r} is not allowed: "
                             + " or ".join(repr(name) for name in ACTIVATIONS))
        if not (isinstance(self.card_width, int) and self.card_width >= 1):
            raise ValueError(f"network.card_width = {self.card_width!r} is not allowed: a positive integer")


class ActorCritic(nn.Module):
    """Masked policy over the 70 actions plus a value head (see the module docstring)."""

    def __init__(self, obs_dim: int, state_dim: int, num_actions: int = NUM_ACTIONS,
                 config: NetworkConfig | None = None):
        super().__init__()
        self.config = config or NetworkConfig()
        self.obs_dim, self.state_dim, self.num_actions = obs_dim, state_dim, num_actions
        self.critic_dim = state_dim if self.config.central_critic else obs_dim
        if self.config.card_head:
            self.actor: nn.Module = CardActor(obs_dim, players_for_size(obs_dim), self.config.hidden_sizes, num_actions,
                                              self.config.activation, self.config.card_width)
        else:
            self.actor = mlp(obs_dim, self.config.hidden_sizes, num_actions, self.config.activation, 0.01)
        self.critic = mlp(self.critic_dim, self.config.critic_hidden_sizes, 1, self.config.activation, 1.0)
        # Width of the card actor's precomputed inputs (agents.ppo.card_features.card_inputs; 0 for a plain actor).
        self.card_input_size = self.actor.inputs.size if self.config.card_head else 0

    def rollout_inputs(self, inputs: np.ndarray, obs: np.ndarray) -> np.ndarray:
        """The rows a trainer stores and feeds this network: ``inputs`` (the observation, or the full state whose
        first ``obs_dim`` entries are the observation), then a card actor's inputs of ``obs``
        (:func:`agents.ppo.card_features.card_inputs`, computed once per decision, not per forward pass)."""
        if not self.config.card_head:
            return inputs
        return np.concatenate([inputs, card_inputs(obs, self.actor.players)], 1)

    def split_rollout_inputs(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Rows of :meth:`rollout_inputs` split back into its ``inputs`` and the card actor's inputs (``None`` for a
        plain actor, whose rows are the inputs alone)."""
        if not self.card_input_size:
            return x, None
        return x[:, :-self.card_input_size], x[:, -self.card_input_size:]

    @property
    def sparse_input(self) -> bool:
        """Whether both first layers read :class:`SparseRows` directly (the plain MLPs; a card actor's features
        need the dense observation)."""
        return all(isinstance(net, nn.Sequential) and isinstance(net[0], SparseInputLinear)
                   for net in (self.actor, self.critic))

    def masked_logits(self, obs: torch.Tensor | SparseRows, mask: torch.Tensor,
                      card_inputs: torch.Tensor | None = None, *, pad: bool = False) -> torch.Tensor:
        """Logits ``[B, A]`` with illegal actions (``mask`` False) set to ``MASKED_LOGIT``.
        ``obs`` may be given by its non-zero entries (:func:`agents.sparse_linear.sparse_rows`); a card actor
        takes its precomputed ``card_inputs`` (:meth:`rollout_inputs`) or computes them from ``obs``, and pads its
        card scorer's rows where ``pad`` (:meth:`CardActor.forward`; a plain actor has no such rows)."""
        if self.config.card_head:
            dense = obs.dense() if isinstance(obs, SparseRows) else obs
            return self.actor(dense, card_inputs, mask, pad=pad).masked_fill(~mask, MASKED_LOGIT)
        return self.actor(obs).masked_fill(~mask, MASKED_LOGIT)

    def value(self, critic_input: torch.Tensor | SparseRows) -> torch.Tensor:
        """Value ``[B]`` (in the units of the trainer's value normalisation); the input dense or sparse."""
        return self.critic(critic_input).squeeze(-1)


def log_probs(masked_logits: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of every action; illegal ones come out at about -1e8 (probability 0)."""
    return torch.log_softmax(masked_logits, dim=-1)


def masked_entropy(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy ``[B]`` over the legal actions only (an illegal action carries no uncertainty)."""
    return -(logp.exp() * logp).where(mask, torch.zeros((), dtype=logp.dtype)).sum(-1)


def sample_actions(logp: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from ``exp(logp)``; illegal actions have probability exactly 0. The draw runs
    where ``generator`` lives (the trainer's is on the CPU), so a run samples the same on any device."""
    probs = logp.exp()
    if generator is not None and generator.device != probs.device:
        return torch.multinomial(probs.to(generator.device), 1, generator=generator).squeeze(-1).to(probs.device)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


class ValueNorm(nn.Module):
    """Running mean and variance of the value targets (MAPPO-style value normalisation).

    The critic predicts normalised returns; ``denormalize`` maps its output back to
    reward units for GAE. Statistics are stored as buffers, so they travel in the
    ``state_dict`` of the model that owns them.
    """

    def __init__(self, epsilon: float = 1e-4):
        super().__init__()
        self.register_buffer("mean", torch.zeros((), dtype=torch.float64))
        self.register_buffer("var", torch.ones((), dtype=torch.float64))
        self.register_buffer("count", torch.tensor(epsilon, dtype=torch.float64))

    def update_from_moments(self, count: float, total: float, total_sq: float) -> None:
        """Fold in a batch given as (count, sum, sum of squares) (Chan et al.'s parallel update)."""
        if count <= 0:
            return
        batch_mean = total / count
        batch_var = max(total_sq / count - batch_mean**2, 0.0)
        delta = batch_mean - self.mean
        new_count = self.count + count
        self.mean += delta * count / new_count
        m2 = self.var * self.count + batch_var * count + delta**2 * self.count * count / new_count
        self.var.copy_(m2 / new_count)
        self.count.copy_(new_count)

    def update(self, x: torch.Tensor) -> None:
        x = x.double()
        self.update_from_moments(float(x.numel()), float(x.sum()), float((x * x).sum()))

    @property
    def std(self) -> torch.Tensor:
        return self.var.clamp_min(1e-4).sqrt()

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return ((x - self.mean) / self.std).to(x.dtype)

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.std + self.mean).to(x.dtype)
