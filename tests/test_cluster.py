"""The arena's Ray backend (eval/cluster.py) and resuming from finished units: the same results as
local workers, files shipped by content, a dead worker's unit run again, a clear error without Ray."""

from __future__ import annotations

import json
import sys

import pytest

from eval import arena

RUN_KEYS = set(arena.RUN_KEYS)


def results(result) -> str:
    """The result JSON without what says how the run went (backend, workers, timings)."""
    data = result.to_dict()
    data["meta"] = {k: v for k, v in data["meta"].items() if k not in RUN_KEYS}
    return json.dumps(data, sort_keys=True)


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


SMALL = {"deals": 96, "seed": 3, "chunk_deals": 32}


def test_head_to_head_is_the_same_on_ray_as_on_one_local_worker(ray_cluster):
    local = arena.head_to_head(["hard", "easy"], "normal", workers=1, **SMALL)
    on_ray = arena.head_to_head(["hard", "easy"], "normal", workers=2, backend="ray", **SMALL)
    assert results(on_ray) == results(local)
    assert on_ray.meta["backend"] == "ray" and on_ray.meta["units_played"] == 6
    assert sum(on_ray.meta["units_per_worker"].values()) == 6


def test_round_robin_and_records_are_the_same_on_ray(ray_cluster, tmp_path):
    local = arena.round_robin(["random", "easy", "normal"], workers=1, records=tmp_path / "local.jsonl", **SMALL)
    on_ray = arena.round_robin(["random", "easy", "normal"], backend="ray", records=tmp_path / "ray.jsonl", **SMALL)
    assert results(on_ray) == results(local)
    assert (tmp_path / "ray.jsonl").read_text() == (tmp_path / "local.jsonl").read_text()


def test_a_checkpoint_travels_by_content_and_keeps_the_users_spec(ray_cluster, tmp_path):
    pytest.importorskip("torch")
    from export.fixtures import small_policy

    path = small_policy(tmp_path / "tiny.pt")
    spec = f"ckpt:{path}"
    local = arena.head_to_head(spec, "easy", workers=1, **SMALL)
    on_ray = arena.head_to_head(spec, "easy", backend="ray", **SMALL)
    assert results(on_ray) == results(local)
    assert on_ray.leaderboard[0]["spec"] in (spec, "easy") and on_ray.row(spec)["spec"] == spec


def test_agent_objects_are_refused_by_the_ray_backend(tmp_path):
    from agents import make

    with pytest.raises(arena.ArenaError, match="spec strings"):
        arena.head_to_head(("mine", make("easy", seed=0)), "normal", backend="ray", deals=8)


DYING_AGENT = """
import os
from agents import make

MARKER = {marker!r}


class DiesOnce:
    def __init__(self, seed=None, rules=None):
        self.inner = make("normal", seed=seed, rules=rules)

    def act(self, observation, action_mask):
        if not os.path.exists(MARKER):  # the first unit anywhere: the worker process dies
            open(MARKER, "w").close()
            os._exit(1)
        return self.inner.act(observation, action_mask)
"""


def test_a_unit_whose_worker_died_runs_again_with_the_same_result(ray_cluster, tmp_path):
    marker = tmp_path / "died"
    bot = tmp_path / "dying_bot.py"
    bot.write_text(DYING_AGENT.format(marker=str(marker)))
    spec = f"{bot}:DiesOnce"
    marker.touch()  # the local run must not die
    local = arena.head_to_head(spec, "easy", workers=1, **SMALL)
    marker.unlink()
    on_ray = arena.head_to_head(spec, "easy", backend="ray", **SMALL)
    assert marker.exists(), "the agent never died: the test tested nothing"
    assert results(on_ray) == results(local)


def test_a_run_resumes_from_its_finished_units(tmp_path):
    units = tmp_path / "units"
    first = arena.head_to_head(["hard", "easy"], "normal", workers=2, units_dir=units, **SMALL)
    assert first.meta["units_played"] == 6 and len(list(units.glob("unit_*.npz"))) == 6
    for path in sorted(units.glob("unit_*.npz"))[:2]:  # as if the run had been stopped before them
        path.unlink()
    again = arena.head_to_head(["hard", "easy"], "normal", workers=1, units_dir=units, **SMALL)
    assert (again.meta["units_played"], again.meta["units_loaded"]) == (2, 4)
    assert results(again) == results(first)
    with pytest.raises(arena.ArenaError, match="another arena run"):
        arena.head_to_head("hard", "normal", workers=1, units_dir=units, **{**SMALL, "seed": 4})


def test_the_command_line_resumes_and_reports_the_run(tmp_path, capsys):
    from hearts_app import cli

    args = ["arena", "easy", "--vs", "random", "--deals", "40", "--no-progress", "--resume-dir", str(tmp_path)]
    assert cli.main(args + ["--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert cli.main(args) == 0
    assert "loaded from --resume-dir" in capsys.readouterr().err
    assert cli.main(args + ["--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["meta"]["units_played"] == 0 and second["leaderboard"] == first["leaderboard"]


def test_without_ray_the_error_says_how_to_install_it(monkeypatch, capsys):
    from hearts_app import cli

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(arena.ArenaError, match="scripts/setup.sh cluster"):
        arena.head_to_head("easy", "random", deals=8, backend="ray")
    with pytest.raises(SystemExit) as stop:
        cli.main(["arena", "easy", "--deals", "8", "--backend", "ray", "--no-progress"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "scripts/setup.sh cluster" in err


def _shards(folder):
    import numpy as np

    out = {}
    for path in sorted(folder.glob("shard_*.npz")):
        with np.load(path) as data:
            out[path.name] = {name: data[name].tolist() for name in data.files}
    return out


def test_label_collection_is_the_same_on_ray_and_skips_shards_already_written(ray_cluster, tmp_path, capsys):
    pytest.importorskip("torch")
    from export.fixtures import small_policy
    from hearts_app import cli

    student = small_policy(tmp_path / "student.pt")
    common = [str(student), "--hands", "8", "--tables", "4", "--workers", "2", "--teacher", "rollout",
              "--no-pass-labels", "--opponent", "easy"]
    assert cli.main(["distill", "collect", *common, "--out", str(tmp_path / "local")]) == 0
    assert cli.main(["distill", "collect", *common, "--out", str(tmp_path / "ray"), "--backend", "ray"]) == 0
    local, on_ray = _shards(tmp_path / "local"), _shards(tmp_path / "ray")
    assert len(local) == 4 and on_ray == local
    assert json.loads(on_ray["shard_1_0000.npz"]["meta"])["student"] == str(student)
    capsys.readouterr()
    (tmp_path / "ray" / "shard_2_0001.npz").unlink()  # as if interrupted before this shard
    assert cli.main(["distill", "collect", *common, "--out", str(tmp_path / "ray"), "--backend", "ray"]) == 0
    out = capsys.readouterr().out
    assert _shards(tmp_path / "ray") == local
    assert json.loads(out.strip().splitlines()[-1])["examples"] == len(local["shard_2_0001.npz"]["values"])


def test_an_address_that_does_not_answer_is_one_line():
    pytest.importorskip("ray")
    import socket

    from eval import cluster

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(cluster.ClusterError, match="cannot reach the Ray cluster"):
        arena.head_to_head("easy", "random", deals=8, backend="ray", address=f"127.0.0.1:{port}")


def test_an_address_that_answers_but_not_as_ray_is_one_line_at_once():
    pytest.importorskip("ray")
    import http.server
    import threading
    import time

    from eval import cluster

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        t = time.monotonic()
        with pytest.raises(cluster.ClusterError, match="answers, but not as a Ray head node does"):
            arena.head_to_head("easy", "random", deals=8, backend="ray", address=f"127.0.0.1:{web.server_port}")
        assert time.monotonic() - t < 5
    finally:
        web.shutdown()


@pytest.mark.slow
def test_an_address_that_never_becomes_a_ray_cluster_is_one_line_within_the_connect_time(tmp_path):
    """A server that speaks HTTP/2 (as a proxy might) but is no Ray head: Ray alone retries for minutes."""
    pytest.importorskip("ray")
    import socket
    import subprocess
    import threading
    import time

    from eval import cluster

    listener = socket.create_server(("127.0.0.1", 0))
    held = []

    def answer():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connection.sendall(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))  # an empty SETTINGS frame, then nothing
            held.append(connection)

    threading.Thread(target=answer, daemon=True).start()
    try:
        t = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "hearts_app", "arena", "easy", "--deals", "8", "--no-progress",
                              "--backend", "ray", "--address", f"127.0.0.1:{listener.getsockname()[1]}"],
                             capture_output=True, text=True, timeout=120)
        seconds = time.monotonic() - t
    finally:
        listener.close()
        for connection in held:
            connection.close()
    ours = [line for line in run.stderr.splitlines() if line.startswith("hearts:")]  # (Ray's own log lines aside)
    assert run.returncode == 2 and seconds < cluster.CONNECT_SECONDS + 8, (seconds, run.stderr[-500:])
    assert len(ours) == 1 and ours[0].startswith("hearts: error: cannot reach the Ray cluster at 127.0.0.1:")
    assert "did not answer as a Ray cluster within 10 s" in ours[0]


@pytest.mark.slow
def test_json_on_stdout_stays_json_when_a_ray_worker_dies(tmp_path):
    pytest.importorskip("ray")
    import subprocess

    marker = tmp_path / "died"
    bot = tmp_path / "dying_bot.py"
    bot.write_text(DYING_AGENT.format(marker=str(marker)).replace(
        "            os._exit(1)", "            print('a line a dying worker prints', flush=True)\n            os._exit(1)"))
    run = subprocess.run([sys.executable, "-m", "hearts_app", "arena", f"{bot}:DiesOnce", "--vs", "easy", "--deals",
                          "24", "--seed", "3", "--backend", "ray", "--workers", "2", "--json", "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-800:]
    assert marker.exists(), "the agent never died: the test tested nothing"
    assert json.loads(run.stdout)["meta"]["format"] == "head2head"  # the whole of stdout is the JSON
