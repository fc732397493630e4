"""``hearts export CHECKPOINT --out DIR``: the ONNX policy and its manifest for game apps;
``hearts export --web DIR``: the browser game as a static site, playing against the shipped ladders' levels;
``hearts export --ladder classic --out DIR [--measure] [--panel] [--deals N]``: the ladder of levels
(export/ladder.py), measured at its home rules and at its panel of rule sets (export/panel.py)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from pathlib import Path

from export.ladder import LADDERS, export_ladder
from export.model import ExportError, export_policy
from export.panel import measure_panel, panel_table
from export.web import WebBuildError, build_web, check_site_folder

from .. import arguments
from ..errors import UsageError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a checkpoint as one ONNX file plus a JSON manifest (for game apps)",
        description=(
            "Write DIR/policy.onnx (opset 17, weights inside, dynamic batch; inputs observation float32[N, D] "
            "and action_mask bool[N, 52], outputs action int64[N] and probabilities float32[N, 52]; a row with "
            "no legal card gets action -1 and all-zero probabilities), "
            "DIR/policy.json (observation version and layout, card encoding, seats, rules, sha256, provenance) "
            "and DIR/golden.json (test vectors for a game app's encoder and runtime: records with their "
            "observations, masks and the model's picks, records of other rules, and invalid records with the "
            "errors they must raise). See docs/export.md. "
            "With --web DIR instead: the browser game of `hearts serve` as a static site (the page, the "
            "JavaScript engine and client, the levels of both shipped ladders, exported first, or of the "
            "ladders given with --levels, and the exported policies of agents/policies), "
            "served by any static file server, e.g. python -m http.server -d DIR."
        ),
    )
    parser.add_argument("checkpoint", nargs="?", help="checkpoint file (runs/<run>/policy.pt or a snapshot)")
    parser.add_argument("--out", metavar="DIR", help="folder to write the files to")
    parser.add_argument("--web", metavar="DIR",
                        help="build the browser game as a static site into DIR instead (no checkpoint): it "
                             "plays whole games in the browser against the exported policies; serve DIR with "
                             "any static file server (python -m http.server -d DIR), not from file://")
    parser.add_argument("--levels", action="append", metavar="LADDER_DIR",
                        help="with --web: a ladder's export (hearts export --ladder NAME --out LADDER_DIR) whose "
                             "levels the page offers first, easiest first (repeatable; default: both shipped "
                             "ladders, exported first)")
    parser.add_argument("--ladder", choices=sorted(LADDERS),
                        help="export the ladder of levels of these rules instead of a checkpoint (easy, normal, "
                             "hard: networks that play like the bots; strong: the best network): DIR/<level>/ "
                             "policy.onnx, policy.json, golden.json, model_card.md and DIR/levels.json")
    parser.add_argument("--measure", action="store_true",
                        help="with --ladder: measure every level in the arena against three hard (and the bots "
                             "they imitate, on the same deals) and write the figures into levels.json and "
                             "DIR/figures.json (without it: the figures recorded for the ladder)")
    parser.add_argument("--panel", action="store_true",
                        help="with --ladder: measure every level at each rule set of the ladder's panel (its family's "
                             "options one at a time, the unseen combinations, the targets as whole games) against "
                             "three hard, beside the bots: DIR/panel.json and DIR/panel.md (export/panel.py)")
    parser.add_argument("--deals", type=arguments.deal_count, default=2000, metavar="N",
                        help="with --measure or --panel: deals of the arena, 2 to 1,000,000 (default 2000)")
    parser.add_argument("--games", type=arguments.deal_count, default=300, metavar="N",
                        help="with --panel: whole games at each target of the panel, 2 to 1,000,000 (default 300)")
    parser.add_argument("--seed", type=arguments.seed, default=0,
                        help="with --measure or --panel: the arena's seed, 0 to 2**63 - 1 (default 0)")
    parser.add_argument("--workers", type=arguments.positive_int, default=2,
                        help="with --measure or --panel: arena processes (default 2)")
    parser.add_argument("--golden", type=arguments.non_negative_int, default=40, metavar="N",
                        help="seat records with the model's picks in golden.json (besides its encoder and "
                             "invalid records; 0: do not write golden.json; default 40)")
    parser.add_argument("--arena-results", metavar="FILE",
                        help="results.json of `hearts arena --out` to record in the manifest's provenance")
    parser.set_defaults(func=run)


#: What exporting imports; the export extra installs them (torch's ONNX exporter loads onnxscript
#: only when it runs, so a missing one would otherwise surface mid-export as a bare traceback).
EXPORT_MODULES = ("torch", "onnx", "onnxscript", "onnxruntime")


def missing_export_modules() -> list[str]:
    """The modules of :data:`EXPORT_MODULES` this environment lacks."""
    missing = []
    for module in EXPORT_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


def run(args: argparse.Namespace) -> int:
    if args.web is not None and args.ladder is not None:
        raise UsageError("--web and --ladder are two different exports: run them one at a time")
    if args.web is not None:
        return build_site(args)
    if args.levels:
        raise UsageError("--levels goes with --web DIR (the static web build)")
    if args.ladder is None and (args.measure or args.panel):
        raise UsageError(f"{'--measure' if args.measure else '--panel'} goes with --ladder NAME")
    if args.ladder is not None and args.checkpoint is not None:
        raise UsageError("hearts export --ladder NAME --out DIR takes no checkpoint: it exports the shipped levels")
    if args.ladder is not None and args.out is None:
        raise UsageError("hearts export --ladder NAME needs --out DIR")
    if args.checkpoint is None and args.ladder is None or args.out is None:
        raise UsageError("hearts export needs a CHECKPOINT and --out DIR (or --web DIR for the static web build)")
    missing = missing_export_modules()
    if missing:
        raise UsageError(f"hearts export needs {', '.join(missing)}: run scripts/setup.sh export "
                         f"(or pip install -e '.[export]')")
    from agents.checkpoint import CheckpointError  # imports torch (the export extra, checked above)

    if (args.measure or args.panel) and args.deals < 2:  # (one deal has no spread: its interval is undefined)
        raise UsageError(f"--deals must be 2 or more to measure a 95% interval, got {args.deals}")
    if args.panel and args.games < 2:
        raise UsageError(f"--games must be 2 or more to measure a 95% interval, got {args.games}")
    try:
        if args.ladder is not None:
            written = export_ladder(args.ladder, args.out, golden=args.golden,
                                    measure_deals=args.deals if args.measure else None, seed=args.seed,
                                    workers=args.workers, log=lambda line: print(line, file=sys.stderr))
            if args.panel:
                written.update(write_panel(args))
        else:
            written = export_policy(args.checkpoint, args.out, golden=args.golden, arena_results=args.arena_results)
    except (CheckpointError, ExportError) as err:
        raise UsageError(str(err)) from None
    except OSError as err:  # a folder that cannot be made or written
        raise UsageError(f"cannot write the export to {args.out}: {err.strerror or err} "
                         f"({err.filename or args.out})") from None
    for kind, path in written.items():
        print(f"{kind}: {path}", file=sys.stderr)
    return 0


def write_panel(args: argparse.Namespace) -> dict[str, Path]:
    """``--panel``: the exported ladder at every rule set of its panel, into DIR/panel.json and DIR/panel.md."""
    out = Path(args.out)
    panel = measure_panel(LADDERS[args.ladder], out, args.deals, args.games, seed=args.seed, workers=args.workers,
                          log=lambda line: print(line, file=sys.stderr))
    (out / "panel.json").write_text(json.dumps(panel, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "panel.md").write_text(panel_table(panel), encoding="utf-8")
    return {"panel": out / "panel.json", "panel_table": out / "panel.md"}


def build_site(args: argparse.Namespace) -> int:
    """``hearts export --web DIR``: the static web build (export/web.py)."""
    if args.checkpoint is not None or args.out is not None:
        raise UsageError("hearts export --web DIR takes no checkpoint and no --out: it builds the page with "
                         "the shipped ladders' levels (or those of --levels) and the exported policies of "
                         "agents/policies")
    if not args.web.strip():
        raise UsageError("--web needs the folder to build the site in, e.g. --web site")
    try:
        check_site_folder(args.web)  # (before the ladders are exported: that takes half a minute)
        if args.levels:
            written = build_web(args.web, levels=args.levels)
        else:
            written = build_with_shipped_ladders(args.web)
    except WebBuildError as err:
        raise UsageError(str(err)) from None
    except OSError as err:
        raise UsageError(f"cannot write the web build to {args.web}: {err.strerror or err} "
                         f"({err.filename or args.web})") from None
    print(f"web build: {written['index'].parent} (opponents: {', '.join([*written['models'], 'random'])}); "
          f"serve it with: python -m http.server -d {args.web}", file=sys.stderr)
    return 0


def build_with_shipped_ladders(site: str) -> dict[str, Path | list[str]]:
    """The default web build: every shipped ladder (export/ladder.py's LADDERS: the four-player and the
    two-player levels) exported into a temporary folder first, so that the page's levels play every
    table it offers. Exporting needs the export extra; ``--levels DIR`` builds from ladders exported before."""
    missing = missing_export_modules()
    if missing:
        raise UsageError(f"hearts export --web exports the shipped ladders first and needs {', '.join(missing)}: "
                         "run scripts/setup.sh export, or name ladders exported before with --levels DIR")
    with tempfile.TemporaryDirectory(prefix="hearts-ladders-") as ladders:
        folders = []
        for name in LADDERS:
            print(f"exporting the {name} ladder", file=sys.stderr)
            folders.append(Path(ladders) / name)
            # (no golden vectors: the site does not publish them)
            try:
                export_ladder(name, folders[-1], golden=0, log=lambda line: None)
            except ExportError as err:
                raise UsageError(str(err)) from None
        return build_web(site, levels=folders)
