"""``hearts serve``: play Hearts in the browser, and offer the agents as a web API (``docs/serve.md``).

``register(subparsers)`` adds the subcommand to the ``hearts`` command. FastAPI and uvicorn come with
the ``serve`` extra (``scripts/setup.sh serve``); they are imported only when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_GAMES_DIR = "hearts-games"
#: Offered by default, in this order, then the other named agents that are not slow (the shipped
#: policies when installed). Search players only when named with --agents.
DEFAULT_FIRST = ("random", "easy", "normal", "hard")


def default_agents() -> list[str]:
    from agents import builtin

    named = builtin()
    return [s for s in DEFAULT_FIRST if s in named] + [s for s in named if s not in DEFAULT_FIRST]


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
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help="address to listen on (default %(default)s, this machine only; 0.0.0.0 for "
                             "every interface)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on (default %(default)s)")
    parser.add_argument("--agents", metavar="SPEC,SPEC,...",
                        help="the agent specs offered as opponents and by /api/v1/act, comma separated "
                             "(default: random, easy, normal, hard and the shipped policies that are installed; "
                             "search players, ckpt:PATH and onnx:PATH only when named here)")
    parser.add_argument("--games-dir", default=DEFAULT_GAMES_DIR, metavar="DIR",
                        help="folder of the games' records, one JSON-lines file per game (default %(default)s)")
    parser.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as err:
        raise UsageError(f"hearts serve needs FastAPI and uvicorn ({err.name} is missing): "
                         f"run scripts/setup.sh serve (or pip install -e '.[serve]')") from None
    from agents import AgentSpecError

    from .serve.app import create_app

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    offered = default_agents() if args.agents is None else [s.strip() for s in args.agents.split(",")]
    if not offered or any(not s for s in offered):
        raise UsageError(f"--agents {args.agents!r}: an empty spec; write e.g. random,easy,normal,hard")
    try:
        app = create_app(offered, Path(args.games_dir))
    except AgentSpecError as err:
        raise UsageError(f"--agents: {err}") from None
    except OSError as err:
        raise UsageError(f"--games-dir {args.games_dir}: {err.strerror or err}") from None
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Hearts Lab is serving at http://{host}:{args.port}/ (Ctrl-C stops)", flush=True)
    print(f"  agents: {', '.join(offered)} · games saved in {args.games_dir}/ · API docs at "
          f"http://{host}:{args.port}/docs", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"  note: listening on {args.host}, so other machines can reach it; there is no login",
              file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
