"""The Ray backend: arena units (and label-collection jobs) as Ray tasks on a cluster.

Ray is an optional extra (``scripts/setup.sh cluster``, or ``pip install 'hearts-lab[cluster]'``);
every Ray import is in this module, inside functions, so nothing else needs it.

What travels to a worker:

* the plan (rules, line-ups, labels and **spec strings**: agent objects and callables are refused
  before anything starts), the arena seed and the unit (table, chunk, deal range);
* the deal set, pickled, and every file a spec reads (``ckpt:PATH``, ``onnx:PATH`` and the
  manifest beside it, a user ``FILE.py``), each **by content**: ``ray.put`` of the bytes and their
  sha256. A worker writes them once per run to a temporary folder of its own, checks the sha256,
  and builds its agents from the spec rewritten to the local path. Labels, records and results
  keep the user's specs. Named agents and ``MODULE:NAME`` specs need the project (and the module)
  installed on every node.

Each unit is seeded from the arena seed, the table and the chunk, as with local workers, so the
results are the same whatever the backend or the number of workers. A task whose worker process
dies (killed, out of memory, a node lost) is run again by Ray, up to :data:`MAX_RETRIES` times; an
exception raised by the unit itself is not retried (it would only fail again) and comes back as
one line.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import socket
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from agents.base import sha256_file, spec_files
from hearts_env import atomic_files

from .units import ArenaError, run_unit, set_job

#: Times Ray runs a task again after its worker died.
MAX_RETRIES = 3
#: Seconds an explicit --address HOST:PORT has to answer as a Ray cluster.
CONNECT_SECONDS = 10.0
RAY_MISSING = ("the ray backend needs Ray, which is not installed: run scripts/setup.sh cluster "
               "(or pip install 'hearts-lab[cluster]')")


class ClusterError(ArenaError):
    """A problem with the cluster (Ray missing, unreachable, a unit that failed there), in one line."""


def import_ray():
    """The ``ray`` module, or a :class:`ClusterError` saying how to install it."""
    try:
        import ray  # the cluster extra: imported only when the Ray backend runs
    except ImportError:
        raise ClusterError(RAY_MISSING) from None
    return ray


def connect(address: str | None, workers: int):
    """Connect to the cluster at ``address`` (``auto``, ``HOST:PORT``), else at ``RAY_ADDRESS``,
    else start a local Ray with ``workers`` CPUs. Returns ``(ray, started)``: whether this call
    connected (and should disconnect); an already connected process keeps its connection."""
    ray = import_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    began = time.monotonic()
    remote = bool(address) and address != "auto" and not address.startswith(("ray://", "http"))
    if remote:
        _check_reachable(address, CONNECT_SECONDS)  # Ray itself would retry an unreachable address for minutes
    if ray.is_initialized():
        return ray, False
    try:
        if remote:
            _init_within(ray, CONNECT_SECONDS - (time.monotonic() - began), address=address, log_to_driver=False)
        elif address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=max(1, int(workers)), include_dashboard=False, log_to_driver=False)
    except ClusterError:
        raise
    except (ConnectionError, RuntimeError, ValueError) as err:
        where = address or "a local Ray"
        raise ClusterError(f"cannot start or reach the Ray cluster ({where}): {str(err).splitlines()[0]}") from None
    return ray, True


@contextlib.contextmanager
def ray_output_to_stderr() -> Iterator[None]:
    """While Ray runs, everything written to stdout goes to stderr: Ray's own lines ("(raylet) A worker
    died ..."), its processes' and its threads', at the file-descriptor level too, so that a command's
    stdout holds only what it prints itself (``--json``) once the run is over."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output to keep clean
        yield
        return
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _init_within(ray, seconds: float, **options) -> None:
    """``ray.init(**options)`` given at most ``seconds``: past them a ClusterError, and the attempt is left
    to die with the process (Ray's own connection retries take minutes, and it has no timeout to set)."""
    outcome: dict[str, BaseException | None] = {}

    def attempt() -> None:
        try:
            ray.init(**options)
            outcome["error"] = None
        except BaseException as err:  # noqa: BLE001 (handed to the caller's thread)
            outcome["error"] = err

    thread = threading.Thread(target=attempt, daemon=True, name="hearts-ray-connect")
    thread.start()
    thread.join(max(0.1, seconds))
    if "error" not in outcome:
        raise ClusterError(f"cannot reach the Ray cluster at {options.get('address')}: it did not answer as a Ray "
                           f"cluster within {CONNECT_SECONDS:g} s")
    if outcome["error"] is not None:
        raise outcome["error"]


#: What an HTTP/2 client sends first (RFC 9113 section 3.4): the preface, then an empty SETTINGS frame.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _check_reachable(address: str, seconds: float = 10.0) -> None:
    """A :class:`ClusterError` within ``seconds`` unless ``address`` answers as a Ray head does: Ray's
    GCS speaks gRPC, so it answers an HTTP/2 preface with a SETTINGS frame. Ray alone retries an
    address that does not answer for minutes, and waits on one that is not Ray for ever."""
    host, _, port = address.rpartition(":")
    ends = time.monotonic() + seconds
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=seconds) as connection:
            connection.settimeout(max(0.1, ends - time.monotonic()))
            connection.sendall(_HTTP2_PREFACE)
            header = b""
            while len(header) < 9:
                chunk = connection.recv(9 - len(header))
                if not chunk:
                    break
                header += chunk
    except ValueError:
        raise ClusterError(f"--address {address!r}: expected auto or HOST:PORT") from None
    except socket.timeout:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: no answer within {seconds:g} s") from None
    except OSError as err:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {err.strerror or err}") from None
    if len(header) < 9 or header[3] != 4:  # (frame type 4: SETTINGS)
        raise ClusterError(f"cannot reach the Ray cluster at {address}: it answers, but not as a Ray head node "
                           "does (its GCS port, 6379 unless ray start --port says otherwise)")


# ---------------------------------------------------------------------------------------------
# Files by content
# ---------------------------------------------------------------------------------------------


def _shipped_files(specs: Iterable[Any]) -> list[list[tuple[str, str]]]:
    """Per spec, the ``(path, sha256)`` of each file it reads (the model first)."""
    out = []
    for spec in specs:
        files = []
        for path in spec_files(spec):
            data = Path(path).read_bytes()
            files.append((path, hashlib.sha256(data).hexdigest()))
        out.append(files)
    return out


def _local_spec(spec: str, files: list[tuple[str, str]], blobs: dict[str, bytes], folder: Path) -> str:
    """Write a spec's files under ``folder`` (checked by sha256) and the spec naming the local copy."""
    if not files:
        return spec
    main_path, main_sha = files[0]
    home = folder / main_sha[:24]
    home.mkdir(parents=True, exist_ok=True)
    local_main = None
    for path, sha in files:
        data = blobs[sha]
        if hashlib.sha256(data).hexdigest() != sha:
            raise ClusterError(f"the copy of {path} that reached this worker is damaged (sha256 mismatch)")
        local = home / Path(path).name
        if not local.is_file() or sha256_file(local) != sha:
            atomic_files.write_bytes(local, data)
        if path == main_path:
            local_main = local
    text = spec.strip()
    index = text.find(main_path)
    return text[:index] + str(local_main) + text[index + len(main_path):]


def _materialize(key: str, specs: list, files: list, blob_shas: list[str], blobs: tuple) -> list:
    """The local specs for one run on this worker (written once per run and process)."""
    cached = _LOCAL.get(key)
    if cached is not None:
        return cached
    by_sha = dict(zip(blob_shas, blobs))
    folder = Path(tempfile.gettempdir()) / "hearts-ray-files"
    local = [_local_spec(spec, f, by_sha, folder) for spec, f in zip(specs, files)]
    while len(_LOCAL) >= 4:  # a long-lived worker serves many runs: keep the latest few
        _LOCAL.pop(next(iter(_LOCAL)))
    _LOCAL[key] = local
    return local


_LOCAL: dict[str, list] = {}
_DEALS: dict[str, Any] = {}


def _worker_id() -> str:
    import ray  # the cluster extra (this runs on a Ray worker, where it is installed)

    try:
        node = ray.get_runtime_context().get_node_id()[:8]
    except Exception:  # noqa: BLE001 (an older or newer Ray: the host name will do)
        node = socket.gethostname()
    return f"{node}:{os.getpid()}"


def _unit_task(key: str, unit: tuple, job: dict, deal_blob: bytes, *blobs: bytes):
    """One arena unit on a Ray worker."""
    if key not in _DEALS:
        if hashlib.sha256(deal_blob).hexdigest() != job["deal_sha"]:
            raise ClusterError("the deal set that reached this worker is damaged (sha256 mismatch)")
        _DEALS.clear()
        _DEALS[key] = pickle.loads(deal_blob)
    specs = _materialize(key, [e.spec for e in job["plan"].entrants], job["files"], job["blob_shas"], blobs)
    set_job({"plan": job["plan"], "deals": _DEALS[key], "seed": job["seed"], "record": job["record"],
             "specs": specs})
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    games, records, _ = run_unit(unit)
    return games, records, _worker_id()


def _put_files(ray, files: list[list[tuple[str, str]]]) -> tuple[list[str], list]:
    """One ``ray.put`` of the bytes of each distinct file: ``(sha256s, object refs)``."""
    shas, refs = [], []
    for path, sha in (item for entry in files for item in entry):
        if sha not in shas:
            shas.append(sha)
            refs.append(ray.put(Path(path).read_bytes()))
    return shas, refs


def _results(ray, pending: dict, what: Callable[[Any], str]) -> Iterator[tuple[Any, Any]]:
    """``(key, value)`` of each task as it finishes (``ray.wait``), with failures as one line."""
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                key = pending.pop(ref)
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayTaskError as err:
                    cause = err.cause if getattr(err, "cause", None) is not None else err
                    message = str(cause).strip().splitlines()[-1] if str(cause).strip() else type(cause).__name__
                    raise ClusterError(f"{what(key)} failed on the cluster: {message}") from None
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                        ray.exceptions.ObjectLostError) as err:
                    raise ClusterError(f"{what(key)} failed on the cluster after {MAX_RETRIES} retries: "
                                       f"{type(err).__name__}") from None
                yield key, value
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def play_units(job: dict, units: list, todo: list[int], workers: int, address: str | None):
    """``(unit index, games, records, worker)`` for each unit of ``todo``, played as Ray tasks."""
    plan = job["plan"]
    bad = [e.label for e in plan.entrants if not isinstance(e.spec, str)]
    if bad:
        raise ClusterError(f"the ray backend ships agents as spec strings; {', '.join(bad)} is an agent object or "
                           "callable")
    files = _shipped_files(e.spec for e in plan.entrants)
    with ray_output_to_stderr():
        yield from _play_units_on_ray(job, plan, units, todo, files, workers, address)


def _play_units_on_ray(job: dict, plan, units: list, todo: list[int], files: list, workers: int, address: str | None):
    ray, started = connect(address, workers)
    try:
        deal_blob = pickle.dumps(job["deals"], protocol=pickle.HIGHEST_PROTOCOL)
        deal_ref = ray.put(deal_blob)
        shas, refs = _put_files(ray, files)
        small = {"plan": plan, "seed": job["seed"], "record": job["record"], "files": files, "blob_shas": shas,
                 "deal_sha": hashlib.sha256(deal_blob).hexdigest()}
        small_ref = ray.put(small)
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(_unit_task)
        key = uuid.uuid4().hex
        pending = {task.remote(key, units[i], small_ref, deal_ref, *refs): i for i in todo}
        describe = lambda i: f"unit (table {units[i][0]}, chunk {units[i][1]})"
        for i, (games, records, worker) in _results(ray, pending, describe):
            yield i, games, records, worker
    finally:
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------------------------
# Any list of jobs (label collection): one task per job, files shipped by content
# ---------------------------------------------------------------------------------------------


def _call_task(function: Callable, job: Any, paths: list[str], shas: list[str], *blobs: bytes):
    folder = Path(tempfile.gettempdir()) / "hearts-ray-files"
    local = {}
    for path, sha, blob in zip(paths, shas, blobs):
        local[path] = _local_spec(path, [(path, sha)], {sha: blob}, folder)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    return function(job, local), _worker_id()


def map_jobs(function: Callable[[Any, dict[str, str]], Any], jobs: list, files: list[str], workers: int,
             address: str | None) -> Iterator[tuple[int, Any, str]]:
    """Run ``function(job, local_paths)`` for each job as a Ray task (``local_paths`` maps each of
    ``files`` to its copy on the worker, shipped by content); ``(job index, result, worker)`` as
    each finishes. ``function`` must be importable on the workers (a module-level function)."""
    with ray_output_to_stderr():
        yield from _map_jobs_on_ray(function, jobs, files, workers, address)


def _map_jobs_on_ray(function: Callable, jobs: list, files: list[str], workers: int, address: str | None):
    ray, started = connect(address, workers)
    try:
        blobs = [Path(p).read_bytes() for p in files]  # read once: hashed and shipped alike
        shas = [hashlib.sha256(blob).hexdigest() for blob in blobs]
        refs = [ray.put(blob) for blob in blobs]
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(_call_task)
        pending = {task.remote(function, job, list(files), shas, *refs): i for i, job in enumerate(jobs)}
        for i, (value, worker) in _results(ray, pending, lambda i: f"job {i}"):
            yield i, value, worker
    finally:
        if started:
            ray.shutdown()


class RayRolloutPool:
    """PPO's rollout workers (train/rollout_workers.py) as Ray actors, one CPU each, on the cluster at
    ``address`` (as :func:`connect`); answers ``play`` as the local pool does. The league's specs are
    made on each actor: a spec naming a file (``ckpt:PATH``) must be readable at that path on every
    node. An actor that dies is not restarted (its league's state would be lost): the run checkpoints
    and stops with a ``RolloutWorkerError``, and ``--resume`` goes on."""

    backend = "ray"

    def __init__(self, config, workers: int, address: str | None = None):
        from train.rollout_workers import RolloutWorker  # (inside: torch is imported only for PPO's rollouts)

        self._quiet = contextlib.ExitStack()  # stdout to stderr while the pool lives (see ray_output_to_stderr)
        with self._quiet as quiet:
            quiet.enter_context(ray_output_to_stderr())
            self.ray, self.started = connect(address, workers)
            actor = self.ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
            self.actors = [actor.remote(config.model_dump()) for _ in range(workers)]
            self._quiet = quiet.pop_all()  # started: kept until close()

    @property
    def workers(self) -> int:
        return len(self.actors)

    def play(self, weights: dict, snapshots, plans: list) -> tuple[list, float]:
        """Every plan's rollout, in order, and the longest time an actor spent playing."""
        from train.rollout_workers import RolloutWorkerError, in_shard_order, shares

        ray = self.ray
        weights_ref = ray.put(weights)
        snapshots_ref = ray.put(snapshots)
        calls = [actor.play.remote(weights_ref, snapshots_ref, [plans[k] for k in share])
                 for actor, share in zip(self.actors, shares(len(plans), self.workers))]
        answers = []
        for index, call in enumerate(calls):
            try:
                answers.append(ray.get(call))
            except ray.exceptions.RayActorError as err:
                raise RolloutWorkerError(f"rollout worker {index} (a Ray actor) died: "
                                         f"{str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__}"
                                         ) from None
            except ray.exceptions.RayTaskError as err:
                cause = err.cause if getattr(err, "cause", None) is not None else err
                raise RolloutWorkerError(f"rollout worker {index} failed: {type(cause).__name__}: "
                                         f"{str(cause).strip().splitlines()[-1] if str(cause).strip() else ''}") from None
        return in_shard_order([rollouts for rollouts, _ in answers], len(plans)), max(s for _, s in answers)

    def close(self) -> None:
        try:
            for actor in self.actors:
                self.ray.kill(actor)
            if self.started:
                self.ray.shutdown()
        finally:
            self._quiet.close()


__all__ = ["CONNECT_SECONDS", "MAX_RETRIES", "RAY_MISSING", "ClusterError", "connect", "import_ray", "map_jobs",
           "play_units", "ray_output_to_stderr", "RayRolloutPool"]
