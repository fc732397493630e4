"""Bots as a service: ``GET /api/v1/agents`` and ``POST /api/v1/act`` on seat records.

A game app that keeps its own game sends what one seat knows at its decision, as a *seat record*
(``docs/export.md``, ``hearts_env.seat_record``), and the name of an offered agent; the answer is
the card that agent plays there (and the policy's probabilities when the agent has them).

The record becomes the observation and legal mask through ``seat_record`` (a replay through the
engine, so an impossible record is refused with ``SeatRecordError``'s message), and the agent acts
on it exactly as in the arena. Work per request is bounded: the body is at most
:data:`MAX_BODY` bytes (checked before it is parsed, by ``limits.BodyLimit``), a record holds at most
one hand, and the answer is one decision. Agents are made once per (spec, rules) and kept in a
small cache; each is used by one caller at a time (its own lock), since an agent's random
generator or a search's buffers are its own.

:meth:`Bots.act_batch` decides many calls at once, the synchronous core of the service
(``batching`` gathers concurrent calls into it, in worker processes; the Ray Serve backend calls it
too): each record is parsed alone, the records of one agent and rules are replayed together
(``seat_record.encode_batch``) and decided by one call of the agent. Batching never changes an
answer. The bots and the greedy policies decide each row on its own, so a call gets the card it
would get alone. An agent that draws random numbers (:func:`draws_random_numbers`: ``random``, the
search players, a sampling policy) decides each call on its own, its generators reseeded from the
call's situation (:func:`call_seed`), so the same record gets the same card whatever else is
asked at the same time, and whatever was asked before.

Every refusal is a 4xx with a one-line ``detail``: an agent that is not offered, a malformed or
impossible record (422), an agent that does not play the record's rules (422), a body over 64 KiB
(413).
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents import AgentSpecError, make
from hearts_env import cards, observe, seat_record
from hearts_env.rules import PRESETS, Rules, RulesError
from hearts_env.seat_record import SeatRecordError

#: The largest request body accepted, in bytes (413 beyond it, before parsing).
MAX_BODY = 64 * 1024
#: Whole numbers in a record beyond this size are refused before the record is read (a hand number,
#: a score or a rules option that large describes no game; the engine's arrays are int64).
MAX_RECORD_NUMBER = 1_000_000
#: Agents kept made, per (spec, rules); the least recently used beyond it are dropped.
CACHE_SIZE = 64
#: Rows an agent decides at once in :meth:`Bots.act_batch` (:func:`decide_in_blocks`).
DECISION_BLOCK = 64
# What a record shaped in a way the parser did not foresee raises inside the engine's replay
# (a number too large for the engine's int64 arrays, say): the record's fault, refused in one line.
_MALFORMED = (ValueError, TypeError, OverflowError, KeyError, IndexError, AttributeError, RecursionError)


class BotError(Exception):
    """A refused request: HTTP ``status`` and a one-line ``detail``."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, headers

    def __reduce__(self):  # (pickled between the service's processes: the arguments are not just the message)
        return BotError, (self.status, self.detail, self.headers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BotError) and (self.status, self.detail) == (other.status, other.detail)

    def __hash__(self) -> int:
        return hash((self.status, self.detail))


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


def decide_in_blocks(agent: Any, observation: np.ndarray, mask: np.ndarray,
                     block: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`decide` on blocks of :data:`DECISION_BLOCK` rows, the last (or only) one padded with
    copies of its first row: a torch policy's matrix products round a row's numbers differently
    with the number of rows (its probabilities then differ in the sixth decimal, and a near tie
    could change its card), but not with the other rows of a block of a fixed size. So a row gets
    the same answer alone or among any others."""
    block = block or DECISION_BLOCK
    n = len(observation)
    actions = np.empty(n, dtype=np.int64)
    probabilities: np.ndarray | None = None
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        padded = np.concatenate([rows, np.full(block - len(rows), rows[0])])
        got, odds = decide(agent, observation[padded], mask[padded])
        actions[rows] = got[:len(rows)]
        if odds is not None:
            if probabilities is None:
                probabilities = np.zeros((n, odds.shape[1]), dtype=np.float64)
            probabilities[rows] = odds[:len(rows)]
    return actions, probabilities


def _parts(agent: Any, seen: set[int] | None = None) -> list[Any]:
    """The agent and the agents it is built from (a search's rollout, own and base players), each once."""
    seen = set() if seen is None else seen
    if id(agent) in seen:
        return []
    seen.add(id(agent))
    out = [agent]
    for value in vars(agent).values() if hasattr(agent, "__dict__") else ():
        if value is not agent and not isinstance(value, type) and callable(getattr(value, "act", None)):
            out += _parts(value, seen)
    return out


def _generators(agent: Any) -> list[Any]:
    """The random generators an agent and its parts draw from: a NumPy ``Generator`` kept as ``rng``
    (``random``, the search players) and the torch generator of a policy that samples its card
    (``sample=True``; a greedy policy's generator is never drawn from)."""
    out = []
    for part in _parts(agent):
        if isinstance(getattr(part, "rng", None), np.random.Generator):
            out.append(part)
        elif getattr(part, "sample", False) and callable(getattr(getattr(part, "generator", None), "manual_seed", None)):
            out.append(part)
    return out


def draws_random_numbers(agent: Any) -> bool:
    """Whether the agent's card can depend on a random generator (kept as described in
    :func:`_generators`); such an agent is decided one call at a time, reseeded per call."""
    return bool(_generators(agent))


def reseed(agent: Any, seed: int) -> None:
    """Restart every generator of the agent and its parts from ``seed`` (each part its own stream)."""
    for k, part in enumerate(_generators(agent)):
        if isinstance(getattr(part, "rng", None), np.random.Generator):
            part.rng = np.random.default_rng([seed, k])
        else:
            part.generator.manual_seed((seed + k) % 2**63)


def call_seed(observation: np.ndarray, mask: np.ndarray) -> int:
    """The seed of one call of an agent that draws random numbers: a hash of what its record says,
    as the observation and legal cards (so two spellings of one situation, ``"10H"`` or ``"TH"``,
    a preset name or its options, get the same seed)."""
    digest = hashlib.sha256(np.ascontiguousarray(observation, dtype=np.float32).tobytes()
                            + np.ascontiguousarray(mask, dtype=bool).tobytes()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


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


#: A call of the bots API: ``(agent spec, seat record)`` as the request gave them.
Call = tuple[Any, Any]


class Bots:
    """The bots API over the offered agents. ``search_time_limit`` (seconds) only words the
    refusal of a call whose deadline passed before its turn (:meth:`act_batch`)."""

    def __init__(self, offered: Sequence[str], info: dict[str, AgentInfo] | None = None,
                 search_time_limit: float | None = None):
        self.offered = list(offered)
        self.info = info if info is not None else describe(offered)
        self.cache = AgentCache()
        self.search_time_limit = search_time_limit

    def agents(self) -> dict[str, Any]:
        return {"agents": [self.info[spec].to_json() for spec in self.offered]}

    def act(self, spec: Any, record: Any) -> dict[str, Any]:
        """One call: the answer of :meth:`act_batch`, or its :class:`BotError` raised."""
        answer = self.act_batch([(spec, record)])[0]
        if isinstance(answer, BotError):
            raise answer
        return answer

    def act_batch(self, calls: Sequence[Call], deadlines: Sequence[float | None] | None = None
                  ) -> list[dict[str, Any] | BotError]:
        """The answer to each call (as :meth:`act` gives it) or its :class:`BotError`, in order.

        The calls of one agent and rules are replayed together and decided by one call of the
        agent; a call's answer is the one it gets alone (see the module docstring). ``deadlines``
        (``time.monotonic()`` values, None for none) refuse with 504 a call of an agent decided one
        call at a time whose turn comes after its deadline, instead of deciding it."""
        out: list[dict[str, Any] | BotError | None] = [None] * len(calls)
        groups: dict[tuple[str, int], list[tuple[int, seat_record.SeatRecord]]] = {}
        for i, (spec, record) in enumerate(calls):
            try:
                self.check_spec(spec)
                _check_numbers(record)
                parsed = seat_record.parse(record)
            except BotError as err:
                out[i] = err
                continue
            except (SeatRecordError, RulesError) as err:
                out[i] = BotError(422, _one_line(err))
                continue
            except _MALFORMED as err:
                out[i] = _malformed(err)
                continue
            groups.setdefault((spec, id(parsed.rules)), []).append((i, parsed))
        for (spec, _), members in groups.items():
            rows = [i for i, _ in members]
            try:
                agent, lock = self.cache.get(spec, members[0][1].rules)
            except BotError as err:
                for i in rows:
                    out[i] = err
                continue
            except (RulesError, *_MALFORMED) as err:
                for i in rows:
                    out[i] = BotError(422, _one_line(err)) if isinstance(err, RulesError) else _malformed(err)
                continue
            observation, mask, errors = _encode([parsed for _, parsed in members])
            good = [k for k, err in enumerate(errors) if err is None]
            for k, err in enumerate(errors):
                if err is not None:
                    out[rows[k]] = err
            if not good:
                continue
            try:
                if draws_random_numbers(agent):  # one call at a time, reseeded from its situation
                    for k in good:
                        deadline = deadlines[rows[k]] if deadlines is not None else None
                        if deadline is not None and time.monotonic() > deadline:
                            out[rows[k]] = self.late(spec)
                            continue
                        with lock:
                            reseed(agent, call_seed(observation[k], mask[k]))
                            actions, probabilities = decide(agent, observation[k:k + 1], mask[k:k + 1])
                        out[rows[k]] = _answer(spec, actions[0], None if probabilities is None else probabilities[0],
                                               mask[k])
                else:
                    with lock:
                        actions, probabilities = decide_in_blocks(agent, observation[good], mask[good])
                    for j, k in enumerate(good):
                        out[rows[k]] = _answer(spec, actions[j], None if probabilities is None else probabilities[j],
                                               mask[k])
            except Exception as err:  # the agent failed: its bug, not the request's
                failure = BotError(500, f"agent {spec!r} failed: {type(err).__name__}: {_one_line(err)}")
                for k in good:
                    if out[rows[k]] is None:
                        out[rows[k]] = failure
        return out  # type: ignore[return-value]

    def check_spec(self, spec: Any) -> None:
        """422 for an agent that is not offered here."""
        if not isinstance(spec, str) or spec not in self.offered:
            shown = spec if isinstance(spec, str) and len(spec) <= 60 else type(spec).__name__
            raise BotError(422, f"agent: {shown!r} is not offered here; offered: {', '.join(self.offered)}")

    def late(self, spec: str) -> BotError:
        """The 504 of a call whose search time limit ran out before it was decided."""
        limit = f" of {self.search_time_limit:g} s" if self.search_time_limit is not None else ""
        return BotError(504, f"agent {spec!r} did not decide this call within the search time limit{limit} "
                             "(--search-time-limit); no other card is given: retry later or ask a faster agent")


def _encode(parsed: list[seat_record.SeatRecord]) -> tuple[np.ndarray, np.ndarray, list[BotError | None]]:
    """``seat_record.encode_batch`` of parsed records, each failure a 422 :class:`BotError`. A record
    shaped in a way the replay did not foresee (an error other than ``SeatRecordError``) fails the
    batch: each record is then replayed alone, so only it is refused."""
    try:
        observation, mask, errors = seat_record.encode_batch(parsed)
        return observation, mask, [None if err is None else BotError(422, _one_line(err)) for err in errors]
    except (RulesError, *_MALFORMED):
        pass
    observation = np.zeros((len(parsed), observe.OBS_DIM), dtype=np.float32)
    mask = np.zeros((len(parsed), cards.NUM_CARDS), dtype=bool)
    out: list[BotError | None] = []
    for k, one in enumerate(parsed):
        try:
            observation[k:k + 1], mask[k:k + 1], errors = seat_record.encode_batch([one])
            out.append(None if errors[0] is None else BotError(422, _one_line(errors[0])))
        except RulesError as err:
            out.append(BotError(422, _one_line(err)))
        except _MALFORMED as err:
            out.append(_malformed(err))
    return observation, mask, out


def _answer(spec: str, action: Any, probabilities: np.ndarray | None, mask: np.ndarray) -> dict[str, Any] | BotError:
    action = int(action)
    if not (0 <= action < cards.NUM_CARDS and mask[action]):  # an agent's bug, not the request's
        return BotError(500, f"agent {spec!r} chose {action}, which is not a legal card")
    probs = None
    if probabilities is not None:
        probs = {cards.card_text(c): round(float(probabilities[c]), 6) for c in np.flatnonzero(mask)}
    return {"agent": spec, "card": cards.card_text(action), "action": action, "probabilities": probs}


def _malformed(err: BaseException) -> BotError:
    return BotError(422, f"seat record: not a record this server can use ({type(err).__name__}: {_one_line(err)})")


def _check_numbers(record: Any) -> None:
    """Refuse a record holding a whole number beyond :data:`MAX_RECORD_NUMBER` (walked without
    recursion: the JSON may be nested as deep as its parser allows). The walk names nothing until
    it finds such a number (it runs on every call); then a second walk says where it is."""
    stack = [record]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_RECORD_NUMBER:
            _refuse_number(record)


def _refuse_number(record: Any) -> None:
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
