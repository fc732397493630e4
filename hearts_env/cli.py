"""The ``hearts`` command: ``hearts demo`` (the README's main job) and ``hearts bench``.

Rules are chosen with ``--rules`` (a preset name or a YAML/JSON file) and single options changed
with ``--rule key=value`` (repeatable), e.g. ``--rule moon=subtract_from_self``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from . import bench, engine, render
from .rules import PRESETS, Rules, RulesError


def load_rules(spec: str, overrides: list[str] | None = None) -> Rules:
    """Rules from a preset name or a YAML/JSON file, with ``key=value`` overrides."""
    if spec in PRESETS:
        data: dict = {"preset": spec}
    else:
        path = Path(spec)
        if not path.is_file():
            raise RulesError(f"--rules {spec!r} is neither a preset ({', '.join(PRESETS)}) nor a file")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as err:
            raise RulesError(f"{path}: not valid YAML/JSON: {err}") from None
        if not isinstance(data, dict):
            raise RulesError(f"{path}: expected a mapping of rules options, got {type(data).__name__}")
    for item in overrides or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RulesError(f"--rule {item!r}: write KEY=VALUE, e.g. moon=subtract_from_self")
        data[key.strip()] = yaml.safe_load(value)
    return Rules.from_dict(data)


def _add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="classic", help=f"preset ({', '.join(PRESETS)}) or a YAML/JSON file")
    parser.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", help="override one option")


def cmd_bench(args: argparse.Namespace) -> int:
    rules = load_rules(args.rules, args.rule)
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    say = None if args.json else (lambda msg: print(f"measuring {msg} ...", file=sys.stderr, flush=True))
    results = bench.run(rules, sizes, args.seconds, with_open_spiel=not args.no_open_spiel,
                        with_envs=not args.no_envs, progress=say)
    if args.json:
        print(json.dumps({
            "rules": rules.name,
            "seconds_per_measurement": args.seconds,
            "results": [r.__dict__ for r in results],
        }))
    else:
        print(bench.format_table(results, rules))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Play one random game, showing the table at a few moments, then run the benchmark."""
    rules = load_rules(args.rules, args.rule)
    state = engine.init(rules, 1, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    print(f"A random-play game of '{rules.name}' (seed {args.seed}):\n")
    print(render.render(state))
    hand = 0
    while not state.done[0]:
        state = engine.step(state, bench.random_actions(state.legal, rng))
        if state.hand_number[0] != hand or state.done[0]:
            print(f"\nhand {hand + 1} gave {state.last_hand_points[0].tolist()}; totals {state.scores[0].tolist()}")
            hand = int(state.hand_number[0])
    print("\n" + render.render(state))
    if args.no_bench:
        return 0
    print("\nBenchmark:")
    args.json = False
    return cmd_bench(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hearts", description="Hearts Lab: rules engine and tools.")
    sub = parser.add_subparsers(dest="command", required=True)

    bench_parser = sub.add_parser("bench", help="random-play throughput (vs OpenSpiel when installed)")
    _add_rules_arguments(bench_parser)
    bench_parser.add_argument("--batch-sizes", default=",".join(map(str, bench.DEFAULT_BATCH_SIZES)))
    bench_parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    bench_parser.add_argument("--no-open-spiel", action="store_true", help="skip the OpenSpiel reference")
    bench_parser.add_argument("--no-envs", action="store_true", help="skip the AEC and vector env measurements")
    bench_parser.add_argument("--json", action="store_true", help="print one JSON object")
    bench_parser.set_defaults(func=cmd_bench)

    demo = sub.add_parser("demo", help="a random-play game, then the benchmark")
    _add_rules_arguments(demo)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--no-bench", action="store_true")
    demo.add_argument("--batch-sizes", default=",".join(map(str, bench.DEFAULT_BATCH_SIZES)))
    demo.add_argument("--seconds", type=float, default=2.0)
    demo.add_argument("--no-open-spiel", action="store_true")
    demo.add_argument("--no-envs", action="store_true")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RulesError as err:
        parser.exit(2, f"hearts: error: {err}\n")
    except KeyboardInterrupt:
        parser.exit(130, "hearts: interrupted\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
