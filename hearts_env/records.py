"""Hand records: one hand of one game as plain JSON, read from the engine's history.

The arena's JSON-lines game records and the play mode's saved games hold a list of these::

    {"hand_number": 0, "pass": "left", "dealt": [["2C", ...], ...], "dead": [],
     "actions": [[0, "QS"], [0, "AH"], ...], "points": [0, 13, 0, 13], "moon": null}

``actions`` are ``[seat, card]`` in order of play, the pass picks first. The state keeps the hand
being played (``history``) and the last scored one whole (``last_hand_*``), so a record is
written from the state alone, whenever it is wanted.
"""

from __future__ import annotations

from typing import Any

from . import cards
from .state import State

_NAMES = [cards.card_text(c) for c in range(cards.NUM_CARDS)]


def _hand(rules, number: int, dealt, dead, seats, played, points, moon) -> dict[str, Any]:
    return {
        "hand_number": number,
        "pass": rules.pass_direction(number),
        "dealt": [[_NAMES[c] for c in cards.cards_of(bits)] for bits in dealt],
        "dead": [_NAMES[c] for c in cards.cards_of(dead)],
        "actions": [[seat, _NAMES[card]] for seat, card in zip(seats, played)],
        "points": points,
        "moon": moon,
    }


def scored_hand(state: State, game: int) -> dict[str, Any]:
    """The last scored hand of ``game`` (read right after its ``hand_over``), points and moon included."""
    length = int(state.last_hand_length[game])
    shooter = state.last_hand_moon[game]
    return _hand(
        state.rules, int(state.last_hand_number[game]), state.last_hand_dealt[game], state.last_hand_dead[game],
        state.last_hand_history_seat[game, :length].tolist(), state.last_hand_history[game, :length].tolist(),
        state.last_hand_points[game].tolist(), int(shooter.argmax()) if shooter.any() else None,
    )


def current_hand(state: State, game: int) -> dict[str, Any]:
    """The hand ``game`` is playing, as far as it got (``points`` and ``moon`` are None)."""
    length = int(state.history_length[game])
    return _hand(
        state.rules, int(state.hand_number[game]), state.dealt[game], state.dead[game],
        state.history_seat[game, :length].tolist(), state.history[game, :length].tolist(), None, None,
    )
