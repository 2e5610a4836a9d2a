"""The plain MLP of the actor and critic: built by :func:`mlp`, read back by :func:`mlp_layers`.

Its own module, below :mod:`agents.ppo.network` and :mod:`agents.ppo.card_net`, so that every executor that runs a
plain actor another way than its forward pass (:class:`agents.ppo.compiled_actor.CompiledActor`, the stacked
snapshot pool of :class:`agents.training.opponents.OpponentPool`, :meth:`agents.ppo.card_net.CardActor.load_plain`)
reads its layers the same way, as :func:`agents.ppo.card_net.card_actor_layers` reads a card actor's.

>>> layers = mlp_layers(mlp(6, (4, 4), 3, "tanh", 1.0))
>>> [tuple(m.weight.shape) for m in layers.linears], layers.activation.name
([(4, 6), (4, 4), (3, 4)], 'tanh')
>>> mlp_layers(nn.Sequential(nn.Linear(6, 4), nn.LayerNorm(4), nn.Linear(4, 3))) is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch.nn as nn

from agents.ppo.activations import ACTIVATIONS, Activation, activation_of
from agents.ppo.sparse_linear import SparseInputLinear


def layer_init(layer: nn.Linear, std: float = math.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    """Orthogonal weights with gain ``std`` and constant bias (the usual PPO initialisation)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


def mlp(in_dim: int, hidden: tuple[int, ...], out_dim: int, activation: str, out_std: float) -> nn.Sequential:
    """The layers of an actor or critic; the first reads the (mostly zero) encoding, so it is sparse-aware."""
    act = ACTIVATIONS[activation].module
    layers: list[nn.Module] = []
    for i, width in enumerate(hidden):
        linear = SparseInputLinear if i == 0 else nn.Linear
        layers += [layer_init(linear(in_dim, width)), act()]
        in_dim = width
    layers.append(layer_init(nn.Linear(in_dim, out_dim), std=out_std))
    return nn.Sequential(*layers)


@dataclass(frozen=True)
class MlpLayers:
    """A plain MLP's layers, as its forward pass applies them: each linear layer but the last followed by the
    activation."""

    linears: tuple[nn.Linear, ...]
    activation: Activation


_LINEAR = (nn.Linear, SparseInputLinear)  # the sparse-aware layer computes the same function as nn.Linear


def mlp_layers(module: nn.Module) -> MlpLayers | None:
    """The layers of a plain MLP (:func:`mlp`), or ``None`` where they could not compute its outputs: not an
    ``nn.Sequential`` itself (a subclass may compute otherwise), fewer than two linear layers, a layer of another
    kind, an activation not in the table or not the same after every hidden layer."""
    if type(module) is not nn.Sequential:
        return None
    layers = list(module)
    linears, activations = layers[0::2], layers[1::2]
    activation = activation_of(activations[0]) if activations else None
    if (activation is None or len(layers) % 2 == 0 or any(type(m) not in _LINEAR for m in linears)
            or any(activation_of(m) is not activation for m in activations)):
        return None
    return MlpLayers(tuple(linears), activation)


__all__ = ["MlpLayers", "layer_init", "mlp", "mlp_layers"]
