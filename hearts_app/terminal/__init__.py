"""Play Hearts in a terminal: ``hearts play`` (you against agents) and ``hearts replay`` (records).

The game itself (``Match``) and its records are the game session the web server shares
(``hearts_app.session``). Here:

* ``screen``: text for people (hands by suit, tricks, scores) with ``rich``.
* ``game``: the interactive loop: your prompts, the opponents' turns through ``agents.make``.
* ``replay``: a record's game shown trick by trick and checked by the engine.

The subcommands are ``hearts_app.commands.play`` and ``hearts_app.commands.replay``.

The engine does every rule; nothing here decides what is legal or who wins a trick.
See ``docs/play.md``.
"""
