"""Per-rules constants the hot paths read (card sets and tables), computed once per ``Rules``."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from . import cards
from .rules import Rules


@dataclasses.dataclass(frozen=True)
class RuleConstants:
    num_players: int
    hand_size: int
    trump: int
    pass_offsets: np.ndarray  # [len(pass_cycle)] seat offset of each hand's pass, 0 = no pass
    opening_ids: tuple[int, ...]
    point_bits: np.uint64  # hearts and Q♠ in this deck
    hearts_bits: np.uint64
    queen_bit: np.uint64
    jack_bit: np.uint64
    # Cards that may not be led before hearts are broken (hearts, and Q♠ when it waits).
    unbroken_lead_bits: np.uint64
    next_seat: np.ndarray  # [P] the seat after each seat in play order (a gather is cheaper than ``% P``)


_CACHE: dict[int, tuple[Rules, RuleConstants]] = {}


def constants(rules: Rules) -> RuleConstants:
    """The constants of ``rules``, cached by object identity (hashing a pydantic model on every
    step of a single game costs more than the step's own arithmetic)."""
    hit = _CACHE.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    if len(_CACHE) > 256:
        _CACHE.clear()
    value = _compute(rules)
    _CACHE[id(rules)] = (rules, value)  # keeps ``rules`` alive, so its id is not reused
    return value


@functools.lru_cache(maxsize=64)
def _compute(rules: Rules) -> RuleConstants:
    hearts = cards.SUIT_BITS[cards.HEARTS] & rules.deck_bits
    queen = cards.BIT[cards.QUEEN_OF_SPADES]
    unbroken = np.uint64(0)
    if rules.hearts_must_be_broken:
        unbroken |= hearts
    if rules.queen_waits_for_hearts:
        unbroken |= queen
    return RuleConstants(
        num_players=rules.num_players,
        hand_size=rules.hand_size,
        trump=rules.trump,
        pass_offsets=rules.pass_offsets,
        opening_ids=rules.opening_ids,
        point_bits=rules.point_bits,
        hearts_bits=hearts,
        queen_bit=queen,
        jack_bit=cards.BIT[cards.JACK_OF_DIAMONDS],
        unbroken_lead_bits=np.uint64(unbroken),
        next_seat=np.roll(np.arange(rules.num_players), -1),
    )
