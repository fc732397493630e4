"""``hearts serve``'s bots at scale: calls decided in batches (``Bots.act_batch``, ``serve.batching``).

Batched answers equal one-by-one answers on every golden record; agents that draw random numbers are
seeded per call; the bound on calls in flight answers 503 with Retry-After while the other routes
answer; a search player's call over its time limit is refused, never answered with another card;
worker processes answer as this process does (slow: it starts one); the load test's report.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from agents import builtin
from hearts_app.serve import batching, loadtest
from hearts_app.serve.app import create_app
from hearts_app.serve.bots import BotError, Bots, call_seed, draws_random_numbers
from hearts_env import seat_record

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_FILES = [ROOT / "agents/policies/ppo_classic/golden.json", ROOT / "clients/js/test/fixtures/golden.json"]
ONNX = "onnx:agents/policies/ppo_classic/policy.onnx"


@pytest.fixture(scope="module")
def golden_records() -> list[dict]:
    """Every record of the golden files: the policy's cases, the encoder cases of every variant and
    the invalid records (refused the same way alone or in a batch)."""
    out = []
    for path in GOLDEN_FILES:
        data = json.loads(path.read_text())
        out += [c["record"] for c in data["cases"] + data["encoder_cases"]] + [c["record"] for c in data["invalid"]]
    return out


def deterministic_specs() -> list[str]:
    specs = ["easy", "normal", "hard"]
    policies = [s for s in ("ppo-classic", "ppo-two-player") if s in builtin()]
    try:
        import torch  # noqa: F401
    except ImportError:
        policies = []
    try:
        import onnxruntime  # noqa: F401
        specs.append(ONNX)
    except ImportError:
        pass
    return specs + policies


@pytest.fixture(scope="module")
def bots() -> Bots:
    return Bots(deterministic_specs() + ["random", "search"])


@pytest.fixture(scope="module")
def play_records(golden_records) -> list[dict]:
    """Classic card plays with a choice (where a search player searches)."""
    out = []
    for record in golden_records:
        try:
            parsed = seat_record.parse(record)
            mask = seat_record.legal_mask(record)
        except seat_record.SeatRecordError:
            continue
        if parsed.phase == "play" and parsed.rules.same_game("classic") and mask.sum() > 1:
            out.append(record)
    return out


def test_batched_answers_equal_one_by_one_answers_on_every_golden_record(bots, golden_records):
    mixed = []
    for spec in deterministic_specs():
        calls = [(spec, record) for record in golden_records]
        alone = [bots.act_batch([call])[0] for call in calls]
        assert bots.act_batch(calls) == alone, spec
        assert sum(isinstance(a, dict) for a in alone) >= 20, spec  # not vacuous: most records are answered
        mixed += calls
    # All agents' calls in one batch, shuffled: each still gets its own answer.
    order = sorted(range(len(mixed)), key=lambda i: (i * 7919) % len(mixed))
    shuffled = bots.act_batch([mixed[i] for i in order])
    for j, i in enumerate(order):
        assert shuffled[j] == bots.act_batch([mixed[i]])[0]


def test_a_policy_answers_the_same_alone_and_in_any_batch(bots, golden_records):
    if "ppo-classic" not in bots.offered:
        pytest.skip("the shipped ppo-classic policy (torch) is not installed")
    classic = []
    for record in golden_records:
        try:
            if seat_record.parse(record).rules.same_game("classic") and seat_record.legal_mask(record).any():
                classic.append(record)
        except seat_record.SeatRecordError:
            continue
    calls = [("ppo-classic", r) for r in classic][:70]
    assert len(calls) == 70
    alone = [bots.act_batch([call])[0] for call in calls]
    assert all(isinstance(a, dict) and a["probabilities"] for a in alone)
    for size in (2, 63, 64, 65):  # (blocks of 64 rows: the boundaries)
        got = []
        for start in range(0, len(calls), size):
            got += bots.act_batch(calls[start:start + size])
        assert got == alone, size


def test_the_agents_that_draw_random_numbers_are_the_random_and_search_players(bots):
    from hearts_env.rules import Rules

    classic = Rules.preset("classic")
    assert draws_random_numbers(bots.cache.get("random", classic)[0])
    assert draws_random_numbers(bots.cache.get("search", classic)[0])
    for spec in deterministic_specs():
        agent = bots.cache.get(spec, classic if spec != "ppo-two-player" else Rules.preset("two_player"))[0]
        assert not draws_random_numbers(agent), spec


@pytest.mark.parametrize("spec", ["random", "search"])
def test_a_random_drawing_agent_gives_a_record_the_same_card_alone_and_in_a_batch(bots, play_records, spec):
    records = play_records[:6] if spec == "search" else play_records[:40]
    alone = [bots.act_batch([(spec, r)])[0] for r in records]
    again = [bots.act_batch([(spec, r)])[0] for r in reversed(records)][::-1]  # after other calls
    batch = bots.act_batch([(spec, r) for r in records])
    assert alone == again == batch
    others = bots.act_batch([(spec, r) for r in records[1:]] + [(spec, records[0])] + [("hard", records[0])])
    assert others[len(records) - 1] == alone[0]
    if spec == "random":  # seeded by the situation, not one seed for all: the cards vary
        legal_counts = [int(seat_record.legal_mask(r).sum()) for r in records]
        lowest = [min(range(52), key=lambda c: (not seat_record.legal_mask(r)[c], c)) for r in records]
        assert sum(a["action"] != low for a, low, n in zip(alone, lowest, legal_counts) if n > 1) > len(records) // 4


def test_the_seed_is_the_situation_not_its_spelling(play_records):
    record = play_records[0]
    spelled = json.loads(json.dumps(record).replace('"TH"', '"10h"'))
    a, b = (seat_record.encode_batch([r]) for r in (record, spelled))
    assert call_seed(a[0][0], a[1][0]) == call_seed(b[0][0], b[1][0])
    other = seat_record.encode_batch([play_records[1]])
    assert call_seed(other[0][0], other[1][0]) != call_seed(a[0][0], a[1][0])


def test_a_call_past_its_deadline_is_refused_by_act_batch_not_answered(bots, play_records):
    answers = bots.act_batch([("random", play_records[0]), ("random", play_records[1]), ("hard", play_records[2])],
                             deadlines=[time.monotonic() - 1, None, time.monotonic() - 1])
    assert isinstance(answers[0], BotError) and answers[0].status == 504
    assert "time limit" in answers[0].detail and "no other card" in answers[0].detail
    assert isinstance(answers[1], dict) and isinstance(answers[2], dict)  # (a deterministic batch is not searched)


# ---------------------------------------------------------------------------------------------
# The service: batches, the bound, the time limit
# ---------------------------------------------------------------------------------------------


def test_concurrent_calls_are_decided_in_batches_with_their_own_answers(bots, golden_records):
    service = batching.BotService(bots, max_pending=1000)
    calls = [(spec, r) for r in golden_records[:60] for spec in ("hard", "easy")]

    async def everything():
        return await asyncio.gather(*(service.act(spec, r) for spec, r in calls), return_exceptions=True)

    try:
        got = asyncio.run(everything())
    finally:
        service.close()
    assert got == [bots.act_batch([call])[0] for call in calls]
    assert service.decided == len(calls) and service.batches <= 8  # gathered, not one by one


class Gate:
    """A decider whose batches wait until the test opens the gate."""

    slots = 1

    def __init__(self, bots):
        self.bots, self.opened, self.started = bots, threading.Event(), threading.Event()

    def start(self):
        pass

    def ready_slots(self):
        return 1

    async def decide(self, calls, deadlines, until):
        self.started.set()
        while not self.opened.is_set():
            await asyncio.sleep(0.005)
        return self.bots.act_batch(calls, deadlines)

    def close(self):
        self.opened.set()


def test_beyond_max_pending_act_is_503_with_retry_after_and_the_other_routes_answer(tmp_path, golden_records):
    app = create_app(["easy", "hard"], tmp_path, max_pending=3, call_time_limit=60)
    service = app.state.service
    gate = service.decider = Gate(service.bots)
    body = {"agent": "hard", "record": golden_records[0]}
    with TestClient(app) as client:
        answers = []
        held = [threading.Thread(target=lambda: answers.append(client.post("/api/v1/act", json=body)))
                for _ in range(3)]
        for thread in held:
            thread.start()
        deadline = time.monotonic() + 10
        while service.pending < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert service.pending == 3 and gate.started.is_set()
        t = time.perf_counter()
        refused = client.post("/api/v1/act", json=body)
        assert time.perf_counter() - t < 1.0  # at once
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        detail = refused.json()["detail"]
        assert "busy" in detail and "--max-pending 3" in detail and "\n" not in detail
        assert client.get("/api/v1/agents").status_code == 200
        assert client.post("/api/v1/games", json={"opponents": ["easy"] * 3, "seed": 1}).status_code == 201
        gate.opened.set()
        for thread in held:
            thread.join(10)
        assert [a.status_code for a in answers] == [200] * 3
        assert client.post("/api/v1/act", json=body).json() == answers[0].json()  # room again
    assert service.pending == 0


class Slow:
    """A decider that takes ``seconds`` a batch, then decides."""

    slots = 1

    def __init__(self, bots, seconds):
        self.bots, self.seconds = bots, seconds

    def start(self):
        pass

    def ready_slots(self):
        return 1

    async def decide(self, calls, deadlines, until):
        await asyncio.sleep(self.seconds)
        return self.bots.act_batch(calls, deadlines)

    def close(self):
        pass


def test_a_search_call_over_the_time_limit_is_refused_never_answered_with_another_card(bots, play_records):
    service = batching.BotService(bots, Slow(bots, 0.5), search_time_limit=0.1)

    async def one():
        return await service.act("search", play_records[0])

    with pytest.raises(BotError) as refused:
        asyncio.run(one())
    assert refused.value.status == 504
    assert "'search' did not decide this call within the search time limit of 0.1 s" in refused.value.detail
    # Other agents have no time limit.
    fast = batching.BotService(bots, Slow(bots, 0.3), search_time_limit=0.1)
    assert asyncio.run(fast.act("hard", play_records[0]))["card"]


def test_a_search_call_that_cannot_start_in_time_is_refused_at_once(bots, play_records):
    service = batching.BotService(bots, Slow(bots, 0.2), search_time_limit=1.0)
    service.seconds_per_search["search"] = 0.4  # (as measured on earlier calls)

    async def three():
        return await asyncio.gather(*(service.act("search", r) for r in play_records[:5]), return_exceptions=True)

    t = time.perf_counter()
    got = asyncio.run(three())
    refused = [g for g in got if isinstance(g, BotError)]
    assert refused and all(g.status == 503 and g.headers == {"Retry-After": "1"} for g in refused)
    assert "over the search time limit of 1 s" in refused[0].detail
    answered = [g for g in got if isinstance(g, dict)]
    assert answered == [bots.act_batch([("search", r)])[0] for r, g in zip(play_records, got) if isinstance(g, dict)]
    assert time.perf_counter() - t < 5


def test_a_real_search_player_over_its_limit_is_refused_through_the_api(tmp_path, play_records):
    app = create_app(["hard", "search"], tmp_path, search_time_limit=0.001)
    with TestClient(app) as client:
        r = client.post("/api/v1/act", json={"agent": "search", "record": play_records[0]})
        assert r.status_code == 504 and "search time limit of 0.001 s" in r.json()["detail"]
        assert client.post("/api/v1/act", json={"agent": "hard", "record": play_records[0]}).status_code == 200


# ---------------------------------------------------------------------------------------------
# Worker processes
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_worker_processes_answer_as_this_process_does(tmp_path, golden_records, play_records):
    specs = ["hard", "random"] + [s for s in deterministic_specs() if s.startswith("ppo-classic")]
    app = create_app(specs, tmp_path, workers=1, warm=True)
    service = app.state.service
    assert isinstance(service.decider, batching.WorkerPool) and len(service.decider.pids) == 1
    here = Bots(specs)
    with TestClient(app) as client:
        for spec in specs:
            records = golden_records if spec != "random" else play_records
            answers = [client.post("/api/v1/act", json={"agent": spec, "record": r}) for r in records[:40]]
            for r, answer in zip(records, answers):
                expected = here.act_batch([(spec, r)])[0]
                if isinstance(expected, BotError):
                    assert (answer.status_code, answer.json()["detail"]) == (expected.status, expected.detail)
                else:
                    assert answer.status_code == 200 and answer.json() == expected
    assert service.decider.pids == []  # stopped with the app


# ---------------------------------------------------------------------------------------------
# The load test
# ---------------------------------------------------------------------------------------------


def test_the_load_test_reports_rates_percentiles_errors_and_503s():
    r = loadtest.row("hard", "act", 64, [0.001 * i for i in range(1, 101)], [0.002, 0.004], 1, 2.0)
    assert r["answered"] == 100 and r["per_second"] == 50.0 and r["errors"] == 1 and r["refused_503"] == 2
    assert r["p50_ms"] == pytest.approx(50.5) and r["p95_ms"] == pytest.approx(95.05)
    assert r["p99_ms"] == pytest.approx(99.01) and r["refused_p99_ms"] == pytest.approx(3.98)
    empty = loadtest.row("hard", "agents", 1, [], [], 0, 0.0)
    assert empty["p50_ms"] is None and empty["per_second"] == 0.0
    table = loadtest.format_rows([r, empty])
    assert "calls/s" in table and "503s" in table and "wrk cpu" in table and table.count("\n") == 2
    cpu = loadtest.row("hard", "act", 4, [0.001] * 3, [0.001], 0, 1.0, cpu={"server": 0.004, "workers": 0.008,
                                                                          "client": 0.002})
    assert (cpu["cpu_server_ms"], cpu["cpu_workers_ms"], cpu["cpu_client_ms"]) == (1.0, 2.0, 0.5)
    assert loadtest.make_parser().parse_args(["--in-flight", "1, 16,64"]).in_flight == [1, 16, 64]
    for bad in ("", "0", "a", "1,99999"):
        with pytest.raises(SystemExit) as exit_info:
            loadtest.make_parser().parse_args(["--in-flight", bad])
        assert exit_info.value.code == 2


@pytest.mark.slow
def test_the_load_test_runs_against_a_real_server_and_loses_no_move(capsys):
    code = loadtest.main(["--agent", "easy", "--in-flight", "1,8", "--requests", "40", "--games", "2",
                          "--workers", "1", "--json", "--timeout", "600"])
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads(out)
    paths = {(r["path"], r["in_flight"]) for r in report["rows"]}
    assert {("act", 1), ("act", 8), ("agents", 8), ("games", 8), ("2 games", 2)} <= paths
    act = [r for r in report["rows"] if r["path"] == "act"]
    assert all(r["answered"] == 40 and r["errors"] == 0 and r["per_second"] > 0 for r in act)
    assert all(r["cpu_workers_ms"] > 0 and r["cpu_server_ms"] > 0 for r in act)  # (the workers are found)
    assert report["games_checked"] == 2 and report["check"].startswith("no move lost")


def test_the_breakdown_says_where_a_workers_time_per_call_goes(play_records):
    parts = loadtest.breakdown(["hard"], play_records[:4], sizes=(1, 2))
    assert [(p["agent"], p["batch"]) for p in parts] == [("hard", 1), ("hard", 2)]
    assert all(p[k] > 0 for p in parts for k in ("parse_ms", "replay_ms", "agent_ms", "act_batch_ms"))


@pytest.mark.parametrize("option, value, says", [
    ("--workers", "-1", "must be 0 or more, got -1"),
    ("--workers", "257", "must be at most 256 worker processes, got 257"),
    ("--max-pending", "0", "must be 1 or more, got 0"),
    ("--search-time-limit", "0", "must be a number above 0, got '0'"),
    ("--search-time-limit", "nan", "must be a number above 0, got 'nan'"),
    ("--search-time-limit", "86401", "must be at most 86,400 seconds (a day), got 86401"),
    ("--call-time-limit", "3601", "must be at most 3,600 seconds (an hour), got 3601"),
    ("--idle-timeout", "-1", "must be a number above 0, got '-1'"),
    ("--max-connections", "1000001", "must be at most 1,000,000, got 1000001"),
    ("--port", "65536", "a port is 0 to 65535 (0: any free port), got 65536"),
    ("--port", "-1", "a port is 0 to 65535 (0: any free port), got -1"),
])
def test_hearts_serve_refuses_bad_bounds_in_one_line(tmp_path, capsys, option, value, says):
    from hearts_app import cli

    with pytest.raises(SystemExit) as exit:
        cli.main(["serve", "--agents", "easy", option, value, "--games-dir", str(tmp_path / "g")])
    lines = capsys.readouterr().err.strip().splitlines()
    # argparse's usage, then the refusal in one line naming the option; nothing made
    assert exit.value.code == 2 and lines[-1] == f"hearts serve: error: argument {option}: {says}"
    assert lines[0].startswith("usage: hearts serve") and not (tmp_path / "g").exists()
