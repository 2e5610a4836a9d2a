"""The learned PPO policy: network, card-aware actor, checkpoint files and the loadable agent (needs torch).

``network`` (:class:`ActorCritic`, :class:`NetworkConfig`, the masked action distribution),
``card_net`` (the card-aware actor), ``card_features`` (its per-card features, compiled kernels),
``sparse_linear`` (a first layer that skips the observation's zeros), ``files`` (atomic, checksummed,
pickle-free files), ``checkpoint`` (the PPO format: what a file holds, :func:`read_checkpoint`,
:func:`export_agent`) and ``agent`` (:class:`PPOAgent`, whose ``from_checkpoint`` every
loader goes through, and :func:`load_ppo_agent`; spec ``ppo:PATH``).
"""

from agents.ppo.agent import PPOAgent, load_ppo_agent
from agents.ppo.checkpoint import PRETRAINED_PATH, export_agent, make_checkpoint, read_checkpoint
from agents.ppo.network import ActorCritic, NetworkConfig, ValueNorm

__all__ = ["PRETRAINED_PATH", "ActorCritic", "NetworkConfig", "PPOAgent", "ValueNorm", "export_agent",
           "load_ppo_agent", "make_checkpoint", "read_checkpoint"]
