"""The snapshot pool's batched forward pass (agents.training.opponents.OpponentPool.act_batch): the same
actions as each snapshot's own act_batch, its own random stream per snapshot (plain and card-aware
networks), a fallback for other agents, and a rebuilt stack when a slot is replaced."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.ppo import ActorCritic, NetworkConfig, PPOAgent
from agents.scripted.random_agent import RandomAgent
from agents.training.opponents import OpponentPool, snapshot_agent
from pcr_env.config import RulesConfig
from pcr_env.vector import VectorEnv

RULES = RulesConfig()


def positions(n: int = 48, steps: int = 25) -> tuple[np.ndarray, np.ndarray]:
    env = VectorEnv(n, seed=3)
    obs, masks, _ = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(steps):  # passes, bids, trump and play positions mixed
        obs, masks, _, _, _, _ = env.step((rng.random(masks.shape) * masks).argmax(1))
    return obs, masks


def snapshots(count: int, seed0: int = 0, greedy: bool = False) -> list[PPOAgent]:
    out = []
    for i in range(count):
        torch.manual_seed(100 + i)
        agent = snapshot_agent(ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(64, 32))), RULES, seed0 + i)
        agent.greedy = greedy
        out.append(agent)
    return out


def per_agent(agents, slots, obs, masks) -> np.ndarray:
    actions = np.empty(len(slots), np.int64)
    for slot in np.unique(slots):
        rows = np.flatnonzero(slots == slot)
        actions[rows] = agents[slot].act_batch(obs[rows], masks[rows])
    return actions


@pytest.mark.parametrize("greedy", [False, True])
def test_batched_snapshots_act_as_each_snapshot_would_with_its_own_stream(greedy):
    obs, masks = positions()
    pool, reference = OpponentPool(5, 2.0), snapshots(5, greedy=greedy)
    for i, agent in enumerate(snapshots(5, greedy=greedy)):
        pool.add(agent, i)
    rng = np.random.default_rng(1)
    for _ in range(6):  # several steps: every snapshot's stream advances exactly as on its own
        slots = rng.integers(5, size=len(obs))
        slots[:3] = 4  # one snapshot with several rows, and (often) one with none
        assert np.array_equal(pool.act_batch(slots, obs, masks), per_agent(reference, slots, obs, masks))
    for mine, theirs in zip(pool.agents, reference):
        assert torch.equal(mine.get_state()["generator"], theirs.get_state()["generator"])


def test_a_replaced_slot_plays_with_its_new_weights():
    obs, masks = positions()
    pool = OpponentPool(2, 0.0)
    first = snapshots(2, greedy=True)
    for i, agent in enumerate(first):
        pool.add(agent, i)
    slots = np.zeros(len(obs), np.int64)
    before = pool.act_batch(slots, obs, masks)
    newcomer = snapshots(3, greedy=True)[2]
    assert pool.add(newcomer, 9) == 0  # the oldest slot is reused
    assert np.array_equal(pool.act_batch(slots, obs, masks), newcomer.act_batch(obs, masks))
    assert not np.array_equal(before, newcomer.act_batch(obs, masks))


@pytest.mark.parametrize("network", ["plain", "card-aware"])
def test_bfloat16_snapshots_play_legal_moves_close_to_float32(network):
    make = snapshots if network == "plain" else card_snapshots
    obs, masks = positions()
    pool16, pool32 = OpponentPool(3, 2.0, torch.bfloat16), OpponentPool(3, 2.0)
    for i, (a, b) in enumerate(zip(make(3, greedy=True), make(3, greedy=True))):
        pool16.add(a, i), pool32.add(b, i)
    slots = np.arange(len(obs)) % 3
    a16, a32 = pool16.act_batch(slots, obs, masks), pool32.act_batch(slots, obs, masks)
    assert masks[np.arange(len(obs)), a16].all()
    assert (a16 == a32).mean() > 0.9  # greedy choices differ only where two logits are within rounding


def test_other_agents_in_the_pool_play_one_by_one():
    obs, masks = positions()
    pool = OpponentPool(2, 2.0)
    pool.add(RandomAgent(seed=1), 0)
    pool.add(snapshots(1)[0], 1)
    actions = pool.act_batch(np.arange(len(obs)) % 2, obs, masks)
    assert masks[np.arange(len(obs)), actions].all()


def card_snapshots(count: int, greedy: bool = False) -> list[PPOAgent]:
    """Card-aware snapshots whose card scorer matters (its output layer scaled up from the near-zero init)."""
    net = NetworkConfig(hidden_sizes=(32, 16), card_head=True, card_width=8)
    out = []
    for i in range(count):
        torch.manual_seed(200 + i)
        model = ActorCritic(797, 1369, 70, net)
        with torch.no_grad():
            model.actor.card_out.weight.normal_(0.0, 1.0)
            model.actor.head.weight.mul_(30.0)
        agent = snapshot_agent(model, RULES, i)
        agent.greedy = greedy
        out.append(agent)
    return out


@pytest.mark.parametrize("greedy", [False, True])
def test_card_aware_snapshots_act_in_one_pass_as_each_snapshot_would(greedy):
    """A pool of card-aware networks (network.card_head) is batched too (agents.ppo.card_net.StackedCardActors):
    the same actions and random streams as each snapshot's own act_batch."""
    obs, masks = positions()
    pool, reference = OpponentPool(3, 2.0), card_snapshots(3, greedy)
    for i, agent in enumerate(card_snapshots(3, greedy)):
        pool.add(agent, i)
    assert pool._stacked() is not None
    rng = np.random.default_rng(2)
    for _ in range(4):
        slots = rng.integers(3, size=len(obs))
        assert np.array_equal(pool.act_batch(slots, obs, masks), per_agent(reference, slots, obs, masks))
    for mine, theirs in zip(pool.agents, reference):
        assert torch.equal(mine.get_state()["generator"], theirs.get_state()["generator"])


def test_stacked_card_actors_compute_each_actors_logits():
    from agents.ppo.card_features import card_inputs
    from agents.ppo.card_net import StackedCardActors

    obs, _ = positions()
    actors = [a.model.actor for a in card_snapshots(2)]
    x = torch.from_numpy(obs)
    packed = torch.from_numpy(card_inputs(obs, 4))
    stacked = StackedCardActors(actors)(torch.stack([x, x]), torch.stack([packed, packed]))
    for i, actor in enumerate(actors):
        assert torch.allclose(stacked[i], actor(x, packed), atol=1e-5)  # no mask: every held card scored
    assert len(StackedCardActors(actors)) == 2
    with pytest.raises(ValueError, match="CardActors of one shape"):
        StackedCardActors([actors[0], snapshots(1)[0].model.actor])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_stacked_card_actors_ignore_whatever_lies_past_the_hand(dtype):
    """Slots past the hand are scored and dropped: NaNs packed there (a caller's leftover memory) change nothing,
    in bfloat16 too, where a NaN in one row of a matmul can reach other rows."""
    from agents.ppo.card_features import CardInputs, card_inputs
    from agents.ppo.card_net import StackedCardActors

    obs, _ = positions()
    actors = [a.model.actor for a in card_snapshots(2)]
    packed = card_inputs(obs, 4)
    dirty = packed.copy()
    _, slot_cards, features = CardInputs(4).split(dirty)
    features[slot_cards < 0] = np.nan
    assert np.isnan(dirty).any()
    x = torch.from_numpy(obs)
    stacked = StackedCardActors(actors, dtype)
    clean_out = stacked(torch.stack([x, x]), torch.from_numpy(np.stack([packed, packed])))
    dirty_out = stacked(torch.stack([x, x]), torch.from_numpy(np.stack([dirty, dirty])))
    assert torch.isfinite(dirty_out).all() and torch.equal(clean_out, dirty_out)


def test_a_pool_of_card_aware_and_plain_snapshots_plays_slot_by_slot():
    obs, masks = positions()
    pool = OpponentPool(2, 2.0)
    pool.add(card_snapshots(1)[0], 0)
    pool.add(snapshots(1)[0], 1)
    assert pool._stacked() is None
    actions = pool.act_batch(np.arange(len(obs)) % 2, obs, masks)
    assert masks[np.arange(len(obs)), actions].all()
