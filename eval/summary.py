"""The summary of an arena run: leaderboard rows and paired differences, with intervals over deals.

:func:`summarize` turns the per-game arrays of a run (:class:`~eval.units.Games`) into what
``ArenaResult.summary`` holds: a row per entrant (points per hand, moons, zero-point hands, win
rate and game score in game episodes; an OpenSkill rating in a round-robin), ranked by points per
hand, and the paired difference of every two entrants over the tables they shared. Each mean is
over deals (a deal's seatings averaged first), so its interval is over independent samples
(:mod:`eval.stats`).
"""

from __future__ import annotations

import itertools

import numpy as np
from openskill.models import PlackettLuce

from . import stats
from .units import Games, Plan


def _per_seat(games: Games, entrant: int, tables: np.ndarray | None, value: np.ndarray, n_deals: int):
    """Per-deal mean of ``value[G, P]`` over the seats where ``entrant`` sat (optionally only some tables)."""
    where = games.entrant == entrant
    if tables is not None:
        where &= np.isin(games.table, tables)[:, None]
    game_rows, _ = where.nonzero()
    return stats.per_deal_means(games.deal[game_rows], value[where], n_deals)


def summarize(plan: Plan, games: Games, n_deals: int, half_width: float = 0.1,
              confidence: float = 0.95) -> dict:
    """Leaderboard rows and paired differences, all with intervals over deals."""
    per_hand = games.points / games.hands[:, None]
    hands = games.hands[:, None].astype(np.float64)
    won = (games.winner[:, None] == np.arange(games.points.shape[1])[None, :]).astype(np.float64)
    is_game = plan.episode == "game"
    rating = _ratings(plan, games, per_hand, n_deals) if plan.format == "roundrobin" else None

    rows = []
    for e, entrant in enumerate(plan.entrants):
        means, present = _per_seat(games, e, None, per_hand, n_deals)
        if not present.any():
            continue
        where = games.entrant == e
        interval = stats.t_interval(means[present], confidence)
        row = {
            "agent": entrant.label,
            "spec": entrant.spec_text,
            "games": int(where.sum()),
            "hands": int((where * games.hands[:, None]).sum()),
            "points_per_hand": interval.to_dict(),
            "deals_needed": stats.deals_needed(interval.sd, half_width, confidence),
            "moons_made_per_hand": float(games.moons_made[where].sum() / (where * hands).sum()),
            "moons_suffered_per_hand": float(games.moons_suffered[where].sum() / (where * hands).sum()),
            "zero_point_share": float(games.zero_hands[where].sum() / (where * hands).sum()),
            "win_rate": None,
            "mean_game_score": None,
            "rating": None,
        }
        if is_game:
            wins, _ = _per_seat(games, e, None, won, n_deals)
            row["win_rate"] = stats.t_interval(wins[present], confidence).to_dict()
            row["mean_game_score"] = float(games.points[where].mean())
        if rating is not None:
            row["rating"] = rating[e]
        rows.append(row)
    # Ranked by the headline metric whatever the format; a round-robin's rating is a column beside it.
    rows.sort(key=lambda r: r["points_per_hand"]["mean"])
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank

    pairs = []
    table_sets = [set(t) for t in plan.tables]
    for a, b in itertools.combinations(range(len(plan.entrants)), 2):
        shared = np.array([t for t, members in enumerate(table_sets) if a in members and b in members])
        tables = shared if shared.size else None
        ma, pa = _per_seat(games, a, tables, per_hand, n_deals)
        mb, pb = _per_seat(games, b, tables, per_hand, n_deals)
        both = pa & pb
        if not both.any():
            continue
        diff = stats.paired_interval(ma[both], mb[both], confidence)
        pairs.append({
            "a": plan.entrants[a].label,
            "b": plan.entrants[b].label,
            "over": "shared tables" if shared.size else "all tables",
            "tables": (shared if shared.size else np.arange(len(plan.tables))).tolist(),
            "difference": diff.to_dict(),
            "deals_needed": stats.deals_needed(diff.sd, half_width, confidence),
        })
    return {"leaderboard": rows, "pairs": pairs, "ranked_by": "points_per_hand"}


def _ratings(plan: Plan, games: Games, per_hand: np.ndarray, n_deals: int) -> dict[int, dict]:
    """OpenSkill (Plackett-Luce) ratings: one match per table and deal, ranked by the agents'
    points per hand averaged over the deal's seatings (ties share a rank). Deal-major order."""
    model = PlackettLuce()
    ratings = {e: model.rating(name=plan.entrants[e].label) for e in range(len(plan.entrants))}
    t_count = len(plan.tables)
    # means[t, e, d]: points per hand of entrant e at table t on deal d
    means = np.full((t_count, len(plan.entrants), n_deals), np.nan)
    for t in range(t_count):
        for e in set(plan.tables[t]):
            m, present = _per_seat(games, e, np.array([t]), per_hand, n_deals)
            means[t, e, present] = m[present]
    for d in range(n_deals):
        for t in range(t_count):
            members = sorted(set(plan.tables[t]))
            values = means[t, members, d]
            if np.isnan(values).any():
                continue
            ranks = [int((values < v).sum()) + 1 for v in values]  # lower points, better rank
            updated = model.rate([[ratings[e]] for e in members], ranks=ranks)
            for e, team in zip(members, updated):
                ratings[e] = team[0]
    return {e: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for e, r in ratings.items()}
