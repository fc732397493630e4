"""Text for people: hands by suit, tricks, scores and the events of a match, as ``rich`` Text.

Every line also reads without colour (a pipe, ``--no-color``, ``NO_COLOR``, ``TERM=dumb``):
legal cards carry a ``*`` besides their style, hearts and diamonds are red only as decoration.
Seats are named by compass, clockwise from the human: South (player_0), West, North, East; in
the two-player game South and North.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, Sequence

from rich.console import Console
from rich.text import Text

from hearts_env import cards

from ..session.match import Event, Exchanged, GameOver, HandScored, HandStarted, HeartsBroken, Picked, Played, TrickWon

COMPASS = {4: ("South", "West", "North", "East"), 2: ("South", "North")}
RED_SUITS = (cards.DIAMONDS, cards.HEARTS)


def make_console(no_color: bool = False, file=None) -> Console:
    """A console that prints plain text when asked (or when the terminal cannot show colour)."""
    plain = no_color or bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"
    return Console(
        file=file or sys.stdout,
        highlight=False,
        markup=False,  # card lists and prompts such as "[y/n]" are text, never style tags
        emoji=False,
        color_system=None if plain else "auto",
        soft_wrap=True,
    )


def seat_names(num_players: int) -> tuple[str, ...]:
    return COMPASS[num_players]


def card(c: int, style: str = "") -> Text:
    text = cards.card_symbol_text(c)
    colour = "red" if cards.suit_of(c) in RED_SUITS else ""
    return Text(text, style=" ".join(x for x in (colour, style) if x))


def card_list(cs: Iterable[int], sep: str = " ") -> Text:
    out = Text()
    for i, c in enumerate(cs):
        if i:
            out.append(sep)
        out.append_text(card(c))
    return out


def plain_cards(cs: Iterable[int]) -> str:
    """``2♣ 7♣ Q♠``: cards as plain text (for one-line messages)."""
    return " ".join(cards.card_symbol_text(c) for c in cs) or "(none)"


def hand_rows(
    hand: Sequence[int], legal: Iterable[int] = (), chosen: Iterable[int] = (), numbered: bool = True
) -> list[Text]:
    """One line per suit; with ``numbered`` each card has its number (1..) for input by number.

    Legal cards are bold and marked ``*``; cards chosen to pass are marked ``>``.
    """
    legal, chosen = set(legal), set(chosen)
    rows = []
    for suit in range(cards.NUM_SUITS):
        row = Text(f"  {cards.SUIT_SYMBOLS[suit]} ", style="red" if suit in RED_SUITS else "")
        in_suit = [(i, c) for i, c in enumerate(hand) if cards.suit_of(c) == suit]
        if not in_suit:
            row.append(" —", style="dim")
        for i, c in in_suit:
            row.append("  ")
            if numbered:
                row.append(f"{i + 1}:", style="dim")
            mark = ">" if c in chosen else ("*" if c in legal else " ")
            row.append_text(card(c, "bold" if c in legal else ("dim" if legal or chosen else "")))
            row.append(mark, style="bold")
        rows.append(row)
    return rows


def trick_text(plays: Sequence[tuple[int, int]], names: Sequence[str]) -> Text:
    out = Text()
    for i, (seat, c) in enumerate(plays):
        if i:
            out.append(" · ")
        out.append(f"{names[seat]} ")
        out.append_text(card(c))
    return out


def score_lines(
    names: Sequence[str], scores: Sequence[int], points: Sequence[int], tricks: Sequence[int],
    to_act: int | None = None,
) -> list[Text]:
    width = max(len(n) for n in names) + 2
    lines = [Text(f"  {'':<{width}} {'score':>5}  {'this hand':>9}  {'tricks':>6}", style="dim")]
    for seat, name in enumerate(names):
        marker = "▶ " if seat == to_act else "  "
        lines.append(Text(f"{marker}{name:<{width}} {scores[seat]:>5}  {points[seat]:>9}  {tricks[seat]:>6}"))
    return lines


def pass_target(offset: int, num_players: int, names: Sequence[str], seat: int = 0) -> str:
    return names[(seat + offset) % num_players]


def describe(event: Event, names: Sequence[str], human: int | None = 0, num_players: int = 4) -> Text | None:
    """One line (or a few) for an event; ``human`` is the seat whose secret picks may be shown
    (``None``: show everything, as in a replay)."""
    you = lambda seat: human is not None and seat == human  # noqa: E731
    if isinstance(event, HandStarted):
        direction = event.pass_direction
        if event.pass_to:
            text = f"pass {direction} (to {pass_target(event.pass_to, num_players, names, human or 0)})"
            if human is None:
                text = f"pass {direction}"
        else:
            text = "no pass"
        return Text(f"\n══ Hand {event.hand_number + 1} · {text} ══", style="bold")
    if isinstance(event, Picked):
        return None  # picks are secret; the exchange is reported
    if isinstance(event, Exchanged):
        if human is None:
            out = Text("Passes: ")
            for seat, given in enumerate(event.passed):
                if seat:
                    out.append(" · ")
                out.append(f"{names[seat]} → {pass_target(event.offset, num_players, names, seat)}: ")
                out.append_text(card_list(given))
            return out
        giver = (human - event.offset) % num_players
        out = Text("You passed ")
        out.append_text(card_list(event.passed[human]))
        out.append(f" to {names[(human + event.offset) % num_players]} and received ")
        out.append_text(card_list(event.received[human]))
        out.append(f" from {names[giver]}.")
        return out
    if isinstance(event, Played):
        if human is None:
            return None  # the replay shows whole tricks
        out = Text(f"{names[event.seat]} {'play' if you(event.seat) else 'plays'} ")
        out.append_text(card(event.card))
        return out
    if isinstance(event, HeartsBroken):
        return Text("Hearts are broken.", style="red")
    if isinstance(event, TrickWon):
        out = Text(f"Trick {event.trick_number + 1}: ")
        out.append_text(trick_text(event.plays, names))
        taker = "you take" if you(event.winner) else f"{names[event.winner]} takes"
        pts = f"{event.points} point{'s' if event.points != 1 else ''}"
        out.append(f"  → {taker} it ({pts})", style="bold")
        return out
    if isinstance(event, HandScored):
        out = Text(f"Hand {event.hand_number + 1} over.", style="bold")
        if event.moon is not None:
            shooter = "You" if you(event.moon) else names[event.moon]
            out.append(f" {shooter} shot the moon!", style="bold magenta")
        width = max(len(n) for n in names)
        out.append(f"\n  {'':<{width}}  {'hand':>4}  {'total':>5}  {'tricks':>6}  taken", style="dim")
        for seat, name in enumerate(names):
            pts, taken = event.points[seat], event.card_points[seat]
            total, tricks = event.totals[seat], event.tricks[seat]
            out.append(f"\n  {name:<{width}}  {pts:>+4}  {total:>5}  {tricks:>6}  {taken:>5}")
        return out
    if isinstance(event, GameOver):
        if event.winner is None:
            return Text(f"Stopped. Totals: {list(event.totals)}", style="bold")
        who = "You win" if you(event.winner) else f"{names[event.winner]} wins"
        return Text(f"\nGame over: {who} with {event.totals[event.winner]} points. "
                    + "Totals: " + ", ".join(f"{n} {t}" for n, t in zip(names, event.totals)), style="bold")
    return None
