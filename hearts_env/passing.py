"""Passing: each player picks ``pass_count`` cards one action at a time; cards move when all chose.

Seats pick in order 0, 1, ..., P-1 (the choices are secret, so the order changes nothing). A
chosen card stays in the hand, marked in ``passed``, until the last seat's last pick; then every
seat gives its chosen cards to the seat ``offset`` places clockwise, where the offset comes from
the hand number through ``Rules.pass_cycle`` (left +1, across +2, right -1, none 0).
"""

from __future__ import annotations

import numpy as np

from .cards import bit, popcount
from .compiled import jit
from .constants import PR_CYCLE_LENGTH, PR_CYCLE_START, PR_PASS_COUNT, PR_PLAYERS, constants
from .state import CURRENT_PLAYER, HAND_NUMBER, HANDS, PASSED, State, check_games


@jit
def offset_of(params, hand_number):
    """Seat offset of the pass of hand ``hand_number`` (0 = no pass)."""
    return params[params[PR_CYCLE_START] + hand_number % params[PR_CYCLE_LENGTH]]


@jit
def legal_passes(counters, seat_sets, g):
    """Cards the seat to act in game ``g`` may still choose: any held card it has not chosen yet."""
    seat = counters[CURRENT_PLAYER, g]
    return seat_sets[HANDS, g, seat] & ~seat_sets[PASSED, g, seat]


@jit
def choose(params, counters, seat_sets, g, card):
    """Record one pick in game ``g``; True when every seat has chosen (the exchange is due)."""
    seat = counters[CURRENT_PLAYER, g]
    chosen = seat_sets[PASSED, g, seat] | bit(card)
    seat_sets[PASSED, g, seat] = chosen
    seat_done = popcount(chosen) == params[PR_PASS_COUNT]
    if seat_done:
        counters[CURRENT_PLAYER, g] = seat + 1
    return seat_done and seat + 1 == params[PR_PLAYERS]


@jit
def exchange(params, counters, seat_sets, g):
    """Move every seat's chosen cards in game ``g`` to the receiving seat."""
    p = params[PR_PLAYERS]
    offset = offset_of(params, counters[HAND_NUMBER, g])
    for seat in range(p):
        giver = (seat - offset) % p
        kept = seat_sets[HANDS, g, seat] & ~seat_sets[PASSED, g, seat]
        seat_sets[HANDS, g, seat] = kept | seat_sets[PASSED, g, giver]


@jit
def _offsets(params, hand_numbers):
    out = np.empty(hand_numbers.size, dtype=np.int64)
    for i in range(hand_numbers.size):
        out[i] = offset_of(params, hand_numbers[i])
    return out


def pass_offset(state: State, games: np.ndarray) -> np.ndarray:
    """Seat offset of this hand's pass for each game (0 = no pass); ``games`` as ``check_games`` takes it."""
    games = check_games(games, state.batch_size)
    hand_numbers = np.ascontiguousarray(state.hand_number[games]).reshape(-1)
    return _offsets(constants(state.rules).params, hand_numbers).reshape(np.shape(state.hand_number[games]))
