"""The bots API: ``GET /api/v1/agents`` and ``POST /api/v1/act`` over the batching service
(``batching.BotService``; ``bots`` has the decisions and the refusals, ``BotError``).

``/act`` is the service's load, so one function answers it, :func:`answer_act`, and :class:`ActRoute`
calls it ahead of FastAPI's routing: ``app.create_app`` installs it as ASGI middleware inside the
body limits (``limits.BodyLimit``), so every ``POST /api/v1/act`` arrives there whole and bounded
and is answered without FastAPI's per-request machinery (routing, dependency solving, exception
middleware), which would cost the server's process about a third more per call. The router's
``/act`` (:func:`router`) documents it in the API's schema, answers 405 to the other methods, and
calls the same :func:`answer_act` if it is ever reached.

A call is refused with 503 while more calls than the service takes are in flight (before its body
is read as JSON: a refusal costs little), its body is checked once (``schemas.read_act``: the agent
a text of at most 200 characters, the record an object), the agent's name is checked against the
offered ones by the service, and the service's answer is sent as it is.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ..batching import BotService
from ..bots import BotError, Bots
from ..limits import read_body
from ..schemas import ACT_BODY, invalid, read_act

#: The path of the calls.
ACT_PATH = "/api/v1/act"
#: What ``/act`` answers beyond 200 and 422, for the API's schema.
ACT_REFUSALS = {
    503: {"description": "busy, with Retry-After: more calls in flight than --max-pending, a search player's "
                         "queue longer than its time limit, a call not decided within --call-time-limit, or "
                         "its worker process being replaced"},
    504: {"description": "a search player did not decide within --search-time-limit"}}


def refused(err: BotError) -> JSONResponse:
    """A :class:`BotError`'s answer: its status, ``{"detail": ...}`` and its headers (``Retry-After``)."""
    return JSONResponse({"detail": err.detail}, status_code=err.status, headers=err.headers)


async def answer_act(service: BotService, headers: list[tuple[bytes, bytes]], body: bytes) -> JSONResponse:
    """The answer to one ``POST /api/v1/act`` (its ASGI ``headers`` and whole ``body``): the card, or a
    refusal (503 busy, 422 a body of another shape or an agent not offered, 400 a body JSON cannot decode,
    the service's own refusals)."""
    try:
        service.refuse_if_busy()  # (before the body is read as JSON: a refusal costs little)
        content_type = next((value for name, value in headers if name == b"content-type"), None)
        agent, record = read_act(body, content_type)
        return JSONResponse(await service.act(agent, record))
    except BotError as err:
        return refused(err)
    except RequestValidationError as err:
        return invalid(err)
    except HTTPException as err:  # (as FastAPI answers it)
        return JSONResponse({"detail": err.detail}, status_code=err.status_code, headers=err.headers)


class ActRoute:
    """ASGI middleware: every ``POST /api/v1/act`` answered by :func:`answer_act`; anything else goes on
    to the app."""

    def __init__(self, app, service: BotService, path: str = ACT_PATH):
        self.app, self.service, self.path = app, service, path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        if body is None:  # the client went away
            return
        response = await answer_act(self.service, scope["headers"], body)
        await response(scope, receive, send)


def router(bots: Bots, service: BotService) -> APIRouter:
    """The bots API: ``bots`` lists the offered agents, ``service`` decides the calls."""
    routes = APIRouter(tags=["bots"])

    @routes.get("/api/v1/agents")
    async def list_agents() -> dict[str, Any]:
        """The offered agents: the rules each plays, whether it reports probabilities."""
        return bots.agents()  # (on the event loop: answered at once, whatever /act has queued)

    @routes.post(ACT_PATH, responses=ACT_REFUSALS, openapi_extra=ACT_BODY, response_model=None)
    async def act(request: Request) -> JSONResponse:
        """The card an offered agent plays at a seat record's decision (docs/export.md). Concurrent
        calls of one agent are decided together; the answer is the one the call gets alone."""
        return await answer_act(service, request.scope["headers"], await request.body())

    return routes
