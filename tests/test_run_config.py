"""Training configs on pydantic (agents/training/config_io.py): nested sections, overrides, one-line errors naming
the dotted key, files that derive from a base recipe, the key listing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, model_validator

from agents.training.config_io import (
    SECTION,
    Bool,
    ConfigError,
    Float,
    Int,
    apply_overrides,
    describe,
    load_yaml,
    not_allowed,
    to_plain,
    validate,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import train  # noqa: E402
from agents.training.exploit import plan_exploit  # noqa: E402


class _Inner(BaseModel):
    model_config = SECTION
    lr: Float = Field(0.1, gt=0)
    """Learning rate."""
    sizes: tuple[Int, ...] = (4, 4)
    mode: str = "a"

    @model_validator(mode="after")
    def _check(self):
        if self.mode not in ("a", "b", "c"):
            raise not_allowed("mode", self.mode, "'a', 'b' or 'c'")
        return self


class _Outer(BaseModel):
    model_config = SECTION
    seed: Int = 0
    flag: Bool = False
    maybe: Float | None = None
    mix: dict[str, Float] = Field(default_factory=dict)
    inner: _Inner = Field(default_factory=_Inner)


def test_nested_values_and_overrides():
    cfg = validate(_Outer, apply_overrides({"inner": {"sizes": [8]}}, ["inner.lr=1e-4", "mix={a: 1, b: 0.5}",
                                                                       "maybe=null", "flag=true", "seed=1.0e+3"]))
    assert cfg == _Outer(seed=1000, flag=True, maybe=None, mix={"a": 1.0, "b": 0.5}, inner=_Inner(lr=1e-4, sizes=(8,)))
    assert to_plain(cfg)["inner"] == {"lr": 1e-4, "sizes": [8], "mode": "a"}


@pytest.mark.parametrize("data, message", [
    ({"sede": 1}, "unknown config key 'sede' (did you mean 'seed'?): allowed keys at the top level are"),
    ({"inner": {"lrr": 1}}, "unknown config key 'inner.lrr' (did you mean 'inner.lr'?)"),
    ({"seed": "one"}, "config key 'seed' = 'one' is not allowed: expected an integer"),
    ({"seed": True}, "config key 'seed' = True is not allowed: expected an integer"),
    ({"seed": 2.5}, "config key 'seed' = 2.5 is not allowed: expected an integer"),
    ({"flag": 1}, "config key 'flag' = 1 is not allowed: expected true or false"),
    ({"inner": {"sizes": [4, "x"]}}, "config key 'inner.sizes[1]' = 'x' is not allowed: expected an integer"),
    ({"inner": {"lr": -1}}, "config key 'inner.lr' = -1 is not allowed: expected a number > 0"),
    ({"inner": {"mode": "z"}}, "config key 'inner.mode' = 'z' is not allowed: expected 'a', 'b' or 'c'"),
    ({"inner": 5}, "config key 'inner' = 5 is not allowed: expected a mapping of keys"),
    ({"mix": {"a": "lots"}}, "config key 'mix.a' = 'lots' is not allowed: expected a number"),
    ({"maybe": float("nan")}, "config key 'maybe' = nan is not allowed: expected a finite number"),
])
def test_errors_name_the_dotted_key_the_value_and_what_is_allowed(data, message):
    with pytest.raises(ConfigError) as err:
        validate(_Outer, data)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_override_syntax_errors():
    with pytest.raises(ConfigError, match="expected key=value"):
        apply_overrides({}, ["inner.lr"])
    with pytest.raises(ConfigError, match="'seed' is not a section"):
        apply_overrides({"seed": 3}, ["seed.x=1"])
    data = {"inner": {"lr": 1}}
    apply_overrides(data, ["inner.lr=2"])
    assert data == {"inner": {"lr": 1}}  # the input is not changed


def test_a_file_derives_from_its_base_and_cycles_are_refused(tmp_path):
    (tmp_path / "base.yaml").write_text("seed: 3\ninner: {lr: 0.5, mode: b}\nmix: {a: 0.5, b: 0.5}\n")
    (tmp_path / "variant.yaml").write_text("base: base.yaml\ninner: {mode: c}\nmix: {a: 1}\n")
    cfg = validate(_Outer, load_yaml(tmp_path / "variant.yaml"))
    assert cfg.seed == 3 and cfg.inner.lr == 0.5 and cfg.inner.mode == "c"
    assert cfg.mix == {"a": 1.0, "b": 0.5}  # sections merge key by key (selfplay.opponents is replaced whole)
    (tmp_path / "a.yaml").write_text("base: b.yaml\nseed: 1\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\nseed: 2\n")
    with pytest.raises(ConfigError, match="leads back to itself"):
        load_yaml(tmp_path / "a.yaml")


def test_every_variant_config_is_the_default_recipe_plus_its_rules():
    recipe = to_plain(train.load_config(str(ROOT / "configs" / "ppo_selfplay.yaml"), []))
    expected = {"auction": {"rules"}, "no_pass": {"rules"}, "six_players": {"rules"},
                "double_run_bonus": {"rules", "ppo"}}
    for name, differs in expected.items():
        variant = to_plain(train.load_config(str(ROOT / "configs" / f"{name}.yaml"), []))
        assert {k for k in recipe if recipe[k] != variant[k]} == differs, name
    drb = to_plain(train.load_config(str(ROOT / "configs" / "double_run_bonus.yaml"), []))
    assert {k for k in recipe["ppo"] if recipe["ppo"][k] != drb["ppo"][k]} == {"reward_scale"}


def test_the_plain_recipe_of_an_hour_is_the_full_recipe_with_a_shorter_schedule():
    recipe = to_plain(train.load_config(str(ROOT / "configs" / "ppo_selfplay.yaml"), []))
    hour = to_plain(train.load_config(str(ROOT / "configs" / "ppo_hour.yaml"), []))
    differs = {f"{section}.{k}" for section in recipe if isinstance(recipe[section], dict)
               for k in recipe[section] if recipe[section][k] != hour[section][k]}
    assert differs == {"ppo.total_decisions", "eval.every", "eval.final_deals"}
    assert {k for k in recipe if not isinstance(recipe[k], dict) and recipe[k] != hour[k]} == set()
    assert hour["ppo"]["total_decisions"] < recipe["ppo"]["total_decisions"]


def test_the_main_job_is_the_card_aware_network_from_nothing_in_stages():
    run = train.load_run(str(ROOT / "configs" / "card_hour.yaml"), [])
    job = run.config
    assert job.network.card_head and not job.warmstart.init_from
    assert [stage.kind for stage in run.stages] == ["bc", "ppo", "ppo"]
    assert not any(stage.config.warmstart.init_from for stage in run.stages)
    assert run.stages[0].config.warmstart.teacher == "heuristic"  # an agent of the repository, not a file
    makefile = (ROOT / "Makefile").read_text()
    assert "CONFIG ?= configs/card_hour.yaml" in makefile and "--config $(CONFIG)" in makefile
    # make train's figure of record is evaluate.py on seed 0: a suite the run's own evaluations never see.
    assert "--seed 0" in makefile and job.eval.seed != 0 and job.eval.best_opponent == "heuristic"


def _recipe(path: Path) -> train.Run:
    """The run a config under configs/ trains; ``exploit.yaml`` is the best response's, here to the heuristic."""
    if path.name == "exploit.yaml":
        return plan_exploit("heuristic", "12M", path).run
    return train.load_run(str(path), [])


def test_no_config_starts_from_a_file_only_experiment_recipes_do():
    """The recipes under configs/ start from nothing; those that start from an earlier run's file live in
    configs/experiments/ and name a committed file, kept in agents/pretrained/ or with its experiment's results in
    benchmarks/results/, never a run directory's output."""
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        for _, c, _ in _recipe(path).stages:
            assert not c.warmstart.init_from and "ppo:" not in c.warmstart.teacher, path.name
    experiments = sorted((ROOT / "configs" / "experiments").glob("*.yaml"))
    assert experiments
    for path in experiments:
        assert path.read_text().startswith("# An experiment recipe"), path.name
        for _, c, _ in train.load_run(str(path), []).stages:
            files = [c.warmstart.init_from, c.warmstart.teacher.rpartition("ppo:")[2] if "ppo:" in c.warmstart.teacher else ""]
            kept = ("agents/pretrained/", "benchmarks/results/")
            assert all(not f or f.startswith(kept) and (ROOT / f).is_file() for f in files), (path.name, files)


def test_key_listing_covers_every_leaf_with_its_docstring():
    rows = {key: (tp, doc) for key, tp, doc in describe(train.Config)}
    assert rows["ppo.learning_rate"] == ("float", "Adam learning rate at the start of PPO.")
    assert rows["rules.players"][1].startswith("Seats at the table")  # a stdlib dataclass of pcr_env
    assert rows["network.activation"][0] == "'relu' | 'tanh'"
    assert rows["ppo.ent_coef_final"][0] == "float | null"
    assert all(doc for _, doc in rows.values())  # every key is documented
    # A docstring wrapped over several lines is listed whole, not cut at its first line break.
    assert rows["ppo.skip_forced"][1].endswith("takes over as the bootstrap point.")
    assert [key for key, (_, doc) in rows.items() if not doc.endswith(".") or "\n" in doc] == []
    assert len(rows) >= 50


# --------------------------------------------------------------------------- resolved once (agents/training/config.py)
def _count_config_validations(monkeypatch) -> list[str]:
    """Record every validation of a whole config (the sections of its stages are validated inside it)."""
    from agents.training import config_io

    seen, validate_once = [], config_io.validate

    def counting(model, data, at=()):
        if model is train.Config:
            seen.append("Config")
        return validate_once(model, data, at)

    monkeypatch.setattr(config_io, "validate", counting)
    return seen


def test_a_run_wide_override_that_every_stage_sets_itself_is_refused_naming_the_stage_key():
    """card_hour's cloning stage sets its own warmstart.learning_rate: the run-wide key would change nothing."""
    config = str(ROOT / "configs" / "card_hour.yaml")
    with pytest.raises(ValueError, match=r"changes nothing.*stages\[0\]\.warmstart\.learning_rate=3e-4"):
        train.load_config(config, ["warmstart.learning_rate=3e-4"])
    run = train.load_run(config, ["stages[0].warmstart.learning_rate=3e-4"])
    assert run.stages[0].config.warmstart.learning_rate == 3e-4
    # Set by one PPO stage only: the run-wide key still reaches the other, so it is taken.
    run = train.load_run(config, ["ppo.learning_rate=1e-4"])
    assert [stage.config.ppo.learning_rate for stage in run.stages[1:]] == [1e-4, 3e-5]


def test_a_staged_config_is_validated_once_into_its_run(monkeypatch):
    seen = _count_config_validations(monkeypatch)
    run = train.load_run(str(ROOT / "configs" / "card_long.yaml"), ["stages.3.ppo.learning_rate=5e-5"])
    assert seen == ["Config"]
    assert run.plan() == "bc 92, ppo 2747, expert_iteration 10, ppo 184"
    assert [stage.config.ppo.learning_rate for stage in run.stages] == [3e-4, 3e-4, 3e-4, 5e-5]
    assert run.stages[2].config.warmstart.play == "learner" and run.stages[2].config.warmstart.targets == "values"
    assert all(stage.config.stages == [] for stage in run.stages)  # a stage's config is the whole config it runs with
    # a stage's config resolves to that stage alone, not to the run's stages it was copied from
    assert [train.Run.of(stage.config).stages for stage in run.stages] == [(stage,) for stage in run.stages]
    assert seen == ["Config"]  # reading the run validated nothing again


def test_train_dry_run_and_a_short_run_validate_the_config_once(monkeypatch, tmp_path, capsys):
    seen = _count_config_validations(monkeypatch)
    smoke = str(ROOT / "configs" / "smoke.yaml")
    train.main(["--config", smoke, "--run-dir", str(tmp_path / "dry"), "--dry-run"])
    assert seen == ["Config"] and "stages (iterations) bc 1, ppo 4" in capsys.readouterr().out
    seen.clear()
    train.main(["--config", smoke, "--run-dir", str(tmp_path / "run"), "--quiet", "--max-iterations", "2",
                "--set", "eval.deals=0"])
    assert seen == ["Config"]
    seen.clear()
    train.main(["--resume", str(tmp_path / "run"), "--quiet", "--max-iterations", "1", "--set", "eval.deals=0"])
    assert seen == ["Config"]


def test_what_a_stage_and_a_resume_may_change_is_marked_on_the_fields():
    from agents.training.config import RESUMABLE_KEYS, PPOConfig, RunWide, WarmStartConfig, key_listing, marked

    assert set(marked(PPOConfig, RunWide)) == {"total_decisions", "num_envs", "num_steps"}
    assert set(marked(WarmStartConfig, RunWide)) == {"decisions", "play", "init_from"}
    assert set(RESUMABLE_KEYS) == {
        "run_name", "output_dir", "device", "checkpoint_every", "eval", "selfplay.snapshot_every", "selfplay.pfsp_power",
        "selfplay.exploiter_pfsp_power",
        *(f"ppo.{k}" for k in ("total_decisions", "learning_rate", "lr_schedule", "update_epochs", "num_minibatches",
                               "clip_coef", "clip_vloss", "norm_adv", "ent_coef", "ent_coef_final", "vf_coef",
                               "max_grad_norm", "target_kl"))}
    listing = {line.split()[0]: line for line in key_listing()}  # train.py --list-keys shows the marks
    assert listing["ppo.num_envs"].endswith(". [not in a stage]") and listing["eval.deals"].endswith(". [resumable]")
    assert listing["ppo.total_decisions"].endswith(". [resumable] [not in a stage]") and listing["seed"].endswith(".")
    with pytest.raises(ValueError, match="config key 'stages\\[1\\].warmstart.init_from' is not allowed in a stage: "
                                         "it is the run's \\(set warmstart.init_from at the top level\\)"):
        train.load_config(None, ["stages=[{kind: bc, decisions: 8}, {kind: bc, decisions: 8, warmstart: {init_from: x}}]"])
