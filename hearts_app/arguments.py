"""Arguments the subcommands share: ``--rules``/``--rule`` (:func:`add_rules_arguments`,
:func:`load_rules`), those of the commands that fit a model to played hands
(:func:`add_model_fit_arguments`, :func:`run_model_fit`), and argument types. Each type refuses a bad value with one line saying what is
allowed, which argparse prints after the option's name (``argument --workers: must be 1 or more,
got 0``), before any work starts."""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

from agents import SlowPlayerError, make_table_player
from eval.cluster import RayRolloutPool, import_ray
from eval.deals import MAX_DEALS
from hearts_env.rules import PRESETS, Rules, RulesError
from hearts_env.settings_files import apply_overrides, read_mapping
from train.config import MAX_DETERMINIZATIONS, MAX_EPOCHS, MAX_HANDS, MAX_TABLES, MAX_WIDTH  # noqa: F401

from .errors import UsageError

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


def non_negative_int(text: str) -> int:
    """A whole number, 0 or more (a count where 0 has a meaning: no golden vectors, no worker process)."""
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def port(text: str) -> int:
    """A TCP port to listen on: 0 to 65535 (0: any free port, which the command then names)."""
    value = _number(text, int)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: any free port), got {value}")
    return value


#: Local worker processes a command may start: each holds its own engine, agents and arrays, so
#: thousands would exhaust the machine before any work is done.
MAX_WORKERS = 64
#: (The sizes of a collection or a fit, MAX_HANDS ... MAX_WIDTH, are bounded as in a training config:
#: train/config.py.)


def worker_count(text: str) -> int:
    """A number of local worker processes: 1 to :data:`MAX_WORKERS`."""
    value = positive_int(text)
    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WORKERS} worker processes, got {value}")
    return value


#: ``hearts serve``'s processes deciding the /api/v1/act calls, at most: each makes every offered agent.
MAX_SERVE_WORKERS = 256


def serve_worker_count(text: str) -> int:
    """A number of ``hearts serve`` worker processes: 0 (a thread of the server's own process) to
    :data:`MAX_SERVE_WORKERS`."""
    return bounded(non_negative_int, MAX_SERVE_WORKERS, " worker processes")(text)


def add_rollout_options(parser: argparse.ArgumentParser, workers_help: str, backend_help: str) -> None:
    """``--rollout-workers``, ``--backend`` and ``--address``: where PPO's rollouts are played (a
    training run's, a recipe's PPO stages'; read back by :func:`ray_rollout_pool`)."""
    parser.add_argument("--rollout-workers", type=worker_count, default=0, metavar="N", help=workers_help)
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help=backend_help)
    parser.add_argument("--address", help="with --backend ray: the cluster (auto, HOST:PORT; default RAY_ADDRESS, "
                                          "else a local Ray)")


def ray_rollout_pool(args: argparse.Namespace):
    """The rollout pool of :func:`add_rollout_options`'s ``--backend``: a maker of Ray actor pools at
    ``--address`` (Ray's absence said now, before any folder is made), or None for local processes."""
    if args.address is not None and args.backend != "ray":
        raise UsageError("--address goes with --backend ray")
    if args.backend != "ray":
        return None
    import_ray()
    return functools.partial(RayRolloutPool, address=args.address)


def positive_float(text: str) -> float:
    """A finite number above 0 (seconds, interval widths)."""
    value = _number(text, float)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number, 0 or more (a margin, where 0 has a meaning)."""
    value = _number(text, float)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a number, 0 or more, got {text!r}")
    return value


def positive_ints(text: str) -> list[int]:
    """Comma-separated whole numbers, each 1 or more (``1,64,1024``)."""
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(f"give whole numbers separated by commas, e.g. 1,64,1024; got {text!r}")
    return [positive_int(part) for part in parts]


def bounded(kind: Callable[[str], Any], most: float, unit: str = "") -> Callable[[str], Any]:
    """The argument type ``kind`` (:func:`positive_int`, :func:`non_negative_int`, :func:`positive_float`,
    :func:`positive_ints`) with every value at most ``most``: a size beyond it is refused before any work starts."""
    def parse(text: str):
        value = kind(text)
        if any(v > most for v in (value if isinstance(value, list) else [value])):
            shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
            limit = f"{int(most):,}" if float(most).is_integer() else f"{most:g}"
            raise argparse.ArgumentTypeError(f"must be at most {limit}{unit}, got {shown}")
        return value
    parse.__name__ = kind.__name__  # (argparse names the type in its messages)
    return parse


def layer_width(text: str) -> int:
    """The units of one layer of a network (``--hidden``, ``--card-scorer``): 1 to :data:`MAX_WIDTH`."""
    return bounded(positive_int, MAX_WIDTH, " units")(text)


def deal_count(text: str) -> int:
    """A number of deals (or whole games) to play: 1 to ``eval.deals.MAX_DEALS``."""
    return bounded(positive_int, MAX_DEALS)(text)


def add_model_fit_arguments(parser: argparse.ArgumentParser, hands: int, hidden: list[int], epochs: int) -> None:
    """``--hands``, ``--workers``, ``--hidden``, ``--epochs`` and ``--seed`` of the commands that play
    hands and fit a model to them (``hearts belief``, ``hearts value``), each refused beyond its bound
    (:data:`MAX_HANDS`, :data:`MAX_WIDTH`, :data:`MAX_EPOCHS`) as it is parsed; :func:`check_layers`
    checks the number of ``--hidden`` layers."""
    parser.add_argument("--hands", type=bounded(positive_int, MAX_HANDS), default=hands,
                        help="hands to play in all (default %(default)s)")
    parser.add_argument("--workers", type=worker_count, default=2,
                        help=f"collecting processes, 1 to {MAX_WORKERS} (default %(default)s)")
    parser.add_argument("--hidden", type=layer_width, nargs="+", default=hidden, metavar="WIDTH",
                        help=f"layer widths (default {' '.join(map(str, hidden))})")
    parser.add_argument("--epochs", type=bounded(positive_int, MAX_EPOCHS), default=epochs,
                        help="passes over the examples (default %(default)s)")
    parser.add_argument("--seed", type=seed, default=1,
                        help="seed of the deals (worker w deals from 1000 * SEED + w) and of the fit "
                             "(default %(default)s)")


#: ``--hidden`` layers at most (each width is bounded by its type, :data:`MAX_WIDTH`).
MAX_LAYERS = 16


def check_layers(hidden: list[int]) -> None:
    """Refuse (:class:`UsageError`) more than :data:`MAX_LAYERS` ``--hidden`` widths (one option of
    ``nargs``: no type sees them all)."""
    if len(hidden) > MAX_LAYERS:
        raise UsageError(f"--hidden takes at most {MAX_LAYERS} layers, got {len(hidden)}")


def run_model_fit(train: Callable[..., dict], out: Path, args: argparse.Namespace, **settings) -> int:
    """Call ``train(out, ...)`` with the arguments of :func:`add_model_fit_arguments` and ``settings``,
    its progress on stderr; print the stats it returns as JSON. A ``ValueError`` from it (an agent of
    your own that plays an illegal card, too few hands) is the command's :class:`UsageError`."""
    try:
        stats = train(out, hands=args.hands, workers=args.workers, seed=args.seed, hidden=tuple(args.hidden),
                      epochs=args.epochs, log=lambda message: print(message, file=sys.stderr, flush=True),
                      **settings)
    except ValueError as err:
        raise UsageError(str(err)) from None
    print(json.dumps(stats, indent=2))
    return 0


def check_table_player(flag: str, spec: str, rules="classic") -> None:
    """Refuse (:class:`UsageError`) a player ``spec`` given to ``flag`` that cannot sit at the
    tables of a collection or be judged by the promotion rule: unknown, not a player of ``rules``
    (a preset name or Rules), or a slow searching player."""
    try:
        make_table_player(spec, rules=rules)
    except SlowPlayerError:
        raise UsageError(f"{flag} {spec!r} is a slow searching player; pick a bot or a policy") from None
    except ValueError as err:
        raise UsageError(f"{flag} {spec!r}: {err}") from None
