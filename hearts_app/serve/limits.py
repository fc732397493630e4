"""The bounds on a request before anything parses it: its ``Host`` header (:class:`AllowedHosts`, 400),
its body's size (413) and nesting (422) (:class:`BodyLimit`). Both are ASGI middleware around the
whole app (``app.create_app``) and around the Ray backend's front (``replicas``); each refusal is
JSON ``{"detail": "one line"}`` with ``Connection: close``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

import numpy as np
from fastapi.responses import JSONResponse

from .bots import MAX_BODY

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
