"""``hearts train CONFIG [KEY=VALUE ...]``: run (or ``--resume``) a PPO training run.

A config file is required (the defaults alone would start a 5 M-decision run). ``--resume``
continues a run with the settings it was started with (other settings are refused by name, except
``device`` and ``torch_threads``); ``--extend`` lets it take a new ``total_decisions``. Resuming a
finished run changes nothing and prints its summary (exit code 0: the run is where it was asked to be).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from eval.arena import training_evaluation
from eval.cluster import ClusterError
from train.config import ConfigError, load_config

from .. import arguments
from ..errors import UsageError, writable_folder


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a policy by PPO self-play (TensorBoard logs and checkpoints in runs/<run_name>)",
        description="Train a policy by masked PPO self-play against a league of snapshots and bots.",
    )
    parser.add_argument("config", nargs="?", help="YAML config (configs/ppo_classic.yaml, configs/smoke.yaml, ...)")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="override settings, e.g. total_decisions=1e6")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in runs/<run_name> from its checkpoint, with the settings it was "
                             "started with (a change is refused by name; device and torch_threads may change). "
                             "A finished run is left untouched")
    parser.add_argument("--extend", action="store_true",
                        help="with --resume: take a new total_decisions (train the run, even a finished one, to a "
                             "new budget; with anneal_lr the learning rate follows the new budget)")
    parser.add_argument("--device", help="auto (a GPU when present), cpu, cuda, cuda:N (overrides the config)")
    arguments.add_rollout_options(
        parser, workers_help="play each rollout's shards in N workers (default 0: in this process); the learner stays "
                             "here. A new run without rollout_shards in its config takes N shards; the weights depend "
                             "on the shards, not on N or the backend",
        backend_help="with --rollout-workers: processes of this machine (local) or Ray actors on a cluster")
    parser.add_argument("--runs-dir", default="runs", help="folder holding the runs (default runs/)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config_path, overrides = args.config, list(args.overrides)
    if config_path is not None and "=" in config_path and not Path(config_path).exists():
        config_path, overrides = None, [config_path] + overrides  # `hearts train KEY=VALUE`: overrides, no config
    if args.extend and not args.resume:
        raise UsageError("--extend goes with --resume (it changes the budget of an existing run)")
    try:
        config = load_config(config_path, overrides)
    except ConfigError as err:
        raise UsageError(str(err)) from None
    if args.backend == "ray" and not args.rollout_workers:
        raise UsageError("--backend ray plays the rollouts on Ray actors: give their number with --rollout-workers N")
    pool = arguments.ray_rollout_pool(args)
    writable_folder(args.runs_dir, "--runs-dir")
    from train.ppo import Run  # torch (the train extra) is imported only now
    from train.rollout_workers import RolloutWorkerError

    try:
        run = Run(config, runs_dir=args.runs_dir, resume=args.resume, extend=args.extend, device=args.device,
                  progress=not args.no_progress, log=lambda message: print(message, file=sys.stderr),
                  evaluate=training_evaluation, rollout_workers=args.rollout_workers, rollout_pool=pool)
    except (FileNotFoundError, FileExistsError, ValueError) as err:
        raise UsageError(str(err)) from None
    print(f"run folder: {run.dir} (tensorboard --logdir {run.dir.parent})", file=sys.stderr)
    from agents.checkpoint import CheckpointError  # torch, as the run

    try:
        summary = run.train()
    except (CheckpointError, RolloutWorkerError, ClusterError) as err:  # diverged, a worker died, Ray unreachable
        print(f"hearts train: {err}", file=sys.stderr)
        return 1
    print(json.dumps(summary, indent=2))
    return 0
