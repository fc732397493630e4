"""What a heuristic bot reads off its arguments: the observation and the legal mask, batched.

``Table(observation, action_mask)`` decodes observation v1 by name and derives the facts the bot
levels reason with, as ``[N]`` card sets (``uint64`` bitboards, see ``hearts_env.cards``) or
``[N]`` arrays: the current trick and its winning card, which cards would win or lose it, the
cards still out (not in my hand and not played), voids, points taken. Nothing here reads
anything but the two arguments, so a bot built on it cannot peek.

Card choices are made with :func:`pick`, which takes the preferred card of a set per game.
"""

from __future__ import annotations

import numpy as np

from hearts_env import cards
from hearts_env.observe import OBSERVATION_LAYOUT, decode

C, D, H, S = cards.CLUBS, cards.DIAMONDS, cards.HEARTS, cards.SPADES
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


def above(card: np.ndarray) -> np.ndarray:
    """Cards of the same suit as ``card`` and higher (``card`` ids, -1 gives the empty set)."""
    safe = np.maximum(card, 0)
    suit_bits = cards.SUIT_BITS[safe // cards.NUM_RANKS]
    higher = ~((cards.BIT[safe] << np.uint64(1)) - np.uint64(1))
    return np.where(card >= 0, suit_bits & higher, NONE)


def below(card: np.ndarray) -> np.ndarray:
    """Cards of the same suit as ``card`` and lower."""
    safe = np.maximum(card, 0)
    suit_bits = cards.SUIT_BITS[safe // cards.NUM_RANKS]
    return np.where(card >= 0, suit_bits & (cards.BIT[safe] - np.uint64(1)), NONE)


def has(bits: np.ndarray, card_bits) -> np.ndarray:
    return (bits & card_bits) != 0


#: RANK_MAJOR_BITS[x]: the 13-bit suit field x (bit r = rank r) spread to bits 4r, so that the four
#: suits of a card set interleave into one set ordered by rank, then suit (bit 4 * rank + suit).
_RANK_MAJOR_BITS = np.array([sum(((x >> r) & 1) << (4 * r) for r in range(13)) for x in range(1 << 13)],
                            dtype=np.uint64)
_SUIT_FIELD = np.uint64((1 << cards.NUM_RANKS) - 1)
#: From this many games on, ``pick`` by HIGH_RANK or LOW_RANK works on bits (fewer, larger steps
#: than the general path, which builds [N, 52] arrays).
_BITS_PICK_FROM = 512


def _rank_major(bits: np.ndarray) -> np.ndarray:
    """Card sets re-ordered so that bit ``4 * rank + suit`` (= HIGH_RANK) holds each card."""
    out = _RANK_MAJOR_BITS[(bits & _SUIT_FIELD).astype(np.intp)]
    for suit in range(1, 4):
        field = (bits >> np.uint64(cards.NUM_RANKS * suit)) & _SUIT_FIELD
        out |= _RANK_MAJOR_BITS[field.astype(np.intp)] << np.uint64(suit)
    return out


def pick(candidates: np.ndarray, preference: np.ndarray) -> np.ndarray:
    """Per game, the card of the set ``candidates`` with the highest ``preference`` ([52] or
    [N, 52]); -1 where the set is empty."""
    if (preference is HIGH_RANK or preference is LOW_RANK) and np.size(candidates) >= _BITS_PICK_FROM:
        ordered = _rank_major(candidates)
        at = cards.highest_card(ordered) if preference is HIGH_RANK else cards.lowest_card(ordered)
        return np.where(candidates != 0, (at & 3) * cards.NUM_RANKS + (at >> 2), -1)
    mask = cards.to_mask(candidates)
    scored = np.where(mask, preference + 1000.0, -np.inf)
    choice = scored.argmax(axis=1)
    return np.where(candidates != 0, choice, -1)


class Table:
    """Facts one seat knows, for a batch of games (all ``[N]`` unless noted)."""

    def __init__(self, observation: np.ndarray, action_mask: np.ndarray):
        pieces = decode(np.asarray(observation))
        self.n = len(observation)
        rows = np.arange(self.n)
        flags = pieces["rules"]
        self.trump = np.where(flags[:, 5] > 0.5, H, -1)  # hearts_trump
        self.jack_bonus = flags[:, 4] > 0.5
        self.first_trick_protection = flags[:, 0] > 0.5
        self.players = np.where(flags[:, 7] > 0.5, 2, 4)  # two_players
        self.deck = np.where(flags[:, 6] > 0.5, _SHORT_DECK, cards.ALL_BITS)

        self.legal = _card_sets(np.asarray(action_mask), 0)[:, 0]
        sets = _card_sets(np.asarray(observation)[:, :_CARD_SETS * cards.NUM_CARDS], 0.5)
        self.hand, self.passed, self.received = sets[:, 0].copy(), sets[:, 1].copy(), sets[:, 2].copy()
        trick_sets = sets[:, 3:7]  # [N, 4] by relative seat (one card at most)
        self.played_by = np.ascontiguousarray(sets[:, 7:11])  # [N, 4] by relative seat
        self.played = np.bitwise_or.reduce(self.played_by, axis=1)
        self.passing = pieces["phase"][:, 0] > 0.5
        self.pass_offset = pieces["pass_direction"].argmax(axis=1)  # relative receiver, 0 = none
        self.hearts_broken = pieces["hearts_broken"][:, 0] > 0.5
        self.voids = pieces["voids"] > 0.5  # [N, 4 relative seats, 4 suits]
        self.points_taken = np.rint(pieces["points_taken"] * 26).astype(np.int64)  # [N, 4]
        self.trick_number = pieces["trick_number"][:, 0]

        # The current trick.
        self.trick_card = np.where(trick_sets != 0, cards.lowest_card(trick_sets), -1)  # [N, 4]
        self.in_trick = (self.trick_card >= 0).sum(axis=1)
        self.leading = self.in_trick == 0
        leader = pieces["trick_leader"].argmax(axis=1)
        led_card = self.trick_card[rows, leader]
        self.led_suit = np.where(self.leading, -1, led_card // cards.NUM_RANKS)
        self.trick_bits = np.bitwise_or.reduce(np.where(self.trick_card >= 0, cards.BIT[np.maximum(self.trick_card, 0)], NONE), axis=1)
        self.last_to_play = self.in_trick == self.players - 1
        suit = self.trick_card // cards.NUM_RANKS
        strength = np.where(
            self.trick_card >= 0,
            self.trick_card % cards.NUM_RANKS + 13 * (suit == self.led_suit[:, None]) + 26 * (suit == self.trump[:, None]),
            -1,
        )
        self.winning_card = np.where(self.leading, -1, self.trick_card[rows, strength.argmax(axis=1)])
        self.winning_seat = np.where(self.leading, -1, strength.argmax(axis=1))  # relative seat
        winner_is_trump = (self.winning_card // cards.NUM_RANKS == self.trump) & ~self.leading
        trumps = np.where(self.trump >= 0, cards.SUIT_BITS[np.maximum(self.trump, 0)], NONE)
        # Cards that would take the trick if played now.
        self.beats = np.where(
            winner_is_trump,
            above(self.winning_card),
            above(self.winning_card) | np.where(self.led_suit == self.trump, NONE, trumps),
        )
        self.beats = np.where(self.leading, NONE, self.beats)
        self.trick_points = self.points_in(self.trick_bits)

        self.queen_out = ~has(self.played | self.hand, QS)  # somebody else still holds Q♠
        # Cards whose place I do not know: not mine, not played, not passed by me.
        self.unseen = self.deck & ~self.hand & ~self.played & ~self.passed
        self.following = ~self.leading & ((self.legal & cards.SUIT_BITS[np.maximum(self.led_suit, 0)]) != 0)
        self.void_now = ~self.leading & ~self.following

    def points_in(self, bits: np.ndarray) -> np.ndarray:
        """Penalty points of card sets (hearts 1, Q♠ 13, J♦ bonus when on)."""
        points = cards.count(bits & HEARTS).astype(np.int64) + 13 * has(bits, QS)
        return points + np.where(self.jack_bonus & has(bits, JD), -10, 0)

    def suit_count(self, bits: np.ndarray, suit: int) -> np.ndarray:
        return cards.count(bits & cards.SUIT_BITS[suit]).astype(np.int64)


#: The card-set pieces of the observation (hand, passed, received, trick x 4, played_by x 4), side by
#: side at its start in that order.
_CARD_SETS = 11
assert [OBSERVATION_LAYOUT[name][0].start for name in ("hand", "passed", "received", "trick", "played_by")] == \
    [0, 52, 104, 156, 364]


def _card_sets(values: np.ndarray, threshold: float) -> np.ndarray:
    """``[N, S * 52]`` per-card values -> ``[N, S]`` card sets of the cards above ``threshold``
    (as ``cards.from_mask(values > threshold)``, with each set padded to 64 bits so that one flat
    packing makes them all)."""
    n, sets = values.shape[0], values.shape[1] // cards.NUM_CARDS
    padded = np.zeros((n, sets, 64), dtype=bool)
    np.greater(values.reshape(n, sets, cards.NUM_CARDS), threshold, out=padded[:, :, :cards.NUM_CARDS])
    return np.packbits(padded, bitorder="little").view("<u8").reshape(n, sets).astype(np.uint64, copy=False)


_SHORT_DECK = cards.bits_of(s * 13 + r for s in range(4) for r in (0, 2, 4, 6, 8, 10, 12))
