"""A card-aware actor: the usual trunk, and one scorer shared by every card.

:class:`CardActor` reads the card-play features of :mod:`agents.ppo.card_features` (which cards are still out,
boss cards, what would take the trick, what an opponent still to play could hold: computed from the observation
alone, in float32 whatever the autocast). It feeds their per-row features to the usual trunk and scores every card
with one small network over that card's features and the trunk's output, so a rule learned for one card holds for
all of them; that score is added to the trunk's logits of the card actions (pass, discard, play). It is chosen with
``network.card_head: true`` (``NetworkConfig``). :class:`StackedCardActors` evaluates several of them in one
batched pass (the snapshot pool).

>>> import numpy as np, torch
>>> from pcr_env.engine import new_game
>>> from pcr_env.config import RulesConfig
>>> from pcr_env.observation import encode_observation
>>> obs = torch.from_numpy(encode_observation(new_game(RulesConfig(first_dealer=0), np.random.default_rng(1)), 1))[None]
>>> per_card, per_row = CardFeatures(4)(obs)
>>> tuple(per_card.shape), tuple(per_row.shape), int(per_card[0, CardFeatures(4).index("hand")].sum())
((1, 31, 52), (1, 39), 13)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn

from agents.ppo.activations import ACTIVATIONS, Activation, activation_of
from agents.ppo.card_features import CardInputs, card_feature_names, card_features, card_inputs, row_feature_size
from agents.ppo.mlp import mlp_layers
from agents.ppo.shapes import padded_size
from agents.ppo.sparse_linear import SparseInputLinear
from pcr_env.cards import NUM_CARDS


class CardFeatures(nn.Module):
    """Observation ``[B, obs_dim]`` -> (per-card ``[B, F, 52]``, per-row ``[B, G]``) features (the tables of
    :mod:`agents.ppo.card_features`).

    No parameters and no gradient: every value is a function of the observation, computed once per row by a
    compiled kernel (:func:`card_features`), in float32 whatever the autocast.
    """

    def __init__(self, players: int):
        super().__init__()
        self.players = players
        self.names = card_feature_names(players)
        self.num_card_features = len(self.names)
        self.num_row_features = row_feature_size(players)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cards, rows = card_features(obs.detach().float().cpu().numpy(), self.players)
        return torch.from_numpy(cards).to(obs.device), torch.from_numpy(rows).to(obs.device)


def _init(layer: nn.Linear, std: float = math.sqrt(2)) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


class CardActor(nn.Module):
    """Trunk over the observation and the per-row features, plus one scorer shared by all cards.

    ``forward(obs, packed=None, mask=None, *, pad=False) -> logits [B, num_actions]``: the trunk's logits, with the logit of every card
    action of a card in hand raised by the card scorer's output for that card (``card_width`` wide, two hidden
    layers, reading the card's features and a ``card_width`` projection of the trunk's last hidden layer). A card
    action is only ever legal for a card in hand (pass, discard, play), so the scorer runs over the held cards
    alone; given the legal-action ``mask``, over the legal ones alone (the other logits are masked anyway, so the
    masked logits are the same). ``packed`` is :func:`card_inputs` of ``obs`` (computed here when not given), laid
    out as :attr:`inputs` says. ``pad`` pads the scorer's rows to :func:`agents.ppo.shapes.padded_size` (the same
    logits, in fewer shapes: the caller's choice, the trainer's on the CPU in bfloat16).
    """

    def __init__(self, obs_dim: int, players: int, hidden_sizes: tuple[int, ...], num_actions: int,
                 activation: str = "relu", card_width: int = 64):
        super().__init__()
        self.players = players
        self.features = CardFeatures(players)
        self.inputs = CardInputs(players)
        act = ACTIVATIONS[activation].module
        layers: list[nn.Module] = []
        width = obs_dim + self.features.num_row_features
        for i, h in enumerate(hidden_sizes):
            # The first layer reads the mostly-zero observation (and the row features): sparse-aware, as the plain
            # actor's (agents.ppo.sparse_linear; same parameters as nn.Linear).
            layers += [_init((SparseInputLinear if i == 0 else nn.Linear)(width, h)), act()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.head = _init(nn.Linear(width, num_actions), 0.01)
        self.context = _init(nn.Linear(width, card_width))
        self.card_in = _init(nn.Linear(self.features.num_card_features, card_width))
        self.card_hidden = _init(nn.Linear(card_width, card_width))
        self.card_out = _init(nn.Linear(card_width, 1), 0.01)
        self.act = act()

    @torch.no_grad()
    def load_plain(self, plain: nn.Module) -> None:
        """Take the weights of a plain actor of the same hidden sizes (:func:`agents.ppo.mlp.mlp`) so that this actor
        computes exactly its logits: the trunk reads the row features with zero weights and the card scorer's
        output layer starts at zero. Training then adds card play to a network that already bids and passes."""
        layers = mlp_layers(plain)
        if layers is None:
            raise ValueError(f"a {type(plain).__name__} is not a plain actor (agents.ppo.mlp.mlp_layers cannot read it)")
        mine = [m for m in self.trunk if isinstance(m, nn.Linear)] + [self.head]
        shapes = [tuple(m.weight.shape) for m in layers.linears]
        expected = [(m.weight.shape[0], m.weight.shape[1] - (self.features.num_row_features if i == 0 else 0))
                    for i, m in enumerate(mine)]
        if shapes != expected:
            raise ValueError(f"a plain actor with layers {shapes} does not fit this card actor (layers {expected})")
        if layers.activation is not activation_of(self.act):
            raise ValueError(f"a plain actor of activation {layers.activation.name!r} does not fit this card actor "
                             f"({type(self.act).__name__})")
        for src, dst in zip(layers.linears, mine):
            dst.weight.zero_()
            dst.weight[:, :src.weight.shape[1]] = src.weight
            dst.bias.copy_(src.bias)
        self.card_out.weight.zero_()
        self.card_out.bias.zero_()

    def forward(self, obs: torch.Tensor, packed: torch.Tensor | None = None, mask: torch.Tensor | None = None, *,
                pad: bool = False) -> torch.Tensor:
        if packed is None:
            packed = torch.from_numpy(card_inputs(obs.detach().float().cpu().numpy(), self.players)).to(obs.device)
        rows, slot_cards, slot_features = self.inputs.split(packed)
        h = self.trunk(torch.cat([obs, rows.to(obs.dtype)], 1))
        logits = self.head(h)
        # The held cards of all rows as one list: (row, slot) pairs, then their card and features.
        held = slot_cards >= 0
        if mask is not None:  # only a legal card's logit survives the mask: score no other
            held &= mask[:, :NUM_CARDS].gather(1, slot_cards.long().clamp(min=0))
        r, j = torch.nonzero(held, as_tuple=True)
        card = slot_cards[r, j].long()
        # Where the caller pads (the trainer on the CPU in bfloat16: agents.training.compute.Compute.pads) the scorer's
        # rows are padded to a few sizes (agents.ppo.shapes: oneDNN compiles a kernel per shape) with copies of the
        # first (row 0, slot 0), whose scores are dropped.
        m = len(r)
        extra = r.new_zeros(padded_size(m) - m if pad else 0)
        rp, jp = torch.cat([r, extra]), torch.cat([j, extra])
        features = slot_features[rp, jp]
        u = self.act(self.card_in(features) + self.context(h)[rp])
        score = self.card_out(self.act(self.card_hidden(u))).squeeze(-1)[:m]
        # Card c's action is action c (pass, discard, play: pcr_env.actions), the first NUM_CARDS of every row.
        flat = r * logits.shape[1] + card
        return logits.reshape(-1).index_add(0, flat, score.to(logits.dtype)).view_as(logits)


@dataclass(frozen=True)
class CardActorLayers:
    """A :class:`CardActor`'s layers, as its forward pass applies them: the trunk's linear layers, each followed by
    the activation; the head (the logits) and the context on the trunk's output; then the card scorer,
    ``card_out(act(card_hidden(act(card_in(features) + context))))``."""

    trunk: tuple[nn.Linear, ...]
    head: nn.Linear
    context: nn.Linear
    card_in: nn.Linear
    card_hidden: nn.Linear
    card_out: nn.Linear
    activation: Activation


_PARTS = {"features", "trunk", "head", "context", "card_in", "card_hidden", "card_out", "act"}  # CardActor's modules


def card_actor_layers(actor: nn.Module) -> CardActorLayers | None:
    """The layers of ``actor`` for the executors that run a :class:`CardActor` another way than its forward pass
    (:class:`StackedCardActors`, :class:`agents.ppo.compiled_actor.CompiledActor`), or ``None`` where they could not
    compute its logits: not a CardActor itself (a subclass may compute otherwise), a module added or replaced, a
    layer of another kind, an activation not in the table. ``None`` sends the actor to its own forward pass."""
    if type(actor) is not CardActor or {name for name, _ in actor.named_children()} != _PARTS:
        return None
    activation, trunk = activation_of(actor.act), list(actor.trunk)
    if (activation is None or type(actor.features) is not CardFeatures or type(actor.trunk) is not nn.Sequential
            or not trunk or len(trunk) % 2 or any(activation_of(m) is not activation for m in trunk[1::2])
            or next(actor.named_parameters(recurse=False), None) is not None):
        return None
    scorer = (actor.head, actor.context, actor.card_in, actor.card_hidden, actor.card_out)
    # The first layer of the trunk is sparse-aware (the same function as nn.Linear); every other one is an nn.Linear.
    if not (type(trunk[0]) in (SparseInputLinear, nn.Linear) and all(type(m) is nn.Linear for m in trunk[2::2] + list(scorer))):
        return None
    return CardActorLayers(tuple(trunk[0::2]), *scorer, activation)


def stacked_linear(layers: list[nn.Linear], dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights ``[n, in, out]`` and biases ``[n, 1, out]`` of ``n`` linear layers of one shape, for ``torch.baddbmm``."""
    weight = torch.stack([layer.weight.detach().t() for layer in layers]).to(dtype).contiguous()
    return weight, torch.stack([layer.bias.detach() for layer in layers])[:, None, :].to(dtype)


class StackedCardActors:
    """Several :class:`CardActor` of one shape evaluated in one batched pass (``torch.baddbmm`` over their stacked
    weights), in ``dtype``: actor ``i`` scores the rows of block ``i``. The same logits as each actor's own forward
    pass (to the rounding of ``dtype``); the scorer runs over every hand slot, its output kept for held cards only."""

    def __init__(self, actors: list[CardActor], dtype: torch.dtype = torch.float32):
        if not self.fits(actors):
            raise ValueError("StackedCardActors: the actors must be CardActors of one shape")
        first, layers = actors[0], [card_actor_layers(actor) for actor in actors]
        self.players, self.inputs, self.dtype = first.players, first.inputs, dtype
        self.activation = layers[0].activation.function
        self.trunk = [stacked_linear([each.trunk[i] for each in layers], dtype) for i in range(len(layers[0].trunk))]
        self.head, self.context, self.card_in, self.card_hidden, self.card_out = (
            stacked_linear([getattr(each, name) for each in layers], dtype)
            for name in ("head", "context", "card_in", "card_hidden", "card_out"))

    @staticmethod
    def fits(actors: list[nn.Module]) -> bool:
        """Whether ``actors`` are all :class:`CardActor` of known layers (:func:`card_actor_layers`) with the same
        parameter shapes and activation."""
        layers = [card_actor_layers(actor) for actor in actors]
        if not actors or any(each is None for each in layers):
            return False

        def shape(actor: nn.Module) -> list[tuple[str, tuple[int, ...]]]:
            return [(k, tuple(v.shape)) for k, v in actor.state_dict().items()]

        return all(each.activation is layers[0].activation for each in layers) and all(
            shape(actor) == shape(actors[0]) for actor in actors[1:])

    def __len__(self) -> int:
        return len(self.head[0])

    @torch.no_grad()
    def __call__(self, obs: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
        """Logits ``[n, W, A]`` (float32, unmasked) of observation blocks ``obs [n, W, obs_dim]`` and their
        :func:`card_inputs` ``packed [n, W, CardInputs.size]`` (float32)."""
        rows, slot_cards, slot_features = self.inputs.split(packed)
        s, f = self.inputs.slots, self.inputs.num_card_features
        n, width = obs.shape[:2]
        h = torch.cat([obs, rows], -1).to(self.dtype)
        for weight, bias in self.trunk:
            h = self.activation(torch.baddbmm(bias, h, weight))
        logits = torch.baddbmm(self.head[1], h, self.head[0]).float()
        context = torch.baddbmm(self.context[1], h, self.context[0]).repeat_interleave(s, dim=1)
        held = (slot_cards >= 0).reshape(n, width * s, 1)
        # Slots past the hand are scored too, then dropped: their features are zeroed so they stay finite whatever
        # the caller packed there (a NaN in one row of a bfloat16 matmul can reach other rows).
        features = slot_features.reshape(n, width * s, f).masked_fill(~held, 0.0).to(self.dtype)
        u = self.activation(torch.baddbmm(self.card_in[1], features, self.card_in[0]) + context)
        u = self.activation(torch.baddbmm(self.card_hidden[1], u, self.card_hidden[0]))
        score = torch.baddbmm(self.card_out[1], u, self.card_out[0]).float().view(n, width, s)
        score = score.where(slot_cards >= 0, torch.zeros((), dtype=score.dtype))  # past the hand: no card
        card_logits = logits[..., :NUM_CARDS].scatter_add(2, slot_cards.long().clamp(min=0), score)
        return torch.cat([card_logits, logits[..., NUM_CARDS:]], -1)


__all__ = ["CardFeatures", "CardActor", "CardActorLayers", "StackedCardActors", "card_actor_layers", "stacked_linear"]
