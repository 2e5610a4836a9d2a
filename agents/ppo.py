"""The PPO team policy: network, masked action distribution, checkpoints and the loadable agent.

``train.py`` trains an :class:`ActorCritic` and writes checkpoints in the format
defined here; :func:`load_ppo_agent` turns any such checkpoint back into an
agent with ``act`` / ``act_batch`` (spec ``"ppo:PATH"`` in
:func:`agents.make_agent`; ``"ppo:pretrained"`` is the checkpoint shipped in
``agents/pretrained/``).

Network. The actor reads the acting seat's ego-centric observation (so both
partners, and the other team, share one set of weights: a *team policy*) and
outputs 70 logits, one per action id. Illegal actions get the logit
``MASKED_LOGIT`` (-1e8, not ``-inf``: ``0 * -inf`` would make the entropy NaN),
and the entropy is summed over legal actions only. The critic reads either the
same observation or, with ``central_critic`` (default), the full state of
:meth:`pcr_env.vector.VectorEnv.state` (all hands: known at training time, never
used for acting), which lowers the variance of the value target without biasing
the policy gradient. Layers use orthogonal initialisation (gain sqrt(2) for
hidden layers, 0.01 for the policy head, 1 for the value head).

Checkpoints are ``torch.save`` dictionaries holding only tensors and plain data,
so they load with ``weights_only=True``. Each carries the training config, the
rules it was trained on and the observation layout (slice names and sizes); a
checkpoint whose layout differs from this code's, or whose rules differ from
the table's (when the caller passes ``rules=``), is refused with a
``ValueError`` that says which field differs.

>>> import numpy as np
>>> from pcr_env.config import RulesConfig
>>> net = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(32,), critic_hidden_sizes=(32,)))
>>> agent = PPOAgent(net, RulesConfig(), seed=0)
>>> mask = np.zeros((2, 70), np.int8); mask[0, [3, 9]] = 1; mask[1, 65] = 1
>>> [int(a) in legal for a, legal in zip(agent.act_batch(np.zeros((2, 797), np.float32), mask), [(3, 9), (65,)])]
[True, True]
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import torch.nn as nn

from pcr_env.actions import NUM_ACTIONS
from pcr_env.config import RulesConfig
from pcr_env.observation import observation_layout, players_for_size, state_layout

from . import checkpoint_io
from .base import BaseAgent
from .card_net import CardActor
from .run_config import require
from .sparse_linear import SparseInputLinear, SparseRows

MASKED_LOGIT = -1e8
CHECKPOINT_FORMAT = "pcr-ppo"
CHECKPOINT_VERSION = 1
PRETRAINED_PATH = Path(__file__).resolve().parent / "pretrained" / "ppo_pretrained.pt"
# Rules fields that change the game a policy was trained for; the others (first
# dealer, round and redeal limits) only bound or seed an episode.
VARIANT_FIELDS = ("players", "passing", "double_run_bonus", "bidding", "min_bid", "target_score")


@dataclass
class NetworkConfig:
    """Shape of the actor-critic network (section ``network`` of a training config)."""

    hidden_sizes: tuple[int, ...] = (256, 256)
    """Widths of the actor's hidden layers (observation -> ... -> 70 logits)."""
    critic_hidden_sizes: tuple[int, ...] = (256, 256)
    """Widths of the critic's hidden layers (critic input -> ... -> 1 value)."""
    activation: Literal["relu", "tanh"] = "relu"
    """Hidden-layer nonlinearity."""
    central_critic: bool = True
    """The critic reads the full state (every hand; ``VectorEnv.state()``) instead of the
    acting seat's observation. Only the actor is used to play, so no hidden information
    leaks into decisions; the value target just gets less noisy."""
    card_head: bool = False
    """The actor is :class:`agents.card_net.CardActor`: the trunk also reads per-row card-play features, and
    one small network shared by all 52 cards scores each card action from that card's features (which are
    still out, boss cards, what would take the trick, what an opponent to play could hold). ``false``: the
    plain MLP of ``hidden_sizes``."""
    card_width: int = 64
    """Width of the card scorer's layers (with ``card_head``)."""

    def __post_init__(self) -> None:
        for name in ("hidden_sizes", "critic_hidden_sizes"):
            sizes = getattr(self, name)
            require(len(sizes) >= 1 and all(isinstance(s, int) and s >= 1 for s in sizes), name, sizes,
                    "a non-empty list of positive integers")
        require(self.activation in ("relu", "tanh"), "activation", self.activation, "'relu' or 'tanh'")
        require(isinstance(self.card_width, int) and self.card_width >= 1, "card_width", self.card_width,
                "a positive integer")


def layer_init(layer: nn.Linear, std: float = math.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    """Orthogonal weights with gain ``std`` and constant bias (the usual PPO initialisation)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


def mlp(in_dim: int, hidden: tuple[int, ...], out_dim: int, activation: str, out_std: float) -> nn.Sequential:
    """The layers of an actor or critic; the first reads the (mostly zero) encoding, so it is sparse-aware."""
    act = {"relu": nn.ReLU, "tanh": nn.Tanh}[activation]
    layers: list[nn.Module] = []
    for i, width in enumerate(hidden):
        linear = SparseInputLinear if i == 0 else nn.Linear
        layers += [layer_init(linear(in_dim, width)), act()]
        in_dim = width
    layers.append(layer_init(nn.Linear(in_dim, out_dim), std=out_std))
    return nn.Sequential(*layers)


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

    @property
    def sparse_input(self) -> bool:
        """Whether both first layers read :class:`SparseRows` directly (the plain MLPs; a card actor's features
        need the dense observation)."""
        return all(isinstance(net, nn.Sequential) and isinstance(net[0], SparseInputLinear)
                   for net in (self.actor, self.critic))

    def masked_logits(self, obs: torch.Tensor | SparseRows, mask: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, A]`` with illegal actions (``mask`` False) set to ``MASKED_LOGIT``.
        ``obs`` may be given by its non-zero entries (:func:`agents.sparse_linear.sparse_rows`)."""
        if self.config.card_head and isinstance(obs, SparseRows):  # its features read the dense observation
            obs = obs.dense()
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
    """One action per row drawn from ``exp(logp)``; illegal actions have probability exactly 0."""
    return torch.multinomial(logp.exp(), 1, generator=generator).squeeze(-1)


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


# --------------------------------------------------------------------------- checkpoints
def observation_signature(players: int) -> dict[str, Any]:
    """What a network's input layout depends on: slice names and sizes of observation and state."""
    return {
        "players": players,
        "num_actions": NUM_ACTIONS,
        "observation": [[name, sl.stop - sl.start] for name, sl in observation_layout(players).slices.items()],
        "state": [[name, sl.stop - sl.start] for name, sl in state_layout(players).slices.items()],
    }


def rules_dict(rules: RulesConfig | dict[str, Any]) -> dict[str, Any]:
    return rules.to_dict() if isinstance(rules, RulesConfig) else RulesConfig.from_kwargs(dict(rules)).to_dict()


def check_rules_compatible(trained: dict[str, Any], table: RulesConfig | dict[str, Any], source: str = "checkpoint") -> None:
    """Refuse to play ``table`` rules with a policy trained on ``trained`` rules (variant fields only)."""
    a, b = RulesConfig.from_kwargs(dict(trained)), RulesConfig.from_kwargs(rules_dict(table))
    diffs = [f"{f}: trained {getattr(a, f)!r}, table {getattr(b, f)!r}" for f in VARIANT_FIELDS
             if getattr(a, f) != getattr(b, f) and not (f == "min_bid" and a.min_bid_value == b.min_bid_value)]
    if diffs:
        raise ValueError(f"{source} was trained for another rules variant ({'; '.join(diffs)}): "
                         "train a policy for these rules or play it on the rules it was trained for")


def atomic_save(obj: dict[str, Any], path: str | Path, *, keep_previous: bool = False) -> None:
    """Write a checkpoint atomically with its checksum (:func:`agents.checkpoint_io.save`)."""
    checkpoint_io.save(obj, path, keep_previous=keep_previous)


def make_checkpoint(model: ActorCritic, config: dict[str, Any], rules: RulesConfig, **extra: Any) -> dict[str, Any]:
    """The agent part of a checkpoint: weights plus everything needed to rebuild and check them."""
    return {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "config": config,
        "rules": rules.to_dict(),
        "network": dataclasses.asdict(model.config),
        "signature": observation_signature(rules.players),
        "model": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
        **extra,
    }


def resolve_path(path: str | Path) -> Path:
    """``"pretrained"`` is the shipped checkpoint; anything else is a file path."""
    if str(path) == "pretrained":
        if not PRETRAINED_PATH.is_file():
            raise ValueError(f"the pretrained checkpoint {str(PRETRAINED_PATH)!r} is missing from this checkout")
        return PRETRAINED_PATH
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"PPO checkpoint {str(path)!r} does not exist (give a .pt file written by train.py, "
                         "e.g. RUN_DIR/checkpoints/best.pt, or 'pretrained')")
    return p


def read_checkpoint(path: str | Path, map_location: str = "cpu") -> dict[str, Any]:
    """Load and validate a checkpoint written by ``train.py`` (checksum, format, version, observation layout)."""
    p = resolve_path(path)
    return checkpoint_io.load(p, map_location=map_location, require_checksum=False, validate=validate_checkpoint)


def validate_checkpoint(ckpt: dict[str, Any]) -> None:
    """Raise ``ValueError`` unless ``ckpt`` is a pcr PPO checkpoint this code can use."""
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"it is not a pcr PPO checkpoint (no format {CHECKPOINT_FORMAT!r} marker)")
    if ckpt.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"it has checkpoint version {ckpt.get('version')!r}: this code reads version {CHECKPOINT_VERSION}")
    players = ckpt["rules"]["players"]
    expected = observation_signature(players)
    if ckpt["signature"] != expected:
        mine = dict(map(tuple, expected["observation"]))
        theirs = dict(map(tuple, ckpt["signature"]["observation"]))
        diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        raise ValueError(f"it was trained on an incompatible observation layout (differs in {diff or 'state/actions'}); "
                         "it cannot be used with this version of pcr_env")
    if not checkpoint_io.all_finite(ckpt["model"]):
        raise ValueError("its weights hold NaN or infinite values")


def checkpoint_network(ckpt: dict[str, Any]) -> NetworkConfig:
    """The :class:`NetworkConfig` a checkpoint was trained with (its layer widths may be stored as lists or tuples)."""
    return NetworkConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in ckpt["network"].items()})


def build_model(ckpt: dict[str, Any]) -> ActorCritic:
    """The network of a checkpoint, weights loaded, in eval mode."""
    players = ckpt["rules"]["players"]
    sig = observation_signature(players)
    obs_dim = sum(size for _, size in sig["observation"])
    state_dim = sum(size for _, size in sig["state"])
    model = ActorCritic(obs_dim, state_dim, sig["num_actions"], checkpoint_network(ckpt))
    model.load_state_dict(ckpt["model"])
    return model.eval()


def export_agent(source: str | Path, path: str | Path, **meta: Any) -> dict[str, Any]:
    """Write the agent part of a checkpoint (e.g. a run's ``latest.pt``, 47 MB with its optimiser and random
    streams) to ``path``: weights, value normaliser, rules and config, about 3 MB, as ``best.pt`` is.

    It acts as the run's evaluations did (``eval.greedy`` of its config, greedy if absent); ``meta`` adds to the
    source's iteration and decision counts. How the shipped file was made::

        export_agent("runs/distill2/checkpoints/latest.pt", "agents/pretrained/ppo_pretrained.pt")
    """
    ckpt = read_checkpoint(source)
    agent = {k: v for k, v in ckpt.items() if k not in ("training", "checksum")}
    agent.setdefault("act", {"greedy": bool(ckpt.get("config", {}).get("eval", {}).get("greedy", True))})
    counts = {k: ckpt.get("meta", {})[k] for k in ("iteration", "decisions") if k in ckpt.get("meta", {})}
    agent["meta"] = {**counts, **meta}
    atomic_save(agent, path)
    return agent


# --------------------------------------------------------------------------- the agent
class PPOAgent(BaseAgent):
    """A trained policy as an agent: greedy (most probable legal action) by default, or sampled.

    Only the actor is used, on the acting seat's observation: the agent sees what
    its seat sees. ``rules`` are the rules it was trained for (``.rules``).
    """

    name = "ppo"

    def __init__(self, model: ActorCritic, rules: RulesConfig, *, greedy: bool = True, seed: int | None = None,
                 device: str = "cpu", source: str = "ppo"):
        super().__init__(seed)
        self.model = model.to(device).eval()
        self.rules, self.greedy, self.device, self.source = rules, greedy, torch.device(device), source
        self.obs_dim = model.obs_dim
        self.generator = torch.Generator(device=self.device)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed ``self.rng`` and, from it, the torch generator that samples actions."""
        super().reset(seed)
        self.generator.manual_seed(int(self.rng.integers(2**63)))

    def get_state(self) -> dict[str, Any]:
        """``{"rng": numpy state dict, "generator": torch ByteTensor}`` (loads with ``weights_only=True``)."""
        return {**super().get_state(), "generator": self.generator.get_state()}

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        if "generator" in state:
            self.generator.set_state(state["generator"])

    def act(self, obs: dict[str, np.ndarray]) -> int:
        return int(self.act_batch(np.asarray(obs["observation"])[None], np.asarray(obs["action_mask"])[None])[0])

    @torch.no_grad()
    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self._logits(obs, masks)
        if self.greedy:
            actions = logits.argmax(-1)
        else:
            actions = sample_actions(log_probs(logits), self.generator)
        return actions.cpu().numpy().astype(np.int64)

    @torch.no_grad()
    def action_probabilities(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The policy's probability of every action ``[N, 70]`` (0 for illegal ones), e.g. for a search's candidates."""
        return log_probs(self._logits(obs, masks)).exp().cpu().numpy()

    def _logits(self, obs: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        obs, masks = np.asarray(obs), np.asarray(masks)
        if obs.ndim != 2 or masks.shape != (len(obs), NUM_ACTIONS):
            raise ValueError(f"act_batch expects observations [N, {self.obs_dim}] and masks [N, {NUM_ACTIONS}], "
                             f"got shapes {obs.shape} and {masks.shape}")
        if obs.shape[1] != self.obs_dim:
            raise ValueError(f"{self.source} expects observations of length {self.obs_dim} "
                             f"({self.rules.players} players), got {obs.shape[1]}: the table has another number of players")
        legal = masks.astype(bool)
        empty = ~legal.any(axis=1)
        if empty.any():
            raise ValueError(f"action_mask rows {np.flatnonzero(empty).tolist()} have no legal action")
        x = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        m = torch.as_tensor(legal, device=self.device)
        return self.model.masked_logits(x, m)

    def __repr__(self) -> str:
        return f"PPOAgent({self.source!r}, greedy={self.greedy}, seed={self.seed!r})"


def load_ppo_agent(path: str, seed: int | None = None, device: str = "cpu", *, greedy: bool | None = None,
                   rules: RulesConfig | dict[str, Any] | None = None) -> PPOAgent:
    """Agent from a checkpoint written by ``train.py`` (``"pretrained"``: the shipped one).

    ``rules``, when given, are the rules of the table: a checkpoint trained for
    another variant is refused. ``greedy=False`` samples from the policy with a
    generator seeded by ``seed``; ``None`` uses the checkpoint's setting (``eval.greedy``
    of its training config; greedy if absent).
    """
    ckpt = read_checkpoint(path)
    source = f"PPO checkpoint {str(path)!r}"
    if rules is not None:
        check_rules_compatible(ckpt["rules"], rules, source)
    model = build_model(ckpt)
    if greedy is None:
        greedy = bool(ckpt.get("act", {}).get("greedy", True))
    return PPOAgent(model, RulesConfig.from_kwargs(ckpt["rules"]), greedy=greedy, seed=seed, device=device,
                    source=source)


__all__ = [
    "MASKED_LOGIT", "NetworkConfig", "ActorCritic", "ValueNorm", "PPOAgent", "layer_init", "log_probs",
    "masked_entropy", "sample_actions", "observation_signature", "check_rules_compatible", "atomic_save",
    "make_checkpoint", "read_checkpoint", "export_agent", "validate_checkpoint", "build_model", "load_ppo_agent", "PRETRAINED_PATH", "VARIANT_FIELDS",
]
