"""The heuristic's shortcuts give the answers of the plain definitions they replace.

``choose_pass`` values each candidate from per-suit terms instead of re-valuing
the whole remaining hand, ``best_trump`` is cached, and ``act_batch`` finds the
legal actions of all rows at once; each is checked here against the direct
computation, over random hands and over decisions of mixed play in every variant.
"""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from conftest import RULE_VARIANTS

from agents.scripted.heuristic import _GIFT_VALUE, PASS_SIZE, HeuristicAgent, best_trump, choose_pass, estimate_tricks
from pcr_env.config import RulesConfig
from pcr_env.vector import VectorEnv


def _plain_best_trump(hand: list[int], players: int) -> tuple[int, float]:
    value, _, suit = max((estimate_tricks(hand, s, players), sum(1 for c in hand if c // 13 == s), s) for s in range(4))
    return suit, value


def _plain_choose_pass(hand: tuple[int, ...], to_partner: bool, players: int) -> tuple[int, ...]:
    """The definition: try every set of the lowest k cards of up to three suits, value the rest."""
    by_suit = [sorted(c for c in hand if c // 13 == s) for s in range(4)]
    options = {tuple(sorted(c for s, k in enumerate(ks) for c in by_suit[s][:k]))
               for ks in product(range(PASS_SIZE + 1), repeat=4)
               if sum(ks) == PASS_SIZE and all(k <= len(by_suit[s]) for s, k in enumerate(ks))}
    best = None
    for option in sorted(options):
        _, value = _plain_best_trump([c for c in hand if c not in option], players)
        gift = sum(_GIFT_VALUE.get(c % 13, 0.0) for c in option)
        score = value + 0.8 * gift if to_partner else value - 1.2 * gift - 0.01 * sum(c % 13 for c in option)
        key = (round(score, 6), tuple(-c for c in option))
        if best is None or key > best[0]:
            best = (key, option)
    return best[1]


@pytest.mark.parametrize("players", [4, 6])
def test_valuation_shortcuts_match_the_definitions(players):
    rng = np.random.default_rng(players)
    size = 13 if players == 4 else 12  # a six-player declarer's hand with the kitty
    for i in range(300):
        hand = tuple(sorted(rng.permutation(52)[:size].tolist()))
        assert best_trump(list(hand), players) == _plain_best_trump(list(hand), players)
        to_partner = bool(i % 2)
        assert choose_pass(hand, to_partner, players) == _plain_choose_pass(hand, to_partner, players)


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=[",".join(f"{k}={v}" for k, v in r.items()) or "default"
                                                      for r in RULE_VARIANTS])
def test_act_batch_matches_act_over_mixed_play(rules):
    config = RulesConfig(**rules)
    agent = HeuristicAgent(seed=0, rules=config)
    venv = VectorEnv(8, seed=5, **rules)
    obs, masks, _ = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        batch = agent.act_batch(obs, masks)
        assert batch.dtype == np.int64
        assert batch.tolist() == [agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
        random_moves = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, masks, *_ = venv.step(np.where(rng.random(len(batch)) < 0.3, random_moves, batch))


def test_act_batch_refuses_a_row_without_legal_actions_like_act():
    venv = VectorEnv(2, seed=1)
    obs, masks, _ = venv.reset()
    masks = masks.copy()
    masks[1] = 0
    with pytest.raises(ValueError, match="no legal action"):
        HeuristicAgent().act_batch(obs, masks)
    with pytest.raises(ValueError, match="act_batch expects"):
        HeuristicAgent().act_batch(obs[0], masks[0])
