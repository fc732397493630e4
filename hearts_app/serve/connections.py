"""Bounds on the server's connections: a request arrives in time, idle ones close, and their number is capped.

uvicorn closes a connection idle after a response (``timeout_keep_alive``), but not one that never
finishes a request: a client that sends its headers a byte at a time, or opens a socket and sends
nothing, holds it (and a file descriptor) for ever, and a thousand of them lock every other client
out. :func:`guarded_protocol` makes uvicorn's HTTP protocol (httptools) that

* gives each request ``request_timeout`` seconds from the moment the connection waits for it (opened,
  or its last response sent) until its headers and body have arrived; past it the connection is
  closed (with a 408 when part of a request came);
* holds at most ``max_connections`` connections: a new one beyond the cap closes the connection that
  has waited longest for its request (idle or sending slowly), so a flood of idle sockets cannot lock
  others out; when every connection has a request being answered, the new one gets a 503 with
  ``Retry-After`` and is closed.

``hearts serve --request-timeout --idle-timeout --max-connections`` set them (``docs/serve.md``);
:func:`raise_file_limit` lifts the process's open-file limit to what the cap needs.
"""

from __future__ import annotations

import resource

#: Seconds a request may take to arrive, headers and body (``--request-timeout``).
DEFAULT_REQUEST_TIMEOUT = 10.0
#: Seconds a connection may stay idle after a response (``--idle-timeout``; uvicorn's keep-alive timeout).
DEFAULT_IDLE_TIMEOUT = 5.0
#: Connections open at once at most (``--max-connections``).
DEFAULT_MAX_CONNECTIONS = 512
#: File descriptors kept for everything else: the listener, the games' files, the workers' pipes.
SPARE_FILES = 64
#: Seconds a client is asked to wait after a refused connection.
RETRY_AFTER = 1


def _response(status: str, text: str, extra: str = "") -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {len(body)}\r\n"
            f"{extra}connection: close\r\n\r\n").encode() + body


TIMED_OUT = _response("408 Request Timeout", "the request did not arrive within the request timeout")
FULL = _response("503 Service Unavailable", "the server holds as many connections as it takes; retry shortly",
                 f"retry-after: {RETRY_AFTER}\r\n")


def guarded_protocol(request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                     max_connections: int = DEFAULT_MAX_CONNECTIONS) -> type:
    """uvicorn's httptools protocol with the bounds of the module docstring (pass it as ``http``)."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # the serve extra, when the server starts

    if not request_timeout > 0 or max_connections < 1:
        raise ValueError(f"request_timeout must be positive and max_connections 1 or more, got "
                         f"{request_timeout}, {max_connections}")

    class GuardedProtocol(HttpToolsProtocol):
        def connection_made(self, transport) -> None:
            self._requests = self._responses = 0  # a request is awaited while these are equal
            self._waiting_since: float | None = None
            self._partial = False
            self._timer = None
            self._refused = False
            super().connection_made(transport)
            if len(self.connections) > max_connections and not self._make_room():
                self._refuse()
                return
            self._await_request()

        def _refuse(self) -> None:
            """503 and close, after a moment of reading whatever the client sends (closing a socket with
            unread data resets it, and the client would lose the answer)."""
            self._refused = True
            self.transport.write(FULL)
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self._timer = self.loop.call_later(1.0, self.transport.close)

        def _make_room(self) -> bool:
            """Close the connection that has waited longest for a request; False when none waits."""
            waiting = [c for c in self.connections if c is not self and getattr(c, "_waiting_since", None) is not None]
            if not waiting:
                return False
            oldest = min(waiting, key=lambda c: c._waiting_since)
            oldest._close_waiting()
            return True

        def _await_request(self) -> None:
            self._waiting_since, self._partial = self.loop.time(), False
            self._cancel_timer()
            self._timer = self.loop.call_later(request_timeout, self._close_waiting)

        def _cancel_timer(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _close_waiting(self) -> None:
            """Close a connection still waiting for its request (408 when part of one came)."""
            self._timer = None
            if self._waiting_since is None or self.transport.is_closing():
                return
            self._waiting_since = None
            if self._partial:
                self.transport.write(TIMED_OUT)
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            self._partial = True
            super().data_received(data)

        def eof_received(self) -> None:
            if self._refused:
                self.transport.close()

        def on_message_complete(self) -> None:
            self._requests += 1
            self._waiting_since = None
            self._cancel_timer()
            super().on_message_complete()

        def on_response_complete(self) -> None:
            self._responses += 1
            super().on_response_complete()
            if self._requests == self._responses and not self.transport.is_closing():
                self._await_request()

        def connection_lost(self, exc) -> None:
            self._waiting_since = None
            self._cancel_timer()
            super().connection_lost(exc)

    return GuardedProtocol


def raise_file_limit(max_connections: int) -> int:
    """Lift this process's soft limit on open files towards its hard limit so that ``max_connections``
    connections and :data:`SPARE_FILES` fit; returns the soft limit. Raises ValueError (naming both
    numbers) when even the hard limit is too low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max_connections + SPARE_FILES
    if needed > soft and (hard == resource.RLIM_INFINITY or needed <= hard):
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
        soft = needed
    if needed > soft:
        raise ValueError(f"{max_connections} connections need {needed} open files, over this process's limit "
                         f"of {hard} (ulimit -Hn)")
    return soft


__all__ = ["DEFAULT_IDLE_TIMEOUT", "DEFAULT_MAX_CONNECTIONS", "DEFAULT_REQUEST_TIMEOUT", "guarded_protocol",
           "raise_file_limit"]
