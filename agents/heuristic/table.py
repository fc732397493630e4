"""What a heuristic bot reads off its arguments: the observation and the legal mask, batched.

``Table(observation, action_mask)`` decodes observation v1 by name and derives the facts the bot
levels reason with, as ``[N]`` card sets (``uint64`` bitboards, see ``hearts_env.cards``) or
``[N]`` arrays: my hand and legal cards, the cards played by each seat, the current trick and its
winning card, which cards would win it, voids, points taken. Nothing here reads anything but the
two arguments, so a bot built on it cannot peek.

The bots' rules are compiled functions over one game: ``seat(table.pieces(), g, scores)`` gives
game ``g`` as a ``Seat`` (its pieces, plus the cards out and where they may be), and a rule
chooses with :func:`pick`, the card of a set that a preference ranks first.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from hearts_env import cards
from hearts_env.compiled import inline, jit
from hearts_env.observe import OBSERVATION_LAYOUT, RULE_FLAGS

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
#: ``holds``: the cards each seat may hold (seat 0: my hand): the cards out, less the suits it
#: showed void in, less the cards I sent to another seat, plus those I sent to it.
#: ``opponents``: the other seats of the game; ``later``: those still to play to this trick after
#: me. ``scores``: room for a rule to score each card.
Seat = namedtuple("Seat", (
    "hand", "legal", "passed", "played", "deck", "beats", "trick_bits", "out", "sent", "holds", "points_taken",
    "opponents", "later", "players", "pass_offset", "led_suit", "winning_card", "winning_seat", "trick_points",
    "first_trick", "passing", "leading", "following", "void_now", "last_to_play", "jack_bonus",
    "first_trick_protection", "queen_out", "moon_off", "scores",
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
    held = out
    for suit in range(4):
        if voids[seat, suit]:
            held &= ~cards.SUIT_BITS[suit]
    return held | sent if pass_offset == seat else held & ~sent


@inline
def seat(pieces, g, scores):
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
                last_to_play[g], jack_bonus[g], first_trick_protection[g], queen_out[g], moon_off[g], scores)


class Table:
    """Facts one seat knows, for a batch of games (all ``[N]`` unless noted)."""

    def __init__(self, observation: np.ndarray, action_mask: np.ndarray):
        observation, action_mask = checked_inputs(observation, action_mask, empty_rows=False)
        if observation.dtype not in (np.float32, np.float64):  # (the two the compiled decoder takes)
            observation = observation.astype(np.float64)
        observation, action_mask = np.ascontiguousarray(observation), np.ascontiguousarray(action_mask)
        n = self.n = len(observation)
        ints = lambda *shape: np.empty((n,) + shape, dtype=np.int64)  # noqa: E731
        sets = lambda *shape: np.empty((n,) + shape, dtype=np.uint64)  # noqa: E731
        flags = lambda *shape: np.empty((n,) + shape, dtype=bool)  # noqa: E731
        self.trump, self.players, self.pass_offset = ints(), ints(), ints()
        self.jack_bonus, self.first_trick_protection, self.passing, self.hearts_broken = flags(), flags(), flags(), flags()
        self.deck, self.legal, self.hand, self.passed, self.received = sets(), sets(), sets(), sets(), sets()
        self.played_by, self.played = sets(4), sets()
        self.voids, self.points_taken = flags(4, 4), ints(4)
        self.trick_number = np.empty(n, dtype=observation.dtype)
        self.trick_card, self.in_trick, self.leading, self.led_suit = ints(4), ints(), flags(), ints()
        self.trick_bits, self.last_to_play, self.winning_card, self.winning_seat = sets(), flags(), ints(), ints()
        self.beats, self.queen_out = sets(), flags()
        self.following, self.void_now = flags(), flags()
        _decode(observation, action_mask, self.trump, self.players, self.pass_offset, self.jack_bonus,
                self.first_trick_protection, self.passing, self.hearts_broken, self.deck, self.legal, self.hand,
                self.passed, self.received, self.played_by, self.played, self.voids, self.points_taken,
                self.trick_number, self.trick_card, self.in_trick, self.leading, self.led_suit, self.trick_bits,
                self.last_to_play, self.winning_card, self.winning_seat, self.beats,
                self.queen_out, self.following, self.void_now)
        if not self.legal.all():  # (cheaper on the decoded card sets than on the mask)
            refuse_empty_row(int(np.argmin(self.legal != 0)))
        self.trick_points = self.points_in(self.trick_bits)
        self.moon_off = observation[:, _RULES + _MOON_OFF] > 0.5

    def pieces(self) -> tuple:
        """The pieces the bots' compiled rules read (see ``seat``), in its order."""
        return (self.hand, self.legal, self.passed, self.played, self.deck, self.beats, self.trick_bits, self.voids,
                self.points_taken, self.trick_card, self.players, self.pass_offset, self.led_suit, self.winning_card,
                self.winning_seat, self.trick_points, self.trick_number == 0, self.passing, self.leading, self.following,
                self.void_now, self.last_to_play, self.jack_bonus, self.first_trick_protection, self.queen_out,
                self.moon_off)

    def points_in(self, bits: np.ndarray) -> np.ndarray:
        """Penalty points of card sets (hearts 1, Q♠ 13, J♦ bonus when on)."""
        points = cards.count(bits & HEARTS).astype(np.int64) + 13 * ((bits & QS) != 0)
        return points + np.where(self.jack_bonus & ((bits & JD) != 0), -10, 0)


_SHORT_DECK = cards.bits_of(s * 13 + r for s in range(4) for r in (0, 2, 4, 6, 8, 10, 12))
_ALL = cards.ALL_BITS
_SUIT_BITS = cards.SUIT_BITS
_AT = {name: piece.start for name, (piece, _) in OBSERVATION_LAYOUT.items()}
_RULES, _PHASE, _PASS_DIRECTION, _HEARTS_BROKEN = _AT["rules"], _AT["phase"], _AT["pass_direction"], _AT["hearts_broken"]
_VOIDS, _POINTS_TAKEN, _TRICK_NUMBER, _TRICK_LEADER = _AT["voids"], _AT["points_taken"], _AT["trick_number"], _AT["trick_leader"]
_HAND, _PASSED, _RECEIVED, _TRICK, _PLAYED_BY = _AT["hand"], _AT["passed"], _AT["received"], _AT["trick"], _AT["played_by"]
_TWENTY_SIX = np.float32(26)
_MOON_OFF = RULE_FLAGS.index("moon_off")
#: Where the card sets start in the observation: hand, passed, received, the trick's four cards
#: and the four seats' played cards, by relative seat.
_CARD_SET_AT = np.array([_HAND, _PASSED, _RECEIVED] + [_TRICK + cards.NUM_CARDS * seat for seat in range(4)]
                        + [_PLAYED_BY + cards.NUM_CARDS * seat for seat in range(4)], dtype=np.int64)
_CARD_SETS = len(_CARD_SET_AT)


@jit
def _first_max(values, at, count):
    """np.argmax of ``values[at:at + count]`` (the first highest; a NaN first of all)."""
    best = 0
    for i in range(1, count):
        if np.isnan(values[at + best]):
            break
        if np.isnan(values[at + i]) or values[at + i] > values[at + best]:
            best = i
    return best


@jit
def _decode(observation, action_mask, trump, players, pass_offset, jack_bonus, first_trick_protection, passing,
            hearts_broken, deck, legal, hand, passed, received, played_by, played, voids, points_taken,
            trick_number, trick_card, in_trick, leading, led_suit, trick_bits, last_to_play, winning_card,
            winning_seat, beats, queen_out, following, void_now):
    """Every ``Table`` piece of every game, from the observation and the mask (see ``Table.__init__``)."""
    # The card sets (and the legal set) are read first, each in a tight loop of its own: read in
    # among the other pieces they made the decoding several times slower (not vectorised there).
    n = observation.shape[0]
    card_sets = np.zeros((n, _CARD_SETS), dtype=np.uint64)
    for g in range(n):
        for k in range(_CARD_SETS):
            at = _CARD_SET_AT[k]
            found = np.uint64(0)
            for card in range(cards.NUM_CARDS):
                if observation[g, at + card] > 0.5:
                    found |= cards.bit(card)
            card_sets[g, k] = found
        mine = np.uint64(0)
        for card in range(cards.NUM_CARDS):
            if action_mask[g, card] > 0:
                mine |= cards.bit(card)
        legal[g] = mine
    for g in range(n):
        o = observation[g]
        trump[g] = H if o[_RULES + 5] > 0.5 else -1
        jack_bonus[g] = o[_RULES + 4] > 0.5
        first_trick_protection[g] = o[_RULES + 0] > 0.5
        players[g] = 2 if o[_RULES + 7] > 0.5 else 4
        deck[g] = _SHORT_DECK if o[_RULES + 6] > 0.5 else _ALL
        mine = legal[g]
        hand[g], passed[g], received[g] = card_sets[g, 0], card_sets[g, 1], card_sets[g, 2]
        all_played = np.uint64(0)
        for seat in range(4):
            played_by[g, seat] = card_sets[g, 7 + seat]
            all_played |= played_by[g, seat]
            trick_set = card_sets[g, 3 + seat]
            trick_card[g, seat] = -1 if trick_set == 0 else cards.lowest_of(trick_set)
            for suit in range(4):
                voids[g, seat, suit] = o[_VOIDS + 4 * seat + suit] > 0.5
            points_taken[g, seat] = np.int64(np.rint(o[_POINTS_TAKEN + seat] * _TWENTY_SIX))
        played[g] = all_played
        passing[g] = o[_PHASE] > 0.5
        pass_offset[g] = _first_max(o, _PASS_DIRECTION, 4)
        hearts_broken[g] = o[_HEARTS_BROKEN] > 0.5
        trick_number[g] = o[_TRICK_NUMBER]

        # The current trick.
        count, bits = 0, np.uint64(0)
        for seat in range(4):
            if trick_card[g, seat] >= 0:
                count += 1
                bits |= np.uint64(1) << np.uint64(trick_card[g, seat])
        in_trick[g], trick_bits[g] = count, bits
        leading[g] = count == 0
        led = trick_card[g, _first_max(o, _TRICK_LEADER, 4)]
        led_suit[g] = -1 if count == 0 else led // cards.NUM_RANKS
        last_to_play[g] = count == players[g] - 1
        strongest, best = 0, -2
        for seat in range(4):
            card = trick_card[g, seat]
            strength = -1
            if card >= 0:
                suit = card // cards.NUM_RANKS
                strength = card % cards.NUM_RANKS + (13 if suit == led_suit[g] else 0) + (26 if suit == trump[g] else 0)
            if strength > best:
                strongest, best = seat, strength
        winner = trick_card[g, strongest]
        winning_card[g] = -1 if count == 0 else winner
        winning_seat[g] = -1 if count == 0 else strongest
        trumps = _SUIT_BITS[trump[g]] if trump[g] >= 0 else np.uint64(0)
        higher = above(winning_card[g]) if count else np.uint64(0)
        if count == 0:
            beats[g] = 0
        elif winning_card[g] // cards.NUM_RANKS == trump[g]:
            beats[g] = higher
        else:
            beats[g] = higher | (np.uint64(0) if led_suit[g] == trump[g] else trumps)

        queen_out[g] = not (all_played | hand[g]) & QS
        following[g] = count != 0 and (mine & _SUIT_BITS[max(led_suit[g], 0)]) != 0
        void_now[g] = count != 0 and not following[g]

