"""A worker process of ``hearts serve`` that dies or stops costs its own calls, a 503 each, and is
replaced alone while the other workers answer on; every /act call has a deadline."""

from __future__ import annotations

import os
import signal
import time

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from export.situations import sample_records  # noqa: E402
from hearts_app.serve import batching, faultload  # noqa: E402
from hearts_app.serve.app import create_app  # noqa: E402
from hearts_env.rules import Rules  # noqa: E402


@pytest.fixture(scope="module")
def records():
    return sample_records(Rules.preset("classic"), 12, seed=3, games=2)


def wait_until(condition, seconds: float) -> bool:
    ends = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > ends:
            return False
        time.sleep(0.05)
    return True


def test_a_killed_worker_is_replaced_alone_while_the_other_answers_on(tmp_path, records):
    app = create_app(["easy"], tmp_path, workers=2, warm=True)
    pool = app.state.service.decider
    body = {"agent": "easy", "record": records[0]}
    with TestClient(app) as client:
        expected = client.post("/api/v1/act", json=body).json()
        first, other = pool.pids
        os.kill(first, signal.SIGKILL)
        statuses = []
        t = time.monotonic()
        for _ in range(6):  # the killed one's call (if it gets one) is a 503; the other worker answers at once
            answer = client.post("/api/v1/act", json=body)
            statuses.append(answer.status_code)
            if answer.status_code == 503:
                assert answer.headers["retry-after"] == "1" and "being replaced" in answer.json()["detail"]
            else:
                assert answer.json() == expected
        assert statuses.count(200) >= 5 and time.monotonic() - t < 2
        assert wait_until(lambda: pool.ready_slots() == 2, 60)  # the replacement warmed up
        assert pool.replaced == 1 and other in pool.pids and first not in pool.pids and len(pool.pids) == 2
        assert client.post("/api/v1/act", json=body).json() == expected
    assert pool.pids == []


def test_a_stopped_worker_costs_a_503_within_the_call_time_limit_then_is_replaced(tmp_path, records):
    app = create_app(["easy"], tmp_path, workers=1, warm=True, call_time_limit=0.5)
    pool = app.state.service.decider
    body = {"agent": "easy", "record": records[1]}
    with TestClient(app) as client:
        expected = client.post("/api/v1/act", json=body).json()
        stopped = pool.pids[0]
        os.kill(stopped, signal.SIGSTOP)
        try:
            t = time.monotonic()
            answer = client.post("/api/v1/act", json=body)
            assert answer.status_code == 503 and time.monotonic() - t < 1.5
            assert answer.headers["retry-after"] == "1"
            assert "within the call time limit of 0.5 s (--call-time-limit)" in answer.json()["detail"]
            # past the batch's limit and HUNG_AFTER it is killed and replaced; meanwhile a 503 at once
            assert wait_until(lambda: pool.replaced == 1, 10)
            refused = client.post("/api/v1/act", json=body)
            assert refused.status_code in (200, 503)
            assert wait_until(lambda: pool.ready_slots() == 1, 60) and stopped not in pool.pids
            assert client.post("/api/v1/act", json=body).json() == expected
        finally:
            try:
                os.kill(stopped, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert not os.path.exists(f"/proc/{stopped}") or "Z" in open(f"/proc/{stopped}/stat").read().split()[2]


def test_a_worker_that_cannot_start_stops_the_start_in_one_line(tmp_path, monkeypatch):
    bots = batching.Bots(["easy"])
    pool = batching.WorkerPool(bots, 1)
    monkeypatch.setattr(pool, "_args", lambda: (["no-such-agent"], {}, None))  # its Bots cannot be made
    with pytest.raises(RuntimeError, match="died while making and warming up the agents"):
        pool.start(timeout=120)
    assert pool.pids == []


@pytest.mark.slow
def test_under_32_clients_with_a_worker_killed_every_second_every_call_gets_its_card_or_a_503():
    result = faultload.run("hard", seconds=10, client_count=32, kill_every=1.0, workers=2)
    assert result["workers_killed"] >= 8 and result["calls"] > 1000
    assert result["other"] == 0 and result["wrong_cards"] == 0 and result["slowest_s"] <= 2.0
    assert result["answered"] > 0 and result["refused_503"] > 0
