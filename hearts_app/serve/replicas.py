"""``hearts serve --backend ray``: the bots API as a Ray Serve deployment of N replicas.

Only the bots API (``GET /api/v1/agents``, ``POST /api/v1/act``) is served: it keeps nothing between
calls, so any replica can answer any call. The games and the page stay with the local backend
(``hearts serve``), since a game lives in one process. User documentation: ``docs/cluster.md``
("Serving the bots on a cluster").

Each replica (:class:`BotsReplica`) is one Ray actor (one CPU) holding the same :class:`~.bots.Bots`,
request bounds and error answers as the local server: it builds the local server's app
(``app.create_app``, with a throwaway games folder that nothing is ever written to) and takes from it
its ``Bots``, its middleware (``AllowedHosts``: 400 for a Host it does not answer to; ``BodyLimit``:
413 over 64 KiB, 422 nested too deeply) and its exception handlers (a ``BotError`` or a body that
does not validate: the status and one-line ``detail`` of the local server). Its own FastAPI app has
just the two routes, with ``Act`` (the local server's body model). So a record gets the same answer
from any replica as from ``hearts serve``.

At start a replica decides two records of every preset for each offered agent (making and caching
the agent, loading its model, compiling the Numba kernels of the record's replay and of the agent),
so the first call pays none of that; Ray Serve sends it calls only once it is warm.

Concurrent ``/act`` calls reaching one replica are gathered by Ray Serve's ``@serve.batch`` (at
most :data:`MAX_BATCH`, no waiting for company: a lone call is decided at once) and decided in a
worker thread, by ``Bots.act_batch`` where ``Bots`` has it, else one ``Bots.act`` after the other;
each call gets its own answer or refusal.

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

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

import hearts_env
from eval.cluster import ClusterError, connect, import_ray
from export.situations import sample_records
from hearts_env.rules import Rules

from .app import Act, create_app
from .bots import BotError, Bots, describe

#: The Ray Serve application's name (``serve status`` shows it) and the deployment's.
APP_NAME = "hearts-bots"
DEPLOYMENT_NAME = "HeartsBots"
#: The most /act calls one replica decides in one batch.
MAX_BATCH = 64
#: The most calls Ray Serve sends one replica at once (its own default, 5, would keep batches small).
MAX_ONGOING = 2 * MAX_BATCH


def warm(bots: Bots) -> int:
    """Decide two records (a pass and a play) of every preset each offered agent plays, so that the
    agents are made and cached and every kernel on the way is compiled. Returns the calls made."""
    calls = []
    for spec in bots.offered:
        for name in bots.info[spec].presets:
            calls += [(spec, record) for record in sample_records(Rules.preset(name), 2, seed=0, games=1)]
    decide_all(bots, calls)
    for spec, record in calls[:1]:
        bots.act(spec, record)  # the one-call path too
    return len(calls)


def decide_all(bots: Bots, calls: list[tuple[Any, Any]]) -> list[Any]:
    """Each call's answer (a dict) or the exception that refuses it, in order: ``Bots.act_batch``
    where it exists, else ``Bots.act`` one call after the other."""
    act_batch = getattr(bots, "act_batch", None)
    if act_batch is not None:
        return list(act_batch(calls))
    out: list[Any] = []
    for spec, record in calls:
        try:
            out.append(bots.act(spec, record))
        except Exception as err:  # noqa: BLE001 (handed to its own request, which raises it)
            out.append(err)
    return out


class BotsReplica:
    """One replica of the deployment: the local server's ``Bots``, bounds and error answers, warmed."""

    def __init__(self, offered: Sequence[str], allowed_hosts: Sequence[str] | None):
        games = tempfile.mkdtemp(prefix="hearts-bots-replica-")
        try:  # the games of this app are never served here: its folder stays empty
            local = create_app(offered, games, allowed_hosts=allowed_hosts)
        finally:
            shutil.rmtree(games, ignore_errors=True)
        torch = sys.modules.get("torch")  # (imported by a ckpt: agent)
        if torch is not None:  # one replica, one CPU (Ray sets OMP_NUM_THREADS=1 as well)
            torch.set_num_threads(1)
        self.bots: Bots = local.state.bots
        self.handlers = dict(local.exception_handlers)
        self.middleware = list(local.user_middleware)
        self.warmed = warm(self.bots)
        from ray import serve  # the cluster extra (this runs in a Ray actor, where it is installed)

        self.decide = serve.batch(max_batch_size=MAX_BATCH, batch_wait_timeout_s=0.0)(self.decide_batch)

    async def decide_batch(self, calls: list[tuple[Any, Any]]) -> list[Any]:
        return await asyncio.to_thread(decide_all, self.bots, calls)

    async def act(self, spec: Any, record: Any) -> dict[str, Any]:
        result = await self.decide((spec, record))
        if isinstance(result, BaseException):
            raise result
        return result

    def __serve_build_asgi_app__(self) -> FastAPI:
        return bots_app(self)


def bots_app(replica: BotsReplica) -> FastAPI:
    """The replica's web app: the bots API's two routes over ``replica``, with the local server's
    middleware and exception handlers."""
    app = FastAPIOffline(
        title="Hearts Lab bots", version=hearts_env.__version__,
        description="The Hearts Lab agents as a service, on Ray Serve replicas (hearts serve --backend ray). "
                    "See docs/serve.md and docs/cluster.md.",
        swagger_ui_parameters={"validatorUrl": None},
        exception_handlers=replica.handlers, middleware=replica.middleware,
    )

    @app.get("/api/v1/agents", tags=["bots"])
    async def list_agents() -> dict[str, Any]:
        """The offered agents: the rules each plays, whether it reports probabilities."""
        return replica.bots.agents()  # (on the event loop: answered at once, whatever /act has queued)

    @app.post("/api/v1/act", tags=["bots"])
    async def act(body: Act) -> dict[str, Any]:
        """The card an offered agent plays at a seat record's decision (docs/export.md)."""
        return await replica.act(body.agent, body.record)

    @app.api_route("/api/v1/{path:path}", methods=["GET", "POST", "PUT", "DELETE", "PATCH"], include_in_schema=False)
    def elsewhere(path: str):
        raise BotError(404, f"/api/v1/{path[:80]}: this server (hearts serve --backend ray) serves only the bots "
                            "API, /api/v1/agents and /api/v1/act; the games are served by hearts serve --backend local")

    return app


# ---------------------------------------------------------------------------------------------
# Starting and stopping the deployment
# ---------------------------------------------------------------------------------------------


def start(offered: Sequence[str], replicas: int, host: str, port: int, allowed_hosts: Sequence[str] | None,
          address: str | None = None) -> bool:
    """Connect to the Ray cluster at ``address`` (else ``RAY_ADDRESS``, else a local Ray with
    ``max(replicas, CPUs)`` CPUs), start Ray Serve's HTTP proxies on ``host:port`` (where Serve is
    not running yet) and deploy ``replicas`` warmed replicas; returns once they all answer. Returns
    whether this call started Ray (see :func:`stop`). Raises :class:`ClusterError`."""
    ray, started = connect(address, max(int(replicas), os.cpu_count() or 1))
    try:
        from ray import serve  # the cluster extra

        serve.start(http_options={"host": host, "port": int(port)})
        deployment = serve.deployment(
            serve.ingress()(BotsReplica), name=DEPLOYMENT_NAME, num_replicas=int(replicas),
            ray_actor_options={"num_cpus": 1}, max_ongoing_requests=MAX_ONGOING,
        )
        serve.run(deployment.bind(list(offered), None if allowed_hosts is None else list(allowed_hosts)),
                  name=APP_NAME, route_prefix="/", blocking=False)
    except BaseException as err:
        stop(started)
        if isinstance(err, (ray.exceptions.RayError, RuntimeError, ValueError)):
            raise ClusterError(f"the bots deployment did not start: {_last_line(err)}") from None
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
                  address: str | None, say: Callable[[str], None] = print) -> int:
    """``hearts serve --backend ray``: :func:`start`, then serve until Ctrl-C (or SIGTERM), then :func:`stop`."""
    began = time.perf_counter()
    describe(offered)  # an offered spec that cannot be made stops here, as with the local backend (AgentSpecError)
    where = address or os.environ.get("RAY_ADDRESS") or "a local Ray started here"
    say(f"starting {replicas} replica(s) of the bots API on Ray Serve ({where}) ...")
    logging.getLogger("ray.serve").setLevel(logging.WARNING)  # (its progress lines: this command says its own)
    started = start(offered, replicas, host, port, allowed_hosts, address)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `ray job stop`, kill: stop cleanly
    try:
        shown = f"[{host}]" if ":" in host else host
        states = ", ".join(f"{n} {state.lower()}" for state, n in sorted(replica_states().items()))
        say(f"Hearts Lab bots are serving at http://{shown}:{port}/api/v1/act on Ray Serve: {replicas} "
            f"replica(s), {states} (ready in {time.perf_counter() - began:.0f} s; Ctrl-C stops)")
        say(f"  agents: {', '.join(offered)} · only the bots API (/api/v1/agents, /api/v1/act): the games are "
            "served by hearts serve --backend local")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop(started)


def _last_line(err: BaseException) -> str:
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__


__all__ = ["APP_NAME", "DEPLOYMENT_NAME", "MAX_BATCH", "BotsReplica", "ClusterError", "bots_app", "decide_all",
           "replica_states", "serve_forever", "start", "stop", "warm"]
