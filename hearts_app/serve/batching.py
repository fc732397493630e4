"""The bots API's calls gathered into batches and decided off the event loop: ``POST /api/v1/act`` at scale.

``BotService.act(spec, record)`` is what the async ``/act`` route awaits. A call goes on its agent's
queue; whenever a decider slot is free, everything queued for one agent at that moment (at most
``max_batch`` calls) is taken as one batch and decided by :meth:`bots.Bots.act_batch` (the records
replayed together by ``seat_record.encode_batch``, then one call of the agent), and each call's
future gets its own answer or refusal. An idle service decides a lone call at once; calls that
arrive meanwhile form the next batch. Agents take turns (round robin) when several have calls queued.

Deciders (``slots``: batches decided at once):

* :class:`InProcess`: one thread of this process (``workers=0``; what the tests and the Ray Serve
  replicas use): the event loop stays free for the other routes between the GIL's switches;
* :class:`WorkerPool`: ``workers`` processes (``hearts serve --workers N``, default the number of
  cores), each with its own agents, since the compiled code holds the GIL. Each worker makes every
  offered agent and decides a few records of every preset it plays before the server starts
  listening (:meth:`WorkerPool.start` waits for all of them), so no call pays for loading a model or
  compiling a kernel. A worker that dies is replaced, its calls refused with 503.

Bounds, each answered at once with one line (:class:`~.bots.BotError`):

* ``max_pending`` calls in flight (queued or being decided) at most; the next is refused with 503
  and ``Retry-After``, so the latency of the accepted calls stays bounded instead of every call's
  growing with the load; the other routes never wait on this queue;
* the search players (``agents.is_slow``) are decided one call per batch, on at most ``slots - 1``
  slots when there are two or more (the other agents keep a slot), within ``search_time_limit``
  seconds of the call's arrival: a call that cannot be answered by then is refused (503 at once
  when the searches queued ahead of it already take longer, by the recent time per search; 504
  when its time runs out while it waits or is searched), never answered with another card.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import dataclasses
import functools
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from agents import is_slow
from export.situations import sample_records
from hearts_env.rules import Rules

from .bots import AgentInfo, BotError, Bots, Call

#: Calls in flight for /act beyond which the service answers 503 (``--max-pending``).
DEFAULT_MAX_PENDING = 128
#: The most calls decided in one batch.
DEFAULT_MAX_BATCH = 64
#: Seconds a search player's call may take from its arrival (``--search-time-limit``).
DEFAULT_SEARCH_TIME_LIMIT = 10.0
#: The Retry-After of a 503, in seconds.
RETRY_AFTER = 1
#: Seconds the workers may take to start and warm up together (a cold Numba cache compiles for minutes).
START_TIMEOUT = 900.0


@functools.cache
def _warm_records(preset: str) -> tuple[dict, ...]:
    return tuple(sample_records(Rules.preset(preset), 3, seed=0, games=1))


def warm_calls(bots: Bots) -> list[Call]:
    """A pass and play records of every preset each offered agent plays (one record for a search
    player): deciding them makes and caches the agents and compiles every kernel on the way."""
    calls: list[Call] = []
    for spec in bots.offered:
        for name in bots.info[spec].presets:
            picked = list(_warm_records(name))
            if is_slow(spec):
                picked = [r for r in picked if r["phase"] == "play"][:1] or picked[:1]
            calls += [(spec, record) for record in picked]
    return calls


def warm(bots: Bots) -> None:
    """Decide :func:`warm_calls`, in one batch and one by one (both paths compiled)."""
    calls = warm_calls(bots)
    bots.act_batch(calls)
    for call in calls[:1]:
        bots.act_batch([call])


# ---------------------------------------------------------------------------------------------
# Deciders
# ---------------------------------------------------------------------------------------------


class InProcess:
    """Batches decided by ``bots`` in one thread of this process."""

    slots = 1

    def __init__(self, bots: Bots):
        self.bots = bots
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        warm(self.bots)

    async def decide(self, calls: list[Call], deadlines: list[float | None]) -> list[dict | BotError]:
        with self._lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hearts-bots")
            executor = self._executor
        return await asyncio.wrap_future(executor.submit(self.bots.act_batch, calls, deadlines))

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


# The worker process's Bots (set by _start_worker; each worker has its own agents).
_worker_bots: Bots | None = None


def _start_worker(offered: list[str], info: dict[str, AgentInfo], search_time_limit: float | None,
                  barrier) -> None:
    """A worker's start: one thread for torch, its own Bots, every agent made and warmed, then (at
    the service's start) wait until every worker is warm, so the service starts listening only then."""
    global _worker_bots
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # (one thread each: the workers are the parallelism)
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    _worker_bots = Bots(offered, info, search_time_limit=search_time_limit)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    warm(_worker_bots)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    if barrier is not None:
        barrier.wait(START_TIMEOUT)


def _worker_act_batch(calls: list[Call], deadlines: list[float | None]) -> list[dict | BotError]:
    return _worker_bots.act_batch(calls, deadlines)


def _worker_ready() -> int:
    return os.getpid()


class WorkerPool:
    """Batches decided in ``workers`` processes (spawned: a fresh interpreter each), each with its own
    agents, made and warmed at start."""

    def __init__(self, bots: Bots, workers: int):
        if workers < 1:
            raise ValueError(f"workers must be 1 or more, got {workers}")
        self.bots, self.slots = bots, workers
        self._context = multiprocessing.get_context("spawn")
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self.pids: list[int] = []

    def _new_executor(self, barrier) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            self.slots, mp_context=self._context, initializer=_start_worker,
            initargs=(self.bots.offered, self.bots.info, self.bots.search_time_limit, barrier))

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start every worker and return once each has warmed up (they wait for each other at a
        barrier, so each of the ``workers`` first tasks runs in a different, warm process)."""
        barrier = self._context.Barrier(self.slots)
        executor = self._new_executor(barrier)
        try:
            ready = [executor.submit(_worker_ready) for _ in range(self.slots)]
            self.pids = [f.result(timeout) for f in ready]
        except BaseException:
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        with self._lock:
            self._executor = executor

    async def decide(self, calls: list[Call], deadlines: list[float | None]) -> list[dict | BotError]:
        with self._lock:
            if self._executor is None:  # closed, or a worker died: fresh workers (they warm up first)
                self._executor = self._new_executor(None)
            executor = self._executor
        try:
            return await asyncio.wrap_future(executor.submit(_worker_act_batch, calls, deadlines))
        except BrokenProcessPool:
            with self._lock:
                if self._executor is executor:
                    self._executor = None
            executor.shutdown(wait=False, cancel_futures=True)
            failed = BotError(503, "a worker process of the bots stopped and is being replaced; retry shortly",
                              headers={"Retry-After": str(RETRY_AFTER)})
            return [failed] * len(calls)

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------------------------
# The batching queue
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Pending:
    spec: str
    record: Any
    future: asyncio.Future
    deadline: float | None


class BotService:
    """The bots API's ``/act`` calls, batched per agent and decided by ``decider`` (see the module
    docstring). ``bots`` (this process's) checks the agent's name before a call is queued."""

    def __init__(self, bots: Bots, decider: InProcess | WorkerPool | None = None,
                 max_pending: int = DEFAULT_MAX_PENDING, max_batch: int = DEFAULT_MAX_BATCH,
                 search_time_limit: float | None = DEFAULT_SEARCH_TIME_LIMIT):
        if max_pending < 1 or max_batch < 1:
            raise ValueError(f"max_pending and max_batch must be 1 or more, got {max_pending}, {max_batch}")
        if search_time_limit is not None and not search_time_limit > 0:
            raise ValueError(f"search_time_limit must be positive seconds, got {search_time_limit}")
        self.bots = bots
        self.bots.search_time_limit = search_time_limit
        self.decider = decider if decider is not None else InProcess(bots)
        self.max_pending, self.max_batch, self.search_time_limit = max_pending, max_batch, search_time_limit
        self.slots = self.decider.slots
        self.slow_slots = max(1, self.slots - 1)
        self.slow = {spec for spec in bots.offered if is_slow(spec)}
        self.seconds_per_search: dict[str, float] = {}  # recent seconds per call, by search player
        self.batches = 0  # batches decided (tests and the load test's curiosity)
        self.decided = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Warm the decider up (blocking: before the server listens)."""
        self.decider.start()

    def close(self) -> None:
        self.decider.close()

    @property
    def pending(self) -> int:
        """Calls in flight: queued or being decided."""
        return self._pending if self._loop is not None else 0

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # (a test client may run each request on a loop of its own)
            self._loop = loop
            self._queues: collections.OrderedDict[str, collections.deque[_Pending]] = collections.OrderedDict()
            self._pending = self._busy = self._busy_slow = 0

    async def act(self, spec: Any, record: Any) -> dict[str, Any]:
        """The answer to one call, decided in a batch with the calls of the same agent queued with
        it; raises :class:`BotError` (a refusal, a 503 when busy, a 504 past the time limit)."""
        self.refuse_if_busy()
        self.bots.check_spec(spec)
        deadline = None
        if spec in self.slow and self.search_time_limit is not None:
            self._refuse_a_search_that_cannot_finish(spec)
            deadline = time.monotonic() + self.search_time_limit
        future = self._loop.create_future()
        self._queues.setdefault(spec, collections.deque()).append(_Pending(spec, record, future, deadline))
        self._pending += 1
        self._pump()
        try:
            if deadline is None:
                answer = await asyncio.shield(future)  # (a client that goes away leaves its call to finish)
            else:
                answer = await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            raise self.bots.late(spec) from None
        if isinstance(answer, BotError):
            raise answer
        return answer

    def refuse_if_busy(self) -> None:
        """The 503 of a call beyond ``max_pending`` calls in flight (raised; checked before anything
        else of the call is read, so a refusal costs as little as possible)."""
        self._bind()
        if self._pending >= self.max_pending:
            raise BotError(503, f"the bots are busy: {self._pending} calls are in flight, the most this server takes "
                                f"(--max-pending {self.max_pending}); retry after {RETRY_AFTER} s",
                           headers={"Retry-After": str(RETRY_AFTER)})

    def _refuse_a_search_that_cannot_finish(self, spec: str) -> None:
        """503 at once when the searches queued and running ahead of this one already take longer than the
        time limit on the search slots, by the recent seconds per search of each player."""
        ahead = sum(self.seconds_per_search.get(s, 0.0) * len(q) for s, q in self._queues.items() if s in self.slow)
        ahead += self._busy_slow * max(self.seconds_per_search.values(), default=0.0) / 2
        own = self.seconds_per_search.get(spec, 0.0)
        wait = ahead / self.slow_slots + own
        if wait > self.search_time_limit:
            raise BotError(503, f"agent {spec!r}: the searches queued ahead would take about {wait:.1f} s, over the "
                                f"search time limit of {self.search_time_limit:g} s (--search-time-limit); retry "
                                f"after {RETRY_AFTER} s or ask a faster agent",
                           headers={"Retry-After": str(RETRY_AFTER)})

    def _pump(self) -> None:
        """Start batches while a slot is free: the longest-waiting agent first (round robin)."""
        while self._busy < self.slots and self._queues:
            spec = next((s for s in self._queues if s not in self.slow or self._busy_slow < self.slow_slots), None)
            if spec is None:
                return
            queue = self._queues[spec]
            slow = spec in self.slow
            batch: list[_Pending] = []
            now = time.monotonic()
            while queue and len(batch) < (1 if slow else self.max_batch):
                call = queue.popleft()
                if call.deadline is not None and now > call.deadline:
                    self._finish(call, self.bots.late(spec))  # its time ran out in the queue
                else:
                    batch.append(call)
            if queue:
                self._queues.move_to_end(spec)
            else:
                del self._queues[spec]
            if batch:
                self._busy += 1
                self._busy_slow += slow
                self._loop.create_task(self._run(batch, slow))

    async def _run(self, batch: list[_Pending], slow: bool) -> None:
        started = time.monotonic()
        try:
            answers = await self.decider.decide([(c.spec, c.record) for c in batch], [c.deadline for c in batch])
        except Exception as err:  # the decider failed, not the calls: each is refused in one line
            answers = [BotError(500, f"the bots failed: {type(err).__name__}: {err}".splitlines()[0][:500])] * len(batch)
        finally:
            self._busy -= 1
            self._busy_slow -= slow
        if slow:
            seconds = time.monotonic() - started
            previous = self.seconds_per_search.get(batch[0].spec)
            self.seconds_per_search[batch[0].spec] = seconds if previous is None else 0.7 * previous + 0.3 * seconds
        self.batches += 1
        self.decided += len(batch)
        for call, answer in zip(batch, answers):
            self._finish(call, answer)
        self._pump()

    def _finish(self, call: _Pending, answer: Any) -> None:
        self._pending -= 1
        if not call.future.done():
            call.future.set_result(answer)


def make_service(bots: Bots, workers: int = 0, max_pending: int = DEFAULT_MAX_PENDING,
                 max_batch: int = DEFAULT_MAX_BATCH,
                 search_time_limit: float | None = DEFAULT_SEARCH_TIME_LIMIT) -> BotService:
    """A :class:`BotService` over ``workers`` worker processes (0: a thread of this process)."""
    decider = WorkerPool(bots, workers) if workers > 0 else InProcess(bots)
    return BotService(bots, decider, max_pending=max_pending, max_batch=max_batch,
                      search_time_limit=search_time_limit)


__all__: Sequence[str] = ["BotService", "InProcess", "WorkerPool", "make_service", "warm", "warm_calls",
                          "DEFAULT_MAX_BATCH", "DEFAULT_MAX_PENDING", "DEFAULT_SEARCH_TIME_LIMIT", "RETRY_AFTER"]
