"""A training recipe's config: the stages and rounds of ``hearts recipe CONFIG`` as validated
settings models, the checks that refuse a bad recipe before any work, and the comparison that
refuses a config changing steps a recipe has already finished. :mod:`train.recipe` runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from agents import AgentSpecError, SlowPlayerError, make, make_table_player
from hearts_env.settings_files import apply_overrides, read_mapping

from .config import (
    MAX_DETERMINIZATIONS,
    MAX_EPOCHS,
    MAX_EVAL_DEALS,
    MAX_HANDS,
    MAX_LEARNING_RATE,
    MAX_TABLES,
    MAX_WIDTH,
    RUN_NAME,
    ConfigError,
    Float,
    Int,
    RuleSettings,
    Strict,
    TrainConfig,
    check_agents,
    config_from_mapping,
    validation_problems,
)
from . import distill, value as value_training


def _folder_name(value: str) -> str:
    if not RUN_NAME.fullmatch(value):
        raise ValueError(f"must be a plain folder name (letters, digits, '.', '_', '-'), got {value!r}")
    return value


#: A name that is one folder, so a recipe stays inside its runs directory.
FolderName = Annotated[str, AfterValidator(_folder_name)]
#: What a recipe's folder holds beside its stages' folders (``policy.tmp`` and ``recipe.tmp``: the names its
#: temporary files had before hearts_env.atomic_files, still kept from stage names so that what is refused
#: stays as it was).
RECIPE_FILES = ("evaluation", "policy.pt", "policy.tmp", "recipe.json", "recipe.log", "recipe.tmp")


class PPOStage(Strict):
    """PPO from a training config (``hearts train``'s), trained to each budget in turn."""

    kind: Literal["ppo"]
    name: FolderName = Field(description="the stage's folder in the recipe's folder (its run_name)")
    config: str = Field(description="training config file, relative to the recipe file")
    set: dict[str, Any] = Field(default_factory=dict, description="overrides, as hearts train's KEY=VALUE")
    budgets: list[Int] = Field(min_length=1, description="total learner decisions, trained to each in turn")

    @field_validator("budgets")
    @classmethod
    def _increasing(cls, budgets: list[int]) -> list[int]:
        if any(b <= 0 for b in budgets) or any(later <= earlier for earlier, later in zip(budgets, budgets[1:])):
            raise ValueError(f"budgets must be positive and increasing, got {budgets}")
        return budgets


class Collection(Strict):
    """One collection of a round: ``hands`` hands from ``seed`` (one worker's work)."""

    seed: Int = Field(ge=0)
    hands: Int = Field(ge=1, le=MAX_HANDS)


class Round(Strict):
    """One improvement round: collect labels of the current policy's decisions, then fit them.

    ``teacher: rollout`` (the default) plays every legal card out on the real deal and fits the
    values with the improvement loss at ``temperature``; ``teacher: expert`` values the cards the
    expert teacher searches (``train.distill``'s: the expert player's search, narrowed; over this
    policy, on ``determinizations`` belief-dealt worlds; ``expert-value``: the same search with its
    deals finished by the value model of the latest value stage before it, or the shipped one) and fits
    them by imitation where the expert's best card beats the policy's by more than ``margin``
    points, or with ``loss: improvement`` by the improvement loss among the cards it valued
    (:func:`train.distill.fit`)."""

    collections: list[Collection] = Field(min_length=1)

    @field_validator("collections")
    @classmethod
    def _one_per_seed(cls, collections: list) -> list:
        seeds = [c.seed for c in collections]
        if len(set(seeds)) < len(seeds):
            raise ValueError(f"each collection needs its own seed (its shards are named by it), got {seeds}")
        return collections
    tables: Int = Field(1024, ge=1, le=MAX_TABLES, description="hands played at once (one shard each)")
    opponent: str = Field("hard", description="bot in the other seats and in the rollouts; several separated "
                                               "by commas take turns by batch")
    teacher: Literal["rollout", "expert", "expert-value"] = "rollout"
    determinizations: Int = Field(24, ge=1, le=MAX_DETERMINIZATIONS, description="the expert teachers' worlds per "
                                                                                "decision")
    margin: Float = Field(2.0, ge=0, description="the expert teacher's: points its best card must gain to overrule")
    pass_labels: bool = True
    card_labels: bool = True
    loss: Literal["imitation", "improvement"] | None = Field(
        None, description="the fit's loss; default: improvement for rollout labels, imitation for the expert's")
    temperature: Float = Field(gt=0, description="T of the loss (the improvement's, or the expert's softmax), in points")
    epochs: Int = Field(4, ge=1, le=MAX_EPOCHS)
    learning_rate: Float = Field(1e-3, gt=0, le=MAX_LEARNING_RATE)
    batch_size: Int = Field(8192, ge=1)
    fit_seed: Int = Field(0, ge=0)
    keep_data: bool = Field(False, description="keep the shards after the fit (millions of labels: gigabytes)")
    shards_in_memory: Int | None = Field(None, ge=1, description="the fit holds at most this many shards at once, "
                                                                 "streaming the rest (default: all)")

    @model_validator(mode="after")
    def _expert_labels_card_plays(self) -> Round:
        if self.teacher != "rollout" and not self.card_labels:
            raise ValueError(f"the {self.teacher} teacher labels card plays only: card_labels must stay true")
        if not self.card_labels and not self.pass_labels:
            raise ValueError("card_labels and pass_labels are both false: the round would label nothing")
        return self


class ImproveStage(Strict):
    kind: Literal["improve"]
    name: FolderName
    rounds: list[Round] = Field(min_length=1)


class ValueStage(Strict):
    """Train a value model (``hearts value``: ``train.value``); the later rounds' ``expert-value``
    teacher finishes its sampled deals with it instead of the shipped one. The policy is unchanged."""

    kind: Literal["value"]
    name: FolderName
    hands: Int = Field(value_training.HANDS, ge=1, le=MAX_HANDS)
    players: str = Field(",".join(value_training.PLAYERS),
                         description="the players each seat is drawn from, separated by commas")
    hidden: list[Annotated[Int, Field(ge=1, le=MAX_WIDTH)]] = Field(
        default_factory=lambda: list(value_training.HIDDEN), min_length=1, max_length=16)
    epochs: Int = Field(value_training.EPOCHS, ge=1, le=MAX_EPOCHS)
    seed: Int = Field(1, ge=0)


class EvaluationConfig(Strict):
    opponents: list[str] = Field(default_factory=lambda: ["random", "easy", "normal", "hard"],
                                 description="head-to-heads after every step; their mean is the panel score")
    deals: Int = Field(2000, ge=1, le=MAX_EVAL_DEALS)
    seed: Int = Field(0, ge=0)


Stage = Annotated[PPOStage | ImproveStage | ValueStage, Field(discriminator="kind")]


class RecipeConfig(RuleSettings):
    RULES_OWNER: ClassVar[str] = "recipe's"

    name: FolderName = Field(description="the recipe's folder under the runs directory")
    rules: Any = "classic"
    start: str | None = Field(None, description="a policy checkpoint the first stage starts from (relative to "
                                                "the recipe file); without it the first stage is a ppo stage")
    stages: list[Stage] = Field(min_length=1)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    rule_space: Any = Field(None, description="the rule sets the recipe's policy (its policy.pt) declares it plays: "
                                              "a narrowing of its own space that covers the rules (a family with "
                                              "some options narrowed, as a training config's rule_space); default: "
                                              "the policy's own")

    @field_validator("stages")
    @classmethod
    def _unique_names(cls, stages: list) -> list:
        names = [stage.name for stage in stages]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"stage names must differ; used twice: {', '.join(twice)}")
        taken = sorted(set(names) & set(RECIPE_FILES))
        if taken:
            raise ValueError(f"{', '.join(taken)}: the recipe's folder uses this name itself ({', '.join(RECIPE_FILES)})")
        return stages

    @model_validator(mode="after")
    def _first_stage_has_a_policy(self) -> RecipeConfig:
        policy_stages = [stage for stage in self.stages if stage.kind != "value"]
        if self.start is None and (not policy_stages or policy_stages[0].kind != "ppo"):
            raise ValueError("the first stage that makes a policy must be a ppo stage (an improve stage improves "
                             "the policy before it), or give the recipe a start policy (start: PATH)")
        return self


def load_recipe(path: str | Path) -> RecipeConfig:
    """The recipe in a YAML file; every problem is a :class:`ConfigError` naming its key."""
    data = read_mapping(path, ConfigError, "recipe")
    try:
        recipe = RecipeConfig(**data)
    except ValidationError as err:
        raise ConfigError(f"invalid recipe {path}: {validation_problems(err)}") from None
    check_start(recipe, Path(path).parent)
    check_recipe_agents(recipe, Path(path).parent)
    return recipe


def start_path(recipe: RecipeConfig, folder: Path) -> Path | None:
    """The recipe's start policy (relative paths are relative to ``folder``, the recipe file's), or None."""
    if recipe.start is None:
        return None
    path = Path(recipe.start).expanduser()
    return (path if path.is_absolute() else folder / path).resolve()


def check_start(recipe: RecipeConfig, folder: Path) -> None:
    """Refuse a start policy that is missing, unreadable or of other rules before any work."""
    from agents.checkpoint import CheckpointError, load_policy  # imports torch (the train extra)

    path = start_path(recipe, folder)
    if path is None:
        return
    if not path.is_file():
        raise ConfigError(f"start: policy file not found: {path}")
    try:
        load_policy(path, rules=recipe.rules_value)
    except CheckpointError as err:
        raise ConfigError(f"start: {err}") from None


def check_recipe_agents(recipe: RecipeConfig, folder: Path) -> None:
    """Build every training config and agent the recipe names, so that a typo fails before any
    work (not hours in, at the step that uses it)."""
    def build(spec: str, where: str) -> None:
        try:
            make(spec, rules=recipe.rules_value)
        except AgentSpecError as err:
            raise ConfigError(f"{where}: {err}") from None

    def build_table_players(text: str, where: str) -> None:
        """Players separated by commas that sit at the tables of a collection: bots or policies."""
        try:
            players = distill.opponent_list(text)
        except ValueError as err:
            raise ConfigError(f"{where}: {err}") from None
        for player in players:
            try:
                make_table_player(player, rules=recipe.rules_value)
            except SlowPlayerError:
                raise ConfigError(f"{where}: {player!r} is a search player, too slow to play in every "
                                  f"rollout; pick a bot or a policy") from None
            except AgentSpecError as err:
                raise ConfigError(f"{where}: {err}") from None

    for stage in recipe.stages:
        if stage.kind == "ppo":
            check_agents(stage_config(recipe, stage, folder, start=None))
            continue
        if stage.kind == "value":
            from agents.value import check_rules  # (torch: the train extra, which recipes need anyway)

            try:
                check_rules(recipe.rules_value)
            except ValueError as err:
                raise ConfigError(f"stages.{stage.name}: {err}") from None
            build_table_players(stage.players, f"stages.{stage.name}.players")
            continue
        for index, spec in enumerate(stage.rounds):
            build_table_players(spec.opponent, f"stages.{stage.name}.rounds.{index}.opponent")
    for spec in recipe.evaluation.opponents:
        build(spec, "evaluation.opponents")


def stage_config(recipe: RecipeConfig, stage: PPOStage, folder: Path, start: Path | None,
                 budget: int | None = None) -> TrainConfig:
    """A PPO stage's training config: its file (relative to ``folder``) with its ``set`` overrides,
    named after the stage, starting from ``start`` (the policy before it) when there is one."""
    path = folder / stage.config
    data = read_mapping(path, ConfigError, f"stage {stage.name}'s config")
    overrides = [f"{key}={json.dumps(value)}" for key, value in stage.set.items()]
    apply_overrides(data, overrides, ConfigError, "learning_rate=1e-4")
    data["run_name"] = stage.name
    data["total_decisions"] = budget or stage.budgets[0]
    if start is not None:
        data["init_from"] = str(start)
        data["imitation"] = {**data.get("imitation", {}), "teacher": None}  # the start replaces the warm start
    try:
        config = config_from_mapping(data)
    except ConfigError as err:
        raise ConfigError(f"stage {stage.name} ({path}): {err}") from None
    if not config.rules_value.same_game(recipe.rules_value):
        raise ConfigError(f"stage {stage.name}: its config {path} plays other rules than the recipe "
                          f"({config.rules_value.name} vs {recipe.rules_value.name})")
    return config


def recipe_changes(saved: dict, new: dict, finished: set[str]) -> list[str]:
    """What ``new`` changes of the ``finished`` steps of the config a recipe was started with (both
    dumped), and of its name, rules, start policy and evaluation once a step has finished:
    ``"what: old -> new"`` for each difference. Steps not yet finished may change; steps may be added."""
    changes = []
    if finished:
        changes += [f"{key}: {saved.get(key)!r} -> {new.get(key)!r}" for key in ("name", "rules", "start", "evaluation")
                    if saved.get(key) != new.get(key)]
    new_steps = step_specs(new)
    for i, (key, spec) in enumerate(step_specs(saved)):
        if key not in finished:
            continue
        if i >= len(new_steps):
            changes.append(f"step {i + 1} ({key}): dropped")
        elif new_steps[i] != (key, spec):
            changes.append(f"step {i + 1} ({key}): {spec!r} -> {new_steps[i][0]}: {new_steps[i][1]!r}")
    return changes


def step_specs(dumped: dict) -> list[tuple[str, dict]]:
    """``(step key, what the step does)`` of every step of a dumped recipe config, in order (as
    :meth:`Recipe.steps`): a PPO stage's settings, or an improve stage's round."""
    out = []
    for stage in dumped.get("stages", []):
        if stage.get("kind") in ("ppo", "value"):
            out.append((step_key(stage["name"]), stage))
        else:
            out += [(step_key(stage["name"], r), _with_defaults(spec)) for r, spec in enumerate(stage.get("rounds", []))]
    return out


def _with_defaults(round_spec: dict) -> dict:
    """A dumped round with the settings added since it was saved at their defaults, so that a
    recipe started by an older version still resumes."""
    try:
        return Round(**round_spec).model_dump()
    except (ValidationError, TypeError):
        return round_spec


def step_key(stage: str, round_index: int | None = None) -> str:
    """A step's name in ``recipe.json``: the stage's, or ``stage/round<r>`` (from 1) for a round."""
    return stage if round_index is None else f"{stage}/round{round_index + 1}"
