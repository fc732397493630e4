"""Cards: the card-id and card-text contract, and 52-bit card sets.

Contract (DESIGN.md section 2, relied on by game apps and exported models):

* ``id = 13 * suit + rank`` with suits C=0, D=1, H=2, S=3 and ranks 2..A = 0..12,
  so 2C=0, JD=22, hearts are 26..38, QS=49, AS=51. Each suit is a contiguous slice.
* Card text is rank ``23456789TJQKA`` plus suit ``CDHS`` (``"QS"``, ``"TH"``). Parsing
  also accepts ``10H``, ``q♠`` and lower case.

Inside the engine a *set* of cards is one ``uint64`` whose bit ``id`` is set when the card is in
the set ("bitboard"). A whole batch of hands is then an integer array, and the rules become a few
integer operations per game instead of loops over 52 cards. ``to_mask``/``from_mask`` convert
between bitboards and the ``[..., 52]`` boolean masks that agents and environments see.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .compiled import jit

NUM_CARDS = 52
NUM_SUITS = 4
NUM_RANKS = 13
RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)

_SYMBOL_TO_SUIT = {sym: i for i, sym in enumerate(SUIT_SYMBOLS)}
_SYMBOL_TO_SUIT.update({"♧": 0, "♢": 1, "♡": 2, "♤": 3})


def card_id(suit: int, rank: int) -> int:
    """The id of the card of ``suit`` (0..3) and ``rank`` (0 = two .. 12 = ace)."""
    return NUM_RANKS * suit + rank


def suit_of(card: int) -> int:
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    return card % NUM_RANKS


def _card_id(card) -> int:
    """``card`` as a card id, 0..51 (integers only: not bools, floats or text); else ``ValueError``."""
    if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)):
        raise ValueError(f"a card id is a whole number 0..51, got {card!r}")
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card!r} is out of range: card ids are 0..51")
    return int(card)


def card_text(card: int) -> str:
    """``"QS"`` style text of a card id."""
    card = _card_id(card)
    return RANK_CHARS[card % NUM_RANKS] + SUIT_CHARS[card // NUM_RANKS]


def card_symbol_text(card: int) -> str:
    """``"Q♠"`` style text of a card id, for people."""
    card = _card_id(card)
    rank = RANK_CHARS[card % NUM_RANKS]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[card // NUM_RANKS]


def parse_card(text: str | int) -> int:
    """The card id of a card text such as ``"QS"``, ``"10h"``, ``"q♠"``; ids pass through.

    Raises ``ValueError`` naming the text and the accepted forms.
    """
    if isinstance(text, (bool, np.bool_, int, np.integer)):
        return _card_id(text)  # bools are refused, ids outside 0..51 too
    cleaned = str(text).strip().upper()
    if len(cleaned) >= 2:
        rank_part, suit_part = cleaned[:-1], cleaned[-1]
        if rank_part == "10":
            rank_part = "T"
        suit = SUIT_CHARS.find(suit_part) if suit_part in SUIT_CHARS else _SYMBOL_TO_SUIT.get(suit_part, -1)
        if len(rank_part) == 1 and rank_part in RANK_CHARS and suit >= 0:
            return card_id(suit, RANK_CHARS.index(rank_part))
    raise ValueError(
        f"{text!r} is not a card: write a rank from {RANK_CHARS} (or 10) and a suit from "
        f"{SUIT_CHARS} or {SUIT_SYMBOLS}, e.g. 'QS', '10H', 'q♠'"
    )


def parse_cards(texts: Iterable[str | int] | str) -> list[int]:
    """Card ids of several card texts; a single string may separate them by spaces or commas."""
    if isinstance(texts, str):
        texts = texts.replace(",", " ").split()
    return [parse_card(t) for t in texts]


# ---------------------------------------------------------------------------------------------
# 52-bit card sets
# ---------------------------------------------------------------------------------------------

#: ``BIT[c]`` is the one-card set holding card ``c``.
BIT = np.left_shift(np.uint64(1), np.arange(NUM_CARDS, dtype=np.uint64))
#: ``SUIT_BITS[s]`` is the set of all 13 cards of suit ``s``.
SUIT_BITS = np.array([np.uint64(0x1FFF) << np.uint64(13 * s) for s in range(NUM_SUITS)], dtype=np.uint64)
ALL_BITS = np.uint64((1 << NUM_CARDS) - 1)
NO_CARDS = np.uint64(0)
QUEEN_OF_SPADES = card_id(SPADES, 10)
JACK_OF_DIAMONDS = card_id(DIAMONDS, 9)
TWO_OF_CLUBS = card_id(CLUBS, 0)


def bits_of(cards: Iterable[int]) -> np.uint64:
    """The card set holding ``cards`` (ids)."""
    out = 0
    for c in cards:
        out |= 1 << int(c)
    return np.uint64(out)


def cards_of(bits: int | np.integer) -> list[int]:
    """The card ids in one card set, ascending."""
    value = int(bits)
    return [c for c in range(NUM_CARDS) if value >> c & 1]


_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@jit
def popcount(x):
    """Number of cards in one set, inside compiled code (LLVM turns this into one instruction)."""
    x = np.uint64(x)
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@jit
def bit(card):
    """The one-card set of ``card`` (an id 0..51), inside compiled code."""
    return np.uint64(1) << np.uint64(card)


def count(bits: np.ndarray) -> np.ndarray:
    """Number of cards in each set (elementwise popcount)."""
    return np.bitwise_count(np.asarray(bits, dtype=np.uint64))


# The wrappers below allocate the kernels' outputs themselves: turning an array made inside
# compiled code into a NumPy array costs about a microsecond, more than a small batch's work.

@jit
def _unpack(card_sets, out):
    for i in range(card_sets.size):
        x = card_sets[i]
        for card in range(NUM_CARDS):
            out[i, card] = (x >> np.uint64(card)) & np.uint64(1)


def unpack(bits: np.ndarray) -> np.ndarray:
    """``[...]`` card sets -> ``[..., 52]`` uint8 0/1 (card ``c`` at position ``c``)."""
    bits = np.asarray(bits)
    shape = bits.shape
    if bits.dtype != np.uint64 or not bits.flags.c_contiguous:
        bits = np.ascontiguousarray(bits, dtype=np.uint64)
    out = np.empty(shape + (NUM_CARDS,), dtype=np.uint8)
    _unpack(bits.reshape(-1), out.reshape(-1, NUM_CARDS))
    return out


def to_mask(bits: np.ndarray) -> np.ndarray:
    """``[...]`` card sets -> ``[..., 52]`` boolean masks."""
    return unpack(bits).view(bool)


@jit
def _first_empty_row(flags, width):
    for row in range(flags.size // width):
        start = row * width
        empty = True
        for k in range(start, start + width):
            if flags[k]:
                empty = False
                break
        if empty:
            return row
    return -1


def first_empty_row(mask: np.ndarray) -> int:
    """The first row of a ``[N, 52]`` mask without a card, or -1. Compiled, with an early exit per
    row: the agents check their masks at every call, where NumPy's row reductions cost 30 ns a row."""
    mask = np.asarray(mask)
    if mask.dtype.itemsize == 1 and mask.dtype.kind in "biu" and mask.flags.c_contiguous and mask.size:
        return _first_empty_row(mask.reshape(-1).view(np.uint8), mask.shape[-1])
    empty = np.flatnonzero(~np.asarray(mask, dtype=bool).any(axis=-1))
    return int(empty[0]) if empty.size else -1


def from_mask(mask: np.ndarray) -> np.ndarray:
    """``[..., 52]`` boolean masks -> ``[...]`` card sets."""
    mask = np.asarray(mask, dtype=bool)
    lead = mask.shape[:-1]
    packed = np.packbits(mask.reshape(-1, NUM_CARDS), axis=1, bitorder="little")
    padded = np.zeros((packed.shape[0], 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view("<u8").reshape(lead).astype(np.uint64)


@jit
def lowest_of(card_set):
    """Id of the lowest card of one non-empty set, inside compiled code."""
    x = np.uint64(card_set)
    return popcount((x & (~x + np.uint64(1))) - np.uint64(1))


@jit
def highest_of(card_set):
    """Id of the highest card of one non-empty set, inside compiled code."""
    x = np.uint64(card_set)
    for shift in (1, 2, 4, 8, 16, 32):  # smear the top card downwards: the count is its id + 1
        x |= x >> np.uint64(shift)
    return popcount(x) - 1


@jit
def _lowest_cards(card_sets, out):
    for i in range(card_sets.size):
        out[i] = lowest_of(card_sets[i])


@jit
def _highest_cards(card_sets, out):
    for i in range(card_sets.size):
        out[i] = highest_of(card_sets[i])


def _each_set(kernel, bits: np.ndarray) -> np.ndarray:
    bits = np.asarray(bits, dtype=np.uint64)
    out = np.empty(bits.shape, dtype=np.int64)
    kernel(np.ascontiguousarray(bits).reshape(-1), out.reshape(-1))
    return out


def lowest_card(bits: np.ndarray) -> np.ndarray:
    """Id of the lowest card in each non-empty set (undefined for empty sets)."""
    return _each_set(_lowest_cards, bits)


def highest_card(bits: np.ndarray) -> np.ndarray:
    """Id of the highest card in each non-empty set (undefined for empty sets)."""
    return _each_set(_highest_cards, bits)


@jit
def nth_of(card_set, n):
    """Id of the ``n``-th lowest card (0-based) of one set, inside compiled code (-1 past its end)."""
    x = np.uint64(card_set)
    for _ in range(n):
        x &= x - np.uint64(1)  # clear the lowest card
    if x == 0:
        return -1
    return lowest_of(x)


@jit
def _nth_cards(card_sets, n, out):
    for i in range(card_sets.size):
        out[i] = nth_of(card_sets[i], n[i])


def nth_card(bits: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Id of the ``n``-th lowest card (0-based) of each set; ``n`` must be below its count."""
    bits, n = np.broadcast_arrays(np.asarray(bits, dtype=np.uint64), np.asarray(n, dtype=np.int64))
    out = np.empty(bits.shape, dtype=np.int64)
    _nth_cards(np.ascontiguousarray(bits).reshape(-1), np.ascontiguousarray(n).reshape(-1), out.reshape(-1))
    return out


@jit
def _uniform_cards(card_sets, uniforms, out):
    for i in range(card_sets.size):
        out[i] = max(nth_of(card_sets[i], int(uniforms[i] * popcount(card_sets[i]))), 0)


def uniform_cards(bits: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A card of each set ``[N]`` picked by a uniform number in [0, 1) per set (0 for an empty set);
    written into ``out`` (int64 ``[N]``) when given."""
    bits = np.ascontiguousarray(bits, dtype=np.uint64).reshape(-1)
    if out is None:
        out = np.empty(bits.size, dtype=np.int64)
    _uniform_cards(bits, np.ascontiguousarray(uniforms, dtype=np.float64), out)
    return out


def format_cards(cards: Iterable[int], symbols: bool = False) -> str:
    text = card_symbol_text if symbols else card_text
    return " ".join(text(c) for c in cards)
