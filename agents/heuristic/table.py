"""What a heuristic bot reads off its arguments: the observation and the legal mask, batched.

``Table(observation, action_mask)`` is the seat's view (``hearts_env.seat_view``: my hand and
legal cards, the cards played by each seat, the current trick, its winning card and the cards that
would beat it, voids, points taken) as the bot levels reason with it, plus the points in the
trick. Nothing here reads anything but the two arguments, so a bot built on it cannot peek.

The bots' rules are compiled functions over one game: ``seat(table.pieces(), g, card_scores)`` gives
game ``g`` as a ``Seat`` (its pieces, plus the cards out and where they may be), and a rule
chooses with :func:`pick`, the card of a set that a preference ranks first.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from hearts_env import cards, seat_view
from hearts_env.compiled import inline, jit
from hearts_env.holding import may_hold

from ..base import checked_inputs, refuse_empty_row

H, S = cards.HEARTS, cards.SPADES
QS = cards.BIT[cards.QUEEN_OF_SPADES]
KS = cards.BIT[cards.card_id(S, 11)]
AS = cards.BIT[cards.card_id(S, 12)]
JD = cards.BIT[cards.JACK_OF_DIAMONDS]
AH = cards.BIT[cards.card_id(H, 12)]
HEARTS = cards.SUIT_BITS[H]
SPADES = cards.SUIT_BITS[S]
SPADES_BELOW_QUEEN = SPADES & (QS - np.uint64(1))
NONE = np.uint64(0)
RANKS = np.arange(cards.NUM_CARDS) % cards.NUM_RANKS
SUITS = np.arange(cards.NUM_CARDS) // cards.NUM_RANKS

#: Preference orders for :func:`pick` (higher value = preferred).
HIGH_RANK = (RANKS * 4 + SUITS).astype(np.float64)  # highest rank first, spades before clubs
LOW_RANK = -HIGH_RANK + 60  # lowest rank first
#: What :func:`pick` adds to every score before comparing: scores closer than about 1e-13 count as
#: equal (the lowest card id wins), as they always have in the bots' play.
SCORE_OFFSET = 1000.0


#: One game as the bots' compiled rules read it: the ``Table`` pieces of that game (relative
#: seats, 0 = me) and what follows from them. ``out``: the cards held by the other seats (or
#: dead): not mine and not played. ``sent``: the cards I passed that their receiver still holds.
#: ``holds``: the cards each seat may hold (seat 0: my hand), by the one rule of who may hold a card
#: (``hearts_env.holding.may_hold``): the cards out, less the suits it showed void in, less the
#: cards I sent to another seat, plus those I sent to it.
#: ``opponents``: the other seats of the game; ``later``: those still to play to this trick after
#: me. ``card_scores``: room for a rule to score each card.
Seat = namedtuple("Seat", (
    "hand", "legal", "passed", "played", "deck", "beats", "trick_bits", "out", "sent", "holds", "points_taken",
    "opponents", "later", "players", "pass_offset", "led_suit", "winning_card", "winning_seat", "trick_points",
    "first_trick", "passing", "leading", "following", "void_now", "last_to_play", "jack_bonus",
    "first_trick_protection", "queen_out", "moon_off", "card_scores",
))


@jit
def has(card_set, card_bits):
    return (card_set & card_bits) != 0


@jit
def below(card):
    """Cards of the same suit as ``card`` and lower."""
    return cards.SUIT_BITS[card // cards.NUM_RANKS] & (cards.bit(card) - np.uint64(1))


@jit
def above(card):
    """Cards of the same suit as ``card`` and higher."""
    return cards.SUIT_BITS[card // cards.NUM_RANKS] & ~((cards.bit(card) << np.uint64(1)) - np.uint64(1))


@jit
def pick(card_set, preference):
    """The card of ``card_set`` with the highest ``preference`` ([52]); -1 for the empty set. Ties
    go to the lowest card id. Scores are compared after adding ``SCORE_OFFSET``."""
    best, best_value = -1, -np.inf
    rest = card_set
    while rest:
        card = cards.lowest_of(rest)
        rest &= rest - np.uint64(1)
        value = preference[card] + SCORE_OFFSET
        if best < 0 or value > best_value:
            best, best_value = card, value
    return best


@jit
def _may_hold(seat, out, sent, voids, pass_offset, players):
    if players <= seat:
        return NONE
    return may_hold(out, sent, voids[seat], pass_offset == seat)


@inline
def seat(pieces, g, card_scores):
    """Game ``g`` of a ``Table``'s pieces (``Table.pieces()``) as a ``Seat``."""
    (hand, legal, passed, played, deck, beats, trick_bits, voids, points_taken, trick_card, players, pass_offset,
     led_suit, winning_card, winning_seat, trick_points, first_trick, passing, leading, following, void_now,
     last_to_play, jack_bonus, first_trick_protection, queen_out, moon_off) = pieces
    out = deck[g] & ~hand[g] & ~played[g]
    sent = passed[g] & ~played[g] if not passing[g] and pass_offset[g] > 0 else NONE
    holds = (hand[g], _may_hold(1, out, sent, voids[g], pass_offset[g], players[g]),
             _may_hold(2, out, sent, voids[g], pass_offset[g], players[g]),
             _may_hold(3, out, sent, voids[g], pass_offset[g], players[g]))
    opponents = (False, 1 < players[g], 2 < players[g], 3 < players[g])
    later = (False, opponents[1] and trick_card[g, 1] < 0, opponents[2] and trick_card[g, 2] < 0,
             opponents[3] and trick_card[g, 3] < 0)
    return Seat(hand[g], legal[g], passed[g], played[g], deck[g], beats[g], trick_bits[g], out, sent, holds,
                (points_taken[g, 0], points_taken[g, 1], points_taken[g, 2], points_taken[g, 3]),
                opponents, later, players[g], pass_offset[g], led_suit[g], winning_card[g], winning_seat[g],
                trick_points[g], first_trick[g], passing[g], leading[g], following[g], void_now[g],
                last_to_play[g], jack_bonus[g], first_trick_protection[g], queen_out[g], moon_off[g], card_scores)


class Table:
    """The facts the bots read, for a batch of games: a ``hearts_env.seat_view.SeatView`` (``view``)
    and the penalty points of the current trick."""

    def __init__(self, observation: np.ndarray, action_mask: np.ndarray):
        observation, action_mask = checked_inputs(observation, action_mask, empty_rows=False)
        view = self.view = seat_view.read(observation, action_mask)
        self.n = view.n
        if not view.legal.all():  # (cheaper on the decoded card sets than on the mask)
            refuse_empty_row(int(np.argmin(view.legal != 0)))
        self.trick_points = self.points_in(view.trick_bits)

    def pieces(self) -> tuple:
        """The pieces the bots' compiled rules read (see ``seat``), in its order."""
        v = self.view
        return (v.hand, v.legal, v.passed, v.played, v.deck, v.beats, v.trick_bits, v.voids, v.points_taken,
                v.trick_card, v.players, v.pass_offset, v.led_suit, v.winning_card, v.winning_seat, self.trick_points,
                v.tricks_done == 0, v.passing, v.leading, v.following, v.void_now, v.last_to_play, v.jack_bonus,
                v.first_trick_protection, v.queen_out, v.moon_off)

    def points_in(self, bits: np.ndarray) -> np.ndarray:
        """Penalty points of card sets (hearts 1, Q♠ 13, J♦ bonus when on)."""
        points = cards.count(bits & HEARTS).astype(np.int64) + 13 * ((bits & QS) != 0)
        return points + np.where(self.view.jack_bonus & ((bits & JD) != 0), -10, 0)
