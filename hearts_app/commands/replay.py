"""``hearts replay``: a game record shown trick by trick through the engine (``terminal.replay``), its
scores checked. A record that cannot be read is one line on stderr and exit code 2; a record whose
scores the engine does not reach, exit code 1.
"""

from __future__ import annotations

import argparse
import sys

from hearts_env.rules import RulesError

from ..arguments import positive_int
from ..session import records
from ..terminal import screen
from ..terminal.replay import replay


def register(subparsers) -> None:
    replay = subparsers.add_parser(
        "replay",
        help="show a recorded game (hearts play --save, hearts arena --records) trick by trick",
        description="Replay a game record through the engine trick by trick and check its scores.",
    )
    replay.add_argument("file", metavar="FILE", help="a JSON-lines game record")
    replay.add_argument("--game", type=positive_int, default=1, metavar="N", help="which game of the file (1-based)")
    replay.add_argument("--all", action="store_true", help="replay every game of the file")
    replay.add_argument("--brief", action="store_true", help="hand results only, no deals and tricks")
    replay.add_argument("--no-color", action="store_true", help="plain text, no colours or styles")
    replay.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = screen.make_console(args.no_color)
    try:
        record = records.load(args.file)
        numbers = range(1, len(record.games) + 1) if args.all else [args.game]
        ok = True
        for number in numbers:
            ok &= replay(record, number, console, brief=args.brief)
    except (records.RecordError, RulesError) as err:
        print(f"hearts replay: error: {err}", file=sys.stderr)
        return 2
    return 0 if ok else 1
