"""The ``hard`` bot: everything ``normal`` does, plus card counting, voids, passing by direction,
moon defence and shooting the moon.

It counts cards: the cards still out are those not in its hand, not played and not passed by it;
"higher cards out" of a card are the cards out above it in its suit. It remembers voids: the
observation records every suit a seat failed to follow.

Rules, first match wins (then ``normal``'s rules):

1. ``pass_spades_by_direction``: passing left or across while short in spades with Q♠, pass Q♠
   together with A♠ and K♠ (the receiver plays after us and would drop Q♠ on our honours); when
   long in spades keep all three. Passing right (the receiver plays before us) Q♠ may go alone:
   A♠ and K♠ stay.
2. ``shoot_the_moon``: when no one else has taken points and its hand controls the rest of the
   hand (nearly every card it holds is the highest still out in its suit, with A♥ or the hearts
   already won, and Q♠ held or taken), it commits: it leads and plays its highest cards and
   discards its lowest non-point cards. It aborts by itself as soon as another seat takes a point,
   since the condition is checked afresh at every decision.
3. ``stop_the_moon``: when one opponent holds every point taken so far, and at least ten, it
   defends: it takes a trick with points when it can, dumps points on any winner but the
   shooter, and keeps its highest heart as a stopper.
4. ``dump_queen_on_the_winner``: void in the led suit, dump Q♠ (normal does too, but hard does it
   first, before any moon rule of normal's could spend the discard).
5. ``lead_by_counting``: leading, score each legal card: a card with higher cards still out is
   likely to lose (good), one with none will win (bad); leading into a suit in which an opponent
   is known void invites a dump of points and is avoided unless the card is low; short suits,
   spades below the queen while Q♠ is out (bleeding) are preferred; Q♠, and A♠/K♠ while Q♠ is
   out, are never led while another card will do.
"""

from __future__ import annotations

import copy

import numpy as np

from hearts_env import cards

from . import easy, normal
from .base import RuleBot
from .easy import keepers, safe_discards, without
from .normal import SPADE_HONOURS, kept, short_in_spades
from .table import AH, AS, HEARTS, HIGH_RANK, KS, LOW_RANK, QS, RANKS, SPADES_BELOW_QUEEN, SUITS, Table, above, below, has, pick

MOON_THREAT_POINTS = 10


def pass_spades_by_direction(t: Table) -> np.ndarray:
    holds_queen = has(t.hand, QS)
    left_or_across = (t.pass_offset == 1) | (t.pass_offset == 2)
    short = short_in_spades(t)
    # Left/across and short: Q♠ and the honours go together. Right: Q♠ alone.
    together = t.passing & holds_queen & short & left_or_across
    alone = t.passing & holds_queen & short & (t.pass_offset == 3)
    choice = pick(np.where(together, t.legal & SPADE_HONOURS, 0), normal.QUEEN_FIRST)
    return np.where(alone, pick(t.legal & QS, HIGH_RANK), choice)


def keep_spade_honours(t: Table) -> np.ndarray:
    """Spade honours hard keeps when passing: all three when long in spades, A♠/K♠ when passing
    Q♠ to the right, or when Q♠ is not ours to pass (normal would throw them away)."""
    return np.where(t.passing & has(t.hand, QS) & ~short_in_spades(t), SPADE_HONOURS, np.uint64(0))


def pass_without_honours(rule):
    """``rule`` applied as if the spade honours hard keeps were not legal to pass."""

    def wrapped(t: Table) -> np.ndarray:
        view = copy.copy(t)
        view.legal = without(t, t.legal, keep_spade_honours(t))
        return rule(view)

    wrapped.__name__ = rule.__name__
    return wrapped


def bosses(t: Table, bits: np.ndarray) -> np.ndarray:
    """Cards of ``bits`` with no higher card still out in their suit (they win if led)."""
    out = np.zeros(t.n, dtype=np.uint64)
    for card in range(cards.NUM_CARDS):
        bit = cards.BIT[card]
        top = (bits & bit) != 0
        if not top.any():
            continue
        unbeaten = (t.unseen & above(np.full(t.n, card))) == 0
        out |= np.where(top & unbeaten, bit, np.uint64(0))
    return out


def moon_is_on(t: Table) -> np.ndarray:
    others_clean = t.points_taken[:, 1:].sum(axis=1) == 0
    in_hand = cards.count(t.hand).astype(np.int64)
    controlled = cards.count(bosses(t, t.hand)).astype(np.int64)
    hearts_mine = has(t.hand, AH) | (t.points_taken[:, 0] > 0)
    queen_mine = has(t.hand, QS) | (t.points_taken[:, 0] >= 13) | ~t.queen_out & has(t.played_by[:, 0], QS) & False
    strong = (controlled >= in_hand - 1) & (in_hand >= 4)
    return others_clean & hearts_mine & (queen_mine | (t.points_taken[:, 0] >= 13)) & strong & ~t.passing


def shoot_the_moon(t: Table) -> np.ndarray:
    shooting = moon_is_on(t)
    if not shooting.any():
        return np.full(t.n, -1)
    lead_or_follow = np.where(t.void_now, 0, t.legal)
    choice = pick(np.where(shooting, lead_or_follow, 0), HIGH_RANK)
    # Void: throw away the lowest card that carries no points.
    discard = without(t, t.legal & ~(HEARTS | QS), np.uint64(0))
    return np.where(shooting & t.void_now, pick(np.where(shooting, discard, 0), LOW_RANK), choice)


def moon_threat(t: Table) -> np.ndarray:
    """Relative seat of an opponent who holds every point taken so far (at least ten), else -1."""
    taken = t.points_taken
    total = taken.sum(axis=1)
    seat = taken.argmax(axis=1)
    alone = (taken.max(axis=1) == total) & (total >= MOON_THREAT_POINTS) & (seat != 0)
    points_left = ((t.unseen | t.hand) & (HEARTS | QS)) != 0
    return np.where(alone & points_left & ~t.passing, seat, -1)


def stop_the_moon(t: Table) -> np.ndarray:
    shooter = moon_threat(t)
    active = shooter >= 0
    if not active.any():
        return np.full(t.n, -1)
    # Following with a trick that has points: take it with the highest card that wins.
    take = active & t.following & (t.trick_points > 0) & ((t.legal & t.beats) != 0)
    choice = np.where(take, pick(t.legal & t.beats, HIGH_RANK), -1)
    # Void: points go to a winner who is not the shooter; else shed non-hearts, keeping the stopper.
    winner_ok = t.winning_seat != shooter
    points = safe_discards(t) & (HEARTS | QS)
    dump = active & t.void_now & winner_ok & (points != 0)
    choice = np.where(dump, pick(points, normal.QUEEN_FIRST), choice)
    keep = active & t.void_now & ~winner_ok
    top_heart = np.where(t.hand & HEARTS, cards.BIT[np.maximum(cards.highest_card(t.hand & HEARTS), 0)], 0)
    shed = without(t, safe_discards(t) & ~top_heart & ~HEARTS, np.uint64(0))
    choice = np.where(keep & (choice < 0), pick(np.where(keep, shed, 0), HIGH_RANK), choice)
    # Leading: a heart that wins takes a point trick away from the shooter.
    lead_heart = active & t.leading & ((t.legal & HEARTS & bosses(t, t.hand & HEARTS)) != 0)
    return np.where(lead_heart & (choice < 0), pick(t.legal & HEARTS, HIGH_RANK), choice)


def dump_queen_on_the_winner(t: Table) -> np.ndarray:
    return pick(safe_discards(t) & QS, HIGH_RANK)


def count_out(t: Table, candidates: np.ndarray, side) -> np.ndarray:
    """``[N, 52]``: for each candidate card, the cards still out ``side`` of it in its suit."""
    mask = cards.to_mask(candidates)
    counts = np.zeros((t.n, cards.NUM_CARDS))
    for card in np.flatnonzero(mask.any(axis=0)):
        counts[:, card] = cards.count(t.unseen & side(np.full(t.n, card)))
    return counts


def lead_by_counting(t: Table) -> np.ndarray:
    leading = t.leading & ~t.passing
    if not leading.any():
        return np.full(t.n, -1)
    held_back = np.where(t.queen_out, SPADE_HONOURS, QS) | keepers(t)
    candidates = np.where(leading, without(t, t.legal, held_back), 0)
    higher_out = count_out(t, candidates, above)
    lower_out = count_out(t, candidates, below)
    # Opponents duck under a lead when they can, so a lead loses for sure when no lower card is
    # out and a higher one is; each lower card out is a way for the trick to come back to us.
    score = np.where(higher_out > 0, 20.0, -40.0) - 4.0 * np.minimum(lower_out, 5) + np.minimum(higher_out, 3)
    # A known void lets that opponent dump points; harmless only when the lead surely loses.
    opponents_void = t.voids[:, 1:, :].any(axis=1)[:, SUITS]
    score -= np.where(opponents_void & (lower_out > 0), 15.0, 0.0)
    # Bleed spades below the queen while Q♠ is out and not ours; prefer emptying short suits.
    bleed = (t.queen_out & ~has(t.hand, QS))[:, None] & cards.to_mask(SPADES_BELOW_QUEEN)[None, :]
    score += np.where(bleed, 5.0, 0.0) - 0.5 * normal.suit_lengths(t)
    return pick(candidates, score)


def shed_on_first_trick(t: Table) -> np.ndarray:
    """The first trick cannot carry points (with first-trick protection): shed the highest card."""
    first = t.following & (t.trick_number == 0) & (t.trick_points == 0)
    protected = t.first_trick_protection
    return pick(np.where(first & protected, t.legal, 0), HIGH_RANK)


class HardBot(RuleBot):
    name = "hard"
    rules = (
        pass_spades_by_direction,
        pass_without_honours(normal.pass_exposed_spades),
        pass_without_honours(normal.pass_high_hearts),
        pass_without_honours(normal.pass_to_void),
        pass_without_honours(easy.pass_highest),
        shoot_the_moon,
        stop_the_moon,
        dump_queen_on_the_winner,
        shed_on_first_trick,
        lead_by_counting,
    ) + tuple(r for r in normal.NormalBot.rules if not r.__name__.startswith("pass_"))
