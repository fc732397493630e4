"""The ``normal`` bot: everything ``easy`` does, plus passing dangerous cards, playing under,
dumping Q♠ at the right moment and bleeding spades.

Rules, first match wins (then ``easy``'s rules):

1. ``pass_exposed_spades``: when passing and short in spades (fewer than three spades below the
   queen kept), pass Q♠, then A♠, then K♠.
2. ``pass_high_hearts``: then pass hearts from the jack up, highest first.
3. ``pass_to_void``: then pass the cards of a short club or diamond suit that the remaining
   picks can empty, highest first.
4. ``take_clean_trick_last``: playing last to a trick without points, take it with the highest
   card (never Q♠ while another card will do).
5. ``slip_queen_under``: following spades when A♠ or K♠ already wins the trick, play Q♠.
6. ``play_highest_loser``: following, play the highest card that still loses the trick.
7. ``win_with_highest``: following and every card wins, win with the highest (Q♠ last).
8. ``discard_queen``: void in the led suit, dump Q♠.
9. ``discard_spade_honours``: void, dump A♠ or K♠ while Q♠ is still out.
10. ``discard_highest_heart``, ``discard_highest``: void, dump high hearts, then high cards.
11. ``bleed_spades``: leading without Q♠ while it is still out, lead a spade below the queen.
12. ``lead_low_from_short_suit``: lead the lowest card of its shortest suit, keeping Q♠ and (while
    Q♠ is out) A♠ and K♠ back; hearts only once broken (the legal mask already says so).
"""

from __future__ import annotations

import numpy as np

from hearts_env import cards

from . import easy
from .base import RuleBot
from .easy import keepers, safe_discards, without
from .table import AS, HEARTS, HIGH_RANK, KS, LOW_RANK, QS, SPADES_BELOW_QUEEN, RANKS, SUITS, Table, pick

PASS_COUNT = 3
HIGH_HEARTS = HEARTS & ~((cards.BIT[cards.card_id(cards.HEARTS, 9)]) - np.uint64(1))  # J♥ and up
SPADE_HONOURS = QS | AS | KS
QUEEN_FIRST = HIGH_RANK + np.where(np.arange(52) == cards.QUEEN_OF_SPADES, 100.0, 0.0)


def kept(t: Table) -> np.ndarray:
    """My cards not yet chosen for passing."""
    return t.hand & ~t.passed


def short_in_spades(t: Table) -> np.ndarray:
    return cards.count(kept(t) & SPADES_BELOW_QUEEN) < 3


def pass_exposed_spades(t: Table) -> np.ndarray:
    candidates = np.where(t.passing & short_in_spades(t), t.legal & SPADE_HONOURS, 0)
    return pick(candidates, QUEEN_FIRST)


def pass_high_hearts(t: Table) -> np.ndarray:
    return pick(np.where(t.passing, t.legal & HIGH_HEARTS, 0), HIGH_RANK)


def pass_to_void(t: Table) -> np.ndarray:
    picks_left = PASS_COUNT - cards.count(t.passed).astype(np.int64)
    best = np.zeros(t.n, dtype=np.uint64)
    best_len = np.full(t.n, 99)
    for suit in (cards.CLUBS, cards.DIAMONDS):
        in_suit = kept(t) & cards.SUIT_BITS[suit] & ~keepers(t)
        length = cards.count(in_suit).astype(np.int64)
        better = (length > 0) & (length <= picks_left) & (length < best_len)
        best = np.where(better, in_suit, best)
        best_len = np.where(better, length, best_len)
    return pick(np.where(t.passing, best & t.legal, 0), HIGH_RANK)


def take_clean_trick_last(t: Table) -> np.ndarray:
    clean = t.following & t.last_to_play & (t.trick_points <= 0)
    return pick(np.where(clean, without(t, t.legal, QS), 0), HIGH_RANK)


def slip_queen_under(t: Table) -> np.ndarray:
    winner_above_queen = np.isin(t.winning_card, (cards.QUEEN_OF_SPADES + 1, cards.QUEEN_OF_SPADES + 2))
    return pick(np.where(t.following & winner_above_queen, t.legal & QS & ~t.beats, 0), HIGH_RANK)


def play_highest_loser(t: Table) -> np.ndarray:
    return pick(np.where(t.following, t.legal & ~t.beats, 0), HIGH_RANK)


def win_with_highest(t: Table) -> np.ndarray:
    return pick(np.where(t.following, without(t, t.legal, QS), 0), HIGH_RANK)


def discard_spade_honours(t: Table) -> np.ndarray:
    return pick(np.where(t.queen_out, safe_discards(t) & (AS | KS), 0), HIGH_RANK)


def bleed_spades(t: Table) -> np.ndarray:
    bleeding = t.leading & ~t.passing & t.queen_out & ((t.hand & QS) == 0)
    return pick(np.where(bleeding, t.legal & SPADES_BELOW_QUEEN, 0), LOW_RANK)


def suit_lengths(t: Table) -> np.ndarray:
    """``[N, 52]``: the length in my hand of each card's suit."""
    lengths = np.stack([cards.count(t.hand & cards.SUIT_BITS[s]) for s in range(4)], axis=1).astype(np.float64)
    return lengths[:, SUITS]


def lead_low_from_short_suit(t: Table) -> np.ndarray:
    held_back = np.where(t.queen_out, SPADE_HONOURS, QS) | keepers(t)
    candidates = np.where(t.leading & ~t.passing, without(t, t.legal, held_back), 0)
    preference = -100.0 * suit_lengths(t) - RANKS
    return pick(candidates, preference)


class NormalBot(RuleBot):
    name = "normal"
    rules = (
        pass_exposed_spades,
        pass_high_hearts,
        pass_to_void,
        easy.pass_highest,
        take_clean_trick_last,
        slip_queen_under,
        play_highest_loser,
        win_with_highest,
        easy.discard_queen,
        discard_spade_honours,
        easy.discard_highest_heart,
        easy.discard_highest,
        bleed_spades,
        lead_low_from_short_suit,
        easy.lead_lowest,
    )
