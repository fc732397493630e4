"""Playing tricks: the legal-play cascade, playing a card, and resolving a finished trick.

The legal cards are computed for the whole batch at once, as a cascade of rules applied in order.
Each rule narrows the set only when something would remain ("unless the player has nothing
else"), which is exactly how the rule texts phrase their exceptions.
"""

from __future__ import annotations

import numpy as np

from . import cards
from .cards import bit
from .compiled import jit
from .constants import (
    BT_POINTS, BT_UNBROKEN_LEAD, PR_FIRST_TRICK_PROTECTION, PR_HAND_SIZE, PR_OPENING_LENGTH, PR_OPENING_START,
    PR_PLAYERS, PR_QUEEN_BREAKS_HEARTS, PR_TRUMP, constants, state_views,
)
from .state import (
    CURRENT_PLAYER, DEAD, HANDS, LAST_TRICK, LAST_TRICK_LEADER, LAST_TRICK_WINNER, LEADER, NUM_IN_TRICK, PHASE, PLAY,
    PLAYED, TAKEN, TRICK, TRICK_NUMBER, State, game_indices,
)

_SUIT_BITS = cards.SUIT_BITS
_RANKS = cards.NUM_RANKS


@jit
def opening_card(params, dead):
    """The card that must open the hand: the first of ``opening_lead`` that is not dead (else the last)."""
    start, count = params[PR_OPENING_START], params[PR_OPENING_LENGTH]
    for i in range(count - 1):
        card = params[start + i]
        if not dead & bit(card):
            return card
    return params[start + count - 1]


@jit
def legal_cards(params, bits, counters, sets, seat_numbers, seat_sets, flags, g):
    """The legal cards of the seat to act in game ``g`` (which must be in the play phase)."""
    hand = seat_sets[HANDS, g, counters[CURRENT_PLAYER, g]]
    leading = counters[NUM_IN_TRICK, g] == 0
    first_trick = counters[TRICK_NUMBER, g] == 0
    # 1. Follow suit if you can; otherwise any card.
    legal = hand
    if not leading:
        of_led_suit = hand & _SUIT_BITS[max(seat_numbers[TRICK, g, counters[LEADER, g]], 0) // _RANKS]
        if of_led_suit:
            legal = of_led_suit
    # 2. The first trick is opened with the opening card (2C, or its fallback when it is dead).
    if leading and first_trick:
        legal = bit(opening_card(params, sets[DEAD, g]))
    # 3. Hearts (and Q♠ when it waits) may not be led before hearts are broken,
    #    unless the leader holds nothing else.
    if leading and not flags[0, g]:
        other = legal & ~bits[BT_UNBROKEN_LEAD]
        if other:
            legal = other
    # 4. First-trick protection: no heart and no Q♠ on trick one, unless nothing else is legal.
    if params[PR_FIRST_TRICK_PROTECTION] and first_trick and not leading:
        safe = legal & ~bits[BT_POINTS]
        if safe:
            legal = safe
    return legal


@jit
def start_play(params, counters, sets, seat_sets, g):
    """Game ``g`` enters the play phase: the holder of the opening card leads the first trick."""
    opening = bit(opening_card(params, sets[DEAD, g]))
    leader = 0
    for seat in range(params[PR_PLAYERS]):
        if seat_sets[HANDS, g, seat] & opening:
            leader = seat
            break
    counters[PHASE, g] = PLAY
    counters[LEADER, g] = leader
    counters[CURRENT_PLAYER, g] = leader


@jit
def play_card(params, counters, seat_numbers, seat_sets, flags, voids, g, card):
    """The seat to act in game ``g`` plays ``card``; True when the trick is now complete."""
    p = params[PR_PLAYERS]
    seat = counters[CURRENT_PLAYER, g]
    seat_sets[HANDS, g, seat] &= ~bit(card)
    seat_sets[PLAYED, g, seat] |= bit(card)
    seat_numbers[TRICK, g, seat] = card
    in_trick = counters[NUM_IN_TRICK, g]
    suit = card // _RANKS
    led_suit = suit if in_trick == 0 else seat_numbers[TRICK, g, counters[LEADER, g]] // _RANKS
    if suit != led_suit:
        # A seat that does not follow shows everyone it is void in the led suit; a heart played to
        # a trick led in another suit (a discard or, with hearts trump, a ruff) breaks hearts.
        voids[0, g, seat, led_suit] = True
        if suit == cards.HEARTS:
            flags[0, g] = True
    if params[PR_QUEEN_BREAKS_HEARTS] and card == cards.QUEEN_OF_SPADES:
        flags[0, g] = True
    in_trick += 1
    counters[NUM_IN_TRICK, g] = 0 if in_trick == p else in_trick
    counters[CURRENT_PLAYER, g] = (seat + 1) % p
    return in_trick == p


@jit
def trick_winner(trick, leader, trump):
    """Seat winning a complete trick (``trick[P]`` card ids by seat): the highest trump, else the
    highest card of the led suit."""
    led_suit = trick[leader] // _RANKS
    best, best_strength = 0, -1
    for seat in range(trick.size):
        suit = trick[seat] // _RANKS
        strength = trick[seat] % _RANKS + (_RANKS if suit == led_suit else 0) + (2 * _RANKS if suit == trump else 0)
        if strength > best_strength:
            best, best_strength = seat, strength
    return best


@jit
def finish_trick(params, counters, seat_numbers, seat_sets, g):
    """Give game ``g``'s complete trick to its winner, who leads next; True when the hand ended."""
    p = params[PR_PLAYERS]
    leader = counters[LEADER, g]
    winner = trick_winner(seat_numbers[TRICK, g], leader, params[PR_TRUMP])
    won = np.uint64(0)
    for seat in range(p):
        won |= bit(seat_numbers[TRICK, g, seat])
        # The finished trick stays readable as the last trick; the table is cleared for the next one.
        seat_numbers[LAST_TRICK, g, seat] = seat_numbers[TRICK, g, seat]
        seat_numbers[TRICK, g, seat] = -1
    seat_sets[TAKEN, g, winner] |= won
    counters[LAST_TRICK_LEADER, g] = leader
    counters[LAST_TRICK_WINNER, g] = winner
    counters[LEADER, g] = winner
    counters[CURRENT_PLAYER, g] = winner
    counters[TRICK_NUMBER, g] += 1
    return counters[TRICK_NUMBER, g] == params[PR_HAND_SIZE]


@jit
def _legal_plays(params, bits, buffer, games):
    counters, sets, seat_numbers, seat_sets, flags = state_views(params, buffer)[:5]
    out = np.empty(games.size, dtype=np.uint64)
    for i in range(games.size):
        out[i] = legal_cards(params, bits, counters, sets, seat_numbers, seat_sets, flags, games[i])
    return out


def legal_plays(state: State, games: np.ndarray) -> np.ndarray:
    """The legal cards of the seat to act in each of ``games`` (which must be in the play phase;
    checked as every ``games`` is: the kernel does not check bounds)."""
    c = constants(state.rules)
    games = game_indices(games, state.batch_size)
    return _legal_plays(c.params, c.bits, state.buffer, games)


@jit
def _legal_if_also_held(params, bits, buffer, games, played, candidates):
    counters, sets, seat_numbers, seat_sets, flags = state_views(params, buffer)[:5]
    out = np.zeros(games.size, dtype=np.uint64)
    for i in range(games.size):
        out[i] = legal_if_held(params, bits, counters, sets, seat_numbers, seat_sets, flags, games[i], played[i],
                               candidates[i])
    return out


@jit
def legal_if_held(params, bits, counters, sets, seat_numbers, seat_sets, flags, g, played, candidates):
    """The cards of ``candidates`` such that ``played`` would still be legal for game ``g``'s seat
    to act had it also held that card (one game of :func:`legal_if_also_held`)."""
    seat = counters[CURRENT_PLAYER, g]
    hand = seat_sets[HANDS, g, seat]
    card = bit(played)
    out = np.uint64(0)
    for c in range(cards.NUM_CARDS):
        extra = bit(c)
        if candidates & extra:  # the question asked of the hand extended by this one card
            seat_sets[HANDS, g, seat] = hand | extra
            if legal_cards(params, bits, counters, sets, seat_numbers, seat_sets, flags, g) & card:
                out |= extra
    seat_sets[HANDS, g, seat] = hand
    return out


def legal_if_also_held(state: State, games: np.ndarray, played: np.ndarray,
                       candidates: np.ndarray) -> np.ndarray:
    """``[M]`` card sets: for each of ``games`` (in the play phase), the cards of ``candidates[i]``
    such that ``played[i]`` would still be a legal card for the seat to act had it also held that
    card. (A seat record's replay learns this way which unseen cards a seat cannot have held.)
    The state is left as it was."""
    c = constants(state.rules)
    games = game_indices(games, state.batch_size)
    played = np.ascontiguousarray(played, dtype=np.int64).reshape(-1)
    candidates = np.ascontiguousarray(candidates, dtype=np.uint64).reshape(-1)
    if not games.size == played.size == candidates.size:
        raise ValueError("legal_if_also_held: one played card and one candidate set per game")
    if games.size and (games.min() < 0 or games.max() >= state.batch_size or played.min() < 0
                       or played.max() >= cards.NUM_CARDS):
        raise ValueError("legal_if_also_held: games must be 0..N-1 and played cards 0..51")
    return _legal_if_also_held(c.params, c.bits, state.buffer, games, played, candidates)
