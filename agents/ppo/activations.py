"""The hidden layers' activations: one table for every executor of the networks.

``NetworkConfig.activation`` names a row. The row gives the torch module that the networks' layers are built with
(:func:`agents.ppo.network.mlp`, :class:`agents.ppo.card_net.CardActor`), the torch function that the stacked
snapshot pool applies (:class:`agents.ppo.card_net.StackedCardActors`, :class:`agents.training.opponents.OpponentPool`)
and the code that the compiled kernels branch on (:mod:`agents.ppo.compiled_actor`). An executor reads a built
module's activation back with :func:`activation_of`, which knows no other module: what it cannot name runs on torch.

>>> [(a.name, a.module.__name__, a.code) for a in ACTIVATIONS.values()]
[('relu', 'ReLU', 1), ('tanh', 'Tanh', 2)]
>>> activation_of(nn.Tanh()) is ACTIVATIONS["tanh"], activation_of(nn.GELU())
(True, None)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass(frozen=True)
class Activation:
    """One activation, as each executor applies it."""

    name: str
    """Its name in ``NetworkConfig.activation``."""
    module: type[nn.Module]
    """The layer that the networks are built with."""
    function: Callable[[torch.Tensor], torch.Tensor]
    """The same function on a tensor (the stacked pool's batched pass)."""
    code: int
    """Its branch in the compiled kernels (``agents.ppo.compiled_actor._activate``)."""


ACTIVATIONS: dict[str, Activation] = {a.name: a for a in (Activation("relu", nn.ReLU, torch.relu, 1),
                                                          Activation("tanh", nn.Tanh, torch.tanh, 2))}
"""The activations, by name (``NetworkConfig.activation``'s choices; a test checks its ``Literal`` against them)."""


def activation_of(module: nn.Module) -> Activation | None:
    """The row of a module that is one of the table's layers (its very class, not a subclass); ``None`` otherwise."""
    return next((a for a in ACTIVATIONS.values() if type(module) is a.module), None)


__all__ = ["ACTIVATIONS", "Activation", "activation_of"]
