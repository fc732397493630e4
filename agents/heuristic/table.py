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
from hearts_env.compiled import jit
from hearts_env.observe import OBS_DIM, OBSERVATION_LAYOUT

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


@jit
def _pick(candidates, scored, out):
    # np.argmax over each game's 52 scores (-inf off the set): the first highest, a NaN first of all.
    per_game = scored.shape[0] > 1
    for g in range(candidates.size):
        card_set = candidates[g]
        if card_set == 0:
            out[g] = -1
            continue
        row = scored[g] if per_game else scored[0]
        best, best_value = 0, row[0] if card_set & np.uint64(1) else -np.inf
        for card in range(1, cards.NUM_CARDS):
            if np.isnan(best_value):
                break
            value = row[card] if (card_set >> np.uint64(card)) & np.uint64(1) else -np.inf
            if np.isnan(value) or value > best_value:
                best, best_value = card, value
        out[g] = best


def pick(candidates: np.ndarray, preference: np.ndarray) -> np.ndarray:
    """Per game, the card of the set ``candidates`` with the highest ``preference`` ([52] or
    [N, 52]); -1 where the set is empty. Ties go to the lowest card id."""
    candidates = np.ascontiguousarray(candidates, dtype=np.uint64).reshape(-1)
    preference = np.asarray(preference)
    if preference.shape not in ((cards.NUM_CARDS,), (candidates.size, cards.NUM_CARDS)):
        raise ValueError(f"preference must have shape (52,) or ({candidates.size}, 52), got {preference.shape}")
    # The scores as NumPy computes them (a float32 preference stays float32), then widened exactly.
    scored = np.asarray(preference + 1000.0, dtype=np.float64).reshape(-1, cards.NUM_CARDS)
    out = np.empty(candidates.size, dtype=np.int64)
    _pick(candidates, np.ascontiguousarray(scored), out)
    return out


class Table:
    """Facts one seat knows, for a batch of games (all ``[N]`` unless noted)."""

    def __init__(self, observation: np.ndarray, action_mask: np.ndarray):
        observation, action_mask = np.asarray(observation), np.asarray(action_mask)
        if observation.ndim != 2 or observation.shape[1] != OBS_DIM:
            raise ValueError(f"observation v1 vectors have {OBS_DIM} floats, one row per game; got shape "
                             f"{observation.shape}")
        if action_mask.shape != (len(observation), cards.NUM_CARDS):
            raise ValueError(f"action_mask must have shape {(len(observation), cards.NUM_CARDS)}, one row per "
                             f"observation; got {action_mask.shape}")
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
        self.beats, self.queen_out, self.unseen = sets(), flags(), sets()
        self.following, self.void_now = flags(), flags()
        _decode(observation, action_mask, self.trump, self.players, self.pass_offset, self.jack_bonus,
                self.first_trick_protection, self.passing, self.hearts_broken, self.deck, self.legal, self.hand,
                self.passed, self.received, self.played_by, self.played, self.voids, self.points_taken,
                self.trick_number, self.trick_card, self.in_trick, self.leading, self.led_suit, self.trick_bits,
                self.last_to_play, self.winning_card, self.winning_seat, self.beats,
                self.queen_out, self.unseen, self.following, self.void_now)
        self.trick_points = self.points_in(self.trick_bits)

    def points_in(self, bits: np.ndarray) -> np.ndarray:
        """Penalty points of card sets (hearts 1, Q♠ 13, J♦ bonus when on)."""
        points = cards.count(bits & HEARTS).astype(np.int64) + 13 * has(bits, QS)
        return points + np.where(self.jack_bonus & has(bits, JD), -10, 0)

    def suit_count(self, bits: np.ndarray, suit: int) -> np.ndarray:
        return cards.count(bits & cards.SUIT_BITS[suit]).astype(np.int64)


_SHORT_DECK = cards.bits_of(s * 13 + r for s in range(4) for r in (0, 2, 4, 6, 8, 10, 12))
_ALL = cards.ALL_BITS
_SUIT_BITS = cards.SUIT_BITS
_AT = {name: piece.start for name, (piece, _) in OBSERVATION_LAYOUT.items()}
_RULES, _PHASE, _PASS_DIRECTION, _HEARTS_BROKEN = _AT["rules"], _AT["phase"], _AT["pass_direction"], _AT["hearts_broken"]
_VOIDS, _POINTS_TAKEN, _TRICK_NUMBER, _TRICK_LEADER = _AT["voids"], _AT["points_taken"], _AT["trick_number"], _AT["trick_leader"]
_HAND, _PASSED, _RECEIVED, _TRICK, _PLAYED_BY = _AT["hand"], _AT["passed"], _AT["received"], _AT["trick"], _AT["played_by"]
_TWENTY_SIX = np.float32(26)
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
def _above(card):
    """Cards of the same suit as ``card`` and higher (-1 gives the empty set)."""
    if card < 0:
        return np.uint64(0)
    return _SUIT_BITS[card // cards.NUM_RANKS] & ~((np.uint64(1) << np.uint64(card + 1)) - np.uint64(1))


@jit
def _decode(observation, action_mask, trump, players, pass_offset, jack_bonus, first_trick_protection, passing,
            hearts_broken, deck, legal, hand, passed, received, played_by, played, voids, points_taken,
            trick_number, trick_card, in_trick, leading, led_suit, trick_bits, last_to_play, winning_card,
            winning_seat, beats, queen_out, unseen, following, void_now):
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
                    found |= np.uint64(1) << np.uint64(card)
            card_sets[g, k] = found
        mine = np.uint64(0)
        for card in range(cards.NUM_CARDS):
            if action_mask[g, card] > 0:
                mine |= np.uint64(1) << np.uint64(card)
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
            trick_card[g, seat] = -1 if trick_set == 0 else cards.popcount((trick_set & (~trick_set + np.uint64(1))) - np.uint64(1))
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
        higher = _above(winning_card[g])
        if count == 0:
            beats[g] = 0
        elif winning_card[g] // cards.NUM_RANKS == trump[g]:
            beats[g] = higher
        else:
            beats[g] = higher | (np.uint64(0) if led_suit[g] == trump[g] else trumps)

        queen_out[g] = not (all_played | hand[g]) & QS
        unseen[g] = deck[g] & ~hand[g] & ~all_played & ~passed[g]
        following[g] = count != 0 and (mine & _SUIT_BITS[max(led_suit[g], 0)]) != 0
        void_now[g] = count != 0 and not following[g]

