"""Hearts Lab's application: the ``hearts`` command and the programs above the libraries.

``cli`` (the command and its ``bench``, ``demo`` and ``arena`` subcommands), ``bench`` (the
throughput benchmark), ``terminal`` (``hearts play`` and ``hearts replay``), ``train_cli``
(``hearts train``), ``distill_cli`` (``hearts distill``), ``export_cli`` (``hearts export``) and
``serve_cli`` with ``serve`` (``hearts serve``: the browser game and the bots' web API).

Layers (DESIGN.md section 4) point down only: this package may import ``eval``, ``train``,
``agents`` and ``hearts_env``; none of them imports this package.
"""
