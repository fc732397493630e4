"""``hearts recipe CONFIG``: run a training recipe (PPO stages, then improvement rounds) from nothing,
or from its ``start`` policy, to a policy; the same command again resumes it where it stopped
(``train/recipe.py``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from eval.arena import head_to_heads, training_evaluation
from eval.cluster import ClusterError, map_jobs
from train.config import ConfigError
from train.recipe import Recipe, load_recipe

from .. import arguments
from ..errors import UsageError, writable_folder


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "recipe",
        help="run a whole training recipe (PPO stages, improvement rounds, an arena evaluation after each "
             "step); the same command resumes it",
        description="Run a training recipe: its stages in order (PPO runs, then rounds of policy improvement from "
                    "rollout or expert labels), each from the policy before it (the first from the recipe's "
                    "start policy, if it names one), with an arena evaluation of every step's "
                    "policy (TensorBoard in <runs-dir>/<name>/evaluation). Steps already done are skipped, so "
                    "the same command after a kill goes on from where it stopped. See docs/training.md.",
    )
    parser.add_argument("config", help="recipe YAML (configs/recipes/classic.yaml, configs/recipes/smoke.yaml)")
    parser.add_argument("--runs-dir", default="runs", help="folder holding the recipe's folder (default runs/)")
    parser.add_argument("--workers", type=arguments.positive_int, default=2,
                        help="processes for label collection and the evaluations (default 2)")
    arguments.add_rollout_options(
        parser, workers_help="play the PPO stages' rollouts in N workers (default 0: in this process), as "
                             "hearts train --rollout-workers does",
        backend_help="ray: the collections as Ray tasks and the rollout workers as Ray actors on a cluster "
                     "(docs/cluster.md); local: processes of this machine")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not Path(args.config).is_file():
        raise UsageError(f"recipe not found: {args.config} (the shipped ones: configs/recipes/*.yaml)")
    try:
        config = load_recipe(args.config)
    except ConfigError as err:
        raise UsageError(str(err)) from None
    rollout_pool = arguments.ray_rollout_pool(args)
    writable_folder(args.runs_dir, "--runs-dir")
    map_on_ray = None
    if rollout_pool is not None:  # (--backend ray)

        def map_on_ray(function, jobs, files):
            return map_jobs(function, jobs, files, args.workers, args.address)

    def evaluate(policy, rules, evaluation):
        """The policy file against each of ``evaluation.opponents``."""
        found = head_to_heads(f"ckpt:{policy}", evaluation.opponents, rules, deals=evaluation.deals,
                              seed=evaluation.seed, workers=args.workers, progress=not args.no_progress)
        return {opponent: {key: round(value, 4) for key, value in points.items()}
                for opponent, points in found.items()}

    from train.rollout_workers import RolloutWorkerError  # torch (the train extra), as the recipe's runs

    try:
        recipe = Recipe(config, Path(args.config).parent, runs_dir=args.runs_dir, workers=args.workers,
                        evaluate=evaluate, train_evaluate=training_evaluation, progress=not args.no_progress,
                        log=lambda message: print(message, file=sys.stderr, flush=True),
                        rollout_workers=args.rollout_workers, rollout_pool=rollout_pool, map_jobs=map_on_ray)
        print(f"recipe folder: {recipe.dir} (tensorboard --logdir {recipe.dir})", file=sys.stderr)
        summary = recipe.run()
    except (ConfigError, FileNotFoundError, FileExistsError, ValueError) as err:
        raise UsageError(str(err)) from None
    except (ClusterError, RolloutWorkerError) as err:  # the cluster, or a worker lost: the same command resumes
        print(f"hearts recipe: {err}", file=sys.stderr)
        return 1
    print(json.dumps(summary, indent=2))
    return 0

