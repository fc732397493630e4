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

from . import cards
from .rules import Rules

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_HAND_SALT = np.uint64(0xD1B54A32D192ED03)
_TWO64 = 1 << 64


def mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function: a bijective, well-mixing hash of 64-bit integers."""
    z = np.asarray(z, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def game_seeds(seed: int, batch_size: int) -> np.ndarray:
    """``batch_size`` independent per-game seeds derived from one integer seed."""
    base = mix64(np.array([seed % _TWO64], dtype=np.uint64))
    with np.errstate(over="ignore"):
        counters = base + np.arange(1, batch_size + 1, dtype=np.uint64) * _GOLDEN
    return mix64(counters)


def _uniform_below(key: np.ndarray, counter: np.ndarray, bound: int) -> np.ndarray:
    """Uniform integers in ``0..bound-1``, one per game; advances ``counter`` in place."""
    remainder = _TWO64 % bound
    draw = mix64(key + counter * _GOLDEN)
    counter += np.uint64(1)
    if remainder:
        # Reject draws from the top partial block so every residue is equally likely.
        limit = np.uint64(_TWO64 - remainder)
        bad = draw >= limit
        while bad.any():
            draw[bad] = mix64(key[bad] + counter[bad] * _GOLDEN)
            counter[bad] += np.uint64(1)
            bad = draw >= limit
    return (draw % np.uint64(bound)).astype(np.int64)


def shuffled_decks(rules: Rules, seeds: np.ndarray, hand_numbers: np.ndarray) -> np.ndarray:
    """``[G, deck_size]`` card ids, each row the deck shuffled for ``(seed, hand_number)``."""
    deck = np.array(cards.cards_of(rules.deck_bits), dtype=np.int64)
    g = seeds.shape[0]
    order = np.tile(deck, (g, 1))
    key = mix64(np.asarray(seeds, dtype=np.uint64) ^ mix64(np.asarray(hand_numbers, dtype=np.uint64) ^ _HAND_SALT))
    counter = np.zeros(g, dtype=np.uint64)
    rows = np.arange(g)
    for i in range(deck.size - 1, 0, -1):
        j = _uniform_below(key, counter, i + 1)
        top = order[:, i].copy()
        order[:, i] = order[rows, j]
        order[rows, j] = top
    return order


def split_deck(rules: Rules, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hands ``[G, P]`` and dead cards ``[G]`` (card sets) from shuffled decks ``[G, deck_size]``."""
    first_dead = rules.dead_cards - rules.dead_cards // 2  # set aside before dealing
    last_dead = rules.dead_cards // 2  # the cards left over at the end
    dealt = order[:, first_dead : order.shape[1] - last_dead]
    dead_ids = np.concatenate([order[:, :first_dead], order[:, order.shape[1] - last_dead :]], axis=1)
    dead = np.bitwise_or.reduce(cards.BIT[dead_ids], axis=1) if rules.dead_cards else np.zeros(len(order), np.uint64)
    p = rules.num_players
    # One card at a time round the table: card k goes to seat k mod P.
    per_seat = dealt.reshape(len(order), rules.hand_size, p)
    hands = np.bitwise_or.reduce(cards.BIT[per_seat], axis=1)
    return hands, dead


def deal(rules: Rules, seeds: np.ndarray, hand_numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hands ``[G, P]`` and dead cards ``[G]`` for each game's seed and hand number."""
    return split_deck(rules, shuffled_decks(rules, seeds, hand_numbers))
