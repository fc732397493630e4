"""What the human at a web game may see, as JSON: a whitelist read from the match.

The human sits at seat 0 ("you"). :func:`view` builds the page's whole picture of a game from
named pieces, each of them something seat 0 is entitled to know: its own hand and legal cards, the
cards it chose to pass and received, the cards on the table, the tricks' winners and points, the
scores and every finished hand's points (the score sheet). Nothing else of the engine state is copied: never another seat's hand, never another
seat's pass picks, never the game's seed (the deals are a function of it).

:func:`public_events` turns the match's events into the page's JSON events, dropping or cutting
down what seat 0 may not see: other seats' pass picks are left out, and of the exchange only the
cards seat 0 passed and received are given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hearts_env import cards, scoring

from ..session.match import (
    Event,
    refusal_reason,
    Exchanged,
    GameOver,
    HandScored,
    HandStarted,
    HeartsBroken,
    Match,
    Picked,
    Played,
    TrickWon,
)

HUMAN = 0


def texts(ids: Sequence[int]) -> list[str]:
    """Card ids as card texts ("QS"), sorted by suit (C, D, H, S) then rank."""
    return [cards.card_text(c) for c in sorted(int(c) for c in ids)]


def _plays(plays: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    return [{"seat": int(seat), "card": cards.card_text(card)} for seat, card in plays]


def winners(scores: Sequence[int]) -> list[int]:
    """The seats with the lowest total."""
    low = min(scores)
    return [seat for seat, score in enumerate(scores) if score == low]


def _winner(winner: int | None, scores: Sequence[int]) -> int | list[int]:
    """A seat, or the seats sharing the lowest total when the engine names none."""
    return int(winner) if winner is not None else winners(scores)


def public_events(events: Sequence[Event], match: Match) -> list[dict[str, Any]]:
    """The events seat 0 may see, as JSON, in order."""
    p = match.num_players
    out: list[dict[str, Any]] = []
    for event in events:
        if isinstance(event, Picked):
            continue  # a pick is secret until the exchange (the human's own show in the view's "pass")
        if isinstance(event, Exchanged):
            if event.offset == 0:
                continue
            out.append({"type": "exchanged",
                        "passed": texts(event.passed[HUMAN]), "received": texts(event.received[HUMAN]),
                        "to": (HUMAN + event.offset) % p, "from": (HUMAN - event.offset) % p})
        elif isinstance(event, Played):
            out.append({"type": "played", "seat": event.seat, "card": cards.card_text(event.card),
                        "trick_number": event.trick_number})
        elif isinstance(event, HeartsBroken):
            out.append({"type": "hearts_broken", "seat": event.seat, "card": cards.card_text(event.card)})
        elif isinstance(event, TrickWon):
            out.append({"type": "trick_won", "trick_number": event.trick_number, "winner": event.winner,
                        "points": event.points, "plays": _plays(event.plays)})
        elif isinstance(event, HandScored):
            out.append({"type": "hand_scored", "hand_number": event.hand_number, "points": list(event.points),
                        "card_points": list(event.card_points), "scores": list(event.totals),
                        "tricks": list(event.tricks), "moon": event.moon})
        elif isinstance(event, HandStarted):
            out.append({"type": "hand_started", "hand_number": event.hand_number,
                        "pass_direction": event.pass_direction,
                        "pass_to": (HUMAN + event.pass_to) % p if event.pass_to else None})
        elif isinstance(event, GameOver):
            out.append({"type": "game_over", "winner": _winner(event.winner, event.totals),
                        "scores": list(event.totals)})
    return out


def view(game_id: str, match: Match, opponents: Sequence[str], events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The page's picture of the game: only what seat 0 may know (see the module docstring)."""
    m, p = match, match.num_players
    over, passing = m.over, m.passing
    your_turn = not over and m.to_act == HUMAN
    state = m.state
    last_trick = None
    if m.trick_number > 0 or over:  # the last completed trick of this hand (the final one when over)
        leader = int(state.last_trick_leader[0])
        if leader >= 0:
            plays = [((leader + i) % p, int(state.last_trick[0, (leader + i) % p])) for i in range(p)]
            won = cards.bits_of(c for _, c in plays)
            last_trick = {"plays": _plays(plays), "winner": int(state.last_trick_winner[0]),
                          "points": int(scoring.card_points(m.rules, np.array([won]))[0])}
    pass_info = None
    direction = m.rules.pass_direction(m.hand_number)
    if passing:
        offset = m.pass_offset()
        chosen = m.chosen_to_pass(HUMAN)
        pass_info = {"direction": direction, "to": (HUMAN + offset) % p,
                     "picks_left": m.rules.pass_count - len(chosen), "chosen": texts(chosen)}
    received = m.received(HUMAN) if not over else []
    scores = m.scores
    legal = m.legal() if your_turn else []
    # Why each card of the hand that may not be taken now may not: the page refuses it before any request.
    refused = {cards.card_text(c): refusal_reason(m, c, legal) for c in sorted(m.hand(HUMAN))
               if c not in legal} if your_turn else {}
    return {
        "id": game_id,
        "rules": m.rules.to_dict(),
        "hand_size": m.rules.hand_size,  # the cards dealt to each seat (the page counts the others' cards by it)
        "players": [{"seat": 0, "name": "You"}] + [{"seat": s, "name": spec} for s, spec in enumerate(opponents, 1)],
        "phase": "over" if over else ("pass" if passing else "play"),
        "hand_number": m.hand_number if not over else m.hands_finished - 1 + m.first_hand,
        "trick_number": m.trick_number,
        "pass_direction": direction,
        "to_act": m.to_act,
        "your_turn": your_turn,
        "hand": texts(m.hand(HUMAN)) if not over else [],
        "legal": texts(legal),
        "refused": {card: reason for card, reason in refused.items() if reason is not None},
        "pass": pass_info,
        "received": texts(received) if received else None,
        "trick": _plays(m.trick()) if not over else [],
        "last_trick": last_trick,
        "hearts_broken": m.hearts_broken,
        "scores": scores,
        "hand_points": m.card_points() if not over else [0] * p,
        "score_sheet": [{"hand_number": h["hand_number"], "points": list(h["points"]), "moon": h["moon"]}
                        for h in m.finished_hands],
        "events": list(events),
        "game_over": {"winner": _winner(m.winner, scores), "scores": scores} if over else None,
    }
