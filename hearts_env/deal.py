"""Dealing: a seeded, unbiased Fisher-Yates shuffle run for the whole batch at once.

Each game carries a 64-bit seed, and the deal of hand ``h`` is a pure function of ``(seed, h)``:
the random numbers come from a counter-based generator (the SplitMix64 mixing function applied
to ``key + counter``). So a game dealt inside a batch of 8192 gets exactly the cards it gets when
dealt alone, a game can be replayed or re-dealt from its seed, and no generator state has to be
carried between steps.

The shuffle is Fisher-Yates: for ``i`` from the last position down to 1, swap position ``i`` with
a uniform ``j`` in ``0..i``. Uniform integers use rejection sampling (``r`` is redrawn when it
falls in the incomplete top block of the 64-bit range), so there is no modulo bias at all.

Card order after the shuffle follows the rule texts: with dead cards, the first card (and, for
two dead cards, the last) is set aside; the rest are dealt one at a time round the table.
"""

from __future__ import annotations

import numpy as np

from .compiled import jit
from .constants import PR_DEAD_CARDS, PR_DECK_LENGTH, PR_DECK_START, PR_PLAYERS, constants
from .rules import Rules

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_HAND_SALT = np.uint64(0xD1B54A32D192ED03)
_TWO64 = 1 << 64
_ONE = np.uint64(1)


@jit
def mix64(z):
    """SplitMix64's output function: a bijective, well-mixing hash of a 64-bit integer."""
    z = np.uint64(z) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@jit
def _game_seeds(seed, batch_size):
    base = mix64(seed)
    out = np.empty(batch_size, dtype=np.uint64)
    for g in range(batch_size):
        out[g] = mix64(base + np.uint64(g + 1) * _GOLDEN)
    return out


def game_seeds(seed: int, batch_size: int) -> np.ndarray:
    """``batch_size`` independent per-game seeds derived from one integer seed."""
    return _game_seeds(np.uint64(seed % _TWO64), batch_size)


@jit
def _uniform_below(key, counter, bound):
    """``(a uniform integer in 0..bound-1, the advanced counter)``."""
    # Draws from the top partial block of the 64-bit range are rejected, so every residue is
    # equally likely. (2**64 % bound, computed in 64 bits.)
    bound = np.uint64(bound)
    remainder = (np.uint64(0) - bound) % bound
    limit = np.uint64(0) - remainder  # 2**64 - remainder; unused when remainder is 0
    draw = mix64(key + counter * _GOLDEN)
    counter += _ONE
    while remainder != 0 and draw >= limit:
        draw = mix64(key + counter * _GOLDEN)
        counter += _ONE
    return draw % bound, counter


@jit
def shuffle_deck(params, seed, hand_number, order):
    """Fill ``order`` with the deck shuffled for ``(seed, hand_number)`` (Fisher-Yates)."""
    start, size = params[PR_DECK_START], params[PR_DECK_LENGTH]
    for i in range(size):
        order[i] = params[start + i]
    key = mix64(np.uint64(seed) ^ mix64(np.uint64(hand_number) ^ _HAND_SALT))
    counter = np.uint64(0)
    for i in range(size - 1, 0, -1):
        j, counter = _uniform_below(key, counter, i + 1)
        top = order[i]
        order[i] = order[j]
        order[j] = top


@jit
def deal_game(params, seed, hand_number, order, hands):
    """Shuffle into ``order``, fill ``hands[P]`` (card sets) and return the dead cards' set."""
    shuffle_deck(params, seed, hand_number, order)
    size, dead_cards, p = params[PR_DECK_LENGTH], params[PR_DEAD_CARDS], params[PR_PLAYERS]
    first_dead = dead_cards - dead_cards // 2  # set aside before dealing
    last = size - dead_cards // 2  # the cards after ``last`` are left over at the end
    dead = np.uint64(0)
    for i in range(first_dead):
        dead |= _ONE << np.uint64(order[i])
    for i in range(last, size):
        dead |= _ONE << np.uint64(order[i])
    for seat in range(p):
        hands[seat] = 0
    for k in range(last - first_dead):  # one card at a time round the table: card k to seat k mod P
        hands[k % p] |= _ONE << np.uint64(order[first_dead + k])
    return dead


@jit
def _shuffled_decks(params, seeds, hand_numbers):
    out = np.empty((seeds.size, params[PR_DECK_LENGTH]), dtype=np.int64)
    for g in range(seeds.size):
        shuffle_deck(params, seeds[g], hand_numbers[g], out[g])
    return out


@jit
def _deal(params, seeds, hand_numbers):
    hands = np.empty((seeds.size, params[PR_PLAYERS]), dtype=np.uint64)
    dead = np.empty(seeds.size, dtype=np.uint64)
    order = np.empty(params[PR_DECK_LENGTH], dtype=np.int64)
    for g in range(seeds.size):
        dead[g] = deal_game(params, seeds[g], hand_numbers[g], order, hands[g])
    return hands, dead


def _per_game(seeds: np.ndarray, hand_numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64).reshape(-1)
    hand_numbers = np.broadcast_to(np.asarray(hand_numbers, dtype=np.int64).reshape(-1), seeds.shape)
    return seeds, np.ascontiguousarray(hand_numbers)


def shuffled_decks(rules: Rules, seeds: np.ndarray, hand_numbers: np.ndarray) -> np.ndarray:
    """``[G, deck_size]`` card ids, each row the deck shuffled for ``(seed, hand_number)``."""
    return _shuffled_decks(constants(rules).params, *_per_game(seeds, hand_numbers))


def deal(rules: Rules, seeds: np.ndarray, hand_numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hands ``[G, P]`` and dead cards ``[G]`` (card sets) for each game's seed and hand number."""
    return _deal(constants(rules).params, *_per_game(seeds, hand_numbers))
