"""Mixed precision in training (``Config.precision``): what ``auto`` resolves to, that bfloat16
only changes the matrix products (weights, gradients and losses stay float32), and that an
update in bfloat16 stays close to the same update in float32."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.training import compute as compute_module
from agents.training.workers import Workers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from test_train import SMOKE, records, run  # noqa: E402

import train  # noqa: E402  (train.py is a script at the repository root)

CPU = torch.device("cpu")


@pytest.mark.parametrize("native, expected", [(True, torch.bfloat16), (False, torch.float32)])
def test_auto_precision_is_bfloat16_only_where_the_hardware_has_it(monkeypatch, native, expected):
    monkeypatch.setattr(compute_module, "native_bfloat16", lambda device: native)
    assert train.resolve_compute("cpu", "auto").dtype == expected
    # an explicit setting is obeyed whatever the hardware
    assert train.resolve_compute("cpu", "float32").dtype == torch.float32
    assert train.resolve_compute("cpu", "bfloat16").dtype == torch.bfloat16


def test_a_bad_precision_is_a_value_error_naming_the_key():
    with pytest.raises(ValueError, match=r"'precision' = 'half'.*'auto', 'float32' or 'bfloat16'"):
        train.load_config(SMOKE, ["precision=half"])


def test_autocast_changes_only_the_matrix_products():
    layer = torch.nn.Linear(8, 4)
    x = torch.randn(3, 8)
    with train.Compute(CPU, torch.float32).autocast():
        assert layer(x).dtype == torch.float32
    with train.Compute(CPU, torch.bfloat16).autocast():
        assert layer(x).dtype == torch.bfloat16
    assert layer.weight.dtype == torch.float32


def _batch(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    inputs = (rng.random((n, 1369)) < 0.07).astype(np.float32)
    inputs[:, :8] = 0.0
    inputs[:, 4] = 1.0  # the phase one-hot of the observation: PLAY
    masks = rng.random((n, 70)) < 0.3
    masks[:, 0] = True
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return {"inputs": inputs, "input_rows": np.arange(n), "masks": masks, "actions": actions,
            "logprobs": np.log(1.0 / masks.sum(1)).astype(np.float32),
            "values": rng.normal(size=n).astype(np.float32), "advantages": rng.normal(size=n).astype(np.float32),
            "returns": rng.normal(size=n).astype(np.float32)}


def test_a_bfloat16_update_keeps_float32_weights_and_stays_close_to_float32():
    cfg = train.load_config(SMOKE, [])
    batch = _batch(512, np.random.default_rng(0))
    results = {}
    for dtype in (torch.float32, torch.bfloat16):
        torch.manual_seed(0)
        model = train.ActorCritic(797, 1369, 70, cfg.network)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        out = train.ppo_update(cfg, model, train.ValueNorm(), opt, batch, Workers(), np.random.default_rng(1), 0.01,
                               train.Compute(CPU, dtype))
        assert all(p.dtype == torch.float32 for p in model.parameters())
        assert all(g is None or g.dtype == torch.float32 for g in (p.grad for p in model.parameters()))
        assert all(np.isfinite(v) for k, v in out.items() if k != "explained_variance")
        results[dtype] = (out, {k: v.clone() for k, v in model.state_dict().items()})
    (out32, w32), (out16, w16) = results[torch.float32], results[torch.bfloat16]
    # The same first minibatch from the same weights: the losses agree to bfloat16's ~3 significant digits.
    assert out16["policy_loss"] == pytest.approx(out32["policy_loss"], abs=0.02)
    assert out16["value_loss"] == pytest.approx(out32["value_loss"], rel=0.05)
    assert out16["entropy"] == pytest.approx(out32["entropy"], rel=0.01)
    # ... and after the update's Adam steps the weights moved the same way (not bit-equal: rounding differs).
    moved32 = torch.cat([(w32[k] - v).flatten() for k, v in _initial_weights(cfg).items()])
    moved16 = torch.cat([(w16[k] - v).flatten() for k, v in _initial_weights(cfg).items()])
    cosine = torch.nn.functional.cosine_similarity(moved32, moved16, dim=0)
    assert cosine > 0.9
    assert not all(torch.equal(w32[k], w16[k]) for k in w32)  # bfloat16 really ran


def _initial_weights(cfg: train.Config) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    return train.ActorCritic(797, 1369, 70, cfg.network).state_dict()


def test_the_log_says_what_auto_resolved_to(tmp_path):
    run_dir = tmp_path / "run"
    run(["--config", SMOKE, "--run-dir", str(run_dir), "--max-iterations", "1", "--set", "precision=float32"])
    start = records(run_dir)[0]
    assert start == {**start, "type": "start", "device": "cpu", "precision": "float32", "workers": 1}
