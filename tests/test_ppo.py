"""The PPO policy (agents/ppo.py): masking, checkpoints as agents, and the typed config loader."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import torch

from agents import make_agent
from agents.ppo import (
    PRETRAINED_PATH,
    ActorCritic,
    NetworkConfig,
    PPOAgent,
    ValueNorm,
    load_ppo_agent,
    make_checkpoint,
    read_checkpoint,
)
from agents.ppo.checkpoint import acts_greedy, resolve_path
from agents.ppo.files import save
from agents.ppo.network import MASKED_LOGIT, log_probs, masked_entropy, sample_actions
from agents.run_dir import RunDir
from pcr_env.actions import NUM_ACTIONS
from pcr_env.config import RulesConfig
from pcr_env.observation import observation_size, state_size
from pcr_env.vector import VectorEnv

SMALL = NetworkConfig(hidden_sizes=(16,), critic_hidden_sizes=(16,))


def small_model(players: int = 4, seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic(observation_size(players), state_size(players), NUM_ACTIONS, SMALL)


def random_masks(rng: np.random.Generator, n: int) -> np.ndarray:
    """Masks with 1..70 legal actions, including many single-action rows."""
    masks = np.zeros((n, NUM_ACTIONS), bool)
    for i in range(n):
        k = 1 if i % 3 == 0 else int(rng.integers(1, NUM_ACTIONS + 1))
        masks[i, rng.choice(NUM_ACTIONS, size=k, replace=False)] = True
    return masks


# ----------------------------------------------------------------------------- masking
def test_masked_sampling_is_always_legal_and_finite_even_with_extreme_logits():
    rng = np.random.default_rng(0)
    gen = torch.Generator().manual_seed(0)
    for scale in (1.0, 1e4, 1e7):
        masks = torch.from_numpy(random_masks(rng, 400))
        raw = torch.from_numpy(rng.normal(size=(400, NUM_ACTIONS)).astype(np.float32)) * scale
        # The illegal actions get the largest raw logits: masking must still win.
        raw = raw + (~masks).float() * 10 * scale
        logits = raw.masked_fill(~masks, MASKED_LOGIT)
        logp = log_probs(logits)
        ent = masked_entropy(logp, masks)
        assert torch.isfinite(ent).all() and (ent >= -1e-5).all()
        assert torch.isfinite(logp[masks]).all()
        actions = sample_actions(logp, gen)
        assert masks[torch.arange(400), actions].all()
        assert masks[torch.arange(400), logits.argmax(-1)].all()


def test_entropy_counts_legal_actions_only():
    masks = torch.zeros(3, NUM_ACTIONS, dtype=torch.bool)
    masks[0, 5] = True                     # one legal action: no uncertainty
    masks[1, [1, 2, 3, 4]] = True          # four equally likely actions
    masks[2, :] = True
    logits = torch.zeros(3, NUM_ACTIONS).masked_fill(~masks, MASKED_LOGIT)
    ent = masked_entropy(log_probs(logits), masks)
    assert ent.tolist() == pytest.approx([0.0, math.log(4), math.log(NUM_ACTIONS)], abs=1e-5)


def test_network_policy_on_real_observations_never_illegal_or_nan():
    venv = VectorEnv(32, seed=3)
    obs, masks, _ = venv.reset()
    model = small_model()
    gen = torch.Generator().manual_seed(1)
    for _ in range(150):
        x, m = torch.from_numpy(obs), torch.from_numpy(masks.astype(bool))
        logp = log_probs(model.masked_logits(x, m))
        assert torch.isfinite(masked_entropy(logp, m)).all()
        actions = sample_actions(logp, gen).numpy()
        assert masks[np.arange(32), actions].all()
        obs, masks, _, _, _, _ = venv.step(actions)  # the env itself rejects an illegal action


def test_initialisation_is_orthogonal_with_small_policy_head():
    model = small_model()
    head = model.actor[-1].weight
    assert head.abs().max() < 0.05  # gain 0.01: a near-uniform initial policy
    w = model.actor[0].weight  # [16, 797]: rows orthonormal times sqrt(2)
    assert torch.allclose(w @ w.T, 2 * torch.eye(16), atol=1e-4)


# ----------------------------------------------------------------------------- agent
def test_agent_rejects_empty_masks_and_wrong_table_size():
    agent = PPOAgent(small_model(), RulesConfig(), seed=0)
    obs = np.zeros((2, observation_size(4)), np.float32)
    masks = np.zeros((2, NUM_ACTIONS), np.int8)
    masks[0, 3] = 1
    with pytest.raises(ValueError, match=r"rows \[1\] have no legal action"):
        agent.act_batch(obs, masks)
    masks[1, 4] = 1
    with pytest.raises(ValueError, match="6 players|another number of players|length 797"):
        agent.act_batch(np.zeros((2, observation_size(6)), np.float32), masks)
    assert agent.act_batch(obs, masks).tolist() == [3, 4]


def test_sampling_agent_is_reproducible_from_its_seed():
    model = small_model()
    rng = np.random.default_rng(5)
    obs = rng.random((50, observation_size(4))).astype(np.float32)
    masks = random_masks(rng, 50).astype(np.int8)
    a = PPOAgent(model, RulesConfig(), greedy=False, seed=11)
    b = PPOAgent(model, RulesConfig(), greedy=False, seed=11)
    first = a.act_batch(obs, masks)
    assert first.tolist() == b.act_batch(obs, masks).tolist()
    a.reset(11)
    assert a.act_batch(obs, masks).tolist() == first.tolist()


# ----------------------------------------------------------------------------- checkpoints
def save_small(tmp_path, rules: RulesConfig = RulesConfig(), name: str = "ckpt.pt", **extra) -> tuple[ActorCritic, str]:
    model = small_model(rules.players)
    path = tmp_path / name
    save(make_checkpoint(model, {"note": "test"}, rules, **extra), path)
    return model, str(path)


def test_checkpoint_is_an_agent_with_the_same_decisions(tmp_path):
    model, path = save_small(tmp_path)
    venv = VectorEnv(16, seed=2)
    obs, masks, _ = venv.reset()
    live = PPOAgent(model, RulesConfig())
    for agent in (load_ppo_agent(path), make_agent(f"ppo:{path}", seed=0)):
        assert agent.act_batch(obs, masks).tolist() == live.act_batch(obs, masks).tolist()
        assert agent.act({"observation": obs[0], "action_mask": masks[0]}) == live.act_batch(obs[:1], masks[:1])[0]
    assert list(tmp_path.iterdir()) == [tmp_path / "ckpt.pt"]  # the atomic write left no temporary file


def test_checkpoint_rebuilds_its_own_network_and_rules(tmp_path):
    rules = RulesConfig(players=6, bidding="auction")
    _, path = save_small(tmp_path, rules)
    agent = load_ppo_agent(path)
    assert agent.rules == rules and agent.obs_dim == observation_size(6)
    assert agent.model.config == SMALL
    venv = VectorEnv(4, seed=1, players=6, bidding="auction")
    obs, masks, _ = venv.reset()
    actions = agent.act_batch(obs, masks)
    assert masks[np.arange(4), actions].all()


def test_checkpoint_for_another_variant_is_refused(tmp_path):
    _, path = save_small(tmp_path, RulesConfig(double_run_bonus=True))
    with pytest.raises(ValueError, match="double_run_bonus: trained True, table False"):
        load_ppo_agent(path, rules=RulesConfig())
    load_ppo_agent(path, rules={"double_run_bonus": True, "first_dealer": 2})  # non-variant fields may differ


def test_incompatible_observation_layout_is_refused(tmp_path):
    _, path = save_small(tmp_path)
    ckpt = torch.load(path, weights_only=True)
    ckpt["signature"]["observation"][1][1] = 51  # as if the "hand" slice had another size
    save(ckpt, path)
    with pytest.raises(ValueError, match=r"incompatible observation layout \(differs in \['hand'\]\)"):
        load_ppo_agent(path)


def test_foreign_or_missing_files_are_refused_clearly(tmp_path):
    bad = tmp_path / "bad.pt"
    torch.save({"weights": torch.zeros(3)}, bad)
    with pytest.raises(ValueError, match="is not a pcr PPO checkpoint"):
        read_checkpoint(bad)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"is damaged \(not a readable torch file"):
        read_checkpoint(tmp_path / "junk.pt")
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(f"ppo:{tmp_path / 'missing.pt'}")


def test_checkpoint_greedy_setting_is_the_default(tmp_path):
    _, path = save_small(tmp_path, act={"greedy": False})
    assert load_ppo_agent(path).greedy is False
    assert load_ppo_agent(path, greedy=True).greedy is True


def test_a_file_acts_as_it_says_else_as_its_runs_evaluations_did_else_greedy(tmp_path):
    model = small_model()
    sampled_evals = make_checkpoint(model, {"eval": {"greedy": False}}, RulesConfig())
    assert acts_greedy(make_checkpoint(model, {}, RulesConfig())) is True
    assert acts_greedy(sampled_evals) is False  # a latest.pt: no act, its config's eval.greedy
    assert acts_greedy({**sampled_evals, "act": {"greedy": True}}) is True  # an agent file says how it acts
    assert PPOAgent.from_checkpoint(sampled_evals).greedy is False


def test_every_road_from_a_checkpoint_to_an_agent_is_from_checkpoint(tmp_path, monkeypatch):
    """ppo:PATH, the in-training evaluation's agent, warmstart.init_from and the pool's snapshots build alike."""
    from agents.training.evaluation import evaluate_checkpoint
    from agents.training.opponents import snapshot_agent
    from agents.training.warmstart import init_weights

    model, path = save_small(tmp_path)
    calls = []
    real = PPOAgent.from_checkpoint.__func__
    monkeypatch.setattr(PPOAgent, "from_checkpoint",
                        classmethod(lambda cls, ckpt, **kw: calls.append(kw["source"]) or real(cls, ckpt, **kw)))
    make_agent(f"ppo:{path}")
    evaluate_checkpoint(read_checkpoint(path), ["random"], deals=1, seed=0)
    init_weights(small_model(), ValueNorm(), path, RulesConfig())
    frozen = snapshot_agent(model, RulesConfig(), seed=0)
    assert calls == [f"PPO checkpoint {path!r}", "the network being trained", f"warmstart.init_from {path!r}", "snapshot"]
    assert not any(p.requires_grad for p in frozen.model.parameters())  # an agent never trains its copy
    assert all(torch.equal(a, b) for a, b in zip(frozen.model.state_dict().values(), model.state_dict().values()))


def test_a_run_directory_as_a_spec_is_its_best_pt(tmp_path):
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    with pytest.raises(ValueError, match=r"is a directory without checkpoints/best.pt"):
        make_agent(f"ppo:{run.path}")
    run.checkpoints.mkdir(parents=True)
    model, _ = save_small(run.checkpoints, name="best.pt")
    venv = VectorEnv(8, seed=3)
    obs, masks, _ = venv.reset()
    agent = make_agent(f"ppo:{run.path}")
    assert agent.act_batch(obs, masks).tolist() == PPOAgent(model, RulesConfig()).act_batch(obs, masks).tolist()


def test_pretrained_agent_ships_and_plays_legal_moves():
    assert PRETRAINED_PATH.is_file(), f"{PRETRAINED_PATH} (ppo:pretrained) is missing"
    assert PRETRAINED_PATH.stat().st_size < 8 * 2**20
    agent = make_agent("ppo:pretrained", seed=0)
    venv = VectorEnv(8, seed=4)
    obs, masks, _ = venv.reset()
    for _ in range(80):
        actions = agent.act_batch(obs, masks)
        assert masks[np.arange(8), actions].all()
        obs, masks, _, _, _, _ = venv.step(actions)


def test_pretrained_is_a_name_for_a_shipped_file():
    """``ppo:pretrained`` plays ``PRETRAINED_PATH``, a file that ``ppo:pretrained/NAME.pt`` also names (so a ladder's
    rung can name it and keep it after ``ppo:pretrained`` moves on)."""
    assert resolve_path("pretrained") == PRETRAINED_PATH == resolve_path("pretrained/" + PRETRAINED_PATH.name)


def test_each_shipped_network_is_one_file():
    """No shipped file is a copy of another: every wheel carries all of them, and a name points at a file instead."""
    first: dict[str, str] = {}
    for path in sorted(PRETRAINED_PATH.parent.glob("*.pt")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest not in first, f"{path.name} is a copy of {first[digest]}: name the file instead"
        first[digest] = path.name


# ----------------------------------------------------------------------------- value normalisation
def test_value_norm_tracks_mean_and_variance_over_batches():
    rng = np.random.default_rng(0)
    data = [rng.normal(3.0, 2.0, size=n) for n in (10, 500, 37)]
    vn = ValueNorm(epsilon=0.0 + 1e-12)
    for batch in data:
        vn.update(torch.from_numpy(batch))
    allv = np.concatenate(data)
    assert float(vn.mean) == pytest.approx(allv.mean(), rel=1e-6)
    assert float(vn.var) == pytest.approx(allv.var(), rel=1e-6)
    x = torch.tensor([0.5, -1.0, 7.0])
    assert torch.allclose(vn.denormalize(vn.normalize(x)), x, atol=1e-5)
