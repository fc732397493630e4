"""Seat records: what one seat knows at one of its decisions, as plain JSON, and its observation.

A game app does not run this engine; it keeps its own game and, when the policy is to act for a
seat, describes what that seat knows in a *seat record* (``docs/export.md`` has the format)::

    {"version": 1, "rules": {...Rules.to_dict()...}, "seat": 0, "hand_number": 0,
     "scores": [0, 0, 0, 0], "phase": "play", "hand": ["3C", "QS", ...],
     "passed": ["AH", "KH", "QH"], "received": ["2D", "5C", "9S"],
     "tricks": [{"leader": 1, "cards": ["2C", "KC", "4C", "9C"]}],
     "trick": {"leader": 2, "cards": ["5D", "TD"]}}

There is no second observation encoder here. :func:`to_state` rebuilds an engine ``State`` in
which the seat faces exactly that decision, by *replaying* the hand through the engine: the deal
is reconstructed from the seat's hand, the cards it passed and received, and the cards played;
the cards the seat has not seen are dealt to the other seats (and the dead cards) in some way
that is consistent with the history, then the passes and every card are stepped through the
engine's step (``engine.step_buffer``). The observation is then ``observe.observe`` of that state, and the legal mask
``engine.legal_mask``: the very code paths of training and the arena. The observation does not
depend on how the unseen cards were placed (observation v1 never reads other hands), which the
tests check.

"Consistent" matters: a seat that did not follow clubs holds no clubs, a seat that led a heart
before hearts were broken held nothing but hearts, and so on. Which unseen cards each other seat
may hold is asked of the engine's own legal-play function (``play.legal_if_held``): at each of that
seat's plays, would the card played still be legal had the seat also held card *c*? The unseen
cards are then placed among the seats that may hold them by ``worlds.place`` (one world, drawn
with a fixed seed so that a record always rebuilds the same state).

A record that describes no reachable situation (cards missing or twice, a history the rules do not
allow, a trick led by the wrong seat, no consistent way to hold the unseen cards, not this seat's
turn) raises :class:`SeatRecordError` with a message naming the problem.

Many records at once: :func:`encode_batch` (and :func:`encode`, which raises the first error)
rebuilds a whole batch, such as the calls a bots service gathers, by the one replay
(``seat_record_replay``): one engine batch per game rules (``Rules.same_game``) and phase, every deal built at once, every pass
pick and play of every record stepped in one compiled call, the "would it still be legal" question
asked there of the engine's legal-play rule, and the unseen cards of all records placed by one
``worlds.place`` call. One record is a batch of one. ``encode_batch`` does not raise for a bad
record: it returns its error in ``errors[i]`` and answers the others; each record's error is worded
from where its own replay stopped, so it never depends on the batch (nor does anything observed:
only the placement of the unseen cards does).

A record knows more than an observation: every trick whole (so the exact cards each seat won) and,
through its replay, which cards each other seat may still hold (by the one rule of who may hold a
card, ``holding.may_hold``). :func:`view` gives both beside the
seat's view of its observation (``seat_view``), in the same relative seats: one reading of what a
seat knows, whether it comes from an observation or from a record.

``from_state`` goes the other way (engine state + the hand's plays -> record); it is how the
golden test vectors and the round-trip tests are made.

This module is the records' door: what a caller asks of a record (parse, state, observation, mask,
view, batches of them). Reading and writing the format is ``seat_record_parse``; the replay,
``seat_record_replay``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import cards, engine, observe, seat_view
from .rules import Rules
from .seat_record_parse import (  # noqa: F401 (the format's names, read here)
    MAX_RECORD_BYTES, OPTIONAL_KEYS, RECORD_FORMAT, RECORD_VERSION, REQUIRED_KEYS, SeatRecord, SeatRecordError, Trick,
    from_state, parse,
)
from .seat_record_replay import Replay
from .seat_view import SeatView
from .state import State

Record = Mapping[str, Any] | SeatRecord | str | Path


def _parsed(record: Record) -> SeatRecord:
    return record if isinstance(record, SeatRecord) else parse(record)


def _replayed(r: SeatRecord) -> Replay:
    """The replay of one record; its error raised."""
    replay = Replay(r.rules, [r])
    if replay.errors[0] is not None:
        raise replay.errors[0]
    return replay


def to_state(record: Record) -> tuple[State, int]:
    """``(state, seat)``: a one-game engine state in which ``seat`` faces the record's decision."""
    r = _parsed(record)
    return _replayed(r).state, r.seat


@dataclasses.dataclass(frozen=True)
class RecordView:
    """What a seat record tells its seat: the seat view of its observation, and what the record
    knows beyond the observation, in the same relative seats (0 = the record's seat)."""

    view: SeatView  # one row: ``seat_view.read`` of the record's observation and legal mask
    taken: np.ndarray  # [4] uint64 the cards each relative seat won this hand (the record lists every trick)
    may_hold: np.ndarray  # [52, 4] bool who may hold each card now: row 0 the seat's own hand; the others by
    #                       the replay's inference (voids, the cards a seat's plays show it did not hold, the
    #                       cards passed to it); a card played, or dead for sure, is held by nobody


def view(record: Record) -> RecordView:
    """The :class:`RecordView` of a record: its seat's view, with the cards taken and who may hold
    what, as the replay infers it."""
    r = _parsed(record)
    p = r.rules.num_players
    replay = _replayed(r)
    state = replay.state
    if r.phase == "pass":
        unseen = r.rules.deck_bits & ~cards.bits_of(r.hand)
        may_hold = np.full(p, unseen, dtype=np.uint64)
    else:
        may_hold = replay.may_hold[0]
    seen = seat_view.read(observe.observe(state, np.array([r.seat])), engine.legal_mask(state))
    relative = [(r.seat + k) % p for k in range(p)]
    taken = np.zeros(seat_view.SEATS, dtype=np.uint64)
    taken[:p] = state.taken[0, relative]
    holders = np.zeros((cards.NUM_CARDS, seat_view.SEATS), dtype=bool)
    holders[:, 0] = cards.to_mask(np.array([state.hands[0, r.seat]]))[0]
    for k, s in enumerate(relative[1:], start=1):
        holders[:, k] = cards.to_mask(np.array([np.uint64(may_hold[s])]))[0]
    return RecordView(view=seen, taken=taken, may_hold=holders)


def observation(record) -> np.ndarray:
    """The observation v1 vector ``[OBS_DIM]`` float32 of the record's seat."""
    state, seat = to_state(record)
    return observe.observe(state, np.array([seat]))[0]


def legal_mask(record) -> np.ndarray:
    """``[52]`` bool: the seat's legal cards."""
    state, _ = to_state(record)
    return engine.legal_mask(state)[0]


def encode(records: Iterable) -> tuple[np.ndarray, np.ndarray]:
    """``(observations [N, OBS_DIM] float32, action masks [N, 52] bool)`` of several records;
    the first bad record (in order) raises its :class:`SeatRecordError`."""
    obs, masks, errors = encode_batch(records)
    for error in errors:
        if error is not None:
            raise error
    return obs, masks


def encode_batch(records: Iterable) -> tuple[np.ndarray, np.ndarray, list[SeatRecordError | None]]:
    """``(observations [N, OBS_DIM] float32, action masks [N, 52] bool, errors)``: ``errors[i]`` is
    record ``i``'s :class:`SeatRecordError` (its rows then stay zero) or None. A bad record does
    not stop the others: a service batching many calls answers each one.

    The records (dicts, JSON texts, paths or parsed records) are replayed together, one engine
    batch per game rules and phase."""
    records = list(records)
    n = len(records)
    obs = np.zeros((n, observe.OBS_DIM), dtype=np.float32)
    masks = np.zeros((n, cards.NUM_CARDS), dtype=bool)
    errors: list[SeatRecordError | None] = [None] * n
    parsed: list[SeatRecord | None] = [None] * n
    for i, record in enumerate(records):
        try:
            parsed[i] = _parsed(record)
        except SeatRecordError as err:
            errors[i] = err
    for rules, members in _same_games(parsed):
        for phase in ("pass", "play"):
            rows = [i for i in members if parsed[i].phase == phase]
            if not rows:
                continue
            replay = Replay(rules, [parsed[i] for i in rows])
            good = ~replay.failed
            obs[rows] = np.where(good[:, None], observe.observe(replay.state, replay.seats), 0)
            masks[rows] = engine.legal_mask(replay.state) & good[:, None]
            for i, error in zip(rows, replay.errors):
                errors[i] = error
    return obs, masks, errors


def _same_games(parsed: Sequence[SeatRecord | None]) -> list[tuple[Rules, list[int]]]:
    """The records grouped by game rules (``Rules.same_game``), each group with its first rules."""
    groups: list[tuple[Rules, list[int]]] = []
    for i, r in enumerate(parsed):
        if r is None:
            continue
        for rules, members in groups:
            if r.rules is rules or r.rules.same_game(rules):
                members.append(i)
                break
        else:
            groups.append((r.rules, [i]))
    return groups
