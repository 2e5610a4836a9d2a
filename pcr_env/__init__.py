"""pcr: the Pass Cut Run card game for reinforcement learning.

>>> from pcr_env import pass_cut_run_v0
>>> env = pass_cut_run_v0.env()
>>> env.reset(seed=0)
"""

import pettingzoo as _pettingzoo

from . import actions, cards, engine, observation
from .actions import NUM_ACTIONS, PASS_BID, action_id, bid_action, card_action, describe_action, trump_action
from .cards import card_str, parse_card, parse_cards
from .config import RulesConfig
from .engine import GameState, Phase, RoundResult
from .observation import ObservationView, decode_observation, encode_observation, encode_state
from . import pass_cut_run_v0
from . import gym_env  # registers the Gymnasium id "PassCutRun-v0" (agents are resolved lazily)

__version__ = "0.1.0"

# PettingZoo >= 1.27 has a registry: pettingzoo.make("aec", "pcr/pass_cut_run-v0", players=6).
if hasattr(_pettingzoo, "register"):
    _pettingzoo.register("aec", "pcr/pass_cut_run-v0", entry_point="pcr_env.pass_cut_run_v0:env")

__all__ = [
    "actions", "cards", "engine", "observation", "pass_cut_run_v0", "gym_env", "NUM_ACTIONS", "PASS_BID", "action_id",
    "bid_action", "card_action", "describe_action", "trump_action", "card_str", "parse_card", "parse_cards", "RulesConfig",
    "GameState", "Phase", "RoundResult", "ObservationView", "decode_observation", "encode_observation", "encode_state",
]
