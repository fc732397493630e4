"""``hearts serve``: play Hearts in the browser, and offer the agents as a web API (``docs/serve.md``).

``register(subparsers)`` adds the subcommand to the ``hearts`` command. FastAPI and uvicorn come with
the ``serve`` extra (``scripts/setup.sh serve``); they are imported only when the command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys
from pathlib import Path

from agents import LADDER_NAMES, LEVEL_NAMES, AgentSpecError, builtin, level_file

from .. import arguments
from ..errors import UsageError
from ..serve.batching import DEFAULT_CALL_TIME_LIMIT, DEFAULT_MAX_PENDING, DEFAULT_SEARCH_TIME_LIMIT
from ..serve.connections import (DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT,
                                guarded_protocol, raise_file_limit)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_GAMES_DIR = "hearts-games"
#: Bounds of the options, each refused beyond as it is parsed (``hearts_app.arguments``).
MAX_CONNECTIONS = 1_000_000
MAX_REPLICAS = 1024
A_DAY = 86400
AN_HOUR = 3600
#: Offered by default, in this order, then the other named agents that are not slow (the shipped
#: policies when installed). Search players only when named with --agents.
DEFAULT_FIRST = ("random", "easy", "normal", "hard")


def default_agents() -> list[str]:
    """The bots, the shipped policies, then the difficulty ladder's levels (``level:easy`` ...
    ``level:strong``) whose networks are installed, so an app that calls the service and an app
    that runs the exported levels offer the same opponents."""
    named = builtin()
    levels = [f"level:{name}" for name in LEVEL_NAMES
              if any(level_file(ladder, name).is_file() for ladder in LADDER_NAMES)]
    return [s for s in DEFAULT_FIRST if s in named] + [s for s in named if s not in DEFAULT_FIRST] + levels


def default_workers() -> int:
    """``--workers`` when not given: the number of cores, at most ``arguments.MAX_SERVE_WORKERS``."""
    return min(os.cpu_count() or 1, arguments.MAX_SERVE_WORKERS)


def default_allowed_hosts(host: str) -> list[str]:
    """The ``Host`` names the server answers to unless ``--allowed-hosts`` says otherwise: the names
    of the address it listens on. A loopback address: it and ``localhost``. Every interface
    (``0.0.0.0``, ``::``): ``localhost``, this machine's name (``socket.gethostname()``) and every IP address of
    that family (``0.0.0.0`` / ``::``; a rebinding attack needs a name, so an address is safe). Any
    other address or name: itself."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:  # a name
        return [host, "127.0.0.1"] if host == "localhost" else [host]
    if address.is_loopback:
        return [str(address), "localhost"]
    if address.is_unspecified:
        name = socket.gethostname().lower()
        names = ["localhost"] + ([name] if name not in ("", "localhost") else [])
        return names + (["0.0.0.0", "::"] if address.version == 6 else ["0.0.0.0"])
    return [str(address)]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="play in the browser against the agents, and serve them as a web API",
        description=(
            "Serve the Hearts Lab page (play against the agents in a browser) and its JSON API: games "
            "(/api/v1/games) and bots as a service (/api/v1/agents, /api/v1/act on seat records). Only the "
            "agents named by --agents can be used. Games are saved after every move in --games-dir and "
            "continue after a restart. Needs the serve extra (scripts/setup.sh serve). See docs/serve.md."
        ),
    )
    within_a_day = arguments.bounded(arguments.positive_float, A_DAY, " seconds (a day)")
    within_an_hour = arguments.bounded(arguments.positive_float, AN_HOUR, " seconds (an hour)")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help="address to listen on (default %(default)s, this machine only; 0.0.0.0 for "
                             "every interface)")
    parser.add_argument("--port", type=arguments.port, default=DEFAULT_PORT,
                        help="port to listen on, 0 to 65535 (0: any free port; default %(default)s)")
    parser.add_argument("--allowed-hosts", metavar="NAME,NAME,...",
                        help="the Host names the server answers to, comma separated; others get 400 (a defence "
                             "against DNS rebinding). *.example.org allows its subdomains, 0.0.0.0 every IPv4 "
                             "address, * everything. Default: the names of --host (127.0.0.1 and localhost for "
                             "127.0.0.1; for 0.0.0.0 localhost, this machine's name and every IPv4 address)")
    parser.add_argument("--agents", metavar="SPEC,SPEC,...",
                        help="the agent specs offered as opponents and by /api/v1/act, comma separated "
                             "(default: random, easy, normal, hard and the shipped policies that are installed; "
                             "search players, ckpt:PATH and onnx:PATH only when named here)")
    parser.add_argument("--games-dir", default=DEFAULT_GAMES_DIR, metavar="DIR",
                        help="folder of the games' records, one JSON-lines file per game (default %(default)s)")
    parser.add_argument("--workers", type=arguments.serve_worker_count, metavar="N",
                        help="processes deciding the /api/v1/act calls, in batches, 0 to "
                             f"{arguments.MAX_SERVE_WORKERS} (default: the number of cores up to "
                             f"{arguments.MAX_SERVE_WORKERS}, {default_workers()} here; 0: a thread of the server's "
                             "own process). Each makes every offered agent and compiles its code before the server "
                             "starts listening")
    parser.add_argument("--max-pending", type=arguments.positive_int, default=DEFAULT_MAX_PENDING, metavar="N",
                        help="/api/v1/act calls in flight (queued or being decided) at most; more are answered 503 "
                             "with Retry-After at once (default %(default)s)")
    parser.add_argument("--search-time-limit", type=within_a_day, default=DEFAULT_SEARCH_TIME_LIMIT,
                        metavar="SECONDS",
                        help="a search player's /api/v1/act call not decided within this many seconds of its arrival "
                             "is refused (503 or 504), never answered with another card (at most a day; "
                             "default %(default)g)")
    parser.add_argument("--call-time-limit", type=within_an_hour, default=DEFAULT_CALL_TIME_LIMIT, metavar="SECONDS",
                        help="any other /api/v1/act call not decided within this many seconds of its arrival is "
                             "answered 503 with Retry-After (a stuck or replaced worker, a burst; at most an hour; "
                             "default %(default)g)")
    parser.add_argument("--request-timeout", type=within_an_hour, default=DEFAULT_REQUEST_TIMEOUT, metavar="SECONDS",
                        help="a connection whose request (headers and body) has not arrived this many seconds "
                             "after it began waiting for one is closed (at most an hour; default %(default)g)")
    parser.add_argument("--idle-timeout", type=within_an_hour, default=DEFAULT_IDLE_TIMEOUT, metavar="SECONDS",
                        help="a connection idle this many seconds after a response is closed (at most an hour; "
                             "default %(default)g)")
    parser.add_argument("--max-connections", type=arguments.bounded(arguments.positive_int, MAX_CONNECTIONS),
                        default=DEFAULT_MAX_CONNECTIONS, metavar="N",
                        help="connections open at once at most: a new one beyond closes the one that has waited "
                             "longest for its request, or is answered 503 when every one is being answered "
                             f"(at most {MAX_CONNECTIONS:,}; default %(default)s)")
    parser.add_argument("--backend", choices=["local", "ray"], default="local",
                        help="local (default): this process serves the page, the games and the bots API; ray: only "
                             "the bots API (/api/v1/agents, /api/v1/act), as a Ray Serve deployment of --replicas "
                             "replicas, on a local Ray or the cluster at --address (needs the cluster extra; "
                             "docs/cluster.md)")
    parser.add_argument("--replicas", type=arguments.bounded(arguments.positive_int, MAX_REPLICAS), metavar="N",
                        help=f"--backend ray: replicas of the bots API, one CPU each, 1 to {MAX_REPLICAS} (default 1)")
    parser.add_argument("--address", metavar="HOST:PORT",
                        help="--backend ray: the Ray cluster to deploy on (auto: the one this machine belongs to); "
                             "default $RAY_ADDRESS, else a Ray started here")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:  # the serve extra: imported when the command runs (see the module docstring)
        import fastapi  # noqa: F401
        import fastapi_offline  # noqa: F401  (the API docs' scripts, served without a CDN)
        import httptools  # noqa: F401  (the connection bounds are on uvicorn's httptools protocol)
        import uvicorn
    except ImportError as err:
        raise UsageError(f"hearts serve needs FastAPI, fastapi-offline, uvicorn and httptools ({err.name} is "
                         f"missing): run scripts/setup.sh serve (or pip install -e '.[serve]')") from None
    from ..serve.app import create_app  # imports fastapi (the serve extra)

    if args.allowed_hosts is None:
        hosts = default_allowed_hosts(args.host)
    else:
        hosts = [h.strip() for h in args.allowed_hosts.split(",")]
        if not all(hosts):
            raise UsageError(f"--allowed-hosts {args.allowed_hosts!r}: an empty name; write e.g. "
                             "localhost,hearts.example.org")
    offered = default_agents() if args.agents is None else [s.strip() for s in args.agents.split(",")]
    if not offered or any(not s for s in offered):
        raise UsageError(f"--agents {args.agents!r}: an empty spec; write e.g. random,easy,normal,hard")
    if (args.replicas is not None or args.address is not None) and args.backend != "ray":
        raise UsageError("--replicas and --address go with --backend ray")
    workers = default_workers() if args.workers is None else args.workers
    try:
        raise_file_limit(args.max_connections)
    except ValueError as err:
        raise UsageError(f"--max-connections: {err}") from None
    if args.backend == "ray":
        return run_ray(args, offered, hosts)
    # Bound before the app is made (which makes --games-dir): an address that cannot be listened on is
    # refused before anything is written, and a client told "serving at" finds it listening.
    listener = listen(args.host, args.port)
    print(f"Hearts Lab is starting: making the agents and compiling their code (here and in {workers} worker "
          f"process{'es' if workers != 1 else ''}) ...", flush=True)
    try:
        app = create_app(offered, Path(args.games_dir), allowed_hosts=hosts, workers=workers,
                         max_pending=args.max_pending, search_time_limit=args.search_time_limit,
                         call_time_limit=args.call_time_limit, warm=True)
    except AgentSpecError as err:
        listener.close()
        raise UsageError(f"--agents: {err}") from None
    except OSError as err:
        listener.close()
        raise UsageError(f"--games-dir {args.games_dir}: {err.strerror or err}") from None
    host = f"[{args.host}]" if ":" in args.host else args.host
    port = listener.getsockname()[1]  # the port chosen for --port 0
    print(f"Hearts Lab is serving at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    print(f"  agents: {', '.join(offered)} · games saved in {args.games_dir}/ · API docs at "
          f"http://{host}:{port}/docs", flush=True)
    print(f"  answers to the Host names {', '.join(hosts)} (--allowed-hosts)", flush=True)
    print(f"  /api/v1/act: {workers} worker{'s' if workers != 1 else ''} (--workers), at most {args.max_pending} "
          f"calls in flight (--max-pending), search players within {args.search_time_limit:g} s "
          f"(--search-time-limit), any other within {args.call_time_limit:g} s (--call-time-limit)", flush=True)
    print(f"  connections: at most {args.max_connections} (--max-connections), a request within "
          f"{args.request_timeout:g} s (--request-timeout), idle ones closed after {args.idle_timeout:g} s "
          "(--idle-timeout)", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"  note: listening on {args.host}, so other machines can reach it; there is no login",
              file=sys.stderr, flush=True)
    run_app(app, listener, request_timeout=args.request_timeout, idle_timeout=args.idle_timeout,
            max_connections=args.max_connections)
    return 0


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening; a UsageError in one line when it cannot be."""
    try:
        return socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except (OSError, ValueError, TypeError) as err:  # (a NUL byte or a text no IDNA encodes: not an address)
        shown = f"[{host}]" if ":" in host else host
        raise UsageError(f"cannot listen on {shown}:{port}: {getattr(err, 'strerror', None) or err}") from None


def run_app(app, listener: socket.socket, request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
            idle_timeout: float = DEFAULT_IDLE_TIMEOUT, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
    """Serve ``app`` on the bound ``listener`` with uvicorn, within the connection bounds
    (``serve.connections``), until stopped."""
    import uvicorn  # the serve extra (checked when the command starts)

    protocol = guarded_protocol(request_timeout, max_connections)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", http=protocol,
                                  timeout_keep_alive=idle_timeout)).run(sockets=[listener])


def run_ray(args: argparse.Namespace, offered: list[str], hosts: list[str]) -> int:
    """``--backend ray``: the bots API on Ray Serve replicas (``serve.replicas``)."""
    replicas = 1 if args.replicas is None else args.replicas
    if args.workers is not None:
        raise UsageError("--workers goes with --backend local: a Ray replica decides in its own process "
                         "(--replicas sets how many)")
    try:
        import ray.serve  # noqa: F401  (the cluster extra)
    except ImportError as err:
        raise UsageError(f"hearts serve --backend ray needs Ray Serve ({err.name} is missing): run "
                         "scripts/setup.sh serve,cluster (or pip install -e '.[serve,cluster]')") from None
    from ..serve.replicas import ClusterError, serve_forever  # imports fastapi and, when it runs, ray

    listener = listen(args.host, args.port)  # before Ray starts: a port in use is said at once
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{listener.getsockname()[1]}/"

    def serve_app(app) -> None:
        run_app(app, listener, request_timeout=args.request_timeout, idle_timeout=args.idle_timeout,
                max_connections=args.max_connections)

    try:
        return serve_forever(offered, replicas, url, hosts, args.address, serve_app, max_pending=args.max_pending,
                             search_time_limit=args.search_time_limit, call_time_limit=args.call_time_limit,
                             say=lambda line: print(line, flush=True))
    except AgentSpecError as err:
        raise UsageError(f"--agents: {err}") from None
    except ClusterError as err:
        raise UsageError(str(err)) from None
    finally:
        listener.close()
