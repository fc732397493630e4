"""A training recipe: the whole path from nothing to a policy as one config, run by one command
(``hearts recipe CONFIG``) and resumable after a kill at any step.

A recipe is a list of stages run in order, each starting from the policy the stage before it wrote:

* ``ppo``: a PPO run (:class:`train.ppo.Run`) from a training config file plus overrides, trained to
  each of its ``budgets`` in turn; a later budget extends the run as ``hearts train --resume
  --extend`` does (with ``anneal_lr`` the learning rate follows each new budget). The first stage
  starts as its config says (e.g. an imitation warm start); a later one from the policy before it
  (its ``init_from``).
* ``improve``: rounds of policy improvement from rollout or expert labels. A round collects
  labelled decisions of the current policy (:func:`train.distill.collect_shard`, one collection
  per seed, ``workers`` at a time, with its ``teacher``) and fits them (:func:`train.distill.fit`)
  with its ``loss``: by default the improvement loss for rollout labels, imitation for the
  expert teachers'. ``shards_in_memory`` streams the fit.
* ``value``: a value model of whole deals (:func:`train.value.train`); the later rounds whose teacher
  is ``expert-value`` finish their sampled deals with it (before any value stage: the shipped one).
  It leaves the policy as it was, and is not evaluated.

A recipe with ``start`` (a policy checkpoint) begins from that policy instead of from nothing: its
first stage, PPO or improve, starts from it (to improve a shipped policy further, or to rerun a
recipe's later steps from a policy one of its steps wrote).

Everything lives in ``<runs_dir>/<name>/``: a folder per stage (the PPO run; for ``improve`` a
folder per round with its shards and policy), ``recipe.json`` (the config and each finished step's
policy, time and evaluation), ``recipe.log``, TensorBoard logs of the evaluations in
``evaluation/``, and ``policy.pt``, a copy of the last step's policy.

A finished step is never run again: a PPO run resumes from its checkpoint, a collection skips the
shards it wrote, a round whose policy exists is done. So the same command after a kill goes on from
where it stopped. A config that changes a finished step (or the rules, the name, the start policy
or the evaluation once a step has finished) is refused by name, since those steps would no longer
be what it says; the steps not yet finished may change, and stages or rounds may be added at the
end.

After every step that changes the policy, it is measured by the ``evaluate`` function given (the
command passes the arena's head-to-head against each of ``evaluation.opponents``); the mean over
the opponents is the *panel score*. Training itself does not depend on the evaluation package.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from agents import AgentSpecError, SlowPlayerError, make, make_table_player
from hearts_env import atomic_files
from hearts_env.rules import Rules
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
    SettingsChanged,
    Strict,
    TrainConfig,
    check_agents,
    config_from_mapping,
    to_rules,
    validation_problems,
)
from . import distill, value as value_training
from .workers import worker_pool


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


class RecipeConfig(Strict):
    name: FolderName = Field(description="the recipe's folder under the runs directory")
    rules: Any = "classic"
    start: str | None = Field(None, description="a policy checkpoint the first stage starts from (relative to "
                                                "the recipe file); without it the first stage is a ppo stage")
    stages: list[Stage] = Field(min_length=1)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)

    @field_validator("rules", mode="before")
    @classmethod
    def _rules(cls, value: Any) -> Any:
        to_rules(value)  # a bad preset or option is refused by name
        return value

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

    @property
    def rules_value(self) -> Rules:
        return to_rules(self.rules)


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



# ---- running a recipe ------------------------------------------------------------------------------

#: ``evaluate(policy_path, rules, evaluation) -> {opponent: {"mean", "low", "high"}}``: points per
#: hand of the policy against three copies of each opponent.
Evaluate = Callable[[Path, Rules, EvaluationConfig], dict[str, dict[str, float]]]


class Recipe:
    """A recipe's folder: runs the steps not yet done, in order (:meth:`run`)."""

    def __init__(self, config: RecipeConfig, config_folder: str | Path, runs_dir: str | Path = "runs",
                 workers: int = 2, evaluate: Evaluate | None = None, train_evaluate=None, progress: bool = True,
                 log=print, rollout_workers: int = 0, rollout_pool=None, map_jobs=None):
        """``config_folder``: where the stages' training configs are (the recipe file's folder).
        ``train_evaluate``: a PPO run's own periodic evaluation (see :class:`train.ppo.Run`).
        ``rollout_workers``, ``rollout_pool``: the PPO stages' rollout workers (as :class:`train.ppo.Run`
        takes them). ``map_jobs(function, jobs, files)``: runs the collections elsewhere (eval/cluster.py's
        ``map_jobs`` on Ray: ``(job index, result, worker)`` as each finishes); None: ``workers`` local
        processes."""
        self.config = config
        self.config_folder = Path(config_folder)
        self.dir = (Path(runs_dir) / config.name).resolve()  # (recorded paths stay valid from any folder)
        self.workers = workers
        self.rollout_workers, self.rollout_pool, self.map_jobs = rollout_workers, rollout_pool, map_jobs
        self.evaluate = evaluate
        self.train_evaluate = train_evaluate
        self.progress = progress
        self._log = log
        self.state_path = self.dir / "recipe.json"
        self.state = self._load_state()

    # ---- state ----------------------------------------------------------------------------------

    def _load_state(self) -> dict:
        fresh = {"config": self.config.model_dump(), "steps": {}}
        if not self.state_path.is_file():
            return fresh
        try:
            state = json.loads(self.state_path.read_text())
            saved = state["config"]
            steps = state["steps"]
        except (ValueError, KeyError, TypeError) as err:
            raise ConfigError(f"{self.state_path} is not a recipe's state ({err}); move it away or pick "
                              f"another name") from None
        changes = recipe_changes(saved, fresh["config"], finished=set(steps))
        if changes:
            raise ConfigError(f"{self.dir} holds a recipe started with another config: {'; '.join(changes)}. "
                              f"Finished steps cannot change; run the config it was started with, or give "
                              f"this one another name")
        return {"config": fresh["config"], "steps": steps}

    def _save_state(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_files.write_text(self.state_path, json.dumps(self.state, indent=2))

    def log(self, message: str) -> None:
        self._log(message)
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / "recipe.log", "a") as handle:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}\n")

    # ---- steps ----------------------------------------------------------------------------------

    def steps(self) -> list[tuple[str, Any, int | None]]:
        """``(key, stage, round index or None)`` of every step, in order."""
        out = []
        for stage in self.config.stages:
            if stage.kind in ("ppo", "value"):
                out.append((step_key(stage.name), stage, None))
            else:
                out += [(step_key(stage.name, r), stage, r) for r in range(len(stage.rounds))]
        return out

    def run(self) -> dict:
        """Run every step not yet done; returns the summary (also in ``recipe.json``)."""
        from torch.utils.tensorboard import SummaryWriter  # the train extra (torch, tensorboard)

        self._save_state()
        writer = None
        policy = start_path(self.config, self.config_folder)
        value = None  # the value model of the latest value stage (None: the shipped one)
        steps = self.steps()
        for index, (key, stage, round_index) in enumerate(steps, start=1):
            record = self.state["steps"].get(key)
            if record is None:
                self.log(f"step {index}/{len(steps)}: {key}")
                began = time.perf_counter()
                if stage.kind == "ppo":
                    policy = self._ppo(stage, policy)
                elif stage.kind == "value":
                    value = self._value(stage)
                else:
                    policy = self._round(stage, round_index, policy, value)
                seconds = time.perf_counter() - began
                evaluation = self._evaluate(policy) if stage.kind != "value" else {}  # (the policy is unchanged)
                record = {"policy": None if policy is None else str(policy), "seconds": round(seconds, 1),
                          "evaluation": evaluation}
                if stage.kind == "value":
                    record["value"] = str(value)
                if evaluation:
                    record["panel_score"] = panel_score(evaluation)
                    writer = writer or SummaryWriter(str(self.dir / "evaluation"))
                    for opponent, points in evaluation.items():
                        writer.add_scalar(f"recipe/points_vs_{opponent}", points["mean"], index)
                    writer.add_scalar("recipe/panel_score", record["panel_score"], index)
                    writer.add_text("recipe/steps", f"{index}: {key}", index)
                    self.log(f"{key}: " + ", ".join(f"vs {o} {p['mean']:.2f}" for o, p in evaluation.items())
                             + f"; panel score {record['panel_score']:.2f}")
                self.state["steps"][key] = record
                self._save_state()
            policy = None if record["policy"] is None else Path(record["policy"])
            value = Path(record["value"]) if "value" in record else value
        if writer is not None:
            writer.close()
        final = self.dir / "policy.pt"
        if policy is not None and policy.resolve() != final.resolve():
            atomic_files.write_with(final, partial(shutil.copyfile, policy))
        done = self.state["steps"]
        summary = {"policy": str(final), "seconds": round(sum(step["seconds"] for step in done.values()), 1),
                   "steps": {key: {k: v for k, v in step.items() if k != "policy"} for key, step in done.items()}}
        self.state["summary"] = summary
        self._save_state()
        return summary

    def _ppo(self, stage: PPOStage, start: Path | None) -> Path:
        from .ppo import Run  # imports torch (the train extra)

        for budget in stage.budgets:
            config = stage_config(self.config, stage, self.config_folder, start, budget)
            check_agents(config)
            resume = (self.dir / stage.name / "checkpoints" / "latest.pt").is_file()
            try:
                run = Run(config, runs_dir=self.dir, resume=resume, extend=resume, progress=self.progress,
                          log=self.log, evaluate=self.train_evaluate, rollout_workers=self.rollout_workers,
                          rollout_pool=self.rollout_pool)
            except SettingsChanged as err:  # (Run's advice, --resume and --extend, is for hearts train)
                raise ConfigError(f"stage {stage.name} was started with other settings: {'; '.join(err.changes)}; "
                                  f"give it its settings back, or give the stage another name") from None
            self.log(f"{stage.name}: PPO to {budget:,} learner decisions in {run.dir}"
                     + (f" (from {run.learner_decisions:,})" if resume else ""))
            run.train()
        return self.dir / stage.name / "policy.pt"

    def _value(self, stage: ValueStage) -> Path:
        out = self.dir / stage.name / "value.pt"
        if out.is_file():  # written before a kill that came before the step was recorded
            return out
        self.log(f"{stage.name}: a value model from {stage.hands:,} hands -> {out}")
        stats = value_training.train(out, hands=stage.hands, workers=self.workers, seed=stage.seed,
                                     players=distill.opponent_list(stage.players), rules=self.config.rules_value,
                                     hidden=tuple(stage.hidden), epochs=stage.epochs, log=self.log)
        self.log(f"{stage.name}: held-out error {stats['rmse']:.2f} points per seat (spread {stats['spread']:.2f})")
        return out

    def _round(self, stage: ImproveStage, index: int, start: Path | None, value: Path | None = None) -> Path:
        spec = stage.rounds[index]
        folder = self.dir / stage.name / f"round{index + 1}"
        out, data = folder / "policy.pt", folder / "data"
        # What this round is: a folder left by a round with other settings or another student (the
        # config changed, or a stage was inserted before it) is cleared, not mixed into this one.
        # (Not the fit's memory, shards_in_memory: the shards collected stay good whatever it is.)
        value = value if spec.teacher == "expert-value" else None
        identity = json.dumps({"round": spec.model_dump(exclude={"shards_in_memory"}), "student": str(start),
                               **({"value": str(value)} if value is not None else {}),
                               "rules": self.config.rules_value.to_dict()}, indent=2, sort_keys=True)
        record = folder / "round.json"
        if folder.is_dir() and (not record.is_file() or record.read_text() != identity):
            self.log(f"{stage.name} round {index + 1}: {folder} holds a round with other settings; starting it afresh")
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        record.write_text(identity)
        if out.is_file():  # fitted before a kill that came before its evaluation
            if not spec.keep_data:
                shutil.rmtree(data, ignore_errors=True)
            return out
        jobs = [(str(start), str(data), c.hands, c.seed, spec.tables, spec.opponent, self.config.rules_value.to_dict(),
                 spec.teacher, spec.determinizations, spec.pass_labels, spec.card_labels,
                 None if value is None else str(value)) for c in spec.collections]
        self.log(f"{stage.name} round {index + 1}: collecting {sum(c.hands for c in spec.collections):,} hands "
                 f"of {start} in {data}")
        if self.map_jobs is not None:  # elsewhere (Ray): the shards come back, and are written here
            data.mkdir(parents=True, exist_ok=True)
            skip = sorted(path.name for path in data.glob("shard_*.npz"))
            files = [str(start)] + ([str(value)] if value is not None else [])
            for _, shards, _ in self.map_jobs(_collect_elsewhere, [(job, skip) for job in jobs], files):
                for name, blob in shards.items():
                    atomic_files.write_bytes(data / name, blob)
        elif self.workers > 1 and len(jobs) > 1:
            with worker_pool(min(self.workers, len(jobs))) as pool:
                list(pool.map(_collect, jobs))
        else:
            for job in jobs:
                _collect(job)
        stats = distill.fit(str(start), data, out, epochs=spec.epochs, temperature=spec.temperature, margin=spec.margin,
                    learning_rate=spec.learning_rate, batch_size=spec.batch_size, seed=spec.fit_seed,
                    loss=spec.loss or ("improvement" if spec.teacher == "rollout" else "imitation"),
                    shards_in_memory=spec.shards_in_memory, log=self.log)
        self.log(f"{stage.name} round {index + 1}: fitted {stats.get('examples', 0):,} examples -> {out}")
        if not spec.keep_data:
            shutil.rmtree(data)
        return out

    def _evaluate(self, policy: Path) -> dict:
        if self.evaluate is None or not self.config.evaluation.opponents:
            return {}
        return self.evaluate(policy, self.config.rules_value, self.config.evaluation)


def _collect(job: tuple) -> int:
    """One collection (in a worker process): :func:`train.distill.collect_shard`."""
    (student, data, hands, seed, tables, opponent, rules, teacher, determinizations, pass_labels, card_labels,
     value) = job
    return distill.collect_shard(student, Path(data), hands, seed, tables, determinizations=determinizations,
                         opponent=opponent, rules=Rules.from_dict(rules), teacher=teacher,
                         pass_labels=pass_labels, card_labels=card_labels, value=value,
                         log=lambda message: print(message, file=sys.stderr, flush=True))


def _collect_elsewhere(job: tuple, local: dict[str, str]) -> dict[str, bytes]:
    """One collection on another machine (a Ray task): :func:`_collect`'s ``job`` and the shard names
    already collected, with its files at the ``local`` copies' paths; the shards it wrote, by name."""
    (student, _, hands, seed, tables, opponent, rules, teacher, determinizations, pass_labels, card_labels,
     value), skip = job
    with tempfile.TemporaryDirectory(prefix="hearts-recipe-collect-") as folder:
        distill.collect_shard(local[student], Path(folder), hands, seed, tables, determinizations=determinizations,
                              opponent=opponent, rules=Rules.from_dict(rules), teacher=teacher,
                              pass_labels=pass_labels, card_labels=card_labels,
                              value=None if value is None else local[value], log=lambda message: None,
                              skip=frozenset(skip), student_name=student)
        return {path.name: path.read_bytes() for path in sorted(Path(folder).glob("shard_*.npz"))}


def panel_score(evaluation: dict[str, dict[str, float]]) -> float:
    """The mean of the head-to-heads' points per hand."""
    return round(sum(points["mean"] for points in evaluation.values()) / len(evaluation), 4)


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
