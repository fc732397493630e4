"""``hearts serve --backend ray``: the bots API as a Ray Serve deployment of N replicas, behind this process.

Only the bots API (``GET /api/v1/agents``, ``POST /api/v1/act``) is served: it keeps nothing between
calls, so any replica can answer any call. The games and the page stay with the local backend
(``hearts serve``), since a game lives in one process. User documentation: ``docs/cluster.md``
("Serving the bots on a cluster").

Each replica (:class:`BotsReplica`) is one Ray actor (one CPU) running the local server's own app
(``app.create_app`` with ``workers=0``, and a throwaway games folder that nothing is written to),
behind :class:`BotsOnly`, which lets through only the bots API's paths. So a call meets exactly what
it meets in ``hearts serve --workers 0``: the allowed-hosts check (400), the body limits (413, 422),
the ``/act`` route and its one check of the body, the batching service (``batching.BotService``: concurrent
calls of one agent decided together by ``Bots.act_batch`` in one thread of the replica, a lone call
at once; at most ``max_pending`` calls in flight, 503 with ``Retry-After`` beyond; the search
players' time limit) and the same answers and one-line refusals. The app is built warm (every
offered agent made and cached, two or three records of every preset decided in a batch and alone,
so every kernel on the way is compiled), and Ray Serve sends a replica calls only once it is built:
the first call pays for no model loading or compilation.

The HTTP side is this process's (:class:`Front`, on uvicorn with the local server's connection
bounds), not Serve's proxies: it reads each request and hands it whole to a replica through the
deployment's handle (Serve's router), and answers what the replica answered. A call whose replica
dies, or that no replica can take or answer in time, gets the API's JSON refusal, 503 with
``Retry-After`` (Serve's proxy would answer a text/plain 500).

Ray is the ``cluster`` extra (``ray[default,serve]``); it is imported inside the functions here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from fastapi.responses import JSONResponse

from eval.cluster import ClusterError, connect, import_ray

from . import batching
from .app import create_app
from .bots import describe
from .limits import BodyLimit, read_body

#: The Ray Serve application's name (``serve status`` shows it) and the deployment's.
APP_NAME = "hearts-bots"
DEPLOYMENT_NAME = "HeartsBots"
#: The paths a replica serves; any other gets 404 with one line.
BOTS_PATHS = ("/api/v1/agents", "/api/v1/act")
#: Seconds Front waits for a replica beyond the calls' own time limits before it answers 503.
FRONT_GRACE = 5.0


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
                 search_time_limit: float | None = batching.DEFAULT_SEARCH_TIME_LIMIT,
                 call_time_limit: float = batching.DEFAULT_CALL_TIME_LIMIT):
        games = tempfile.mkdtemp(prefix="hearts-bots-replica-")
        try:  # the games of this app are never served here: its folder stays empty
            self.local_app = create_app(offered, games, allowed_hosts=allowed_hosts, workers=0, max_pending=max_pending,
                                        search_time_limit=search_time_limit, call_time_limit=call_time_limit,
                                        warm=True)
        finally:
            shutil.rmtree(games, ignore_errors=True)
        torch = sys.modules.get("torch")  # (imported by a ckpt: agent)
        if torch is not None:  # one replica, one CPU (Ray sets OMP_NUM_THREADS=1 as well)
            torch.set_num_threads(1)

        self.bots_only = BotsOnly(self.local_app)

    async def call(self, request: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """One HTTP request, as :class:`Front` read it, answered by the local app: ``(status, headers, body)``."""
        return await asgi_call(self.bots_only, request)


async def asgi_call(app, request: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Run an ASGI ``app`` on one request read whole (``method``, ``path``, ``query_string``,
    ``headers``, ``body``); its answer as ``(status, headers, body)``."""
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": request["method"], "scheme": "http", "path": request["path"],
             "raw_path": request["path"].encode(), "query_string": request["query_string"], "root_path": "",
             "headers": request["headers"], "client": None, "server": None, "state": {}}
    given = False

    async def receive():
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": request["body"], "more_body": False}
        await asyncio.get_running_loop().create_future()  # (the client of a request read whole never leaves)

    answer: dict[str, Any] = {"status": 500, "headers": [], "body": []}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"], answer["headers"] = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            answer["body"].append(message.get("body", b""))

    await app(scope, receive, send)
    return answer["status"], answer["headers"], b"".join(answer["body"])


def front_app(handle, timeout: float) -> BodyLimit:
    """This process's ASGI app: :class:`Front` behind the local server's body limits (413, 400, 422
    with its words, before a replica is asked)."""
    return BodyLimit(Front(handle, timeout))


class Front:
    """ASGI: this process's side of the deployment. Reads each request whole, hands it to a replica
    by the deployment's ``handle`` and sends back its answer. A replica that dies with the call, a full deployment
    (Serve's queue bound) or no answer within ``timeout`` seconds: 503 with ``Retry-After`` and a
    one-line JSON ``detail``; anything else that fails: 500 with one."""

    def __init__(self, handle, timeout: float):
        self.handle, self.timeout = handle, timeout

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = await read_body(receive)  # (bounded by BodyLimit, around this app: see front_app)
        if body is None:  # the client went away
            return
        request = {"method": scope["method"], "path": scope["path"], "query_string": scope.get("query_string", b""),
                   "headers": list(scope["headers"]), "body": body}
        status, headers, payload = await self._ask(request)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    async def _ask(self, request: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        ray = import_ray()
        response = self.handle.call.remote(request)
        try:
            return await asyncio.wait_for(response, self.timeout)
        except asyncio.TimeoutError:
            response.cancel()
            return _refusal(503, f"no replica answered within {self.timeout:g} s; retry after "
                                 f"{batching.RETRY_AFTER} s")
        except ray.exceptions.RayTaskError as err:  # the replica's own code failed (the app answers its errors)
            return _refusal(500, f"the replica failed: {_last_line(err)}"[:500], retry=False)
        except Exception as err:  # noqa: BLE001 (the replica died, the deployment is full or unreachable)
            return _refusal(503, f"the replica deciding this call stopped or cannot take it "
                                 f"({type(err).__name__}); retry after {batching.RETRY_AFTER} s")


def _refusal(status: int, detail: str, retry: bool = True) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    response = JSONResponse({"detail": detail}, status_code=status,
                            headers={"Retry-After": str(batching.RETRY_AFTER)} if retry else None)
    return status, list(response.raw_headers), response.body


# ---------------------------------------------------------------------------------------------
# Starting and stopping the deployment
# ---------------------------------------------------------------------------------------------


def start(offered: Sequence[str], replicas: int, allowed_hosts: Sequence[str] | None, address: str | None = None,
          max_pending: int = batching.DEFAULT_MAX_PENDING,
          search_time_limit: float | None = batching.DEFAULT_SEARCH_TIME_LIMIT,
          call_time_limit: float = batching.DEFAULT_CALL_TIME_LIMIT) -> tuple[bool, Any]:
    """Connect to the Ray cluster at ``address`` (else ``RAY_ADDRESS``, else a local Ray with
    ``max(replicas, CPUs)`` CPUs) and deploy ``replicas`` warmed replicas, each with the local
    server's bounds (``max_pending``, ``search_time_limit``, ``call_time_limit``), with no Serve
    proxy (:class:`Front` is the HTTP side); returns once they all answer. Returns whether this call
    started Ray (see :func:`stop`) and the deployment's handle. Raises :class:`ClusterError`."""
    ray, started = connect(address, max(int(replicas), os.cpu_count() or 1))
    try:
        from ray import serve  # the cluster extra

        serve.start(proxy_location="Disabled")
        # Serve sends a replica up to twice its bound, so that calls beyond the bound reach it and are
        # refused at once (503, Retry-After) instead of waiting in the handle's queue, which holds at
        # most max_pending calls more (then Serve's BackPressureError: a 503 from Front).
        deployment = serve.deployment(
            BotsReplica, name=DEPLOYMENT_NAME, num_replicas=int(replicas), ray_actor_options={"num_cpus": 1},
            max_ongoing_requests=2 * int(max_pending), max_queued_requests=int(max_pending),
        )
        hosts = None if allowed_hosts is None else list(allowed_hosts)
        handle = serve.run(deployment.bind(list(offered), hosts, int(max_pending), search_time_limit, call_time_limit),
                           name=APP_NAME, route_prefix=None, blocking=False)
    except BaseException as err:
        why = _deployment_message() if isinstance(err, (ray.exceptions.RayError, RuntimeError, ValueError)) else None
        stop(started)
        if why is not None:
            raise ClusterError(f"the bots deployment did not start: {why or _last_line(err)}") from None
        raise
    return started, handle


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


def serve_forever(offered: Sequence[str], replicas: int, url: str, allowed_hosts: Sequence[str] | None,
                  address: str | None, serve_app: Callable[[Any], None],
                  max_pending: int = batching.DEFAULT_MAX_PENDING,
                  search_time_limit: float | None = batching.DEFAULT_SEARCH_TIME_LIMIT,
                  call_time_limit: float = batching.DEFAULT_CALL_TIME_LIMIT,
                  say: Callable[[str], None] = print) -> int:
    """``hearts serve --backend ray``: :func:`start`, then ``serve_app(Front)`` (uvicorn on the bound
    socket, until Ctrl-C or SIGTERM), then :func:`stop`. ``url``: where it listens, as said."""
    began = time.perf_counter()
    describe(offered)  # an offered spec that cannot be made stops here, as with the local backend (AgentSpecError)
    where = address or os.environ.get("RAY_ADDRESS") or "a local Ray started here"
    say(f"starting {replicas} replica(s) of the bots API on Ray Serve ({where}) ...")
    logging.getLogger("ray.serve").setLevel(logging.WARNING)  # (its progress lines: this command says its own)
    started, handle = start(offered, replicas, allowed_hosts, address, max_pending, search_time_limit, call_time_limit)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `ray job stop`, kill: stop cleanly
    try:
        states = ", ".join(f"{n} {state.lower()}" for state, n in sorted(replica_states().items()))
        say(f"Hearts Lab bots are serving at {url}api/v1/act on Ray Serve: {replicas} replica(s), {states} "
            f"(ready in {time.perf_counter() - began:.0f} s; Ctrl-C stops)")
        say(f"  agents: {', '.join(offered)} · only the bots API (/api/v1/agents, /api/v1/act): the games are "
            "served by hearts serve --backend local")
        limit = "no time limit" if search_time_limit is None else f"within {search_time_limit:g} s"
        say(f"  per replica: at most {max_pending} /api/v1/act calls in flight (--max-pending), search players "
            f"{limit} (--search-time-limit), any other call within {call_time_limit:g} s (--call-time-limit)")
        serve_app(front_app(handle, max(search_time_limit or 0.0, call_time_limit) + FRONT_GRACE))
        return 0
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


__all__ = ["APP_NAME", "BOTS_PATHS", "DEPLOYMENT_NAME", "BotsOnly", "BotsReplica", "ClusterError", "Front",
           "asgi_call", "front_app", "replica_states", "serve_forever", "start", "stop"]
