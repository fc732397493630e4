"""Who may hold a card: the one rule, read by the bots (``agents.heuristic.table``), the sampled
worlds (``worlds``) and the seat records (``seat_record_replay``).

Seen from one seat (the viewer), another seat may hold the cards *out* (neither the viewer's nor
played, and not ruled out for that seat in some other way: the seat records' replay rules out the
cards that would have made one of its plays illegal), less the suits it showed void in, less the
cards the viewer passed to another seat, plus the cards the viewer passed to it and has not seen
played. :func:`may_hold` is the rule for one seat inside compiled code; :func:`may_hold_sets` the
same for arrays of seats.
"""

from __future__ import annotations

import numpy as np

from . import cards
from .compiled import jit


@jit
def may_hold(out, sent, voids, receives):
    """The cards one seat may hold: ``out`` less the suits of ``voids[4]`` (True: the seat showed
    it has none), less ``sent`` (the cards the viewer passed, not yet played), unless the seat
    ``receives`` them: then plus ``sent``."""
    held = out
    for suit in range(4):
        if voids[suit]:
            held &= ~cards.SUIT_BITS[suit]
    return held | sent if receives else held & ~sent


@jit
def _may_hold_sets(out, sent, voids, receives, held):
    for g in range(out.shape[0]):
        for h in range(out.shape[1]):
            held[g, h] = may_hold(out[g, h], sent[g], voids[g, h], receives[g, h])


def may_hold_sets(out: np.ndarray, sent: np.ndarray, voids: np.ndarray, receives: np.ndarray) -> np.ndarray:
    """``[N, H]`` card sets: :func:`may_hold` of each holder ``h`` of each game ``g``, from
    ``out[N, H]``, ``sent[N]``, ``voids[N, H, 4]`` and ``receives[N, H]``."""
    out = np.ascontiguousarray(out, dtype=np.uint64)
    held = np.empty(out.shape, dtype=np.uint64)
    _may_hold_sets(out, np.ascontiguousarray(sent, dtype=np.uint64), np.ascontiguousarray(voids, dtype=np.bool_),
                   np.ascontiguousarray(receives, dtype=np.bool_), held)
    return held
