"""Playing tricks: the legal-play cascade, playing a card, and resolving a finished trick.

The legal cards are computed for the whole batch at once, as a cascade of rules applied in order.
Each rule narrows the set only when something would remain ("unless the player has nothing
else"), which is exactly how the rule texts phrase their exceptions.
"""

from __future__ import annotations

import numpy as np

from . import cards
from .constants import constants
from .state import State, every_or, flat


def opening_card_bits(state: State, games: np.ndarray) -> np.ndarray:
    """The card that must open each hand: the first of ``opening_lead`` that is not dead."""
    ids = constants(state.rules).opening_ids
    dead = state.dead[games]
    bits = np.full(games.shape, cards.BIT[ids[-1]], dtype=np.uint64)
    for card in reversed(ids[:-1]):
        bits = np.where(dead & cards.BIT[card], bits, cards.BIT[card])
    return bits


def legal_plays(state: State, games: np.ndarray) -> np.ndarray:
    """The legal cards of the seat to act in each game (which must be in the play phase)."""
    c = constants(state.rules)
    p = c.num_players
    rows = every_or(games, state.batch_size)
    hand = flat(state.hands)[games * p + state.current_player[rows]]
    leading = state.num_in_trick[rows] == 0
    first_trick = state.trick_number[rows] == 0
    led_card = flat(state.trick)[games * p + state.leader[rows]]
    # 1. Follow suit if you can; otherwise any card.
    of_led_suit = hand & cards.SUIT_BITS[np.maximum(led_card, 0) // cards.NUM_RANKS]
    legal = np.where(~leading & (of_led_suit != 0), of_led_suit, hand)
    # 2. The first trick is opened with the opening card (2C, or its fallback when it is dead).
    opening = leading & first_trick
    if opening.any():
        legal = np.where(opening, opening_card_bits(state, games), legal)
    # 3. Hearts (and Q♠ when it waits) may not be led before hearts are broken,
    #    unless the leader holds nothing else.
    if c.unbroken_lead_bits:
        other = legal & ~c.unbroken_lead_bits
        legal = np.where(leading & ~state.hearts_broken[rows] & (other != 0), other, legal)
    # 4. First-trick protection: no heart and no Q♠ on trick one, unless nothing else is legal.
    if state.rules.first_trick_protection:
        safe = legal & ~c.point_bits
        legal = np.where(first_trick & ~leading & (safe != 0), safe, legal)
    return legal


def play_card(state: State, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Play one card per game; returns the games whose trick is now complete."""
    c = constants(state.rules)
    p = c.num_players
    rows = every_or(games, state.batch_size)
    seat = state.current_player[rows]
    at = games * p + seat  # index into the flattened [N, P] arrays
    bit = cards.BIT[actions]
    hands, played = flat(state.hands), flat(state.played)
    hands[at] = hands[at] & ~bit
    played[at] = played[at] | bit
    flat(state.trick)[at] = actions
    suit = actions // cards.NUM_RANKS
    in_trick = state.num_in_trick[rows]
    leading = in_trick == 0
    led_card = np.where(leading, actions, flat(state.trick)[games * p + state.leader[rows]])
    led_suit = led_card // cards.NUM_RANKS
    not_following = suit != led_suit
    # A seat that does not follow shows everyone it is void in the led suit.
    if not_following.any():
        flat(state.voids)[(at * cards.NUM_SUITS + led_suit)[not_following]] = True
    # Hearts break when a heart is played to a trick led in another suit (a discard or, with
    # hearts trump, a ruff); optionally also when Q♠ is played.
    breaks = not_following & (suit == cards.HEARTS)
    if state.rules.queen_breaks_hearts:
        breaks |= actions == cards.QUEEN_OF_SPADES
    if breaks.any():
        state.hearts_broken[games[breaks]] = True
    in_trick = in_trick + 1  # (not +=: with every game, in_trick is a view of the state)
    complete = in_trick == p
    state.num_in_trick[rows] = np.where(complete, 0, in_trick)
    state.current_player[rows] = c.next_seat[seat]
    return games[complete]


def trick_winner(trick: np.ndarray, leader: np.ndarray, trump: int) -> np.ndarray:
    """Seat winning each complete trick (``trick[G, P]`` card ids by seat, ``leader[G]`` seats).

    The highest trump wins; without trumps in the trick, the highest card of the led suit.
    """
    suit = trick // cards.NUM_RANKS
    led_suit = trick[np.arange(trick.shape[0]), leader] // cards.NUM_RANKS
    strength = trick % cards.NUM_RANKS + cards.NUM_RANKS * (suit == led_suit[:, None])
    if trump >= 0:
        strength += 2 * cards.NUM_RANKS * (suit == trump)
    return strength.argmax(axis=1)


def finish_trick(state: State, games: np.ndarray) -> np.ndarray:
    """Give each complete trick to its winner, who leads next; returns games whose hand ended."""
    c = constants(state.rules)
    rows = every_or(games, state.batch_size)
    trick = state.trick[rows]
    winner = trick_winner(trick, state.leader[rows], c.trump)
    won = cards.BIT[trick[:, 0]]
    for seat in range(1, c.num_players):
        won = won | cards.BIT[trick[:, seat]]
    taken = flat(state.taken)
    at = games * c.num_players + winner
    taken[at] = taken[at] | won
    # The finished trick stays readable as the last trick; the table is cleared for the next one.
    state.last_trick_leader[rows] = state.leader[rows]
    state.last_trick_winner[rows] = winner
    if isinstance(rows, slice):  # every game's trick ended: swap the arrays instead of copying
        state.last_trick, state.trick = state.trick, state.last_trick
        state.trick.fill(-1)
    else:
        state.last_trick[games] = trick
        state.trick[games] = -1
    state.leader[rows] = winner
    state.current_player[rows] = winner
    state.trick_number[rows] += 1
    return games[state.trick_number[rows] == c.hand_size]
