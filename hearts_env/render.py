"""Text rendering of one game of a batch, with suit symbols, for people and the ``ansi`` mode.

``render(state, game, seat=None)`` shows the whole table (every hand: for debugging, replays and
tests); ``render(state, game, seat=s)`` shows only what seat ``s`` may see.
"""

from __future__ import annotations

from . import cards
from .passing import pass_offset
from .scoring import card_points
from .state import OVER, PASS, State

import numpy as np


def hand_text(bits: int, symbols: bool = True) -> str:
    """A hand sorted by suit, e.g. ``♣ 2 7 Q  ♦ 5 K  ♥ —  ♠ A``."""
    held = cards.cards_of(bits)
    parts = []
    for suit in range(cards.NUM_SUITS):
        ranks = [cards.card_symbol_text(c)[:-1] for c in held if c // 13 == suit]
        label = cards.SUIT_SYMBOLS[suit] if symbols else cards.SUIT_CHARS[suit]
        parts.append(f"{label} {' '.join(ranks) if ranks else '—'}")
    return "  ".join(parts)


def pass_direction_text(state: State, game: int) -> str:
    return state.rules.pass_direction(int(state.hand_number[game]))


def render(state: State, game: int = 0, seat: int | None = None) -> str:
    """Multi-line text of game ``game``; with ``seat`` only that seat's hand is shown."""
    rules = state.rules
    g = np.array([game])
    lines = [
        f"{rules.name} · hand {state.hand_number[game] + 1} · pass {pass_direction_text(state, game)}"
        f" · trick {min(state.trick_number[game] + 1, rules.hand_size)}/{rules.hand_size}"
        f" · hearts {'broken' if state.hearts_broken[game] else 'not broken'}",
    ]
    points = card_points(rules, state.taken[game])
    for p in range(rules.num_players):
        marker = "▶" if state.current_player[game] == p else " "
        shown = seat is None or seat == p
        hand = hand_text(state.hands[game, p]) if shown else f"{cards.count(state.hands[game, p])} cards"
        lines.append(
            f"{marker} player_{p}  score {state.scores[game, p]:>4}  taken {points[p]:>2}  {hand}"
        )
    trick = [
        f"player_{p}: {cards.card_symbol_text(c)}"
        for p in (np.arange(rules.num_players) + state.leader[game]) % rules.num_players
        if (c := state.trick[game, p]) >= 0
    ]
    if state.phase[game] == PASS:
        offset = int(pass_offset(state, g)[0])
        lines.append(f"passing {pass_direction_text(state, game)} (to seat +{offset}); player_{state.current_player[game]} to choose")
    elif state.phase[game] == OVER:
        lines.append(f"game over: player_{state.winner[game]} wins with {state.scores[game].min()}")
    else:
        lines.append("trick: " + (", ".join(trick) if trick else "(empty)"))
    return "\n".join(lines)
