"""The PPO self-play trainer (train.py, agents/rollout.py): GAE, per-seat credit, configs, smoke runs."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.ppo.network import NetworkConfig
from agents.training.exploit import plan_exploit
from agents.training.opponents import OpponentPool, Opponents
from agents.training.rollout import SeatRollout, compute_gae
from agents.training.run_state import WorkerState
from agents.training.warmstart import collect_labels
from pcr_env.config import RulesConfig
from pcr_env.vector import VectorEnv

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import train  # noqa: E402  (train.py is a script at the repository root)

SMOKE = str(ROOT / "configs" / "smoke.yaml")


# ----------------------------------------------------------------------------- GAE
def two_seat_rollout(end: bool) -> SeatRollout:
    """One game, seats 0 and 1 alternate: rows 2 (s0), 3 (s1), 4 (s0), 5 (s1)."""
    ro = SeatRollout(num_steps=4, num_envs=1, n_players=2, input_dim=1)
    ro.begin()
    values = [0.5, -0.2, 0.3, 0.1]
    for step, seat in enumerate((0, 1, 0, 1)):
        ro.add(np.zeros((1, 1)), np.ones((1, 70), bool), np.array([seat]), np.array([True]),
               np.zeros(1, np.int64), np.zeros(1), np.array([values[step]]))
        if step == 1:
            ro.credit(np.array([[0.2, 0.0]]))  # paid to seat 0 after seat 1 acted: seat 0's row 2
    if end:
        ro.credit(np.array([[1.0, -1.0]]))
        ro.end(np.array([True]))
    return ro


def test_gae_matches_hand_computed_values_per_seat():
    ro = two_seat_rollout(end=True)
    adv, ret = compute_gae(ro.rewards, ro.values, ro.next_index, ro.resolved, gamma=0.9, gae_lambda=0.8)
    idx = ro.trainable()
    assert idx.tolist() == [2, 3, 4, 5]
    # Seat 0: row 2 -> row 4 -> end.  delta4 = 1 - 0.3 = 0.7;  delta2 = 0.2 + 0.9*0.3 - 0.5 = -0.03
    #         A4 = 0.7;  A2 = -0.03 + 0.9*0.8*0.7 = 0.474
    # Seat 1: row 3 -> row 5 -> end.  delta5 = -1 - 0.1 = -1.1;  delta3 = 0 + 0.9*0.1 + 0.2 = 0.29
    #         A5 = -1.1; A3 = 0.29 + 0.72*(-1.1) = -0.502
    assert adv[idx] == pytest.approx([0.474, -0.502, 0.7, -1.1], abs=1e-6)
    assert ret[idx] == pytest.approx([0.974, -0.702, 1.0, -1.0], abs=1e-6)


def test_gae_truncates_at_a_decision_still_open():
    ro = two_seat_rollout(end=False)  # rows 4 and 5 wait for their seats' next decisions
    adv, _ = compute_gae(ro.rewards, ro.values, ro.next_index, ro.resolved, gamma=0.9, gae_lambda=0.8)
    assert ro.trainable().tolist() == [2, 3]
    # Bootstrap from the open decision's value, with no advantage beyond it.
    assert adv[[2, 3]] == pytest.approx([0.2 + 0.9 * 0.3 - 0.5, 0.9 * 0.1 + 0.2], abs=1e-6)


def test_gae_with_lambda_and_gamma_one_is_the_monte_carlo_return():
    ro = two_seat_rollout(end=True)
    _, ret = compute_gae(ro.rewards, np.zeros_like(ro.values), ro.next_index, ro.resolved, 1.0, 1.0)
    assert ret[ro.trainable()] == pytest.approx([1.2, -1.0, 1.0, -1.0])


# ----------------------------------------------------------------------------- per-seat credit
def test_rewards_land_on_the_seat_that_earned_them():
    ro = SeatRollout(num_steps=6, num_envs=2, n_players=4, input_dim=1)
    ro.begin()
    # Game 0: seats 0,1,2,3,0 act; game 1: seats 2,3,0,1,2 (only the even team is the learner there).
    order = [(0, 2), (1, 3), (2, 0), (3, 1), (0, 2)]
    for s0, s1 in order:
        seats = np.array([s0, s1])
        learner = np.array([True, s1 % 2 == 0])
        k = int(learner.sum())
        ro.add(np.zeros((k, 1)), np.ones((k, 70), bool), seats, learner, np.zeros(k, np.int64), np.zeros(k), np.zeros(k))
    ro.credit(np.array([[10.0, 11.0, 12.0, 13.0], [20.0, 21.0, 22.0, 23.0]]))
    n = 2
    flat = ro.rewards.reshape(-1)
    # Latest decisions in game 0: seat 0 -> row 8, seat 1 -> row 5, seat 2 -> row 6, seat 3 -> row 7.
    for seat, row in ((0, 8), (1, 5), (2, 6), (3, 7)):
        assert flat[row * n + 0] == 10.0 + seat
    # Game 1 stored only seats 2 and 0: seat 2 -> row 8, seat 0 -> row 6; the opponents' rewards are dropped.
    assert flat[8 * n + 1] == 22.0 and flat[6 * n + 1] == 20.0
    assert flat.sum() == pytest.approx(10 + 11 + 12 + 13 + 22 + 20)
    ro.end(np.array([True, False]))
    assert ro.resolved[:, 0][ro.valid[:, 0]].all()
    assert (ro.pending[0] == -1).all() and (ro.pending[1, [0, 2]] >= 0).all()


def test_open_decisions_carry_over_and_earn_later_rewards():
    ro = SeatRollout(num_steps=2, num_envs=1, n_players=2, input_dim=3)
    ro.begin()
    for seat, value in ((0, 0.25), (1, -0.5)):
        ro.add(np.full((1, 3), seat + 1.0), np.ones((1, 70), bool), np.array([seat]), np.array([True]),
               np.array([seat + 7]), np.array([-0.1]), np.array([value]))
    assert ro.trainable().size == 0  # both still wait for their seat's next decision
    ro.begin()  # next rollout: they move to rows 0 (seat 0) and 1 (seat 1)
    assert ro.valid[:2, 0].all() and ro.actions[:2, 0].tolist() == [7, 8]
    assert ro.inputs[1, 0].tolist() == [2.0, 2.0, 2.0] and ro.values[:2, 0].tolist() == [0.25, -0.5]
    ro.credit(np.array([[3.0, -3.0]]))
    ro.end(np.array([True]))
    adv, ret = compute_gae(ro.rewards, ro.values, ro.next_index, ro.resolved, 1.0, 0.95)
    assert ret[ro.trainable()].tolist() == [3.0, -3.0]


def test_round_score_is_credited_to_each_seat_in_a_real_game():
    """Random play through VectorEnv: every decision's Monte-Carlo return is its own team's round score difference."""
    venv = VectorEnv(1, seed=5, first_dealer=0)
    obs, masks, seats = venv.reset()
    ro = SeatRollout(num_steps=200, num_envs=1, n_players=4, input_dim=1)
    ro.begin()
    rng = np.random.default_rng(0)
    for _ in range(200):
        action = (rng.random(70) * masks[0]).argmax()
        ro.add(np.zeros((1, 1)), masks.astype(bool), seats, np.array([True]), np.array([action]), np.zeros(1), np.zeros(1))
        obs, masks, seats, rewards, dones, infos = venv.step(np.array([action]))
        ro.credit(rewards)
        if "round_result" in infos[0]:
            result = infos[0]["round_result"]
            ro.end(np.array([True]))
            break
    else:
        pytest.fail("no round ended in 200 decisions")
    _, ret = compute_gae(ro.rewards, np.zeros_like(ro.values), ro.next_index, ro.resolved, 1.0, 1.0)
    idx = ro.trainable()
    diff = result["scores"][0] - result["scores"][1]
    team = ro.seats.reshape(-1)[idx] % 2
    assert diff != 0 or result["scores"][0] == result["scores"][1]
    assert ret[idx].tolist() == np.where(team == 0, diff, -diff).tolist()
    # The reward sits on each seat's last decision of the round, nowhere else.
    nonzero = np.flatnonzero(ro.rewards.reshape(-1))
    assert len(nonzero) == (4 if diff else 0)


def test_forced_moves_are_not_stored_and_the_reward_reaches_the_previous_decision(tmp_path):
    cfg = train.load_config(SMOKE, ["ppo.num_envs=4", "ppo.num_steps=70", "warmstart.decisions=0",
                                    "selfplay.opponents={self: 1}"])
    envs = VectorEnv(4, seed=1)
    obs, masks, seats = envs.reset()
    ws = WorkerState(envs, obs, masks, seats, np.random.default_rng(0), torch.Generator().manual_seed(0))
    model = train.ActorCritic(envs.obs_dim, envs.state_dim, 70, cfg.network)
    storage = SeatRollout(70, 4, 4, envs.state_dim)
    opp = Opponents({"self": 1.0}, {}, 4, pools={"snapshot": OpponentPool(2, 1.0)})
    stats = train.collect(cfg, ws, model, train.ValueNorm(), storage, opp, train.Compute(torch.device("cpu")))
    assert stats["decisions"] == 280 and stats["rounds"] >= 1
    stored = storage.masks[storage.valid]
    assert (stored.sum(1) > 1).all()  # no forced move was stored
    assert stats["learner_decisions"] == storage.valid.sum() < 280


# ----------------------------------------------------------------------------- configs
def test_every_shipped_config_loads():
    files = sorted((ROOT / "configs").glob("*.yaml"))
    names = {f.stem for f in files}
    assert {"ppo_selfplay", "smoke"} <= names and len(files) >= 6
    variants = set()
    for f in files:
        # exploit.yaml is the best response's: a training config beside its exploit section
        cfg = plan_exploit("heuristic", "12M", f).run.config if f.name == "exploit.yaml" else train.load_config(str(f), [])
        variants.add((cfg.rules.players, cfg.rules.double_run_bonus, cfg.rules.passing, cfg.rules.bidding))
    for variant in ((6, False, True, "single"), (4, True, True, "single"), (4, False, False, "single"),
                    (4, False, True, "auction")):
        assert variant in variants


def test_default_config_file_matches_the_dataclass_defaults_it_does_not_override():
    cfg = train.load_config(str(ROOT / "configs" / "ppo_selfplay.yaml"), [])
    assert cfg.network == NetworkConfig() and cfg.rules == RulesConfig()


@pytest.mark.parametrize("overrides, message", [
    (["ppo.learning_rat=1e-3"], "unknown config key 'ppo.learning_rat' (did you mean 'ppo.learning_rate'?)"),
    (["ppo.clip_coef=1.5"], "config key 'ppo.clip_coef' = 1.5 is not allowed: expected a number < 1"),
    (["ppo.num_envs=many"], "config key 'ppo.num_envs' = 'many' is not allowed: expected an integer"),
    (["rules.players=5"], "rules field 'players' = 5 is not allowed: allowed 4 or 6"),
    (["selfplay.opponents={self: 1, wizard: 1}"], "config key 'selfplay.opponents.wizard' = 1.0 is not allowed"),
    (["num_workers=3"], "config key 'ppo.num_envs' = 16 is not allowed: expected a multiple of num_workers (3)"),
    (["eval.best_opponent=random", "eval.opponents=[heuristic]"], "config key 'eval.best_opponent' = 'random'"),
    (["network.activation=gelu"], "config key 'network.activation' = 'gelu' is not allowed"),
    (["device=tpu"], "config key 'device' = 'tpu' is not allowed"),
])
def test_config_errors_name_the_key(overrides, message):
    with pytest.raises(ValueError) as err:
        train.load_config(SMOKE, overrides)
    assert message in str(err.value)


def test_cli_reports_config_errors_without_a_traceback(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--config", SMOKE, "--run-dir", str(tmp_path / "r"),
                           "--set", "ppo.gae_lambda=2"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "config key 'ppo.gae_lambda' = 2 is not allowed: expected a number <= 1" in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- smoke runs
def run(args: list[str]) -> None:
    train.main(args + ["--quiet"])


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]


def weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True)["model"]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("smoke") / "run"
    started = time.time()
    run(["--config", SMOKE, "--run-dir", str(run_dir)])
    assert time.time() - started < 60
    return run_dir


def test_smoke_run_trains_evaluates_and_checkpoints(smoke_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    kinds = [r["type"] for r in records(smoke_run)]
    assert kinds.count("warmstart") == 1 and kinds.count("iteration") == 4 and kinds[-1] == "done"
    evals = [r for r in records(smoke_run) if r["type"] == "eval"]
    assert [e["final"] for e in evals] == [False, False, True]  # the warm start's end, iteration 2, the final one
    assert set(evals[0]["results"]) == {"random", "heuristic"}
    assert (smoke_run / "config.yaml").is_file()
    assert {p.name for p in (smoke_run / "checkpoints").iterdir()} == {"latest.pt", "latest.prev.pt", "best.pt"}
    acc = EventAccumulator(str(smoke_run))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in ("charts/decisions_per_second", "charts/make_rate", "charts/bid_rate", "losses/policy_loss",
                "losses/value_loss", "losses/entropy", "losses/approx_kl", "losses/clipfrac",
                "losses/explained_variance", "eval/heuristic_score_diff", "eval/random_ci_low", "bc/accuracy"):
        assert tag in tags, tag


def test_smoke_checkpoint_is_an_agent_for_evaluate(smoke_run):
    from agents import make_agent
    from agents.evaluation import evaluate

    best = smoke_run / "checkpoints" / "best.pt"
    agent = make_agent(f"ppo:{best}", seed=0)
    assert agent.rules == RulesConfig()
    result = evaluate([f"ppo:{best}", "random"], deals=2, seed=0, progress=False)
    assert result.pairs[0].deals == 2


def test_a_runs_latest_checkpoint_exports_to_an_agent_file_that_acts_the_same(smoke_run, tmp_path):
    """export_agent (how the shipped file was made from a run's final latest.pt) drops the training state only."""
    from agents import make_agent
    from agents.ppo import export_agent

    latest = smoke_run / "checkpoints" / "latest.pt"
    out = tmp_path / "agent.pt"
    export_agent(latest, out, note="smoke")
    saved = torch.load(out, weights_only=True)
    assert "training" not in saved and saved["act"] == {"greedy": True}
    assert saved["meta"]["note"] == "smoke" and saved["meta"]["iteration"] == 4
    assert out.stat().st_size < latest.stat().st_size
    envs = VectorEnv(16, seed=2)
    obs, masks, _ = envs.reset()
    a, b = make_agent(f"ppo:{out}", seed=0), make_agent(f"ppo:{latest}", seed=0)
    assert np.array_equal(a.act_batch(obs, masks), b.act_batch(obs, masks))


def test_smoke_run_is_reproducible_and_resumes_exactly(smoke_run, tmp_path):
    run_dir = tmp_path / "resumed"
    run(["--config", SMOKE, "--run-dir", str(run_dir), "--max-iterations", "3"])  # warm start + 2 PPO iterations
    first = records(run_dir)
    assert [r["type"] for r in first].count("iteration") == 2 and first[-1]["reason"] == "stopped"
    with pytest.raises(SystemExit, match="already holds a run"):
        run(["--config", SMOKE, "--run-dir", str(run_dir)])
    with pytest.raises(SystemExit, match="trained with num_workers=1: resume it with the same number"):
        run(["--resume", str(run_dir), "--set", "num_workers=2"])
    run(["--resume", str(run_dir)])
    a, b = weights(smoke_run / "checkpoints" / "latest.pt"), weights(run_dir / "checkpoints" / "latest.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    straight = [r for r in records(smoke_run) if r["type"] == "iteration"]
    resumed = [r for r in records(run_dir) if r["type"] == "iteration"]
    drop = ("time", "seconds", "charts/decisions_per_second", "charts/collect_fraction")
    assert [{k: v for k, v in r.items() if k not in drop} for r in straight] == \
           [{k: v for k, v in r.items() if k not in drop} for r in resumed]


def test_ctrl_c_saves_a_checkpoint_that_resumes(tmp_path):
    run_dir = tmp_path / "interrupted"
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--config", SMOKE, "--run-dir", str(run_dir),
                             "--set", "ppo.total_decisions=10000000", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = run_dir / "log.jsonl"
    deadline = time.time() + 120
    # A PPO iteration's record, not a warm-start one (those carry an "iteration" key too): the interrupt must
    # land after PPO has started for the checkpoint's iteration to be at least 1.
    while time.time() < deadline and not (log.exists() and '"type": "iteration"' in log.read_text()):
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    ckpt = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    assert ckpt["meta"]["reason"] == "interrupted" and ckpt["meta"]["iteration"] >= 1
    done = ckpt["meta"]["iteration"]
    run(["--resume", str(run_dir), "--max-iterations", "1"])
    assert torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)["meta"]["iteration"] == done + 1


@pytest.mark.parametrize("variant", [["rules.players=6"], ["rules.bidding=auction", "rules.passing=false"],
                                     ["network.central_critic=false", "ppo.return_horizon=game", "ppo.gamma=0.99"]])
def test_smoke_runs_for_variants(tmp_path, variant):
    run_dir = tmp_path / "variant"
    run(["--config", SMOKE, "--run-dir", str(run_dir), "--set", "warmstart.decisions=0", "--set", "eval.deals=2",
         "--set", "eval.final_deals=2", "--set", "ppo.total_decisions=1024", *sum((["--set", v] for v in variant), [])])
    assert records(run_dir)[-1]["type"] == "done"
    from agents.ppo import load_ppo_agent

    agent = load_ppo_agent(str(run_dir / "checkpoints" / "best.pt"))
    assert agent.rules == train.load_config(SMOKE, variant).rules


def test_two_workers_train_in_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative --run-dir, as typed on the command line
    run_dir = tmp_path / "parallel"
    train.main(["--config", SMOKE, "--run-dir", "parallel", "--set", "num_workers=2", "--set", "eval.deals=0",
                "--set", "ppo.total_decisions=1024", "--quiet"])
    kinds = [r["type"] for r in records(run_dir)]
    assert kinds.count("iteration") == 2 and kinds[-1] == "done"
    assert (run_dir / "checkpoints" / "best.pt").is_file()


def test_expert_iteration_stores_only_the_teachers_labels_of_the_chosen_phases():
    """warmstart.play=learner: the network plays its own games, the teacher labels only bids and trump."""
    from agents import make_agent
    from pcr_env.engine import Phase

    cfg = train.load_config(SMOKE, ["ppo.num_envs=8", "ppo.num_steps=80", "warmstart.play=learner",
                                    "warmstart.label_phases=[bid, trump]", "network.central_critic=false"])
    envs = VectorEnv(8, seed=3)
    obs, masks, seats = envs.reset()
    ws = WorkerState(envs, obs, masks, seats, np.random.default_rng(0), torch.Generator().manual_seed(0))
    model = train.ActorCritic(envs.obs_dim, envs.state_dim, 70, cfg.network)
    storage = SeatRollout(80, 8, 4, envs.obs_dim)
    teacher = make_agent("heuristic", seed=0)
    stats = collect_labels(cfg.warmstart, cfg.ppo, ws, model, train.ValueNorm(), storage, teacher,
                           train.Compute(torch.device("cpu")))
    phases = storage.inputs[storage.valid][:, :len(Phase)].argmax(1)
    assert stats["learner_decisions"] == len(phases) > 0
    assert set(phases.tolist()) <= {Phase.BID, Phase.TRUMP} and Phase.BID in phases
    labels = storage.actions[storage.valid]
    again = make_agent("heuristic", seed=0).act_batch(storage.inputs[storage.valid], storage.masks[storage.valid])
    assert (labels == again).all()  # the stored actions are the teacher's labels


DISTILL_NETWORK = ["network.hidden_sizes=[256, 256]", "network.critic_hidden_sizes=[256, 256]", "network.card_head=true",
                   "warmstart.init_from=pretrained"]  # the shipped network's shape


def test_warm_start_from_the_shipped_checkpoint_starts_from_its_weights(tmp_path):
    """warmstart.init_from=pretrained: the shipped network (its shape read back from the file as tuples,
    the config's as YAML lists) is where training starts, value normaliser included."""
    from agents.ppo import read_checkpoint
    from agents.training.workers import Workers

    cfg = train.load_config(SMOKE, DISTILL_NETWORK)
    trainer = train.Trainer(Workers(), train.Run.of(cfg), tmp_path / "run", None, quiet=True)
    trainer.close()
    shipped = read_checkpoint("pretrained")
    mine = trainer.model.state_dict()
    assert mine.keys() == shipped["model"].keys()
    assert all(torch.equal(mine[k], shipped["model"][k]) for k in mine)
    norm = trainer.value_norm.state_dict()
    assert norm.keys() == shipped["value_norm"].keys()
    assert all(torch.equal(norm[k], shipped["value_norm"][k]) for k in norm)


def test_init_from_a_checkpoint_of_another_network_shape_is_refused(tmp_path):
    from agents.training.workers import Workers

    cfg = train.load_config(SMOKE, ["warmstart.init_from=pretrained"])  # the smoke network is 32 wide
    with pytest.raises(ValueError, match="warmstart.init_from 'pretrained' has network"):
        train.Trainer(Workers(), train.Run.of(cfg), tmp_path / "run", None, quiet=True)


def test_expert_iteration_with_a_search_teacher_and_its_options(tmp_path):
    """warmstart.teacher_options reach the teacher's factory (a 2-world search labels card play); a first
    rollout too short to reach card play has no label, which is logged as such, not taken for a NaN loss."""
    run_dir = tmp_path / "distill"
    overrides = [*DISTILL_NETWORK, "warmstart.teacher=search:ppo:pretrained", "warmstart.teacher_options={worlds: 2}",
                 "warmstart.play=learner", "warmstart.label_phases=[play]", "warmstart.decisions=1024",
                 "ppo.num_envs=8", "ppo.num_steps=16", "ppo.total_decisions=128", "eval.deals=0"]
    train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--quiet", *[a for o in overrides for a in ("--set", o)]])
    warm = [r for r in records(run_dir) if r["type"] == "warmstart"]
    assert len(warm) == 8
    assert warm[0]["labels"] == 0 and warm[0]["accuracy"] is None  # 16 steps of passing and bidding
    labelled = [r for r in warm if r["labels"] > 0]
    assert sum(r["labels"] for r in warm) <= 1024  # labelled decisions, each counted once (not once per epoch)
    assert labelled and all(0.0 <= r["accuracy"] <= 1.0 and math.isfinite(r["loss"]) for r in labelled)
    assert records(run_dir)[-1]["type"] == "done"


def test_an_unknown_teacher_option_is_a_type_error(tmp_path):
    cfg = train.load_config(SMOKE, [*DISTILL_NETWORK, "warmstart.teacher=search:heuristic",
                                    "warmstart.teacher_options={wrolds: 2}"])  # codespell:ignore wrolds
    from agents.training.workers import Workers

    with pytest.raises(TypeError, match="wrolds"):  # codespell:ignore wrolds
        train.Trainer(Workers(), train.Run.of(cfg), tmp_path / "run", None, quiet=True)


def test_the_warm_start_writes_scheduled_checkpoints_too(tmp_path):
    """checkpoint_every counts warm-start iterations as well, so a killed run keeps its labelled rollouts."""
    run_dir = tmp_path / "run"
    train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--quiet", "--set", "warmstart.decisions=2048",
                "--set", "ppo.total_decisions=512", "--set", "eval.deals=0"])
    saved = [(r["warmstart_iteration"], r["iteration"]) for r in records(run_dir)
             if r["type"] == "checkpoint" and r["reason"] == "scheduled"]
    assert saved[:2] == [(2, 0), (4, 0)]  # checkpoint_every: 2 in the smoke config, 4 warm-start rollouts of 512


@pytest.mark.parametrize("targets", ["action", "values"])
def test_a_run_stopped_in_a_search_teachers_warm_start_resumes_exactly(tmp_path, targets):
    """Stopped between warm-start rollouts (after a scheduled checkpoint), a run with a search teacher, whose
    world sampling draws from its own random stream, resumes to the same labels and weights as one straight run
    (with ``targets: values`` the open decisions' per-action targets are carried over too)."""
    overrides = ["warmstart.teacher=search:heuristic", "warmstart.teacher_options={worlds: 2}",
                 "warmstart.play=learner", "warmstart.label_phases=[bid, play]", "warmstart.decisions=768",
                 f"warmstart.targets={targets}",
                 "ppo.num_envs=8", "ppo.num_steps=16", "ppo.total_decisions=256", "eval.deals=0"]
    sets = [a for o in overrides for a in ("--set", o)]
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    run(["--config", SMOKE, "--run-dir", str(straight), *sets])
    run(["--config", SMOKE, "--run-dir", str(stopped), *sets, "--max-iterations", "4"])
    ckpt = torch.load(stopped / "checkpoints" / "latest.pt", weights_only=True)
    assert ckpt["meta"]["iteration"] == 0  # still in the warm start (4 of its 6 rollouts)
    run(["--resume", str(stopped)])
    a, b = weights(straight / "checkpoints" / "latest.pt"), weights(stopped / "checkpoints" / "latest.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    drop = ("time", "decisions_per_second", "seconds", "charts/decisions_per_second", "charts/collect_fraction")
    kept = [[{k: v for k, v in r.items() if k not in drop} for r in records(d) if r["type"] in ("warmstart", "iteration")]
            for d in (straight, stopped)]
    assert kept[0] == kept[1] and sum(r["labels"] for r in kept[0] if r["type"] == "warmstart") > 0


@pytest.mark.parametrize("overrides, field", [
    (["warmstart.targets=values", "warmstart.teacher=search:heuristic"], "play"),  # play: teacher by default
    (["warmstart.targets=values", "warmstart.play=learner", "warmstart.teacher=heuristic"], "teacher"),
    (["warmstart.targets=soft"], "targets"),
])
def test_value_targets_need_a_search_teacher_labelling_the_learners_games(overrides, field):
    with pytest.raises(ValueError, match=field):
        train.load_config(SMOKE, overrides)


def test_value_targets_train_the_network_towards_the_teachers_distribution(tmp_path):
    """warmstart.targets=values: the network learns the search's per-action targets (a finite cross-entropy,
    never negative), and the open decisions' targets are saved with the run for an exact resume."""
    run_dir = tmp_path / "values"
    overrides = [*DISTILL_NETWORK, "warmstart.teacher=search:ppo:pretrained", "warmstart.teacher_options={worlds: 2}",
                 "warmstart.play=learner", "warmstart.label_phases=[bid, play]", "warmstart.targets=values",
                 "warmstart.decisions=512", "ppo.num_envs=8", "ppo.num_steps=16", "ppo.total_decisions=128",
                 "eval.deals=0"]
    train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--quiet", *[a for o in overrides for a in ("--set", o)]])
    warm = [r for r in records(run_dir) if r["type"] == "warmstart" and r["labels"] > 0]
    assert warm and all(math.isfinite(r["loss"]) and r["loss"] >= 0 and 0 <= r["accuracy"] <= 1 for r in warm)
    ckpt = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    assert "targets" in ckpt["training"]["workers"][0]["storage"]["open_rows"]


def test_a_rollout_keeps_per_action_targets_only_when_made_for_them():
    """Only a warm start with targets: values stores, carries and saves a teacher's per-action targets."""
    plain = SeatRollout(num_steps=2, num_envs=1, n_players=2, input_dim=1)
    assert plain.targets is None and "targets" not in plain.open_fields
    with pytest.raises(ValueError, match="targets=True"):
        plain.add(np.zeros((1, 1), np.float32), np.ones((1, 70), bool), np.zeros(1, np.int64), np.ones(1, bool),
                  np.zeros(1, np.int64), np.zeros(1, np.float32), np.zeros(1, np.float32), np.ones((1, 70), np.float32))
    ro = SeatRollout(num_steps=2, num_envs=1, n_players=2, input_dim=1, targets=True)
    q = np.full((1, 70), 1 / 70, np.float32)
    ro.add(np.zeros((1, 1), np.float32), np.ones((1, 70), bool), np.zeros(1, np.int64), np.ones(1, bool),
           np.zeros(1, np.int64), np.zeros(1, np.float32), np.zeros(1, np.float32), q)
    ro.begin()  # the decision is still open: carried into the next rollout with its targets
    assert "targets" in ro.open_fields and np.array_equal(ro.flat("targets")[ro.pending[0, 0]], q[0])


def test_dry_run_validates_and_writes_nothing(tmp_path, capsys):
    run_dir = tmp_path / "dry"
    train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--dry-run", "--set", "ppo.total_decisions=4096"])
    assert "stages (iterations) bc 1, ppo 8" in capsys.readouterr().out and not run_dir.exists()
    with pytest.raises(SystemExit, match="ppo.clip_coef"):
        train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--dry-run", "--set", "ppo.clip_coef=2"])


def test_dry_run_checks_the_starting_weights_and_the_device(tmp_path):
    """--dry-run fails as the start would: a missing or mismatched warmstart.init_from, a device this machine lacks."""
    run_dir = tmp_path / "dry"
    with pytest.raises(SystemExit, match="warmstart.init_from 'missing.pt'"):
        train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--dry-run", "--set", "warmstart.init_from=missing.pt"])
    with pytest.raises(SystemExit, match="warmstart.init_from 'pretrained' has network"):  # the smoke network is 32 wide
        train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--dry-run", "--set", "warmstart.init_from=pretrained"])
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit, match="config key 'device' = 'cuda': CUDA is not available"):
            train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--dry-run", "--set", "device=cuda"])
    assert not run_dir.exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failed_start_leaves_no_run_directory(tmp_path, workers):
    """A start that fails while the trainer is built (here an opponent file that does not exist) writes nothing:
    the run directory appears only once the run's log opens (a spawned run meets in a temporary folder)."""
    run_dir = tmp_path / "failed"
    with pytest.raises(SystemExit, match="missing.pt"):
        train.main(["--config", SMOKE, "--run-dir", str(run_dir), "--quiet", f"--set=num_workers={workers}",
                    "--set", "selfplay.opponents={self: 0.5, 'ppo:missing.pt': 0.5}"])
    assert not run_dir.exists()
