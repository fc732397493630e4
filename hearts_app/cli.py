"""The ``hearts`` command: the parser, with every subcommand of ``hearts_app.commands`` (one module each),
and :func:`main`, which runs the one asked for and turns its refusals into one line and exit code 2.

Rules are chosen with ``--rules`` (a preset name or a YAML/JSON file) and single options changed
with ``--rule key=value`` (repeatable), e.g. ``--rule moon=subtract_from_self``.
"""

from __future__ import annotations

import argparse
import sys

from hearts_env.rules import RulesError

from . import commands
from .errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hearts", description="Hearts Lab: rules engine and tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    commands.register(sub)
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
