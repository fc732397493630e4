"""Hearts Lab's application: the ``hearts`` command and the programs above the libraries.

``cli`` (the command: its parser and ``main``; ``__main__`` runs it), ``commands`` (every
subcommand, one module each: ``bench``, ``demo``, ``arena``, ``train``, ``recipe``, ``distill``,
``belief``, ``value``, ``promote``, ``play``, ``replay``, ``export``, ``serve``),
``arguments`` (the arguments and argument types subcommands share), ``errors`` (the usage error
and the checks of where a command will write), ``bench`` (the throughput benchmark), ``session``
(one game driven action by action, and its records: what the terminal and the browser share),
``terminal`` (the game in a terminal and a record's replay) and ``serve`` (the browser game and
the bots' web API, and its load test).

Layers (DESIGN.md section 4) point down only: this package may import ``export``, ``eval``,
``train``, ``agents`` and ``hearts_env``; none of them imports this package.
"""
