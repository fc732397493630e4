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
  compiling a kernel. A worker that dies or hangs is killed and replaced alone: its batch is refused
  with 503, the other workers answer on, and the replacement takes calls once it is warm.

Bounds, each refusal one line (:class:`~.bots.BotError`):

* ``max_pending`` calls in flight (queued or being decided) at most; the next is refused with 503
  and ``Retry-After``, so the latency of the accepted calls stays bounded instead of every call's
  growing with the load; the other routes never wait on this queue;
* every call is answered within ``call_time_limit`` seconds of its arrival or refused with 503 and
  ``Retry-After`` (a worker that stopped, a burst the workers cannot keep up with), and at once with
  503 while no worker is warm;
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
from typing import Any

from agents import is_slow
from export.situations import sample_records
from hearts_env.rules import Rules
from train.workers import die_with_parent

from .bots import AgentInfo, BotError, Bots, Call

#: Calls in flight for /act beyond which the service answers 503 (``--max-pending``).
DEFAULT_MAX_PENDING = 128
#: The most calls decided in one batch.
DEFAULT_MAX_BATCH = 64
#: Seconds a search player's call may take from its arrival (``--search-time-limit``).
DEFAULT_SEARCH_TIME_LIMIT = 10.0
#: Seconds any other call may take from its arrival before it is answered 503 (``--call-time-limit``).
DEFAULT_CALL_TIME_LIMIT = 1.5
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

    def ready_slots(self) -> int:
        return 1

    async def decide(self, calls: list[Call], deadlines: list[float | None], until: float) -> list[dict | BotError]:
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


def _start_worker(offered: list[str], info: dict[str, AgentInfo], search_time_limit: float | None) -> None:
    """A worker's start: one thread for torch, its own Bots, every agent made and warmed."""
    global _worker_bots
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # (one thread each: the workers are the parallelism)
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    _worker_bots = Bots(offered, info, search_time_limit=search_time_limit)
    _one_torch_thread()
    warm(_worker_bots)
    _one_torch_thread()  # (again: making an agent may have imported torch)


def _one_torch_thread() -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _worker_main(connection, parent: int, offered: list[str], info: dict[str, AgentInfo],
                 search_time_limit: float | None) -> None:
    """A worker process: warm up, say so, then decide each batch the pipe brings until it closes."""
    die_with_parent(parent)
    _start_worker(offered, info, search_time_limit)
    connection.send(os.getpid())
    while True:
        try:
            calls, deadlines = connection.recv()
        except (EOFError, OSError):  # the server closed the pipe: its end
            return
        connection.send(_worker_bots.act_batch(calls, deadlines))


class _Worker:
    """One worker process, the pipe to it, and whether it is warm (``ready``) or deciding (``busy``).
    A thread waits for its warm-up and then calls ``on_ready`` (from that thread)."""

    def __init__(self, context, args: tuple, on_ready):
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, os.getpid(), *args), daemon=True,
                                       name="hearts-bots-worker")
        self.process.start()
        child.close()  # (only the worker holds its end: its death is an end of file here)
        self.ready = self.busy = self.dead = False
        self.warmed = threading.Event()
        threading.Thread(target=self._wait_until_warm, args=(on_ready,), daemon=True,
                         name="hearts-bots-warm-up").start()

    def _wait_until_warm(self, on_ready) -> None:
        try:
            self.connection.recv()
            self.ready = True
        except (EOFError, OSError):  # it died warming up
            self.dead = True
        self.warmed.set()
        on_ready(self)

    def call(self, calls: list[Call], deadlines: list[float | None]) -> list[dict | BotError]:
        """Decide a batch (blocking); EOFError or OSError when the worker dies meanwhile."""
        self.connection.send((calls, deadlines))
        return self.connection.recv()

    def kill(self) -> None:
        self.ready, self.dead = False, True
        if self.process.is_alive():
            self.process.kill()

    def close(self) -> None:
        self.kill()
        self.process.join(5)
        self.connection.close()


class WorkerPool:
    """Batches decided in ``workers`` processes (spawned: a fresh interpreter each), each with its own
    agents made and warmed at start, and each ending with the server. A worker that dies, or that
    is still deciding a batch ``HUNG_AFTER`` seconds past the batch's time limit (stopped, stuck), is
    killed and replaced alone: its batch is refused with 503, the other workers answer on, and the
    replacement takes calls once it is warm."""

    #: Seconds past a batch's time limit after which its worker counts as stuck and is replaced.
    HUNG_AFTER = 2.0

    def __init__(self, bots: Bots, workers: int):
        if workers < 1:
            raise ValueError(f"workers must be 1 or more, got {workers}")
        self.bots, self.slots = bots, workers
        self._context = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self._workers: list[_Worker] = []
        self._threads: concurrent.futures.ThreadPoolExecutor | None = None
        self._closed = False
        self.replaced = 0  # workers replaced since the start (tests and the fault test's curiosity)
        self.notify = None  # called (from any thread) when a worker becomes ready: the service pumps its queue

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers now running (warm or warming)."""
        return [w.process.pid for w in self._workers if not w.dead]

    def ready_slots(self) -> int:
        """Workers warm and alive: the batches that can be decided at once now."""
        return sum(w.ready for w in self._workers)

    def _args(self) -> tuple:
        return self.bots.offered, self.bots.info, self.bots.search_time_limit

    def _spawn(self) -> _Worker:
        return _Worker(self._context, self._args(), self._warmed)

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start every worker and return once each has warmed up."""
        with self._lock:
            self._closed = False
            self._threads = concurrent.futures.ThreadPoolExecutor(self.slots, thread_name_prefix="hearts-bots-pipe")
            self._workers = [self._spawn() for _ in range(self.slots)]
        ends = time.monotonic() + timeout
        for worker in self._workers:
            if not worker.warmed.wait(max(0.0, ends - time.monotonic())) or worker.dead:
                self.close()
                raise RuntimeError("a worker process of the bots " + (
                    "died while making and warming up the agents" if worker.dead else
                    f"did not warm up within {timeout:g} s"))

    def _warmed(self, worker: _Worker) -> None:
        """A worker's warm-up ended (in its thread): a dead one is replaced after a pause, so a worker that
        cannot start does not spin; a ready one takes the queued calls."""
        if worker.dead:
            threading.Timer(1.0, self._replace, args=(worker,)).start()
        elif self.notify is not None:
            self.notify()

    def _replace(self, worker: _Worker) -> None:
        with self._lock:
            if self._closed or worker not in self._workers:
                return
            worker.kill()
            self._workers[self._workers.index(worker)] = self._spawn()
            self.replaced += 1
        threading.Thread(target=worker.close, daemon=True).start()  # (reaped off the event loop)

    async def decide(self, calls: list[Call], deadlines: list[float | None], until: float) -> list[dict | BotError]:
        """Each call's answer, decided by a free warm worker; 503 for every call when none is free, the
        worker dies meanwhile, or it is still busy ``HUNG_AFTER`` seconds after ``until`` (monotonic)."""
        worker = next((w for w in self._workers if w.ready and not w.busy), None)
        if worker is None:
            return [_unavailable("no worker process of the bots is free: one is being replaced")] * len(calls)
        worker.busy = True
        pipe = asyncio.get_running_loop().run_in_executor(self._threads, worker.call, calls, deadlines)
        try:
            return await asyncio.wait_for(asyncio.shield(pipe), max(0.0, until - time.monotonic()) + self.HUNG_AFTER)
        except (EOFError, OSError, asyncio.TimeoutError) as err:
            self._replace(worker)
            why = "did not answer in time" if isinstance(err, asyncio.TimeoutError) else "stopped"
            return [_unavailable(f"the worker process deciding this call {why} and is being replaced")] * len(calls)
        finally:
            worker.busy = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._workers = self._workers, []
            threads, self._threads = self._threads, None
        for worker in workers:
            worker.close()
        if threads is not None:
            threads.shutdown(wait=False, cancel_futures=True)


def _unavailable(why: str) -> BotError:
    """The 503 of a call no worker could decide: retry shortly."""
    return BotError(503, f"{why}; retry after {RETRY_AFTER} s", headers={"Retry-After": str(RETRY_AFTER)})


# ---------------------------------------------------------------------------------------------
# The batching queue
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Pending:
    spec: str
    record: Any
    future: asyncio.Future
    deadline: float  # time.monotonic() by which it is answered or refused
    search: bool  # a search player's call (its deadline is the search time limit's)


class BotService:
    """The bots API's ``/act`` calls, batched per agent and decided by ``decider`` (see the module
    docstring). ``bots`` (this process's) checks the agent's name before a call is queued."""

    def __init__(self, bots: Bots, decider: InProcess | WorkerPool | None = None,
                 max_pending: int = DEFAULT_MAX_PENDING, max_batch: int = DEFAULT_MAX_BATCH,
                 search_time_limit: float | None = DEFAULT_SEARCH_TIME_LIMIT,
                 call_time_limit: float = DEFAULT_CALL_TIME_LIMIT):
        if max_pending < 1 or max_batch < 1:
            raise ValueError(f"max_pending and max_batch must be 1 or more, got {max_pending}, {max_batch}")
        if search_time_limit is not None and not search_time_limit > 0:
            raise ValueError(f"search_time_limit must be positive seconds, got {search_time_limit}")
        if not call_time_limit > 0:
            raise ValueError(f"call_time_limit must be positive seconds, got {call_time_limit}")
        self.bots = bots
        self.bots.search_time_limit = search_time_limit
        self.decider = decider if decider is not None else InProcess(bots)
        self.max_pending, self.max_batch, self.search_time_limit = max_pending, max_batch, search_time_limit
        self.call_time_limit = call_time_limit
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
            if hasattr(self.decider, "notify"):  # a replaced worker that is warm takes the queued calls
                self.decider.notify = functools.partial(_call_soon, loop, self._pump)

    async def act(self, spec: Any, record: Any) -> dict[str, Any]:
        """The answer to one call, decided in a batch with the calls of the same agent queued with
        it; raises :class:`BotError` (a refusal, a 503 when busy, a 504 past the time limit)."""
        self.refuse_if_busy()
        self.bots.check_spec(spec)
        if self.decider.ready_slots() == 0:
            raise _unavailable("every worker process of the bots is being replaced")
        search = spec in self.slow and self.search_time_limit is not None
        if search:
            self._refuse_a_search_that_cannot_finish(spec)
        deadline = time.monotonic() + (self.search_time_limit if search else self.call_time_limit)
        call = _Pending(spec, record, self._loop.create_future(), deadline, search)
        self._queues.setdefault(spec, collections.deque()).append(call)
        self._pending += 1
        self._pump()
        try:  # (shielded: a client that goes away leaves its call to finish)
            answer = await asyncio.wait_for(asyncio.shield(call.future), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            self._drop(call)
            raise self._late(call) from None
        if isinstance(answer, BotError):
            raise answer
        return answer

    def _late(self, call: _Pending) -> BotError:
        """The refusal of a call whose time ran out: a search's 504, any other call's 503."""
        if call.search:
            return self.bots.late(call.spec)
        return _unavailable(f"agent {call.spec!r} did not decide this call within the call time limit of "
                            f"{self.call_time_limit:g} s (--call-time-limit)")

    def _drop(self, call: _Pending) -> None:
        """Take a call whose time ran out off its queue, if it is still queued."""
        queue = self._queues.get(call.spec)
        if queue is not None and call in queue:
            queue.remove(call)
            if not queue:
                del self._queues[call.spec]
            self._finish(call, None)

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
        while self._busy < min(self.slots, self.decider.ready_slots()) and self._queues:
            spec = next((s for s in self._queues if s not in self.slow or self._busy_slow < self.slow_slots), None)
            if spec is None:
                return
            queue = self._queues[spec]
            slow = spec in self.slow
            batch: list[_Pending] = []
            now = time.monotonic()
            while queue and len(batch) < (1 if slow else self.max_batch):
                call = queue.popleft()
                if now > call.deadline:
                    self._finish(call, self._late(call))  # its time ran out in the queue
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
            answers = await self.decider.decide([(c.spec, c.record) for c in batch],
                                                [c.deadline if c.search else None for c in batch],
                                                max(c.deadline for c in batch))
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
                 max_batch: int = DEFAULT_MAX_BATCH, search_time_limit: float | None = DEFAULT_SEARCH_TIME_LIMIT,
                 call_time_limit: float = DEFAULT_CALL_TIME_LIMIT) -> BotService:
    """A :class:`BotService` over ``workers`` worker processes (0: a thread of this process)."""
    decider = WorkerPool(bots, workers) if workers > 0 else InProcess(bots)
    return BotService(bots, decider, max_pending=max_pending, max_batch=max_batch,
                      search_time_limit=search_time_limit, call_time_limit=call_time_limit)


def _call_soon(loop: asyncio.AbstractEventLoop, callback) -> None:
    """``callback`` on ``loop`` from any thread (nothing once the loop has closed)."""
    try:
        loop.call_soon_threadsafe(callback)
    except RuntimeError:
        pass


__all__: Sequence[str] = ["BotService", "InProcess", "WorkerPool", "make_service", "warm", "warm_calls",
                          "DEFAULT_CALL_TIME_LIMIT", "DEFAULT_MAX_BATCH", "DEFAULT_MAX_PENDING",
                          "DEFAULT_SEARCH_TIME_LIMIT", "RETRY_AFTER"]
