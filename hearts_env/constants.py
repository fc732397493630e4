"""Per-rules constants the hot paths read (card sets and tables), computed once per ``Rules``.

The compiled kernels read the rules from two flat arrays, ``params`` (integers) and ``bits``
(card sets), indexed by the ``PR_*`` and ``BT_*`` names below: two call arguments carry every
option.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from . import cards
from .compiled import jit
from .rules import Rules
from .state import history_length, storage_views


@dataclasses.dataclass(frozen=True)
class RuleConstants:
    params: np.ndarray  # int64, the options for the kernels (``PR_*``)
    bits: np.ndarray  # uint64, the card sets for the kernels (``BT_*``)


# ``params``: scalar options first, then the pass offsets, the opening cards and the deck's card
# ids, each located by a (start, length) pair.
(PR_PLAYERS, PR_HAND_SIZE, PR_PASS_COUNT, PR_TRUMP, PR_DEAD_CARDS, PR_FIRST_TRICK_PROTECTION,
 PR_QUEEN_BREAKS_HEARTS, PR_MOON, PR_MOON_POINTS, PR_JACK_BONUS, PR_JACK_POINTS, PR_TARGET_SCORE,
 PR_CYCLE_START, PR_CYCLE_LENGTH, PR_OPENING_START, PR_OPENING_LENGTH, PR_DECK_START, PR_DECK_LENGTH,
 PR_HISTORY_LENGTH) = range(19)
_PR_SCALARS = 19
#: ``Rules.moon`` as the integer in ``params[PR_MOON]``.
MOON_CODES = {"off": 0, "add_to_others": 1, "subtract_from_self": 2, "shooters_choice": 3}
MOON_OFF, MOON_ADD, MOON_SUBTRACT, MOON_CHOICE = range(4)
# ``bits``: point cards, hearts, Q♠, J♦, the cards that wait for broken hearts, the deck.
BT_POINTS, BT_HEARTS, BT_QUEEN, BT_JACK, BT_UNBROKEN_LEAD, BT_DECK = range(6)


_CACHE: dict[int, tuple[Rules, RuleConstants]] = {}


def constants(rules: Rules) -> RuleConstants:
    """The constants of ``rules``, cached by object identity (hashing a pydantic model on every
    step of a single game costs more than the step's own arithmetic)."""
    hit = _CACHE.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    if len(_CACHE) > 256:
        _CACHE.clear()
    value = _compute(rules)
    _CACHE[id(rules)] = (rules, value)  # keeps ``rules`` alive, so its id is not reused
    return value


@functools.lru_cache(maxsize=64)
def _compute(rules: Rules) -> RuleConstants:
    hearts = cards.SUIT_BITS[cards.HEARTS] & rules.deck_bits
    queen = cards.BIT[cards.QUEEN_OF_SPADES]
    unbroken = np.uint64(0)
    if rules.hearts_must_be_broken:
        unbroken |= hearts
    if rules.queen_waits_for_hearts:
        unbroken |= queen
    cycle = np.asarray(rules.pass_offsets, dtype=np.int64)
    opening = np.asarray(rules.opening_ids, dtype=np.int64)
    deck = np.asarray(cards.cards_of(rules.deck_bits), dtype=np.int64)
    scalars = np.zeros(_PR_SCALARS, dtype=np.int64)
    scalars[[PR_PLAYERS, PR_HAND_SIZE, PR_PASS_COUNT, PR_TRUMP, PR_DEAD_CARDS]] = (
        rules.num_players, rules.hand_size, rules.pass_count, rules.trump, rules.dead_cards)
    scalars[[PR_FIRST_TRICK_PROTECTION, PR_QUEEN_BREAKS_HEARTS, PR_MOON, PR_MOON_POINTS]] = (
        rules.first_trick_protection, rules.queen_breaks_hearts, MOON_CODES[rules.moon], rules.moon_points)
    scalars[[PR_JACK_BONUS, PR_JACK_POINTS, PR_TARGET_SCORE]] = (
        rules.jack_of_diamonds_bonus, rules.jack_of_diamonds_points, rules.target_score)
    scalars[PR_HISTORY_LENGTH] = history_length(rules)
    scalars[[PR_CYCLE_START, PR_CYCLE_LENGTH]] = _PR_SCALARS, cycle.size
    scalars[[PR_OPENING_START, PR_OPENING_LENGTH]] = _PR_SCALARS + cycle.size, opening.size
    scalars[[PR_DECK_START, PR_DECK_LENGTH]] = _PR_SCALARS + cycle.size + opening.size, deck.size
    params = np.concatenate([scalars, cycle, opening, deck])
    bits = np.array([rules.point_bits, hearts, queen, cards.BIT[cards.JACK_OF_DIAMONDS], unbroken, rules.deck_bits],
                    dtype=np.uint64)
    for array in (params, bits):
        array.flags.writeable = False
    return RuleConstants(params=params, bits=bits)


@jit
def state_views(params, buffer):
    """The eight storage arrays of a state buffer played under ``params`` (see ``state.GROUPS``)."""
    return storage_views(buffer, params[PR_PLAYERS], params[PR_HISTORY_LENGTH])
