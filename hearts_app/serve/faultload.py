"""Fault test of ``hearts serve``: bot calls under load while a worker process is killed every second.

    python -m hearts_app.serve.faultload --seconds 60 --clients 32 --kill-every 1

starts ``hearts serve`` (``loadtest.server``: a free port, a temporary games folder) and, for
``--seconds``, has ``--clients`` clients send ``POST /api/v1/act`` calls of ``--agent`` (a player that
draws no random numbers, so each record has one right card) with seat records of real games, each
client its next call as soon as it has an answer, while a worker process of the server (a
``SIGKILL`` to one of its spawned children, in turn) is killed every ``--kill-every`` seconds. Every
call must get its card or a 503: it counts the answers by status, the slowest, and the cards that
differ from the card this process's own ``Bots`` gives for the same record. Exit code 1 when any
call got another status, waited over ``--max-wait`` seconds, or got a wrong card.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp  # the test's client (the serve and test extras)

from export.situations import sample_records
from hearts_env.rules import Rules

from .. import arguments
from .bots import Bots
from .loadtest import LoadTestError, server, session_for

#: --clients at most.
MAX_CLIENTS = 1024


def worker_pids(server_pid: int) -> list[int]:
    """The server's worker processes: its children started by multiprocessing's spawn (read from /proc)."""
    found = []
    for task in Path(f"/proc/{server_pid}/task").iterdir():
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                with contextlib.suppress(OSError):
                    if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.append(int(child))
    return sorted(found)


async def kill_workers(server_pid: int, every: float, stop: asyncio.Event) -> int:
    """Kill one worker process (the next in turn) every ``every`` seconds until ``stop``; returns how many."""
    killed = turn = 0
    while not stop.is_set():
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
        if stop.is_set():
            break
        pids = worker_pids(server_pid)
        if pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pids[turn % len(pids)], signal.SIGKILL)
                killed += 1
            turn += 1
    return killed


async def clients(url: str, bodies: list[bytes], expected: list[str], count: int, seconds: float,
                  tally: dict[str, Any]) -> None:
    """``count`` clients sending /act calls for ``seconds``; each answer is tallied and checked."""
    ends = time.monotonic() + seconds
    async with session_for(url, count + 2) as session:
        async def client(first: int) -> None:
            i = first
            while time.monotonic() < ends:
                t = time.perf_counter()
                try:
                    async with session.post("/api/v1/act", data=bodies[i],
                                            headers={"content-type": "application/json"}) as response:
                        status, body = response.status, await response.read()
                except (aiohttp.ClientError, asyncio.TimeoutError) as err:
                    status, body = 0, f"{type(err).__name__}: {err}".encode()
                waited = time.perf_counter() - t
                tally["slowest_s"] = max(tally["slowest_s"], waited)
                tally["by_status"][status] = tally["by_status"].get(status, 0) + 1
                if status == 200 and json.loads(body)["card"] != expected[i]:
                    tally["wrong_cards"] += 1
                elif status not in (200, 503):
                    tally["first_other"] = tally["first_other"] or f"{status} {body[:200]!r}"
                i = (i + count) % len(bodies)

        await asyncio.gather(*(client(k) for k in range(count)))


def run(agent: str, seconds: float, client_count: int, kill_every: float, workers: int,
        startup: float = 900.0) -> dict[str, Any]:
    """The tally of one fault test (see the module docstring)."""
    seat_records = sample_records(Rules.preset("classic"), 400, seed=0, games=8)
    here = Bots([agent])
    expected = [answer["card"] for answer in here.act_batch([(agent, r) for r in seat_records])]
    bodies = [json.dumps({"agent": agent, "record": r}).encode() for r in seat_records]
    tally: dict[str, Any] = {"by_status": {}, "slowest_s": 0.0, "wrong_cards": 0, "first_other": None}
    with tempfile.TemporaryDirectory(prefix="hearts-faultload-") as tmp:
        (Path(tmp) / "games").mkdir()
        with server([agent], Path(tmp) / "games", startup=startup, workers=workers) as (url, pid):
            async def everything() -> int:
                stop = asyncio.Event()
                killer = asyncio.create_task(kill_workers(pid, kill_every, stop))
                try:
                    await clients(url, bodies, expected, client_count, seconds, tally)
                finally:
                    stop.set()
                return await killer

            tally["workers_killed"] = asyncio.run(everything())
    calls = sum(tally["by_status"].values())
    return {"agent": agent, "seconds": seconds, "clients": client_count, "kill_every_s": kill_every,
            "workers": workers, "calls": calls, "answered": tally["by_status"].get(200, 0),
            "refused_503": tally["by_status"].get(503, 0),
            "other": calls - tally["by_status"].get(200, 0) - tally["by_status"].get(503, 0),
            "slowest_s": round(tally["slowest_s"], 3), "wrong_cards": tally["wrong_cards"],
            "workers_killed": tally["workers_killed"], "first_other": tally["first_other"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hearts_app.serve.faultload",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="hard", help="a player that draws no random numbers (default %(default)s)")
    within_an_hour = arguments.bounded(arguments.positive_float, 3600, " seconds (an hour)")
    parser.add_argument("--seconds", type=within_an_hour, default=60.0,
                        help="how long the clients call, at most an hour (default %(default)g)")
    parser.add_argument("--clients", type=arguments.bounded(arguments.positive_int, MAX_CLIENTS), default=32,
                        help=f"clients calling at once, 1 to {MAX_CLIENTS} (default %(default)s)")
    parser.add_argument("--kill-every", type=within_an_hour, default=1.0, metavar="SECONDS",
                        help="a worker process killed this often, at most an hour (default %(default)g)")
    parser.add_argument("--workers", type=arguments.worker_count, default=2,
                        help=f"hearts serve --workers, 1 to {arguments.MAX_WORKERS} (default %(default)s)")
    parser.add_argument("--max-wait", type=arguments.positive_float, default=2.0, metavar="SECONDS",
                        help="the longest a call may wait for its card or its 503 (default %(default)g)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = parser.parse_args(argv)
    if not Path("/proc").is_dir():
        parser.error("the fault test finds the server's workers in /proc (Linux)")
    try:
        result = run(args.agent, args.seconds, args.clients, args.kill_every, args.workers)
    except LoadTestError as err:
        print(f"fault test failed: {err}", file=sys.stderr)
        return 1
    failures = [f"{result['other']} answers neither a card nor a 503 (first: {result['first_other']})"] \
        if result["other"] else []
    if result["slowest_s"] > args.max_wait:
        failures.append(f"a call waited {result['slowest_s']:.2f} s, over {args.max_wait:g} s")
    if result["wrong_cards"]:
        failures.append(f"{result['wrong_cards']} wrong cards")
    if args.json:
        print(json.dumps({**result, "max_wait_s": args.max_wait, "passed": not failures}, indent=1))
    else:
        print(f"{result['calls']:,} calls from {result['clients']} clients in {result['seconds']:g} s, "
              f"{result['workers_killed']} workers killed (one every {result['kill_every_s']:g} s of "
              f"{result['workers']}): {result['answered']:,} cards, {result['refused_503']:,} 503s, "
              f"{result['other']} other answers, {result['wrong_cards']} wrong cards, slowest {result['slowest_s']:.2f} s")
    for failure in failures:
        print(f"fault test failed: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
