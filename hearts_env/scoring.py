"""Scoring a hand (the moon in one place, the J♦ bonus) and deciding whether the game is over.

Penalty points: each heart 1, Q♠ 13. Shooting the moon means taking every point card in play
(dead cards excluded, so in the two-player game the moon needs only the point cards dealt). What
the moon does is ``Rules.moon``:

* ``add_to_others``: the shooter scores 0, every other player ``moon_points``;
* ``subtract_from_self``: the shooter scores ``-moon_points``, the others 0;
* ``shooters_choice``: the shooter takes ``add_to_others`` unless that would end the game
  with the shooter not the sole lowest total; then ``subtract_from_self`` (a decision: the
  rule texts leave the choice to the player, and this is the choice that never hurts them);
* ``off``: no moon; the shooter keeps the points taken.

With ``jack_of_diamonds_bonus`` the taker of J♦ adds ``jack_of_diamonds_points`` (-10), moon or not.

Game end: after a hand in which some total reached ``target_score``, the game is over when the
lowest total is held by one player alone (who wins); a tie for lowest plays another hand.
"""

from __future__ import annotations

import numpy as np

from .cards import popcount
from .compiled import jit
from .constants import (
    BT_HEARTS, BT_JACK, BT_POINTS, BT_QUEEN, MOON_CHOICE, MOON_OFF, MOON_SUBTRACT, PR_JACK_BONUS,
    PR_JACK_POINTS, PR_MOON, PR_MOON_POINTS, PR_PLAYERS, PR_TARGET_SCORE, constants,
)
from .rules import Rules


@jit
def set_points(bits, taken):
    """Penalty points of the cards in one set, before the moon: hearts 1 each, Q♠ 13."""
    return popcount(taken & bits[BT_HEARTS]) + (13 if taken & bits[BT_QUEEN] else 0)


@jit
def set_jack_bonus(params, bits, taken):
    """What J♦ adds to one set's score: ``jack_of_diamonds_points`` when the bonus is on and J♦ is in it."""
    return params[PR_JACK_POINTS] if params[PR_JACK_BONUS] and taken & bits[BT_JACK] else 0


@jit
def is_shooter(bits, taken, dead):
    """The set holds every point card in play (dead cards are out of play)."""
    in_play = bits[BT_POINTS] & ~dead
    return (taken & in_play) == in_play


@jit
def sole_lowest(totals):
    """The seat holding the lowest total alone, or -1 on a tie for lowest."""
    seat, ties = 0, 0
    for s in range(1, totals.size):
        if totals[s] < totals[seat]:
            seat, ties = s, 0
        elif totals[s] == totals[seat]:
            ties += 1
    return -1 if ties else seat


@jit
def is_game_over(params, totals):
    """Someone reached the target score and the lowest total is held by one seat alone."""
    return totals.max() >= params[PR_TARGET_SCORE] and sole_lowest(totals) >= 0


@jit
def score_hand(params, bits, taken, dead, scores, points, moon):
    """One finished hand: fill ``points[P]`` (moon rule and J♦ applied) and ``moon[P]`` (shot the moon).

    ``taken[P]`` are the cards each seat won, ``dead`` the dead cards, ``scores[P]`` the totals
    before the hand."""
    p, rule = params[PR_PLAYERS], params[PR_MOON]
    any_shooter = False
    for s in range(p):
        moon[s] = rule != MOON_OFF and is_shooter(bits, taken[s], dead)
        any_shooter |= moon[s]
    if not any_shooter:
        for s in range(p):
            points[s] = set_points(bits, taken[s]) + set_jack_bonus(params, bits, taken[s])
        return
    subtract = rule == MOON_SUBTRACT
    if rule == MOON_CHOICE:
        # Adding to the others unless that ends the game with the shooter not the sole lowest.
        totals = np.empty(p, dtype=np.int64)
        for s in range(p):
            totals[s] = scores[s] + (0 if moon[s] else params[PR_MOON_POINTS]) + set_jack_bonus(params, bits, taken[s])
        lowest = sole_lowest(totals)
        subtract = totals.max() >= params[PR_TARGET_SCORE] and not (lowest >= 0 and moon[lowest])
    for s in range(p):
        if subtract:
            moon_points = -params[PR_MOON_POINTS] if moon[s] else 0
        else:
            moon_points = 0 if moon[s] else params[PR_MOON_POINTS]
        points[s] = moon_points + set_jack_bonus(params, bits, taken[s])


# ---- the same rules over arrays, for callers outside the engine --------------------------------

@jit
def _card_points(bits, taken):
    out = np.empty(taken.size, dtype=np.int64)
    for i in range(taken.size):
        out[i] = set_points(bits, taken[i])
    return out


@jit
def _hand_points(params, bits, taken, dead, scores):
    points = np.empty(taken.shape, dtype=np.int64)
    moon = np.empty(taken.shape, dtype=np.bool_)
    for g in range(taken.shape[0]):
        score_hand(params, bits, taken[g], dead[g], scores[g], points[g], moon[g])
    return points, moon


def card_points(rules: Rules, taken: np.ndarray) -> np.ndarray:
    """Penalty points of the cards in each set (any shape), before the moon: hearts 1 each, Q♠ 13."""
    taken = np.asarray(taken, dtype=np.uint64)
    return _card_points(constants(rules).bits, np.ascontiguousarray(taken).reshape(-1)).reshape(taken.shape)


def hand_points(rules: Rules, taken: np.ndarray, dead: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Penalty points the finished hand gives each seat ``[G, P]``, moon rule and J♦ applied.

    ``taken`` is ``[G, P]`` card sets won, ``dead`` ``[G]``, ``scores`` the totals before the hand."""
    c = constants(rules)
    taken, dead = _per_hand(taken, dead)
    scores = np.ascontiguousarray(np.broadcast_to(scores, taken.shape), dtype=np.int64)
    return _hand_points(c.params, c.bits, taken, dead, scores)[0]


@jit
def _shooters(bits, taken, dead, out):
    for g in range(taken.shape[0]):
        for s in range(taken.shape[1]):
            out[g, s] = is_shooter(bits, taken[g, s], dead[g])


def moon_shooter(rules: Rules, taken: np.ndarray, dead: np.ndarray) -> np.ndarray:
    """``[G, P]`` True for the seat that took every point card in play (whatever ``Rules.moon`` does
    with it)."""
    taken, dead = _per_hand(taken, dead)
    out = np.empty(taken.shape, dtype=bool)
    _shooters(constants(rules).bits, taken, dead, out)
    return out


def _per_hand(taken, dead) -> tuple[np.ndarray, np.ndarray]:
    """``taken`` as ``[G, P]`` and ``dead`` broadcast to ``[G]``, contiguous, for the kernels."""
    taken = np.atleast_2d(np.ascontiguousarray(taken, dtype=np.uint64))
    dead = np.ascontiguousarray(np.broadcast_to(np.asarray(dead, dtype=np.uint64).reshape(-1), taken.shape[:1]))
    return taken, dead
