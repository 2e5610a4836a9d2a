"""The actor's forward pass for acting, compiled with numba: the torch module's logits without torch's per-call cost.

An agent acts on one observation, or on the few hundred rows of a search's rollouts, at a time. There a torch
forward pass costs about a dozen library calls of several microseconds each, far more than its arithmetic, and
the inputs are about 7% non-zero (:mod:`agents.ppo.sparse_linear`). :class:`CompiledActor` runs the same layers in
two numba kernels (numba is already a dependency of the engine): one for the MLP, whose first layer sums the
weight rows of the non-zero inputs only and whose later layers are BLAS products, and, for a card actor, one for
the card scorer over the legal cards in hand only. It computes the same function as the module in float32, summed
in another order (logits agree to about 1e-5; a test compares them, and ``benchmarks/speed/act_latency.py
--check-deals`` compares the actions of the shipped file over whole games). It reads the module's weights when
built; :meth:`CompiledActor.current` tells whether they have changed since (torch counts in-place writes to every
parameter), so a holder can rebuild it.

>>> import numpy as np, torch
>>> from agents.ppo.mlp import mlp
>>> actor = mlp(6, (4,), 3, "relu", 1.0)
>>> x = np.array([[0, 1, 0, 0, 0.5, 0]], np.float32); legal = np.ones((1, 3), bool)
>>> np.allclose(CompiledActor(actor).masked_logits(x, legal), actor(torch.from_numpy(x)).detach().numpy(), atol=1e-5)
True
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
from numba import njit, types
from numba.typed import List

from agents.ppo.activations import ACTIVATIONS
from agents.ppo.card_features import card_inputs
from agents.ppo.card_net import CardActor, card_actor_layers
from agents.ppo.mlp import mlp_layers
from agents.ppo.network import MASKED_LOGIT

# The kernels' activation codes, read from the table (numba freezes a global as a compile-time constant).
RELU = ACTIVATIONS["relu"].code
TANH = ACTIVATIONS["tanh"].code


@njit(cache=True, nogil=True, inline="always")
def _axpy(a, x, y):
    """``y += a * x`` in place, element by element (an array expression would allocate a temporary)."""
    for j in range(y.shape[0]):
        y[j] += a * x[j]


@njit(cache=True, nogil=True, inline="always")
def _activate(u, activation):
    """ReLU (code :data:`RELU`) or tanh (code :data:`TANH`) in place; the codes of
    :data:`agents.ppo.activations.ACTIVATIONS`."""
    if activation == RELU:
        for i in range(u.shape[0]):
            if u[i] < 0.0:
                u[i] = 0.0
    elif activation == TANH:
        for i in range(u.shape[0]):
            u[i] = np.tanh(u[i])


@njit(cache=True, nogil=True, inline="always")
def _add_bias_and_activate(h, bias, activation):
    """``activation(h[r] + bias)`` in place for every row of ``h``."""
    for r in range(h.shape[0]):
        row = h[r]
        for j in range(row.shape[0]):
            row[j] += bias[j]
        _activate(row, activation)


@njit(cache=True, nogil=True)
def _mlp(obs, extra, legal, first_w, first_b, hidden_w, hidden_b, out_w, out_b, activation):
    """An MLP's outputs ``[B, out]`` for inputs ``[obs, extra]``: the first layer summed over the non-zero inputs only
    (the inner loop runs along a contiguous weight row, so it vectorises), the later layers as BLAS products
    (``np.dot``); the first ``legal.shape[1]`` outputs are logits, at ``MASKED_LOGIT`` where ``legal`` is False."""
    rows, n_obs = obs.shape
    h = np.empty((rows, first_b.shape[0]), np.float32)
    for r in range(rows):
        row = h[r]
        row[:] = first_b
        for i in range(n_obs):
            if obs[r, i] != 0.0:
                _axpy(obs[r, i], first_w[i], row)
        for i in range(extra.shape[1]):
            if extra[r, i] != 0.0:
                _axpy(extra[r, i], first_w[n_obs + i], row)
        _activate(row, activation)
    for k in range(len(hidden_w)):
        h = np.dot(h, hidden_w[k])
        # The bias is read from the typed list once here: read per element inside the loop, it doubled the kernel.
        _add_bias_and_activate(h, hidden_b[k], activation)
    out = np.dot(h, out_w)
    masked = legal.shape[1]
    for r in range(rows):
        for j in range(out.shape[1]):
            out[r, j] = MASKED_LOGIT if j < masked and not legal[r, j] else out[r, j] + out_b[j]
    return out


@njit(cache=True, nogil=True)
def _card_scores(logits, context, slot_cards, slot_features, legal, card_in, card_in_bias, card_hidden,
                 card_hidden_bias, card_out, card_out_bias, activation):
    """Add the card scorer's output to the logit of every legal card in hand (:class:`CardActor`): the features of
    all such cards of the batch (``slot_cards``, ``slot_features``: the parts named by
    :class:`~agents.ppo.card_features.CardInputs`) gathered into one matrix, then
    ``activation(features @ card_in + bias + context)``, a hidden layer and one output, each a BLAS product over all
    of them."""
    # One product over all cards beats a small one per card (1.6x on the search's batches).
    rows, slots, n_features = slot_features.shape
    features = np.empty((rows * slots, n_features), np.float32)
    row_of, card_of = np.empty(len(features), np.int64), np.empty(len(features), np.int64)
    p = 0
    for r in range(rows):
        for j in range(slots):
            card = int(slot_cards[r, j])
            if card >= 0 and legal[r, card]:
                features[p] = slot_features[r, j]
                row_of[p], card_of[p] = r, card
                p += 1
    count = p
    u = np.dot(features[:count], card_in)
    for p in range(count):
        row, r = u[p], row_of[p]
        for i in range(row.shape[0]):
            row[i] += card_in_bias[i] + context[r, i]
        _activate(row, activation)
    u = np.dot(u, card_hidden)
    _add_bias_and_activate(u, card_hidden_bias, activation)
    scores = np.dot(u, card_out)
    for p in range(count):
        logits[row_of[p], card_of[p]] += scores[p, 0] + card_out_bias[0]


def _weights(layer: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
    """A linear layer's weight transposed to ``[in, out]`` and its bias, as contiguous float32 arrays."""
    return (np.ascontiguousarray(layer.weight.detach().float().cpu().numpy().T),
            layer.bias.detach().float().cpu().numpy().copy())


def _typed_list(arrays: list[np.ndarray], ndim: int) -> List:
    """``arrays`` as a numba typed list (typed even when empty, so one compiled kernel serves every depth)."""
    out = List.empty_list(types.Array(types.float32, ndim, "C"))
    for array in arrays:
        out.append(array)
    return out


class CompiledActor:
    """An actor module (a plain :func:`~agents.ppo.mlp.mlp` or a :class:`CardActor`) as compiled loops."""

    def __init__(self, actor: nn.Module):
        if not self.fits(actor):
            raise ValueError(f"CompiledActor: cannot compile {type(actor).__name__} (a CPU float32 plain MLP of known "
                             "layers, agents.ppo.mlp.mlp_layers, or a CardActor of known layers: "
                             "agents.ppo.card_net.card_actor_layers)")
        self._parameters = list(actor.parameters())
        self._versions = self._read_versions()
        layers = card_actor_layers(actor)
        self.card = layers is not None
        if layers is not None:
            self.players, self.inputs = actor.players, actor.inputs
            linears, hidden, self.activation = layers.trunk, layers.trunk[1:], layers.activation.code
            head, context = _weights(layers.head), _weights(layers.context)
            self.output = (np.ascontiguousarray(np.concatenate([head[0], context[0]], 1)), np.concatenate([head[1], context[1]]))
            self.card_in, self.card_hidden, self.card_out = (_weights(layers.card_in), _weights(layers.card_hidden),
                                                             _weights(layers.card_out))
        else:
            plain = mlp_layers(actor)
            linears, hidden, self.activation = plain.linears, plain.linears[1:-1], plain.activation.code
            self.output = _weights(linears[-1])
        self.first = _weights(linears[0])
        hidden_weights = [_weights(layer) for layer in hidden]
        self.hidden_w = _typed_list([weight_t for weight_t, _ in hidden_weights], 2)
        self.hidden_b = _typed_list([bias for _, bias in hidden_weights], 1)

    @staticmethod
    def fits(actor: nn.Module) -> bool:
        """Whether ``actor`` is on the CPU in float32 and a plain MLP whose every layer is placed
        (:func:`~agents.ppo.mlp.mlp_layers`) or a :class:`CardActor` whose every layer is placed
        (:func:`~agents.ppo.card_net.card_actor_layers`): an added or unknown layer sends it to torch."""
        if any(p.device.type != "cpu" or p.dtype != torch.float32 for p in actor.parameters()):
            return False
        if isinstance(actor, CardActor):
            return card_actor_layers(actor) is not None
        return mlp_layers(actor) is not None

    def _read_versions(self) -> tuple[int, ...]:
        return tuple(p._version for p in self._parameters)

    def current(self) -> bool:
        """Whether the module's weights are still the ones this was built from (no in-place write since)."""
        return self._read_versions() == self._versions

    def masked_logits(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Logits ``[B, A]`` (float32) of observations ``obs [B, obs_dim]`` (float32, C-contiguous) with the
        illegal actions (``legal`` False, bool ``[B, A]``) at ``MASKED_LOGIT``."""
        if not self.card:
            return _mlp(obs, np.empty((len(obs), 0), np.float32), legal, *self.first, self.hidden_w, self.hidden_b,
                        *self.output, self.activation)
        rows, slot_cards, slot_features = self.inputs.split(card_inputs(obs, self.players))
        # The head's logits and the card scorer's context come out of one product (self.output is both).
        out = _mlp(obs, rows, legal, *self.first, self.hidden_w, self.hidden_b, *self.output, self.activation)
        logits = np.ascontiguousarray(out[:, :legal.shape[1]])
        _card_scores(logits, np.ascontiguousarray(out[:, legal.shape[1]:]), slot_cards, slot_features, legal,
                     *self.card_in, *self.card_hidden, *self.card_out, self.activation)
        return logits


__all__ = ["CompiledActor"]
