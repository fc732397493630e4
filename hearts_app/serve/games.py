"""Web games: a :class:`Match` per game, its opponents' agents, its lock and its record on disk.

A game is the game session's :class:`hearts_app.session.match.Match` (the one engine, as in the terminal) with a
person at seat 0 and agents (``agents.make``) at the other seats. The agents play through
``Match.play_agents`` (the shared play loop) until it is the person's turn or the game is over.

Every change is saved at once with ``records.save`` (atomic) to ``GAMES_DIR/<id>.jsonl``, the
play mode's record (``hearts replay`` shows it, ``hearts play --resume`` continues it). A game
that is not in memory (the server restarted, or the game was idle and let go) is rebuilt from
that file with ``records.resume``, which replays its actions through the engine; its opponents are
the record's specs, and only if this server offers them.

Ids are ``secrets.token_urlsafe(16)`` (22 characters of ``A-Za-z0-9_-``) and every id a request
names is checked against :data:`ID_PATTERN` before it comes near a file name.

Concurrency: one ``threading.Lock`` per game, held for the whole of a request on that game (the
person's card, the agents' turns, the save and the view), so requests on one game never
interleave; requests on different games run in parallel (FastAPI runs these endpoints in its
thread pool).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import random
import re
import secrets
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents import AgentSpecError, make
from hearts_env import cards
from hearts_env.rule_space import refusal_parts
from hearts_env.rules import PRESETS, Rules, RulesError

from ..session import records
from ..session.match import Event, Match, refusal_reason, why_not
from . import view as views

HUMAN = 0
#: Game ids: what ``secrets.token_urlsafe(16)`` makes (any other text is refused before any file access).
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}")
#: Games kept in memory; beyond it the least recently used idle ones are let go (their files stay).
MAX_GAMES_IN_MEMORY = 512
#: Whole numbers in rules options are refused beyond this size (the engine's arrays are int64).
MAX_OPTION_NUMBER = 1_000_000
DEFAULT_OPPONENTS = ("easy", "normal", "hard")
#: The codes of the refusals other than a card's (``GameError.reason["code"]``), with the parts each
#: carries; the page (clients/web/static/i18n.js, ``reason.<code>``) and the browser's own back end
#: (clients/js/src/local_api.js) use the same.
REASON_CODES = {
    "invalid_setup": (),  # the preset, the rules or the number of opponents of a new game
    "opponent_not_offered": ("spec",),  # an opponent this server does not offer
    # an opponent whose network does not cover the game's rules (and, when known, the option it does not
    # cover: the field, the game's value and the values it covers, as rule_space.refusal_parts reads them)
    "opponent_cannot_play": ("spec", "field", "value", "covers"),
    "no_such_game": (),
    "game_unreadable": (),  # its saved copy is not a game this server can continue
    "record_not_ready": (),  # the record is given once the game is over
    "save_failed": (),  # the move was not made
    "opponent_failed": ("seat",),
}


INVALID_SETUP = {"code": "invalid_setup"}


class GameError(Exception):
    """A request about a game that cannot be done: an HTTP status and a one-line ``detail`` in English
    (``legal``: the legal cards, for a refused card; ``reason``: what went wrong as a code and its
    parts, for the page to word in its player's language: a refused card's ``match.refusal_reason``,
    or one of :data:`REASON_CODES`)."""

    def __init__(self, status: int, detail: str, legal: Sequence[str] | None = None,
                 reason: dict[str, Any] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.legal, self.reason = status, detail, legal, reason


@dataclasses.dataclass(eq=False)
class Game:
    id: str
    match: Match
    opponents: list[str]  # specs of seats 1.. (seat 0 is the person)
    agents: list[Any]  # one agent per opponent seat, in seat order
    path: Path
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    events: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # the last change's, as JSON
    closed: bool = False  # let go from memory: a request holding it looks the game up again

    @property
    def specs(self) -> list[str]:
        return ["human", *self.opponents]

    def view(self) -> dict[str, Any]:
        return views.view(self.id, self.match, self.opponents, self.events)


def agent_seed(seed: int | None, seat: int, actions_so_far: int) -> int:
    """The seed of a seat's agent, as ``hearts play`` derives it (the game seed, the seat, the
    actions played when the agent was made: a resumed game's random agents draw afresh)."""
    return int(np.random.SeedSequence([abs(int(seed or 0)), seat, actions_so_far]).generate_state(1)[0])


def default_opponents(offered: Sequence[str], num_players: int = 4) -> list[str]:
    """The opponents of a game that names none: easy, normal, hard (the last ones for fewer seats)."""
    pool = [s for s in DEFAULT_OPPONENTS if s in offered] or list(offered[:1])
    n = num_players - 1
    return pool[-n:] if len(pool) >= n else (pool * n)[:n]


def game_rules(preset: str, overrides: dict[str, Any] | None) -> Rules:
    """A preset with option overrides, validated by ``Rules`` (:class:`GameError` 422 naming the field)."""
    if preset not in PRESETS:
        raise GameError(422, f"preset: unknown rules preset {preset!r}; presets are: {', '.join(PRESETS)}",
                        reason=INVALID_SETUP)
    overrides = dict(overrides or {})
    if "preset" in overrides:
        raise GameError(422, "rules.preset: name the preset in \"preset\", not among the options",
                        reason=INVALID_SETUP)
    for key, value in overrides.items():
        numbers = value if isinstance(value, list) else [value]
        if any(isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_OPTION_NUMBER for v in numbers):
            raise GameError(422, f"rules.{key}: {value!r} is out of range (at most {MAX_OPTION_NUMBER:,})",
                            reason=INVALID_SETUP)
    try:
        rules = Rules.from_dict({"preset": preset, **overrides})
        if "name" not in overrides and not rules.same_game(preset):
            rules = rules.replace(name="custom")
    except RulesError as err:
        raise GameError(422, str(err), reason=INVALID_SETUP) from None
    return rules


class GameStore:
    """The server's games: created, looked up (from memory or from their record), played."""

    def __init__(self, offered: Sequence[str], games_dir: str | Path, seed: int | None = None,
                 max_in_memory: int = MAX_GAMES_IN_MEMORY):
        self.offered = list(offered)
        self.games_dir = Path(games_dir)
        self.games_dir.mkdir(parents=True, exist_ok=True)
        self.max_in_memory = max_in_memory
        self._games: collections.OrderedDict[str, Game] = collections.OrderedDict()
        self._lock = threading.Lock()  # guards _games and _loading
        self._loading: dict[str, threading.Lock] = {}  # one loader per id at a time
        self._seeds = random.Random(seed) if seed is not None else None  # game seeds when a request gives none

    # ---- creating ------------------------------------------------------------------------------

    def create(self, preset: str = "classic", overrides: dict[str, Any] | None = None,
               opponents: Sequence[str] | None = None, seed: int | None = None) -> dict[str, Any]:
        """A new game, saved, with the agents played up to the person's first decision; its view."""
        rules = game_rules(preset, overrides)
        n = rules.num_players - 1
        if opponents is None:
            opponents = default_opponents(self.offered, rules.num_players)
        opponents = list(opponents)
        if len(opponents) != n:
            raise GameError(422, f"opponents: this game has {n} opponent seat(s); {len(opponents)} given",
                            reason=INVALID_SETUP)
        for spec in opponents:
            self._check_offered(spec, "opponents")
        if seed is None:
            seed = self._seeds.randrange(2**31) if self._seeds is not None else secrets.randbelow(2**31)
        match = Match.new(rules, seed)
        agents = self._make_agents(opponents, match)
        while True:
            game_id = secrets.token_urlsafe(16)
            path = self.games_dir / f"{game_id}.jsonl"
            if not path.exists():
                break
        game = Game(game_id, match, opponents, agents, path)
        with game.lock:
            events = self._agents_play(game)
            self._save(game)
            game.events = views.public_events(events, match)
            with self._lock:
                self._games[game_id] = game
                self._let_go()
            return game.view()

    # ---- looking up ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, game_id: str) -> Iterator[Game]:
        """The game, its lock held (loaded from its record when it is not in memory)."""
        while True:
            game = self._get(game_id)
            game.lock.acquire()
            if not game.closed:
                break
            game.lock.release()  # let go from memory meanwhile: look it up again
        try:
            yield game
        finally:
            game.lock.release()

    def view(self, game_id: str) -> dict[str, Any]:
        with self.locked(game_id) as game:
            return game.view()

    def record_path(self, game_id: str) -> Path:
        """The record file of a game (it is saved after every change); 404 for an unknown id."""
        with self.locked(game_id) as game:
            return game.path

    def _get(self, game_id: str) -> Game:
        if not isinstance(game_id, str) or not ID_PATTERN.fullmatch(game_id):
            raise GameError(404, "no such game (a game id is 22 letters, digits, - and _)",
                            reason={"code": "no_such_game"})
        with self._lock:
            game = self._games.get(game_id)
            if game is not None:
                self._games.move_to_end(game_id)
                return game
            loader = self._loading.setdefault(game_id, threading.Lock())
        with loader:
            with self._lock:
                game = self._games.get(game_id)
                if game is not None:
                    return game
            try:
                game = self._load(game_id)
            finally:
                with self._lock:
                    self._loading.pop(game_id, None)
            with self._lock:
                self._games[game_id] = game
                self._let_go()
            return game

    def _load(self, game_id: str) -> Game:
        path = self.games_dir / f"{game_id}.jsonl"
        if not path.is_file():
            raise GameError(404, f"no game {game_id}", reason={"code": "no_such_game"})

        def unusable(why: str) -> GameError:
            return GameError(409, f"game {game_id} cannot be continued: {why.replace(str(path), 'its record')}",
                             reason={"code": "game_unreadable"})

        try:
            match, line = records.resume(path)
        except (records.RecordError, RulesError) as err:
            raise unusable(str(err)) from None
        specs = line.get("specs")
        p = match.num_players
        if not isinstance(specs, list) or len(specs) != p or specs[0] != "human":
            raise unusable(f"its record does not name the person at seat 0 and {p - 1} opponent(s)")
        opponents = list(specs[1:])
        if match.over:  # nobody plays on: shown (and its record given) whatever this server offers
            return Game(game_id, match, opponents, [], path)
        for spec in opponents:
            if spec not in self.offered:
                raise unusable(f"its opponent {spec!r} is not offered by this server "
                               f"(offered: {', '.join(self.offered)}; see hearts serve --agents)")
        try:
            agents = self._make_agents(opponents, match)
        except GameError as err:
            raise unusable(err.detail) from None
        return Game(game_id, match, opponents, agents, path)

    def _let_go(self) -> None:
        """Keep at most ``max_in_memory`` games, letting go of the least recently used idle ones (called
        with ``_lock`` held; a game in use is skipped)."""
        for game_id in list(self._games):
            if len(self._games) <= self.max_in_memory:
                return
            game = self._games[game_id]
            if game.lock.acquire(blocking=False):
                game.closed = True
                del self._games[game_id]
                game.lock.release()

    # ---- playing -------------------------------------------------------------------------------

    def play(self, game_id: str, card: int) -> dict[str, Any]:
        """The person plays (or picks to pass) ``card``; the agents play on; the game is saved."""
        with self.locked(game_id) as game:
            m = game.match
            if m.over:
                raise GameError(409, "the game is over", legal=[], reason={"code": "game_over"})
            events: list[Event] = []
            if m.to_act != HUMAN:  # an agent failed in an earlier request: let the agents try again
                events += self._agents_play(game)
                game.events = views.public_events(events, m)
            if m.over or m.to_act != HUMAN:
                raise GameError(409, "it is not your turn", legal=[], reason={"code": "not_your_turn"})
            legal = m.legal()
            if card not in legal:
                raise GameError(409, refusal(m, card, legal), legal=views.texts(legal),
                                reason=refusal_reason(m, card, legal))
            events += m.step(card)
            try:
                events += self._agents_play(game)
            finally:
                self._save_or_restore(game)
                game.events = views.public_events(events, game.match)
            return game.view()

    def _agents_play(self, game: Game) -> list[Event]:
        m = game.match
        if m.over or m.to_act == HUMAN:
            return []
        seating = np.array([-1, *range(len(game.agents))])
        try:
            return m.play_agents(game.agents, seating)
        except Exception as err:  # an agent's bug: the game stays at that agent's turn (and is saved)
            self._save(game)
            seat = max(m.to_act, 1)
            message = str(err).splitlines()[0] if str(err) else ""
            raise GameError(500, f"the opponent at seat {seat} ({game.opponents[seat - 1]}) failed: "
                                 f"{type(err).__name__}: {message}",
                            reason={"code": "opponent_failed", "seat": seat}) from err

    def _make_agents(self, opponents: Sequence[str], match: Match) -> list[Any]:
        played = sum(len(h["actions"]) for h in match.hands)
        out = []
        for seat, spec in enumerate(opponents, 1):
            try:
                out.append(make(spec, seed=agent_seed(match.seed, seat, played), rules=match.rules))
            except AgentSpecError as err:  # e.g. a trained policy asked to play other rules
                reason = {"code": "opponent_cannot_play", "spec": spec, **(refusal_parts(str(err)) or {})}
                raise GameError(422, f"opponents: {err}", reason=reason) from None
        return out

    def _check_offered(self, spec: Any, where: str) -> None:
        if not isinstance(spec, str) or spec not in self.offered:
            raise GameError(422, f"{where}: {spec!r} is not offered here; offered: {', '.join(self.offered)}",
                            reason={"code": "opponent_not_offered", "spec": str(spec)[:80]})

    def _save(self, game: Game) -> None:
        try:
            records.save(game.path, game.match, game.specs)
        except OSError as err:
            raise GameError(500, f"cannot save the game: {err.strerror or err}", reason={"code": "save_failed"}) from None

    def _save_or_restore(self, game: Game) -> None:
        """Save the game after a move; when the save fails, put the game back as it was last saved
        (the move is not made, so trying it again is answered as the first try would have been)."""
        try:
            self._save(game)
        except GameError as err:
            saved = self._load(game.id)
            game.match, game.agents = saved.match, saved.agents
            raise GameError(500, f"{err.detail}; the card was not played, try it again", reason=err.reason) from None


def refusal(match: Match, card: int, legal: Sequence[int]) -> str:
    """Why the person may not take ``card`` now, in words (the engine decided; ``why_not`` explains)."""
    reason = why_not(match, card, legal)
    if reason.startswith(("you do not hold", "you already chose")):
        return reason
    text = cards.card_symbol_text(card)
    if match.passing:
        return f"{text} cannot be passed" + (f": {reason}" if reason else "")
    return f"{text} cannot be played now" + (f": {reason}" if reason else "")
