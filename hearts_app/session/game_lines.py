"""The shape of a record's game line, checked before the engine replays it.

A record file comes from anywhere. ``check_game(game, num_players)`` reads every field that
resuming and replaying use (``Match.from_record`` and the replay's display) and raises
:class:`GameLineError` naming the first field of the wrong type or size and what it must be, in
words of JSON (text, number, list, object), where the replay would otherwise fail inside with
Python's own error (``'str' object has no attribute 'get'``). Whether the values make a game (the
deal the seed gives, legal actions, the points) is the engine's to check, on the replay.

Fields (optional ones may be missing or null)::

    deal_seed     a seed 0 .. 2**64 - 1, as decimal text (or a number)
    hand_number   optional, a whole number 0 or more
    seed          optional, a whole number 0 .. 2**63 - 1
    hands         a list of hand objects, at least one:
        hand_number   a whole number 0 or more
        dealt         one list of cards per seat (a card: text such as "QS", or an id)
        dead          optional, a list of cards
        actions       optional, a list of [seat, card] pairs, seat 0 .. players - 1
        points        optional, one whole number per seat
        custom_deal   optional, true or false
    seats, specs  optional, one text per seat
    start_scores, points, scores   optional, one whole number per seat
    finished      optional, true or false
"""

from __future__ import annotations

from typing import Any

#: What a whole number in a record may be (the engine keeps its numbers in 64 bits).
WHOLE_LIMIT = 2**63


class GameLineError(ValueError):
    """A game line with a field of the wrong type or size; the message names the field."""


def describe(value: Any) -> str:
    """``value`` in words of JSON, shortened: ``text 'abc'``, ``number 0.5``, ``a list of 3``, ``an object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 24 else value[:21] + "..."
        return f"text {shown!r}" + (f" ({len(value)} characters)" if len(value) > 24 else "")
    if isinstance(value, (int, float)):
        text = str(value)
        return f"number {text}" if len(text) <= 24 else f"a number of {len(text)} digits"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _whole(value: Any, field: str, low: int = -WHOLE_LIMIT, high: int = WHOLE_LIMIT - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        bounds = "0 or more" if low == 0 and high == WHOLE_LIMIT - 1 else f"{low} to {high}"
        raise GameLineError(f"{field} must be a whole number {bounds}, got {describe(value)}")
    return value


def _per_seat(value: Any, field: str, players: int, kind: str, accept) -> list:
    if not isinstance(value, list) or len(value) != players or not all(accept(v) for v in value):
        raise GameLineError(f"{field} must be {players} {kind}, one per seat, got {describe(value)}"
                            + _first_bad(value, accept))
    return value


def _first_bad(value: Any, accept) -> str:
    if isinstance(value, list):
        for item in value:
            if not accept(item):
                return f" holding {describe(item)}"
    return ""


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -WHOLE_LIMIT <= value < WHOLE_LIMIT


def _is_card(value: Any) -> bool:
    return isinstance(value, str) or _is_whole(value)


def _cards(value: Any, field: str) -> list:
    if not isinstance(value, list) or not all(_is_card(c) for c in value):
        raise GameLineError(f"{field} must be a list of cards (text such as 'QS', or an id 0..51), got "
                            f"{describe(value)}" + _first_bad(value, _is_card))
    return value


def _flag(value: Any, field: str) -> None:
    if value is not None and not isinstance(value, bool):
        raise GameLineError(f"{field} must be true or false, got {describe(value)}")


def check_game(game: Any, players: int) -> None:
    """Raise :class:`GameLineError` unless ``game`` has the shape of a game line of a
    ``players``-player game (see the module docstring)."""
    if not isinstance(game, dict):
        raise GameLineError(f"a game line must be an object, got {describe(game)}")
    seed = game.get("deal_seed")
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 20:
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise GameLineError(f"deal_seed: {describe(game.get('deal_seed'))} is not a seed (0 to 2**64 - 1, "
                            "in decimal digits)")
    if game.get("hand_number") is not None:
        _whole(game["hand_number"], "hand_number", 0)
    if game.get("seed") is not None:
        _whole(game["seed"], "seed", 0)
    for field in ("seats", "specs"):
        if game.get(field) is not None:
            _per_seat(game[field], field, players, "texts", lambda v: isinstance(v, str))
    for field in ("start_scores", "points", "scores"):
        if game.get(field) is not None:
            _per_seat(game[field], field, players, "whole numbers", _is_whole)
    _flag(game.get("finished"), "finished")
    hands = game.get("hands")
    if not isinstance(hands, list) or not hands:
        raise GameLineError(f"hands must be a list of hand objects, at least one, got {describe(hands)}")
    for h, hand in enumerate(hands):
        where = f"hands[{h}]"
        if not isinstance(hand, dict):
            raise GameLineError(f"{where} must be a hand object, got {describe(hand)}")
        _whole(hand.get("hand_number"), f"{where}.hand_number", 0)
        dealt = _per_seat(hand.get("dealt"), f"{where}.dealt", players, "lists of cards",
                          lambda v: isinstance(v, list))
        for seat, held in enumerate(dealt):
            _cards(held, f"{where}.dealt[{seat}]")
        if hand.get("dead") is not None:
            _cards(hand["dead"], f"{where}.dead")
        _flag(hand.get("custom_deal"), f"{where}.custom_deal")
        if hand.get("points") is not None:
            _per_seat(hand["points"], f"{where}.points", players, "whole numbers", _is_whole)
        actions = hand.get("actions", [])
        if not isinstance(actions, list):
            raise GameLineError(f"{where}.actions must be a list of [seat, card] pairs, got {describe(actions)}")
        for a, action in enumerate(actions):
            if not (isinstance(action, list) and len(action) == 2 and _is_card(action[1])
                    and _is_whole(action[0]) and 0 <= action[0] < players):
                raise GameLineError(f"{where}.actions[{a}] must be a [seat, card] pair with a seat 0..{players - 1} "
                                    f"and a card (text such as 'QS', or an id), got {_pair(action)}")


def _pair(action: Any) -> str:
    if isinstance(action, list) and len(action) <= 4:
        return "[" + ", ".join(describe(v) for v in action) + "]"
    return describe(action)
