"""The ``hearts`` command: ``hearts demo`` (the README's main job), ``hearts bench`` and ``hearts arena``
here; the other subcommands are added by their own modules (:data:`COMMAND_MODULES`).

Rules are chosen with ``--rules`` (a preset name or a YAML/JSON file) and single options changed
with ``--rule key=value`` (repeatable), e.g. ``--rule moon=subtract_from_self``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import sys

from agents import AgentSpecError, builtin, make
from eval import arena, report
from eval.deals import MAX_DEALS, DealSet, DealSetError
from hearts_env import engine, loop, render
from hearts_env.rules import Rules, RulesError

from . import arguments, bench
from .arguments import add_rules_arguments, load_rules
from .errors import UsageError, writable_file, writable_folder


def _add_bench_arguments(parser: argparse.ArgumentParser, seconds: float) -> None:
    parser.add_argument("--batch-sizes", type=arguments.bounded(arguments.positive_ints, bench.MAX_BATCH_SIZE),
                        default=list(bench.DEFAULT_BATCH_SIZES), metavar="N,N,...",
                        help=f"engine batch sizes to measure, each at most {bench.MAX_BATCH_SIZE:,} (default "
                             f"{','.join(map(str, bench.DEFAULT_BATCH_SIZES))})")
    parser.add_argument("--seconds", type=arguments.bounded(arguments.positive_float, bench.MAX_SECONDS, " s"),
                        default=seconds, help="seconds of play per measurement (default %(default)s)")
    parser.add_argument("--no-open-spiel", action="store_true", help="skip the OpenSpiel reference")
    parser.add_argument("--no-envs", action="store_true", help="skip the PettingZoo and Gymnasium env measurements")
    parser.add_argument("--agents", default=",".join(bench.default_agents()), metavar="SPEC,SPEC,...",
                        help="agents whose decisions/s to measure (default %(default)s; '' for none); a search "
                             f"player (expert, expert:N, search, ppo-classic-search) decides for {bench.SEARCH_DECISIONS} card "
                             "plays with a choice at its budget")


def cmd_bench(args: argparse.Namespace) -> int:
    rules = load_rules(args.rules, args.rule)
    sizes = args.batch_sizes
    say = None if args.json else (lambda msg: print(f"measuring {msg} ...", file=sys.stderr, flush=True))
    specs = tuple(a for a in args.agents.split(",") if a)
    for spec in specs:  # a typo or a missing file is named now, not after the measurements before it
        try:
            make(spec)  # (without the rules: an agent of other rules is skipped with a word, as the bench does)
        except AgentSpecError as err:
            raise UsageError(f"--agents: {err}") from None
    results = bench.run(rules, sizes, args.seconds, with_open_spiel=not args.no_open_spiel,
                        with_envs=not args.no_envs, agent_specs=specs, progress=say)
    if args.json:
        print(json.dumps({
            "rules": rules.name,
            "seconds_per_measurement": args.seconds,
            "results": [r.__dict__ for r in results],
            "ratios_to_open_spiel": bench.ratios(results),
        }))
    else:
        print(bench.format_table(results, rules))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Play one random game, showing the table at a few moments, then run the benchmark."""
    rules = load_rules(args.rules, args.rule)
    state = engine.init(rules, 1, seed=args.seed)
    print(f"A random-play game of '{rules.name}' (seed {args.seed}):\n")
    print(render.render(state))

    def report(ended: loop.HandsEnded) -> None:
        hand = ended.state
        print(f"\nhand {int(hand.last_hand_number[0]) + 1} gave {hand.last_hand_points[0].tolist()}; "
              f"totals {hand.scores[0].tolist()}")

    loop.play(state, [make("random", seed=args.seed, rules=rules)], [0] * rules.num_players, on_hand_end=report)
    print("\n" + render.render(state))
    if args.no_bench:
        return 0
    print("\nBenchmark:")
    args.json = False
    return cmd_bench(args)


def cmd_arena(args: argparse.Namespace) -> int:
    """Play agents on fixed duplicate deals and report mean penalty points per hand."""
    rules = load_rules(args.rules, args.rule)
    # Where the run will write is checked before it plays: a bad --out found afterwards loses the games.
    if args.out:
        writable_folder(args.out, "--out")
    if args.resume_dir:
        writable_folder(args.resume_dir, "--resume-dir")
    if args.records:
        writable_file(args.records, "the records file (--records)")
    if args.save_deal_set:
        writable_file(DealSet.file_for(args.save_deal_set), "the deal set (--save-deal-set)")
    try:
        plan = _arena_plan(args, rules)
        if args.deal_set:
            deals = DealSet.load(args.deal_set, rules=rules)
            if args.deals is not None:
                if args.deals > len(deals):
                    raise UsageError(
                        f"--deals {args.deals}: the deal set {args.deal_set} holds only {len(deals)} deals"
                    )
                deals = deals.subset(0, args.deals)
        else:
            n = args.deals
            if n is None:  # the default leaderboard: 2,000 deals shared out over its tables, about 10 s
                n = ARENA_DEFAULT_DEALS
                if not args.agents:
                    n = max(200, ARENA_LEADERBOARD_DEAL_TABLES // len(plan.tables))
            deals = DealSet.generate(rules, n, args.seed)
        result = arena.run(
            plan, deals, seed=args.seed, workers=args.workers, records=args.records,
            progress=not args.no_progress, half_width=args.half_width, deal_set_path=args.deal_set,
            backend=args.backend, address=args.address, units_dir=args.resume_dir,
        )
    except (arena.ArenaError, AgentSpecError, DealSetError) as err:
        raise UsageError(str(err)) from None
    if args.save_deal_set:  # the deals played, once they are (an agent refused by the run leaves no file)
        saved = deals.save(args.save_deal_set)
        print(f"deal set saved to {saved}", file=sys.stderr)
    result.meta["command"] = "hearts " + " ".join(shlex.quote(a) for a in (args.argv or []))
    if not args.json:
        print(_run_line(result.meta), file=sys.stderr)
    if args.out:
        try:
            paths = report.write_all(result, args.out)
        except OSError as err:  # (checked before the run; the folder may have changed since)
            raise UsageError(f"cannot write the results to --out {args.out}: {err}") from None
        print(f"results written to {', '.join(str(p) for p in paths.values())}", file=sys.stderr)
    if args.records:
        print(f"game records written to {args.records}", file=sys.stderr)
    if args.json:
        print(result.to_json())
    else:
        report.print_terminal(result)
    return 0


def _run_line(meta: dict) -> str:
    """How the run went: wall time, units played (and loaded), units per worker, games per second."""
    workers = meta.get("units_per_worker") or {}
    spread = ", ".join(f"{w} {n}" for w, n in workers.items())
    loaded = f", {meta['units_loaded']} loaded from --resume-dir" if meta.get("units_loaded") else ""
    rate = f"{meta['games_per_s']:,.0f} games/s" if meta.get("games_per_s") else "no games played"
    return (f"{meta.get('backend', 'local')} backend: {meta['seconds']:.1f} s wall, {meta['units_played']} units "
            f"played{loaded} on {len(workers)} workers ({spread}); {rate} over the whole run")


ARENA_DEFAULT_DEALS = 1000
ARENA_LEADERBOARD_DEAL_TABLES = 2000


def _arena_plan(args: argparse.Namespace, rules: Rules):
    """Which format and line-up the arguments ask for (see ``hearts arena --help``)."""
    agents = list(args.agents)
    fmt = args.format
    kw = {"episode": args.episode, "seating": args.seating}
    if not agents:  # the default: a short leaderboard of the built-in bots
        pool = builtin(rules)  # the named agents that play these rules
        if fmt in (None, "roundrobin") and len(pool) >= 2:
            return arena.round_robin_plan(rules, pool, seed=args.seed, **kw)
        agents = pool[:1] or ["random"]
    if fmt is None:
        fmt = "head2head" if args.vs is not None or len(agents) == 1 else "roundrobin"
    if fmt == "head2head":
        return arena.head_to_head_plan(rules, agents, args.vs or "random", **kw)
    if fmt == "table":
        return arena.table_plan(rules, agents, fill=args.vs, **kw)
    if args.vs is not None:
        raise UsageError("--vs goes with --format head2head or table, not roundrobin")
    return arena.round_robin_plan(rules, agents, seed=args.seed, **kw)


#: Modules adding subcommands (``train``, ``play``, ...), imported when the parser is built.
COMMAND_MODULES: list[str] = ["hearts_app.train_cli", "hearts_app.recipe_cli", "hearts_app.distill_cli",
                              "hearts_app.belief_cli", "hearts_app.value_cli", "hearts_app.promotion_cli",
                              "hearts_app.terminal.cli", "hearts_app.export_cli", "hearts_app.serve_cli"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hearts", description="Hearts Lab: rules engine and tools.")
    sub = parser.add_subparsers(dest="command", required=True)

    bench_parser = sub.add_parser(
        "bench", help="throughput of the engine, envs and agents (beside OpenSpiel when installed)",
        description="Measure random-play hands/s at several batch sizes, the environments' steps/s and the "
                    "agents' decisions/s, beside OpenSpiel's hearts when it is installed "
                    "(scripts/setup.sh bench).")
    add_rules_arguments(bench_parser)
    _add_bench_arguments(bench_parser, seconds=3.0)
    bench_parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    bench_parser.set_defaults(func=cmd_bench)

    demo = sub.add_parser("demo", help="a random-play game shown at each hand's end, then the benchmark",
                          description="Play one game with four random agents, printing the table at the start "
                                      "and end and the scores after each hand, then run a short benchmark.")
    add_rules_arguments(demo)
    demo.add_argument("--seed", type=arguments.seed, default=0, help="seed of the game's deals and of the random agents")
    demo.add_argument("--no-bench", action="store_true", help="stop after the game")
    _add_bench_arguments(demo, seconds=2.0)
    demo.set_defaults(func=cmd_demo)

    arena_parser = sub.add_parser(
        "arena",
        help="benchmark agents on fixed duplicate deals (mean penalty points per hand)",
        description=(
            "Play agents on a fixed set of deals, each deal replayed with the line-up rotated so every "
            "agent sits in every seat with the same cards; report mean penalty points per hand (lower is "
            "better) with 95% intervals over deals and paired differences. With no AGENT: a short "
            "leaderboard of the built-in bots. One AGENT: head-to-head against three copies of --vs "
            "(default random). Several AGENTs: a round-robin (or --vs OPPONENT: each head-to-head)."
        ),
    )
    arena_parser.add_argument("agents", nargs="*", metavar="AGENT",
                       help="agent specs: random, easy, normal, hard, ppo-classic, ppo-two-player, "
                       "expert, expert:N, search and ppo-classic-search (search players, slower), ckpt:PATH, onnx:PATH")
    arena_parser.add_argument("--vs", metavar="OPPONENT",
                       help="opponent in the other seats (head2head, or fills a table)")
    arena_parser.add_argument("--format", choices=("head2head", "table", "roundrobin"),
                       help="head2head: each AGENT against copies of --vs; table: the AGENTs at one table "
                       "(--vs fills empty seats); roundrobin: every table of the AGENTs (default: from the AGENTs)")
    add_rules_arguments(arena_parser)
    arena_parser.add_argument("--deals", type=arguments.deal_count,
                       help=f"number of deals, at most {MAX_DEALS:,} (default {ARENA_DEFAULT_DEALS}; "
                       "the default leaderboard: 2,000 / its tables, 400 at each of 5; with --deal-set: its first N)")
    arena_parser.add_argument("--seed", type=arguments.seed, default=0, help="seed of the generated deals and of the agents")
    arena_parser.add_argument("--deal-set", metavar="FILE.npz", help="play a saved deal set (must match the rules)")
    arena_parser.add_argument("--save-deal-set", metavar="FILE.npz", help="save the deals played, to replay them later")
    arena_parser.add_argument("--episode", choices=("hand", "game"), default="hand",
                       help="one hand per deal, or a whole game to the target score")
    arena_parser.add_argument("--seating", choices=("rotate", "permute"), default="rotate",
                       help="rotate the line-up round the table, or use every permutation of seats")
    arena_parser.add_argument("--workers", type=arguments.positive_int, default=2,
                       help="processes (one per core); results do not depend on it")
    arena_parser.add_argument("--backend", choices=("local", "ray"), default="local",
                       help="local: --workers processes on this machine; ray: units as tasks on a Ray cluster "
                       "(docs/cluster.md; results are the same)")
    arena_parser.add_argument("--address", metavar="auto|HOST:PORT",
                       help="the Ray cluster for --backend ray (default: RAY_ADDRESS, else a local Ray with "
                       "--workers CPUs)")
    arena_parser.add_argument("--resume-dir", metavar="DIR",
                       help="keep each finished unit in DIR; the same command again loads them instead of "
                       "playing them (resumes an interrupted run)")
    arena_parser.add_argument("--half-width", type=arguments.positive_float, default=0.1,
                       help="interval half-width (points per hand) to report the deals needed for")
    arena_parser.add_argument("--out", metavar="DIR",
                       help="write results.json, leaderboard.csv, pairs.csv, report.md, points.png")
    arena_parser.add_argument("--json", action="store_true", help="print the results as one JSON object on stdout")
    arena_parser.add_argument("--records", metavar="FILE",
                       help="write every game (deal, cards, actions, points) as JSON lines")
    arena_parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    arena_parser.set_defaults(func=cmd_arena)

    # Commands that live with their own package: each module has ``register(subparsers)``
    # (it must not import heavy dependencies such as torch until its command runs).
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # argparse fills a positional list from one run of words only, so KEY=VALUE overrides written
    # after an option (``hearts train CONFIG --resume total_decisions=1e8``) come back unparsed.
    if extra and hasattr(args, "overrides") and all("=" in word and not word.startswith("-") for word in extra):
        args.overrides += extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.func(args)
    except (RulesError, UsageError) as err:
        parser.exit(2, f"hearts: error: {err}\n")
    except OSError as err:  # a path the system refuses: a name too long, a folder it may not enter, a full disk
        name = str(err.filename) if err.filename is not None else ""
        shown = name if len(name) <= 80 else f"{name[:40]}... ({len(name)} characters)"
        parser.exit(2, f"hearts: error: {shown + ': ' if shown else ''}{err.strerror or err}\n")
    except KeyboardInterrupt:
        parser.exit(130, "hearts: interrupted\n")
    return 0


if __name__ == "__main__":
    # Run the imported module's main, not this __main__ copy: command modules catch and raise the
    # imported module's exception classes, which must be the ones main() catches.
    from hearts_app.cli import main as package_main

    sys.exit(package_main())
