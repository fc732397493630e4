"""``hearts belief``: train a belief model (where the unseen cards are) for the search players."""

from __future__ import annotations

import argparse

from train import belief

from .. import arguments
from ..errors import writable_file


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
    arguments.add_model_fit_arguments(parser, hands=belief.HANDS, hidden=list(belief.HIDDEN), epochs=belief.EPOCHS)
    parser.add_argument("--opponent", default="hard", help="the players modelled (default %(default)s)")
    parser.add_argument("--viewer", default="ppo-classic",
                        help="plays one seat in half of the tables (default %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    arguments.check_layers(args.hidden)
    out = writable_file(args.out, "the belief file")  # found now, not after minutes of work
    arguments.check_table_player("--opponent", args.opponent)
    arguments.check_table_player("--viewer", args.viewer)
    return arguments.run_model_fit(belief.train, out, args, opponent=args.opponent, viewer=args.viewer)
