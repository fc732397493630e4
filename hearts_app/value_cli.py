"""``hearts value``: train a value model (the points a whole deal gives each seat) for the search players."""

from __future__ import annotations

import argparse
import json
import sys

from agents import is_slow, make
from train.value import PLAYERS, train

from . import arguments
from .errors import UsageError, writable_file


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
    parser.add_argument("--hands", type=int, default=2_000_000, help="hands to play in all (default %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="collecting processes (default %(default)s)")
    parser.add_argument("--players", default=",".join(PLAYERS),
                        help="the players each seat is drawn from, uniformly, separated by commas (a name twice is "
                             "twice as likely; default %(default)s)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[512, 256], metavar="WIDTH",
                        help="layer widths (default 512 256)")
    parser.add_argument("--epochs", type=int, default=2, help="passes over the examples (default %(default)s)")
    parser.add_argument("--seed", type=arguments.seed, default=1,
                        help="seed of the deals (worker w deals from 1000 * SEED + w) and of the fit "
                             "(default %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in ("hands", "workers", "epochs"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be 1 or more, got {getattr(args, name)}")
    if any(width < 1 for width in args.hidden):
        raise UsageError(f"--hidden widths must be 1 or more, got {args.hidden}")
    out = writable_file(args.out, "the value file")  # found now, not after minutes of work
    players = [spec.strip() for spec in args.players.split(",") if spec.strip()]
    if not players:
        raise UsageError("--players names no player; give bots or policies separated by commas, e.g. hard,normal")
    for spec in dict.fromkeys(players):
        if is_slow(spec):
            raise UsageError(f"--players {spec!r} is a slow searching player; pick bots or policies")
        try:
            make(spec, rules="classic")
        except ValueError as err:
            raise UsageError(f"--players {spec!r}: {err}") from None
    try:
        stats = train(out, hands=args.hands, workers=args.workers, seed=args.seed, players=players,
                      hidden=tuple(args.hidden), epochs=args.epochs,
                      log=lambda message: print(message, file=sys.stderr, flush=True))
    except ValueError as err:  # e.g. an agent of your own that plays an illegal card, or too few hands
        raise UsageError(str(err)) from None
    print(json.dumps(stats, indent=2))
    return 0
