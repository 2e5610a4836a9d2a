"""The sparse-aware first layer (``agents.ppo.sparse_linear``): the same linear map and gradients as
``nn.Linear`` on the network's real inputs, the same ``state_dict`` (old checkpoints load), the
dense fallbacks, and a PPO update through the trainer's shared-non-zeros path equal to the same
update through dense layers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

from agents.ppo import PRETRAINED_PATH, ActorCritic, NetworkConfig, load_ppo_agent, sparse_linear
from agents.ppo.sparse_linear import SparseInputLinear, sparse_rows
from agents.training import compute as compute_module
from agents.training.workers import Workers
from pcr_env.vector import VectorEnv

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from test_train_precision import _batch  # noqa: E402

import train  # noqa: E402  (train.py is a script at the repository root)


def _states(n_envs: int = 64, steps: int = 30) -> torch.Tensor:
    """Critic inputs (``VectorEnv.state()``: the observation, then the hidden rest) of random play."""
    venv = VectorEnv(n_envs, seed=3)
    _, masks, _ = venv.reset()
    rng = np.random.default_rng(3)
    rows = []
    for _ in range(steps):
        rows.append(venv.state().copy())
        _, masks, _, _, _, _ = venv.step((rng.random(masks.shape) * masks).argmax(1))
    return torch.from_numpy(np.concatenate(rows))


def _dense_copy(layer: nn.Linear) -> nn.Linear:
    dense = nn.Linear(layer.in_features, layer.out_features)
    dense.load_state_dict(layer.state_dict())
    return dense


def test_forward_and_gradients_equal_a_dense_linear_on_real_inputs():
    x = _states()
    assert 0.02 < (x != 0).float().mean() < 0.2  # the inputs really are mostly zeros
    torch.manual_seed(0)
    sparse = SparseInputLinear(x.shape[1], 32)
    dense = _dense_copy(sparse)
    grad_out = torch.randn(len(x), 32)
    (sparse(x) * grad_out).sum().backward()
    (dense(x) * grad_out).sum().backward()
    torch.testing.assert_close(sparse(x), dense(x), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sparse.weight.grad, dense.weight.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(sparse.bias.grad, dense.bias.grad, rtol=1e-5, atol=1e-5)


def test_given_non_zeros_and_leading_columns_equal_the_dense_slices():
    x = _states(8, 10)
    rows = sparse_rows(x)
    assert torch.equal(rows.dense(), x)
    assert torch.equal(rows.leading_columns(797).dense(), x[:, :797])
    assert rows.leading_columns(x.shape[1]) is rows
    layer = SparseInputLinear(797, 16)
    torch.testing.assert_close(layer(rows.leading_columns(797)), _dense_copy(layer)(x[:, :797]), rtol=1e-5, atol=1e-5)


def test_rows_without_any_non_zero_get_the_bias():
    layer = SparseInputLinear(5, 3)
    x = torch.zeros(4, 5)
    x[2, 1] = 2.0
    out = layer(sparse_rows(x))
    assert torch.equal(out[[0, 1, 3]], layer.bias.detach().expand(3, 3))
    torch.testing.assert_close(out[2], 2.0 * layer.weight[:, 1].detach() + layer.bias.detach())


@pytest.mark.parametrize("case", ["float64", "needs_grad", "empty", "one_row_1d", "small_batch", "autocast"])
def test_other_inputs_take_the_dense_path(monkeypatch, case):
    monkeypatch.setattr(sparse_linear, "MIN_ROWS", 1 if case != "small_batch" else 5)
    taken = []
    monkeypatch.setattr(sparse_linear._SparseRowsLinear, "apply", lambda *args: taken.append(args))
    layer = SparseInputLinear(6, 3)
    x = torch.randn(4, 6)
    if case == "float64":
        layer, x = layer.double(), x.double()
    elif case == "needs_grad":
        x.requires_grad_(True)
    elif case == "empty":
        x = x[:0]
    elif case == "one_row_1d":
        x = x[0]
    if case == "autocast":
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert layer(x).dtype == torch.bfloat16
        assert not taken
        return
    out = layer(x)
    assert not taken
    torch.testing.assert_close(out, nn.functional.linear(x, layer.weight, layer.bias))
    if case == "needs_grad":
        out.sum().backward()
        assert x.grad is not None  # the sparse path gives no input gradient, so it is not taken


def test_given_non_zeros_of_the_wrong_width_are_a_value_error():
    with pytest.raises(ValueError, match="797 columns, the layer takes 1369"):
        SparseInputLinear(1369, 4)(sparse_rows(torch.zeros(2, 797)))
    with pytest.raises(ValueError, match="2-D float32 CPU tensor"):
        sparse_rows(torch.zeros(2, 3, dtype=torch.float64))


def test_the_state_dict_is_a_plain_linear_and_the_shipped_checkpoint_loads():
    net = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(8,), critic_hidden_sizes=(8,)))
    assert isinstance(net.actor[0], SparseInputLinear) and isinstance(net.critic[0], SparseInputLinear)
    assert not isinstance(net.actor[2], SparseInputLinear)  # only the layer that reads the encoding
    assert set(net.state_dict()) == {"actor.0.weight", "actor.0.bias", "actor.2.weight", "actor.2.bias",
                                     "critic.0.weight", "critic.0.bias", "critic.2.weight", "critic.2.bias"}
    plain = load_ppo_agent(Path(__file__).resolve().parents[1] / "agents/pretrained/ppo_run3.pt")
    x = _states(32, 20)[:, :plain.model.obs_dim]  # 640 rows: the sparse path (MIN_ROWS) is taken
    dense_first = _dense_copy(plain.model.actor[0])
    with torch.no_grad():
        want = plain.model.actor[1:](dense_first(x))
        torch.testing.assert_close(plain.model.actor(x), want, rtol=1e-4, atol=1e-4)
    # The shipped network is card-aware (agents.ppo.card_net): its trunk's first layer is the sparse-aware one.
    shipped = load_ppo_agent(PRETRAINED_PATH).model.actor
    assert isinstance(shipped.trunk[0], SparseInputLinear)
    assert not any(isinstance(m, SparseInputLinear) for m in list(shipped.trunk)[1:])
    with torch.no_grad():
        dense = _dense_copy(shipped.trunk[0])
        sparse_out = shipped(x)
        shipped.trunk[0] = dense
        torch.testing.assert_close(shipped(x), sparse_out, rtol=1e-4, atol=1e-4)


def test_the_sparse_path_is_taken_for_a_large_float32_batch(monkeypatch):
    taken = []
    apply = sparse_linear._SparseRowsLinear.apply
    monkeypatch.setattr(sparse_linear._SparseRowsLinear, "apply", lambda *args: taken.append(1) or apply(*args))
    layer = SparseInputLinear(797, 4)
    layer(torch.zeros(sparse_linear.MIN_ROWS - 1, 797))
    assert not taken
    layer(torch.zeros(sparse_linear.MIN_ROWS, 797))
    assert taken


def test_a_ppo_update_through_the_shared_non_zeros_equals_one_through_dense_layers(monkeypatch):
    monkeypatch.setattr(sparse_linear, "MIN_ROWS", 1)  # the smoke config's minibatches are small
    found = []
    monkeypatch.setattr(compute_module, "sparse_rows", lambda x: found.append(len(x)) or sparse_rows(x))
    cfg = train.load_config(str(ROOT / "configs" / "smoke.yaml"), [])
    batch = _batch(256, np.random.default_rng(0))
    weights = {}
    for kind in ("sparse", "dense"):
        torch.manual_seed(0)
        model = train.ActorCritic(797, 1369, 70, cfg.network)
        if kind == "dense":
            model.actor[0], model.critic[0] = _dense_copy(model.actor[0]), _dense_copy(model.critic[0])
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        train.ppo_update(cfg, model, train.ValueNorm(), opt, batch, Workers(), np.random.default_rng(1), 0.01,
                         train.Compute(torch.device("cpu"), torch.float32))
        weights[kind] = model.state_dict()
        assert bool(found) == (kind == "sparse")  # each model took the path it was meant to
        found.clear()
    for key, value in weights["dense"].items():
        torch.testing.assert_close(weights["sparse"][key], value, rtol=1e-3, atol=1e-4, msg=key)
