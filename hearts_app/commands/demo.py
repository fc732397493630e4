"""``hearts demo`` (the README's main job): one random-play game shown at each hand's end, then a short
``hearts bench``."""

from __future__ import annotations

import argparse

from agents import make
from hearts_env import engine, loop, render

from .. import arguments
from ..arguments import add_rules_arguments, load_rules
from . import bench as bench_command


def register(sub) -> None:
    demo = sub.add_parser("demo", help="a random-play game shown at each hand's end, then the benchmark",
                          description="Play one game with four random agents, printing the table at the start "
                                      "and end and the scores after each hand, then run a short benchmark.")
    add_rules_arguments(demo)
    demo.add_argument("--seed", type=arguments.seed, default=0, help="seed of the game's deals and of the random agents")
    demo.add_argument("--no-bench", action="store_true", help="stop after the game")
    bench_command.add_bench_arguments(demo, seconds=2.0)
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
    return bench_command.run(args)
