"""``hearts value``: train a value model (the points a whole deal gives each seat) for the search players."""

from __future__ import annotations

import argparse

from train import value

from .. import arguments
from ..errors import UsageError, writable_file


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "value",
        help="train a value model of the points a deal gives each seat (for the search players)",
        description="Play hands at tables of mixed players (each seat drawn from --players), keep the whole deal "
                    "at the start of every trick with the points the hand then gave each seat, and fit a network "
                    "to them; write a value file. The expert-value search finishes its sampled deals with such a "
                    "model. See docs/training.md.",
    )
    parser.add_argument("out", help="value file to write (.pt)")
    arguments.add_model_fit_arguments(parser, hands=value.HANDS, hidden=list(value.HIDDEN), epochs=value.EPOCHS)
    parser.add_argument("--players", default=",".join(value.PLAYERS),
                        help="the players each seat is drawn from, uniformly, separated by commas (a name twice is "
                             "twice as likely; default %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    arguments.check_layers(args.hidden)
    out = writable_file(args.out, "the value file")  # found now, not after minutes of work
    players = [spec.strip() for spec in args.players.split(",")]
    if not all(players):
        raise UsageError(f"--players {args.players!r:.60} has an empty name; give bots or policies separated by "
                         "commas, e.g. hard,normal")
    for spec in dict.fromkeys(players):
        arguments.check_table_player("--players", spec)
    return arguments.run_model_fit(value.train, out, args, players=players)
