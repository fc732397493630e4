"""Load test of ``hearts serve``: concurrent games and bot calls against a real server.

    python -m hearts_app.serve.loadtest --games 20 --requests 400 --agent hard,ppo-classic

starts ``hearts serve`` on 127.0.0.1 (a free port, a temporary games folder) in a subprocess, then
for each agent: plays one game alone, then ``--games`` games at once, to their end against three
copies of it (the client sends the first legal card at each of your decisions), and sends ``--requests`` calls to
``/api/v1/act`` (``--concurrency`` at a time) with seat records of real games. It prints requests/s
and the p50 and p99 latency of each API, and checks that no game lost a move: every finished game's
record replays through the engine to the scores the server reported, with all 52 cards of every
hand played and every card the client sent in it. Everything is bounded: the number of games and
calls, and ``--timeout`` seconds for the whole run (exit code 1 when it is exceeded or a check fails).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx  # the load test's client (the test extra; hearts serve itself does not need it)
import numpy as np

from export.situations import sample_records
from hearts_env.rules import Rules

from ..session import records
from ..session.match import Match


class LoadTestError(RuntimeError):
    """A check failed or the run took too long."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(agents: list[str], games_dir: Path, startup: float = 120.0):
    """``hearts serve`` in a subprocess; yields its base URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with open(games_dir.parent / "server.log", "w+") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "hearts_app", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--agents", ",".join(agents), "--games-dir", str(games_dir)],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            deadline = time.monotonic() + startup
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise LoadTestError(f"hearts serve stopped at start: {log.read().strip()[-500:]}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/api/v1/agents", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise LoadTestError(f"hearts serve did not answer within {startup:.0f} s")
                time.sleep(0.2)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


class Timer:
    """Latencies of one API, and the wall time they span."""

    def __init__(self):
        self.latencies: list[float] = []
        self.start = self.end = 0.0

    async def request(self, client, method: str, url: str, **kw):
        t = time.perf_counter()
        response = await client.request(method, url, **kw)
        self.latencies.append(time.perf_counter() - t)
        return response

    def row(self, agent: str, api: str) -> dict[str, Any]:
        lat = np.array(self.latencies) * 1000
        seconds = self.end - self.start
        return {"agent": agent, "api": api, "requests": len(lat), "seconds": seconds,
                "per_second": len(lat) / seconds if seconds else 0.0,
                "p50_ms": float(np.percentile(lat, 50)) if len(lat) else 0.0,
                "p99_ms": float(np.percentile(lat, 99)) if len(lat) else 0.0}


async def play_game(client, timer: Timer, agent: str, seed: int) -> dict[str, Any]:
    """One game to its end; returns its id, final scores and the cards sent, by hand."""
    r = await timer.request(client, "POST", "/api/v1/games",
                            json={"preset": "classic", "opponents": [agent] * 3, "seed": seed})
    if r.status_code != 201:
        raise LoadTestError(f"creating a game: {r.status_code} {r.text[:200]}")
    view = r.json()
    sent: dict[int, list[str]] = {}
    while view["game_over"] is None:
        card = view["legal"][0]
        hand = view["hand_number"]
        r = await timer.request(client, "POST", f"/api/v1/games/{view['id']}/play", json={"card": card})
        if r.status_code != 200:
            raise LoadTestError(f"game {view['id']}: playing {card}: {r.status_code} {r.text[:200]}")
        sent.setdefault(hand, []).append(card)
        view = r.json()
    return {"id": view["id"], "scores": view["game_over"]["scores"], "sent": sent}


async def act_calls(client, timer: Timer, agent: str, seat_records: list[dict], count: int,
                    concurrency: int) -> None:
    queue = iter(range(count))

    async def worker():
        for i in queue:
            record = seat_records[i % len(seat_records)]
            r = await timer.request(client, "POST", "/api/v1/act", json={"agent": agent, "record": record})
            if r.status_code != 200:
                raise LoadTestError(f"/api/v1/act: {r.status_code} {r.text[:200]}")

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def check_game(client, game: dict[str, Any], folder: Path) -> None:
    """The record replays to the reported scores; every hand has all its cards played and every
    card the client sent in it."""
    r = await client.get(f"/api/v1/games/{game['id']}/record")
    if r.status_code != 200:
        raise LoadTestError(f"game {game['id']}: record: {r.status_code} {r.text[:200]}")
    path = folder / f"{game['id']}.jsonl"
    path.write_text(r.text, encoding="utf-8")
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


async def run_agent(url: str, agent: str, games: int, requests: int, concurrency: int,
                    seat_records: list[dict], folder: Path) -> list[dict[str, Any]]:
    # Idle connections are dropped before uvicorn's 5 s keep-alive closes them (else a request can
    # race the server's close and fail with a read error).
    limits = httpx.Limits(max_connections=max(games, concurrency), max_keepalive_connections=max(games, concurrency),
                          keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        solo_timer = Timer()  # one game alone first: the latency of a move without queueing
        solo_timer.start = time.perf_counter()
        solo = await play_game(client, solo_timer, agent, games)
        solo_timer.end = time.perf_counter()
        game_timer = Timer()
        game_timer.start = time.perf_counter()
        finished = await asyncio.gather(*(play_game(client, game_timer, agent, seed) for seed in range(games)))
        game_timer.end = time.perf_counter()
        act_timer = Timer()
        act_timer.start = time.perf_counter()
        await act_calls(client, act_timer, agent, seat_records, requests, concurrency)
        act_timer.end = time.perf_counter()
        for game in [solo, *finished]:
            await check_game(client, game, folder)
    return [solo_timer.row(agent, "1 game"), game_timer.row(agent, f"{games} games"),
            act_timer.row(agent, "act")]


def format_rows(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'agent':<13} {'API':<9} {'requests':>8} {'seconds':>8} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7}"]
    for r in rows:
        lines.append(f"{r['agent']:<13} {r['api']:<9} {r['requests']:>8,} {r['seconds']:>8.1f} "
                     f"{r['per_second']:>7.0f} {r['p50_ms']:>7.1f} {r['p99_ms']:>7.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hearts_app.serve.loadtest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games played at once to their end, per agent")
    parser.add_argument("--requests", type=int, default=400, help="/api/v1/act calls per agent")
    parser.add_argument("--concurrency", type=int, default=16, help="/api/v1/act calls in flight at once")
    parser.add_argument("--agent", default="hard,ppo-classic", metavar="SPEC,...",
                        help="the opponents and bots measured, one after the other (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the whole run (default %(default)s)")
    args = parser.parse_args(argv)
    agents = [a.strip() for a in args.agent.split(",") if a.strip()]
    if not agents or args.games < 1 or args.requests < 1 or args.concurrency < 1:
        parser.error("--agent, --games, --requests and --concurrency need at least one")
    seat_records = sample_records(Rules.preset("classic"), args.requests, seed=0, games=8)
    with tempfile.TemporaryDirectory(prefix="hearts-loadtest-") as tmp:
        folder = Path(tmp)
        (folder / "games").mkdir()
        (folder / "replays").mkdir()
        try:
            with server(agents, folder / "games") as url:
                print(f"hearts serve at {url}; {args.games} games and {args.requests} act calls "
                      f"({args.concurrency} at a time) per agent; {os.cpu_count()} CPUs shared by server and client",
                      flush=True)
                rows: list[dict[str, Any]] = []

                async def everything():
                    for agent in agents:
                        rows.extend(await run_agent(url, agent, args.games, args.requests, args.concurrency,
                                                    seat_records, folder / "replays"))

                asyncio.run(asyncio.wait_for(everything(), args.timeout))
        except (LoadTestError, asyncio.TimeoutError) as err:
            print(f"load test failed: {err or f'over --timeout {args.timeout:.0f} s'}", file=sys.stderr)
            return 1
        except httpx.TransportError as err:
            print(f"load test failed: the connection to the server failed ({type(err).__name__}: {err})",
                  file=sys.stderr)
            return 1
    print(format_rows(rows))
    print(f"no move lost: all {(args.games + 1) * len(agents)} games finished, and each record replays to the scores "
          f"the server reported, with 52 plays in every hand and every card the client sent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
