"""The actor's forward pass for acting, compiled with numba: the torch module's logits without torch's per-call cost.

An agent acts on one observation, or on the few dozen rows of a search's rollouts, at a time. There a torch
forward pass costs about a dozen library calls of several microseconds each, far more than its arithmetic, and
the inputs are about 7% non-zero (:mod:`agents.ppo.sparse_linear`). :class:`CompiledActor` runs the same layers
as loops compiled by numba (already a dependency of the engine): every layer skips its zero inputs (the
encodings' zeros, and the ReLU's), and a card actor's scorer runs over the legal cards in hand only. It computes
the same function as the module in float32, summed in another order (logits agree to about 1e-5; a test compares
them, and ``benchmarks/speed/act_latency.py --check-deals`` compares the actions of the shipped file over whole
games). It reads the module's weights when built; :meth:`CompiledActor.current` tells whether they have changed
since (torch counts in-place writes to every parameter), so a holder can rebuild it.

>>> import numpy as np, torch
>>> from agents.ppo.network import mlp
>>> actor = mlp(6, (4,), 3, "relu", 1.0)
>>> x = np.array([[0, 1, 0, 0, 0.5, 0]], np.float32); legal = np.ones((1, 3), bool)
>>> np.allclose(CompiledActor(actor).masked_logits(x, legal), actor(torch.from_numpy(x)).detach().numpy(), atol=1e-5)
True
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
from numba import njit

from agents.ppo.card_net import CardActor, card_inputs
from agents.ppo.network import MASKED_LOGIT

_ACTIVATIONS = {nn.ReLU: 1, nn.Tanh: 2}  # the kernels' codes; 0: none (an output layer)


@njit(cache=True, nogil=True, inline="always")
def _axpy(a, x, y):
    """``y += a * x`` in place, element by element (an array expression would allocate a temporary)."""
    for j in range(y.shape[0]):
        y[j] += a * x[j]


@njit(cache=True, nogil=True, inline="always")
def _activate(u, activation):
    """ReLU (1) or tanh (2) in place; 0 leaves ``u`` as it is."""
    if activation == 1:
        for i in range(u.shape[0]):
            if u[i] < 0.0:
                u[i] = 0.0
    elif activation == 2:
        for i in range(u.shape[0]):
            u[i] = np.tanh(u[i])


@njit(cache=True, nogil=True)
def _linear(x, weight_t, bias, out, activation):
    """``out = activation(x @ weight_t + bias)`` for ``x [B, in]``, ``weight_t [in, out]``, summing over the
    non-zero inputs only (the inner loop runs along a contiguous weight row, so it vectorises)."""
    for r in range(x.shape[0]):
        row = out[r]
        row[:] = bias
        for i in range(x.shape[1]):
            v = x[r, i]
            if v != 0.0:
                _axpy(v, weight_t[i], row)
        _activate(row, activation)


@njit(cache=True, nogil=True)
def _card_scores(logits, context, packed, legal, rows, slots, n_features, card_in, card_in_bias, card_hidden,
                 card_hidden_bias, card_out, card_out_bias, activation):
    """Add the card scorer's output to the logit of every legal card in hand (:class:`CardActor`): per held card,
    ``activation(features @ card_in + bias + context)``, a hidden layer, then one output."""
    width = card_in.shape[1]
    u = np.empty(width, np.float32)
    u2 = np.empty(width, np.float32)
    for r in range(packed.shape[0]):
        for j in range(slots):
            card = int(packed[r, rows + j])
            if card < 0 or not legal[r, card]:
                continue
            base = rows + slots + j * n_features
            u[:] = card_in_bias + context[r]
            for f in range(n_features):
                v = packed[r, base + f]
                if v != 0.0:
                    _axpy(v, card_in[f], u)
            _activate(u, activation)
            u2[:] = card_hidden_bias
            for i in range(width):
                if u[i] != 0.0:
                    _axpy(u[i], card_hidden[i], u2)
            _activate(u2, activation)
            score = card_out_bias[0]
            for i in range(width):
                score += u2[i] * card_out[i, 0]
            logits[r, card] += score




def _weights(layer: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
    """A linear layer's weight transposed to ``[in, out]`` and its bias, as contiguous float32 arrays."""
    return (np.ascontiguousarray(layer.weight.detach().float().cpu().numpy().T),
            layer.bias.detach().float().cpu().numpy().copy())


def _sequence(layers: nn.Sequential) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """``(weight_t, bias, activation code)`` of each linear layer of an MLP (the module following it, if any)."""
    modules = list(layers)
    out = []
    for i, module in enumerate(modules):
        if isinstance(module, nn.Linear):
            after = type(modules[i + 1]) if i + 1 < len(modules) else None
            out.append((*_weights(module), _ACTIVATIONS.get(after, 0)))
    return out


class CompiledActor:
    """An actor module (a plain :func:`~agents.ppo.network.mlp` or a :class:`CardActor`) as compiled loops."""

    def __init__(self, actor: nn.Module):
        if not self.fits(actor):
            raise ValueError(f"CompiledActor: cannot compile {type(actor).__name__} (an MLP of Linear, ReLU and Tanh "
                             "layers, or a CardActor)")
        self._parameters = list(actor.parameters())
        self._versions = self._read_versions()
        self.card = isinstance(actor, CardActor)
        if self.card:
            self.players, self.slots = actor.players, actor.max_hand
            self.n_row_features, self.n_card_features = actor.features.num_row_features, actor.features.num_card_features
            self.activation = _ACTIVATIONS[type(actor.act)]
            self.layers = _sequence(actor.trunk)
            self.head, self.context = _weights(actor.head), _weights(actor.context)
            self.card_in, self.card_hidden, self.card_out = (_weights(actor.card_in), _weights(actor.card_hidden),
                                                             _weights(actor.card_out))
        else:
            self.layers = _sequence(actor)

    @staticmethod
    def fits(actor: nn.Module) -> bool:
        """Whether ``actor`` is a CPU float32 MLP of Linear, ReLU and Tanh layers ending in a Linear, or a
        :class:`CardActor` (whose trunk is such an MLP)."""
        if any(p.device.type != "cpu" or p.dtype != torch.float32 for p in actor.parameters()):
            return False
        trunk = actor.trunk if isinstance(actor, CardActor) else actor
        if not isinstance(trunk, nn.Sequential) or len(trunk) == 0:
            return False
        if not all(isinstance(m, (nn.Linear, *_ACTIVATIONS)) for m in trunk):
            return False
        return isinstance(actor, CardActor) or isinstance(trunk[-1], nn.Linear)

    def _read_versions(self) -> tuple[int, ...]:
        return tuple(p._version for p in self._parameters)

    def current(self) -> bool:
        """Whether the module's weights are still the ones this was built from (no in-place write since)."""
        return self._read_versions() == self._versions

    def masked_logits(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Logits ``[B, A]`` (float32) of observations ``obs [B, obs_dim]`` (float32, C-contiguous) with the
        illegal actions (``legal`` False, bool ``[B, A]``) at ``MASKED_LOGIT``."""
        if self.card:
            packed = card_inputs(obs, self.players)
            h = np.concatenate([obs, packed[:, :self.n_row_features]], 1)
        else:
            h = obs
        # The first layer reads the mostly-zero encoding: compiled loops over its non-zero entries. The later layers
        # are dense; past a few rows a BLAS product beats the loops (benchmarks/speed/act_latency.py).
        loops = len(h) <= LOOP_ROWS
        for i, (weight_t, bias, activation) in enumerate(self.layers):
            h = self._linear(h, weight_t, bias, activation, loops or i == 0)
        if not self.card:
            logits = h
        else:
            logits = self._linear(h, *self.head, 0, loops)
            context = self._linear(h, *self.context, 0, loops)
            if loops:
                _card_scores(logits, context, packed, legal, self.n_row_features, self.slots, self.n_card_features,
                             *self.card_in, *self.card_hidden, *self.card_out, self.activation)
            else:
                self._card_scores_blas(logits, context, packed, legal)
        logits[~legal] = MASKED_LOGIT
        return logits

    @staticmethod
    def _linear(x: np.ndarray, weight_t: np.ndarray, bias: np.ndarray, activation: int, loops: bool) -> np.ndarray:
        if loops:
            out = np.empty((len(x), len(bias)), np.float32)
            _linear(x, weight_t, bias, out, activation)
            return out
        out = x @ weight_t
        out += bias
        return _ACTIVATE[activation](out)

    def _card_scores_blas(self, logits: np.ndarray, context: np.ndarray, packed: np.ndarray, legal: np.ndarray) -> None:
        """:func:`_card_scores` as three BLAS products over all the legal held cards of all rows at once."""
        g, s, f = self.n_row_features, self.slots, self.n_card_features
        slot_cards = packed[:, g:g + s].astype(np.int64)
        held = slot_cards >= 0
        held[held] = legal[np.nonzero(held)[0], slot_cards[held]]
        r, j = np.nonzero(held)
        u = packed[:, g + s:].reshape(len(packed), s, f)[r, j] @ self.card_in[0]
        u += self.card_in[1]
        u += context[r]
        u = _ACTIVATE[self.activation](u)
        u = self._linear(u, *self.card_hidden, self.activation, False)
        logits[r, slot_cards[r, j]] += (u @ self.card_out[0])[:, 0] + self.card_out[1][0]


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0, out=x)


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x, out=x)


_ACTIVATE = {0: lambda x: x, 1: _relu, 2: _tanh}
LOOP_ROWS = 4
"""Batches of at most this many rows run every layer as compiled loops; larger ones use BLAS past the first layer."""


__all__ = ["CompiledActor"]
