"""The training config: one pydantic model per section, resolved once into a :class:`Run` of stages.

A process validates its config once (:func:`load_run`, or :func:`load_config` and :meth:`Run.of`); the
trainer, ``--dry-run`` and every torchrun process read the :class:`Run` it gives: the config and each
stage with the whole config it runs with and its iterations. Files, ``base:``, ``--set`` and the
one-line errors are :mod:`agents.training.config_io`'s.

**Stages.** ``stages`` is a list; each entry has a ``kind``, a budget of ``decisions`` (every
decision of every game, as ``ppo.total_decisions`` counts them) and its own keys of the ``ppo`` and
``warmstart`` sections, merged over the config's sections for that stage only:

* ``bc``: behaviour cloning, the teacher (``warmstart.teacher``) plays its own games and the network
  learns its decisions;
* ``expert_iteration``: the network plays, the teacher labels its positions (``warmstart.targets``:
  its action, or a search teacher's per-action values);
* ``ppo``: PPO self-play (``ppo`` and ``selfplay``); its learning-rate and entropy schedules run over
  the stage's own budget.

Without ``stages`` a config is the two-stage shorthand: ``warmstart.decisions`` of warm start
(``bc`` or ``expert_iteration`` by ``warmstart.play``), then ``ppo.total_decisions`` of PPO. Every
stage starts with a fresh optimiser and drops the previous stage's open decisions; the weights,
value normalisation, games, snapshot pool and random streams carry on, so a run is one run:
one directory, one log, one x axis.

**Marks on fields** say what a stage and a resume may change: :class:`RunWide` (a stage may not set
the key) and :data:`RESUMABLE` (``--resume --set`` may change the key, or every key of a section).

>>> run = load_run(None, ["warmstart.decisions=8", "ppo={total_decisions: 18, num_envs: 2, num_steps: 2}"])
>>> run.plan()  # the shorthand: a warm start, then PPO; iterations are whole rollouts of 4 decisions
'bc 2, ppo 5'
>>> load_config(None, ["stages=[{kind: bc, decisions: 8, warmstart: {play: learner}}]"])
Traceback (most recent call last):
...
agents.training.config_io.ConfigError: config key 'stages[0].warmstart.play' is not allowed in a stage: its 'kind' says who plays
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, Field, PrivateAttr, model_validator
from typing_extensions import Self

from agents import parse_spec
from agents.ppo.network import NetworkConfig
from agents.training import config_io
from agents.training.config_io import SECTION, Bool, Float, Int, allowed, not_allowed, section
from pcr_env.config import RulesConfig
from pcr_env.engine import PHASE_NAMES

LEARNER_TEACHER = "search:learner"
"""The teacher spec of search over the network being trained (its weights at the start of the stage)."""
PhaseName = Literal["pass", "bid", "trump", "discard", "play"]
"""A phase where a seat decides: :data:`pcr_env.engine.PHASE_NAMES`, written out for pydantic (a test checks they agree)."""
StageKind = Literal["bc", "expert_iteration", "ppo", "exploiter"]
PPO_KINDS = ("ppo", "exploiter")
"""The stage kinds trained by PPO iterations (the others are warm starts from a teacher)."""
POOL_KINDS = ("snapshot", "exploiter")
"""The opponent kinds of ``selfplay.opponents`` drawn from a pool of frozen networks (``main`` is the league's own)."""


# =========================================================================== marks on fields
@dataclass(frozen=True)
class RunWide:
    """Field mark: a stage may not set this key (its error ends with ``why``; empty: set it at the top level)."""

    why: str = ""


@dataclass(frozen=True)
class Resumable:
    """Field mark: ``--resume --set`` may change this key (on a section: every key in it)."""


RESUMABLE = Resumable()


def marked(model: type[BaseModel], mark: type, prefix: str = "") -> dict[str, Any]:
    """``{dotted key: its mark}`` of every field of ``model`` (and of its sections) that carries a ``mark``."""
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        found = next((m for m in field.metadata if isinstance(m, mark)), None)
        if found is not None:
            out[prefix + name] = found
        elif isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            out.update(marked(field.annotation, mark, f"{prefix}{name}."))
    return out


# =========================================================================== the sections
def _is_spec(spec: str) -> bool:
    parse_spec(spec)  # its ValueError lists the valid specs
    return True


AgentSpec = Annotated[str, allowed(_is_spec, "an agent spec")]
"""An agent spec accepted by :func:`agents.make_agent` (``heuristic``, ``ppo:PATH``, ``search:...``)."""
TeacherSpec = Annotated[str, allowed(lambda spec: spec == LEARNER_TEACHER or _is_spec(spec),
                                     f"an agent spec or '{LEARNER_TEACHER}'")]
"""An agent spec, or ``search:learner``: search over the network being trained (:mod:`agents.training.warmstart`)."""
section(RulesConfig)  # the stdlib dataclasses of the env and the network: unknown keys refused, docstrings kept
section(NetworkConfig)


class PPOConfig(BaseModel):
    """PPO and rollout hyperparameters (section ``ppo``)."""

    model_config = SECTION

    total_decisions: Annotated[Int, RunWide("use the stage's 'decisions'"), RESUMABLE] = Field(60_000_000, ge=1)
    """Training length: decisions taken in all games (every seat, learner or not), warm start excluded."""
    num_envs: Annotated[Int, RunWide()] = Field(256, ge=1)
    """Games played side by side (all workers together; each worker runs num_envs / num_workers)."""
    num_steps: Annotated[Int, RunWide()] = Field(128, ge=1)
    """Decisions per game per rollout; one rollout is num_envs * num_steps decisions."""
    learning_rate: Annotated[Float, RESUMABLE] = Field(3e-4, gt=0)
    """Adam learning rate at the start of PPO."""
    lr_schedule: Annotated[Literal["linear", "constant"], RESUMABLE] = "linear"
    """``linear``: anneal the learning rate to 0 over the run; ``constant``: keep it."""
    adam_eps: Float = Field(1e-5, gt=0)
    """Adam epsilon."""
    gamma: Float = Field(1.0, gt=0, le=1)
    """Discount per decision of the same seat (1.0: undiscounted round score)."""
    gae_lambda: Float = Field(0.95, ge=0, le=1)
    """GAE lambda."""
    return_horizon: Literal["round", "game"] = "round"
    """Where a seat's trajectory ends: ``round`` (the return is the team's score difference of the
    round; games still run to the target score so pass directions and score context cycle as in
    real play) or ``game`` (the sum over the rest of the game; use gamma < 1)."""
    reward_scale: Float = Field(0.05, gt=0)
    """Rewards (round score differences, about -40..40) are multiplied by this before learning."""
    value_norm: Bool = True
    """Normalise value targets with running statistics (the critic predicts normalised returns)."""
    update_epochs: Annotated[Int, RESUMABLE] = Field(4, ge=1)
    """Passes over each rollout."""
    num_minibatches: Annotated[Int, RESUMABLE] = Field(4, ge=1)
    """Minibatches per pass (per worker)."""
    clip_coef: Annotated[Float, RESUMABLE] = Field(0.2, gt=0, lt=1)
    """PPO ratio clipping."""
    clip_vloss: Annotated[Bool, RESUMABLE] = True
    """Clip the value loss around the old value prediction."""
    norm_adv: Annotated[Bool, RESUMABLE] = True
    """Normalise advantages within each minibatch."""
    ent_coef: Annotated[Float, RESUMABLE] = Field(0.01, ge=0)
    """Entropy bonus coefficient (entropy over the legal actions)."""
    ent_coef_final: Annotated[Float | None, RESUMABLE] = Field(None, ge=0)
    """If set, the entropy coefficient anneals linearly from ent_coef to this value."""
    vf_coef: Annotated[Float, RESUMABLE] = Field(0.5, ge=0)
    """Value loss coefficient."""
    max_grad_norm: Annotated[Float, RESUMABLE] = Field(0.5, gt=0)
    """Global gradient-norm clip."""
    target_kl: Annotated[Float | None, RESUMABLE] = Field(None, gt=0)
    """Stop a rollout's update early once the approximate KL exceeds this (null: never)."""
    skip_forced: Bool = True
    """Play forced moves (a single legal action, about 15% of decisions: last tricks, singletons
    that must follow suit) without the network and leave them out of the trajectories: they carry
    no policy gradient, and the seat's next real decision takes over as the bootstrap point."""


class SelfPlayConfig(BaseModel):
    """Who the learner plays against (section ``selfplay``)."""

    model_config = SECTION

    opponents: dict[str, Annotated[Float, Field(ge=0)]] = Field(
        default_factory=lambda: {"self": 0.7, "snapshot": 0.2, "heuristic": 0.1}, min_length=1)
    """Mix of opponents, drawn per game each time a trajectory ends, as probabilities (summing to 1):
    ``self`` (both teams are the current network), ``snapshot`` (a frozen past network from the
    pool), ``exploiter`` (one of the exploiters the run's ``exploiter`` stages trained; self-play until
    the first) or any agent spec (``heuristic``, ``random``, ``ppo:PATH``)."""
    snapshot_every: Annotated[Int, RESUMABLE] = Field(10, ge=1)
    """Add the current network to the snapshot pool every this many PPO iterations
    (the starting network is always added first)."""
    pool_size: Int = Field(10, ge=1)
    """Snapshots kept; the newest replaces the oldest."""
    pfsp_power: Annotated[Float, RESUMABLE] = Field(2.0, ge=0)
    """Prioritised fictitious self-play: snapshot j is drawn with weight (1 - p_j)^power, p_j the
    learner's round-win rate against it (0: uniform)."""
    exploiters_kept: Int = Field(4, ge=1)
    """Exploiters kept in the league's pool (opponent kind ``exploiter``, one per stage of kind ``exploiter``);
    the newest replaces the oldest."""
    exploiter_pfsp_power: Annotated[Float, RESUMABLE] = Field(0.0, ge=0)
    """How the ``exploiter`` kind draws from its pool: as ``pfsp_power`` (0: uniform)."""

    @property
    def agent_specs(self) -> list[str]:
        """The mix's agent specs (its kinds but ``self`` and the pools')."""
        return [name for name in self.opponents if name != "self" and name not in POOL_KINDS]

    @model_validator(mode="after")
    def _check(self) -> Self:
        for name, weight in self.opponents.items():
            try:
                if name in self.agent_specs:
                    parse_spec(name)
            except ValueError as err:
                raise not_allowed(f"opponents.{name}", weight, f"'self', 'snapshot', 'exploiter' or an agent spec ({err})") from None
        total = sum(self.opponents.values())
        if abs(total - 1.0) > 1e-6:
            raise not_allowed("opponents", self.opponents,
                              f"a probability distribution: weights >= 0 that sum to 1 (these sum to {total:g})")
        return self


class WarmStartConfig(BaseModel):
    """Optional start before PPO (section ``warmstart``)."""

    model_config = SECTION

    decisions: Annotated[Int, RunWide("use the stage's 'decisions'")] = Field(0, ge=0)
    """Behaviour-clone the teacher on this many of its own decisions before PPO (0: no warm start)."""
    teacher: TeacherSpec = "heuristic"
    """Agent spec of the teacher (it plays every seat of behaviour cloning's games), or ``search:learner``:
    search over the network itself, frozen at the start of its stage (a recipe needs no earlier run's file)."""
    teacher_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of the teacher's factory, e.g. ``{worlds: 16, phases: [play]}`` for a ``search:``
    teacher (its budget per label: ``benchmarks/speed/search_cost.py``); an unknown one is a ``TypeError``."""
    epochs: Int = Field(2, ge=1)
    """Passes over each rollout of teacher decisions."""
    learning_rate: Float = Field(1e-3, gt=0)
    """Adam learning rate of the warm start (its own optimiser)."""
    init_from: Annotated[str, RunWide()] = ""
    """Start from the weights of this checkpoint (a best.pt / latest.pt / 'pretrained') instead of a
    fresh network; its rules and network shape must match. Empty: fresh network."""
    play: Annotated[Literal["teacher", "learner"], RunWide("its 'kind' says who plays")] = "teacher"
    """Who plays the warm-start games: ``teacher`` (behaviour cloning on the teacher's own games) or
    ``learner`` (expert iteration: the network plays, the teacher only labels its positions)."""
    label_phases: tuple[PhaseName, ...] = Field(PHASE_NAMES, min_length=1)
    """Decisions the teacher labels and the network learns; the others are played but not trained on
    (a search teacher is costly: labelling only ``[bid, trump]``, where contracts are won and lost, is cheap)."""
    targets: Literal["action", "values"] = "action"
    """What the network learns from the teacher: ``action`` (cross-entropy on its chosen action) or ``values``
    (cross-entropy on the teacher's per-action distribution, :meth:`agents.search.SearchAgent.action_targets`:
    the base's probabilities re-weighted by ``exp(advantage / temperature)``, ``temperature`` a teacher option).
    ``values`` needs a ``search:`` teacher and ``play: learner``; its logged ``accuracy`` is agreement with the
    target's most probable action."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.targets == "values" and self.play != "learner":
            raise not_allowed("play", self.play, "'learner' with targets: values (the teacher labels the "
                              "network's own positions)")
        if self.targets == "values" and not self.teacher.startswith("search:"):
            raise not_allowed("teacher", self.teacher, "a search: spec with targets: values (per-action values "
                              "come from its rollouts)")
        return self


class EvalConfig(BaseModel):
    """Duplicate evaluation during training (section ``eval``)."""

    model_config = SECTION

    every: Int = Field(25, ge=0)
    """Evaluate every this many PPO iterations (0: only at the end)."""
    deals: Int = Field(500, ge=0)
    """Deals per evaluation and opponent; each deal is played twice with the seats swapped (0: never evaluate)."""
    final_deals: Int = Field(2000, ge=0)
    """Deals of the evaluation at the end of training."""
    opponents: tuple[AgentSpec, ...] = ("random", "heuristic")
    """Agent specs to evaluate against."""
    best_opponent: str = "heuristic"
    """best.pt is the checkpoint with the highest mean score difference against this opponent."""
    greedy: Bool = True
    """Evaluate (and export) the policy acting greedily (its most probable legal action)."""
    seed: Int = Field(2024, ge=0, lt=2**63)
    """Seed of the evaluation deals (fixed: every evaluation of a run plays the same deals)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.opponents and self.best_opponent not in self.opponents:
            raise not_allowed("best_opponent", self.best_opponent, f"one of eval.opponents {list(self.opponents)}")
        return self


class StageConfig(BaseModel):
    """One stage of a run (an entry of ``stages``)."""

    model_config = SECTION

    kind: StageKind
    """``bc`` (the teacher plays, the network learns its decisions), ``expert_iteration`` (the network plays,
    the teacher labels), ``ppo`` (self-play against ``selfplay.opponents``) or ``exploiter`` (PPO of a copy of the
    network against the network frozen at the stage's start alone, which comes back at its end; the copy joins
    the ``exploiter`` opponents: :mod:`agents.training.league`)."""
    decisions: Int = Field(ge=1)
    """The stage's budget: decisions of all games (every seat), rounded up to whole rollouts."""
    ppo: dict[str, Any] = Field(default_factory=dict)
    """Keys of the ``ppo`` section for this stage (e.g. ``learning_rate``), merged over the config's."""
    warmstart: dict[str, Any] = Field(default_factory=dict)
    """Keys of the ``warmstart`` section for this stage (``teacher``, ``teacher_options``, ``targets``, ``epochs``,
    ``learning_rate``, ``label_phases``), merged over the config's."""


class Config(BaseModel):
    """A training run. Defaults are the shipped configuration; YAML files override them."""

    model_config = SECTION

    run_name: Annotated[str, RESUMABLE, allowed(lambda name: "/" not in name and name not in (".", ".."),
                                                "a plain folder name")] = ""
    """Name of the run directory under output_dir (empty: <config name>__s<seed>__<date-time>)."""
    output_dir: Annotated[str, RESUMABLE] = "runs"
    """Folder holding run directories (relative paths are relative to the current directory)."""
    seed: Int = Field(1, ge=0, lt=2**63)
    """Seed of every random stream: games, weights, action sampling, opponent draws."""
    device: Annotated[str, RESUMABLE, allowed(lambda d: re.fullmatch(r"auto|cpu|cuda(:\d+)?", d) is not None,
                                              "'auto', 'cpu', 'cuda' or 'cuda:N'")] = "auto"
    """``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda`` or ``cuda:N``."""
    precision: Literal["auto", "float32", "bfloat16"] = "auto"
    """Precision of the network's matrix products while training (rollout forward passes and updates):
    ``bfloat16`` is mixed precision (torch.autocast; weights, optimizer state, losses and gradients stay
    float32), about twice as fast on a CPU with native bfloat16 (AVX512-BF16 or AMX) or a recent GPU;
    ``auto`` picks it there and ``float32`` elsewhere. Evaluation and the saved agent always use float32."""
    num_workers: Int = Field(1, ge=1)
    """Data-parallel worker processes (one torch thread each); 2 uses both cores of a 2-core machine."""
    checkpoint_every: Annotated[Int, RESUMABLE] = Field(10, ge=1)
    """Write checkpoints/latest.pt every this many iterations, warm-start ones included (and always at the end or on Ctrl-C)."""
    rules: RulesConfig = Field(default_factory=RulesConfig)
    """Rules of the games (pcr_env.RulesConfig fields: players, passing, double_run_bonus, bidding, ...)."""
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    """Network shape (agents.ppo.NetworkConfig)."""
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    """PPO hyperparameters."""
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    """Opponent mix and snapshot pool."""
    warmstart: WarmStartConfig = Field(default_factory=WarmStartConfig)
    """Behaviour-cloning warm start or initial weights."""
    eval: Annotated[EvalConfig, RESUMABLE] = Field(default_factory=EvalConfig)
    """Evaluation schedule."""
    stages: list[StageConfig] = Field(default_factory=list)
    """The run's stages in order (kind bc, expert_iteration, ppo or exploiter, a budget of decisions, its own ppo and
    warmstart keys; :mod:`agents.training.config`). Empty: warmstart.decisions of warm start, then
    ppo.total_decisions of PPO (both are ignored when stages are given)."""

    _stage_sections: tuple[tuple[StageKind, PPOConfig, WarmStartConfig, int], ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.ppo.num_envs % self.num_workers:
            raise not_allowed("ppo.num_envs", self.ppo.num_envs, f"a multiple of num_workers ({self.num_workers})")
        if "exploiter" in self.selfplay.opponents and not any(stage.kind == "exploiter" for stage in self.stages):
            raise not_allowed("selfplay.opponents.exploiter", self.selfplay.opponents["exploiter"],
                              "only in a run with a stage of kind 'exploiter' (none of its stages trains one)")
        per_rollout = self.ppo.num_envs * self.ppo.num_steps
        self._stage_sections = tuple((stage.kind, ppo, warm, max(1, math.ceil(stage.decisions / per_rollout)))
                                     for stage, ppo, warm in self._stages_with_sections())
        return self

    def _stages_with_sections(self) -> list[tuple[StageConfig, PPOConfig, WarmStartConfig]]:
        """Each stage with the ``ppo`` and ``warmstart`` sections it runs with; without ``stages``, a warm start
        (if ``warmstart.decisions``) then PPO, both with the config's own sections."""
        if not self.stages:
            warm = self.warmstart
            kind = "expert_iteration" if warm.play == "learner" else "bc"
            stages = [StageConfig(kind=kind, decisions=warm.decisions)] if warm.decisions else []
            return [(stage, self.ppo, warm) for stage in [*stages, StageConfig(kind="ppo", decisions=self.ppo.total_decisions)]]
        out = []
        for i, stage in enumerate(self.stages):
            trained_by_ppo = stage.kind in PPO_KINDS
            budget = {"total_decisions": stage.decisions} if trained_by_ppo else {
                "decisions": stage.decisions, "play": "teacher" if stage.kind == "bc" else "learner"}
            ppo = _stage_section(i, "ppo", self.ppo, stage.ppo, budget if trained_by_ppo else {})
            warm = _stage_section(i, "warmstart", self.warmstart, stage.warmstart, budget if not trained_by_ppo else {})
            out.append((stage, ppo, warm))
        return out


def _stage_section(index: int, name: str, base: BaseModel, keys: dict[str, Any], budget: dict[str, Any]) -> Any:
    """Section ``name`` of stage ``index``: its ``keys`` (none of them run-wide) and ``budget`` merged over ``base``,
    validated (errors name the key inside the stage)."""
    model = type(base)
    run_wide = marked(model, RunWide)
    for key in keys:
        if key in run_wide:
            why = run_wide[key].why or f"it is the run's (set {name}.{key} at the top level)"
            raise config_io.ConfigError(f"config key 'stages[{index}].{name}.{key}' is not allowed in a stage: {why}")
    data = config_io.deep_merge(base.model_dump(mode="json"), {**keys, **budget})
    return config_io.validate(model, data, at=("stages", str(index), name))


class Stage(NamedTuple):
    """A stage of a resolved run."""

    kind: StageKind
    """``bc``, ``expert_iteration``, ``ppo`` or ``exploiter``."""
    config: Config
    """The whole config the stage runs with (its ``ppo`` and ``warmstart`` keys merged over the run's)."""
    iterations: int
    """Its budget in whole rollouts of ``ppo.num_envs * ppo.num_steps`` decisions."""

    @property
    def by_ppo(self) -> bool:
        """Whether PPO iterations train it (else a warm start from its teacher)."""
        return self.kind in PPO_KINDS


@dataclass(frozen=True)
class Run:
    """A config resolved for training: the config and its stages, each with its settings and iterations."""

    config: Config
    stages: tuple[Stage, ...]

    @classmethod
    def of(cls, config: Config) -> Run:
        """The run of a validated config (no second validation: its stages' sections were validated with it)."""
        stages = []
        for sections in config._stage_sections:
            kind, ppo, warm, iterations = sections
            stage_config = config.model_copy(update={"ppo": ppo, "warmstart": warm, "stages": []})
            stage_config._stage_sections = (sections,)  # its own stage only, not the run's (a copy keeps private attrs)
            stages.append(Stage(kind, stage_config, iterations))
        return cls(config, tuple(stages))

    @property
    def decisions_per_iteration(self) -> int:
        """Decisions of one rollout (every stage's iterations are rollouts of this size)."""
        return self.config.ppo.num_envs * self.config.ppo.num_steps

    def plan(self) -> str:
        """The stages and their iterations on one line, e.g. ``bc 92, ppo 2747``."""
        return ", ".join(f"{stage.kind} {stage.iterations}" for stage in self.stages)


def load_config(path: str | None, overrides: list[str], base: dict[str, Any] | None = None) -> Config:
    """Config from defaults, then a YAML file (and its ``base:``) or ``base``, then ``key=value`` overrides."""
    data = config_io.apply_overrides(config_io.load_yaml(path) if path else dict(base or {}), overrides)
    _check_not_shadowed(data, overrides)
    return config_io.validate(Config, data)


def _check_not_shadowed(data: dict[str, Any], overrides: list[str]) -> None:
    """A run-wide ``ppo.K`` or ``warmstart.K`` override that every stage reading that section sets for itself
    would change nothing: a :class:`~agents.training.config_io.ConfigError` naming the stages' own keys."""
    stages = [stage for stage in data.get("stages") or [] if isinstance(stage, dict)]
    for item in overrides:
        key = item.partition("=")[0].strip()
        section, _, name = key.partition(".")
        if section not in ("ppo", "warmstart") or not name or "." in name:
            continue
        readers = [i for i, stage in enumerate(stages) if section == "ppo" or stage.get("kind") not in PPO_KINDS]
        if readers and all(name in (stages[i].get(section) or {}) for i in readers):
            own = ", ".join(f"stages[{i}].{key}" for i in readers)
            raise config_io.ConfigError(f"override {item!r} changes nothing: every stage that reads {section!r} sets "
                                        f"{name!r} itself ({own}); override that instead, e.g. "
                                        f"--set stages[{readers[0]}].{item.strip()}")


def load_run(path: str | None, overrides: list[str], base: dict[str, Any] | None = None) -> Run:
    """:func:`load_config`, resolved into its :class:`Run`."""
    return Run.of(load_config(path, overrides, base))


def key_listing() -> list[str]:
    """``train.py --list-keys``: every key, its type and meaning, and its marks (``[resumable]``: ``--resume --set``
    may change it; ``[not in a stage]``: the run's alone)."""
    run_wide = {f"{section}.{key}" for section, model in (("ppo", PPOConfig), ("warmstart", WarmStartConfig))
                for key in marked(model, RunWide)}
    lines = []
    for key, kind, doc in config_io.describe(Config):
        marks = [m for m, on in (("resumable", any(key == k or key.startswith(k + ".") for k in RESUMABLE_KEYS)),
                                 ("not in a stage", key in run_wide)) if on]
        lines.append(f"{key:34s} {kind:40s} {doc}" + "".join(f" [{m}]" for m in marks))
    return lines


# =========================================================================== what a resume may change
RESUMABLE_KEYS = tuple(marked(Config, Resumable))
"""Config keys (and whole sections) that ``--set`` may change when a run resumes; the others fix the shape or
meaning of the saved state (games, network, opponents, random streams)."""


def _leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: list(data) if isinstance(data, tuple) else data}


def check_resume_changes(saved: dict[str, Any], config: dict[str, Any]) -> None:
    """Refuse ``--set`` changes that the saved state cannot follow, naming the key."""
    before, after = _leaves(saved), _leaves(config)
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new or any(key == k or key.startswith(k + ".") for k in RESUMABLE_KEYS):
            continue
        if key == "num_workers":
            raise ValueError(f"this run was trained with num_workers={old}: resume it with the same number "
                             "(its games and random streams are split that way)")
        raise ValueError(f"--resume: config key {key!r} cannot change when a run resumes (the run has {old!r}, "
                         f"--set asks for {new!r}): the saved games, network and random streams depend on it. "
                         f"Start a new run for that (keys that may change: {', '.join(RESUMABLE_KEYS)})")


__all__ = ["Config", "PPOConfig", "SelfPlayConfig", "WarmStartConfig", "EvalConfig", "StageConfig", "Stage", "Run",
           "PPO_KINDS", "POOL_KINDS", "RunWide", "RESUMABLE", "RESUMABLE_KEYS", "LEARNER_TEACHER", "marked", "key_listing",
           "load_config", "load_run", "check_resume_changes"]
