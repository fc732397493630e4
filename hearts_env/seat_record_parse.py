"""Reading and writing seat records: parsing a record into a checked :class:`SeatRecord`, with the
checks that need no replay (keys, types, card counts, cards in two places), and the record of an
engine state (:func:`from_state`). The format is ``docs/export.md``'s; ``seat_record`` is the
package's door to it, and ``seat_record_replay`` rebuilds a record's state.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import cards
from .rules import Rules, RulesError
from .state import PLAY, State

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


def fail(message: str) -> SeatRecordError:
    return SeatRecordError(f"seat record: {message}")


def _int(data: Mapping, key: str, low: int, high: int | None = None) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise fail(f"{key} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f"{low} or more"
        raise fail(f"{key} must be {span}, got {value}")
    return int(value)


_CARD_IDS = {cards.card_text(c): c for c in range(cards.NUM_CARDS)}  # the usual texts, read at once


def _cards(value: Any, where: str, deck: np.uint64) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        raise fail(f"{where} must be a list of cards such as [\"QS\", \"TH\"], got {value!r}")
    ids: list[int] = []
    for item in value:
        card = _CARD_IDS.get(item) if type(item) is str else None
        if card is None:
            if isinstance(item, bool) or not isinstance(item, (str, int, np.integer)):
                raise fail(f"{where}: {item!r} is not a card")
            try:
                card = cards.parse_card(item)
            except ValueError as err:
                raise fail(f"{where}: {err}") from None
        if card in ids:
            raise fail(f"{where}: {cards.card_text(card)} is listed twice")
        if not int(deck) >> card & 1:
            raise fail(f"{where}: {cards.card_text(card)} is not in this game's deck")
        ids.append(card)
    return tuple(ids)


def _trick(value: Any, where: str, p: int, deck: np.uint64) -> Trick:
    if (not isinstance(value, (dict, Mapping))  # (dict first: the abstract check is slow)
            or set(value) - {"leader", "cards"} or "cards" not in value):
        raise fail(f"{where} must be an object {{\"leader\": SEAT, \"cards\": [...]}}, got {value!r}")
    leader = value.get("leader")
    if leader is None:
        if value["cards"]:
            raise fail(f"{where}: a trick with cards needs its leader")
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
            raise fail(f"not valid JSON{hint}: {err}") from None
        except RecursionError:
            raise fail("not valid JSON: nested too deeply") from None
        except ValueError:  # a number of more digits than Python converts
            raise fail(f"not valid JSON: a number of more than {sys.get_int_max_str_digits():,} digits") from None
    if not isinstance(record, (dict, Mapping)):
        raise fail(f"a record is a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise fail(f"missing {', '.join(missing)} (a record needs {', '.join(REQUIRED_KEYS)})")
    unknown = sorted(set(record) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise fail(f"unknown key(s) {', '.join(unknown)}; the keys are {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)}")
    if record.get("format", RECORD_FORMAT) != RECORD_FORMAT:
        raise fail(f"format is {record['format']!r}, expected {RECORD_FORMAT!r}")
    if isinstance(record["version"], bool) or record["version"] != RECORD_VERSION:
        raise fail(f"version {record['version']!r} is not supported (this reader reads version {RECORD_VERSION})")
    if not isinstance(record["rules"], (dict, Mapping)):
        raise fail("rules must be an object (Rules.to_dict(), or {\"preset\": \"classic\"})")
    try:
        rules = _rules(record["rules"])
    except RulesError as err:
        raise fail(f"rules: {err}") from None
    p, deck = rules.num_players, rules.deck_bits
    seat = _int(record, "seat", 0, p - 1)
    hand_number = _int(record, "hand_number", 0)
    scores = record["scores"]
    if (not isinstance(scores, (list, tuple)) or len(scores) != p
            or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in scores)):
        raise fail(f"scores must be {p} integers (game totals before this hand, by seat), got {scores!r}")
    if record["phase"] not in ("pass", "play"):
        raise fail(f"phase must be \"pass\" or \"play\", got {record['phase']!r}")
    tricks = record.get("tricks", [])
    if not isinstance(tricks, (list, tuple)):
        raise fail("tricks must be a list of finished tricks")
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
        raise fail(f"{path} is not a file")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise fail(f"{path} holds {path.stat().st_size:,} bytes; a record is at most {MAX_RECORD_BYTES:,}")
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise fail(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise fail(f"{path} is not UTF-8 text (byte {err.start + 1} is invalid)") from None


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
            raise fail(f"phase is \"pass\" but hand {r.hand_number} has no pass "
                        f"(pass direction {rules.pass_direction(r.hand_number)!r})")
        if r.tricks or r.trick.cards or r.received:
            raise fail("phase is \"pass\": no card has been played or received yet (tricks, trick and "
                        "received must be empty)")
        if len(r.hand) != size:
            raise fail(_count_message(len(r.hand), size, "before the exchange every seat holds"))
        if not set(r.passed) <= hand:
            outside = sorted(set(r.passed) - hand)
            raise fail(f"passed: {cards.format_cards(outside)} not in the hand (during the pass the chosen "
                        "cards stay in the hand until the exchange)")
        if len(r.passed) >= need:
            raise fail(f"phase is \"pass\" but {len(r.passed)} cards are already chosen: a seat chooses "
                        f"{need}, and after its last pick it is no longer its turn")
        return
    for t, trick in enumerate(r.tricks):
        if len(trick.cards) != p:
            raise fail(f"tricks[{t}] has {len(trick.cards)} cards; a finished trick has {p} "
                        "(the unfinished one goes in \"trick\")")
    if len(r.trick.cards) >= p:
        raise fail(f"trick has {len(r.trick.cards)} cards; the current trick has at most {p - 1} "
                    "(a full trick belongs in \"tricks\")")
    if len(r.tricks) >= size:
        raise fail(f"{len(r.tricks)} tricks are finished: the hand is over and nobody is to act")
    if offset and (len(r.passed) != need or len(r.received) != need):
        raise fail(f"hand {r.hand_number} passes {rules.pass_direction(r.hand_number)}: after the exchange "
                    f"passed and received hold {need} cards each, got {len(r.passed)} and {len(r.received)}")
    if not offset and (r.passed or r.received):
        raise fail(f"hand {r.hand_number} has no pass, so passed and received must be empty")
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
            raise fail(f"{cards.card_text(card)} appears twice: {where(card)} and {place}")
        seen.add(card)
    mine = [c for _, s, c in plays if s == r.seat]
    held = len(r.hand) + len(mine)
    if held != size:
        raise fail(_count_message(held, size, "your hand and the cards you played must make the"))
    if len(r.hand) != size - len(r.tricks):
        raise fail(f"after {len(r.tricks)} finished tricks it is seat {r.seat}'s turn only if it holds "
                    f"{size - len(r.tricks)} cards, but the hand lists {len(r.hand)}")
    for card in r.passed:
        if card in hand or card in mine:
            raise fail(f"passed: {cards.card_text(card)} was passed away but is {where(card)}")
    receiver = (r.seat + offset) % p
    passed = set(r.passed)
    for t, seat, card in plays:
        if card in passed and seat != receiver:
            raise fail(f"{cards.card_text(card)} was passed to seat {receiver} but is played by seat {seat}")
    for card in r.received:
        if card not in hand and card not in mine:
            raise fail(f"received: {cards.card_text(card)} is neither in the hand nor among the cards played by "
                        f"seat {r.seat}")


def _count_message(got: int, size: int, what: str) -> str:
    gap = size - got
    more = f"{gap} missing" if gap > 0 else f"{-gap} too many"
    return f"{what} {size} cards of a {size}-card hand, got {got} ({more})"


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
