"""The evaluation arena: agents play fixed duplicate deals under every seating, batched.

Formats (each a list of *tables*: a line-up of agents, one per seat, over the same deals):

* **head-to-head** (``head_to_head``): a candidate against copies of one opponent in the other
  seats, the standard benchmark; several candidates each get their own table, on the same deals.
* **mixed table** (``mixed_table``): up to four different agents at one table.
* **round-robin** (``round_robin``): a pool of agents; with more agents than seats every
  combination of seats is a table (a leaderboard with an OpenSkill rating over the tables played
  plus mean points); with fewer agents than seats every ordered pair plays head-to-head.

Every table replays every deal of a :class:`~eval.deals.DealSet` under each *seating*: with
``seating="rotate"`` (default) the line-up is rotated round the table, so each agent sits in each
seat with the same cards; ``seating="permute"`` uses every permutation of the seats (24 with
four players), which also balances who passes to whom. Episodes are one hand (``episode="hand"``)
or a whole game to the target score (``episode="game"``).

How it runs: the deals are cut into chunks of ``chunk_deals`` (a fixed size, independent of the
number of workers); a *unit* is one table on one chunk, i.e. ``chunk_deals x seatings`` games
stepped as one batch on the engine. At each step the games are grouped by the agent sitting at
the seat to act, and each agent is called once on its rows. Units run in ``workers`` processes;
each unit builds its agents from their spec strings with a seed derived from the arena seed, the
table and the chunk, so the results are identical whatever the number of workers. The plan and the
unit a worker plays are ``eval.units``'s; the Ray backend (``backend="ray"``) is ``eval.cluster``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import multiprocessing
import sys
import time
import zipfile
import zlib
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from tqdm import tqdm

from agents import AgentSpecError  # re-exported: a spec agents.make refuses
from agents.base import sha256_file, spec_files
import hearts_env
from hearts_env import atomic_files
from hearts_env.rules import Rules

from . import cluster
from .deals import DealSet, DealSetError
from .summary import summarize  # re-exported: the summary of a run's games
from .units import (EPISODES, FORMATS, SEATINGS, ArenaError, Entrant, Games, Plan, agent_seed, init_worker,
                    play_unit, resolve_agent, run_unit, set_job, unit_layout)

#: Deals per unit of work. Part of what determines the results (agents are seeded per chunk).
CHUNK_DEALS = 256
#: Round-robin pools with more tables than this play a seeded sample of the tables.
MAX_TABLES = 100


# ---------------------------------------------------------------------------------------------
# Plans: which entrants, which tables (Plan, Entrant: eval.units)
# ---------------------------------------------------------------------------------------------


def make_entrants(agents: Iterable[Any]) -> list[Entrant]:
    """Entrants from specs, agents, callables or ``(label, spec)`` pairs; repeated labels get ``#2``, ..."""
    out: list[Entrant] = []
    seen: dict[str, int] = {}
    for item in agents:
        if isinstance(item, Entrant):
            label, spec = item.label, item.spec
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            label, spec = item
        else:
            spec = item
            label = Entrant("", item).name
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        out.append(Entrant(label, spec))
    return out


# ---------------------------------------------------------------------------------------------
# Plans: which tables, which seatings
# ---------------------------------------------------------------------------------------------


def head_to_head_plan(rules: Rules, candidates: Sequence[Any], opponent: Any, **kw) -> Plan:
    """Each candidate against ``num_players - 1`` copies of ``opponent`` (one table per candidate)."""
    if not candidates:
        raise ArenaError("head-to-head needs at least one candidate agent")
    entrants = make_entrants([*candidates, opponent])
    opp = len(entrants) - 1
    tables = tuple((c,) + (opp,) * (rules.num_players - 1) for c in range(len(candidates)))
    return Plan(rules, "head2head", tuple(entrants), tables, **kw)


def table_plan(rules: Rules, line_up: Sequence[Any], fill: Any = None, **kw) -> Plan:
    """One table of different agents (``fill`` takes the seats left over)."""
    p = rules.num_players
    items = list(line_up)
    if len(items) > p or (len(items) < p and fill is None):
        raise ArenaError(
            f"a table of the {rules.name!r} rules seats {p} agents, got {len(items)}"
            + ("" if len(items) > p else " (name more agents, or an opponent to fill the other seats)")
        )
    entrants = make_entrants(items + ([fill] if len(items) < p else []))
    slots = list(range(len(items))) + [len(items)] * (p - len(items))
    return Plan(rules, "table", tuple(entrants), (tuple(slots),), **kw)


def round_robin_plan(rules: Rules, pool: Sequence[Any], seed: int = 0, max_tables: int = MAX_TABLES,
                     **kw) -> Plan:
    """Every combination of ``num_players`` pool agents is a table; a smaller pool plays every
    ordered pair head-to-head. More than ``max_tables`` tables: a seeded sample of them."""
    p = rules.num_players
    entrants = make_entrants(pool)
    k = len(entrants)
    if k < 2:
        raise ArenaError(f"a round-robin needs at least two agents, got {k}")
    if k >= p:
        tables = list(itertools.combinations(range(k), p))
    else:
        tables = [(a,) + (b,) * (p - 1) for a in range(k) for b in range(k) if a != b]
    if len(tables) > max_tables:
        rng = np.random.default_rng([seed % (1 << 32), 0x7AB1E5])
        keep = np.sort(rng.choice(len(tables), size=max_tables, replace=False))
        tables = [tables[i] for i in keep]
    return Plan(rules, "roundrobin", tuple(entrants), tuple(tuple(t) for t in tables), **kw)


# ---------------------------------------------------------------------------------------------
# Finished units on disk (``units_dir``): an interrupted run resumes from them
# ---------------------------------------------------------------------------------------------

#: Keys of ``ArenaResult.meta`` that say how a run went (backend, workers, timings), not what it found.
RUN_KEYS = ("workers", "seconds", "deals_per_s", "hands_per_s", "games_per_s", "backend",
            "units", "units_played", "units_loaded", "units_per_worker", "command")
UNIT_FIELDS = tuple(f.name for f in dataclasses.fields(Games))


def plan_hash(plan: Plan, deals: DealSet, seed: int, chunk_deals: int, record: bool) -> str:
    """What determines every unit's result: rules, line-ups, specs (and the content of their
    files), seatings, the deals, the arena seed, the chunk size and whether records are kept."""
    h = hashlib.sha256()
    h.update(json.dumps({
        "rules": plan.rules.to_dict(), "format": plan.format, "episode": plan.episode, "seating": plan.seating,
        "agents": [[e.label, e.spec_text, [sha256_file(f) for f in spec_files(e.spec) if Path(f).is_file()]]
                   for e in plan.entrants],
        "tables": plan.tables, "seed": int(seed), "chunk_deals": int(chunk_deals), "record": bool(record),
        "version": hearts_env.__version__,
    }, sort_keys=True, default=str).encode())
    h.update(np.ascontiguousarray(deals.seeds).tobytes())
    h.update(np.ascontiguousarray(deals.hand_numbers).tobytes())
    return h.hexdigest()


class UnitStore:
    """A folder of finished units: ``manifest.json`` (the plan's hash) and one
    ``unit_t<table>_c<chunk>.npz`` per unit (the per-game arrays, and the game records if kept).
    Each file is written whole (to a temporary name, then renamed), so an interrupted run leaves
    only complete units; a rerun of the same plan loads them instead of playing them again."""

    def __init__(self, folder: str | Path, digest: str, description: dict):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        manifest = self.folder / "manifest.json"
        if manifest.is_file():
            try:
                found = json.loads(manifest.read_text()).get("plan_hash")
            except (OSError, ValueError):
                found = None
            if found != digest:
                raise ArenaError(
                    f"--resume-dir {self.folder} holds the units of another arena run (other agents, deals, "
                    "seed or options); name a new folder, or delete this one to start again"
                )
        else:
            manifest.write_text(json.dumps({"plan_hash": digest, **description}, indent=1, default=str))

    def path(self, table: int, chunk: int) -> Path:
        return self.folder / f"unit_t{table:04d}_c{chunk:05d}.npz"

    def load(self, table: int, chunk: int, layout: dict[str, np.ndarray],
             record: bool) -> tuple[Games, list[dict]] | None:
        """The unit's games and records as saved, or None to play it again: no file, or a damaged one
        (unreadable, or not the games ``layout`` says: ``units.unit_layout``; records kept or not as
        ``record`` says)."""
        path = self.path(table, chunk)
        if path.exists() and not path.is_file():  # (a unit played again could not be saved over it)
            raise ArenaError(f"--resume-dir {self.folder}: {path.name} is not a file; remove it to play that unit "
                             "again")
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                games = Games(**{name: data[name] for name in UNIT_FIELDS})
                records = json.loads(str(data["records"]))
        except (OSError, ValueError, KeyError, EOFError, RecursionError, zipfile.BadZipFile, zlib.error):
            return None  # a damaged file: the unit is played again
        wanted = len(layout["deal"]) if record else 0
        if not (games.fits(layout) and isinstance(records, list) and len(records) == wanted):
            return None
        return games, records

    def save(self, table: int, chunk: int, games: Games, records: list[dict]) -> None:
        path = self.path(table, chunk)
        atomic_files.write_stream(path, partial(np.savez, records=np.array(json.dumps(records)),
                                                **{name: getattr(games, name) for name in UNIT_FIELDS}))


@dataclasses.dataclass
class ArenaResult:
    """What an arena run produced: metadata to reproduce it, per-game arrays and the summary."""

    plan: Plan
    meta: dict
    games: Games
    summary: dict

    def to_dict(self) -> dict:
        return {"meta": self.meta, **self.summary}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @property
    def leaderboard(self) -> list[dict]:
        return self.summary["leaderboard"]

    def row(self, label: str) -> dict:
        for row in self.leaderboard:
            if row["agent"] == label:
                return row
        raise KeyError(f"no agent {label!r} in the results; agents: {[r['agent'] for r in self.leaderboard]}")

    def pair(self, a: str, b: str) -> dict:
        """The paired difference ``a - b`` (the stored pair is flipped when needed)."""
        for pair in self.summary["pairs"]:
            if (pair["a"], pair["b"]) == (a, b):
                return pair
            if (pair["a"], pair["b"]) == (b, a):
                d = pair["difference"]
                flipped = {**d, "mean": -d["mean"], "low": -d["high"], "high": -d["low"]}
                return {**pair, "a": a, "b": b, "difference": flipped}
        raise KeyError(f"no pair {a!r}, {b!r}")


def run(
    plan: Plan,
    deals: DealSet | int = 1000,
    seed: int = 0,
    workers: int = 2,
    records: str | Path | None = None,
    progress: bool = False,
    half_width: float = 0.1,
    confidence: float = 0.95,
    chunk_deals: int = CHUNK_DEALS,
    deal_set_path: str | None = None,
    backend: str = "local",
    address: str | None = None,
    units_dir: str | Path | None = None,
) -> ArenaResult:
    """Play ``plan`` on ``deals`` (a deal set, or a number of deals generated from ``seed``).

    ``records`` names a JSON-lines file to write every game to (a header line first).
    ``half_width`` is the interval half-width (points per hand) for which ``deals_needed`` is reported.
    ``backend``: ``"local"`` (``workers`` processes on this machine) or ``"ray"`` (the units as Ray
    tasks, :mod:`eval.cluster`; ``address`` of the cluster, else ``RAY_ADDRESS``, else a local Ray
    with ``workers`` CPUs). The results do not depend on the backend or the number of workers.
    ``units_dir``: a folder to keep each finished unit in; a rerun of the same plan there loads the
    finished units instead of playing them (resuming an interrupted run).
    """
    if backend not in BACKENDS:
        raise ArenaError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if isinstance(deals, (int, np.integer)):
        deals = DealSet.generate(plan.rules, int(deals), seed)
    elif not deals.rules.same_game(plan.rules):
        raise DealSetError(
            f"the deal set was made for rules {deals.rules.name!r}, but the arena runs rules "
            f"{plan.rules.name!r} ({deals.rules.differences(plan.rules)})"
        )
    if chunk_deals < 1:
        raise ArenaError(f"chunk_deals must be at least 1, got {chunk_deals}")
    if backend == "ray":
        bad = [e.label for e in plan.entrants if not isinstance(e.spec, str)]
        if bad:
            raise ArenaError(f"the ray backend ships agents as spec strings; {', '.join(bad)} is an agent object or "
                             "callable (save it as FILE.py:NAME, or use the local backend)")
    for entrant in plan.entrants:  # fail fast, in this process, on a bad spec
        resolve_agent(entrant.spec, 0, plan.rules)
    n = len(deals)
    starts = list(range(0, n, chunk_deals))
    units = [(t, c, a, min(a + chunk_deals, n)) for t in range(len(plan.tables)) for c, a in enumerate(starts)]
    job = {"plan": plan, "deals": deals, "seed": int(seed), "record": records is not None}
    workers = max(1, int(workers))

    meta = _meta(plan, deals, seed, chunk_deals, deal_set_path, half_width, confidence)
    store = None
    done: dict[int, tuple[Games, list[dict]]] = {}
    if units_dir is not None:
        digest = plan_hash(plan, deals, seed, chunk_deals, records is not None)
        store = UnitStore(units_dir, digest, {"agents": meta["agents"], "tables": meta["tables"],
                                              "deals": n, "arena_seed": int(seed), "chunk_deals": chunk_deals})
        for i, (t, c, a, b) in enumerate(units):
            found = store.load(t, c, unit_layout(plan, t, a, b), records is not None)
            if found is not None:
                done[i] = found
    todo = [i for i in range(len(units)) if i not in done]

    record_file = None
    if records is not None:
        Path(records).parent.mkdir(parents=True, exist_ok=True)
        record_file = open(records, "w")
        record_file.write(json.dumps({"type": "header", **meta}) + "\n")

    seatings = meta["seatings_per_deal"]  # the bar counts games, the unit of the summary line
    bar = _progress_bar(progress, total=n * seatings * len(plan.tables), unit="game")
    if bar:
        bar.update(sum((units[i][3] - units[i][2]) * seatings for i in done))
        bar.set_postfix_str(f"units {len(done)}/{len(units)}")
    results: dict[int, tuple[Games, list[dict]]] = dict(done)
    per_worker: dict[str, int] = {}
    written = 0  # game records go out in unit order, whatever order the units finish in
    started = time.perf_counter()
    finished = _play_units(backend, job, units, todo, workers, address)
    try:
        for i, games, game_records, worker in finished:
            results[i] = (games, game_records)
            per_worker[worker] = per_worker.get(worker, 0) + 1
            if store is not None:
                store.save(units[i][0], units[i][1], games, game_records)
            if record_file:
                while written in results:
                    for record in results[written][1]:
                        record_file.write(json.dumps(record) + "\n")
                    written += 1
            if bar:
                bar.update((units[i][3] - units[i][2]) * seatings)
                bar.set_postfix_str(f"units {len(results)}/{len(units)}")
        if record_file:
            while written in results:
                for record in results[written][1]:
                    record_file.write(json.dumps(record) + "\n")
                written += 1
    finally:
        finished.close()  # stops the worker processes (or cancels the Ray tasks) on an error or Ctrl-C
        if bar:
            bar.close()
        if record_file:
            record_file.close()
    elapsed = time.perf_counter() - started
    games = Games.concatenate([results[i][0] for i in range(len(units))])
    meta.update(_speed(games, n, elapsed, min(workers, max(1, len(todo))) if backend == "local" else workers))
    meta.update({"backend": backend, "units": len(units), "units_played": len(todo), "units_loaded": len(done),
                 "units_per_worker": dict(sorted(per_worker.items())),
                 "games_per_s": (sum(len(results[i][0]) for i in todo) / elapsed) if elapsed > 0 else None})
    summary = summarize(plan, games, n, half_width, confidence)
    return ArenaResult(plan=plan, meta=meta, games=games, summary=summary)


BACKENDS = ("local", "ray")


def _play_units(backend: str, job: dict, units: list, todo: list[int], workers: int, address: str | None):
    """``(unit index, games, records, worker)`` for each unit of ``todo``, as they finish."""
    if not todo:
        return
    if backend == "ray":
        yield from cluster.play_units(job, units, todo, workers, address)
        return
    workers = max(1, min(workers, len(todo)))
    if workers == 1:
        set_job(job)  # in this process: its torch thread count is the caller's to keep
        for i in todo:
            yield (i, *run_unit(units[i]))
        return
    # fork: workers inherit the plan (agent objects and callables included) without pickling
    fork = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if fork else None)
    pool = context.Pool(workers, initializer=init_worker, initargs=(job,))
    try:
        for i, result in zip(todo, pool.imap(run_unit, [units[i] for i in todo])):
            yield (i, *result)
    finally:
        pool.terminate()
        pool.join()


def _progress_bar(enabled: bool, total: int, unit: str):
    if not enabled:
        return None
    return tqdm(total=total, unit=unit, file=sys.stderr, desc="arena", dynamic_ncols=True)


def _meta(plan: Plan, deals: DealSet, seed: int, chunk_deals: int, path: str | None, half_width: float,
          confidence: float) -> dict:
    return {
        "hearts_lab_version": hearts_env.__version__,
        "format": plan.format,
        "episode": plan.episode,
        "seating": plan.seating,
        "seatings_per_deal": int(plan.seat_of_slot().shape[0]),
        "rules": plan.rules.to_dict(),
        "rules_name": plan.rules.name,
        "deals": len(deals),
        "deal_set_seed": int(deals.seed),
        "deal_set_file": path,
        "arena_seed": int(seed),
        "chunk_deals": int(chunk_deals),
        "agents": [{"label": e.label, "spec": e.spec_text} for e in plan.entrants],
        "tables": [plan.table_labels(t) for t in range(len(plan.tables))],
        "confidence": confidence,
        "target_half_width": half_width,
    }


def _speed(games: Games, n_deals: int, elapsed: float, workers: int) -> dict:
    hands = int(games.hands.sum())
    return {
        "workers": workers,
        "seconds": round(elapsed, 3),
        "games": len(games),
        "hands": hands,
        "deals_per_s": n_deals / elapsed if elapsed > 0 else None,
        "hands_per_s": hands / elapsed if elapsed > 0 else None,
    }


# ---------------------------------------------------------------------------------------------
# The formats as functions
# ---------------------------------------------------------------------------------------------


def _plan_kw(kw: dict) -> tuple[dict, dict]:
    plan_keys = {"episode", "seating"}
    return {k: v for k, v in kw.items() if k in plan_keys}, {k: v for k, v in kw.items() if k not in plan_keys}


def head_to_head(candidate: Any | Sequence[Any], opponent: Any = "random", rules: Rules | None = None,
                 **kw) -> ArenaResult:
    """The standard benchmark: ``candidate`` (or each of a list) against copies of ``opponent``.

    An agent is a spec string, an agent object, a callable ``f(observation, action_mask)`` or a
    ``(label, agent)`` tuple; only a *list* means several candidates.

    Keyword arguments: ``deals``, ``seed``, ``workers``, ``episode``, ``seating``, ``records``,
    ``progress``, ``half_width`` (see :func:`run`).
    """
    rules = rules or Rules.preset("classic")
    candidates = list(candidate) if isinstance(candidate, list) else [candidate]
    plan_kw, run_kw = _plan_kw(kw)
    return run(head_to_head_plan(rules, candidates, opponent, **plan_kw), **run_kw)


def mixed_table(line_up: Sequence[Any], rules: Rules | None = None, fill: Any = None, **kw) -> ArenaResult:
    """Up to ``num_players`` different agents at one table, every seating (``fill`` takes empty seats)."""
    rules = rules or Rules.preset("classic")
    plan_kw, run_kw = _plan_kw(kw)
    return run(table_plan(rules, line_up, fill, **plan_kw), **run_kw)


def round_robin(pool: Sequence[Any], rules: Rules | None = None, **kw) -> ArenaResult:
    """A pool of agents, every table of them (or every ordered pair head-to-head), with a leaderboard."""
    rules = rules or Rules.preset("classic")
    plan_kw, run_kw = _plan_kw(kw)
    return run(round_robin_plan(rules, pool, seed=run_kw.get("seed", 0), **plan_kw), **run_kw)


def head_to_heads(agent: Any, opponents: Sequence[Any], rules: Rules, **kw) -> dict[str, dict[str, float]]:
    """``{opponent: {"mean", "low", "high"}}``: points per hand of ``agent`` against three copies of
    each opponent, one head-to-head each (keyword arguments as :func:`head_to_head`)."""
    out = {}
    for opponent in opponents:
        points = head_to_head(("candidate", agent), opponent, rules, **kw).row("candidate")["points_per_hand"]
        out[opponent] = {key: float(points[key]) for key in ("mean", "low", "high")}
    return out


def training_evaluation(agent: Any, config: Any) -> dict[str, float]:
    """Points per hand of ``agent`` against three copies of each of a training config's
    ``eval_opponents``, on ``eval_deals`` deals (what ``train.ppo.Run`` logs as ``eval/``)."""
    found = head_to_heads(agent, config.eval_opponents, config.rules_value, deals=config.eval_deals,
                          seed=config.seed, workers=1, progress=False)
    return {opponent: points["mean"] for opponent, points in found.items()}


__all__ = [
    "AgentSpecError", "ArenaError", "ArenaResult", "CHUNK_DEALS", "Entrant", "Games", "Plan", "head_to_head",
    "head_to_head_plan", "head_to_heads", "mixed_table", "make_entrants", "resolve_agent", "round_robin",
    "round_robin_plan", "run", "summarize", "table_plan", "training_evaluation", "BACKENDS", "RUN_KEYS",
    "UnitStore", "plan_hash",
    # from eval.units, where the unit a worker plays is defined
    "EPISODES", "FORMATS", "SEATINGS", "agent_seed", "play_unit",
]
