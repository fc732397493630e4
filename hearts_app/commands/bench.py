"""``hearts bench``: the throughput of the engine, the environments and the agents (``hearts_app.bench``),
beside OpenSpiel's hearts when it is installed. ``hearts demo`` ends with a short one (its arguments:
:func:`add_bench_arguments`)."""

from __future__ import annotations

import argparse
import json
import sys

from agents import AgentSpecError, make

from .. import arguments, bench
from ..arguments import add_rules_arguments, load_rules
from ..errors import UsageError


def register(sub) -> None:
    bench_parser = sub.add_parser(
        "bench", help="throughput of the engine, envs and agents (beside OpenSpiel when installed)",
        description="Measure random-play hands/s at several batch sizes, the environments' steps/s and the "
                    "agents' decisions/s, beside OpenSpiel's hearts when it is installed "
                    "(scripts/setup.sh bench).")
    add_rules_arguments(bench_parser)
    add_bench_arguments(bench_parser, seconds=3.0)
    bench_parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    bench_parser.set_defaults(func=run)


def add_bench_arguments(parser: argparse.ArgumentParser, seconds: float) -> None:
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


def run(args: argparse.Namespace) -> int:
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
