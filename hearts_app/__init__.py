"""Hearts Lab's application: the ``hearts`` command and the programs above the libraries.

``cli`` (the command and its ``bench``, ``demo`` and ``arena`` subcommands; ``__main__`` runs it),
``arguments`` (the arguments and argument types subcommands share), ``errors`` (the usage error
and the checks of where a command will write), ``bench`` (the throughput benchmark), ``session``
(one game driven action by action, and its records: what the terminal and the browser share),
``terminal`` (``hearts play`` and ``hearts replay``), ``train_cli`` (``hearts train``),
``recipe_cli`` (``hearts recipe``), ``distill_cli`` (``hearts distill``), ``belief_cli``
(``hearts belief``), ``export_cli`` (``hearts export``) and ``serve_cli`` with ``serve``
(``hearts serve``: the browser game and the bots' web API, and its load test).

Layers (DESIGN.md section 4) point down only: this package may import ``export``, ``eval``,
``train``, ``agents`` and ``hearts_env``; none of them imports this package.
"""
