"""Play Hearts in a terminal: ``hearts play`` (you against agents) and ``hearts replay`` (records).

* ``match``: one game driven one action at a time through the engine, recording every action
  and reporting what happened (pass exchanged, trick won, hand scored, moon, game over).
* ``records``: the JSON-lines game record (the arena's format, extended), save, load, resume and
  replay.
* ``screen``: text for people (hands by suit, tricks, scores) with ``rich``.
* ``game``: the interactive loop: your prompts, the opponents' turns through ``agents.make``.
* ``cli``: ``register(subparsers)`` adding ``play`` and ``replay`` to the ``hearts`` command.

The engine does every rule; nothing here decides what is legal or who wins a trick.
See ``docs/play.md``.
"""
