"""``hearts serve --backend ray``: the bots API as a Ray Serve deployment of N replicas.

Only the bots API (``GET /api/v1/agents``, ``POST /api/v1/act``) is served: it keeps nothing between
calls, so any replica can answer any call. The games and the page stay with the local backend
(``hearts serve``), since a game lives in one process. User documentation: ``docs/cluster.md``
("Serving the bots on a cluster").

Each replica (:class:`BotsReplica`) is one Ray actor (one CPU) running the local server's own app
(``app.create_app`` with ``workers=0``, and a throwaway games folder that nothing is written to),
behind :class:`BotsOnly`, which lets through only the bots API's paths. So a call meets exactly what
it meets in ``hearts serve --workers 0``: the allowed-hosts check (400), the body limits (413, 422),
the ``/act`` fast path and its validation, the batching service (``batching.BotService``: concurrent
calls of one agent decided together by ``Bots.act_batch`` in one thread of the replica, a lone call
at once; at most ``max_pending`` calls in flight, 503 with ``Retry-After`` beyond; the search
players' time limit) and the same answers and one-line refusals. The app is built warm (every
offered agent made and cached, two or three records of every preset decided in a batch and alone,
so every kernel on the way is compiled), and Ray Serve sends a replica calls only once it is built:
the first call pays for no model loading or compilation.

Ray is the ``cluster`` extra (``ray[default,serve]``); it is imported inside the functions here.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

from fastapi.responses import JSONResponse

from eval.cluster import ClusterError, connect, import_ray

from . import batching
from .app import create_app
from .bots import describe

#: The Ray Serve application's name (``serve status`` shows it) and the deployment's.
APP_NAME = "hearts-bots"
DEPLOYMENT_NAME = "HeartsBots"
#: The paths a replica serves; any other gets 404 with one line.
BOTS_PATHS = ("/api/v1/agents", "/api/v1/act")


class BotsOnly:
    """ASGI: the local server's app for :data:`BOTS_PATHS` (and its lifespan); 404 with a one-line
    ``detail`` for any other path."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket") and scope["path"] not in BOTS_PATHS:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            detail = (f"{scope['path'][:80]}: this server (hearts serve --backend ray) serves only the bots API, "
                      f"{' and '.join(BOTS_PATHS)}; the games and the page are served by hearts serve --backend local")
            await JSONResponse({"detail": detail}, status_code=404)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class BotsReplica:
    """One replica of the deployment: the local server's app, warm, for the bots API only."""

    def __init__(self, offered: Sequence[str], allowed_hosts: Sequence[str] | None,
                 max_pending: int = batching.DEFAULT_MAX_PENDING,
                 search_time_limit: float | None = batching.DEFAULT_SEARCH_TIME_LIMIT):
        games = tempfile.mkdtemp(prefix="hearts-bots-replica-")
        try:  # the games of this app are never served here: its folder stays empty
            self.local_app = create_app(offered, games, allowed_hosts=allowed_hosts, workers=0, max_pending=max_pending,
                                  search_time_limit=search_time_limit, warm=True)
        finally:
            shutil.rmtree(games, ignore_errors=True)
        torch = sys.modules.get("torch")  # (imported by a ckpt: agent)
        if torch is not None:  # one replica, one CPU (Ray sets OMP_NUM_THREADS=1 as well)
            torch.set_num_threads(1)

    def __serve_build_asgi_app__(self) -> BotsOnly:
        return BotsOnly(self.local_app)  # (``app`` is Ray Serve's own attribute of an ingress)


# ---------------------------------------------------------------------------------------------
# Starting and stopping the deployment
# ---------------------------------------------------------------------------------------------


def start(offered: Sequence[str], replicas: int, host: str, port: int, allowed_hosts: Sequence[str] | None,
          address: str | None = None, max_pending: int = batching.DEFAULT_MAX_PENDING,
          search_time_limit: float | None = batching.DEFAULT_SEARCH_TIME_LIMIT) -> bool:
    """Connect to the Ray cluster at ``address`` (else ``RAY_ADDRESS``, else a local Ray with
    ``max(replicas, CPUs)`` CPUs), start Ray Serve's HTTP proxies on ``host:port`` (where Serve is
    not running yet) and deploy ``replicas`` warmed replicas, each with the local server's bounds
    (``max_pending``, ``search_time_limit``); returns once they all answer. Returns whether this
    call started Ray (see :func:`stop`). Raises :class:`ClusterError`."""
    ray, started = connect(address, max(int(replicas), os.cpu_count() or 1))
    try:
        from ray import serve  # the cluster extra

        serve.start(http_options={"host": host, "port": int(port)})
        # Serve sends a replica up to twice its bound, so that calls beyond the bound reach it and are
        # refused at once (503, Retry-After) instead of waiting in the proxies' queues.
        deployment = serve.deployment(
            serve.ingress()(BotsReplica), name=DEPLOYMENT_NAME, num_replicas=int(replicas),
            ray_actor_options={"num_cpus": 1}, max_ongoing_requests=2 * int(max_pending),
        )
        hosts = None if allowed_hosts is None else list(allowed_hosts)
        serve.run(deployment.bind(list(offered), hosts, int(max_pending), search_time_limit),
                  name=APP_NAME, route_prefix="/", blocking=False)
    except BaseException as err:
        why = _deployment_message() if isinstance(err, (ray.exceptions.RayError, RuntimeError, ValueError)) else None
        stop(started)
        if why is not None:
            raise ClusterError(f"the bots deployment did not start: {why or _last_line(err)}") from None
        raise
    return started


def stop(started: bool) -> None:
    """Remove the deployment; when :func:`start` started Ray here, stop Ray (and Serve with it)."""
    ray = import_ray()
    if not ray.is_initialized():
        return
    from ray import serve  # the cluster extra

    if started:  # Serve's controller, proxies and replicas are Ray actors: they stop with it
        ray.shutdown()
    else:
        serve.delete(APP_NAME)


def replica_states() -> dict[str, int]:
    """How many of the deployment's replicas are in each state (``RUNNING``, ``STARTING``, ...)."""
    from ray import serve  # the cluster extra

    app = serve.status().applications.get(APP_NAME)
    if app is None:
        return {}
    deployment = app.deployments.get(DEPLOYMENT_NAME)
    return {str(k.value if hasattr(k, "value") else k): v for k, v in (deployment.replica_states or {}).items()} \
        if deployment is not None else {}


def serve_forever(offered: Sequence[str], replicas: int, host: str, port: int, allowed_hosts: Sequence[str] | None,
                  address: str | None, max_pending: int = batching.DEFAULT_MAX_PENDING,
                  search_time_limit: float | None = batching.DEFAULT_SEARCH_TIME_LIMIT,
                  say: Callable[[str], None] = print) -> int:
    """``hearts serve --backend ray``: :func:`start`, then serve until Ctrl-C (or SIGTERM), then :func:`stop`."""
    began = time.perf_counter()
    describe(offered)  # an offered spec that cannot be made stops here, as with the local backend (AgentSpecError)
    where = address or os.environ.get("RAY_ADDRESS") or "a local Ray started here"
    say(f"starting {replicas} replica(s) of the bots API on Ray Serve ({where}) ...")
    logging.getLogger("ray.serve").setLevel(logging.WARNING)  # (its progress lines: this command says its own)
    started = start(offered, replicas, host, port, allowed_hosts, address, max_pending, search_time_limit)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `ray job stop`, kill: stop cleanly
    try:
        shown = f"[{host}]" if ":" in host else host
        states = ", ".join(f"{n} {state.lower()}" for state, n in sorted(replica_states().items()))
        say(f"Hearts Lab bots are serving at http://{shown}:{port}/api/v1/act on Ray Serve: {replicas} "
            f"replica(s), {states} (ready in {time.perf_counter() - began:.0f} s; Ctrl-C stops)")
        say(f"  agents: {', '.join(offered)} · only the bots API (/api/v1/agents, /api/v1/act): the games are "
            "served by hearts serve --backend local")
        limit = "no time limit" if search_time_limit is None else f"within {search_time_limit:g} s"
        say(f"  per replica: at most {max_pending} /api/v1/act calls in flight (--max-pending), search players "
            f"{limit} (--search-time-limit)")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop(started)


def _deployment_message() -> str:
    """The last line of what Serve says about the deployment (a replica's exception), or ''."""
    try:
        from ray import serve  # the cluster extra

        app = serve.status().applications.get(APP_NAME)
        deployment = app.deployments.get(DEPLOYMENT_NAME) if app is not None else None
        message = (deployment.message if deployment is not None else "") or (app.message if app is not None else "")
    except Exception:  # noqa: BLE001 (Serve itself is unreachable: the caller's error will do)
        return ""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""


def _last_line(err: BaseException) -> str:
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__


__all__ = ["APP_NAME", "BOTS_PATHS", "DEPLOYMENT_NAME", "BotsOnly", "BotsReplica", "ClusterError", "replica_states",
           "serve_forever", "start", "stop"]
