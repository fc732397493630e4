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

from . import cards
from .constants import constants
from .rules import Rules


def card_points(rules: Rules, taken: np.ndarray) -> np.ndarray:
    """Penalty points of the cards in each set, before the moon: hearts 1 each, Q♠ 13."""
    c = constants(rules)
    return cards.count(taken & c.hearts_bits).astype(np.int64) + 13 * ((taken & c.queen_bit) != 0)


def jack_bonus(rules: Rules, taken: np.ndarray) -> np.ndarray:
    """What the J♦ adds to each set's score: ``jack_of_diamonds_points`` when on and taken."""
    if not rules.jack_of_diamonds_bonus:
        return np.zeros(taken.shape, dtype=np.int64)
    return rules.jack_of_diamonds_points * ((taken & constants(rules).jack_bit) != 0)


def moon_shooter(rules: Rules, taken: np.ndarray, dead: np.ndarray) -> np.ndarray:
    """``[G, P]`` True for the seat that took every point card in play."""
    in_play = constants(rules).point_bits & ~dead
    return (taken & in_play[:, None]) == in_play[:, None]


def hand_points(rules: Rules, taken: np.ndarray, dead: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Penalty points the finished hand gives each seat ``[G, P]``, moon rule and J♦ applied.

    ``taken`` is ``[G, P]`` card sets won, ``dead`` ``[G]``, ``scores`` the totals before the hand.
    """
    points = card_points(rules, taken)
    jack = jack_bonus(rules, taken)
    if rules.moon == "off":
        return points + jack
    shooter = moon_shooter(rules, taken, dead)
    moon = shooter.any(axis=1, keepdims=True)
    add = np.where(shooter, 0, rules.moon_points)
    subtract = np.where(shooter, -rules.moon_points, 0)
    if rules.moon == "add_to_others":
        moon_points = add
    elif rules.moon == "subtract_from_self":
        moon_points = subtract
    else:  # shooters_choice
        adding_loses = _adding_loses(rules, scores + add + jack, shooter)
        moon_points = np.where(adding_loses[:, None], subtract, add)
    return np.where(moon, moon_points, points) + jack


def _adding_loses(rules: Rules, totals: np.ndarray, shooter: np.ndarray) -> np.ndarray:
    """Would these totals end the game with the shooter not the sole lowest?"""
    ends = totals.max(axis=1) >= rules.target_score
    return ends & ~(winner_mask(totals) & shooter).any(axis=1)


def winner_mask(totals: np.ndarray) -> np.ndarray:
    """``[G, P]`` True for the seat holding the lowest total alone (all False on a tie)."""
    lowest = totals == totals.min(axis=1, keepdims=True)
    return lowest & (lowest.sum(axis=1, keepdims=True) == 1)


def game_over(rules: Rules, totals: np.ndarray) -> np.ndarray:
    """Games that end with these totals: someone reached the target and the lowest is unique."""
    return (totals.max(axis=1) >= rules.target_score) & winner_mask(totals).any(axis=1)
