"""``hearts belief``: train a belief model (where the unseen cards are) for the search players."""

from __future__ import annotations

import argparse
import json
import sys

from agents import is_slow, make
from train.belief import train

from . import arguments
from .errors import UsageError, writable_file


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "belief",
        help="train a belief model of where the unseen cards are (for the search players)",
        description="Play hands at tables of --opponent bots (one seat in half of them played by --viewer), keep "
                    "each card play's observation with the true holders of the unseen cards, and fit a network to "
                    "them; write a belief file. The expert deals its sampled worlds by such a model. See "
                    "docs/training.md.",
    )
    parser.add_argument("out", help="belief file to write (.pt)")
    parser.add_argument("--hands", type=int, default=90112, help="hands to play in all (default %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="collecting processes (default %(default)s)")
    parser.add_argument("--opponent", default="hard", help="the players modelled (default %(default)s)")
    parser.add_argument("--viewer", default="ppo-classic",
                        help="plays one seat in half of the tables (default %(default)s)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[512, 512], metavar="WIDTH",
                        help="layer widths (default 512 512)")
    parser.add_argument("--epochs", type=int, default=3, help="passes over the examples (default %(default)s)")
    parser.add_argument("--seed", type=arguments.seed, default=1,
                        help="seed of the deals (worker w deals from 1000 * SEED + w) and of the fit (default %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in ("hands", "workers", "epochs"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be 1 or more, got {getattr(args, name)}")
    if any(width < 1 for width in args.hidden):
        raise UsageError(f"--hidden widths must be 1 or more, got {args.hidden}")
    out = writable_file(args.out, "the belief file")  # found now, not after minutes of work
    for flag, spec in (("--opponent", args.opponent), ("--viewer", args.viewer)):
        if is_slow(spec):
            raise UsageError(f"{flag} {spec!r} is a slow searching player; pick a bot or a policy")
        try:
            make(spec, rules="classic")
        except ValueError as err:
            raise UsageError(f"{flag} {spec!r}: {err}") from None
    try:
        stats = train(out, hands=args.hands, workers=args.workers, seed=args.seed, opponent=args.opponent,
                      viewer=args.viewer, hidden=tuple(args.hidden), epochs=args.epochs,
                      log=lambda message: print(message, file=sys.stderr, flush=True))
    except ValueError as err:  # e.g. an agent of your own that plays an illegal card, or too few hands
        raise UsageError(str(err)) from None
    print(json.dumps(stats, indent=2))
    return 0
