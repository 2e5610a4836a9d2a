"""Batches padded to a few sizes on the CPU in bfloat16 (agents.ppo.shapes): every matrix product sees a padded
number of rows, and the real rows' outputs are those of the unpadded batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.ppo.network import ActorCritic, NetworkConfig
from agents.ppo.shapes import padded_size
from agents.training.compute import Compute, _network_outputs, minibatch_outputs, network_outputs
from pcr_env.vector import VectorEnv

CPU = torch.device("cpu")
BF16, F32 = Compute(CPU, torch.bfloat16), Compute(CPU, torch.float32)


def test_padded_sizes_are_few_and_at_most_an_eighth_larger():
    sizes = [padded_size(n) for n in range(1, 20_000)]
    assert all(s >= n for n, s in zip(range(1, 20_000), sizes))
    assert all(s == 16 for s in sizes[:16]) and padded_size(0) == 0
    assert all(s <= n * 9 / 8 for n, s in zip(range(128, 20_000), sizes[127:]))
    assert sizes == sorted(sizes)  # more rows never pad to fewer
    assert all(padded_size(s) == s for s in sizes)  # a padded size stays as it is
    for low in (128, 1024, 8192):  # eight sizes per doubling (and its end)
        assert {padded_size(n) for n in range(low, 2 * low)} == set(range(low, 2 * low + 1, low // 8))


def _rows(model: ActorCritic, games: int = 37, steps: int = 30) -> tuple[torch.Tensor, torch.Tensor]:
    """Network inputs (central critic: the state, then a card actor's inputs) and legal masks of real positions."""
    venv = VectorEnv(games, seed=5)
    obs, masks, _ = venv.reset()
    rng = np.random.default_rng(5)
    xs, ms = [], []
    for _ in range(steps):
        xs.append(model.rollout_inputs(venv.state(), obs))
        ms.append(masks.astype(bool))
        obs, masks, *_ = venv.step((rng.random(masks.shape) * masks).argmax(1))
    return torch.from_numpy(np.concatenate(xs)), torch.from_numpy(np.concatenate(ms))


class LinearRows:
    """The number of rows of every ``nn.Linear`` call of a model (forward hooks)."""

    def __init__(self, model: torch.nn.Module):
        self.rows: list[int] = []
        self.handles = [m.register_forward_hook(lambda mod, args, out: self.rows.append(args[0].shape[0]))
                        for m in model.modules() if isinstance(m, torch.nn.Linear)]

    def close(self) -> None:
        for handle in self.handles:
            handle.remove()


@pytest.mark.parametrize("card_head", [True, False])
def test_bfloat16_outputs_are_padded_and_the_real_rows_unchanged(card_head):
    torch.manual_seed(0)
    model = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(64,), critic_hidden_sizes=(32,), card_head=card_head,
                                                     card_width=16))
    x, mask = _rows(model)
    rows = x[:101], mask[:101]  # 101 rows: padded to 112
    with torch.no_grad():
        seen = LinearRows(model)
        logits, value = network_outputs(model, BF16, *rows, True)
        seen.close()
        exact_logits, exact_value = _network_outputs(model, BF16, *rows, True)
    assert logits.shape == (101, 70) and value.shape == (101,)
    assert seen.rows and all(padded_size(n) == n for n in seen.rows)  # the card scorer's rows too
    assert 112 in seen.rows and 101 not in seen.rows
    # The products of the real rows are the same; only their batch grew (bfloat16: compared to its rounding).
    torch.testing.assert_close(logits, exact_logits, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(value, exact_value, rtol=1e-2, atol=1e-2)
    assert torch.equal(logits.argmax(1), exact_logits.argmax(1))


def test_a_minibatch_is_gathered_padded_and_float32_is_not_padded():
    torch.manual_seed(0)
    model = ActorCritic(797, 1369, 70, NetworkConfig(hidden_sizes=(64,), critic_hidden_sizes=(32,), card_head=True,
                                                     card_width=16))
    x, mask = _rows(model)
    t = {"inputs": x, "input_rows": torch.arange(len(x) - 1, -1, -1), "masks": mask}  # rows stored in reverse
    mb = np.array([5, 17, 3, 250, 9, 77, 140])
    for compute in (BF16, F32):
        seen = LinearRows(model)
        logits, value = minibatch_outputs(model, compute, t, mb)
        seen.close()
        direct_logits, direct_value = network_outputs(model, compute, x[t["input_rows"][mb]], mask[mb], True)
        assert logits.shape == (len(mb), 70)
        torch.testing.assert_close(logits, direct_logits, rtol=0, atol=0)
        torch.testing.assert_close(value, direct_value, rtol=0, atol=0)
        assert (16 in seen.rows) == (compute is BF16)
        assert (len(mb) in seen.rows) == (compute is F32)  # float32 products are not padded
