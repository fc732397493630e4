"""The training configuration: one validated value, loaded from YAML with ``key=value`` overrides.

Every field is documented below; an unknown key or a bad value raises :class:`ConfigError`
naming it. Nested keys are overridden with dots: ``league.snapshot_every=5``.

A run needs a config file that sets something: none, or an empty one, is refused with the list of
the shipped configs (``configs/*.yaml``), rather than silently starting a default 5 M-decision run.

Types are strict, so a mistake is refused by name rather than converted:

* a whole-number setting takes an int, or a float that is a whole number (``1e6`` is 1,000,000;
  ``1.5`` is refused); never a bool (``seed: true``) or a string (``seed: "1"``), as rules options
  (:func:`hearts_env.settings_files.whole_number`, shared with them);
* a number setting takes an int or a float, never a bool or a string;
* a flag takes ``true``/``false`` only; text settings take strings only.

Files and overrides are read YAML 1.2 style (:mod:`hearts_env.settings_files`), so ``1e6`` and
``3e-4`` are numbers there; a quoted ``"1e6"`` or ``"100"`` is text on purpose, and refused.

Every agent spec (``eval_opponents``, ``imitation.teacher``, ``league.bots``) is checked by
:func:`check_agents`, which builds it with :func:`agents.make` for the run's rules, before a run does
any work. ``run_name`` must be a plain folder name, so a run stays inside its runs directory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Optional

import numpy as np
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from agents import AgentSpecError, make
from hearts_env.rule_space import RuleSpace
from hearts_env.rules import Rules, RulesError, shown_field, shown_value
from hearts_env.settings_files import apply_overrides, read_mapping, whole_number


#: Rewards and value targets are penalty points / 26 (a hand's points without a moon), so they stay near [-1, 0].
REWARD_SCALE = 1.0 / 26.0
#: Bounds on the sizes of a run, far beyond the shipped configs' (30 million decisions, 4,096 tables,
#: layers of 512): a run past them would not end or not fit in memory. Recipes and the commands that
#: collect and fit (hearts_app/arguments.py) take the same: hands played to collect examples (the
#: value model's default is 2 million), passes over the examples, games played at once, a layer's
#: width (8,192 units of 629 inputs are 5 M weights a layer already), a search's sampled deals per
#: decision (as ``expert:N`` takes); and an evaluation at most as many deals as a deal set holds
#: (eval.deals.MAX_DEALS).
MAX_DECISIONS = 10_000_000_000
MAX_HANDS = 100_000_000
MAX_EPOCHS = 1000
MAX_TABLES = 16_384
MAX_WIDTH = 8192
MAX_DETERMINIZATIONS = 4096
MAX_EVAL_DEALS = 1_000_000
#: Adam's step size at most (beyond, the first step overflows float32 weights or makes them NaN).
MAX_LEARNING_RATE = 1.0

#: The shipped training configs: ``configs/*.yaml`` of the project (rules files live in configs/rules/).
CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"

#: What ``run_name`` may be: one folder name, no path (letters, digits, ``.``, ``_``, ``-``;
#: starting with a letter or digit, so never ``.``, ``..``, a hidden folder or an option-like ``-x``).
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the key."""


class SettingsChanged(ConfigError):
    """A run resumed with other settings than it was started with; ``changes``: ``"key old -> new"``."""

    def __init__(self, message: str, changes: list[str]):
        super().__init__(message)
        self.changes = changes


def _number(value: Any) -> Any:
    """A number setting: NumPy's numbers as Python's (strict mode refuses them); any other value
    unchanged, for strict mode to judge."""
    if isinstance(value, np.integer):  # np.bool_ is no np.integer: it stays refused
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _whole(value: Any) -> int:
    """An int setting: an int, or a float that is a whole number (``1e6``, ``1000000.0``)."""
    try:
        return whole_number(value)
    except ValueError as err:
        raise ValueError(f"{err}, got {value!r}") from None


#: Strict int and float settings (the model is strict; these admit the forms described above).
Int = Annotated[int, BeforeValidator(_whole)]
Float = Annotated[float, BeforeValidator(_number)]


class Strict(BaseModel):
    """The base of every settings model (here and in ``train.recipe_config``): unknown keys refused, frozen."""

    # strict: no silent conversion ("1" -> 1, true -> 1, "yes" -> True); Int/Float above admit whole
    # numbers written as floats and NumPy's numbers.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class LeagueConfig(Strict):
    """Who sits at the learner's tables. Each seat is drawn by these weights; every table keeps
    at least ``min_learners`` seats for the current policy (shared weights)."""

    current: Float = Field(0.5, ge=0, description="weight of a seat played by the current policy")
    snapshots: Float = Field(0.2, ge=0, description="weight of a seat played by a past snapshot")
    bots: dict[str, Annotated[Float, Field(ge=0)]] = Field(
        default_factory=lambda: {"easy": 0.05, "normal": 0.1, "hard": 0.15}, description="weights of heuristic bots by spec")
    snapshot_every: Int = Field(10, ge=1, description="iterations between snapshots added to the league")
    max_snapshots: Int = Field(8, ge=1, description="snapshots kept (oldest dropped)")
    min_learners: Int = Field(1, ge=1, description="current-policy seats per table, at least")

    @model_validator(mode="after")
    def _someone_fills_the_seats(self) -> "LeagueConfig":
        # The first tables have no snapshots yet: the current policy or a bot must be able to sit.
        if self.current + sum(self.bots.values()) <= 0:
            raise ValueError("current and every bot weigh 0: nobody can fill the first tables' seats "
                             "(snapshots exist only later)")
        return self


class ImitationConfig(Strict):
    """Optional warm start: imitate a bot before PPO (behaviour cloning, plus a value fit)."""

    teacher: Optional[str] = Field(None, description="bot spec to imitate, e.g. hard; None skips it")
    decisions: Int = Field(1_000_000, ge=0, le=MAX_DECISIONS, description="teacher decisions to learn from")
    epochs: Int = Field(3, ge=1, le=MAX_EPOCHS)
    batch_size: Int = Field(4096, ge=64)
    learning_rate: Float = Field(1e-3, gt=0, le=MAX_LEARNING_RATE)
    anneal_lr: bool = Field(False, description="decay the learning rate linearly to 2% of it over the decisions")
    held_out_tables: Int = Field(0, ge=0, description="hands (one per table) the teacher plays for the held-out "
                                                      "agreement measure after imitating (0: not measured)")


class RuleSettings(Strict):
    """The base of the settings that name ``rules`` and an optional ``rule_space`` (a training run's,
    a recipe's): each refused by name when malformed, the space refused when it does not cover the
    rules, and both read back as ``rules_value`` and ``rule_space_value``. The subclass declares the
    two fields; ``RULES_OWNER`` names whose rules they are in the refusal."""

    RULES_OWNER: ClassVar[str] = "run's"

    @field_validator("rules", check_fields=False)
    @classmethod
    def _rules(cls, value: Any) -> Any:
        to_rules(value)  # a bad preset or option is refused by name
        return value

    @field_validator("rule_space", check_fields=False)
    @classmethod
    def _rule_space(cls, value: Any) -> Any:
        if value is not None:
            to_space(value)  # a malformed space is refused by name
        return value

    @model_validator(mode="after")
    def _space_covers_the_rules(self):
        space = self.rule_space_value
        if space is not None and not space.covers(self.rules_value):
            raise ValueError(f"rule_space does not cover the {self.RULES_OWNER} rules: "
                             f"{space.refusal(self.rules_value)}")
        return self

    @property
    def rules_value(self) -> Rules:
        return to_rules(self.rules)

    @property
    def rule_space_value(self) -> RuleSpace | None:
        return None if self.rule_space is None else to_space(self.rule_space)


class TrainConfig(RuleSettings):
    run_name: str = Field("ppo", description="folder under the runs directory: a plain folder name (letters, digits, "
                                             "'.', '_', '-', starting with a letter or digit)")
    rules: Any = Field("classic", description="rules preset name or a mapping of options: the run's home rules "
                                              "(with rule_space, one rule set of it)")
    rule_space: Optional[Any] = Field(
        None, description="train across rule sets: a family (classic, two_player; hearts_env/rule_space.py) or "
                          "{fields: {option: [values]}, held_out: [...]}; each round's tables are split into "
                          "rule_sets_per_round groups, each playing a rule set drawn from it. None: the rules alone")
    rule_sets_per_round: Int = Field(16, ge=1, le=4096, description="rule sets drawn per rollout or imitation "
                                                                    "round when rule_space is set")
    seed: Int = Field(0, ge=0, lt=2**63, description="seed of the deals, the league and the network (0 to 2**63 - 1)")
    total_decisions: Int = Field(5_000_000, ge=0, le=MAX_DECISIONS, description="learner decisions to train on (0: "
                                                                               "imitation only, as an imitation level "
                                                                               "is trained)")
    num_tables: Int = Field(1024, ge=1, le=MAX_TABLES, description="games played at once in each rollout (one hand "
                                                                  "each)")
    rollout_shards: Optional[Int] = Field(
        None, ge=1, le=MAX_TABLES, description="each rollout's tables split into this many shards, each seeded on its "
                                               "own, which the rollout workers share out: the weights depend on it, "
                                               "not on the number of workers or the backend. None: as many as "
                                               "--rollout-workers (1 without), fixed when the run starts")
    hidden: list[Annotated[Int, Field(ge=1, le=MAX_WIDTH)]] = Field(
        default_factory=lambda: [128, 128], max_length=16, description="hidden layer sizes (each 1 or more)")
    learning_rate: Float = Field(3e-4, gt=0, le=MAX_LEARNING_RATE)
    anneal_lr: bool = True
    gamma: Float = Field(1.0, ge=0, le=1)
    gae_lambda: Float = Field(0.95, ge=0, le=1)
    update_epochs: Int = Field(2, ge=1, le=MAX_EPOCHS)
    minibatch_size: Int = Field(4096, ge=32)
    clip_coef: Float = Field(0.2, gt=0)
    ent_coef: Float = Field(0.01, ge=0)
    vf_coef: Float = Field(0.5, ge=0)
    max_grad_norm: Float = Field(0.5, gt=0)
    target_kl: Optional[Float] = Field(None, gt=0, description="stop an update's epochs past this KL")
    reward: Literal["points", "relative"] = Field(
        "points", description="points: minus own penalty points; relative: minus (own - mean of the others)")
    critic: Literal["policy_head", "full_information"] = Field(
        "policy_head", description="what values the decisions for the advantages: the policy network's value head "
                                   "(what the seat sees), or a separate network that also reads every other hand "
                                   "(train/critic.py; training only: the exported policy is unchanged)")
    critic_hidden: list[Annotated[Int, Field(ge=1, le=MAX_WIDTH)]] = Field(
        default_factory=lambda: [256, 256], min_length=1, max_length=16,
        description="with critic full_information: its hidden layer sizes")
    critic_warmup_iterations: Int = Field(
        0, ge=0, description="with critic full_information: iterations at the run's start in which only the critic "
                             "learns (the policy is frozen), so that a new critic beside a trained policy "
                             "(init_from) values its play before the policy follows it")
    league: LeagueConfig = Field(default_factory=LeagueConfig)
    imitation: ImitationConfig = Field(default_factory=ImitationConfig)
    init_from: Optional[str] = Field(
        None, description="policy checkpoint whose weights start the run (fine-tuning); instead of imitation. "
                          "A larger hidden grows it first (each layer at least as wide, layers may be appended), "
                          "keeping what it computes")
    eval_every: Int = Field(20, ge=0, description="iterations between arena evaluations (0: never)")
    eval_deals: Int = Field(200, ge=1, le=MAX_EVAL_DEALS)
    eval_opponents: list[str] = Field(default_factory=lambda: ["easy", "normal", "hard"])
    checkpoint_every: Int = Field(5, ge=1, description="iterations between checkpoints")
    device: str = Field("auto", description="auto (a GPU when present), cpu, cuda, cuda:N")
    torch_threads: Int = Field(2, ge=1, le=1024)

    @field_validator("run_name")
    @classmethod
    def _plain_folder_name(cls, value: str) -> str:
        # The run writes into runs_dir/run_name: a path ("../x", "a/b", "/tmp/x") would write elsewhere.
        if not RUN_NAME.fullmatch(value):
            raise ValueError(f"must be a plain folder name (letters, digits, '.', '_', '-', starting with a letter "
                             f"or digit), got {value!r}")
        return value

    @model_validator(mode="after")
    def _a_table_for_each_rule_set(self) -> "TrainConfig":
        if self.rule_space is not None and self.rule_sets_per_round > self.num_tables:
            raise ValueError(f"rule_sets_per_round {self.rule_sets_per_round} is more than num_tables "
                             f"{self.num_tables}: each rule set needs a table")
        return self

    @model_validator(mode="after")
    def _a_table_for_each_shard(self) -> "TrainConfig":
        if self.rollout_shards is not None and self.rollout_shards > self.num_tables:
            raise ValueError(f"rollout_shards {self.rollout_shards} is more than num_tables {self.num_tables}: "
                             f"each shard needs a table")
        return self

    @model_validator(mode="after")
    def _learners_fit_the_table(self) -> "TrainConfig":
        players = self.rules_value.num_players
        if self.league.min_learners > players:
            raise ValueError(f"league.min_learners is {self.league.min_learners}, but a table of these rules "
                             f"seats {players} players")
        return self

    @model_validator(mode="after")
    def _one_warm_start(self) -> "TrainConfig":
        if self.init_from and self.imitation.teacher:
            raise ValueError("init_from and imitation.teacher both set: start from a checkpoint or imitate a bot, "
                             "not both (set imitation.teacher=null)")
        return self


def to_rules(value: Any) -> Rules:
    try:
        return Rules.resolve(value)
    except RulesError as err:  # pydantic reports ValueErrors against the field
        raise ValueError(str(err)) from None


def to_space(value: Any) -> RuleSpace:
    try:
        return RuleSpace.resolve(value)
    except RulesError as err:
        raise ValueError(str(err)) from None


def shipped_configs() -> list[str]:
    """The shipped training configs, as paths to type (relative to the current folder when inside it)."""
    paths = []
    for path in sorted(CONFIG_DIR.glob("*.yaml")):
        try:
            paths.append(str(path.relative_to(Path.cwd())))
        except ValueError:
            paths.append(str(path))
    return paths


def _pick_one() -> str:
    return "pick one of " + ", ".join(shipped_configs()) + " (configs/smoke.yaml runs in seconds), or write your own"


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """A config from a YAML file with ``key=value`` overrides applied.

    The file is required and must set something: training on the built-in defaults alone (5 M
    decisions, 1,024 tables) is never what a missing or empty file meant. ``TrainConfig()`` still
    gives the defaults to Python code that asks for them.
    """
    if path is None:
        raise ConfigError(f"no training config given; {_pick_one()}")
    data: dict[str, Any] = read_mapping(path, ConfigError, "config")
    if not data:
        raise ConfigError(f"config file {path} is empty (it sets nothing); {_pick_one()}")
    apply_overrides(data, overrides, ConfigError, "learning_rate=1e-4")
    return config_from_mapping(data)


def config_from_mapping(data: dict[str, Any]) -> TrainConfig:
    """A config from its settings (as read from a file); :class:`ConfigError` names each bad key."""
    try:
        return TrainConfig(**data)
    except ValidationError as err:
        raise ConfigError("invalid training config: " + validation_problems(err)) from None


def validation_problems(err: ValidationError) -> str:
    """``"key: what is wrong; ..."`` for each problem pydantic found, in this module's words."""
    problems = []
    for problem in err.errors():
        field = shown_field(problem["loc"]) or "config"
        message = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            message = "unknown setting"
        elif "input" in problem and problem["type"].endswith("_type"):  # strict mode: say what was given
            message += f", got {shown_value(problem['input'])}"
        problems.append(f"{field}: {message}")
    return "; ".join(problems)


def check_agents(config: TrainConfig) -> None:
    """Build every agent the config names, for its rules, so a bad spec is refused before any work
    (not at the first evaluation, or after the run folder exists). Building goes through
    :func:`agents.make`, the one parser of specs, so every kind of spec it knows is checked alike."""
    rules = config.rules_value
    specs = [("eval_opponents", spec) for spec in config.eval_opponents]
    specs += [("league.bots", spec) for spec in config.league.bots]  # weight 0 too: a typo is a typo
    if config.imitation.teacher is not None:
        specs.append(("imitation.teacher", config.imitation.teacher))
    for field, spec in specs:
        try:
            make(spec, seed=config.seed, rules=rules)
        except AgentSpecError as err:
            raise ConfigError(f"{field}: {err}") from None


#: Settings a resumed run may change: where and how fast it computes, not what it computes.
RESUMABLE_CHANGES = ("device", "torch_threads")


def changed_settings(saved: dict[str, Any], config: TrainConfig, extend: bool = False) -> list[str]:
    """``"key old -> new"`` for each setting of ``config`` that differs from the ``saved`` run's
    config (``model_dump`` of it), except :data:`RESUMABLE_CHANGES`, ``total_decisions`` when
    ``extend``, and ``rules`` (compared as games by the caller: a preset name and its mapping are
    the same rules). Settings newer than the saved run are not compared: it had no value for them."""
    allowed = set(RESUMABLE_CHANGES) | {"rules"} | ({"total_decisions"} if extend else set())
    changes = []

    def compare(old: dict[str, Any], new: dict[str, Any], prefix: str) -> None:
        for key, value in new.items():
            name = prefix + key
            if name in allowed or key not in old:
                continue
            if isinstance(value, dict) and key in ("league", "imitation"):  # sections: name each setting
                compare(old[key] if isinstance(old[key], dict) else {}, value, name + ".")
            elif old[key] != value:
                changes.append(f"{name} {old[key]!r} -> {value!r}")

    compare(saved, config.model_dump(), "")
    return changes
