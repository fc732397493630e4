"""The server's connection bounds (``hearts_app.serve.connections``): a request that does not arrive in
time, idle sockets and a flood of connections cannot hold the server, against a real uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

import uvicorn  # noqa: E402

from hearts_app.serve.connections import guarded_protocol, raise_file_limit  # noqa: E402


async def hello(scope, receive, send):
    """The smallest ASGI app: 200 "hello" to every request (after a second for ``/slow``)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["path"] == "/slow":
        await asyncio.sleep(1.0)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hello"})


@contextlib.contextmanager
def serving(request_timeout=0.5, max_connections=8, idle_timeout=5.0):
    listener = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(hello, log_level="warning", http=guarded_protocol(request_timeout, max_connections),
                            timeout_keep_alive=idle_timeout)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield listener.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)


def get(port: int, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        return read_all(s)


def read_all(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


def test_a_request_that_does_not_arrive_in_time_is_closed_with_408():
    with serving(request_timeout=0.5) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            t = time.monotonic()
            s.sendall(b"GET / HTTP/1.1\r\nHost: local")  # and nothing more: a slow client
            answer = read_all(s)
            assert answer.startswith(b"HTTP/1.1 408") and 0.4 < time.monotonic() - t < 3
        assert get(port).startswith(b"HTTP/1.1 200")


def test_a_byte_at_a_time_does_not_keep_a_request_open():
    with serving(request_timeout=0.6) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            t = time.monotonic()
            with contextlib.suppress(OSError):
                for byte in b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100:
                    s.sendall(bytes([byte]))
                    time.sleep(0.05)
            assert time.monotonic() - t < 3  # closed long before the 100 bytes were sent


def test_a_silent_connection_is_closed_and_a_complete_request_is_answered():
    with serving(request_timeout=0.5) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            t = time.monotonic()
            assert read_all(s) == b"" and time.monotonic() - t < 3  # closed without a word
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:  # a slow answer is not cut
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            time.sleep(1.0)
            assert s.recv(65536).startswith(b"HTTP/1.1 200")


def test_a_flood_of_idle_sockets_does_not_lock_other_clients_out():
    with serving(request_timeout=30, max_connections=8) as port:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(40)]
        try:
            for _ in range(5):
                assert get(port).startswith(b"HTTP/1.1 200")  # each time the longest idle one makes room
            closed = 0
            for s in idle:
                s.settimeout(0.2)
                with contextlib.suppress(socket.timeout):
                    closed += s.recv(1) == b""
            assert closed >= 40 - 8 + 1  # at most the cap stays open, the newest ones
        finally:
            for s in idle:
                s.close()


def test_when_every_connection_is_being_answered_a_new_one_gets_503_with_retry_after():
    with serving(max_connections=2) as port:
        busy = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]
        try:
            for s in busy:
                s.sendall(b"GET /slow HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            time.sleep(0.2)
            refused = get(port)
            assert refused.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in refused
            assert all(read_all(s).startswith(b"HTTP/1.1 200") for s in busy)  # those answered all the same
        finally:
            for s in busy:
                s.close()
        assert get(port).startswith(b"HTTP/1.1 200")


def test_bad_bounds_are_refused_and_the_file_limit_fits_the_cap():
    with pytest.raises(ValueError, match="request_timeout must be positive"):
        guarded_protocol(0, 8)
    with pytest.raises(ValueError, match="max_connections 1 or more"):
        guarded_protocol(1, 0)
    import resource

    soft = raise_file_limit(100)
    assert soft >= 164 and resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY:
        with pytest.raises(ValueError, match=r"open files, over this process's limit of \d+ \(ulimit -Hn\)"):
            raise_file_limit(hard)
