"""The ``hard`` bot (work in progress)."""

from __future__ import annotations

import copy

import numpy as np

from hearts_env import cards

from . import easy, normal
from .base import RuleBot
from .easy import keepers, safe_discards, without
from .normal import SPADE_HONOURS, kept, short_in_spades
from .table import AH, AS, HEARTS, HIGH_RANK, KS, LOW_RANK, NONE, QS, RANKS, SPADES, SPADES_BELOW_QUEEN, SUITS, Table, above, below, has, pick

OPTS: dict = {}


def opt(name, default):
    return OPTS.get(name, default)


MOON_THREAT_POINTS = 10
POINT_CARDS = HEARTS | QS
#: VOID_SETS[i]: the cards of the suits whose bits are set in i (bit s = suit s).
VOID_SETS = np.array([np.bitwise_or.reduce([cards.SUIT_BITS[s] for s in range(4) if i >> s & 1] or [NONE]) for i in range(16)], dtype=np.uint64)
SUIT_WEIGHTS = np.array([1, 2, 4, 8])


class Facts:
    """What hard works out from a table beyond ``Table``: where cards can be, who plays after it."""

    def __init__(self, t: Table):
        n = t.n
        #: Cards held by the other seats (or dead): not mine and not played.
        self.out = t.deck & ~t.hand & ~t.played
        exchanged = ~t.passing & (t.pass_offset > 0)
        #: Cards I passed that their receiver still holds.
        self.sent = np.where(exchanged, t.passed & ~t.played, NONE)
        void_sets = VOID_SETS[(t.voids @ SUIT_WEIGHTS)]  # [N, 4]
        self.void_sets = void_sets
        holds = np.zeros((n, 4), dtype=np.uint64)
        holds[:, 0] = t.hand
        for r in (1, 2, 3):
            base = self.out & ~void_sets[:, r]
            base = np.where(t.pass_offset == r, base | self.sent, base & ~self.sent)
            holds[:, r] = np.where(t.players > r, base, NONE)
        #: [N, 4] cards each relative seat may hold (seat 0: my hand).
        self.holds = holds
        seats = np.arange(4)
        #: [N, 4] seats still to play to this trick after me.
        self.later = (t.trick_card < 0) & (seats > 0) & (seats < t.players[:, None])
        may_queen = has(holds, QS) & (seats > 0)
        only = may_queen.sum(axis=1) == 1
        #: Relative seat known to hold Q♠ (-1: unknown or not out; 0: mine).
        self.queen_seat = np.where(has(t.hand, QS), 0, np.where(only, may_queen.argmax(axis=1), -1))
        out_mask = cards.to_mask(self.out).reshape(n, 4, 13).astype(np.int16)
        below_or_at = np.cumsum(out_mask, axis=2)
        #: [N, 52] cards out below / above each card in its suit.
        self.lower_out = (below_or_at - out_mask).reshape(n, 52)
        self.higher_out = (below_or_at[:, :, -1:] - below_or_at).reshape(n, 52)
        #: [N, 4] cards out per suit.
        self.suit_out = below_or_at[:, :, -1]
        hand_mask = cards.to_mask(t.hand).reshape(n, 4, 13).astype(np.int16)
        mine_at = np.cumsum(hand_mask, axis=2)
        #: [N, 52] my cards below each card in its suit; [N, 4] my suit lengths.
        self.my_lower = (mine_at - hand_mask).reshape(n, 52)
        self.my_length = mine_at[:, :, -1]


def facts(t: Table) -> Facts:
    f = t.__dict__.get("_facts")
    if f is None:
        f = Facts(t)
        t._facts = f
    return f


# ---- passing --------------------------------------------------------------------------------

def pass_spades_by_direction(t: Table) -> np.ndarray:
    holds_queen = has(t.hand, QS)
    left_or_across = (t.pass_offset == 1) | (t.pass_offset == 2)
    short = short_in_spades(t)
    together = t.passing & holds_queen & short & left_or_across
    alone = t.passing & holds_queen & short & (t.pass_offset == 3)
    choice = pick(np.where(together, t.legal & SPADE_HONOURS, 0), normal.QUEEN_FIRST)
    return np.where(alone, pick(t.legal & QS, HIGH_RANK), choice)


def keep_spade_honours(t: Table) -> np.ndarray:
    return np.where(t.passing & has(t.hand, QS) & ~short_in_spades(t), SPADE_HONOURS, np.uint64(0))


def pass_without_honours(rule):
    def wrapped(t: Table) -> np.ndarray:
        view = copy.copy(t)
        view.legal = without(t, t.legal, keep_spade_honours(t))
        return rule(view)

    wrapped.__name__ = rule.__name__
    return wrapped


# ---- moon -----------------------------------------------------------------------------------

def bosses(t: Table, bits: np.ndarray) -> np.ndarray:
    """Cards of ``bits`` with no higher card still out in their suit (they win if led)."""
    f = facts(t)
    mask = cards.to_mask(bits) & (f.higher_out == 0)
    return cards.from_mask(mask)


def moon_is_on(t: Table) -> np.ndarray:
    others_clean = t.points_taken[:, 1:].sum(axis=1) == 0
    in_hand = cards.count(t.hand).astype(np.int64)
    controlled = cards.count(bosses(t, t.hand)).astype(np.int64)
    hearts_mine = has(t.hand, AH) | (t.points_taken[:, 0] > 0)
    queen_mine = has(t.hand, QS) | (t.points_taken[:, 0] >= 13)
    strong = (controlled >= in_hand - 1) & (in_hand >= 4)
    return others_clean & hearts_mine & queen_mine & strong & ~t.passing


def shoot_the_moon(t: Table) -> np.ndarray:
    shooting = moon_is_on(t)
    if not shooting.any():
        return np.full(t.n, -1)
    lead_or_follow = np.where(t.void_now, 0, t.legal)
    choice = pick(np.where(shooting, lead_or_follow, 0), HIGH_RANK)
    discard = without(t, t.legal & ~POINT_CARDS, np.uint64(0))
    return np.where(shooting & t.void_now, pick(np.where(shooting, discard, 0), LOW_RANK), choice)


def moon_threat(t: Table) -> np.ndarray:
    taken = t.points_taken
    total = taken.sum(axis=1)
    seat = taken.argmax(axis=1)
    alone = (taken.max(axis=1) == total) & (total >= opt("moon_threat", MOON_THREAT_POINTS)) & (seat != 0)
    points_left = ((facts(t).out | t.hand) & POINT_CARDS) != 0
    return np.where(alone & points_left & ~t.passing, seat, -1)


def stop_the_moon(t: Table) -> np.ndarray:
    shooter = moon_threat(t)
    active = shooter >= 0
    if not active.any():
        return np.full(t.n, -1)
    take = active & t.following & (t.trick_points > 0) & ((t.legal & t.beats) != 0)
    choice = np.where(take, pick(t.legal & t.beats, HIGH_RANK), -1)
    winner_ok = t.winning_seat != shooter
    points = safe_discards(t) & POINT_CARDS
    dump = active & t.void_now & winner_ok & (points != 0)
    choice = np.where(dump, pick(points, normal.QUEEN_FIRST), choice)
    keep = active & t.void_now & ~winner_ok
    top_heart = np.where(t.hand & HEARTS, cards.BIT[np.maximum(cards.highest_card(t.hand & HEARTS), 0)], 0)
    shed = without(t, safe_discards(t) & ~top_heart & ~HEARTS, np.uint64(0))
    choice = np.where(keep & (choice < 0), pick(np.where(keep, shed, 0), HIGH_RANK), choice)
    lead_heart = active & t.leading & ((t.legal & HEARTS & bosses(t, t.hand & HEARTS)) != 0)
    return np.where(lead_heart & (choice < 0), pick(t.legal & HEARTS, HIGH_RANK), choice)


# ---- play -----------------------------------------------------------------------------------

def dump_queen_on_the_winner(t: Table) -> np.ndarray:
    return pick(safe_discards(t) & QS, HIGH_RANK)


def shed_on_first_trick(t: Table) -> np.ndarray:
    first = t.following & (t.trick_number == 0) & (t.trick_points == 0)
    protected = t.first_trick_protection
    return pick(np.where(first & protected, t.legal, 0), HIGH_RANK)


def follow_must_win(t: Table) -> np.ndarray:
    """Following when every legal card takes the trick as it stands, with seats still to play."""
    f = facts(t)
    active = t.following & ~t.last_to_play & ((t.legal & ~t.beats) == 0)
    if not active.any():
        return np.full(t.n, -1)
    spade_risk = (t.led_suit == cards.SPADES) & t.queen_out & ~has(t.trick_bits, QS)
    void_later = (f.later & t.voids[np.arange(t.n), :, np.maximum(t.led_suit, 0)]).any(axis=1)
    mode = opt("fmw", "all")
    if mode == "spades":
        low = spade_risk
    elif mode == "all":
        low = np.ones(t.n, bool)
    elif mode == "void":
        low = spade_risk | void_later
    else:
        return np.full(t.n, -1)
    legal = without(t, t.legal, QS)
    if mode == "all" and opt("fmw_sure", 1):
        later_suit = np.bitwise_or.reduce(np.where(f.later, f.holds, NONE), axis=1) & cards.SUIT_BITS[np.maximum(t.led_suit, 0)]
        top = np.where(later_suit != 0, cards.highest_card(later_suit), -1)
        catchable = legal & ~above(top)  # cards a later seat may still overtake
        sure = catchable == 0
        if opt("fmw_sure", 1) == 2:
            return np.where(active, np.where(sure, pick(legal, HIGH_RANK), pick(catchable, HIGH_RANK)), -1)
        return np.where(active, np.where(sure, pick(legal, HIGH_RANK), pick(legal, LOW_RANK)), -1)
    return np.where(active, np.where(low, pick(legal, LOW_RANK), pick(legal, HIGH_RANK)), -1)


def lead_by_estimate(t: Table) -> np.ndarray:
    leading = t.leading & ~t.passing
    if not leading.any() or opt("lead", "count") != "est":
        return np.full(t.n, -1)
    f = facts(t)
    n = t.n
    held_back = np.where(t.queen_out, SPADE_HONOURS, QS) | keepers(t)
    candidates = np.where(leading, without(t, t.legal, held_back), 0)
    h = f.higher_out.astype(np.float64)
    l = f.lower_out.astype(np.float64)
    seats = np.arange(4)
    opponents = (seats > 0) & (seats < t.players[:, None])  # [N, 4]
    # [N, 4 seats, 4 suits]: may the seat hold cards of the suit
    holds_suit = (f.holds[:, :, None] & cards.SUIT_BITS[None, None, :]) != 0
    can_follow = holds_suit & opponents[:, :, None]
    k = can_follow.sum(axis=1)  # [N, 4 suits]
    q = np.where(k > 0, (k - 1) / np.maximum(k, 1), 0.0)[:, SUITS]  # [N, 52]
    last = t.players - 1
    p_stay = np.ones((n, 52))
    qh, ql = q ** h, q ** l
    for r in (1, 2, 3):
        follows = can_follow[:, r, :][:, SUITS]
        is_last = (r == last)[:, None]
        stay = np.where(is_last, qh, 1.0 - (1.0 - qh) * ql)
        p_stay *= np.where(follows, stay, 1.0)
    p_win = np.where((l == 0) & (h > 0), 0.0, np.where(h == 0, 1.0, p_stay))
    # Points expected in the trick if I win it.
    void_opp = opponents[:, :, None] & ~holds_suit  # [N, 4, 4] (void or nothing left in suit)
    queen_holders = np.maximum((has(f.holds, QS) & opponents).sum(axis=1), 1)
    queen_p = np.where(t.queen_out, 1.0 / queen_holders, 0.0)  # [N]
    may_points = (f.holds & POINT_CARDS) != 0  # [N, 4]
    dumpers = (void_opp & may_points[:, :, None]).sum(axis=1)[:, SUITS]  # [N, 52]
    queen_dump = (void_opp & has(f.holds, QS)[:, :, None]).any(axis=1)[:, SUITS]
    hearts_out = f.suit_out[:, cards.HEARTS][:, None]
    pts = np.where(SUITS == cards.HEARTS, 1.0 + np.minimum(k[:, cards.HEARTS][:, None], hearts_out), 0.0)
    pts = pts + dumpers * opt("dump_pts", 1.5) + queen_dump * 13.0 * queen_p[:, None]
    cost = p_win * (pts + opt("lead_cost", 1.0))
    score = -cost + opt("rank_w", 0.01) * RANKS
    bleed = (t.queen_out & ~has(t.hand, QS))[:, None] & cards.to_mask(SPADES_BELOW_QUEEN)[None, :]
    score += np.where(bleed, opt("bleed", 0.0), 0.0)
    return pick(candidates, score)


def lead_by_counting(t: Table) -> np.ndarray:
    leading = t.leading & ~t.passing
    if not leading.any():
        return np.full(t.n, -1)
    f = facts(t)
    held_back = np.where(t.queen_out, SPADE_HONOURS, QS) | keepers(t)
    candidates = np.where(leading, without(t, t.legal, held_back), 0)
    higher_out = f.higher_out
    lower_out = f.lower_out
    score = np.where(higher_out > 0, 20.0, -40.0) - opt("c_low", 4.0) * np.minimum(lower_out, 5) + opt("c_high", 1.0) * np.minimum(higher_out, 3)
    opponents_void = t.voids[:, 1:, :].any(axis=1)[:, SUITS]
    score -= np.where(opponents_void & (lower_out > 0), opt("c_void", 15.0), 0.0)
    if opt("win_dump", 1):
        seats = np.arange(4)
        opponents = (seats > 0) & (seats < t.players[:, None])
        holds_suit = (f.holds[:, :, None] & cards.SUIT_BITS[None, None, :]) != 0  # [N, 4, 4]
        cannot = opponents[:, :, None] & ~holds_suit
        may_points = ((f.holds & POINT_CARDS) != 0)[:, :, None]
        dumpers = (cannot & may_points).sum(axis=1)[:, SUITS]
        queen_dump = (cannot & has(f.holds, QS)[:, :, None]).any(axis=1)[:, SUITS]
        score -= np.where(higher_out == 0, opt("wd_pts", 3.0) * dumpers + opt("wd_q", 10.0) * queen_dump, 0.0)
    bleed = (t.queen_out & ~has(t.hand, QS))[:, None] & cards.to_mask(SPADES_BELOW_QUEEN)[None, :]
    score += np.where(bleed, opt("c_bleed", 5.0), 0.0) - opt("c_len", 2.0) * normal.suit_lengths(t)
    return pick(candidates, score)


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
        follow_must_win,
        lead_by_estimate,
        lead_by_counting,
    ) + tuple(r for r in normal.NormalBot.rules if not r.__name__.startswith("pass_"))
