"""The ``easy`` bot: avoids taking points right away, and nothing more.

Rules, first match wins:

1. ``pass_highest``: when passing, pass its highest cards (one pick at a time).
2. ``follow_lowest``: when following suit, play its lowest card of the suit (which goes under
   the current winner whenever any card can).
3. ``discard_queen``: when void in the led suit, dump Q♠.
4. ``discard_highest_heart``: when void, dump its highest heart.
5. ``discard_highest``: when void, dump its highest card.
6. ``lead_lowest``: when leading, lead its lowest card.

All levels respect every rule option: discards only consider cards that do not win the trick
(with hearts trump a heart ruffs, so it is not a safe discard), and with the J♦ bonus on the J♦
is a card to win, never passed or discarded while another card will do.
"""

from __future__ import annotations

import numpy as np

from .base import RuleBot
from .table import HEARTS, HIGH_RANK, JD, LOW_RANK, QS, Table, has, pick


def keepers(t: Table) -> np.ndarray:
    """Cards a bot keeps while it has others: the J♦ when it is worth winning."""
    return np.where(t.jack_bonus, JD, np.uint64(0))


def without(t: Table, bits: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``bits`` less ``keep``, unless that leaves nothing."""
    rest = bits & ~keep
    return np.where(rest != 0, rest, bits)


def safe_discards(t: Table) -> np.ndarray:
    """Legal cards that do not take the trick, when void in the led suit (empty otherwise)."""
    losing = t.legal & ~t.beats
    return np.where(t.void_now, without(t, losing, keepers(t)), np.uint64(0))


def pass_highest(t: Table) -> np.ndarray:
    return pick(np.where(t.passing, without(t, t.legal, keepers(t)), 0), HIGH_RANK)


def follow_lowest(t: Table) -> np.ndarray:
    return pick(np.where(t.following & ~t.passing, t.legal, 0), LOW_RANK)


def discard_queen(t: Table) -> np.ndarray:
    return pick(safe_discards(t) & QS, HIGH_RANK)


def discard_highest_heart(t: Table) -> np.ndarray:
    return pick(safe_discards(t) & HEARTS, HIGH_RANK)


def discard_highest(t: Table) -> np.ndarray:
    return pick(safe_discards(t), HIGH_RANK)


def lead_lowest(t: Table) -> np.ndarray:
    return pick(np.where(t.leading & ~t.passing, without(t, t.legal, keepers(t)), 0), LOW_RANK)


class EasyBot(RuleBot):
    name = "easy"
    rules = (pass_highest, follow_lowest, discard_queen, discard_highest_heart, discard_highest, lead_lowest)


__all__ = ["EasyBot", "has"]
