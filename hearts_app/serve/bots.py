"""Bots as a service: ``GET /api/v1/agents`` and ``POST /api/v1/act`` on seat records.

A game app that keeps its own game sends what one seat knows at its decision, as a *seat record*
(``docs/export.md``, ``hearts_env.seat_record``), and the name of an offered agent; the answer is
the card that agent plays there (and the policy's probabilities when the agent has them).

The record becomes the observation and legal mask through ``seat_record`` (a replay through the
engine, so an impossible record is refused with ``SeatRecordError``'s message), and the agent acts
on it exactly as in the arena. Work per request is bounded: the body is at most
:data:`MAX_BODY` bytes (checked before it is parsed, by ``app.BodyLimit``), a record holds at most
one hand, and the answer is one decision. Agents are made once per (spec, rules) and kept in a
small cache; each is used by one request at a time (its own lock), since an agent's random
generator or a search's buffers are its own.

Every refusal is a 4xx with a one-line ``detail``: an agent that is not offered, a malformed or
impossible record (422), an agent that does not play the record's rules (422), a body over 64 KiB
(413).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents import AgentSpecError, make
from hearts_env import cards, seat_record
from hearts_env.rules import PRESETS, Rules, RulesError
from hearts_env.seat_record import SeatRecordError

#: The largest request body accepted, in bytes (413 beyond it, before parsing).
MAX_BODY = 64 * 1024
#: Whole numbers in a record beyond this size are refused before the record is read (a hand number,
#: a score or a rules option that large describes no game; the engine's arrays are int64).
MAX_RECORD_NUMBER = 1_000_000
#: Agents kept made, per (spec, rules); the least recently used beyond it are dropped.
CACHE_SIZE = 64
# What a record shaped in a way the parser did not foresee raises inside the engine's replay
# (a number too large for the engine's int64 arrays, say): the record's fault, refused in one line.
_MALFORMED = (ValueError, TypeError, OverflowError, KeyError, IndexError, AttributeError, RecursionError)


class BotError(Exception):
    """A refused request: HTTP ``status`` and a one-line ``detail``."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


@dataclasses.dataclass(frozen=True)
class AgentInfo:
    spec: str
    presets: tuple[str, ...]  # the presets it plays
    probabilities: bool

    @property
    def rules(self) -> str | None:
        """None when it plays every preset, else the (first) preset it plays."""
        if set(self.presets) == set(PRESETS):
            return None
        return self.presets[0] if self.presets else "custom"

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "rules": self.rules, "presets": list(self.presets),
                "probabilities": self.probabilities}


def has_probabilities(agent: Any) -> bool:
    """Whether the agent is a policy whose card probabilities :func:`decide` can report: it has
    ``policy(observation, mask) -> (actions, probabilities)`` (``ckpt:`` and ``onnx:`` agents)."""
    return callable(getattr(agent, "policy", None))


def decide(agent: Any, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``(actions [N], probabilities [N, 52] or None)``: what the agent plays, and how likely it
    thought each card when it is a policy."""
    if has_probabilities(agent):
        actions, probabilities = agent.policy(observation, mask)
        return np.asarray(actions, dtype=np.int64), np.asarray(probabilities, dtype=np.float64)
    return np.asarray(agent.act(observation, mask), dtype=np.int64), None


def describe(offered: Sequence[str]) -> dict[str, AgentInfo]:
    """Each offered spec, made once for every preset: which presets it plays and whether it gives
    probabilities. An offered spec that plays no preset and cannot be made at all raises
    ``AgentSpecError`` (the server refuses to start)."""
    out = {}
    for spec in offered:
        presets, agent, error = [], None, None
        for name in PRESETS:
            try:
                made = make(spec, seed=0, rules=Rules.preset(name))
            except AgentSpecError as err:
                error = error or err
                continue
            presets.append(name)
            agent = agent or made
        if agent is None:  # a model made for rules of its own (no preset): still usable on those
            try:
                agent = make(spec, seed=0)
            except AgentSpecError:
                raise error from None
        out[spec] = AgentInfo(spec, tuple(presets), has_probabilities(agent))
    return out


def _rules_key(rules: Rules) -> str:
    data = rules.to_dict()
    data.pop("name", None)  # the label: same options, same game (Rules.same_game)
    return json.dumps(data, sort_keys=True)


class AgentCache:
    """Agents made once per (spec, rules), least recently used dropped beyond ``size``. A spec
    that cannot play some rules is remembered too, so a refusal costs nothing the next time."""

    def __init__(self, size: int = CACHE_SIZE):
        self.size = size
        self._items: collections.OrderedDict[tuple[str, str], tuple[Any, threading.Lock] | str] = \
            collections.OrderedDict()
        self._lock = threading.Lock()
        self._making: dict[tuple[str, str], threading.Lock] = collections.defaultdict(threading.Lock)

    def get(self, spec: str, rules: Rules) -> tuple[Any, threading.Lock]:
        key = (spec, _rules_key(rules))
        with self._lock:
            item = self._items.get(key)
            maker = self._making[key]
        if item is None:
            with maker:  # one request makes it; the others wait for it
                with self._lock:
                    item = self._items.get(key)
                if item is None:
                    try:
                        item = (make(spec, seed=0, rules=rules), threading.Lock())
                    except AgentSpecError as err:
                        item = str(err)
                    with self._lock:
                        self._items[key] = item
                        self._making.pop(key, None)
                        while len(self._items) > self.size:
                            self._items.popitem(last=False)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
        if isinstance(item, str):
            raise BotError(422, f"agent: {item}")
        return item


class Bots:
    """The bots API over the offered agents."""

    def __init__(self, offered: Sequence[str], info: dict[str, AgentInfo] | None = None):
        self.offered = list(offered)
        self.info = info if info is not None else describe(offered)
        self.cache = AgentCache()

    def agents(self) -> dict[str, Any]:
        return {"agents": [self.info[spec].to_json() for spec in self.offered]}

    def act(self, spec: Any, record: Any) -> dict[str, Any]:
        if not isinstance(spec, str) or spec not in self.offered:
            shown = spec if isinstance(spec, str) and len(spec) <= 60 else type(spec).__name__
            raise BotError(422, f"agent: {shown!r} is not offered here; offered: {', '.join(self.offered)}")
        _check_numbers(record)
        try:
            parsed = seat_record.parse(record)
            agent, lock = self.cache.get(spec, parsed.rules)
            observation, mask = seat_record.encode([parsed])
        except (SeatRecordError, RulesError) as err:
            raise BotError(422, _one_line(err)) from None
        except BotError:
            raise
        except _MALFORMED as err:
            raise BotError(422, f"seat record: not a record this server can use ({type(err).__name__}: "
                                f"{_one_line(err)})") from None
        with lock:
            actions, probabilities = decide(agent, observation, mask)
        action = int(actions[0])
        if not (0 <= action < cards.NUM_CARDS and mask[0, action]):  # an agent's bug, not the request's
            raise BotError(500, f"agent {spec!r} chose {action}, which is not a legal card")
        probs = None
        if probabilities is not None:
            probs = {cards.card_text(c): round(float(probabilities[0, c]), 6) for c in np.flatnonzero(mask[0])}
        return {"agent": spec, "card": cards.card_text(action), "action": action, "probabilities": probs}


def _check_numbers(record: Any) -> None:
    """Refuse a record holding a whole number beyond :data:`MAX_RECORD_NUMBER` (walked without
    recursion: the JSON may be nested as deep as its parser allows)."""
    stack = [("record", record)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            stack += [(f"{where}.{key}" if where != "record" else str(key), item) for key, item in value.items()]
        elif isinstance(value, list):
            stack += [(f"{where}[{i}]", item) for i, item in enumerate(value)]
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_RECORD_NUMBER:
            shown = str(value) if len(str(value)) <= 30 else f"a {len(str(abs(value)))}-digit number"
            raise BotError(422, f"seat record: {where[:80]}: {shown} is out of range (at most {MAX_RECORD_NUMBER:,})")


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    line = text[0] if text else type(err).__name__
    return line if len(line) <= 500 else line[:497] + "..."
