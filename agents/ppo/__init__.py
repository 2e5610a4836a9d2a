"""The learned PPO policy: network, card-aware actor, checkpoint format and the loadable agent (needs torch).

``network`` (:class:`ActorCritic`, :class:`NetworkConfig`, the masked action distribution),
``card_net`` (the card-aware actor and its per-card features), ``sparse_linear`` (a first
layer that skips the observation's zeros), ``checkpoint`` (atomic, checksummed, pickle-free
files and the PPO format) and ``agent`` (:class:`PPOAgent`, :func:`load_ppo_agent`,
:func:`export_agent`; spec ``ppo:PATH``).
"""

from agents.ppo.agent import PPOAgent, export_agent, load_ppo_agent
from agents.ppo.checkpoint import (
                                   CHECKPOINT_FORMAT,
                                   CHECKPOINT_VERSION,
                                   PRETRAINED_PATH,
                                   VARIANT_FIELDS,
                                   atomic_save,
                                   build_model,
                                   check_rules_compatible,
                                   checkpoint_network,
                                   make_checkpoint,
                                   observation_signature,
                                   read_checkpoint,
                                   resolve_path,
                                   rules_dict,
                                   validate_checkpoint,
)
from agents.ppo.network import (
                                   MASKED_LOGIT,
                                   ActorCritic,
                                   NetworkConfig,
                                   ValueNorm,
                                   layer_init,
                                   log_probs,
                                   masked_entropy,
                                   mlp,
                                   sample_actions,
)

__all__ = [
    "CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "MASKED_LOGIT", "PRETRAINED_PATH", "VARIANT_FIELDS", "ActorCritic",
    "NetworkConfig", "PPOAgent", "ValueNorm", "atomic_save", "build_model", "check_rules_compatible",
    "checkpoint_network", "export_agent", "layer_init", "load_ppo_agent", "log_probs", "make_checkpoint",
    "masked_entropy", "mlp", "observation_signature", "read_checkpoint", "resolve_path", "rules_dict",
    "sample_actions", "validate_checkpoint",
]
