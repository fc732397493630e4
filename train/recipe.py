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
``evaluation/``, and ``policy.pt``, a copy of the last step's policy (declaring the recipe's
``rule_space`` when it names one: :func:`agents.checkpoint.save_narrowed`).

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
from typing import Any

from hearts_env import atomic_files
from hearts_env.rules import Rules

from .config import ConfigError, SettingsChanged, check_agents
from . import distill, value as value_training
from .recipe_config import (
    EvaluationConfig,
    ImproveStage,
    PPOStage,
    RecipeConfig,
    ValueStage,
    load_recipe,
    recipe_changes,
    stage_config,
    start_path,
    step_key,
)
from .workers import worker_pool

__all__ = ["Evaluate", "Recipe", "load_recipe", "panel_score", "recipe_changes"]


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
        space = self.config.rule_space_value
        if policy is not None and space is not None:
            from agents.checkpoint import CheckpointError, save_narrowed  # (torch: the train extra)

            try:
                save_narrowed(policy, final, space)
            except CheckpointError as err:
                raise ConfigError(f"rule_space: {err}") from None
        elif policy is not None and policy.resolve() != final.resolve():
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


