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
"""

from __future__ import annotations

import contextlib
import copy
import ipaddress
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

import numpy as np

import hearts_env
from export.web import PAGE_DIR
from hearts_env import cards
from hearts_env.rule_space import OFFERED_CHOICES
from hearts_env.rules import PRESETS

from . import batching
from . import bots as bots_module
from .bots import MAX_BODY, BotError, Bots
from .games import GameError, GameStore, default_opponents


def option_choices() -> dict[str, list]:
    """Each option the page sets, with its choices (the real ``Rules`` field names and values): the
    options the rule families cover (``hearts_env.rule_space.OFFERED_CHOICES``)."""
    return copy.deepcopy(OFFERED_CHOICES)


# ---------------------------------------------------------------------------------------------
# Request bodies
# ---------------------------------------------------------------------------------------------


class NewGame(BaseModel):
    """A new game: the preset, option overrides (``Rules`` field names), the opponents' agent specs
    (one per other seat, each offered by the server; omitted: easy, normal, hard) and the deals' seed."""

    model_config = ConfigDict(extra="forbid")
    preset: StrictStr = Field("classic", examples=["classic"])
    rules: dict[str, Any] = Field(default_factory=dict, examples=[{"moon": "subtract_from_self"}])
    opponents: list[StrictStr] | None = Field(None, examples=[["easy", "normal", "hard"]], max_length=8)
    seed: StrictInt | None = Field(None, ge=0, le=2**63 - 1, examples=[7])


class Play(BaseModel):
    """The card you play, or pick to pass: text such as ``"QS"``, ``"TH"`` (also ``10h``, ``q♠``)."""

    model_config = ConfigDict(extra="forbid")
    card: StrictStr = Field(..., max_length=8, examples=["QS"])


class Act(BaseModel):
    """An offered agent's spec and a seat record (``docs/export.md``)."""

    model_config = ConfigDict(extra="forbid")
    agent: StrictStr = Field(..., max_length=200, examples=["hard"])
    record: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# Bounds on the request, before anything parses it: its Host header, its body's size and nesting
# ---------------------------------------------------------------------------------------------

#: The deepest nesting of arrays and objects a request body may have (the API's bodies need a few;
#: Python's JSON reader fails past about a thousand, with a RecursionError).
MAX_DEPTH = 64
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENING, _CLOSING = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


class BodyTooLarge(Exception):
    """A request body that grew past the limit :func:`read_body` was given."""


async def read_body(receive, limit: int | None = None) -> bytes | None:
    """The request body read whole from an ASGI ``receive``; None when the client went away.
    Raises :class:`BodyTooLarge` as soon as it grows past ``limit`` bytes."""
    body, more = bytearray(), True
    while more:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return None
        body += message.get("body", b"")
        if limit is not None and len(body) > limit:
            raise BodyTooLarge
        more = message.get("more_body", False)
    return bytes(body)


def too_large(limit: int, size: int | None = None) -> str:
    """The 413's detail: a body over ``limit`` bytes (``size`` when it was declared)."""
    got = f" ({size:,} bytes)" if size is not None else ""
    return f"the request body is too large{got}; at most {limit:,} bytes"


def body_then(body: bytes, receive):
    """An ASGI ``receive`` that gives the app ``body`` (already read whole by a middleware) as one
    message, then whatever ``receive`` brings (a disconnect)."""
    given = False

    async def replay():
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def nested_too_deeply(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``body`` nests arrays and objects more than ``limit`` deep (brackets
    inside strings do not count). Vectorised: at most 64 KiB arrive here, on every request."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    text = np.frombuffer(_JSON_STRING.sub(b'""', body), np.uint8)
    steps = np.isin(text, _OPENING).astype(np.int32) - np.isin(text, _CLOSING)
    return bool(steps.size) and int(np.cumsum(steps).max()) > limit


def _host_name(header: str) -> str:
    """The name in a Host header, without the port, the IPv6 brackets or a final dot, lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0].rstrip(".") if header.count(":") == 1 else header.rstrip(".")


def _address_kind(name: str) -> int | None:
    """4 or 6 for an IP address, else None (a name)."""
    try:
        return ipaddress.ip_address(name).version
    except ValueError:
        return None


class AllowedHosts:
    """ASGI middleware: a request whose ``Host`` header is not one of ``hosts`` gets 400 before
    the app sees it. A page of another site whose name an attacker points at this machine (DNS
    rebinding) is sent with that site's name as its Host, so it cannot use the API from a visitor's
    browser. ``hosts`` holds names and addresses (any port); ``*.example.org`` allows the names
    under example.org, ``0.0.0.0`` every IPv4 address and ``::`` every IPv6 address (an address
    typed into a browser is no rebinding), ``*`` everything."""

    def __init__(self, app, hosts: Sequence[str]):
        self.app, self.hosts = app, list(hosts)
        names = {_host_name(h) for h in hosts}
        self.everything = "*" in names
        self.addresses = {kind for kind, wildcard in ((4, "0.0.0.0"), (6, "::")) if wildcard in names}
        self.suffixes = tuple(n[1:] for n in names if n.startswith("*."))
        self.names = {n for n in names if not n.startswith("*")}

    def allows(self, header: str) -> bool:
        name = _host_name(header)
        if self.everything or name in self.names or (self.suffixes and name.endswith(self.suffixes)):
            return True
        return bool(name) and _address_kind(name) in self.addresses

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket") or self.everything:
            await self.app(scope, receive, send)
            return
        named = [value.decode("latin-1") for key, value in scope["headers"] if key == b"host"]
        header = named[0] if len(named) == 1 else ""
        if len(named) <= 1 and self.allows(header):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        shown = header if len(header) <= 80 else header[:77] + "..."
        detail = (f"this server does not answer to the Host {shown!r}; it answers to {', '.join(self.hosts)} "
                  "(hearts serve --allowed-hosts names others)") if len(named) <= 1 else (
            f"a request names its Host once; this one names {len(named)} (which one it meant cannot be told)")
        response = JSONResponse({"detail": detail}, status_code=400, headers={"Connection": "close"})
        await response(scope, receive, send)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets 413 before the app sees it (the
    declared Content-Length, then the bytes actually received, so a chunked body is bounded too),
    and one nested deeper than ``MAX_DEPTH`` levels gets 422."""

    def __init__(self, app, limit: int = MAX_BODY):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await self._refuse(scope, receive, send, 400, "Content-Length is not a number")
                return
            if size > self.limit:
                await self._refuse(scope, receive, send, 413, too_large(self.limit, size))
                return
        try:
            body = await read_body(receive, self.limit)
        except BodyTooLarge:
            await self._refuse(scope, receive, send, 413, too_large(self.limit))
            return
        if body is None:
            return
        if nested_too_deeply(body):
            await self._refuse(scope, receive, send, 422, f"the body is not JSON this API reads: arrays and objects "
                                                          f"nested more than {MAX_DEPTH} levels deep")
            return
        await self.app(scope, body_then(body, receive), send)

    async def _refuse(self, scope, receive, send, status: int, detail: str) -> None:
        response = JSONResponse({"detail": detail}, status_code=status, headers={"Connection": "close"})
        await response(scope, receive, send)


class ActRoute:
    """ASGI middleware: ``POST /api/v1/act`` answered straight from the service, without FastAPI's
    per-request machinery (its dependency solving, the body model's validation, the response's
    encoding), which costs about as much of the server's process as the decision itself. It sits
    inside :class:`BodyLimit`, so the body it reads is bounded in size and nesting. Beyond the
    service's bound on calls in flight it answers 503 before it reads the body as JSON. A body of the
    documented shape (a JSON object of exactly ``agent``, a text of at most 200 characters, and
    ``record``, an object, sent as ``application/json``) goes to ``service.act``; anything else goes
    on to the FastAPI route (:class:`Act`), whose validation answers as it does for every route. The
    answer is the route's: the same JSON, status and headers."""

    def __init__(self, app, service, path: str = "/api/v1/act"):
        self.app, self.service, self.path = app, service, path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        if body is None:
            return
        try:
            self.service.refuse_if_busy()  # (before the body is read as JSON: a refusal costs little)
        except BotError as err:
            response = JSONResponse({"detail": err.detail}, status_code=err.status, headers=err.headers)
            await response(scope, receive, send)
            return
        call = self._call(scope, body)
        if call is None:
            await self.app(scope, body_then(body, receive), send)
            return
        try:
            response = JSONResponse(await self.service.act(*call))
        except BotError as err:
            response = JSONResponse({"detail": err.detail}, status_code=err.status, headers=err.headers)
        await response(scope, receive, send)

    @staticmethod
    def _call(scope, body: bytes) -> tuple[str, dict] | None:
        """``(agent, record)`` of a body of the documented shape, else None."""
        content_type = next((value for name, value in scope["headers"] if name == b"content-type"), b"")
        kind = content_type.split(b";", 1)[0].strip().lower()
        if kind != b"application/json" and not (kind.startswith(b"application/") and kind.endswith(b"+json")):
            return None
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if type(data) is not dict or len(data) != 2:
            return None
        agent, record = data.get("agent"), data.get("record")
        if type(agent) is not str or len(agent) > 200 or type(record) is not dict:
            return None
        return agent, record


def _validation_detail(err: RequestValidationError) -> str:
    """pydantic's list of errors as one line: ``field: problem; ...``."""
    parts = []
    for problem in err.errors():
        loc = [str(p) for p in problem.get("loc", ()) if p != "body"]
        if problem.get("type") == "json_invalid":
            parts.append(f"the body is not valid JSON ({problem.get('ctx', {}).get('error', 'parse error')})")
            continue
        message = problem.get("msg", "invalid")
        if problem.get("type") == "missing" and not loc:
            message = "the body must be a JSON object"
        parts.append(f"{'.'.join(loc)}: {message}" if loc else message)
    line = "; ".join(parts) or "invalid request"
    return line if len(line) <= 500 else line[:497] + "..."


# ---------------------------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------------------------


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
    app.add_middleware(ActRoute, service=service)  # (inside BodyLimit: added before it)
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
        return JSONResponse({"detail": err.detail}, status_code=err.status, headers=err.headers)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, err: RequestValidationError):
        return JSONResponse({"detail": _validation_detail(err)}, status_code=422)

    # ---- the page ------------------------------------------------------------------------------

    # The page is the static build's too (clients/web): handed this server as its back end.
    app.mount("/static", StaticFiles(directory=PAGE_DIR / "static", check_dir=False), name="static")

    @app.get("/config.json", include_in_schema=False)
    def page_config():
        return {"backend": "http"}

    @app.get("/manifest.webmanifest", include_in_schema=False)
    def page_manifest():
        return FileResponse(PAGE_DIR / "manifest.webmanifest", media_type="application/manifest+json")

    @app.get("/icon.svg", include_in_schema=False)
    def page_icon():
        return FileResponse(PAGE_DIR / "icon.svg", media_type="image/svg+xml")

    @app.get("/", include_in_schema=False)
    def index():
        page = PAGE_DIR / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html")
        return HTMLResponse("<!doctype html><title>Hearts Lab</title><p>The page is not here (it is served from "
                            "clients/web of a clone of the project); the API is at <a href='/docs'>/docs</a>.</p>")

    # ---- games ---------------------------------------------------------------------------------

    by_preset = {name: [s for s in offered if name in info[s].presets] for name in PRESETS}

    @app.get("/api/v1/options", tags=["games"])
    def options() -> dict[str, Any]:
        """Presets (with their rules), the options the page offers and the offered agents."""
        return {
            "presets": list(PRESETS),
            "preset_rules": {name: rules.to_dict() for name, rules in PRESETS.items()},
            "options": option_choices(),
            "agents": offered,
            "agents_by_preset": by_preset,
            "default_opponents": default_opponents(offered),
        }

    @app.post("/api/v1/games", status_code=201, tags=["games"])
    def create_game(body: NewGame) -> dict[str, Any]:
        """A new game; the opponents play up to your first decision. Returns the game's view."""
        return store.create(body.preset, body.rules, body.opponents, body.seed)

    @app.get("/api/v1/games/{game_id}", tags=["games"])
    def get_game(game_id: str) -> dict[str, Any]:
        """The game as you see it (after a restart, loaded from its record)."""
        return store.view(game_id)

    @app.post("/api/v1/games/{game_id}/play", tags=["games"])
    def play(game_id: str, body: Play) -> dict[str, Any]:
        """Play a card (or pick one to pass); the opponents play up to your next decision."""
        try:
            card = cards.parse_card(body.card)
        except ValueError as err:
            raise GameError(422, f"card: {err}") from None
        return store.play(game_id, card)

    @app.get("/api/v1/games/{game_id}/record", tags=["games"])
    def record(game_id: str):
        """The game's record (JSON lines; ``hearts replay FILE``), once the game is over."""
        with store.locked(game_id) as game:
            if not game.match.over:
                raise GameError(409, "the record is available when the game is over: it shows every "
                                     "hand as dealt (the seed deals them all)", reason={"code": "record_not_ready"})
            text = game.path.read_text(encoding="utf-8")
        return _attachment(text, f"hearts-game-{game_id}.jsonl")

    # ---- bots as a service ---------------------------------------------------------------------

    @app.get("/api/v1/agents", tags=["bots"])
    async def list_agents() -> dict[str, Any]:
        """The offered agents: the rules each plays, whether it reports probabilities."""
        return bots.agents()  # (on the event loop: answered at once, whatever /act has queued)

    @app.post("/api/v1/act", tags=["bots"], responses={
        503: {"description": "busy, with Retry-After: more calls in flight than --max-pending, a search player's "
                             "queue longer than its time limit, a call not decided within --call-time-limit, or "
                             "its worker process being replaced"},
        504: {"description": "a search player did not decide within --search-time-limit"}})
    async def act(body: Act) -> dict[str, Any]:
        """The card an offered agent plays at a seat record's decision (docs/export.md). Concurrent
        calls of one agent are decided together; the answer is the one the call gets alone."""
        return await service.act(body.agent, body.record)

    return app


def _attachment(text: str, filename: str) -> Response:
    return Response(text, media_type="application/x-ndjson",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
