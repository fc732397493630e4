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
that is consistent with the history, then the passes and every card are stepped through
``engine.step``. The observation is then ``observe.observe`` of that state, and the legal mask
``engine.legal_mask``: the very code paths of training and the arena. The observation does not
depend on how the unseen cards were placed (observation v1 never reads other hands), which the
tests check.

"Consistent" matters: a seat that did not follow clubs holds no clubs, a seat that led a heart
before hearts were broken held nothing but hearts, and so on. Which unseen cards each other seat
may hold is asked of the engine's own legal-play function (``play.legal_plays``): at each of that
seat's plays, would the card played still be legal had the seat also held card *c*? The unseen
cards are then placed among the seats that may hold them by ``worlds.place`` (one world, drawn
with a fixed seed so that a record always rebuilds the same state).

A record that describes no reachable situation (cards missing or twice, a history the rules do not
allow, a trick led by the wrong seat, no consistent way to hold the unseen cards, not this seat's
turn) raises :class:`SeatRecordError` with a message naming the problem.

Many records at once: :func:`encode_batch` (and :func:`encode`, which raises the first error)
rebuilds a whole batch, such as the calls a bots service gathers, with the same replay run as array
code: one engine batch per game rules (``Rules.same_game``) and phase, every deal built at once,
the k-th pass pick and the k-th play of every record that has one stepped in one engine step, the
"would it still be legal" question asked for all records and all unseen cards in one compiled call
(``play.legal_if_also_held``, the engine's legal-play rule), and the unseen cards of all records
placed by one ``worlds.place`` call. The observations and masks are those of the one-record path
(the placement of the unseen cards depends on the batch; nothing observed does). ``encode_batch``
does not raise for a bad record: it returns its error in ``errors[i]`` and answers the others. A
record that fails in the batch is rebuilt alone by :func:`to_state`, whose error it then gets, so an
error message never depends on the batch. 64 records take about a tenth of the time they take one
by one.

A record knows more than an observation: every trick whole (so the exact cards each seat won) and,
through its replay, which cards each other seat may still hold. :func:`view` gives both beside the
seat's view of its observation (``seat_view``), in the same relative seats: one reading of what a
seat knows, whether it comes from an observation or from a record.

``from_state`` goes the other way (engine state + the hand's plays -> record); it is how the
golden test vectors and the round-trip tests are made.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import cards, engine, observe, play, seat_view, worlds
from .rules import Rules, RulesError
from .seat_view import SeatView
from .state import PASS, PLAY, State

RECORD_VERSION = 1
RECORD_FORMAT = "hearts-seat-record"
REQUIRED_KEYS = ("version", "rules", "seat", "hand_number", "scores", "phase", "hand")
OPTIONAL_KEYS = ("format", "passed", "received", "tricks", "trick", "note")


class SeatRecordError(ValueError):
    """A seat record that is malformed or describes an impossible situation."""


@dataclasses.dataclass(frozen=True)
class Trick:
    leader: int
    cards: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class SeatRecord:
    """A parsed record (card ids, rules object); build it with :func:`parse`."""

    rules: Rules
    seat: int
    hand_number: int
    scores: tuple[int, ...]
    phase: str  # "pass" or "play"
    hand: tuple[int, ...]
    passed: tuple[int, ...]
    received: tuple[int, ...]
    tricks: tuple[Trick, ...]
    trick: Trick

    @property
    def pass_offset(self) -> int:
        return int(self.rules.pass_offsets[self.hand_number % len(self.rules.pass_cycle)])

    def plays(self) -> list[tuple[int, int, int]]:
        """``(trick index, seat, card)`` for every card played this hand, in order."""
        p = self.rules.num_players
        out = []
        for t, trick in enumerate((*self.tricks, self.trick)):
            out += [(t, (trick.leader + i) % p, c) for i, c in enumerate(trick.cards)]
        return out


# ---------------------------------------------------------------------------------------------
# Parsing and the checks that need no replay
# ---------------------------------------------------------------------------------------------


def _fail(message: str) -> SeatRecordError:
    return SeatRecordError(f"seat record: {message}")


def _int(data: Mapping, key: str, low: int, high: int | None = None) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _fail(f"{key} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f"{low} or more"
        raise _fail(f"{key} must be {span}, got {value}")
    return int(value)


_CARD_IDS = {cards.card_text(c): c for c in range(cards.NUM_CARDS)}  # the usual texts, read at once


def _cards(value: Any, where: str, deck: np.uint64) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        raise _fail(f"{where} must be a list of cards such as [\"QS\", \"TH\"], got {value!r}")
    ids: list[int] = []
    for item in value:
        card = _CARD_IDS.get(item) if type(item) is str else None
        if card is None:
            if isinstance(item, bool) or not isinstance(item, (str, int, np.integer)):
                raise _fail(f"{where}: {item!r} is not a card")
            try:
                card = cards.parse_card(item)
            except ValueError as err:
                raise _fail(f"{where}: {err}") from None
        if card in ids:
            raise _fail(f"{where}: {cards.card_text(card)} is listed twice")
        if not int(deck) >> card & 1:
            raise _fail(f"{where}: {cards.card_text(card)} is not in this game's deck")
        ids.append(card)
    return tuple(ids)


def _trick(value: Any, where: str, p: int, deck: np.uint64) -> Trick:
    if (not isinstance(value, (dict, Mapping))  # (dict first: the abstract check is slow)
            or set(value) - {"leader", "cards"} or "cards" not in value):
        raise _fail(f"{where} must be an object {{\"leader\": SEAT, \"cards\": [...]}}, got {value!r}")
    leader = value.get("leader")
    if leader is None:
        if value["cards"]:
            raise _fail(f"{where}: a trick with cards needs its leader")
        leader = -1  # the current trick before its lead: the leader is whoever must lead
    else:
        leader = _int(value, "leader", 0, p - 1)
    return Trick(leader, _cards(value["cards"], f"{where} cards", deck))


def parse(record: Mapping[str, Any] | str | Path) -> SeatRecord:
    """A checked :class:`SeatRecord` from a dict, a JSON text or a JSON file path."""
    if isinstance(record, Path) or (isinstance(record, str) and not record.lstrip().startswith(("{", "["))
                                    and _is_file(record)):
        record = _read(Path(record))
    if isinstance(record, str):
        try:
            record = json.loads(record)
        except json.JSONDecodeError as err:
            hint = "" if record.lstrip().startswith(("{", "[")) else " (nor the path of an existing file)"
            raise _fail(f"not valid JSON{hint}: {err}") from None
        except RecursionError:
            raise _fail("not valid JSON: nested too deeply") from None
        except ValueError:  # a number of more digits than Python converts
            raise _fail(f"not valid JSON: a number of more than {sys.get_int_max_str_digits():,} digits") from None
    if not isinstance(record, (dict, Mapping)):
        raise _fail(f"a record is a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise _fail(f"missing {', '.join(missing)} (a record needs {', '.join(REQUIRED_KEYS)})")
    unknown = sorted(set(record) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise _fail(f"unknown key(s) {', '.join(unknown)}; the keys are {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)}")
    if record.get("format", RECORD_FORMAT) != RECORD_FORMAT:
        raise _fail(f"format is {record['format']!r}, expected {RECORD_FORMAT!r}")
    if isinstance(record["version"], bool) or record["version"] != RECORD_VERSION:
        raise _fail(f"version {record['version']!r} is not supported (this reader reads version {RECORD_VERSION})")
    if not isinstance(record["rules"], (dict, Mapping)):
        raise _fail("rules must be an object (Rules.to_dict(), or {\"preset\": \"classic\"})")
    try:
        rules = _rules(record["rules"])
    except RulesError as err:
        raise _fail(f"rules: {err}") from None
    p, deck = rules.num_players, rules.deck_bits
    seat = _int(record, "seat", 0, p - 1)
    hand_number = _int(record, "hand_number", 0)
    scores = record["scores"]
    if (not isinstance(scores, (list, tuple)) or len(scores) != p
            or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in scores)):
        raise _fail(f"scores must be {p} integers (game totals before this hand, by seat), got {scores!r}")
    if record["phase"] not in ("pass", "play"):
        raise _fail(f"phase must be \"pass\" or \"play\", got {record['phase']!r}")
    tricks = record.get("tricks", [])
    if not isinstance(tricks, (list, tuple)):
        raise _fail("tricks must be a list of finished tricks")
    parsed = SeatRecord(
        rules=rules, seat=seat, hand_number=hand_number, scores=tuple(int(s) for s in scores),
        phase=record["phase"], hand=_cards(record["hand"], "hand", deck),
        passed=_cards(record.get("passed", []), "passed", deck),
        received=_cards(record.get("received", []), "received", deck),
        tricks=tuple(_trick(t, f"tricks[{i}]", p, deck) for i, t in enumerate(tricks)),
        trick=_trick(record.get("trick", {"cards": []}), "trick", p, deck),
    )
    _check_counts(parsed)
    return parsed


#: The largest record file read: a record is a few kilobytes.
MAX_RECORD_BYTES = 1 << 20


def _is_file(text: str) -> bool:
    """Whether ``text`` names an existing file (a JSON text is no path: it may be too long for one)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long, or with a NUL byte
        return False


def _read(path: Path) -> str:
    """A record file's text; a folder, a device, a file larger than :data:`MAX_RECORD_BYTES` or one that
    is not UTF-8 is a :class:`SeatRecordError`."""
    if not path.is_file():
        raise _fail(f"{path} is not a file")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise _fail(f"{path} holds {path.stat().st_size:,} bytes; a record is at most {MAX_RECORD_BYTES:,}")
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise _fail(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise _fail(f"{path} is not UTF-8 text (byte {err.start + 1} is invalid)") from None


_RULES_READ: dict[str, Rules] = {}


def _rules(options: Mapping[str, Any]) -> Rules:
    """``Rules.from_dict``, remembered by the options' JSON text: a service reads the same few
    rule sets in every call, and validating them costs more than the rest of a record."""
    try:
        key = json.dumps(options, sort_keys=True)
        plain = json.loads(key) == options  # (a tuple, or a key that is not text, reads back otherwise)
    except (TypeError, ValueError, RecursionError):
        plain = False
    if not plain:
        return Rules.from_dict(options)
    rules = _RULES_READ.get(key)
    if rules is None:
        rules = Rules.from_dict(options)
        if len(_RULES_READ) >= 64:
            _RULES_READ.clear()
        _RULES_READ[key] = rules
    return rules


def _check_counts(r: SeatRecord) -> None:
    """The checks on card counts and card places that need no replay, with plain messages."""
    rules, p, size = r.rules, r.rules.num_players, r.rules.hand_size
    offset, need = r.pass_offset, r.rules.pass_count
    hand = set(r.hand)
    if r.phase == "pass":
        if offset == 0:
            raise _fail(f"phase is \"pass\" but hand {r.hand_number} has no pass "
                        f"(pass direction {rules.pass_direction(r.hand_number)!r})")
        if r.tricks or r.trick.cards or r.received:
            raise _fail("phase is \"pass\": no card has been played or received yet (tricks, trick and "
                        "received must be empty)")
        if len(r.hand) != size:
            raise _fail(_count_message(len(r.hand), size, "before the exchange every seat holds"))
        if not set(r.passed) <= hand:
            outside = sorted(set(r.passed) - hand)
            raise _fail(f"passed: {cards.format_cards(outside)} not in the hand (during the pass the chosen "
                        "cards stay in the hand until the exchange)")
        if len(r.passed) >= need:
            raise _fail(f"phase is \"pass\" but {len(r.passed)} cards are already chosen: a seat chooses "
                        f"{need}, and after its last pick it is no longer its turn")
        return
    for t, trick in enumerate(r.tricks):
        if len(trick.cards) != p:
            raise _fail(f"tricks[{t}] has {len(trick.cards)} cards; a finished trick has {p} "
                        "(the unfinished one goes in \"trick\")")
    if len(r.trick.cards) >= p:
        raise _fail(f"trick has {len(r.trick.cards)} cards; the current trick has at most {p - 1} "
                    "(a full trick belongs in \"tricks\")")
    if len(r.tricks) >= size:
        raise _fail(f"{len(r.tricks)} tricks are finished: the hand is over and nobody is to act")
    if offset and (len(r.passed) != need or len(r.received) != need):
        raise _fail(f"hand {r.hand_number} passes {rules.pass_direction(r.hand_number)}: after the exchange "
                    f"passed and received hold {need} cards each, got {len(r.passed)} and {len(r.received)}")
    if not offset and (r.passed or r.received):
        raise _fail(f"hand {r.hand_number} has no pass, so passed and received must be empty")
    plays = r.plays()

    def where(card: int) -> str:
        if card in hand:
            return "in the hand"
        t, seat = next((t, seat) for t, seat, c in plays if c == card)
        return f"played by seat {seat} in {'tricks[%d]' % t if t < len(r.tricks) else 'trick'}"

    seen = set(hand)
    for t, seat, card in plays:
        if card in seen:
            place = f"played by seat {seat} in {'tricks[%d]' % t if t < len(r.tricks) else 'trick'}"
            raise _fail(f"{cards.card_text(card)} appears twice: {where(card)} and {place}")
        seen.add(card)
    mine = [c for _, s, c in plays if s == r.seat]
    held = len(r.hand) + len(mine)
    if held != size:
        raise _fail(_count_message(held, size, "your hand and the cards you played must make the"))
    if len(r.hand) != size - len(r.tricks):
        raise _fail(f"after {len(r.tricks)} finished tricks it is seat {r.seat}'s turn only if it holds "
                    f"{size - len(r.tricks)} cards, but the hand lists {len(r.hand)}")
    for card in r.passed:
        if card in hand or card in mine:
            raise _fail(f"passed: {cards.card_text(card)} was passed away but is {where(card)}")
    receiver = (r.seat + offset) % p
    passed = set(r.passed)
    for t, seat, card in plays:
        if card in passed and seat != receiver:
            raise _fail(f"{cards.card_text(card)} was passed to seat {receiver} but is played by seat {seat}")
    for card in r.received:
        if card not in hand and card not in mine:
            raise _fail(f"received: {cards.card_text(card)} is neither in the hand nor among the cards played by "
                        f"seat {r.seat}")


def _count_message(got: int, size: int, what: str) -> str:
    gap = size - got
    more = f"{gap} missing" if gap > 0 else f"{-gap} too many"
    return f"{what} {size} cards of a {size}-card hand, got {got} ({more})"


# ---------------------------------------------------------------------------------------------
# Rebuilding the engine state by replay
# ---------------------------------------------------------------------------------------------


def to_state(record: Mapping[str, Any] | SeatRecord | str | Path) -> tuple[State, int]:
    """``(state, seat)``: a one-game engine state in which ``seat`` faces the record's decision."""
    r = record if isinstance(record, SeatRecord) else parse(record)
    if r.phase == "pass":
        return _pass_state(r), r.seat
    return _play_state(r)[0], r.seat


@dataclasses.dataclass(frozen=True)
class RecordView:
    """What a seat record tells its seat: the seat view of its observation, and what the record
    knows beyond the observation, in the same relative seats (0 = the record's seat)."""

    view: SeatView  # one row: ``seat_view.read`` of the record's observation and legal mask
    taken: np.ndarray  # [4] uint64 the cards each relative seat won this hand (the record lists every trick)
    may_hold: np.ndarray  # [52, 4] bool who may hold each card now: row 0 the seat's own hand; the others by
    #                       the replay's inference (voids, the cards a seat's plays show it did not hold, the
    #                       cards passed to it); a card played, or dead for sure, is held by nobody


def view(record: Mapping[str, Any] | SeatRecord | str | Path) -> RecordView:
    """The :class:`RecordView` of a record: its seat's view, with the cards taken and who may hold
    what, as the replay (``to_state``) infers it."""
    r = record if isinstance(record, SeatRecord) else parse(record)
    p = r.rules.num_players
    if r.phase == "pass":
        state = _pass_state(r)
        unseen = r.rules.deck_bits & ~_bits(r.hand)
        may_hold = {s: unseen for s in range(p) if s != r.seat}
    else:
        state, may_hold = _play_state(r)
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
            parsed[i] = record if isinstance(record, SeatRecord) else parse(record)
        except SeatRecordError as err:
            errors[i] = err
    left: list[int] = []  # records the batch did not rebuild: they take the one-record path
    for rules, members in _same_games(parsed):
        for phase, replay in (("pass", _replay_passing), ("play", _replay_playing)):
            rows = [i for i in members if parsed[i].phase == phase]
            if not rows:
                continue
            state, seats, failed = replay(rules, [parsed[i] for i in rows])
            obs[rows] = observe.observe(state, seats)
            masks[rows] = engine.legal_mask(state)
            left += [i for i, bad in zip(rows, failed) if bad]
    for i in sorted(left):
        obs[i], masks[i] = 0, False
        try:
            state, seat = to_state(parsed[i])
        except SeatRecordError as err:
            errors[i] = err
            continue
        obs[i] = observe.observe(state, np.array([seat]))[0]
        masks[i] = engine.legal_mask(state)[0]
    return obs, masks, errors


def _bits(ids: Iterable[int]) -> np.uint64:
    return cards.bits_of(ids)


def _pass_state(r: SeatRecord) -> State:
    rules, p, me = r.rules, r.rules.num_players, r.seat
    unseen = [c for c in cards.cards_of(rules.deck_bits) if c not in r.hand]
    post = {me: list(r.hand)}
    for s in range(p):  # any placement works: no card has been played, nothing constrains it
        if s != me:
            post[s], unseen = unseen[: rules.hand_size], unseen[rules.hand_size:]
    post[-1] = unseen
    state, _ = _deal(r, post)
    for s in range(me):  # the seats before this one have chosen (their picks are secret: any will do)
        for card in cards.cards_of(state.hands[0, s])[: rules.pass_count]:
            engine.step_inplace(state, [card])
    for card in r.passed:
        _step(state, card, "passed: cannot choose")
    _check_turn(state, r)
    return state


def _play_state(r: SeatRecord) -> tuple[State, dict[int, np.uint64]]:
    """The state of the record's decision, and the cards each other seat may hold there."""
    rules, p, me = r.rules, r.rules.num_players, r.seat
    receiver = (me + r.pass_offset) % p
    known = {s: set() for s in range(p) if s != me}  # cards each other seat held after the exchange
    for _, seat, card in r.plays():
        if seat != me:
            known[seat].add(card)
    if r.pass_offset:
        known[receiver] |= set(r.passed)
    for s, held in known.items():
        if len(held) > rules.hand_size:
            raise _fail(f"seat {s} would hold {len(held)} cards, more than a hand of {rules.hand_size}")
    mine = set(r.hand) | {c for _, s, c in r.plays() if s == me}
    seen = mine.union(*known.values())
    unseen = [c for c in cards.cards_of(rules.deck_bits) if c not in seen]
    dead = _forced_dead(r, set(unseen))
    room = {s: rules.hand_size - len(held) for s, held in known.items()}
    # First replay: the other seats hold only their known cards, so every play is checked against
    # what they surely held, and we learn which unseen cards each of them may also have held.
    placement = _place(unseen, room, dead, {s: set(unseen) for s in known}, rules.dead_cards)
    known_only, passes = _deal(r, _post_exchange(r, known, placement))
    _replay_passes(known_only, passes)
    for s in known:
        known_only.hands[0, s] = _bits(known[s])
    known_only.legal[:] = play.legal_plays(known_only, np.arange(1))
    allowed = {s: set(unseen) for s in known}
    candidates = np.array(unseen, dtype=np.int64)
    for t, seat, card in r.plays():
        if seat != me and candidates.size:
            what_ifs = known_only.take(np.zeros(candidates.size, dtype=np.int64))
            what_ifs.hands[:, seat] |= cards.BIT[candidates]
            ok = (play.legal_plays(what_ifs, np.arange(candidates.size)) >> np.uint64(card)) & np.uint64(1)
            allowed[seat] &= set(candidates[ok.astype(bool)].tolist())
        _play(known_only, r, t, seat, card)
    _check_turn(known_only, r)
    # Second replay, on a full deal that respects what was learnt: the state we observe.
    placement = _place(unseen, room, dead, allowed, rules.dead_cards)
    state, passes = _deal(r, _post_exchange(r, known, placement))
    _replay_passes(state, passes)
    for t, seat, card in r.plays():
        _play(state, r, t, seat, card)
    _check_turn(state, r)
    played = np.bitwise_or.reduce(state.played[0])
    may_hold = {s: (_bits(allowed[s] - dead) | _bits(known[s])) & ~played for s in known}
    return state, may_hold


def _forced_dead(r: SeatRecord, unseen: set[int]) -> set[int]:
    """Opening cards that must be dead: those before the card that opened (or must open) the hand."""
    rules = r.rules
    opening = list(rules.opening_ids)
    plays = r.plays()
    if plays:
        first = plays[0][2]
        if first not in opening:
            raise _fail(f"the hand's first trick must be opened with {' / '.join(rules.opening_lead)}, "
                        f"but the record opens it with {cards.card_text(first)}")
        k = opening.index(first)
        what = f"the first trick was opened with {cards.card_text(first)}"
    else:
        held = [c for c in opening if c in r.hand]
        if not held:
            raise _fail(f"no card has been played, so the holder of {rules.opening_lead[0]} leads; "
                        f"seat {r.seat} does not hold it, so it is not its turn")
        k = opening.index(held[0])
        what = f"seat {r.seat} is to open the first trick with {cards.card_text(held[0])}"
    earlier = opening[:k]
    if not earlier:
        return set()
    blocked = [c for c in earlier if c not in unseen]
    if blocked or len(earlier) > rules.dead_cards:
        raise _fail(f"{what}, which is allowed only when {cards.format_cards(earlier)} "
                    f"{'is' if len(earlier) == 1 else 'are'} dead (set aside), but "
                    + (f"{cards.format_cards(blocked)} is in play" if blocked else
                       f"this game sets aside only {rules.dead_cards} cards"))
    return set(earlier)


def _place(unseen: list[int], room: dict[int, int], dead: set[int], allowed: dict[int, set[int]],
           dead_count: int) -> dict[int, list[int]]:
    """Each unseen card to a seat with room that may hold it, or to the dead cards (key -1).

    One world of ``worlds.place``, drawn with a fixed seed: the same record always rebuilds the
    same state. The dead pile may hold any card; the forced-dead cards only it.
    """
    holders = [*room, -1]
    hidden = np.zeros((1, cards.NUM_CARDS), dtype=bool)
    hidden[0, unseen] = True
    may_hold = np.zeros((1, cards.NUM_CARDS, len(holders)), dtype=bool)
    for i, s in enumerate(room):
        may_hold[0, sorted(allowed[s] - dead), i] = True
    may_hold[0, :, -1] = True
    capacity = np.array([[*room.values(), dead_count]], dtype=np.int64)
    try:
        hands = worlds.place(hidden, capacity, may_hold, np.random.default_rng(0))
    except worlds.NoConsistentWorld as err:
        if err.card is None:
            raise _fail("the cards this seat has not seen cannot be held consistently with the play "
                        f"({err})") from None
        card = err.card
        seats = [s for s in room if card not in allowed[s]]
        raise _fail(
            f"the cards this seat has not seen cannot be held consistently with the play: "
            f"{cards.card_text(card)} fits no seat with room"
            + (f" (seat{'s' if len(seats) > 1 else ''} {', '.join(map(str, seats))} showed by their "
               "play that they cannot hold it)" if seats else "")
        ) from None
    return {h: cards.cards_of(hands[0, i]) for i, h in enumerate(holders)}


def _post_exchange(r: SeatRecord, known: dict[int, set[int]], placement: dict[int, list[int]]) -> dict[int, list[int]]:
    """What every seat held after the exchange (before the first trick); key -1 for dead cards."""
    post = {s: sorted(known[s] | set(placement[s])) for s in known}
    post[r.seat] = sorted(set(r.hand) | {c for _, s, c in r.plays() if s == r.seat})
    post[-1] = sorted(placement[-1])
    return post


def _passes(r: SeatRecord, post: dict[int, list[int]]) -> dict[int, list[int]]:
    """Cards each seat passed: this seat's and the giver's are known; the others' are any cards
    that ended up with their receivers (nothing observed depends on them)."""
    p, offset = r.rules.num_players, r.pass_offset
    giver = (r.seat - offset) % p
    out = {}
    for s in range(p):
        if s == r.seat:
            out[s] = list(r.passed)
        elif s == giver:
            out[s] = list(r.received)
        else:
            out[s] = [c for c in post[(s + offset) % p] if c not in r.passed][: r.rules.pass_count]
    return out


def _deal(r: SeatRecord, post: dict[int, list[int]]) -> tuple[State, dict[int, list[int]]]:
    """The one-game state at the start of the hand whose exchange leads to ``post``, and the passes."""
    rules, p = r.rules, r.rules.num_players
    owner = np.full(cards.NUM_CARDS, -1, dtype=np.int64)
    passes: dict[int, list[int]] = {}
    if r.phase == "play" and r.pass_offset:
        passes = _passes(r, post)
        for s in range(p):
            kept = set(post[s]) - set(passes[(s - r.pass_offset) % p])
            for c in kept | set(passes[s]):
                owner[c] = s
    else:
        for s in range(p):
            owner[post[s]] = s
    try:
        state = engine.from_deals(rules, owner[None, :], [r.hand_number], [list(r.scores)], [0], single_hand=True)
    except ValueError as err:  # a bug, not a record problem: the placement always deals full hands
        raise _fail(f"could not rebuild the deal ({err})") from None
    return state, passes


def _replay_passes(state: State, passes: dict[int, list[int]]) -> None:
    """Every seat's pass picks, seat 0 first (as the engine takes them)."""
    for s in sorted(passes):
        for card in passes[s]:
            engine.step_inplace(state, [card])


def _play(state: State, r: SeatRecord, t: int, seat: int, card: int) -> None:
    where = f"tricks[{t}]" if t < len(r.tricks) else "trick"
    to_act = int(state.current_player[0])
    if to_act != seat:
        lead = "led" if state.num_in_trick[0] == 0 else "played next"
        raise _fail(f"{where}: the record has seat {seat} play {cards.card_text(card)}, but seat {to_act} "
                    f"{lead} there (the winner of a trick leads the next; the first trick is opened by the holder of "
                    f"{r.rules.opening_lead[0]})")
    _step(state, card, f"{where}: seat {seat} cannot play")


def _step(state: State, card: int, what: str) -> None:
    try:
        engine.step_inplace(state, [card])
    except engine.IllegalActionError as err:
        legal = str(err).rsplit("legal:", 1)[-1].strip()
        raise _fail(f"{what} {cards.card_text(card)} (legal there: {legal})") from None


def _check_turn(state: State, r: SeatRecord) -> None:
    phase = "pass" if state.phase[0] == PASS else "play" if state.phase[0] == PLAY else "over"
    if phase != r.phase or int(state.current_player[0]) != r.seat:
        if phase == "over":
            raise _fail("after this history the hand is over: nobody is to act")
        raise _fail(f"after this history it is seat {int(state.current_player[0])}'s turn to {phase}, "
                    f"not seat {r.seat}'s")
    if r.phase == "play" and r.trick.cards and state.leader[0] != r.trick.leader:
        raise _fail(f"trick: the record says seat {r.trick.leader} led, but seat {int(state.leader[0])} did")
    if r.phase == "play" and not r.trick.cards and r.trick.leader not in (-1, r.seat):
        raise _fail(f"trick: no card played yet, so the leader is the seat to act ({r.seat}), "
                    f"not {r.trick.leader}")


# ---------------------------------------------------------------------------------------------
# Many records at once: the same replay, the records of a batch stepped together
# ---------------------------------------------------------------------------------------------
# One engine state holds a game per record (records of one game rules and phase). The deals are
# built as arrays; the pass picks and the plays are stepped in lockstep, the k-th play of every
# record that has one in one engine step. A record that fails anywhere (or that this path does
# not handle) is marked and left to the one-record path above, which words its error.


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


def _int_bits(ids: Iterable[int]) -> int:
    out = 0
    for c in ids:
        out |= 1 << c
    return out


def _padded(rows: list[Sequence[int]], width: int, fill: int = -1) -> np.ndarray:
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for j, row in enumerate(rows):
        out[j, :len(row)] = row
    return out


def _start(rules: Rules, recs: Sequence[SeatRecord], dealt: np.ndarray, failed: np.ndarray) -> State:
    """One single-hand game per record, dealt ``dealt[M, P]`` (each seat's cards). A row that is
    not a full deal, or whose record already failed, gets a stand-in deal and fails."""
    p, size = rules.num_players, rules.hand_size
    m = len(recs)
    union = np.bitwise_or.reduce(dealt, axis=1)
    failed |= ~((cards.count(dealt) == size).all(axis=1) & (cards.count(union) == p * size))
    owners = np.full((m, cards.NUM_CARDS), -1, dtype=np.int64)
    for s in range(p):
        owners[cards.to_mask(dealt[:, s])] = s
    stand_in = np.asarray(cards.cards_of(rules.deck_bits))[:p * size]
    owners[failed] = -1
    owners[np.ix_(failed.nonzero()[0], stand_in)] = np.arange(stand_in.size) % p
    return engine.from_deals(rules, owners, [r.hand_number for r in recs], [list(r.scores) for r in recs],
                             np.zeros(m, dtype=np.int64), single_hand=True)


def _acting(state: State, actions: np.ndarray, acting: np.ndarray, phase: int, seats: np.ndarray | int,
            failed: np.ndarray) -> np.ndarray:
    """The games of ``acting`` whose phase, seat to act and legal set (the engine's) admit
    ``actions``; the others fail, so that one record's illegal card does not stop the batch."""
    card = np.maximum(actions, 0)
    bad = acting & ((state.phase != phase) | (state.current_player != seats) | (actions < 0)
                    | ((state.legal & cards.BIT[card]) == 0))
    failed |= bad
    return acting & ~bad


def _step_some(state: State, actions: np.ndarray, acting: np.ndarray) -> None:
    if acting.any():
        engine.step_inplace(state, np.maximum(actions, 0), games=acting)


def _replay_passing(rules: Rules, recs: Sequence[SeatRecord]) -> tuple[State, np.ndarray, np.ndarray]:
    """``(state, seats, failed)`` of pass-phase records: :func:`_pass_state` of each, all at once."""
    p, size, pick = rules.num_players, rules.hand_size, rules.pass_count
    m = len(recs)
    failed = np.zeros(m, dtype=bool)
    me = np.array([r.seat for r in recs], dtype=np.int64)
    hand = np.array([_int_bits(r.hand) for r in recs], dtype=np.uint64)
    # The record's seat gets its hand; the other seats, in order, the unseen cards in order; the
    # dead pile the rest.
    unseen = cards.to_mask(rules.deck_bits & ~hand)
    other = (np.cumsum(unseen, axis=1) - 1) // size  # 0 = the first seat other than ``me``
    owner = np.where(unseen & (other < p - 1), other + (other >= me[:, None]), -1)
    dealt = np.stack([cards.from_mask(owner == s) for s in range(p)], axis=1)
    dealt[np.arange(m), me] = hand
    state = _start(rules, recs, dealt, failed)
    # The seats before this one choose (their picks are secret: their lowest cards), then this one.
    for s in range(p - 1):
        for k in range(pick):
            picks = cards.nth_card(dealt[:, s], np.full(m, k))
            _step_some(state, picks, _acting(state, picks, (me > s) & ~failed, PASS, s, failed))
    passed = _padded([r.passed for r in recs], pick)
    for picks in passed.T:
        _step_some(state, picks, _acting(state, picks, (picks >= 0) & ~failed, PASS, me, failed))
    failed |= (state.phase != PASS) | (state.current_player != me)
    return state, me, failed


def _replay_playing(rules: Rules, recs: Sequence[SeatRecord]) -> tuple[State, np.ndarray, np.ndarray]:
    """``(state, seats, failed)`` of play-phase records: :func:`_play_state` of each, all at once."""
    p, size, pick = rules.num_players, rules.hand_size, rules.pass_count
    m = len(recs)
    rows, seats = np.arange(m), np.arange(p)
    deck = int(rules.deck_bits)
    failed = np.zeros(m, dtype=bool)
    me = np.array([r.seat for r in recs], dtype=np.int64)
    offset = np.array([r.pass_offset for r in recs], dtype=np.int64)
    known = np.zeros((m, p), dtype=np.uint64)  # the cards each other seat surely held after the pass
    mine = np.zeros(m, dtype=np.uint64)  # this seat's cards after the exchange
    unseen = np.zeros(m, dtype=np.uint64)
    dead = np.zeros(m, dtype=np.uint64)  # unseen cards that must be dead (``_forced_dead``)
    plays = []
    for j, r in enumerate(recs):
        plays.append(r.plays())
        held = [0] * p
        own = _int_bits(r.hand)
        for _, seat, card in plays[-1]:
            if seat == r.seat:
                own |= 1 << card
            else:
                held[seat] |= 1 << card
        if r.pass_offset:
            held[(r.seat + r.pass_offset) % p] |= _int_bits(r.passed)
        hidden = deck & ~own
        for h in held:
            hidden &= ~h
        if max(h.bit_count() for h in held) > size:
            failed[j] = True
            continue
        try:
            forced = _forced_dead(r, {c for c in range(cards.NUM_CARDS) if hidden >> c & 1})
        except SeatRecordError:
            failed[j] = True
            continue
        known[j], mine[j], unseen[j], dead[j] = held, own, hidden, _int_bits(forced)
    others = (me[:, None] + 1 + np.arange(p - 1)) % p  # the holders: the other seats, then the dead pile
    room = np.concatenate([size - cards.count(known[rows[:, None], others]),
                           np.full((m, 1), rules.dead_cards)], axis=1)
    hidden = cards.to_mask(unseen)
    to_seats = ~cards.to_mask(dead)  # the forced-dead cards go to the dead pile only
    turns = _padded([[seat for _, seat, _ in each] for each in plays], max(map(len, plays)))
    played = _padded([[card for _, _, card in each] for each in plays], turns.shape[1])
    passed = _padded([r.passed for r in recs], pick)
    received = _padded([r.received for r in recs], pick)
    passed_bits = np.array([_int_bits(r.passed) for r in recs], dtype=np.uint64)

    def replay(holdings: np.ndarray, learn: bool) -> tuple[State, np.ndarray]:
        """A game per record from the holders' ``holdings``, its passes and plays stepped. With
        ``learn``, the other seats hold only their known cards, and the cards each seat may also
        have held (those that would have left each of its plays legal) come back ``[M, P]``."""
        post = np.zeros((m, p), dtype=np.uint64)  # what every seat held after the exchange
        post[rows[:, None], others] = known[rows[:, None], others] | holdings[:, :p - 1]
        post[rows, me] = mine
        # Passes: this seat's and its giver's are known; each other seat's are any cards its
        # receiver held that did not come from this seat (nothing observed depends on them).
        pool = post[rows[:, None], (seats + offset[:, None]) % p] & ~passed_bits[:, None]
        picks = np.stack([cards.nth_card(pool, np.full(pool.shape, k)) for k in range(pick)], axis=2)
        picks[rows, me] = passed
        picks[rows, (me - offset) % p] = received
        chosen = np.where(picks >= 0, cards.BIT[np.maximum(picks, 0)], cards.NO_CARDS)
        chosen = np.bitwise_or.reduce(chosen, axis=2)
        from_giver = chosen[rows[:, None], (seats - offset[:, None]) % p]
        dealt = np.where(offset[:, None] > 0, (post & ~from_giver) | chosen, post)
        state = _start(rules, recs, dealt, failed)
        for s in range(p):  # every seat's pass picks, seat 0 first (as the engine takes them)
            for k in range(pick):
                actions = picks[:, s, k]
                acting = _acting(state, actions, (offset > 0) & ~failed, PASS, s, failed)
                _step_some(state, actions, acting)
        allowed = np.repeat(unseen[:, None], p, axis=1)
        if learn:
            state.hands[:] = np.where(seats == me[:, None], state.hands, known)
            engine.update_legal(state)
        for k in range(turns.shape[1]):
            seat, card = turns[:, k], played[:, k]
            acting = _acting(state, card, (seat >= 0) & ~failed, PLAY, seat, failed)
            if learn:  # would the card still be legal had the seat also held an unseen card?
                ask = np.flatnonzero(acting & (seat != me) & (unseen != 0))
                if ask.size:
                    allowed[ask, seat[ask]] &= play.legal_if_also_held(state, ask, card[ask], unseen[ask])
            _step_some(state, card, acting)
        trick = np.array([len(r.trick.cards) for r in recs])
        leader = np.array([r.trick.leader for r in recs])
        wrong = ((state.phase != PLAY) | (state.current_player != me)
                 | ((trick > 0) & (state.leader != leader)) | ((trick == 0) & (leader != -1) & (leader != me)))
        np.logical_or(failed, wrong, out=failed)
        return state, allowed

    # First replay: a full deal only to step through the passes (any deal of the unseen cards
    # will do); then the other seats hold only their known cards, and the plays tell which unseen
    # cards each of them may also have held.
    may_hold = np.ones((m, cards.NUM_CARDS, p), dtype=bool)
    _, allowed = replay(_scaffold(hidden, room, to_seats, failed), learn=True)
    # Second replay, on a full deal that respects what was learnt: the state observed.
    learnt = np.moveaxis(cards.to_mask(allowed[rows[:, None], others]), 1, 2)  # [M, 52, P - 1]
    may_hold[:, :, :p - 1] = learnt & to_seats[:, :, None]
    state, _ = replay(_place_all(hidden, room, may_hold, failed), learn=False)
    return state, me, failed


def _scaffold(hidden: np.ndarray, room: np.ndarray, to_seats: np.ndarray, failed: np.ndarray) -> np.ndarray:
    """``[M, H]`` holdings that merely fit: the hidden cards ``[M, 52]`` that may go to a seat
    (``to_seats``) dealt in card order to the seats by their ``room``, the rest to the dead pile
    (the last holder). The first replay needs no more than that (``worlds.place`` draws the
    second's); a record whose counts do not add up fails."""
    seat_room = room[:, :-1]
    rest = hidden & to_seats
    rank = np.cumsum(rest, axis=1) - 1  # each card's place among the cards that may go to a seat
    holder = (rank[:, :, None] >= np.cumsum(seat_room, axis=1)[:, None, :]).sum(axis=2)  # H - 1: dead pile
    holdings = np.stack([cards.from_mask(rest & (holder == h)) for h in range(room.shape[1])], axis=1)
    holdings[:, -1] |= cards.from_mask(hidden & ~to_seats)
    fits = (cards.count(holdings) == room).all(axis=1) & (hidden.sum(axis=1) == room.sum(axis=1))
    np.logical_or(failed, ~fits, out=failed)
    return np.where(fits[:, None], holdings, cards.NO_CARDS)


def _place_all(hidden: np.ndarray, room: np.ndarray, may_hold: np.ndarray, failed: np.ndarray) -> np.ndarray:
    """``worlds.place`` of one world per record that has not failed (fixed seed); a record whose
    cards cannot be placed fails. ``[M, H]`` holdings (zero for failed records)."""
    hands = np.zeros(room.shape, dtype=np.uint64)
    rows = np.flatnonzero(~failed)
    rng = np.random.default_rng(0)
    while rows.size:
        try:
            hands[rows] = worlds.place(hidden[rows], room[rows], may_hold[rows], rng)
            break
        except worlds.NoConsistentWorld as err:
            failed[rows[err.game]] = True
            rows = np.delete(rows, err.game)
    return hands


# ---------------------------------------------------------------------------------------------
# From an engine state to a record
# ---------------------------------------------------------------------------------------------


def from_state(state: State, plays: Sequence[tuple[int, int]] | None = None, seat: int | None = None,
               game: int = 0) -> dict:
    """The record of ``seat`` (default: the seat to act) in game ``game`` of ``state``.

    ``plays`` lists the ``(seat, card)`` of every card played in the current hand, in order; by
    default they are read from the state's ``history`` (which holds the pass picks first).
    """
    rules, p = state.rules, state.num_players
    seat = int(state.current_player[game]) if seat is None else int(seat)
    offset = int(rules.pass_offsets[state.hand_number[game] % len(rules.pass_cycle)])
    if plays is None:
        length = int(state.history_length[game])
        start = min(length, p * rules.pass_count if offset else 0)
        plays = list(zip(state.history_seat[game, start:length].tolist(), state.history[game, start:length].tolist()))
    playing = state.phase[game] == PLAY
    tricks, current = [], []
    for i in range(0, len(plays), p):
        group = list(plays[i: i + p])
        (tricks if len(group) == p else current).append(group)
    text = cards.card_text
    record = {
        "version": RECORD_VERSION,
        "rules": rules.to_dict(),
        "seat": seat,
        "hand_number": int(state.hand_number[game]),
        "scores": [int(s) for s in state.scores[game]],
        "phase": "play" if playing else "pass",
        "hand": [text(c) for c in cards.cards_of(state.hands[game, seat])],
        "passed": [text(c) for c in cards.cards_of(state.passed[game, seat])],
        "received": [text(c) for c in cards.cards_of(state.passed[game, (seat - offset) % p])]
        if playing and offset else [],
        "tricks": [{"leader": g[0][0], "cards": [text(c) for _, c in g]} for g in tricks],
        "trick": {"leader": current[0][0][0] if current else seat,
                  "cards": [text(c) for _, c in current[0]] if current else []},
    }
    return record
