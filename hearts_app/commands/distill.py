"""``hearts distill collect|fit``: label a policy's decisions with card values (the search player's,
the expert's, or rollouts on the real deal), then learn them (``train/distill/``)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from eval.cluster import ClusterError, map_jobs
from hearts_env import atomic_files
from train.config import MAX_LEARNING_RATE
from train.distill import collect_shard, fit, opponent_list
from train.workers import worker_pool

from .. import arguments
from ..errors import UsageError, writable_file, writable_folder


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "distill",
        help="improve a policy from card values (collect labelled decisions, then fit)",
        description="Expert iteration, one round: `collect` plays a policy against bots and values every legal "
                    "card at its decisions (the search player, or each card played out on the real deal); `fit` "
                    "trains the policy on those values. See docs/training.md.",
    )
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    collect = steps.add_parser("collect", help="write labelled decisions (shards of .npz) to a folder")
    collect.add_argument("student", help="policy checkpoint whose decisions are labelled (played greedily)")
    collect.add_argument("--out", required=True, metavar="DIR", help="folder for the shards")
    collect.add_argument("--hands", type=arguments.bounded(arguments.positive_int, arguments.MAX_HANDS), default=20000,
                         help="hands per worker (default 20000)")
    collect.add_argument("--workers", type=arguments.worker_count, default=2,
                         help=f"worker processes, each with its own seeds, 1 to {arguments.MAX_WORKERS} (default 2)")
    collect.add_argument("--tables", type=arguments.bounded(arguments.positive_int, arguments.MAX_TABLES), default=128,
                         help="hands played at once per worker (one shard each)")
    collect.add_argument("--teacher", choices=["search", "expert", "expert-value", "rollout"], default="search",
                         help="search: the search player's mean over sampled deals (card plays); expert: the expert "
                              "player's search over the student, narrowed (its three likeliest cards, worlds dealt by the "
                              "belief model, card plays it gives under 90%%); expert-value: the same search, its deals finished by the "
                              "value model after the trick (several times cheaper); rollout: every "
                              "legal card played or passed and the hand played out once on the real deal (card plays "
                              "and passes; noisy, unbiased, much faster; fit with --loss improvement)")
    collect.add_argument("--pass-labels", action=argparse.BooleanOptionalAction, default=True,
                         help="rollout teacher: label the passes (default); --no-pass-labels keeps the student's "
                              "own odds at passes, which leaves over twice as many card plays labelled per minute")
    collect.add_argument("--card-labels", action=argparse.BooleanOptionalAction, default=True,
                         help="label the card plays (default); --no-card-labels keeps the student's own odds at "
                              "card plays (rollout teacher, with passes labelled: a round for the passes alone)")
    collect.add_argument("--determinizations",
                         type=arguments.bounded(arguments.positive_int, arguments.MAX_DETERMINIZATIONS), default=12,
                         help="sampled deals per decision (search and expert teachers; the expert player searches 48)")
    collect.add_argument("--opponent", default="hard",
                         help="bot in the other seats (and in the search teacher's rollouts); several separated by "
                              "commas take turns by batch, e.g. hard,easy,normal,random")
    collect.add_argument("--seed", type=arguments.seed, default=1, help="first worker's seed (workers use seed, seed+1, ...)")
    collect.add_argument("--backend", choices=["local", "ray"], default="local",
                         help="local: --workers processes here; ray: each worker's seed as a task on a Ray cluster, "
                              "the student shipped by content and the shards written here (docs/cluster.md)")
    collect.add_argument("--address", metavar="auto|HOST:PORT",
                         help="the Ray cluster for --backend ray (default: RAY_ADDRESS, else a local Ray with "
                              "--workers CPUs)")
    collect.set_defaults(func=run_collect)
    fit = steps.add_parser("fit", help="train a policy on collected shards; write a checkpoint")
    fit.add_argument("start", help="policy checkpoint to start from")
    fit.add_argument("--data", required=True, metavar="DIR", help="folder of shards from `collect`")
    fit.add_argument("--out", required=True, metavar="FILE", help="checkpoint to write")
    fit.add_argument("--epochs", type=arguments.bounded(arguments.positive_int, arguments.MAX_EPOCHS), default=4,
                     help="passes over the data (default %(default)s)")
    fit.add_argument("--temperature", type=arguments.positive_float, default=1.0,
                     help="T, in points: imitation learns softmax(-values / T), improvement the student's odds "
                          "times exp(-points / T) (smaller: further from the student)")
    fit.add_argument("--margin", type=arguments.non_negative_float, default=2.0,
                     help="points by which the teacher's best card must beat the student's own to overrule it")
    fit.add_argument("--loss", choices=["imitation", "regression", "improvement"], default="imitation",
                     help="imitation: cross-entropy to the teacher's preferences beyond --margin (search labels); "
                          "regression: logits learn minus each card's points, centred per decision; improvement: "
                          "the student's odds times exp(-points / T), learnt without bias from noisy labels "
                          "(both for rollout labels; improvement also for expert labels, among the cards valued)")
    fit.add_argument("--learning-rate", type=arguments.bounded(arguments.positive_float, MAX_LEARNING_RATE),
                     default=3e-4, help="Adam step size (default %(default)s)")
    fit.add_argument("--batch-size", type=arguments.positive_int, default=2048,
                     help="decisions per step (larger batches average more of the noise of one-deal labels)")
    fit.add_argument("--hidden", type=arguments.layer_width, nargs="+", metavar="WIDTH",
                     help="grow the start's layers to these widths first (it plays as before until fitted), e.g. "
                          "--hidden 256 256; default: keep its layers")
    fit.add_argument("--card-scorer", type=arguments.layer_width, metavar="UNITS",
                     help="add a per-card scorer of this many units (exact facts about each card computed from the "
                          "observation; it scores zero until fitted), or grow the start's; default: keep the start's")
    fit.add_argument("--shards-in-memory", type=arguments.positive_int, metavar="N",
                     help="hold at most N shards at once and stream the rest from disk, each epoch in a random "
                          "order of groups (memory: about 2.3 GB per million labelled decisions held); default: "
                          "hold them all")
    fit.add_argument("--seed", type=arguments.seed, default=0,
                     help="seed of the fit: new weights and the minibatch order (default %(default)s)")
    fit.set_defaults(func=run_fit)


def _collect_one(job: tuple) -> int:
    student, out, hands, seed, tables, determinizations, opponent, teacher, pass_labels, card_labels = job
    return collect_shard(student, Path(out), hands, seed, tables, determinizations, opponent, teacher=teacher,
                         pass_labels=pass_labels, card_labels=card_labels,
                         log=lambda message: print(message, file=sys.stderr, flush=True))


def run_collect(args: argparse.Namespace) -> int:
    if not Path(args.student).is_file():
        raise UsageError(f"student checkpoint not found: {args.student}")
    if not args.card_labels and not (args.teacher == "rollout" and args.pass_labels):
        raise UsageError("--no-card-labels leaves nothing to label: it needs --teacher rollout with the passes "
                         "labelled (the search teacher labels card plays only)")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file; name a folder for the shards")
    writable_folder(args.out, "--out")  # found now, not by each worker when it writes its first shard
    try:
        names = opponent_list(args.opponent)
    except ValueError as err:
        raise UsageError(f"--opponent {args.opponent!r}: {err}") from None
    for name in names:
        arguments.check_table_player("--opponent", name)
    jobs = [(args.student, args.out, args.hands, args.seed + w, args.tables, args.determinizations, args.opponent,
             args.teacher, args.pass_labels, args.card_labels) for w in range(args.workers)]
    if args.backend == "ray":
        return _collect_on_ray(args, jobs)
    try:
        with worker_pool(args.workers) as pool:
            counts = list(pool.map(_collect_one, jobs))
    except ValueError as err:  # a bad student file or an opponent spec that does not exist
        raise UsageError(str(err)) from None
    print(json.dumps({"examples": sum(counts), "folder": args.out}))
    return 0


def _collect_remote(job: tuple, local: dict[str, str]) -> tuple[int, dict[str, bytes]]:
    """One worker's collection on a Ray worker: the shards it wrote (name -> bytes), for the head to
    write to --out. ``job`` is :func:`_collect_one`'s plus the shard names already in --out."""
    (student, _, hands, seed, tables, determinizations, opponent, teacher, pass_labels, card_labels), skip = job
    with tempfile.TemporaryDirectory(prefix="hearts-collect-") as folder:
        count = collect_shard(local[student], Path(folder), hands, seed, tables, determinizations, opponent,
                              teacher=teacher, pass_labels=pass_labels, card_labels=card_labels,
                              log=lambda message: None, skip=frozenset(skip), student_name=student)
        return count, {path.name: path.read_bytes() for path in sorted(Path(folder).glob("shard_*.npz"))}


def _collect_on_ray(args: argparse.Namespace, jobs: list) -> int:
    """The same jobs (seeds) as the local backend, as Ray tasks; shards already in --out are skipped."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skip = sorted(path.name for path in out.glob("shard_*.npz"))
    began = time.perf_counter()
    total, per_worker = 0, {}
    try:
        for i, (count, shards), worker in map_jobs(_collect_remote, [(job, skip) for job in jobs], [args.student],
                                                   args.workers, args.address):
            for name, data in shards.items():
                atomic_files.write_bytes(out / name, data)
            total += count
            per_worker[worker] = per_worker.get(worker, 0) + 1
            print(f"seed {jobs[i][3]}: {count} examples in {len(shards)} shards (worker {worker})", file=sys.stderr,
                  flush=True)
    except ClusterError as err:
        raise UsageError(str(err)) from None
    seconds = time.perf_counter() - began
    print(f"ray backend: {seconds:.1f} s wall, {len(jobs)} jobs on {len(per_worker)} workers; "
          f"{total / seconds:,.1f} labelled decisions/s over the cluster", file=sys.stderr)
    print(json.dumps({"examples": total, "folder": args.out}))
    return 0


def run_fit(args: argparse.Namespace) -> int:
    from agents.checkpoint import CheckpointError  # imports torch (the train extra)

    if args.hidden is not None:
        arguments.check_layers(args.hidden)
    out = writable_file(args.out, "the policy file")  # found now, not after the fit
    try:
        stats = fit(args.start, Path(args.data), out, epochs=args.epochs, temperature=args.temperature,
                    margin=args.margin, learning_rate=args.learning_rate, seed=args.seed, loss=args.loss,
                    batch_size=args.batch_size, hidden=args.hidden, card_scorer=args.card_scorer,
                    shards_in_memory=args.shards_in_memory, log=lambda message: print(message, file=sys.stderr))
    except (CheckpointError, FileNotFoundError, ValueError) as err:
        raise UsageError(str(err)) from None
    print(json.dumps(stats, indent=2))
    return 0
