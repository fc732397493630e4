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

from hearts_env import cards
from hearts_env.compiled import inline, jit

from .base import RuleBot, rule_chain
from .table import HEARTS, HIGH_RANK, JD, LOW_RANK, NONE, QS, pick, seat

NO_CARD = -1


@jit
def keepers(s):
    """Cards a bot keeps while it has others: the J♦ when it is worth winning."""
    return JD if s.jack_bonus else NONE


@jit
def without(card_set, keep):
    """``card_set`` less ``keep``, unless that leaves nothing."""
    rest = card_set & ~keep
    return rest if rest != 0 else card_set


@jit
def safe_discards(s):
    """Legal cards that do not take the trick, when void in the led suit (empty otherwise)."""
    return without(s.legal & ~s.beats, keepers(s)) if s.void_now else NONE


@inline
def pass_highest(s):
    return pick(without(s.legal, keepers(s)), HIGH_RANK) if s.passing else NO_CARD


@inline
def follow_lowest(s):
    return pick(s.legal, LOW_RANK) if s.following and not s.passing else NO_CARD


@inline
def discard_queen(s):
    return pick(safe_discards(s) & QS, HIGH_RANK)


@inline
def discard_highest_heart(s):
    return pick(safe_discards(s) & HEARTS, HIGH_RANK)


@inline
def discard_highest(s):
    return pick(safe_discards(s), HIGH_RANK)


@inline
def lead_lowest(s):
    return pick(without(s.legal, keepers(s)), LOW_RANK) if s.leading and not s.passing else NO_CARD


#: The rules, in the order ``first_rule`` tries them.
RULES = (pass_highest, follow_lowest, discard_queen, discard_highest_heart, discard_highest, lead_lowest)
first_rule = rule_chain(RULES)


@jit
def _decide(pieces, choice, chosen_by):
    scores = np.empty(cards.NUM_CARDS)
    for g in range(choice.size):
        choice[g], chosen_by[g] = first_rule(seat(pieces, g, scores))


class EasyBot(RuleBot):
    name = "easy"
    rules = RULES
    kernel = _decide
