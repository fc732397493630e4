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


def _columns(result: ArenaResult) -> list[tuple[str, callable]]:
    conf = int(round(100 * result.meta["confidence"]))
    cols = [
        ("#", lambda r: str(r["rank"])),
        ("agent", lambda r: r["agent"]),
        ("spec", lambda r: r["spec"]),
        ("points/hand", lambda r: _interval(r["points_per_hand"])),
        (f"{conf}% interval", lambda r: _bounds(r["points_per_hand"])),
        ("moons made", lambda r: _pct(r["moons_made_per_hand"])),
        ("moons suffered", lambda r: _pct(r["moons_suffered_per_hand"])),
        ("0-point hands", lambda r: _pct(r["zero_point_share"])),
    ]
    if result.meta["episode"] == "game":
        cols.append(("win rate", lambda r: _interval(r["win_rate"], 3)))
        cols.append(("game score", lambda r: _num(r["mean_game_score"], 1)))
    if any(r["rating"] for r in result.leaderboard):
        cols.append(("rating", lambda r: _num(r["rating"]["ordinal"], 1) if r["rating"] else "-"))
    cols.append((f"deals for ±{result.meta['target_half_width']:g}", lambda r: str(r["deals_needed"] or "-")))
    cols.append(("hands", lambda r: str(r["hands"])))
    return cols


def _pair_columns(result: ArenaResult) -> list[tuple[str, callable]]:
    conf = int(round(100 * result.meta["confidence"]))
    return [
        ("a − b", lambda p: f"{p['a']} − {p['b']}"),
        ("difference", lambda p: _interval(p["difference"])),
        (f"{conf}% interval", lambda p: _bounds(p["difference"])),
        ("p", lambda p: _num(p["difference"].get("p_value"), 3)),
        ("verdict", _verdict),
        ("over", lambda p: p["over"]),
        (f"deals for ±{result.meta['target_half_width']:g}", lambda p: str(p["deals_needed"] or "-")),
    ]


def describe_run(result: ArenaResult) -> str:
    m = result.meta
    deal_source = m["deal_set_file"] or f"generated from seed {m['deal_set_seed']}"
    speed = f"{m['seconds']:.1f} s"
    if m.get("deals_per_s"):
        speed += f", {m['deals_per_s']:,.0f} deals/s"
    return (
        f"{m['format']} · rules {m['rules_name']!r} · {m['episode']} episodes · {m['deals']} deals "
        f"({deal_source}) × {m['seatings_per_deal']} seatings ({m['seating']}) × {len(m['tables'])} table(s) · "
        f"arena seed {m['arena_seed']} · hearts-lab {m['hearts_lab_version']} · {speed} "
        f"({m['workers']} worker{'s' if m['workers'] != 1 else ''})"
    )


def print_terminal(result: ArenaResult, file=None) -> None:
    """The leaderboard and the paired differences as rich tables (plain text when not a terminal)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, width=None if file is None else 160)
    if not console.is_terminal:
        console = Console(file=file, width=160, color_system=None)
    board = Table(title="Leaderboard (penalty points per hand, lower is better)", title_justify="left")
    for name, _ in _columns(result):
        board.add_column(name, justify="left" if name in ("agent", "spec") else "right")
    for row in result.leaderboard:
        board.add_row(*[f(row) for _, f in _columns(result)])
    console.print(board)
    if result.summary["pairs"]:
        pairs = Table(title="Paired differences over the same deals (a − b; negative: a took fewer points)",
                      title_justify="left")
        for name, _ in _pair_columns(result):
            pairs.add_column(name, justify="left" if name in ("a − b", "verdict", "over") else "right")
        for pair in result.summary["pairs"]:
            pairs.add_row(*[f(pair) for _, f in _pair_columns(result)])
        console.print(pairs)
    console.print(describe_run(result), highlight=False)


def to_markdown(result: ArenaResult) -> str:
    lines = ["# Arena results", "", describe_run(result), ""]
    if result.meta.get("command"):
        lines += [f"Reproduce: `{result.meta['command']}`", ""]
    cols = _columns(result)
    lines.append("| " + " | ".join(n for n, _ in cols) + " |")
    lines.append("| " + " | ".join("---" if n in ("agent", "spec") else "---:" for n, _ in cols) + " |")
    for row in result.leaderboard:
        lines.append("| " + " | ".join(f(row).replace("|", "\\|") for _, f in cols) + " |")
    if result.summary["pairs"]:
        lines += ["", "## Paired differences (a − b, per deal, over the same deals)", ""]
        cols = _pair_columns(result)
        lines.append("| " + " | ".join(n for n, _ in cols) + " |")
        lines.append("| " + " | ".join("---:" if n in ("difference", "p") else "---" for n, _ in cols) + " |")
        for pair in result.summary["pairs"]:
            lines.append("| " + " | ".join(f(pair) for _, f in cols) + " |")
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
    """A PNG of each agent's mean points per hand with its interval (Agg backend, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.leaderboard
    labels = [r["agent"] for r in rows]
    means = [r["points_per_hand"]["mean"] for r in rows]
    lows = [r["points_per_hand"]["low"] for r in rows]
    highs = [r["points_per_hand"]["high"] for r in rows]
    err = [[m - (lo if lo is not None else m) for m, lo in zip(means, lows)],
           [(hi if hi is not None else m) - m for m, hi in zip(means, highs)]]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.5 * len(rows)))
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
    plt.close(fig)
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
