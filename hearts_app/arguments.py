"""Arguments the subcommands share: ``--rules``/``--rule`` (:func:`add_rules_arguments`,
:func:`load_rules`) and argument types. Each type refuses a bad value with one line saying what is
allowed, which argparse prints after the option's name (``argument --workers: must be 1 or more,
got 0``), before any work starts."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from hearts_env.rules import PRESETS, Rules, RulesError
from hearts_env.settings_files import apply_overrides, read_mapping

#: Seeds are below 2**63: NumPy and the deal generator take them as 64-bit integers, and a larger
#: one would be reduced silently while the results still named it.
SEED_LIMIT = 2**63


def _number(text: str, kind: type) -> int | float:
    try:
        return kind(text)
    except ValueError:  # (also a whole number of more digits than Python converts)
        shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"
        raise argparse.ArgumentTypeError(f"must be a {'whole ' if kind is int else ''}number, got {shown}") from None


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="classic", help=f"preset ({', '.join(PRESETS)}) or a YAML/JSON file")
    parser.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", help="override one option")


def load_rules(spec: str, overrides: list[str] | None = None) -> Rules:
    """Rules from a preset name or a YAML/JSON file, with ``key=value`` overrides."""
    if spec in PRESETS:
        data: dict = {"preset": spec}
    elif Path(spec).is_file():
        data = read_mapping(spec, RulesError, "rules")
    else:
        raise RulesError(f"--rules {spec!r} is neither a preset ({', '.join(PRESETS)}) nor a file")
    apply_overrides(data, overrides, RulesError, "moon=subtract_from_self", label="--rule")
    return Rules.from_dict(data)


def seed(text: str) -> int:
    """A seed: a whole number from 0 to 2**63 - 1."""
    value = _number(text, int)
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"a seed is 0 to 2**63 - 1, got {value}")
    return value


def positive_int(text: str) -> int:
    """A whole number, 1 or more (workers, deals, sizes)."""
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (seconds, interval widths)."""
    value = _number(text, float)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}")
    return value


def positive_ints(text: str) -> list[int]:
    """Comma-separated whole numbers, each 1 or more (``1,64,1024``)."""
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(f"give whole numbers separated by commas, e.g. 1,64,1024; got {text!r}")
    return [positive_int(part) for part in parts]
