"""The loadable PPO agent: a trained :class:`~agents.ppo.network.ActorCritic` behind the agent protocol.

:func:`load_ppo_agent` turns any checkpoint written by ``train.py`` back into an agent with
``act`` / ``act_batch`` (spec ``"ppo:PATH"`` in :func:`agents.make_agent`; ``"ppo:pretrained"``
is the checkpoint shipped in ``agents/pretrained/``); :func:`export_agent` writes the agent part
of a run's checkpoint.

>>> import numpy as np
>>> from pcr_env.config import RulesConfig
>>> from agents.ppo.network import NetworkConfig
>>> net = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(32,), critic_hidden_sizes=(32,)))
>>> agent = PPOAgent(net, RulesConfig(), seed=0)
>>> mask = np.zeros((2, 70), np.int8); mask[0, [3, 9]] = 1; mask[1, 65] = 1
>>> [int(a) in legal for a, legal in zip(agent.act_batch(np.zeros((2, 797), np.float32), mask), [(3, 9), (65,)])]
[True, True]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.base import BaseAgent
from agents.ppo.checkpoint import acts_greedy, build_model, check_rules_compatible, read_checkpoint
from agents.ppo.compiled_actor import CompiledActor
from agents.ppo.network import ActorCritic, log_probs, sample_actions
from pcr_env.actions import NUM_ACTIONS
from pcr_env.config import RulesConfig


# --------------------------------------------------------------------------- the agent
class PPOAgent(BaseAgent):
    """A trained policy as an agent: greedy (most probable legal action) by default, or sampled.

    Only the actor is used, on the acting seat's observation: the agent sees what
    its seat sees. ``rules`` are the rules it was trained for (``.rules``). On the CPU the actor
    runs as :class:`~agents.ppo.compiled_actor.CompiledActor` (the same logits without torch's
    per-call cost; rebuilt if the module's weights are changed in place) unless ``compiled=False``.
    A greedy agent plays a forced move (one legal action) without a forward pass.
    """

    name = "ppo"

    def __init__(self, model: ActorCritic, rules: RulesConfig, *, greedy: bool = True, seed: int | None = None,
                 device: str = "cpu", source: str = "ppo", compiled: bool = True):
        super().__init__(seed)
        self.model = model.to(device).eval()
        self.rules, self.greedy, self.device, self.source = rules, greedy, torch.device(device), source
        self.obs_dim = model.obs_dim
        self.generator = torch.Generator(device=self.device)
        self._compilable = compiled and self.device.type == "cpu" and CompiledActor.fits(self.model.actor)
        self._compiled: CompiledActor | None = None
        self.reset(seed)

    @classmethod
    def from_checkpoint(cls, ckpt: dict[str, Any], *, rules: RulesConfig | dict[str, Any] | None = None,
                        greedy: bool | None = None, seed: int | None = None, device: str = "cpu",
                        source: str = "ppo", compiled: bool = True) -> PPOAgent:
        """The agent of a checkpoint dict: refused if ``rules`` (the table's) are another variant than it was
        trained for; frozen weights; acting as the file says (:func:`~agents.ppo.checkpoint.acts_greedy`)
        unless ``greedy`` is given (``False`` samples with a generator seeded by ``seed``)."""
        if rules is not None:
            check_rules_compatible(ckpt["rules"], rules, source)
        model = build_model(ckpt)
        model.requires_grad_(False)
        return cls(model, RulesConfig.from_kwargs(ckpt["rules"]), greedy=acts_greedy(ckpt) if greedy is None else greedy,
                   seed=seed, device=device, source=source, compiled=compiled)

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
        obs, legal = self._checked(obs, masks)
        if not self.greedy:
            logits = torch.as_tensor(self._logits(obs, legal), device=self.device)
            return sample_actions(log_probs(logits), self.generator).cpu().numpy().astype(np.int64)
        # A forced row (one legal action) needs no forward pass: the most probable legal action is the only one.
        actions = legal.argmax(1).astype(np.int64)
        open_rows = np.flatnonzero(legal.sum(1) > 1)
        if len(open_rows) == len(legal):
            return self._greedy(obs, legal)
        if len(open_rows):
            actions[open_rows] = self._greedy(obs[open_rows], legal[open_rows])
        return actions

    @torch.no_grad()
    def action_probabilities(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The policy's probability of every action ``[N, 70]`` (0 for illegal ones), e.g. for a search's candidates."""
        return log_probs(torch.as_tensor(self._logits(*self._checked(obs, masks)), device=self.device)).exp().cpu().numpy()

    def _greedy(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        logits = self._logits(obs, legal)
        if isinstance(logits, np.ndarray):
            return logits.argmax(-1).astype(np.int64)
        return logits.argmax(-1).cpu().numpy().astype(np.int64)

    def _checked(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Observations ``[N, obs_dim]`` and legal-action masks (bool ``[N, 70]``, each row with a legal action)."""
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
        return obs, legal

    def _logits(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray | torch.Tensor:
        """Masked logits ``[N, 70]``: a float32 array from the compiled actor on the CPU, else a torch tensor."""
        if self._compilable:
            if self._compiled is None or not self._compiled.current():
                self._compiled = CompiledActor(self.model.actor)
            return self._compiled.masked_logits(np.ascontiguousarray(obs, np.float32), legal)
        x = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        m = torch.as_tensor(legal, device=self.device)
        return self.model.masked_logits(x, m)

    def __repr__(self) -> str:
        return f"PPOAgent({self.source!r}, greedy={self.greedy}, seed={self.seed!r})"


def load_ppo_agent(path: str | Path, seed: int | None = None, device: str = "cpu", *, greedy: bool | None = None,
                   rules: RulesConfig | dict[str, Any] | None = None) -> PPOAgent:
    """Agent from a checkpoint file written by ``train.py``, ``"pretrained"`` (the shipped one) or a run
    directory (its ``best.pt``); the options as :meth:`PPOAgent.from_checkpoint`."""
    return PPOAgent.from_checkpoint(read_checkpoint(path), rules=rules, greedy=greedy, seed=seed, device=device,
                                    source=f"PPO checkpoint {str(path)!r}")


__all__ = ["PPOAgent", "load_ppo_agent"]
