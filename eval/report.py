"""Arena reports: a terminal table (rich), Markdown, CSV, JSON and a PNG plot of mean points.

``write_all(result, out_dir)`` writes every file format; each one carries what is needed to
reproduce the run (rules, deal-set seed, number of deals, agent specs, package version).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from matplotlib.figure import Figure
from rich import box
from rich.console import Console
from rich.table import Table

from .arena import ArenaResult

FILES = {
    "json": "results.json",
    "csv": "leaderboard.csv",
    "pairs_csv": "pairs.csv",
    "markdown": "report.md",
    "png": "points.png",
}


def _num(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:.{digits}f}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _interval(d: dict | None, digits: int = 2) -> str:
    if not d:
        return "-"
    return f"{_num(d['mean'], digits)} ± {_num(d['half_width'], digits)}"


def _bounds(d: dict) -> str:
    return f"[{_num(d['low'])}, {_num(d['high'])}]"


def _verdict(pair: dict) -> str:
    d = pair["difference"]
    if d["low"] is not None and d["low"] > 0:
        return f"{pair['b']} better"
    if d["high"] is not None and d["high"] < 0:
        return f"{pair['a']} better"
    return "no clear difference"


# Columns of the tables: (header, cell, priority). A narrow terminal drops the lowest priorities
# first (0: always kept); the files (Markdown, CSV, JSON) keep every column.
def _columns(result: ArenaResult) -> list[tuple[str, callable, int]]:
    conf = int(round(100 * result.meta["confidence"]))
    cols = [
        ("#", lambda r: str(r["rank"]), 0),
        ("agent", lambda r: r["agent"], 0),
    ]
    if any(r["spec"] != r["agent"] for r in result.leaderboard):
        cols.append(("spec", lambda r: r["spec"], 1))
    cols += [
        ("points/hand", lambda r: _num(r["points_per_hand"]["mean"]), 0),
        (f"{conf}% interval", lambda r: _bounds(r["points_per_hand"]), 0),
        ("moons made", lambda r: _pct(r["moons_made_per_hand"]), 5),
        ("moons suffered", lambda r: _pct(r["moons_suffered_per_hand"]), 4),
        ("0-point hands", lambda r: _pct(r["zero_point_share"]), 3),
    ]
    if result.meta["episode"] == "game":
        cols.append(("win rate", lambda r: _pct(r["win_rate"]["mean"]), 6))
        cols.append(("game score", lambda r: _num(r["mean_game_score"], 1), 6))
    if any(r["rating"] for r in result.leaderboard):
        cols.append(("rating", lambda r: _num(r["rating"]["ordinal"], 1) if r["rating"] else "-", 7))
    cols.append((f"deals for ±{result.meta['target_half_width']:g}", lambda r: str(r["deals_needed"] or "-"), 2))
    cols.append(("hands", lambda r: str(r["hands"]), 1))
    return cols


def _pair_columns(result: ArenaResult) -> list[tuple[str, callable, int]]:
    conf = int(round(100 * result.meta["confidence"]))
    return [
        ("a − b", lambda p: f"{p['a']} − {p['b']}", 0),
        ("difference", lambda p: _num(p["difference"]["mean"]), 0),
        (f"{conf}% interval", lambda p: _bounds(p["difference"]), 0),
        ("p", lambda p: _num(p["difference"].get("p_value"), 3), 3),
        ("verdict", _verdict, 4),
        ("over", lambda p: p["over"], 1),
        (f"deals for ±{result.meta['target_half_width']:g}", lambda p: str(p["deals_needed"] or "-"), 2),
    ]


#: Explains the rating column, printed under the leaderboard when it has one.
RATING_NOTE = ("rating: OpenSkill mu - 3 sigma from each deal's finishing order at each table "
               "(higher is better)")


def describe_run(result: ArenaResult) -> str:
    m = result.meta
    deal_source = m["deal_set_file"] or f"generated from seed {m['deal_set_seed']}"
    tables = len(m["tables"])
    games = m["deals"] * m["seatings_per_deal"] * tables
    speed = f"{m['seconds']:.1f} s"
    if m["seconds"] > 0:
        speed += f", {games / m['seconds']:,.0f} games/s"
    return (
        f"{m['format']} · rules {m['rules_name']!r} · {m['episode']} episodes · {m['deals']:,} deals "
        f"({deal_source}) at each of {tables} table{'s' if tables != 1 else ''}, each deal played "
        f"{m['seatings_per_deal']} times ({m['seating']} seatings): {games:,} games · "
        f"arena seed {m['arena_seed']} · hearts-lab {m['hearts_lab_version']} · {speed} "
        f"({m['workers']} worker{'s' if m['workers'] != 1 else ''})"
    )


def _fitted_table(console, title: str, columns: list, rows: list, left: tuple[str, ...]):
    """A rich table of ``rows`` that fits the console: the lowest-priority columns are dropped
    until it does; labels fold onto a second line rather than being cut."""
    kept = list(columns)
    while True:
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for name, _, _ in kept:
            if name in left:
                # A long label (a checkpoint's path) folds within a third of the width.
                table.add_column(name, justify="left", overflow="fold", max_width=max(16, console.width // 3))
            else:
                table.add_column(name.replace(" ", "\n", 1) if len(name) > 8 else name, justify="right",
                                 no_wrap=True)
        for row in rows:
            table.add_row(*[f(row) for _, f, _ in kept])
        droppable = [c for c in kept if c[2] > 0]
        natural = console.measure(table, options=console.options.update_width(10_000)).maximum
        if natural <= console.width or not droppable:
            return table
        kept.remove(min(droppable, key=lambda c: c[2]))


def print_terminal(result: ArenaResult, file=None, width: int | None = None) -> None:
    """The leaderboard and the paired differences as rich tables, fitted to the terminal's width
    (``width``, or 160 columns when writing to a file or a pipe)."""
    console = Console(file=file, width=width)
    if not console.is_terminal:
        console = Console(file=file, width=width or 160, color_system=None)
    cols = _columns(result)
    console.print(_fitted_table(console, "Leaderboard (penalty points per hand, lower is better)", cols,
                                result.leaderboard, ("agent", "spec")))
    if any(name == "rating" for name, _, _ in cols):
        console.print(RATING_NOTE, highlight=False)
    if result.summary["pairs"]:
        console.print(_fitted_table(
            console, "Paired differences over the same deals (a − b; negative: a took fewer points)",
            _pair_columns(result), result.summary["pairs"], ("a − b", "verdict", "over")))
    console.print(describe_run(result), highlight=False)


def to_markdown(result: ArenaResult) -> str:
    lines = ["# Arena results", "", describe_run(result), ""]
    if result.meta.get("command"):
        lines += [f"Reproduce: `{result.meta['command']}`", ""]
    cols = _columns(result)
    lines.append("| " + " | ".join(n for n, _, _ in cols) + " |")
    lines.append("| " + " | ".join("---" if n in ("agent", "spec") else "---:" for n, _, _ in cols) + " |")
    for row in result.leaderboard:
        lines.append("| " + " | ".join(f(row).replace("|", "\\|") for _, f, _ in cols) + " |")
    if any(name == "rating" for name, _, _ in cols):
        lines += ["", RATING_NOTE + "."]
    if result.summary["pairs"]:
        lines += ["", "## Paired differences (a − b, per deal, over the same deals)", ""]
        cols = _pair_columns(result)
        lines.append("| " + " | ".join(n for n, _, _ in cols) + " |")
        lines.append("| " + " | ".join("---:" if n in ("difference", "p") else "---" for n, _, _ in cols) + " |")
        for pair in result.summary["pairs"]:
            lines.append("| " + " | ".join(f(pair) for _, f, _ in cols) + " |")
    lines += ["", "## Rules", "", "```json", json.dumps(result.meta["rules"], indent=2), "```", ""]
    return "\n".join(lines)


def leaderboard_csv(result: ArenaResult) -> str:
    out = io.StringIO()
    fields = [
        "rank", "agent", "spec", "points_per_hand", "low", "high", "sd", "deals", "hands", "games",
        "moons_made_per_hand", "moons_suffered_per_hand", "zero_point_share", "win_rate", "win_rate_low",
        "win_rate_high", "mean_game_score", "rating_mu", "rating_sigma", "rating", "deals_needed",
        "rules", "episode", "deal_set_seed", "arena_seed", "version",
    ]
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    m = result.meta
    for row in result.leaderboard:
        pts, win, rating = row["points_per_hand"], row["win_rate"] or {}, row["rating"] or {}
        writer.writerow({
            "rank": row["rank"], "agent": row["agent"], "spec": row["spec"], "points_per_hand": pts["mean"],
            "low": pts["low"], "high": pts["high"], "sd": pts["sd"], "deals": pts["n"], "hands": row["hands"],
            "games": row["games"], "moons_made_per_hand": row["moons_made_per_hand"],
            "moons_suffered_per_hand": row["moons_suffered_per_hand"], "zero_point_share": row["zero_point_share"],
            "win_rate": win.get("mean"), "win_rate_low": win.get("low"), "win_rate_high": win.get("high"),
            "mean_game_score": row["mean_game_score"], "rating_mu": rating.get("mu"),
            "rating_sigma": rating.get("sigma"), "rating": rating.get("ordinal"),
            "deals_needed": row["deals_needed"], "rules": m["rules_name"], "episode": m["episode"],
            "deal_set_seed": m["deal_set_seed"], "arena_seed": m["arena_seed"], "version": m["hearts_lab_version"],
        })
    return out.getvalue()


def pairs_csv(result: ArenaResult) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "difference", "low", "high", "sd", "deals", "p_value", "over", "deals_needed"])
    for p in result.summary["pairs"]:
        d = p["difference"]
        writer.writerow([p["a"], p["b"], d["mean"], d["low"], d["high"], d["sd"], d["n"], d.get("p_value"),
                         p["over"], p["deals_needed"]])
    return out.getvalue()


def plot(result: ArenaResult, path: str | Path) -> Path:
    """A PNG of each agent's mean points per hand with its interval. A bare ``Figure`` (no pyplot): no
    display needed, and the caller's matplotlib backend stays as it was."""
    rows = result.leaderboard
    labels = [r["agent"] for r in rows]
    means = [r["points_per_hand"]["mean"] for r in rows]
    lows = [r["points_per_hand"]["low"] for r in rows]
    highs = [r["points_per_hand"]["high"] for r in rows]
    err = [[m - (lo if lo is not None else m) for m, lo in zip(means, lows)],
           [(hi if hi is not None else m) - m for m, hi in zip(means, highs)]]
    fig = Figure(figsize=(7, 1.2 + 0.5 * len(rows)))
    ax = fig.subplots()
    y = list(range(len(rows)))[::-1]
    ax.errorbar(means, y, xerr=err, fmt="o", capsize=4, color="tab:red")
    ax.set_yticks(y, labels)
    conf = int(round(100 * result.meta["confidence"]))
    ax.set_xlabel(f"penalty points per hand (mean, {conf}% interval over deals; lower is better)")
    m = result.meta
    ax.set_title(f"{m['format']}, rules {m['rules_name']}, {m['deals']} deals × {m['seatings_per_deal']} seatings",
                 fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def write_all(result: ArenaResult, out_dir: str | Path) -> dict[str, Path]:
    """Every format into ``out_dir``: results.json, leaderboard.csv, pairs.csv, report.md, points.png."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / name for k, name in FILES.items()}
    paths["json"].write_text(result.to_json(indent=2) + "\n")
    paths["csv"].write_text(leaderboard_csv(result))
    paths["pairs_csv"].write_text(pairs_csv(result))
    paths["markdown"].write_text(to_markdown(result))
    plot(result, paths["png"])
    return paths
