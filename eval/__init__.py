"""Evaluation: the duplicate-deal arena (``arena``; the plan and the unit a worker plays: ``units``;
its Ray backend: ``cluster``), deal sets (``deals``), statistics over deals (``stats``) and reports
(``report``). See ``docs/arena.md`` and ``docs/cluster.md``; the command is ``hearts arena``.
Exporting for game apps is a layer of its own, above this one (``export``)."""
