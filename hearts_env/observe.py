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
from .constants import constants
from .scoring import card_points
from .state import OVER, PASS, State, flat

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


#: Offset of each piece in the vector.
_AT = {name: piece.start for name, (piece, _) in OBSERVATION_LAYOUT.items()}


@functools.lru_cache(maxsize=32)
def _rows(n: int, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached index helpers for a batch of ``n`` games of ``p`` players."""
    games = np.arange(n)
    games.flags.writeable = False
    return games, games * p, games * OBS_DIM


def observe(state: State, seats: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """``[N, OBS_DIM]`` float32: game ``i`` seen by ``seats[i]`` (default: the seat to act).

    ``out``, a float32 ``[N, OBS_DIM]`` array, is filled and returned instead of a new array
    (saves the allocation in loops that encode every step).
    """
    rules = state.rules
    c = constants(rules)
    n, p = state.batch_size, c.num_players
    games, game_seat0, game_obs0 = _rows(n, p)
    if seats is None:
        seats = np.maximum(state.current_player, 0)
    seats = np.asarray(seats, dtype=np.int64)
    # Flat index of (game, seat of each relative row) into [N, P] arrays: row r is seat + r.
    mine = game_seat0 + seats
    relative = game_seat0[:, None] + (seats[:, None] + np.arange(p)) % p  # [N, p]

    # Card sets, one unpacking for all of them.
    sets = np.zeros((n, _CARD_SETS), dtype=np.uint64)
    sets[:, 0] = flat(state.hands)[mine]
    offset = c.pass_offsets[state.hand_number % c.pass_offsets.size]
    passed = flat(state.passed)
    sets[:, 1] = passed[mine]
    # Received cards are known only after the exchange: before it, ``passed`` of the giver
    # holds the giver's secret picks.
    exchanged = (state.phase != PASS) & (offset != 0)
    sets[:, 2] = np.where(exchanged, passed[game_seat0 + (seats - offset) % p], 0)
    trick = flat(state.trick)[relative]
    sets[:, 3 : 3 + p] = np.where(trick >= 0, cards.BIT[trick], 0)  # BIT[-1] is masked out
    played = flat(state.played)[relative]
    sets[:, 7 : 7 + p] = played

    if out is None:
        obs = np.zeros((n, OBS_DIM), dtype=np.float32)
    else:
        if out.shape != (n, OBS_DIM) or out.dtype != np.float32:
            raise ValueError(f"out must be float32 of shape {(n, OBS_DIM)}, got {out.dtype} {out.shape}")
        obs = out
        obs[:, _CARD_BLOCK:] = 0  # the card block below is overwritten whole
    obs[:, :_CARD_BLOCK].reshape(n, _CARD_SETS, cards.NUM_CARDS)[:] = cards.unpack(sets)
    cells = flat(obs)

    # One-hot pieces: one write each at (game, piece offset + index).
    cells[game_obs0 + _AT["trick_leader"] + (state.leader - seats) % p] = state.num_in_trick > 0
    cells[game_obs0 + _AT["to_act"] + (state.current_player - seats) % p] = state.current_player >= 0
    cells[game_obs0 + _AT["pass_direction"] + offset] = offset != 0
    cells[game_obs0 + _AT["phase"] + np.minimum(state.phase, 1)] = state.phase != OVER
    # Per-relative-seat pieces.
    at = _AT["voids"]
    obs[:, at : at + 4 * p] = state.voids.reshape(n * p, 4)[relative].reshape(n, 4 * p)
    taken = flat(state.taken)[relative]
    at = _AT["points_taken"]
    obs[:, at : at + p] = card_points(rules, taken) / 26
    if rules.jack_of_diamonds_bonus:
        at = _AT["jack_taken"]
        obs[:, at : at + p] = (taken & c.jack_bit) != 0
    at = _AT["scores"]
    obs[:, at : at + p] = flat(state.scores)[relative] / rules.target_score
    # Scalars and rule flags.
    obs[:, _AT["trick_number"]] = state.trick_number / c.hand_size
    obs[:, _AT["hearts_broken"]] = state.hearts_broken
    obs[:, _AT["queen_seen"]] = ((played & c.queen_bit) != 0).any(axis=1)
    at = _AT["rules"]
    obs[:, at : at + len(RULE_FLAGS)] = rule_flags(rules)
    return obs


def describe() -> str:
    """The layout as a text table (offsets, shapes)."""
    lines = [f"observation v{OBS_VERSION}: {OBS_DIM} float32", f"{'piece':<16} {'offset':>6} {'shape':>10}"]
    for name, (s, shape) in OBSERVATION_LAYOUT.items():
        lines.append(f"{name:<16} {s.start:>6} {' x '.join(map(str, shape)):>10}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(describe())
