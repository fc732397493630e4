"""One unit of arena work: what a local worker process or a Ray task plays.

A *plan* (:class:`Plan`) says what to play: the entrants (:class:`Entrant`: a label and a spec), the
tables (a line-up of entrants) and the seatings. A *unit* is one table on one chunk of deals under
every seating, stepped as one batch on the engine (:func:`play_unit`); each unit builds its agents
from their specs with a seed derived from the arena seed, the table and the chunk (:func:`agent_seed`),
so the results are identical whatever the number of workers or the backend.

A worker process plays the units of one *job* (:func:`set_job`, or :func:`init_worker` in a forked
process): :func:`run_unit` plays one. The arena (``eval.arena``) runs them in local processes, the Ray
backend (``eval.cluster``) as tasks on a cluster.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import socket
import sys
from typing import Any, Sequence

import numpy as np

from agents import make as make_agent
from hearts_env import engine, loop
from hearts_env.records import scored_hand
from hearts_env.rules import Rules

from .deals import DealSet

FORMATS = ("head2head", "table", "roundrobin")
EPISODES = ("hand", "game")
SEATINGS = ("rotate", "permute")


class ArenaError(ValueError):
    """A problem with what the arena was asked to do, in one line for the user."""


# ---------------------------------------------------------------------------------------------
# Agents and plans
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Entrant:
    """One agent of a line-up: its label in the results and its spec (or agent object)."""

    label: str
    spec: Any

    @property
    def spec_text(self) -> str:
        """The spec string, or ``<name>`` for an agent object or callable (not a spec to type)."""
        return self.spec if isinstance(self.spec, str) else f"<{self.name}>"

    @property
    def name(self) -> str:
        """The default label: the spec string (``my_bots.py:LowestCard`` too), else the object's
        ``name``, a function's ``__name__`` or the class name, so ``result.row(name)`` finds it."""
        if isinstance(self.spec, str):
            return self.spec.strip()
        return str(getattr(self.spec, "name", None) or getattr(self.spec, "__name__", None)
                   or type(self.spec).__name__)


def resolve_agent(spec: Any, seed: int | None = None, rules: Rules | None = None):
    """An agent from a spec string (seeded), an agent object or a callable: :func:`agents.make`,
    which owns every spec and raises :class:`AgentSpecError` in one line."""
    return make_agent(spec, seed=seed, rules=rules)


def agent_seed(arena_seed: int, table: int, chunk: int, entrant: int) -> int:
    """The seed of an entrant's agent in one unit: a pure function of where it plays."""
    words = [arena_seed % (1 << 64) & 0xFFFFFFFF, arena_seed % (1 << 64) >> 32, table, chunk, entrant]
    return int(np.random.SeedSequence(words).generate_state(2, dtype=np.uint64)[0] >> np.uint64(1))


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to play: the entrants, the tables (entrant index per line-up slot) and how to seat them."""

    rules: Rules
    format: str
    entrants: tuple[Entrant, ...]
    tables: tuple[tuple[int, ...], ...]
    episode: str = "hand"
    seating: str = "rotate"

    def __post_init__(self):
        p = self.rules.num_players
        if self.episode not in EPISODES:
            raise ArenaError(f"episode must be one of {', '.join(EPISODES)}, got {self.episode!r}")
        if self.seating not in SEATINGS:
            raise ArenaError(f"seating must be one of {', '.join(SEATINGS)}, got {self.seating!r}")
        if not self.tables:
            raise ArenaError("nothing to play: no tables")
        for table in self.tables:
            if len(table) != p:
                raise ArenaError(f"a table of the {self.rules.name!r} rules seats {p} agents, got {len(table)}")

    def seat_of_slot(self) -> np.ndarray:
        """``[S, P]``: the seat of each line-up slot under each seating."""
        p = self.rules.num_players
        if self.seating == "rotate":
            return (np.arange(p)[None, :] + np.arange(p)[:, None]) % p
        return np.array(list(itertools.permutations(range(p))), dtype=np.int64)

    def entrant_at_seat(self, table: int) -> np.ndarray:
        """``[S, P]``: the entrant sitting at each seat under each seating of one table."""
        order = self.seat_of_slot()
        out = np.empty_like(order)
        rows = np.arange(order.shape[0])[:, None]
        out[rows, order] = np.asarray(self.tables[table])[None, :]
        return out

    def table_labels(self, table: int) -> list[str]:
        return [self.entrants[e].label for e in self.tables[table]]


# ---------------------------------------------------------------------------------------------
# Playing one unit: one table on one chunk of deals, every seating, as one batch
# ---------------------------------------------------------------------------------------------


#: The fields of :class:`Games` with one value per seat (``[G, P]``); the others have one per game.
SEAT_FIELDS = ("entrant", "points", "moons_made", "moons_suffered", "zero_hands")


@dataclasses.dataclass
class Games:
    """Per-game results (one row per game = deal x table x seating), seat-indexed ``[G, P]``."""

    deal: np.ndarray  # [G] index into the deal set
    table: np.ndarray  # [G]
    seating: np.ndarray  # [G]
    entrant: np.ndarray  # [G, P] entrant at each seat
    points: np.ndarray  # [G, P] penalty points over the episode (the final score in game mode)
    hands: np.ndarray  # [G] hands played
    moons_made: np.ndarray  # [G, P] hands in which this seat shot the moon
    moons_suffered: np.ndarray  # [G, P] hands in which another seat shot the moon
    zero_hands: np.ndarray  # [G, P] hands in which this seat scored no penalty points (<= 0)
    winner: np.ndarray  # [G] winning seat of the game (-1 in hand episodes)

    def fits(self, layout: dict[str, np.ndarray]) -> bool:
        """Whether these games (read from a file) are the unit ``layout`` (:func:`unit_layout`) says:
        its very games, and every other array whole numbers of its field's shape, ``[G]`` or ``[G, P]``."""
        games, players = layout["entrant"].shape
        for field in dataclasses.fields(self):
            array = getattr(self, field.name)
            if field.name in layout:
                if not (array.shape == layout[field.name].shape and np.array_equal(array, layout[field.name])):
                    return False
            elif array.shape != ((games, players) if field.name in SEAT_FIELDS else (games,)) \
                    or array.dtype.kind not in "iu":
                return False
        return True

    @classmethod
    def concatenate(cls, parts: list["Games"]) -> "Games":
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in names})

    def __len__(self) -> int:
        return int(self.deal.shape[0])


def unit_layout(plan: Plan, table: int, start: int, stop: int) -> dict[str, np.ndarray]:
    """Which games a unit (deals ``start:stop`` at ``table``, under every seating) plays, in its order:
    the ``deal``, ``table``, ``seating`` ([G]) and ``entrant`` ([G, P]) arrays of its :class:`Games`."""
    seat_entrant = plan.entrant_at_seat(table)  # [S, P]
    s = seat_entrant.shape[0]
    seating = np.tile(np.arange(s), stop - start)
    return {"deal": np.repeat(np.arange(start, stop), s), "table": np.full(len(seating), table, dtype=np.int64),
            "seating": seating, "entrant": seat_entrant[seating]}


def play_unit(plan: Plan, deals: DealSet, start: int, stop: int, table: int, chunk: int, seed: int,
              record: bool = False, specs: Sequence[Any] | None = None) -> tuple[Games, list[dict]]:
    """Play deals ``start:stop`` at one table under every seating; one batch on the engine.

    ``specs`` (one per entrant) builds the agents instead of the entrants' own specs: a cluster
    worker's copy of a file names it by a local path; labels and records keep the user's specs."""
    rules = plan.rules
    p = rules.num_players
    layout = unit_layout(plan, table, start, stop)
    deal_index, seating, entrant = layout["deal"], layout["seating"], layout["entrant"]  # [G], [G], [G, P]
    g = len(deal_index)
    state = engine.init_from_seeds(
        rules, deals.seeds[deal_index], deals.hand_numbers[deal_index], single_hand=plan.episode == "hand"
    )
    playing = sorted(set(plan.tables[table]))
    build = [e.spec for e in plan.entrants] if specs is None else list(specs)
    agents = [resolve_agent(build[e], agent_seed(seed, table, chunk, e), plan.rules) for e in playing]
    agent_at_seat = np.searchsorted(playing, entrant)  # [G, P] index into ``agents``

    points = np.zeros((g, p), dtype=np.int64)
    hands = np.zeros(g, dtype=np.int64)
    moons_made = np.zeros((g, p), dtype=np.int64)
    moons_suffered = np.zeros((g, p), dtype=np.int64)
    zero_hands = np.zeros((g, p), dtype=np.int64)
    winner = np.full(g, -1, dtype=np.int64)
    hand_records: list[list[dict]] = [[] for _ in range(g)] if record else []

    def score(ended: loop.HandsEnded) -> None:
        game, done = ended.games, ended.state.done
        hand_points, shooter = ended.state.last_hand_points, ended.state.last_hand_moon
        points[game] += hand_points
        hands[game] += 1
        moons_made[game] += shooter
        moons_suffered[game] += shooter.any(axis=1, keepdims=True) & ~shooter
        zero_hands[game] += hand_points <= 0
        winner[game] = np.where(done, ended.state.winner, winner[game])
        if record:
            for row, game_id in enumerate(game.tolist()):
                hand_records[game_id].append(scored_hand(ended.state, row))

    try:
        loop.play(state, agents, agent_at_seat, on_hand_end=score)
    except loop.AgentError as err:
        raise ArenaError(str(err).replace(repr(loop.agent_name(agents[err.agent])),
                                          repr(plan.entrants[playing[err.agent]].label), 1)) from None

    games = Games(
        deal=deal_index, table=layout["table"], seating=seating, entrant=entrant,
        points=points, hands=hands, moons_made=moons_made, moons_suffered=moons_suffered,
        zero_hands=zero_hands, winner=winner,
    )
    records = _game_records(plan, deals, games, hand_records) if record else []
    return games, records


def _game_records(plan: Plan, deals: DealSet, games: Games, hand_records: list[list[dict]]) -> list[dict]:
    """One JSON-ready record per game: the deal, each hand's cards and actions, the points."""
    out = []
    for i in range(len(games)):
        d = int(games.deal[i])
        out.append({
            "type": "game",
            "deal": d,
            "deal_seed": str(int(deals.seeds[d])),
            "hand_number": int(deals.hand_numbers[d]),
            "table": int(games.table[i]),
            "seating": int(games.seating[i]),
            "seats": [plan.entrants[e].label for e in games.entrant[i]],
            "specs": [plan.entrants[e].spec_text for e in games.entrant[i]],
            "hands": hand_records[i],
            "points": games.points[i].tolist(),
            "winner": None if games.winner[i] < 0 else int(games.winner[i]),
        })
    return out


# ---------------------------------------------------------------------------------------------
# The job a worker process runs: the plan, the deals, the seed, whether records are kept
# ---------------------------------------------------------------------------------------------

_JOB: dict | None = None  # the job a worker process runs (inherited by fork, never pickled)


def set_job(job: dict) -> None:
    """Make ``job`` (``plan``, ``deals``, ``seed``, ``record`` and optionally ``specs``) the one
    :func:`run_unit` plays in this process."""
    global _JOB
    _JOB = job


def init_worker(job: dict) -> None:
    """Set up a forked worker process (never the caller's own process)."""
    set_job(job)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch = sys.modules.get("torch")
    if torch is not None:
        # A forked child must not enter the OpenMP pool the parent may have started (loading a
        # checkpoint does): that pool's locks are copied held, and the child would wait forever.
        # One thread per worker is also right: the workers already use every core.
        torch.set_num_threads(1)


def run_unit(unit: tuple[int, int, int, int]) -> tuple[Games, list[dict], str]:
    """One unit ``(table, chunk, start, stop)`` of the job set in this process (:func:`set_job`):
    its games, game records and who played it (``host:pid``)."""
    table, chunk, start, stop = unit
    job = _JOB
    games, records = play_unit(job["plan"], job["deals"], start, stop, table, chunk, job["seed"], job["record"],
                               job.get("specs"))
    return games, records, f"{socket.gethostname()}:{os.getpid()}"
