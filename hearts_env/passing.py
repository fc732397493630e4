"""Passing: each player picks ``pass_count`` cards one action at a time; cards move when all chose.

Seats pick in order 0, 1, ..., P-1 (the choices are secret, so the order changes nothing). A
chosen card stays in the hand, marked in ``passed``, until the last seat's last pick; then every
seat gives its chosen cards to the seat ``offset`` places clockwise, where the offset comes from
the hand number through ``Rules.pass_cycle`` (left +1, across +2, right -1, none 0).
"""

from __future__ import annotations

import numpy as np

from . import cards
from .constants import constants
from .state import State


def pass_offset(state: State, games: np.ndarray) -> np.ndarray:
    """Seat offset of this hand's pass for each game (0 = no pass)."""
    offsets = constants(state.rules).pass_offsets
    return offsets[state.hand_number[games] % offsets.size]


def legal_passes(state: State, games: np.ndarray) -> np.ndarray:
    """Cards the seat to act may still choose: any held card it has not chosen yet."""
    seat = state.current_player[games]
    return state.hands[games, seat] & ~state.passed[games, seat]


def choose(state: State, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Record one pick per game; returns the games whose exchange is now complete."""
    seat = state.current_player[games]
    chosen = state.passed[games, seat] | cards.BIT[actions]
    state.passed[games, seat] = chosen
    seat_done = cards.count(chosen) == state.rules.pass_count
    state.current_player[games] = seat + seat_done
    return games[seat_done & (seat + 1 == state.num_players)]


def exchange(state: State, games: np.ndarray) -> None:
    """Move every seat's chosen cards to the receiving seat."""
    p = state.num_players
    giver = (np.arange(p)[None, :] - pass_offset(state, games)[:, None]) % p
    passed = state.passed[games]
    received = np.take_along_axis(passed, giver, axis=1)
    state.hands[games] = (state.hands[games] & ~passed) | received
