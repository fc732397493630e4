"""Load test of ``hearts serve``: bot calls at a sweep of calls in flight, and games, against a real server.

    python -m hearts_app.serve.loadtest --agent hard,ppo-classic --in-flight 1,16,64,256

starts ``hearts serve`` on 127.0.0.1 (a free port, a temporary games folder; ``--workers`` and
``--max-pending`` passed on) in a subprocess, then for each agent and each number of calls in flight
N of ``--in-flight``: sends ``--requests`` calls to ``POST /api/v1/act`` from N clients, with seat
records of real games (each client sends its next call as soon as it has an answer; after a 503, once
the answer's Retry-After has passed, as a game app should, or at once with ``--ignore-retry-after``); meanwhile one client asks ``GET /api/v1/agents`` and another plays a game against the agent
(``/api/v1/games``, a move every 50 ms at most), to show what the other routes' latency is under
that load. Then it plays ``--games`` games at once to their end against three copies of the agent
(the client sends the first legal card at each of your decisions) and checks that no game lost a
move: every finished game's record replays through the engine to the scores the server reported,
with all 52 cards of every hand played and every card the client sent in it.

For each agent, path (``act``, ``agents``, ``games``) and number in flight it reports the calls
per second, the p50, p95 and p99 latency of the answered calls (200 and 201), the errors (any other
status but 503) and the 503s (refused because the server is busy), with the latency of the 503s,
and for ``act`` the CPU time per call of the server's process (HTTP, JSON, the queues), of its
workers (parse, replay, agent) and of this client (from /proc, on Linux): a table, or JSON with
``--json``. The client is aiohttp (a fraction of a millisecond of CPU per
call: it shares the cores with the server). Everything is bounded: the calls, the games, and
``--timeout`` seconds for the whole run (exit code 1 when it is exceeded or a check fails).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp  # the load test's client (the serve and test extras)
import numpy as np

from export.situations import sample_records
from hearts_env import seat_record
from hearts_env.rules import Rules

from .. import arguments
from ..session import records
from ..session.match import Match
from .bots import Bots, decide_in_blocks

#: The default sweep of /api/v1/act calls in flight.
IN_FLIGHT = (1, 16, 64, 256)
#: --in-flight's numbers at most.
MAX_IN_FLIGHT = 4096


class LoadTestError(RuntimeError):
    """A check failed or the run took too long."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> tuple[float, float] | None:
    """CPU seconds (user + system) used so far by process ``pid`` and by its descendants, read from
    /proc (Linux); None elsewhere or when it is gone."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def own(p: int) -> float:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    def children(p: int) -> list[int]:
        out = []
        for task in Path(f"/proc/{p}/task").iterdir():
            with contextlib.suppress(OSError):
                out += [int(c) for c in (task / "children").read_text().split()]
        return out

    try:
        main, rest, stack = own(pid), 0.0, children(pid)
        while stack:
            child = stack.pop()
            with contextlib.suppress(OSError, ValueError, IndexError):
                rest += own(child)
                stack += children(child)
        return main, rest
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def server(agents: list[str], games_dir: Path, startup: float = 900.0, workers: int | None = None,
           max_pending: int | None = None, options: tuple[str, ...] = ()):
    """``hearts serve`` (with ``options`` on its command line) in a subprocess; yields its base URL and
    process id once it answers (it answers only once its agents are made and its workers warm)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "hearts_app", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--agents", ",".join(agents), "--games-dir", str(games_dir)]
    if workers is not None:
        command += ["--workers", str(workers)]
    if max_pending is not None:
        command += ["--max-pending", str(max_pending)]
    command += list(options)
    with open(games_dir.parent / "server.log", "w+") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            deadline = time.monotonic() + startup
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise LoadTestError(f"hearts serve stopped at start: {log.read().strip()[-500:]}")
                with contextlib.suppress(OSError, urllib.error.URLError):
                    with urllib.request.urlopen(f"{url}/api/v1/agents", timeout=2) as answer:
                        if answer.status == 200:
                            break
                if time.monotonic() > deadline:
                    raise LoadTestError(f"hearts serve did not answer within {startup:.0f} s")
                time.sleep(0.2)
            yield url, process.pid
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


class Timer:
    """The answers of one path: latencies of the answered calls and of the 503s, errors, and the
    wall time they span."""

    def __init__(self):
        self.latencies: list[float] = []
        self.refused: list[float] = []
        self.errors = 0
        self.first_error: str | None = None
        self.start = self.end = 0.0
        self.retry_after = 0.0  # the Retry-After of the last 503, in seconds

    async def request(self, session: aiohttp.ClientSession, method: str, url: str, data: bytes | None = None,
                      ok: tuple[int, ...] = (200, 201)) -> tuple[int, Any]:
        """``(status, JSON body or None)``; a transport error counts as an error (status 0)."""
        headers = {"content-type": "application/json"} if data is not None else None
        t = time.perf_counter()
        try:
            async with session.request(method, url, data=data, headers=headers) as response:
                status, body = response.status, await response.read()
                if status == 503:
                    try:
                        self.retry_after = float(response.headers.get("Retry-After", "1"))
                    except ValueError:
                        self.retry_after = 1.0
        except (aiohttp.ClientError, asyncio.TimeoutError) as err:
            self.errors += 1
            self.first_error = self.first_error or f"{method} {url}: {type(err).__name__}: {err}"
            return 0, None
        elapsed = time.perf_counter() - t
        if status in ok:
            self.latencies.append(elapsed)
        elif status == 503:
            self.refused.append(elapsed)
        else:
            self.errors += 1
            self.first_error = self.first_error or f"{method} {url}: {status} {body[:200]!r}"
        try:
            return status, json.loads(body) if body else None
        except ValueError:
            return status, None

    def row(self, agent: str, path: str, in_flight: int, cpu: dict[str, float] | None = None) -> dict[str, Any]:
        return row(agent, path, in_flight, self.latencies, self.refused, self.errors, self.end - self.start,
                   self.first_error, cpu)


def row(agent: str, path: str, in_flight: int, latencies: list[float], refused: list[float], errors: int,
        seconds: float, first_error: str | None = None, cpu: dict[str, float] | None = None) -> dict[str, Any]:
    """One line of the report: calls answered per second (200/201 only), their p50/p95/p99 (and the
    slowest) in ms, errors, 503s (and the p99 of the 503s' latency); ``cpu``: CPU seconds spent meanwhile by the
    server's process, its workers and this client, reported in ms per request sent."""
    lat = np.asarray(latencies, dtype=float) * 1000

    def pct(values: np.ndarray, q: float) -> float | None:
        return round(float(np.percentile(values, q)), 2) if len(values) else None

    sent = len(lat) + len(refused) + errors
    per_call = {f"cpu_{k}_ms": (round(v * 1000 / sent, 3) if sent else None) for k, v in (cpu or {}).items()}
    return {"agent": agent, "path": path, "in_flight": in_flight, "answered": len(lat),
            "seconds": round(seconds, 3), "per_second": round(len(lat) / seconds, 1) if seconds > 0 else 0.0,
            "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95), "p99_ms": pct(lat, 99), "max_ms": pct(lat, 100),
            "errors": errors,
            "refused_503": len(refused), "refused_p99_ms": pct(np.asarray(refused, dtype=float) * 1000, 99),
            "cpu_server_ms": None, "cpu_workers_ms": None, "cpu_client_ms": None, **per_call,
            "first_error": first_error}


async def play_game(session, timer: Timer, agent: str, seed: int, stop: asyncio.Event | None = None,
                    pause: float = 0.0) -> dict[str, Any] | None:
    """One game to its end (or until ``stop`` is set: then None), ``pause`` seconds between moves;
    returns its id, final scores and the cards sent, by hand."""
    status, view = await timer.request(session, "POST", "/api/v1/games",
                                       json.dumps({"preset": "classic", "opponents": [agent] * 3,
                                                   "seed": seed}).encode())
    if status != 201:
        raise LoadTestError(f"creating a game: {status} {timer.first_error}")
    sent: dict[int, list[str]] = {}
    while view["game_over"] is None:
        if stop is not None and stop.is_set():
            return None
        if pause:
            await asyncio.sleep(pause)
        card = view["legal"][0]
        hand = view["hand_number"]
        status, answer = await timer.request(session, "POST", f"/api/v1/games/{view['id']}/play",
                                             json.dumps({"card": card}).encode())
        if status != 200:
            raise LoadTestError(f"game {view['id']}: playing {card}: {status} {timer.first_error}")
        sent.setdefault(hand, []).append(card)
        view = answer
    return {"id": view["id"], "scores": view["game_over"]["scores"], "sent": sent}


async def act_calls(session, timer: Timer, bodies: list[bytes], count: int, in_flight: int,
                    honour_retry_after: bool = True) -> None:
    """``count`` calls to /api/v1/act from ``in_flight`` clients, each sending its next call as soon
    as it has an answer; after a 503 it first waits the answer's Retry-After, as a game app should
    (unless ``honour_retry_after`` is False: then at once too)."""
    queue = iter(range(count))

    async def client():
        for i in queue:
            status, _ = await timer.request(session, "POST", "/api/v1/act", bodies[i % len(bodies)])
            if status == 503 and honour_retry_after:
                await asyncio.sleep(timer.retry_after)

    timer.start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(in_flight)))
    timer.end = time.perf_counter()


async def probe(session, timer: Timer, stop: asyncio.Event, pause: float = 0.01) -> None:
    """``GET /api/v1/agents`` one after the other, ``pause`` apart, until ``stop``."""
    timer.start = time.perf_counter()
    while not stop.is_set():
        await timer.request(session, "GET", "/api/v1/agents")
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), pause)
    timer.end = time.perf_counter()


async def games_meanwhile(session, timer: Timer, agent: str, stop: asyncio.Event, pause: float = 0.05) -> None:
    """Games against the agent, one move every ``pause`` seconds at most (a quick player, not a flood:
    each move also plays the opponents' cards in the server's process), until ``stop`` (a game left
    unfinished)."""
    timer.start = time.perf_counter()
    seed = 10_000
    while not stop.is_set():
        await play_game(session, timer, agent, seed, stop, pause)
        seed += 1
    timer.end = time.perf_counter()


async def check_game(session, game: dict[str, Any], folder: Path) -> None:
    """The record replays to the reported scores; every hand has all its cards played and every
    card the client sent in it."""
    async with session.get(f"/api/v1/games/{game['id']}/record") as response:
        status, text = response.status, await response.text()
    if status != 200:
        raise LoadTestError(f"game {game['id']}: record: {status} {text[:200]}")
    path = folder / f"{game['id']}.jsonl"
    path.write_text(text, encoding="utf-8")
    record = records.load(path)
    rules = record.rules
    match = Match.from_record(rules, record.game())
    if not match.over or match.scores != game["scores"]:
        raise LoadTestError(f"game {game['id']}: the record replays to {match.scores}, the server said "
                            f"{game['scores']}")
    for hand in match.hands:
        passes = rules.pass_count * rules.num_players if hand["pass"] != "none" else 0
        actions = hand["actions"]
        plays = len(actions) - passes
        mine = [card for seat, card in actions if seat == 0]
        if plays != rules.hand_size * rules.num_players or mine != game["sent"].get(hand["hand_number"], []):
            raise LoadTestError(f"game {game['id']}, hand {hand['hand_number']}: {plays} plays, your cards "
                                f"{mine} where the client sent {game['sent'].get(hand['hand_number'])}")


def session_for(url: str, connections: int) -> aiohttp.ClientSession:
    # Idle connections are dropped before uvicorn's 5 s keep-alive closes them (else a request can
    # race the server's close and fail with a read error).
    connector = aiohttp.TCPConnector(limit=connections, keepalive_timeout=2.0)
    return aiohttp.ClientSession(base_url=url, connector=connector, timeout=aiohttp.ClientTimeout(total=120))


def cpu_now(server_pid: int | None) -> dict[str, float] | None:
    """CPU seconds so far: the server's process, its workers, this client (None without /proc)."""
    served = cpu_seconds(server_pid) if server_pid is not None else None
    if served is None:
        return None
    mine = os.times()
    return {"server": served[0], "workers": served[1], "client": mine.user + mine.system}


async def run_agent(url: str, agent: str, in_flight: list[int], requests: int, games: int,
                    bodies: list[bytes], folder: Path, say=None, honour_retry_after: bool = True,
                    server_pid: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """The rows of one agent, and the number of games checked."""
    rows: list[dict[str, Any]] = []
    async with session_for(url, max(in_flight) + 2) as session:
        for level in in_flight:
            act, agents, game = Timer(), Timer(), Timer()
            stop = asyncio.Event()
            side = [asyncio.create_task(probe(session, agents, stop)),
                    asyncio.create_task(games_meanwhile(session, game, agent, stop))]
            before = cpu_now(server_pid)
            try:
                await act_calls(session, act, bodies, requests, level, honour_retry_after)
            finally:
                after = cpu_now(server_pid)
                stop.set()
                await asyncio.gather(*side)
            cpu = {k: after[k] - before[k] for k in after} if before and after else None
            rows += [act.row(agent, "act", level, cpu), agents.row(agent, "agents", level),
                     game.row(agent, "games", level)]
            if say is not None:
                say(format_rows(rows[-3:], header=False))
        timer = Timer()  # games at once, to their end, then checked
        timer.start = time.perf_counter()
        finished = await asyncio.gather(*(play_game(session, timer, agent, seed) for seed in range(games)))
        timer.end = time.perf_counter()
        rows.append(timer.row(agent, f"{games} games", games))
        if say is not None:
            say(format_rows(rows[-1:], header=False))
        for game in finished:
            await check_game(session, game, folder)
    return rows, len(finished)


COLUMNS = [("agent", 13, "s"), ("path", 9, "s"), ("in_flight", 9, "d"), ("answered", 8, ",d"), ("per_second", 7, ".0f"),
           ("p50_ms", 7, ".1f"), ("p95_ms", 7, ".1f"), ("p99_ms", 7, ".1f"), ("errors", 6, "d"),
           ("refused_503", 7, "d"), ("refused_p99_ms", 8, ".1f"), ("cpu_server_ms", 7, ".2f"),
           ("cpu_workers_ms", 7, ".2f"), ("cpu_client_ms", 7, ".2f")]
HEADINGS = {"in_flight": "in flight", "per_second": "calls/s", "p50_ms": "p50 ms", "p95_ms": "p95 ms",
            "p99_ms": "p99 ms", "refused_503": "503s", "refused_p99_ms": "503 p99", "cpu_server_ms": "srv cpu",
            "cpu_workers_ms": "wrk cpu", "cpu_client_ms": "cli cpu"}


def format_rows(rows: list[dict[str, Any]], header: bool = True) -> str:
    def cell(value, width, spec):
        if value is None:
            return f"{'-':>{width}}"
        return f"{value:<{width}{spec}}" if spec == "s" else f"{value:>{width}{spec}}"

    lines = [" ".join(f"{HEADINGS.get(name, name):<{w}}" if spec == "s" else f"{HEADINGS.get(name, name):>{w}}"
                      for name, w, spec in COLUMNS)] if header else []
    for r in rows:
        lines.append(" ".join(cell(r[name], w, spec) for name, w, spec in COLUMNS))
    return "\n".join(lines)


def breakdown(agents: list[str], seat_records: list[dict], sizes: tuple[int, ...] = (1, 64)) -> list[dict[str, Any]]:
    """Where a worker's time per call goes, in this process (no server, torch on one thread as in a
    worker): parsing the record, replaying it (``seat_record.encode_batch``), the agent's decision
    (``decide_in_blocks``) and the whole ``Bots.act_batch``, in ms per call, deciding the records in
    batches of each of ``sizes`` calls (64 batches each)."""
    bots = Bots(agents)
    out = []
    for spec in agents:
        torch = sys.modules.get("torch")  # (when a policy loaded it)
        if torch is not None:
            torch.set_num_threads(1)
        for size in sizes:
            batches = [seat_records[i:i + size] for i in range(0, len(seat_records), size)][:64]
            bots.act_batch([(spec, r) for r in seat_records[:64]])  # (made, compiled: both phases' code)
            agent = bots.cache.get(spec, seat_record.parse(batches[0][0]).rules)[0]
            times = dict.fromkeys(("parse", "replay", "agent", "act_batch"), 0.0)
            for batch in batches:
                t0 = time.perf_counter()
                parsed = [seat_record.parse(r) for r in batch]
                t1 = time.perf_counter()
                observation, mask, _ = seat_record.encode_batch(parsed)
                t2 = time.perf_counter()
                decide_in_blocks(agent, observation, mask)
                t3 = time.perf_counter()
                bots.act_batch([(spec, r) for r in batch])
                t4 = time.perf_counter()
                for key, seconds in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                    times[key] += seconds
            calls = sum(len(b) for b in batches)
            out.append({"agent": spec, "batch": size, **{f"{k}_ms": round(v * 1000 / calls, 3) for k, v in times.items()}})
    return out


def make_parser() -> argparse.ArgumentParser:
    """The load test's options (:func:`main`), each refused out of its range as it is parsed."""
    parser = argparse.ArgumentParser(prog="python -m hearts_app.serve.loadtest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="hard,ppo-classic", metavar="SPEC,...",
                        help="the bots measured and the opponents, one after the other (default %(default)s)")
    parser.add_argument("--in-flight", type=arguments.bounded(arguments.positive_ints, MAX_IN_FLIGHT),
                        default=list(IN_FLIGHT), metavar="N,N,...",
                        help=f"the /api/v1/act calls in flight at once, one run each, each 1 to {MAX_IN_FLIGHT} "
                             "(default 1,16,64,256)")
    parser.add_argument("--requests", type=arguments.positive_int, default=2000,
                        help="/api/v1/act calls per agent and number in flight (default %(default)s)")
    parser.add_argument("--games", type=arguments.positive_int, default=20,
                        help="games played at once to their end and checked, per agent (default %(default)s)")
    parser.add_argument("--workers", type=arguments.serve_worker_count,
                        help="hearts serve --workers (default: the server's, the number of cores)")
    parser.add_argument("--max-pending", type=arguments.positive_int,
                        help="hearts serve --max-pending (default: the server's)")
    parser.add_argument("--ignore-retry-after", action="store_true",
                        help="a client refused with 503 sends its next call at once (default: after the "
                             "Retry-After the server gave, as a game app should)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object instead of a table")
    parser.add_argument("--timeout", type=arguments.positive_float, default=900,
                        help="seconds for the whole run (default %(default)s)")
    parser.add_argument("--breakdown", action="store_true",
                        help="instead of the load test: where a worker's time per call goes (parse, replay, agent, "
                             "the whole act_batch) at batches of 1 and 64 calls, in this process")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    agents = [a.strip() for a in args.agent.split(",") if a.strip()]
    if not agents:
        parser.error("--agent needs at least one agent")
    say = None if args.json else (lambda text: print(text, flush=True))
    seat_records = sample_records(Rules.preset("classic"), 400, seed=0, games=8)
    if args.breakdown:
        parts = breakdown(agents, seat_records)
        if args.json:
            print(json.dumps(parts, indent=1))
        else:
            for part in parts:
                print(f"{part['agent']:<13} batch {part['batch']:>3}: parse {part['parse_ms']:.3f}, replay "
                      f"{part['replay_ms']:.3f}, agent {part['agent_ms']:.3f}, act_batch {part['act_batch_ms']:.3f} "
                      "ms per call")
        return 0
    rows: list[dict[str, Any]] = []
    checked = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hearts-loadtest-") as tmp:
        folder = Path(tmp)
        (folder / "games").mkdir()
        (folder / "replays").mkdir()
        try:
            with server(agents, folder / "games", startup=args.timeout, workers=args.workers,
                        max_pending=args.max_pending) as (url, pid):
                if say is not None:
                    say(f"hearts serve at {url} (started in {time.monotonic() - started:.1f} s); {args.requests} "
                        f"act calls per agent and number in flight, {args.games} games at once per agent; "
                        f"{os.cpu_count()} CPUs shared by the server and this client")
                    say(format_rows([]))

                async def everything():
                    nonlocal checked
                    for agent in agents:
                        bodies = [json.dumps({"agent": agent, "record": r}).encode() for r in seat_records]
                        got, games = await run_agent(url, agent, args.in_flight, args.requests, args.games, bodies,
                                                     folder / "replays", say, not args.ignore_retry_after, pid)
                        rows.extend(got)
                        checked += games

                asyncio.run(asyncio.wait_for(everything(), max(1.0, args.timeout - (time.monotonic() - started))))
        except (LoadTestError, asyncio.TimeoutError) as err:
            print(f"load test failed: {err or f'over --timeout {args.timeout:.0f} s'}", file=sys.stderr)
            return 1
        except aiohttp.ClientError as err:
            print(f"load test failed: the connection to the server failed ({type(err).__name__}: {err})",
                  file=sys.stderr)
            return 1
    check = (f"no move lost: all {checked} games finished, and each record replays to the scores the server "
             f"reported, with 52 plays in every hand and every card the client sent")
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "agents": agents, "in_flight": args.in_flight,
                          "requests": args.requests, "games": args.games, "workers": args.workers,
                          "max_pending": args.max_pending, "honour_retry_after": not args.ignore_retry_after,
                          "rows": rows, "games_checked": checked,
                          "check": check}, indent=1))
    else:
        print(check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
