"""Evaluation: the duplicate-deal arena (``arena``), deal sets (``deals``), statistics over deals
(``stats``) and reports (``report``). See ``docs/arena.md``; the command is ``hearts arena``."""
