"""Worlds consistent with what one seat saw: the cards it has not seen, placed at random.

A seat knows its own hand, every card played and by whom, the cards it passed and received, and
the suits the other seats showed they lack. A *world* is a full placement of the cards it has not
seen (the *hidden* cards) that this seat cannot rule out. The search player deals such worlds to
roll out its candidate cards; a seat record (a game app's description of one seat's situation)
needs one to rebuild an engine state. This module is the one place that places hidden cards; it
knows nothing of agents or training.

A placement problem, per world (all arrays batch-first, one row per world)::

    hidden    [N] uint64 (or [N, 52] bool)  the cards to place
    room      [N, H] int                    how many hidden cards each holder receives
    may_hold  [N, 52, H] bool               holder h may hold card c

The *holders* are the seats other than the viewer, plus the dead (set-aside) pile where the rules
have dead cards. ``room`` is a seat's hand size less the cards it played and less the cards
already known to be in its hand (such as those the viewer passed it and it has not played yet);
the dead pile's room is the number of dead cards. ``may_hold`` carries every inference: a seat
that showed a void holds no card of that suit (:func:`may_hold_from_voids`, by the one rule of who
may hold a card, ``holding.may_hold``), a card known passed
to a seat goes there only, a seat whose earlier play would have been illegal had it held a card
does not hold it (the seat records ask the engine's legal-play rule), and so on.

The method (:func:`place`): the cards are placed one by one, the most constrained first (fewest
possible holders, random order among equals); each goes to a holder drawn in proportion to its
remaining room among the holders that may hold it *and* leave the rest placeable. "Placeable" is
Hall's condition for the remaining cards: for every set S of holders (all ``2**H`` of them), the
unplaced cards that only holders in S may hold fit in S's room. The condition is checked up front
(:func:`check`), so a view no deal satisfies raises :class:`NoConsistentWorld` naming the game
and a card that fits no holder, and once it holds, the placement never gets stuck. Everything is
array operations over the whole batch; the only Python loop runs over the (at most 52) cards.

The draw is not exactly uniform over the consistent worlds (that would need rejection sampling,
whose cost grows with the constraints); it is the proportional-to-room draw above. Given a
*belief* (odds for each card's holders, from a model of the players: ``agents.belief``), each
card's draw is weighted by those odds as well, so the worlds look like the deals the players'
plays suggest; the constraints hold exactly either way.

:func:`hidden_cards` builds the whole problem for the seat to act in engine states, from what that
seat may know (its hand, the plays, its own pass, the voids shown): a :class:`HiddenCards`, whose
:meth:`HiddenCards.sample` deals worlds. :func:`deal_seat_views` rebuilds whole engine states from
a seat's view of its observation (``seat_view.SeatView``), its unseen cards dealt this way: the
search's sampled deals. Nothing outside ``hearts_env`` writes ``State`` fields; what needs states
consistent with a seat's knowledge asks here.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from . import cards, holding
from .compiled import jit
from .rules import Rules
from .seat_view import SeatView
from .state import PASS, PLAY, State

#: The holder id of the dead (set-aside) pile in :attr:`View.holder_seats`.
DEAD = -1


class NoConsistentWorld(ValueError):
    """No placement of the hidden cards satisfies the view (sizes, voids, known cards).

    ``game`` is the row of the world in the batch, ``card`` a card that fits no holder (``None``
    when the rooms do not add up to the number of hidden cards), ``holders`` the holders the
    card's set of cards is confined to.
    """

    def __init__(self, message: str, game: int, card: int | None = None, holders: tuple[int, ...] = ()):
        super().__init__(message)
        self.game = game
        self.card = card
        self.holders = holders


# ---------------------------------------------------------------------------------------------
# Building constraints
# ---------------------------------------------------------------------------------------------


def may_hold_from_voids(voids: np.ndarray) -> np.ndarray:
    """``[N, 52, H]`` bool from ``voids[N, H, 4]``: a holder that showed it is void in a suit may
    hold no card of that suit; any other card it may hold. (Give the dead pile a row of ``False``.)"""
    voids = np.asarray(voids, dtype=bool)
    n, h = voids.shape[:2]
    # (``holding.may_hold`` of any card: the hidden set and the room carry the rest of what the viewer knows)
    held = holding.may_hold_sets(np.full((n, h), cards.ALL_BITS), np.zeros(n, dtype=np.uint64), voids,
                                 np.zeros((n, h), dtype=bool))
    return np.moveaxis(cards.to_mask(held), 2, 1)


def _hidden_mask(hidden: np.ndarray) -> np.ndarray:
    hidden = np.asarray(hidden)
    if hidden.dtype == bool:
        return hidden.reshape(-1, cards.NUM_CARDS)
    return cards.to_mask(hidden.astype(np.uint64).reshape(-1))


@functools.cache
def _subset_tables(h: int) -> tuple[np.ndarray, np.ndarray]:
    """``member[H, 2**H]``: holder in set; ``within[2**H, 2**H]``: set m is inside set s."""
    sets = np.arange(1 << h)
    member = ((sets[None, :] >> np.arange(h)[:, None]) & 1).astype(np.int64)
    within = ((sets[:, None] & ~sets[None, :]) == 0).astype(np.int64)
    return member, within


def _problem(hidden, room, may_hold):
    """The arrays of a placement problem, checked for shape; per card its holder set as bits."""
    mask = _hidden_mask(hidden)
    n = mask.shape[0]
    room = np.asarray(room, dtype=np.int64)
    may_hold = np.asarray(may_hold, dtype=bool)
    if room.ndim != 2 or room.shape[0] != n:
        raise ValueError(f"room must be [N, H] with N = {n} worlds, got shape {room.shape}")
    h = room.shape[1]
    if may_hold.shape != (n, cards.NUM_CARDS, h):
        raise ValueError(f"may_hold must be [N, 52, H] = {(n, cards.NUM_CARDS, h)}, got {may_hold.shape}")
    if not 1 <= h <= 8:
        raise ValueError(f"1 to 8 holders (the sets of holders number 2**H), got {h}")
    holder_set = (may_hold.astype(np.int64) << np.arange(h)).sum(axis=2)  # [N, 52] bits of holders
    return mask, room, may_hold, holder_set


def _set_counts(mask: np.ndarray, holder_set: np.ndarray, h: int) -> np.ndarray:
    """``[N, 2**H]``: how many cards of ``mask`` have exactly each holder set."""
    n, m = mask.shape[0], 1 << h
    flat = (np.arange(n)[:, None] * m + holder_set)[mask]
    return np.bincount(flat, minlength=n * m).reshape(n, m)


# ---------------------------------------------------------------------------------------------
# Checking and placing
# ---------------------------------------------------------------------------------------------


def check(hidden: np.ndarray, room: np.ndarray, may_hold: np.ndarray) -> None:
    """Raise :class:`NoConsistentWorld` unless every world of the batch has a placement.

    A placement exists exactly when the rooms add up to the number of hidden cards and Hall's
    condition holds: for every set S of holders, the hidden cards that only holders in S may
    hold number at most S's room (S empty: no card may be held by nobody).
    """
    mask, room, may_hold, holder_set = _problem(hidden, room, may_hold)
    _check(mask, room, holder_set)


def _check(mask: np.ndarray, room: np.ndarray, holder_set: np.ndarray) -> None:
    h = room.shape[1]
    member, within = _subset_tables(h)
    need = _set_counts(mask, holder_set, h) @ within  # [N, 2**H] cards confined to each set
    capacity = room @ member  # [N, 2**H]
    short = (need > capacity).any(axis=1)
    if (room < 0).any():
        g = int((room < 0).any(axis=1).nonzero()[0][0])
        raise NoConsistentWorld(f"game {g}: negative room {room[g].tolist()} (a holder has too many cards)",
                                g)
    if short.any():
        g = int(short.nonzero()[0][0])
        bad = (need[g] > capacity[g]).nonzero()[0]
        sizes = member.sum(axis=0)[bad]
        s = int(bad[np.lexsort((bad, sizes))[0]])  # the smallest set of holders that is short
        confined = [c for c in range(cards.NUM_CARDS) if mask[g, c] and holder_set[g, c] & ~s == 0]
        card = min(confined, key=lambda c: (bin(int(holder_set[g, c])).count("1"), c))
        holders = tuple(i for i in range(h) if s >> i & 1)
        text = cards.format_cards(confined)
        if not holders:
            why = f"no holder may hold {text}"
        else:
            names = ", ".join(map(str, holders))
            plural = "s" if len(confined) > 1 else ""
            why = (f"{len(confined)} hidden card{plural} ({text}) may be held only by "
                   f"holder{'s' if len(holders) > 1 else ''} {names}, with room for {int(capacity[g, s])}")
        raise NoConsistentWorld(
            f"game {g}: no placement of the hidden cards fits the view: {why}, so "
            f"{cards.card_text(card)} fits no holder", g, card, holders)
    total = mask.sum(axis=1)
    off = room.sum(axis=1) != total
    if off.any():
        g = int(off.nonzero()[0][0])
        raise NoConsistentWorld(f"game {g}: the holders have room for {int(room[g].sum())} cards, but "
                                f"{int(total[g])} are hidden", g)


def place(hidden: np.ndarray, room: np.ndarray, may_hold: np.ndarray, rng: np.random.Generator,
          belief: np.ndarray | None = None, copies: int = 1) -> np.ndarray:
    """``[N * copies, H]`` uint64: the hidden cards of each problem dealt to its holders at random,
    ``copies`` worlds per problem (problem ``g``'s are rows ``g*copies .. g*copies+copies-1``; the
    same worlds as placing each problem repeated ``copies`` times, for less work).

    Every hidden card goes to exactly one holder that may hold it, and holder h receives exactly
    ``room[:, h]`` cards (the module docstring has the method). Raises :class:`NoConsistentWorld`
    when some problem has no such placement (its ``game`` is the row of its first world).

    ``belief`` ``[N, 52, H]`` (optional): how likely each holder is to hold each card, from a model
    of the players (``agents.belief``). A card then goes to holder h in proportion to
    ``belief[c, h]`` times the share of h's room still free, which is the plain draw when the
    belief is each holder's share of the room, and the belief itself for the first card placed.
    The constraints hold exactly either way: the belief only moves the odds among the holders
    that keep the rest placeable.
    """
    mask, room, may_hold, holder_set = _problem(hidden, room, may_hold)
    try:
        _check(mask, room, holder_set)
    except NoConsistentWorld as err:
        err.game *= copies
        raise
    n, h = room.shape
    if belief is not None:
        belief = np.asarray(belief, dtype=np.float64)
        if belief.shape != may_hold.shape:
            raise ValueError(f"belief must be [N, 52, H] = {may_hold.shape}, got {belief.shape}")
        # A holder the belief rules out entirely may still be the only one left: never weigh 0.
        belief = np.maximum(belief, 1e-6) / np.maximum(room, 1)[:, None, :]
    member, within = _subset_tables(h)
    # Slack of each set S of holders: its room less the unplaced cards only holders in S may hold.
    # Hall's condition is "no slack is negative"; a holder in a set without slack cannot take a
    # card that holders outside the set could also take (the set's own cards would not fit).
    slack = room @ member - _set_counts(mask, holder_set, h) @ within  # [N, 2**H]
    freedom = may_hold.sum(axis=2)  # [N, 52]
    # Each world has its own room and slack (they change as its cards are placed); what it reads
    # of its problem (the hidden cards, who may hold them, the belief) is its problem's, at row
    # world // copies.
    room, slack = np.repeat(room, copies, axis=0), np.repeat(slack, copies, axis=0)
    worlds = n * copies
    key = np.where(mask[:, None, :], freedom[:, None, :] + rng.random((n, copies, cards.NUM_CARDS)), np.inf)
    order = np.argsort(key.reshape(worlds, cards.NUM_CARDS), axis=1)  # most constrained first, random among equals
    steps = int(mask.sum(axis=1).max(initial=0))
    draws = rng.random((steps, worlds))
    hands = np.zeros((worlds, h), dtype=np.uint64)
    odds = np.zeros((0, 0, 0)) if belief is None else np.ascontiguousarray(belief)
    stuck = np.full(2, -1, dtype=np.int64)
    _place(order, mask, may_hold, holder_set, copies, room, slack, member, within, draws, odds, hands, stuck)
    if stuck[0] >= 0:  # cannot happen once the check passed
        g = int(stuck[0])
        raise NoConsistentWorld(f"game {g}: {cards.card_text(int(stuck[1]))} fits no holder", g, int(stuck[1]))
    return hands


@jit
def _place(order, mask, may_hold, holder_set, copies, room, slack, member, within, draws, odds, hands, stuck):
    """:func:`place`'s draw, world by world: the cards in ``order``, each to a holder drawn with
    ``draws[j, g]`` in proportion to its room (times ``odds`` when given) among the holders that
    may hold it and keep every set's slack (``room``, ``slack`` and ``hands`` updated in place).
    World ``g`` reads its problem's ``mask``, ``may_hold``, ``holder_set`` and ``odds`` at row
    ``g // copies``. A card that fits no holder sets ``stuck`` to its world and card."""
    n, h = room.shape
    sets = slack.shape[1]
    weighted = odds.shape[0] > 0
    cum = np.empty(h, dtype=np.float64)
    for g in range(n):
        q = g // copies
        for j in range(draws.shape[0]):
            c = order[g, j]
            if not mask[q, c]:
                continue
            for s in range(sets):  # the card is no longer unplaced
                slack[g, s] += within[holder_set[q, c], s]
            total = 0.0
            for i in range(h):
                blocked = False
                for s in range(sets):
                    if slack[g, s] == 0 and member[i, s] != 0:
                        blocked = True
                        break
                if may_hold[q, c, i] and room[g, i] > 0 and not blocked:
                    total += room[g, i] * odds[q, c, i] if weighted else room[g, i]
                cum[i] = total
            if total == 0:
                stuck[0], stuck[1] = g, c
                return
            to = 0
            for i in range(h):
                if draws[j, g] * total >= cum[i]:
                    to += 1
            to = min(to, h - 1)
            hands[g, to] |= np.uint64(1) << np.uint64(c)
            room[g, to] -= 1
            for s in range(sets):
                slack[g, s] -= member[to, s]


# ---------------------------------------------------------------------------------------------
# The view of the seat to act in engine states
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class HiddenCards:
    """What one seat per game knows about where the cards are (``N`` games, ``H`` holders).

    Holder ``i < P - 1`` is the seat ``i + 1`` places after the viewer (left first); with dead
    cards the last holder is the dead pile. Built by :func:`hidden_cards`; it holds no hidden card.
    """

    seat: np.ndarray  # [N] int64 the viewing seat
    holder_seats: np.ndarray  # [N, H] int64 the seat of each holder, DEAD for the dead pile
    own: np.ndarray  # [N] uint64 the viewer's hand
    known: np.ndarray  # [N, H] uint64 cards the viewer knows a holder holds (its pass, not played yet)
    hidden: np.ndarray  # [N] uint64 the cards to place
    room: np.ndarray  # [N, H] int64 hidden cards each holder holds
    may_hold: np.ndarray  # [N, 52, H] bool

    def sample(self, rng: np.random.Generator, k: int = 1, belief: np.ndarray | None = None) -> np.ndarray:
        """``[N * k, H]`` uint64: each holder's whole holding (known cards and placed hidden
        cards) in ``k`` worlds per game; game ``g``'s worlds are rows ``g*k .. g*k+k-1``.
        ``belief`` ``[N, 52, H]``: the odds of each card's holders (see :func:`place`)."""
        return np.repeat(self.known, k, axis=0) | place(self.hidden, self.room, self.may_hold, rng, belief, copies=k)


def hidden_cards(state: State, seat: np.ndarray | int | None = None) -> HiddenCards:
    """The :class:`HiddenCards` of ``seat`` (default: the seat to act) in each game of ``state``.

    It reads only what that seat may know: its hand, the cards played by each seat, its own pass
    (after the exchange the cards it passed and has not seen played are with the receiver), the
    voids shown, and the public counts. Other inferences (say, from the opening lead in a game
    with dead cards) are the caller's, as extra ``False`` entries in ``may_hold``.
    """
    rules, p = state.rules, state.num_players
    n = state.batch_size
    games = np.arange(n)
    seat = state.current_player if seat is None else np.broadcast_to(np.asarray(seat, dtype=np.int64), (n,))
    seat = np.asarray(seat, dtype=np.int64)
    if (seat < 0).any() or (seat >= p).any():
        raise ValueError(f"seat must be 0..{p - 1} (a finished game has no seat to act)")
    dead = rules.dead_cards > 0
    others = (seat[:, None] + 1 + np.arange(p - 1)[None, :]) % p  # [N, P-1]
    holder_seats = np.concatenate([others, np.full((n, 1), DEAD)], axis=1) if dead else others
    h = holder_seats.shape[1]
    own = state.hands[games, seat]
    played = np.bitwise_or.reduce(state.played, axis=1)
    offsets = np.asarray(rules.pass_offsets)[state.hand_number % len(rules.pass_cycle)]
    exchanged = (state.phase != PASS) & (offsets > 0)
    known = np.zeros((n, h), dtype=np.uint64)
    receiver = np.maximum(offsets - 1, 0)
    known[games, receiver] = np.where(exchanged, state.passed[games, seat] & ~played, cards.NO_CARDS)
    hidden = rules.deck_bits & ~own & ~played & ~np.bitwise_or.reduce(known, axis=1)
    room = np.empty((n, h), dtype=np.int64)
    room[:, :p - 1] = (rules.hand_size - cards.count(np.take_along_axis(state.played, others, axis=1))
                       - cards.count(known[:, :p - 1]))
    voids = np.take_along_axis(state.voids, others[:, :, None], axis=1)  # [N, P-1, 4]
    if dead:
        room[:, -1] = rules.dead_cards
        voids = np.concatenate([voids, np.zeros((n, 1, 4), dtype=bool)], axis=1)
    return HiddenCards(seat=seat.copy(), holder_seats=holder_seats, own=own, known=known, hidden=hidden, room=room,
                may_hold=may_hold_from_voids(voids))


# ---------------------------------------------------------------------------------------------
# Engine states from a seat's view of its observation
# ---------------------------------------------------------------------------------------------


def deal_seat_views(rules: Rules, view: SeatView, k: int, rng: np.random.Generator,
                    belief: np.ndarray | None = None) -> State:
    """``[N * k]`` one-hand engine states, ``k`` per seat of ``view`` (rows ``b*k .. b*k+k-1``):
    each the game as that seat knows it, in its relative seats (it is seat 0, to play), with the
    cards it has not seen dealt at random among the other seats (and the dead cards) consistently
    with what it saw (see :func:`hidden_cards`). ``belief`` ``[N, 52, H]``: the odds of each
    unseen card's holders (see :func:`place`).

    What the observation does not hold is filled so that the rest of the hand plays and scores as
    it would: the cards each seat won so far are the point cards among the finished tricks' cards,
    by the points each took (which of the other cards it won changes nothing), and the other
    seats' passes are unknown (in the states they remember only what this seat passed to or got
    from them). Every view must be at a card play (phase PLAY, seat 0 to act).
    """
    p = rules.num_players
    if not (view.phase == PLAY).all() or not (view.to_act == 0).all():
        raise ValueError("deal_seat_views: every view must be of the seat to play a card")
    if (view.players != p).any():
        raise ValueError(f"deal_seat_views: the views are not of {p}-player games as the rules ({rules.name}) say")
    n = view.n
    # A hand number giving each pass offset (0 for an offset the rules never pass by).
    hand_of_offset = np.zeros(p, dtype=np.int64)
    for hand, o in reversed(list(enumerate(rules.pass_offsets))):  # (the first hand of each offset)
        hand_of_offset[o] = hand
    offset = view.pass_offset

    # One state per view, its hidden cards dealt k times, then each state repeated for its k deals.
    state = State.empty(rules, n)
    state.phase[:] = PLAY
    state.current_player[:] = 0
    state.hand_number[:] = hand_of_offset[offset]
    state.final_hand[:] = state.hand_number  # one hand: stop after it
    state.scores[:] = view.score_points(rules.target_score)[:, :p]
    state.played[:] = view.played_by[:, :p]
    state.voids[:] = view.voids[:, :p]
    state.trick[:] = view.trick_card[:, :p]
    state.num_in_trick[:] = view.in_trick
    state.leader[:] = np.maximum(view.leader, 0)
    state.trick_number[:] = np.rint(view.trick_number * rules.hand_size).astype(np.int64)
    state.hearts_broken[:] = view.hearts_broken
    state.legal[:] = view.legal
    # Passes as this seat knows them: its own, and the one it received.
    rows = (offset > 0).nonzero()[0]
    state.passed[rows, 0] = view.passed[rows]
    state.passed[rows, (p - offset[rows]) % p] = view.received[rows]
    state.taken[:] = _cards_taken(view.points_taken[:, :p], view.played & ~view.trick_bits, view.jack_taken[:, :p])
    state.hands[:, 0] = view.hand

    holdings = hidden_cards(state, 0).sample(rng, k, belief)
    state = state.take(np.repeat(np.arange(n), k))
    state.hands[:, 1:] = holdings[:, :p - 1]
    if rules.dead_cards:
        state.dead[:] = holdings[:, -1]
    state.dealt[:] = state.hands | state.played
    return state


def _cards_taken(points: np.ndarray, done: np.ndarray, jack: np.ndarray) -> np.ndarray:
    """``[N, P]`` cards won so far, as far as scoring needs them: the point cards among ``done``
    (the cards of finished tricks), by the ``points`` each seat took; J♦ with the seat that took it."""
    n, p = points.shape
    taken = np.zeros((n, p), dtype=np.uint64)
    queen_done = (done & cards.BIT[cards.QUEEN_OF_SPADES]) != 0
    # Q♠ goes to a seat with 13 points or more. Two seats with exactly 13 (Q♠ and all the
    # hearts) cannot be told apart here; both get Q♠ then, and the points still come out right.
    has_queen = queen_done[:, None] & (points >= 13)
    taken |= np.where(has_queen, cards.BIT[cards.QUEEN_OF_SPADES], cards.NO_CARDS)
    hearts_each = points - 13 * has_queen  # [N, P]
    heart_slice = slice(13 * cards.HEARTS, 13 * cards.HEARTS + 13)
    heart_done = cards.to_mask(done)[:, heart_slice]  # [N, 13]
    position = np.cumsum(heart_done, axis=1)  # 1-based among the hearts played
    bound = np.cumsum(hearts_each, axis=1)  # [N, P]
    owner = (position[:, :, None] > bound[:, None, :]).sum(axis=2)  # seat of each heart
    for seat in range(p):
        full = np.zeros((n, cards.NUM_CARDS), dtype=bool)
        full[:, heart_slice] = heart_done & (owner == seat)
        taken[:, seat] |= cards.from_mask(full)
    taken |= np.where(jack, cards.BIT[cards.JACK_OF_DIAMONDS], cards.NO_CARDS)
    return taken
