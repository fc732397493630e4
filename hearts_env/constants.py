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


@functools.lru_cache(maxsize=64)
def constants(rules: Rules) -> RuleConstants:
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
    )
