"""Game records as JSON lines: save and load play records, replay arena and play records.

A record file is the arena's format (``hearts arena --records``): a header line, then one line
per game::

    {"type": "header", "format": "play", "record_version": 1, "rules": {...}, "rules_name": ...,
     "seed": 42, "agents": [{"label": "human", "spec": "human"}, {"label": "hard", ...}], ...}
    {"type": "game", "deal_seed": "1234...", "seed": 42, "hand_number": 0, "seats": [...],
     "specs": [...], "start_scores": [0, 0, 0, 0],
     "hands": [{"hand_number": 0, "pass": "left", "dealt": [["2C", ...], ...], "dead": [],
                "actions": [[0, "QS"], ...], "points": [3, 0, 23, 0], "moon": null}, ...],
     "points": [...], "scores": [...], "finished": false, "winner": null}

A play record holds one game; the hand being played when it was saved has ``"points": null``.
``deal_seed`` is a decimal string (it exceeds JavaScript's integer precision). A first hand dealt
from ``--deal`` carries ``"custom_deal": true`` and its ``dealt`` cards are used as they are; every
other hand must be what the engine deals from ``(deal_seed, hand_number)``, which loading checks.

Resuming and replaying never trust the recorded state: they rebuild it by stepping the recorded
actions through the engine from the game's seed (``Match.from_record``). The terminal shows a replay
(``hearts_app.terminal.replay``); the web server resumes its games from these records.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, Sequence

import hearts_env
from hearts_env import atomic_files
from hearts_env.rules import Rules, RulesError

from .game_lines import GameLineError, check_game, describe
from .match import Match, RecordMismatch

RECORD_FORMAT = "play"
RECORD_VERSION = 1
# Record files come from anywhere. The engine's replay checks what a record says, but a line of the
# wrong shape (a number where a list belongs) fails inside it with Python's own errors: those are
# the record's fault, reported in one line like every other unusable record (``hearts replay`` too).
MALFORMED = (TypeError, AttributeError, KeyError, IndexError, ValueError)
#: The most digits a number in a record may have (a seed has 20); Python's JSON reader would convert
#: up to 4,300 and then refuse with advice about ``sys.set_int_max_str_digits``.
MAX_DIGITS = 30


class _LongNumber(ValueError):
    pass


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise _LongNumber(f"a number of {digits} digits; a record's numbers have at most {MAX_DIGITS}")
    return int(text)


class RecordError(ValueError):
    """A record file that cannot be used (unreadable, not a record, or not what the engine replays)."""


class RecordFile:
    """A loaded record file: its header and its game lines."""

    def __init__(self, path: Path, header: dict[str, Any], games: list[dict[str, Any]]):
        self.path, self.header, self.games = path, header, games

    @property
    def is_play(self) -> bool:
        return self.header.get("format") == RECORD_FORMAT

    @property
    def rules(self) -> Rules:
        try:
            return Rules.from_dict(self.header["rules"])
        except (KeyError, TypeError, RulesError) as err:
            raise RecordError(f"{self.path}: the header has no usable rules ({err})") from None

    def game(self, number: int = 1) -> dict[str, Any]:
        """Game ``number`` (1-based), its shape checked (``game_lines.check_game``)."""
        if not 1 <= number <= len(self.games):
            raise RecordError(f"{self.path} holds {len(self.games)} game(s); there is no game {number}")
        game = self.games[number - 1]
        try:
            check_game(game, self.rules.num_players)
        except GameLineError as err:
            raise RecordError(f"{self.path}, game {number}: {err}") from None
        return game


def load(path: str | Path) -> RecordFile:
    path = Path(path)
    if path.exists() and not path.is_file():  # a folder, or a device such as /dev/zero that never ends
        raise RecordError(f"{path} is not a file; a game record is a JSON-lines file")
    try:
        numbered = [(n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                    if line.strip()]
    except OSError as err:
        raise RecordError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:  # a binary file, or text in another encoding (latin-1, ...)
        raise RecordError(f"{path}: not a game record (not UTF-8 text: byte {err.start + 1} is invalid)") from None
    try:
        rows = [json.loads(line, parse_int=_bounded_int) for _, line in numbered]
    except _LongNumber as err:
        raise RecordError(f"{path}: not a game record ({err})") from None
    except ValueError as err:  # JSONDecodeError
        raise RecordError(f"{path}: not JSON lines ({err})") from None
    except RecursionError:  # JSON nested deeper than the reader recurses
        raise RecordError(f"{path}: not a game record (JSON nested too deeply)") from None
    if not rows or not isinstance(rows[0], dict) or rows[0].get("type") != "header":
        raise RecordError(f"{path}: not a game record (the first line must be {{\"type\": \"header\", ...}})")
    for (number, _), row in zip(numbered[1:], rows[1:]):
        if not isinstance(row, dict):  # every line of a record is an object
            raise RecordError(f"{path}: not a game record (line {number} is {describe(row)}, not an object)")
    games = [r for r in rows[1:] if r.get("type") == "game"]
    if not games:
        raise RecordError(f"{path}: the record holds no game")
    return RecordFile(path, rows[0], games)


def header(match: Match, specs: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "header",
        "format": RECORD_FORMAT,
        "record_version": RECORD_VERSION,
        "hearts_lab_version": hearts_env.__version__,
        "episode": "game",
        "rules": match.rules.to_dict(),
        "rules_name": match.rules.name,
        "seed": match.seed,
        "agents": [{"label": s, "spec": s} for s in specs],
        "saved_at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def save(path: str | Path, match: Match, specs: Sequence[str]) -> Path:
    """Write the play record of ``match`` (seat specs ``specs``, ``"human"`` for a person); atomic."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    lines = [header(match, specs), match.game_record(specs, specs)]
    # a full disk: the record stays as it was, and no partial file is left beside it
    return atomic_files.write_text(path, "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def resume(path: str | Path) -> tuple[Match, dict[str, Any]]:
    """The match of a saved play record, rebuilt through the engine, and its game line."""
    record = load(path)
    if not record.is_play:
        raise RecordError(f"{record.path}: only play records (hearts play --save) can be resumed")
    game, rules = record.game(len(record.games)), record.rules
    try:
        match = Match.from_record(rules, game)
    except RecordMismatch as err:
        raise RecordError(f"{record.path}: {err}") from None
    except MALFORMED as err:
        raise RecordError(f"{record.path}: not a game record the engine can replay ({type(err).__name__}: {err})") from None
    specs = game.get("specs")
    if specs is not None and not (isinstance(specs, list) and all(isinstance(s, str) for s in specs)):
        raise RecordError(f"{record.path}: the game's specs are not a list of agent specs")
    return match, game
