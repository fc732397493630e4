"""``hearts replay``: a game of a record shown trick by trick, its scores checked by the engine.

The record is loaded by the game session (``hearts_app.session.records``) and rebuilt action by action
through the engine (``Match.from_record``); this module only shows the events on the console.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hearts_env import cards

from ..session.match import GameOver, HandScored, HandStarted, Match, RecordMismatch
from ..session.records import MALFORMED, RecordError, RecordFile
from . import screen


def replay(record: RecordFile, number: int, console: Console, brief: bool = False) -> bool:
    """Show game ``number`` (1-based) trick by trick; True when the engine reproduces its scores."""
    try:
        return _replay(record, number, console, brief)
    except RecordError:
        raise
    except MALFORMED as err:
        raise RecordError(f"{record.path}, game {number}: not a game record the engine can replay "
                          f"({type(err).__name__}: {err})") from None


def _replay(record: RecordFile, number: int, console: Console, brief: bool) -> bool:
    game = record.game(number)
    rules = record.rules
    compass = screen.seat_names(rules.num_players)
    labels = game.get("seats") or game.get("specs") or [""] * rules.num_players
    names = [f"{c} ({label})" if label else c for c, label in zip(compass, labels)]
    recorded = {h.get("hand_number"): h for h in game.get("hands", [])}
    what = "play record" if record.is_play else f"arena record ({record.header.get('format', '?')})"
    title = f"{record.path}: {what}, game {number} of {len(record.games)}, rules {rules.name!r}"
    console.print(Text(title, style="bold"))
    console.print(f"deal seed {game.get('deal_seed')} · first hand {int(game.get('hand_number', 0)) + 1} · "
                  + " · ".join(names))

    def show(event) -> None:
        if isinstance(event, HandStarted):
            console.print(screen.describe(event, names, human=None, num_players=rules.num_players))
            hand = recorded.get(event.hand_number)
            if hand and not brief:
                width = max(len(n) for n in names)
                for name, dealt in zip(names, hand.get("dealt", [])):
                    row = Text(f"  {name:<{width}} ")
                    row.append_text(screen.card_list(cards.parse_cards(dealt)))
                    console.print(row)
                if hand.get("dead"):
                    console.print(f"  dead cards: {screen.plain_cards(cards.parse_cards(hand['dead']))}")
            return
        if brief and not isinstance(event, (HandScored, GameOver)):
            return
        line = screen.describe(event, names, human=None, num_players=rules.num_players)
        if line is not None:
            console.print(line)

    try:
        match = Match.from_record(rules, game, on_event=show)
    except RecordMismatch as err:
        raise RecordError(f"{record.path}, game {number}: {err}") from None

    finished = [h["points"] for h in match.hands if h.get("points") is not None]
    points = [sum(col) for col in zip(*finished)] if finished else [0] * rules.num_players
    ok = True
    checks = []
    if "points" in game:
        checks.append(("points", game["points"], points))
    if "scores" in game:
        checks.append(("scores", game["scores"], match.scores))
    for key, want, got in checks:
        if list(want) != list(got):
            ok = False
            console.print(Text(f"MISMATCH: the record's {key} are {list(want)}, the replay gives {list(got)}",
                               style="bold red"))
    unfinished = record.is_play and not game.get("finished", False)
    console.print(Text(
        f"\nReplayed {len(finished)} hand(s): points {points}, totals {match.scores}"
        + (" — the same as the record." if ok else ""), style="bold"))
    if unfinished:
        console.print(f"The game is unfinished: hearts play --resume {record.path}")
    return ok
