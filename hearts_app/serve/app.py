"""The web application: ``create_app(offered, games_dir)`` returns the FastAPI app ``hearts serve`` runs.

Routes (``docs/serve.md`` has them with examples; OpenAPI at ``/docs`` and ``/openapi.json``):

* ``GET /`` the page (``clients/web/index.html``, ``export.web.PAGE_DIR``), ``/static/...`` its files,
  ``GET /config.json`` its back end (``{"backend": "http"}``: this server);
* ``GET /api/v1/options`` presets, options and their choices, the offered agents;
* ``POST /api/v1/games``, ``GET /api/v1/games/{id}``, ``POST /api/v1/games/{id}/play``,
  ``GET /api/v1/games/{id}/record``: the games (``games.GameStore``; views from ``view``);
* ``GET /api/v1/agents``, ``POST /api/v1/act``: bots as a service (``bots``).

Errors are JSON ``{"detail": "one line"}`` (a refused card adds ``"legal"``): 400 a ``Host`` header
the server does not answer to (``allowed_hosts``), 404 an unknown game, 409 a card that may not be
played now (or not your turn, or the game over), 413 a body over 64 KiB, 422 anything malformed or
not allowed in a request (a body nested deeper than 64 levels included).

The API docs (``/docs``, ``/redoc``) load their scripts from the app itself (``fastapi_offline``), so
they work without the internet and tell no other site who reads them.

The parts: ``limits`` (the bounds on a request before it is parsed), ``schemas`` (the bodies and
their one check), ``routes`` (the page, the games API, the bots API, one router each); this module
puts them together over one game store and one bots service.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

import hearts_env
from export.web import PAGE_DIR

from . import batching
from . import bots as bots_module
from .bots import MAX_BODY, BotError, Bots
from .games import GameError, GameStore
from .limits import AllowedHosts, BodyLimit
from .routes import bots as bots_routes
from .routes import games as games_routes
from .routes import page as page_routes
from .routes.games import option_choices
from .schemas import invalid

__all__ = ["AllowedHosts", "create_app", "option_choices"]


def create_app(offered: Sequence[str], games_dir: str | Path, seed: int | None = None,
               allowed_hosts: Sequence[str] | None = None, workers: int = 0,
               max_pending: int = batching.DEFAULT_MAX_PENDING, max_batch: int = batching.DEFAULT_MAX_BATCH,
               search_time_limit: float | None = batching.DEFAULT_SEARCH_TIME_LIMIT,
               call_time_limit: float = batching.DEFAULT_CALL_TIME_LIMIT, warm: bool = False) -> FastAPI:
    """The web app over ``offered`` agent specs (the only ones a request may name) and the games
    saved in ``games_dir``; ``seed`` makes the seeds of games created without one reproducible.
    ``allowed_hosts``: the ``Host`` names it answers to (see :class:`AllowedHosts`; ``hearts serve``
    always gives them); None answers to every Host. Raises ``agents.AgentSpecError`` for an offered
    spec that cannot be made.

    ``/act`` calls are batched by a :class:`batching.BotService`: decided in ``workers`` worker
    processes (0: a thread of this process), at most ``max_batch`` a batch, at most ``max_pending`` in
    flight (503 beyond), a search player's within ``search_time_limit`` seconds and any other within
    ``call_time_limit`` (503 past it). ``warm`` makes every
    agent and compiles every kernel (and starts and warms the workers) before returning, as
    ``hearts serve`` does before it listens; the workers stop with the app (its lifespan)."""
    offered = list(dict.fromkeys(offered))
    if not offered:
        raise ValueError("no agents offered")
    info = bots_module.describe(offered)
    store = GameStore(offered, games_dir, seed=seed)
    bots = Bots(offered, info)
    service = batching.make_service(bots, workers=workers, max_pending=max_pending, max_batch=max_batch,
                                    search_time_limit=search_time_limit, call_time_limit=call_time_limit)
    if warm:
        if workers > 0:
            batching.warm(bots)  # this process first: it compiles what the workers then load from the cache
        service.start()

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            service.close()

    app = FastAPIOffline(  # a FastAPI app whose /docs and /redoc are served from the package, not a CDN
        title="Hearts Lab", version=hearts_env.__version__,
        description="Hearts against the Hearts Lab agents, and the agents as a service. See docs/serve.md.",
        swagger_ui_parameters={"validatorUrl": None},  # (else the page asks validator.swagger.io for a badge)
        lifespan=lifespan,
    )
    app.state.store, app.state.bots, app.state.service = store, bots, service
    app.add_middleware(bots_routes.ActRoute, service=service)  # (inside BodyLimit: added before it)
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    if allowed_hosts is not None:  # added last, so it runs first
        app.add_middleware(AllowedHosts, hosts=list(allowed_hosts))

    @app.exception_handler(GameError)
    def _game_error(request: Request, err: GameError):
        body: dict[str, Any] = {"detail": err.detail}
        if err.legal is not None:
            body["legal"] = list(err.legal)
        if err.reason is not None:
            body["reason"] = err.reason
        return JSONResponse(body, status_code=err.status)

    @app.exception_handler(BotError)
    def _bot_error(request: Request, err: BotError):
        return bots_routes.refused(err)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, err: RequestValidationError):
        return invalid(err)

    app.mount("/static", StaticFiles(directory=PAGE_DIR / "static", check_dir=False), name="static")
    app.include_router(page_routes.router())
    app.include_router(games_routes.router(store, offered, info))
    app.include_router(bots_routes.router(bots, service))  # (POST /act: answered by ActRoute, ahead of routing)
    return app
