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
from hearts_env.cards import popcount
from hearts_env.compiled import inline, jit

from . import easy
from .base import RuleBot, rule_chain
from .easy import NO_CARD, keepers, safe_discards, without
from .table import AS, HEARTS, HIGH_RANK, KS, LOW_RANK, NONE, QS, SPADES_BELOW_QUEEN, pick, seat

PASS_COUNT = 3
HIGH_HEARTS = HEARTS & ~((cards.BIT[cards.card_id(cards.HEARTS, 9)]) - np.uint64(1))  # J♥ and up
SPADE_HONOURS = QS | AS | KS
QUEEN_FIRST = HIGH_RANK + np.where(np.arange(52) == cards.QUEEN_OF_SPADES, 100.0, 0.0)
SUIT_BITS = cards.SUIT_BITS


@jit
def kept(s):
    """My cards not yet chosen for passing."""
    return s.hand & ~s.passed


@jit
def short_in_spades(s):
    return popcount(kept(s) & SPADES_BELOW_QUEEN) < 3


@inline
def pass_exposed_spades(s):
    return pick(s.legal & SPADE_HONOURS, QUEEN_FIRST) if s.passing and short_in_spades(s) else NO_CARD


@inline
def pass_high_hearts(s):
    return pick(s.legal & HIGH_HEARTS, HIGH_RANK) if s.passing else NO_CARD


@inline
def pass_to_void(s):
    if not s.passing:
        return NO_CARD
    picks_left = PASS_COUNT - popcount(s.passed)
    best, best_length = NONE, 99
    for suit in (cards.CLUBS, cards.DIAMONDS):
        in_suit = kept(s) & SUIT_BITS[suit] & ~keepers(s)
        length = popcount(in_suit)
        if 0 < length <= picks_left and length < best_length:
            best, best_length = in_suit, length
    return pick(best & s.legal, HIGH_RANK)


@inline
def take_clean_trick_last(s):
    clean = s.following and s.last_to_play and s.trick_points <= 0
    return pick(without(s.legal, QS), HIGH_RANK) if clean else NO_CARD


@inline
def slip_queen_under(s):
    winner_above_queen = s.winning_card == cards.QUEEN_OF_SPADES + 1 or s.winning_card == cards.QUEEN_OF_SPADES + 2
    return pick(s.legal & QS & ~s.beats, HIGH_RANK) if s.following and winner_above_queen else NO_CARD


@inline
def play_highest_loser(s):
    return pick(s.legal & ~s.beats, HIGH_RANK) if s.following else NO_CARD


@inline
def win_with_highest(s):
    return pick(without(s.legal, QS), HIGH_RANK) if s.following else NO_CARD


@inline
def discard_spade_honours(s):
    return pick(safe_discards(s) & (AS | KS), HIGH_RANK) if s.queen_out else NO_CARD


@inline
def bleed_spades(s):
    bleeding = s.leading and not s.passing and s.queen_out and (s.hand & QS) == 0
    return pick(s.legal & SPADES_BELOW_QUEEN, LOW_RANK) if bleeding else NO_CARD


@jit
def held_back_leads(s):
    """Cards not led while another will do: Q♠, A♠ and K♠ while Q♠ is out (Q♠ alone once it is not),
    and the keepers."""
    return (SPADE_HONOURS if s.queen_out else QS) | keepers(s)


@inline
def lead_low_from_short_suit(s):
    if not s.leading or s.passing:
        return NO_CARD
    for card in range(cards.NUM_CARDS):  # the lowest card of the shortest suit
        s.card_scores[card] = -100.0 * popcount(s.hand & SUIT_BITS[card // cards.NUM_RANKS]) - card % cards.NUM_RANKS
    return pick(without(s.legal, held_back_leads(s)), s.card_scores)


#: The play rules, in order (``hard`` plays them after its own).
PLAY_RULES = (
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
PASS_RULES = (pass_exposed_spades, pass_high_hearts, pass_to_void, easy.pass_highest)


#: The rules, in the order ``first_rule`` tries them.
RULES = PASS_RULES + PLAY_RULES
first_rule = rule_chain(RULES)


@jit
def _decide(pieces, choice, chosen_by):
    scores = np.empty(cards.NUM_CARDS)
    for g in range(choice.size):
        choice[g], chosen_by[g] = first_rule(seat(pieces, g, scores))


class NormalBot(RuleBot):
    name = "normal"
    rules = RULES
    kernel = _decide
