"""The compiled actor (``agents.ppo.compiled_actor``): the torch module's masked logits for plain and card actors,
ReLU and tanh, one row at a time and in batches; the agent acts as its
torch path, follows in-place weight changes, and falls back to torch for what it cannot compile; the shipped file
takes the same actions either way over whole games (2,000 deals: ``benchmarks/speed/act_latency.py``)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

from agents.ppo import ActorCritic, NetworkConfig, PPOAgent, load_ppo_agent, read_checkpoint
from agents.ppo.activations import ACTIVATIONS
from agents.ppo.card_net import CardActor, StackedCardActors
from agents.ppo.compiled_actor import MASKED_LOGIT, CompiledActor
from agents.training.opponents import OpponentPool
from pcr_env import pass_cut_run_v0
from pcr_env.config import RulesConfig
from pcr_env.vector import VectorEnv


def _positions(n_envs: int = 32, steps: int = 70) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of random play, every phase (passes, bids, trump, the kitty holder's discards, play)."""
    venv = VectorEnv(n_envs, seed=5)
    obs, masks, _ = venv.reset()
    rng = np.random.default_rng(5)
    rows, legal = [], []
    for _ in range(steps):
        rows.append(obs.copy())
        legal.append(masks.astype(bool))
        obs, masks, _, _, _, _ = venv.step((rng.random(masks.shape) * masks).argmax(1))
    return np.concatenate(rows), np.concatenate(legal)


def _network(card_head: bool, activation: str) -> ActorCritic:
    torch.manual_seed(1)
    net = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(64, 48), critic_hidden_sizes=(16,),
                                                   activation=activation, card_head=card_head, card_width=24))
    with torch.no_grad():  # the card scorer's output layer starts near zero: make it count
        for p in net.actor.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    return net.requires_grad_(False)


@pytest.mark.parametrize("card_head", [False, True], ids=["plain", "card"])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_the_logits_are_the_torch_modules_one_row_at_a_time_and_in_batches(card_head, activation):
    net = _network(card_head, activation)
    obs, legal = _positions()
    expected = net.masked_logits(torch.from_numpy(obs), torch.from_numpy(legal)).numpy()
    compiled = CompiledActor(net.actor)
    one_by_one = np.concatenate([compiled.masked_logits(obs[i:i + 1], legal[i:i + 1]) for i in range(0, len(obs), 7)])
    batched = compiled.masked_logits(obs, legal)
    for got, want in ((one_by_one, expected[::7]), (batched, expected)):
        mask = legal[:len(got)] if got is batched else legal[::7]
        assert np.all(got[~mask] == MASKED_LOGIT)
        np.testing.assert_allclose(got[mask], want[mask], rtol=1e-5, atol=2e-5)
        assert (np.abs(got[mask]) > 0.1).mean() > 0.5  # the logits are not all near zero: the comparison means something


def test_one_activation_table_serves_every_executor():
    """NetworkConfig's choices are the table's names; the networks are built with each row's module, the stacked
    pool (card actors and plain MLPs) applies its function and the compiled actor its code."""
    from typing import get_args, get_type_hints

    assert get_args(get_type_hints(NetworkConfig)["activation"]) == tuple(ACTIVATIONS)
    with pytest.raises(ValueError, match="'relu' or 'tanh'"):
        NetworkConfig(activation="gelu")
    for name, activation in ACTIVATIONS.items():
        plain, card = _network(False, name), _network(True, name)
        assert {type(m) for m in plain.actor if not isinstance(m, nn.Linear)} == {activation.module}
        assert {type(m) for m in card.actor.trunk if not isinstance(m, nn.Linear)} == {type(card.actor.act)}
        assert type(card.actor.act) is activation.module
        assert StackedCardActors([card.actor]).activation is activation.function
        pool = OpponentPool(1, 2.0)
        pool.add(PPOAgent(plain, RulesConfig(), seed=0), 0)
        assert [layer[2] for layer in pool._stacked()] == [activation.function, activation.function, None]
        assert CompiledActor(plain.actor).activation == CompiledActor(card.actor).activation == activation.code


def test_the_agent_acts_as_its_torch_path_and_follows_in_place_weight_changes():
    net = _network(True, "relu")
    fast, slow = PPOAgent(net, RulesConfig(), seed=0), PPOAgent(net, RulesConfig(), seed=0, compiled=False)
    obs, masks = _positions(16, 40)
    before = fast.act_batch(obs, masks)
    np.testing.assert_array_equal(before, slow.act_batch(obs, masks))
    np.testing.assert_allclose(fast.action_probabilities(obs, masks), slow.action_probabilities(obs, masks), atol=1e-5)
    with torch.no_grad():
        net.actor.head.bias[65:70] += 50.0  # no bid and the trump suits: wherever one is legal, it now wins
    after = fast.act_batch(obs, masks)
    np.testing.assert_array_equal(after, slow.act_batch(obs, masks))
    raised = masks[:, 65:70].any(1)
    assert raised.any() and np.all(after[raised] >= 65) and not np.array_equal(before, after)


def test_sampling_agents_draw_the_same_actions_on_either_path():
    net = _network(False, "relu")
    obs, masks = _positions(16, 40)
    fast = PPOAgent(net, RulesConfig(), seed=3, greedy=False).act_batch(obs, masks)
    slow = PPOAgent(net, RulesConfig(), seed=3, greedy=False, compiled=False).act_batch(obs, masks)
    assert (fast == slow).mean() > 0.99  # the same draws; only a draw within 1e-5 of a boundary may differ
    assert np.all(masks[np.arange(len(obs)), fast])


def test_what_it_cannot_compile_runs_on_torch():
    net = _network(False, "relu")
    assert not CompiledActor.fits(net.actor.to(torch.bfloat16))
    assert not CompiledActor.fits(nn.Sequential(nn.Linear(797, 8), nn.LayerNorm(8), nn.Linear(8, 70)))
    assert not CompiledActor.fits(nn.Sequential(nn.Linear(797, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 70)))
    assert not CompiledActor.fits(nn.Sequential(nn.Linear(797, 70)))  # no hidden layer
    assert CompiledActor.fits(nn.Sequential(nn.Linear(797, 8), nn.Tanh(), nn.Linear(8, 70)))
    with pytest.raises(ValueError, match="cannot compile"):
        CompiledActor(nn.Sequential(nn.Linear(797, 8), nn.LayerNorm(8), nn.Linear(8, 70)))
    odd = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(8,), critic_hidden_sizes=(8,)))
    odd.actor = nn.Sequential(nn.Linear(797, 8), nn.LayerNorm(8), nn.Linear(8, 70))
    obs, masks = _positions(4, 3)
    actions = PPOAgent(odd.requires_grad_(False), RulesConfig(), seed=0).act_batch(obs, masks)
    assert np.all(masks[np.arange(len(obs)), actions])


def test_a_card_actor_with_a_layer_it_cannot_place_runs_on_torch():
    """A layer added to a copy of a CardActor (after its card scorer's hidden layer) changes its logits: the compiled
    actor and the stacked pool, which run the layers they know, leave it to its torch forward pass instead of
    skipping the layer; so do a subclass (which may compute otherwise) and a part replaced by another kind."""
    net = _network(True, "relu")
    deeper = copy.deepcopy(net)
    extra = nn.Linear(24, 24)
    deeper.actor.card_extra = extra
    deeper.actor.card_hidden.register_forward_hook(lambda module, args, out: extra(out))
    obs, masks = _positions(16, 40)
    x, legal = torch.from_numpy(obs), torch.from_numpy(masks)
    assert not torch.equal(net.masked_logits(x, legal), deeper.masked_logits(x, legal))  # the layer counts
    assert CompiledActor.fits(net.actor) and StackedCardActors.fits([net.actor])
    assert not CompiledActor.fits(deeper.actor) and not StackedCardActors.fits([deeper.actor])
    fast, slow = PPOAgent(deeper, RulesConfig(), seed=0), PPOAgent(deeper, RulesConfig(), seed=0, compiled=False)
    np.testing.assert_array_equal(fast.action_probabilities(obs, masks), slow.action_probabilities(obs, masks))
    pool = OpponentPool(2, 2.0)
    for i in range(2):
        pool.add(PPOAgent(deeper, RulesConfig(), seed=i), i)
    assert pool._stacked() is None  # slot by slot, each snapshot on torch

    class Copy(CardActor):
        """CardActor's layers under another class."""

    assert not CompiledActor.fits(Copy(797, 4, (16,), 70))
    replaced = copy.deepcopy(net.actor)
    replaced.card_hidden = nn.Sequential(nn.Linear(24, 24), nn.ReLU(), nn.Linear(24, 24))
    assert not CompiledActor.fits(replaced) and not StackedCardActors.fits([replaced])


def test_the_shipped_file_takes_the_same_actions_on_either_path_over_whole_games():
    fast = load_ppo_agent("pretrained", seed=0)
    slow = PPOAgent.from_checkpoint(read_checkpoint("pretrained"), seed=0, compiled=False)
    env = pass_cut_run_v0.raw_env(episode="round")
    decisions = 0
    for deal in range(12):
        env.reset(seed=1000 + deal)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = fast.act(obs)
            assert action == slow.act(obs), f"deal {deal}, decision {decisions}"
            decisions += 1
            env.step(action)
    assert decisions > 12 * 50


def test_a_greedy_agent_plays_forced_rows_without_a_forward_pass():
    net = _network(True, "relu")
    agent, reference = PPOAgent(net, RulesConfig(), seed=0), PPOAgent(net, RulesConfig(), seed=0)
    obs, masks = _positions(16, 70)
    forced = masks.sum(1) == 1
    assert 0 < forced.sum() < len(obs)
    seen = []
    logits = agent._logits
    agent._logits = lambda o, legal: seen.append(len(o)) or logits(o, legal)
    actions = agent.act_batch(obs, masks)
    assert seen == [int((~forced).sum())]  # only the rows with a choice went through the network
    np.testing.assert_array_equal(actions[forced], masks[forced].argmax(1))
    np.testing.assert_array_equal(actions, [reference.act_batch(o[None], m[None])[0] for o, m in zip(obs, masks)])
    with pytest.raises(ValueError, match="no legal action"):  # the masks are still checked, forced rows or not
        agent.act_batch(obs[:2], np.zeros_like(masks[:2]))
