"""``hearts serve --backend ray``: the bots API on Ray Serve replicas answers as the local server does.

The server tests start ``hearts serve --backend ray --replicas 2`` on a local Ray (about 15-30 s on
two cores) and are marked ``slow``; the test extra installs Ray Serve, and they are skipped where
it is missing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from hearts_app import cli
from hearts_app.serve.app import create_app
from hearts_app.serve.bots import BotError, Bots
from hearts_app.commands.serve import default_allowed_hosts

ROOT = Path(__file__).resolve().parents[1]
SPECS = ["hard", "ppo-classic"]
GOLDEN = [ROOT / "agents/policies/ppo_classic/golden.json", ROOT / "clients/js/test/fixtures/golden.json"]
STARTUP = 240.0  # seconds for Ray, Serve and two warmed replicas to start on a loaded two-core machine
_SERVER_PID: dict[str, int] = {}  # the ray_server fixture's process, by its URL


def golden_records() -> tuple[list[dict], list[dict]]:
    """The golden files' records (their cases and encoder cases, each once) and their invalid records."""
    records, invalid, seen = [], [], set()
    for path in GOLDEN:
        data = json.loads(path.read_text())
        for record in [c["record"] for c in data["cases"] + data["encoder_cases"]]:
            key = json.dumps(record, sort_keys=True)
            if key not in seen:
                seen.add(key)
                records.append(record)
        invalid += [c["record"] for c in data["invalid"]]
    return records, invalid


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_server(tmp_path_factory):
    """``hearts serve --backend ray --replicas 2`` in a subprocess: ``(base URL, its first lines)``."""
    pytest.importorskip("ray.serve")
    from agents import builtin

    if "ppo-classic" not in builtin("classic"):
        pytest.skip("the shipped ppo-classic policy is not installed")
    port = free_port()
    log = tmp_path_factory.mktemp("ray-serve") / "server.log"
    with open(log, "w+") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "hearts_app", "serve", "--backend", "ray", "--replicas", "2", "--host", "127.0.0.1",
             "--port", str(port), "--agents", ",".join(SPECS),
             "--call-time-limit", "60"],  # (the answers are compared, not timed: a loaded machine is slow)
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1", "RAY_ADDRESS": ""},
        )
        try:
            deadline = time.monotonic() + STARTUP
            while "serving at" not in log.read_text():
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"hearts serve --backend ray did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
            _SERVER_PID[f"http://127.0.0.1:{port}"] = process.pid
            yield f"http://127.0.0.1:{port}", log.read_text()
        finally:
            process.send_signal(signal.SIGINT)  # Ctrl-C: it stops the Ray it started
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def local_client(tmp_path_factory):
    """The local server's app, answering to the same Host names as the Ray server."""
    app = create_app(SPECS, tmp_path_factory.mktemp("games"), allowed_hosts=default_allowed_hosts("127.0.0.1"))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def local_answer(bots: Bots, spec: str, record: dict) -> tuple[int, dict]:
    try:
        return 200, bots.act(spec, record)
    except BotError as err:
        return err.status, {"detail": err.detail}


@pytest.mark.slow
def test_two_replicas_answer_every_golden_record_as_the_local_bots(ray_server):
    url, lines = ray_server
    assert "2 replica(s), 2 running" in lines, lines
    records, invalid = golden_records()
    assert len(records) >= 80 and len(invalid) >= 10
    calls = [(spec, record) for record in records + invalid for spec in SPECS]
    bots = Bots(SPECS)
    expected = [local_answer(bots, spec, record) for spec, record in calls]
    assert sum(status == 200 for status, _ in expected) >= len(records)  # hard plays every rules set
    with httpx.Client(base_url=url, timeout=60) as client, ThreadPoolExecutor(16) as pool:
        assert client.get("/api/v1/agents").json() == bots.agents()

        def ask(call):
            r = client.post("/api/v1/act", json={"agent": call[0], "record": call[1]})
            return r.status_code, r.json()

        got = list(pool.map(ask, calls))  # 16 in flight: the replicas decide them in batches
    wrong = [(spec, e, g) for (spec, _), e, g in zip(calls, expected, got) if e != g]
    assert not wrong, f"{len(wrong)} of {len(calls)} calls differ; first: {wrong[0]}"


@pytest.mark.slow
def test_refusals_have_the_local_servers_status_and_detail(ray_server, local_client):
    url, _ = ray_server
    records, invalid = golden_records()
    record = records[0]
    json_body = {"content-type": "application/json"}
    requests = [  # (method, path, keyword arguments)
        ("POST", "/api/v1/act", {"json": {"agent": "search", "record": record}}),
        ("POST", "/api/v1/act", {"json": {"agent": "hard", "record": invalid[0]}}),
        ("POST", "/api/v1/act", {"json": {"agent": "ppo-classic", "record": records[-1]}}),  # other rules, maybe
        ("POST", "/api/v1/act", {"json": {"agent": "hard", "record": dict(record, seat=10**30)}}),
        ("POST", "/api/v1/act", {"json": {"agent": 5, "record": record, "extra": 1}}),
        ("POST", "/api/v1/act", {"content": b"not json", "headers": json_body}),
        ("POST", "/api/v1/act", {"content": b"[" * 30_000 + b"]" * 30_000, "headers": json_body}),
        ("POST", "/api/v1/act", {"content": b'{"agent": "hard", "record": ' + b"[" * 100 + b"]" * 100 + b"}",
                                 "headers": json_body}),
        ("POST", "/api/v1/act", {"json": {"agent": "hard", "record": dict(record, note="x" * 70_000)}}),
        ("POST", "/api/v1/act", {"json": {"agent": "hard", "record": record}, "headers": {"host": "evil.example"}}),
        ("GET", "/api/v1/agents", {"headers": {"host": "evil.example:8000"}}),
    ]
    with httpx.Client(base_url=url, timeout=60) as client:
        for method, path, kwargs in requests:
            theirs = local_client.request(method, path, **kwargs)
            ours = client.request(method, path, **kwargs)
            assert 400 <= theirs.status_code < 500, (kwargs, theirs.text[:200])
            assert (ours.status_code, ours.json()) == (theirs.status_code, theirs.json()), kwargs.get("json", kwargs)
        r = client.get("/api/v1/games/abc")  # the games are not served here: said in one line
        assert r.status_code == 404 and "--backend local" in r.json()["detail"]


@pytest.mark.parametrize("argv, words", [
    (["serve", "--replicas", "2"], "--backend ray"),
    (["serve", "--address", "auto"], "--backend ray"),
    (["serve", "--backend", "ray", "--replicas", "0"], "argument --replicas: must be 1 or more, got 0"),
    (["serve", "--backend", "ray", "--replicas", "1025"], "argument --replicas: must be at most 1,024, got 1025"),
    (["serve", "--backend", "ray", "--workers", "2"], "--workers goes with --backend local"),
    (["serve", "--backend", "ray", "--max-pending", "0"], "argument --max-pending: must be 1 or more, got 0"),
])
def test_ray_options_are_checked_before_anything_starts(argv, words, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert words in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Front: this process's HTTP side, the replicas' failures answered in the API's JSON
# ---------------------------------------------------------------------------------------------


class FakeHandle:
    """A deployment handle whose ``call.remote`` runs ``answer(request)`` (a coroutine function)."""

    def __init__(self, answer):
        self.call = self
        self.answer = answer
        self.requests = []

    def remote(self, request):
        self.requests.append(request)
        return FakeResponse(self.answer(request))


class FakeResponse:
    def __init__(self, coroutine):
        self.coroutine = coroutine
        self.cancelled = False

    def __await__(self):
        return self.coroutine.__await__()

    def cancel(self):
        self.cancelled = True


def front_client(answer, timeout=5.0):
    pytest.importorskip("ray")
    from hearts_app.serve.replicas import front_app

    handle = FakeHandle(answer)
    return TestClient(front_app(handle, timeout)), handle


def test_front_hands_the_request_whole_to_a_replica_and_sends_back_its_answer(local_client):
    from hearts_app.serve.replicas import BotsOnly, asgi_call

    async def replica(request):  # the local app, as a replica runs it
        return await asgi_call(BotsOnly(local_client.app), request)

    records, _ = golden_records()
    client, handle = front_client(replica)
    with client:
        body = {"agent": "hard", "record": records[0]}
        ours = client.post("/api/v1/act?x=1", json=body, headers={"host": "127.0.0.1"})
        theirs = local_client.post("/api/v1/act", json=body)
        assert (ours.status_code, ours.json()) == (theirs.status_code, theirs.json()) == (200, theirs.json())
        request = handle.requests[-1]
        assert (request["method"], request["path"], request["query_string"]) == ("POST", "/api/v1/act", b"x=1")
        assert json.loads(request["body"]) == body
        refused = client.get("/api/v1/games/abc", headers={"host": "127.0.0.1"})
        assert refused.status_code == 404 and "--backend local" in refused.json()["detail"]
        big = client.post("/api/v1/act", content=b"x" * 70_000, headers={"content-type": "application/json"})
        assert big.status_code == 413 and big.json()["detail"].startswith("the request body is too large")
        assert len(handle.requests) == 2  # refused here, before a replica was asked


def test_a_replica_that_dies_with_the_call_is_a_json_503_with_retry_after():
    async def dies(request):
        raise RuntimeError("ActorDiedError: the actor died unexpectedly before finishing this task")

    client, _ = front_client(dies)
    with client:
        answer = client.post("/api/v1/act", json={"agent": "hard", "record": {}})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.headers["content-type"] == "application/json"
    assert "stopped or cannot take it (RuntimeError)" in answer.json()["detail"]


def test_a_replica_that_does_not_answer_in_time_is_a_json_503_and_the_call_is_cancelled():
    import asyncio

    async def hangs(request):
        await asyncio.sleep(30)

    client, handle = front_client(hangs, timeout=0.3)
    with client:
        answer = client.post("/api/v1/act", json={"agent": "hard", "record": {}})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert "no replica answered within 0.3 s" in answer.json()["detail"]


def replica_pids(server_pid: int) -> list[int]:
    """The processes below ``server_pid`` that are replicas of the bots deployment (from /proc)."""
    found, stack = [], [server_pid]
    while stack:
        pid = stack.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            for child in children:
                stack.append(child)
                try:
                    if b"ServeReplica:hearts-bots" in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.append(child)
                except OSError:
                    pass
    return found


@pytest.mark.slow
def test_calls_in_flight_when_a_replica_is_killed_get_their_card_or_a_json_503(ray_server):
    url, _ = ray_server
    server_pid = int(_SERVER_PID[url])
    victims = replica_pids(server_pid)
    assert len(victims) == 2, victims
    records, _ = golden_records()
    bots = Bots(["hard"])
    expected = [local_answer(bots, "hard", r) for r in records[:60]]

    def ask(i):
        r = client.post("/api/v1/act", json={"agent": "hard", "record": records[i % 60]})
        return i, r.status_code, r.headers.get("content-type"), r.headers.get("retry-after"), r.json()

    with httpx.Client(base_url=url, timeout=60) as client, ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(ask, i) for i in range(600)]
        time.sleep(0.3)
        os.kill(victims[0], signal.SIGKILL)
        got = [f.result() for f in futures]
    assert all(kind == "application/json" for _, _, kind, _, _ in got)
    assert any(status == 503 for _, status, _, _, _ in got), "no call met the killed replica: the test tested nothing"
    for i, status, _, retry, body in got:
        assert status in (200, 503), (status, body)
        if status == 200:
            assert (200, body) == expected[i % 60]
        else:
            assert retry == "1" and "retry" in body["detail"]
