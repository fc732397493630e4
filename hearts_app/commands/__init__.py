"""Every subcommand of the ``hearts`` command, one module each, in the order ``hearts --help`` lists them
(:data:`COMMANDS`). Each module has ``register(subparsers)``, which adds its parser (its arguments typed
with the shared types of ``hearts_app.arguments``) and sets ``func``, the function that runs it
(``run``; ``distill`` has one per step). A module imports nothing heavy (torch, FastAPI, Ray) until
its command runs. ``hearts_app.cli`` builds the parser from :data:`COMMANDS` and runs the command.

* ``bench``, ``demo``, ``arena``: the engine's throughput, a random game, agents on duplicate deals;
* ``train``, ``recipe``, ``distill``, ``belief``, ``value``: training (``train``);
* ``promote``: the promotion rule on a candidate policy (``eval.promotion``);
* ``play``, ``replay``: a game in the terminal, a record shown trick by trick (``terminal``);
* ``export``: ONNX, the ladders, the static web build (``export``);
* ``serve``: the browser game and the bots' web API (``serve``).
"""

from __future__ import annotations

from . import arena, belief, bench, demo, distill, export, play, promote, recipe, replay, serve, train, value

#: The subcommands' modules, in the order ``hearts --help`` lists them.
COMMANDS = (bench, demo, arena, train, recipe, distill, belief, value, promote, play, replay, export, serve)


def register(subparsers) -> None:
    """Add every subcommand to ``subparsers`` (``ArgumentParser.add_subparsers``)."""
    for command in COMMANDS:
        command.register(subparsers)
