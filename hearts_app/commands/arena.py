"""``hearts arena``: agents played on fixed duplicate deals (``eval.arena``), mean penalty points per hand
with intervals; with no agent named, a short leaderboard of the built-in bots."""

from __future__ import annotations

import argparse
import shlex
import sys

from agents import AgentSpecError, builtin
from eval import arena, report
from eval.deals import MAX_DEALS, DealSet, DealSetError
from hearts_env.rules import Rules

from .. import arguments
from ..arguments import add_rules_arguments, load_rules
from ..errors import UsageError, writable_file, writable_folder


def register(sub) -> None:
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
    arena_parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
