"""The API's request bodies (pydantic models), their one check, and the one line a refusal of one reads.

* :class:`NewGame` and :class:`Play`: the games API's bodies, checked by FastAPI (the routes take them).
* :class:`Act`: the bots API's body. ``POST /api/v1/act`` (``routes.bots``) reads the request itself and
  checks its body once, with :func:`read_act`: a body of the documented shape is taken as it is (the
  service's load is in this route: FastAPI's validation and pydantic's copy of a record would cost
  the server's process about a third more per call); anything else goes through the check FastAPI
  makes of a route's body (:func:`validate_body`), so it is refused with the same 422 as every
  other route.
* :func:`validation_detail`: pydantic's list of errors as the 422's one line; :func:`invalid` the 422.
"""

from __future__ import annotations

import email.message
import json
from typing import Any

from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter, ValidationError

#: The longest agent spec a call may name (a spec names an offered agent; they are short).
MAX_AGENT = 200


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
    agent: StrictStr = Field(..., max_length=MAX_AGENT, examples=["hard"])
    record: dict[str, Any]


#: The OpenAPI request body of ``POST /api/v1/act`` (the route reads the request itself).
ACT_BODY = {"requestBody": {"required": True, "content": {"application/json": {"schema": Act.model_json_schema()}}}}

_ACT = TypeAdapter(Act)


def read_act(body: bytes, content_type: bytes | None) -> tuple[str, dict]:
    """``(agent, record)`` of an ``/act`` body (``content_type``: the request's first Content-Type
    header, as sent). A JSON object of exactly ``agent``, a text of at most :data:`MAX_AGENT`
    characters, and ``record``, an object, sent as ``application/json`` (or ``application/*+json``)
    is taken as it is; any other body is checked as FastAPI checks a route's :class:`Act` body
    (:func:`validate_body`), which raises its refusal or returns what it accepted."""
    kind = (content_type or b"").split(b";", 1)[0].strip().lower()
    if kind == b"application/json" or (kind.startswith(b"application/") and kind.endswith(b"+json")):
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
        if type(data) is dict and len(data) == 2:
            agent, record = data.get("agent"), data.get("record")
            if type(agent) is str and len(agent) <= MAX_AGENT and type(record) is dict:
                return agent, record
    act = validate_body(body, None if content_type is None else content_type.decode("latin-1"), _ACT)
    return act.agent, act.record


def validate_body(body: bytes, content_type: str | None, model: TypeAdapter) -> Any:
    """The body read and validated as FastAPI (0.165) reads a route's one JSON body parameter: empty,
    missing; JSON when the Content-Type says ``application/json`` or ``application/*+json`` (none
    is not JSON), else the bytes themselves; the errors located under ``body``. Raises
    ``RequestValidationError`` (422), or ``HTTPException`` 400 for a body JSON cannot decode."""
    if not body:
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    value: Any = body
    if content_type:
        message = email.message.Message()
        message["content-type"] = content_type
        subtype = message.get_content_subtype()
        if message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json")):
            try:
                value = json.loads(body)
            except json.JSONDecodeError as err:
                raise RequestValidationError([{"type": "json_invalid", "loc": ("body", err.pos),
                                               "msg": "JSON decode error", "input": {},
                                               "ctx": {"error": err.msg}}], body=err.doc) from err
            except Exception as err:
                raise HTTPException(status_code=400, detail="There was an error parsing the body") from err
    try:
        return model.validate_python(value, from_attributes=True)
    except ValidationError as err:
        raise RequestValidationError([{**problem, "loc": ("body", *problem.get("loc", ()))}
                                      for problem in err.errors(include_url=False)], body=value) from None


def validation_detail(err: RequestValidationError) -> str:
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


def invalid(err: RequestValidationError) -> JSONResponse:
    """The 422 of a request FastAPI's validation (or :func:`read_act`) refused: ``{"detail": one line}``."""
    return JSONResponse({"detail": validation_detail(err)}, status_code=422)
