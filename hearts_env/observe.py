"""Observation v1: one flat float32 vector per (game, seat), built for the whole batch at once.

Everything is relative to the observing seat: relative seat 0 is *me*, 1 *left* (next to play
after me), 2 *across*, 3 *right*. In the two-player game rows 2 and 3 stay zero, so the layout
(and ``OBS_DIM``) is the same for every rule set. The observation holds only what that seat may
know: its own hand, its own passed and received cards, what has been played and by whom, the
current trick, voids shown by not following, points taken, scores, and public game facts. It
never reads another seat's hand, another seat's pass picks before the exchange, or dead cards.

Layout (``OBSERVATION_LAYOUT``, offsets in floats; regenerate with
``python -m hearts_env.observe``):

======================  ========  ===================================================================
piece                   shape     meaning
======================  ========  ===================================================================
hand                    52        cards I hold
passed                  52        cards I pass this hand (to the relative seat in pass_direction)
received                52        cards passed to me this hand (after the exchange)
trick                   4 x 52    the current trick: the card each relative seat played to it
played_by               4 x 52    every card played this hand, by relative seat (current trick included)
trick_leader            4         relative seat that led the current trick (zeros before the lead)
voids                   4 x 4     suits (C, D, H, S) each relative seat showed it is void in
points_taken            4         penalty card points each relative seat took this hand, / 26
jack_taken              4         relative seat that took J♦ (only with the J♦ bonus)
scores                  4         game totals before this hand, / target score
to_act                  4         relative seat to act (zeros when the game is over)
trick_number            1         tricks finished this hand, / hand size
phase                   2         one-hot: passing, playing (zeros when the game is over)
pass_direction          4         this hand's pass as the receiving relative seat (0 = no pass)
hearts_broken           1         hearts may be led
queen_seen              1         Q♠ has been played this hand
rules                   12        first-trick protection, hearts must be broken, Q♠ breaks hearts,
                                  Q♠ waits, J♦ bonus, hearts trump, short 28-card deck, two
                                  players, moon add / subtract / shooter's choice / off
======================  ========  ===================================================================

Card rows use the card ids of ``cards`` (``13 * suit + rank``). ``decode(obs)`` returns named
views ``[N, *shape]`` into a batch of vectors, so heuristics and tests read pieces by name.

Version history: v1 (first version).
"""

from __future__ import annotations

import functools

import numpy as np

from . import cards
from .cards import bit
from .compiled import jit
from .constants import (
    BT_JACK, BT_QUEEN, PR_HAND_SIZE, PR_JACK_BONUS, PR_PLAYERS, PR_TARGET_SCORE, constants,
    state_views,
)
from .passing import offset_of
from .scoring import set_points
from .state import (
    CURRENT_PLAYER, HAND_NUMBER, HANDS, LEADER, NUM_IN_TRICK, OVER, PASS, PASSED, PHASE, PLAYED, SCORES, TAKEN, TRICK,
    TRICK_NUMBER, EngineArgumentError, State, as_array, game_indices,
)

OBS_VERSION = 1
SEATS = 4  # relative seat rows: me, left, across, right
RULE_FLAGS = (
    "first_trick_protection", "hearts_must_be_broken", "queen_breaks_hearts", "queen_waits_for_hearts",
    "jack_of_diamonds_bonus", "hearts_trump", "short_deck", "two_players",
    "moon_add_to_others", "moon_subtract_from_self", "moon_shooters_choice", "moon_off",
)

# (name, shape). The five card-set pieces come first and in this order: ``observe`` fills them
# with one unpacking of 11 card sets.
_PIECES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("hand", (52,)),
    ("passed", (52,)),
    ("received", (52,)),
    ("trick", (SEATS, 52)),
    ("played_by", (SEATS, 52)),
    ("trick_leader", (SEATS,)),
    ("voids", (SEATS, 4)),
    ("points_taken", (SEATS,)),
    ("jack_taken", (SEATS,)),
    ("scores", (SEATS,)),
    ("to_act", (SEATS,)),
    ("trick_number", (1,)),
    ("phase", (2,)),
    ("pass_direction", (SEATS,)),
    ("hearts_broken", (1,)),
    ("queen_seen", (1,)),
    ("rules", (len(RULE_FLAGS),)),
)


def _layout() -> dict[str, tuple[slice, tuple[int, ...]]]:
    out, start = {}, 0
    for name, shape in _PIECES:
        size = int(np.prod(shape))
        out[name] = (slice(start, start + size), shape)
        start += size
    return out


#: name -> (slice into the vector, shape of the piece)
OBSERVATION_LAYOUT = _layout()
OBS_DIM = max(s.stop for s, _ in OBSERVATION_LAYOUT.values())
_CARD_SETS = 11  # hand, passed, received, 4 trick, 4 played_by
_CARD_BLOCK = _CARD_SETS * cards.NUM_CARDS


def player_count(two_players):
    """The number of players the ``two_players`` rule flag stands for: 2 where it is set, else 4.
    The one reading of it: the seat view's compiled reader and the policies' torch features both
    call this (on a number, an array or a tensor of flags)."""
    return 4 - 2 * two_players


def decode(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named views ``[N, *shape]`` of a batch of observations ``[N, OBS_DIM]`` (or one ``[OBS_DIM]``)."""
    obs = np.asarray(obs)
    if obs.shape[-1] != OBS_DIM:
        raise ValueError(f"observation v{OBS_VERSION} vectors have {OBS_DIM} floats, got shape {obs.shape}")
    lead = obs.shape[:-1]
    return {name: obs[..., s].reshape(lead + shape) for name, (s, shape) in OBSERVATION_LAYOUT.items()}


@functools.lru_cache(maxsize=64)
def rule_flags(rules) -> np.ndarray:
    """The ``rules`` piece for a rule set."""
    values = {
        "first_trick_protection": rules.first_trick_protection,
        "hearts_must_be_broken": rules.hearts_must_be_broken,
        "queen_breaks_hearts": rules.queen_breaks_hearts,
        "queen_waits_for_hearts": rules.queen_waits_for_hearts,
        "jack_of_diamonds_bonus": rules.jack_of_diamonds_bonus,
        "hearts_trump": rules.trump_suit == "H",
        "short_deck": rules.deck == "short28",
        "two_players": rules.num_players == 2,
        "moon_add_to_others": rules.moon == "add_to_others",
        "moon_subtract_from_self": rules.moon == "subtract_from_self",
        "moon_shooters_choice": rules.moon == "shooters_choice",
        "moon_off": rules.moon == "off",
    }
    flags = np.array([values[f] for f in RULE_FLAGS], dtype=np.float32)
    flags.flags.writeable = False
    return flags


_FLAGS: dict[int, tuple] = {}


def _flags_of(rules) -> np.ndarray:
    """``rule_flags(rules)`` cached by identity (hashing the rules on every step costs more than observing)."""
    hit = _FLAGS.get(id(rules))
    if hit is None or hit[0] is not rules:
        if len(_FLAGS) > 256:
            _FLAGS.clear()
        hit = _FLAGS[id(rules)] = (rules, rule_flags(rules))
    return hit[1]


#: Offset of each piece in the vector.
_AT = {name: piece.start for name, (piece, _) in OBSERVATION_LAYOUT.items()}
# The same offsets as plain integers: the kernel compiles them in as constants.
_TRICK_LEADER, _VOIDS, _POINTS_TAKEN, _JACK_TAKEN = _AT["trick_leader"], _AT["voids"], _AT["points_taken"], _AT["jack_taken"]
_SCORES, _TO_ACT, _TRICK_NUMBER, _PHASE = _AT["scores"], _AT["to_act"], _AT["trick_number"], _AT["phase"]
_PASS_DIRECTION, _HEARTS_BROKEN, _QUEEN_SEEN, _RULES = (
    _AT["pass_direction"], _AT["hearts_broken"], _AT["queen_seen"], _AT["rules"])
_NUM_CARDS = cards.NUM_CARDS


@jit
def _observe(params, bits, flags_of_rules, buffer, games, seats, out):
    counters, _, seat_numbers, seat_sets, flags, _, voids, _ = state_views(params, buffer)
    p = params[PR_PLAYERS]
    # The card sets are gathered first and their 52 cells each written in a second, tight loop:
    # written in among the other pieces (or through a helper function) they made the whole
    # encoding four to six times slower, as the compiler did not vectorise them there.
    card_sets = np.zeros((out.shape[0], _CARD_SETS), dtype=np.uint64)
    for i in range(out.shape[0]):
        g = games[i]
        row = out[i]
        row[_CARD_BLOCK:] = 0.0
        seat = seats[i]
        phase = counters[PHASE, g]
        offset = offset_of(params, counters[HAND_NUMBER, g])
        card_sets[i, 0] = seat_sets[HANDS, g, seat]
        card_sets[i, 1] = seat_sets[PASSED, g, seat]
        # Received cards are known only after the exchange: before it, ``passed`` of the giver
        # holds the giver's secret picks.
        if phase != PASS and offset != 0:
            card_sets[i, 2] = seat_sets[PASSED, g, (seat - offset) % p]
        queen_seen = False
        for r in range(min(SEATS, p)):  # relative seat r is seat + r; rows past the players stay empty
            other = (seat + r) % p
            card = seat_numbers[TRICK, g, other]
            if card >= 0:
                card_sets[i, 3 + r] = bit(card)
            played = seat_sets[PLAYED, g, other]
            card_sets[i, 7 + r] = played
            queen_seen |= (played & bits[BT_QUEEN]) != 0
            taken = seat_sets[TAKEN, g, other]
            for suit in range(4):
                row[_VOIDS + 4 * r + suit] = voids[0, g, other, suit]
            row[_POINTS_TAKEN + r] = set_points(bits, taken) / 26
            if params[PR_JACK_BONUS]:
                row[_JACK_TAKEN + r] = (taken & bits[BT_JACK]) != 0
            row[_SCORES + r] = seat_numbers[SCORES, g, other] / params[PR_TARGET_SCORE]
        # One-hot pieces.
        if counters[NUM_IN_TRICK, g] > 0:
            row[_TRICK_LEADER + (counters[LEADER, g] - seat) % p] = 1.0
        if counters[CURRENT_PLAYER, g] >= 0:
            row[_TO_ACT + (counters[CURRENT_PLAYER, g] - seat) % p] = 1.0
        if offset != 0:
            row[_PASS_DIRECTION + offset] = 1.0
        if phase != OVER:
            row[_PHASE + min(phase, 1)] = 1.0
        # Scalars and rule flags.
        row[_TRICK_NUMBER] = counters[TRICK_NUMBER, g] / params[PR_HAND_SIZE]
        row[_HEARTS_BROKEN] = flags[0, g]
        row[_QUEEN_SEEN] = queen_seen
        for k in range(flags_of_rules.size):
            row[_RULES + k] = flags_of_rules[k]
    for i in range(out.shape[0]):
        row = out[i]
        for k in range(_CARD_SETS):
            card_set = card_sets[i, k]
            for card in range(_NUM_CARDS):
                row[k * _NUM_CARDS + card] = 1.0 if card_set & bit(card) else 0.0


def _checked_seats(seats, rows: int, num_players: int) -> np.ndarray:
    """``seats`` as one seat per row: integers 0..num_players-1, one for all rows or one per row."""
    array = as_array(seats, "seats")
    if array.dtype.kind not in "iu":
        raise EngineArgumentError(f"seats must be integer seats 0..{num_players - 1}, got {seats!r}")
    if array.ndim > 1 or array.size not in (1, rows):
        raise EngineArgumentError(f"seats: give one seat or one per observed game ({rows}), got shape {array.shape}")
    if array.size == 1:  # one seat (the AEC env observes this way, every step): a Python test beats reductions
        if not 0 <= array.item() < num_players:
            raise EngineArgumentError(f"seats must be 0..{num_players - 1}, got {array.item()}")
    elif array.size and (array.min() < 0 or array.max() >= num_players):
        raise EngineArgumentError(f"seats must be 0..{num_players - 1}, got {array.min()}..{array.max()}")
    return array if array.shape == (rows,) else np.broadcast_to(array.reshape(-1), (rows,))


def observe(state: State, seats: np.ndarray | None = None, out: np.ndarray | None = None,
            games: np.ndarray | None = None) -> np.ndarray:
    """``[N, OBS_DIM]`` float32: game ``i`` seen by ``seats[i]`` (default: the seat to act).

    ``games`` (indices into the batch, or a boolean mask ``[N]``; checked as the engine checks its
    ``games``) observes only those games: row ``i`` is game ``games[i]``,
    and ``seats``, when given, is one seat per row. (The play loop observes only the games whose
    agent it asks, each agent's games together.) ``out``, a float32 array of the result's shape,
    is filled and returned instead of a new array (saves the allocation in loops that encode every
    step).
    """
    n = state.batch_size
    if games is None:
        games = np.arange(n)
    else:  # checked: the kernel does not check bounds
        games = game_indices(games, n)
    m = games.size
    if seats is None:
        seats = np.maximum(state.current_player[games], 0)
    else:  # checked: the kernel reads a seat's cards without bounds checks
        seats = _checked_seats(seats, m, state.rules.num_players)
    seats = np.ascontiguousarray(seats, dtype=np.int64)
    if out is None:
        out = np.empty((m, OBS_DIM), dtype=np.float32)
    elif out.shape != (m, OBS_DIM) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 of shape {(m, OBS_DIM)}, got {out.dtype} {out.shape}")
    elif not out.flags.writeable:
        raise ValueError("out is read-only: give a writable array")
    c = constants(state.rules)
    _observe(c.params, c.bits, _flags_of(state.rules), state.buffer, games, seats, out)
    return out


def describe() -> str:
    """The layout as a text table (offsets, shapes)."""
    lines = [f"observation v{OBS_VERSION}: {OBS_DIM} float32", f"{'piece':<16} {'offset':>6} {'shape':>10}"]
    for name, (s, shape) in OBSERVATION_LAYOUT.items():
        lines.append(f"{name:<16} {s.start:>6} {' x '.join(map(str, shape)):>10}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(describe())
