"""The game session the terminal (``hearts play``) and the browser (``hearts serve``) share.

* ``match``: one game driven one action at a time through the engine, recording every action
  and reporting what happened (pass exchanged, trick won, hand scored, moon, game over).
* ``records``: the JSON-lines game record (the arena's format, extended): save, load and resume.
* ``game_lines``: the shape of a record's game line, checked before the engine replays it.

The engine does every rule; nothing here decides what is legal or who wins a trick.
See ``docs/play.md`` and ``docs/serve.md``.
"""
