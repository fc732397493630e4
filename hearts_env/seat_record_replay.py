"""Rebuilding the engine state of seat records by replay: many records at once, compiled, and each
record's own error worded.

One engine state holds a game per record (records of one game rules and phase). The deals are
built as arrays; then one compiled call (:func:`_replay_moves`) steps every record's pass picks
and plays through the engine's own step (``engine.step_buffer``, the k-th move of every record in
one step), checking before each that it is that seat's turn and that the card is legal, and, on
the first replay, asking the engine's legal-play rule which unseen cards each other seat may also
have held (``play.legal_if_held``). A
record that fails is left where it failed and its error is worded from what the replay saw there
(the seat to act, the legal cards), in the order the checks come: the cards each seat would hold,
the opening card, the deal, each move, whose turn it is at the end, the placement of the unseen
cards. So a record's error does not depend on the batch it came in, and one record is a batch of one.

The placement: a first replay lets the other seats hold only the cards they surely held (what they
played, what this seat passed them), which tells which unseen cards each may also have held; the
unseen cards are then placed by one ``worlds.place`` call (a fixed seed) and the hand replayed on
that deal: the state observed. Nothing observed depends on where the unseen cards went.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import cards, engine, holding, worlds
from .cards import bit, nth_of
from .compiled import jit
from .constants import PR_PLAYERS, constants, state_views
from .engine import step_buffer, update_legal_buffer
from .play import legal_if_held
from .rules import Rules
from .seat_record_parse import SeatRecord, SeatRecordError, fail
from .state import CURRENT_PLAYER, HANDS, LEGAL, NUM_IN_TRICK, PASS, PHASE, PLAY, State

# What a record's move met (``failure[g, 0]``): nothing, not that seat's turn, an illegal card.
FINE, WRONG_TURN, ILLEGAL = 0, 1, 2


class Replay:
    """The replay of records of one game rules and phase: ``state`` (a game per record), ``seats``
    (each record's seat), ``errors`` (each record's error or None) and, for the play phase,
    ``may_hold[M, P]`` (who may hold each card, as ``seat_record.view`` gives it)."""

    def __init__(self, rules: Rules, recs: Sequence[SeatRecord]):
        self.rules, self.recs = rules, list(recs)
        m = len(self.recs)
        self.seats = np.array([r.seat for r in self.recs], dtype=np.int64)
        self.errors: list[SeatRecordError | None] = [None] * m
        self.failed = np.zeros(m, dtype=bool)
        self.may_hold = np.zeros((m, rules.num_players), dtype=np.uint64)
        self.state = self._passing() if self.recs and self.recs[0].phase == "pass" else self._playing()

    def fail(self, j: int, message: str) -> None:
        """Record ``j`` fails with ``message``, unless it failed before."""
        if not self.failed[j]:
            self.failed[j] = True
            self.errors[j] = fail(message)

    # -- the pass phase ------------------------------------------------------------------------

    def _passing(self) -> State:
        rules, recs, me = self.rules, self.recs, self.seats
        p, size, pick = rules.num_players, rules.hand_size, rules.pass_count
        m = len(recs)
        hand = np.array([cards.bits_of(r.hand) for r in recs], dtype=np.uint64)
        # The record's seat gets its hand; the other seats, in order, the unseen cards in order; the
        # dead pile the rest (no card has been played: nothing constrains the placement).
        unseen = cards.to_mask(rules.deck_bits & ~hand)
        other = (np.cumsum(unseen, axis=1) - 1) // size  # 0 = the first seat other than ``me``
        owner = np.where(unseen & (other < p - 1), other + (other >= me[:, None]), -1)
        dealt = np.stack([cards.from_mask(owner == s) for s in range(p)], axis=1)
        dealt[np.arange(m), me] = hand
        state = self._start(dealt)
        # The seats before this one have chosen (their picks are secret: their lowest cards), then this one.
        picks = np.full((m, p, pick), -1, dtype=np.int64)
        for s in range(p - 1):
            for k in range(pick):
                picks[:, s, k] = np.where(me > s, cards.nth_card(dealt[:, s], np.full(m, k)), -1)
        picks[np.arange(m), me] = _padded([r.passed for r in recs], pick)
        none = np.full((m, 1), -1, dtype=np.int64)
        self._moves(state, picks, none, none, learn=False)
        self._check_turns(state)
        return state

    # -- the play phase ------------------------------------------------------------------------

    def _playing(self) -> State:
        rules, recs, me = self.rules, self.recs, self.seats
        p, size, pick = rules.num_players, rules.hand_size, rules.pass_count
        m = len(recs)
        rows, seats = np.arange(m), np.arange(p)
        offset = np.array([r.pass_offset for r in recs], dtype=np.int64)
        known = np.zeros((m, p), dtype=np.uint64)  # the cards each other seat surely held after the pass
        mine = np.zeros(m, dtype=np.uint64)  # this seat's cards after the exchange
        unseen = np.zeros(m, dtype=np.uint64)
        dead = np.zeros(m, dtype=np.uint64)  # unseen cards that must be dead (``forced_dead``)
        plays = [r.plays() for r in recs]
        for j, r in enumerate(recs):
            held, own = [0] * p, int(cards.bits_of(r.hand))
            for _, seat, card in plays[j]:
                if seat == r.seat:
                    own |= 1 << card
                else:
                    held[seat] |= 1 << card
            if r.pass_offset:
                held[(r.seat + r.pass_offset) % p] |= int(cards.bits_of(r.passed))
            over = [s for s in range(p) if s != r.seat and held[s].bit_count() > size]
            if over:
                self.fail(j, f"seat {over[0]} would hold {held[over[0]].bit_count()} cards, more than a hand of {size}")
                continue
            hidden = int(rules.deck_bits) & ~own
            for h in held:
                hidden &= ~h
            try:
                forced = forced_dead(r, hidden)
            except SeatRecordError as err:
                self.fail(j, str(err).removeprefix("seat record: "))
                continue
            known[j], mine[j], unseen[j], dead[j] = held, own, hidden, cards.bits_of(forced)
        others = (me[:, None] + 1 + np.arange(p - 1)) % p  # the holders: the other seats, then the dead pile
        room = np.concatenate([size - cards.count(known[rows[:, None], others]),
                               np.full((m, 1), rules.dead_cards)], axis=1)
        hidden = cards.to_mask(unseen)
        to_seats = ~cards.to_mask(dead)  # the forced-dead cards go to the dead pile only
        turns = _padded([[seat for _, seat, _ in each] for each in plays], max(1, max(map(len, plays))))
        played = _padded([[card for _, _, card in each] for each in plays], turns.shape[1])
        passed_bits = np.array([cards.bits_of(r.passed) for r in recs], dtype=np.uint64)
        passed, received = _padded([r.passed for r in recs], pick), _padded([r.received for r in recs], pick)

        def replay(holdings: np.ndarray, learn: bool) -> tuple[State, np.ndarray]:
            """A game per record from the holders' ``holdings``, its passes and plays stepped. With
            ``learn``, the other seats hold only their known cards, and the cards each seat may also
            have held (those that would have left each of its plays legal) come back ``[M, P]``."""
            post = np.zeros((m, p), dtype=np.uint64)  # what every seat held after the exchange
            post[rows[:, None], others] = known[rows[:, None], others] | holdings[:, :p - 1]
            post[rows, me] = mine
            picks = np.empty((m, p, pick), dtype=np.int64)
            dealt = np.empty((m, p), dtype=np.uint64)
            _undo_exchange(post, offset, me, passed, received, passed_bits, picks, dealt)
            state = self._start(dealt)
            allowed = np.repeat(unseen[:, None], p, axis=1)
            self._moves(state, picks, turns, played, learn, known=known, unseen=unseen, allowed=allowed)
            self._check_turns(state)
            return state, allowed

        # First replay: a full deal only to step through the passes (any deal of the unseen cards
        # will do); then the other seats hold only their known cards, and the plays tell which unseen
        # cards each of them may also have held.
        _, allowed = replay(self._scaffold(room, unseen, dead), learn=True)
        # Second replay, on a full deal that respects what was learnt: the state observed.
        may_hold = np.ones((m, cards.NUM_CARDS, p), dtype=bool)
        learnt = np.moveaxis(cards.to_mask(allowed[rows[:, None], others]), 1, 2)  # [M, 52, P - 1]
        may_hold[:, :, :p - 1] = learnt & to_seats[:, :, None]
        state, _ = replay(self._place_all(hidden, room, may_hold, unseen, dead, allowed), learn=False)
        played_now = np.bitwise_or.reduce(state.played, axis=1)
        receives = (offset[:, None] > 0) & (seats == (me + offset)[:, None] % p)
        others_hold = holding.may_hold_sets(allowed & ~dead[:, None], passed_bits & ~played_now,
                                            np.zeros((m, p, 4), dtype=bool), receives)
        self.may_hold = np.where(seats == me[:, None], state.hands, others_hold)
        return state

    def _scaffold(self, room, unseen, dead) -> np.ndarray:
        """``[M, H]`` holdings that merely fit: the unseen cards that may go to a seat dealt in card
        order to the seats by their ``room``, the rest to the dead pile (the last holder). The first
        replay needs no more (``worlds.place`` draws the second's); a record whose counts do not add
        up fails, worded by the placement's own check."""
        holdings = np.zeros(room.shape, dtype=np.uint64)
        fits = np.zeros(len(self.recs), dtype=bool)
        _deal_in_order(unseen, dead, room, holdings, fits)
        for j in np.flatnonzero(~fits & ~self.failed):
            everyone = np.repeat(unseen[j:j + 1], self.rules.num_players)
            self._word_placement(j, room[j], everyone, unseen[j], dead[j])
        return np.where(fits[:, None], holdings, cards.NO_CARDS)

    def _place_all(self, hidden, room, may_hold, unseen, dead, allowed) -> np.ndarray:
        """``worlds.place`` of one world per record that has not failed (fixed seed); a record whose
        cards cannot be placed fails, worded by the placement of it alone."""
        hands = np.zeros(room.shape, dtype=np.uint64)
        rows = np.flatnonzero(~self.failed)
        rng = np.random.default_rng(0)
        while rows.size:
            try:
                hands[rows] = worlds.place(hidden[rows], room[rows], may_hold[rows], rng)
                break
            except worlds.NoConsistentWorld as err:
                j = rows[err.game]
                self._word_placement(j, room[j], allowed[j], unseen[j], dead[j])
                rows = np.delete(rows, err.game)
        return hands

    def _word_placement(self, j: int, room: np.ndarray, allowed: np.ndarray, unseen, dead) -> None:
        r = self.recs[j]
        holders = [(r.seat + 1 + k) % self.rules.num_players for k in range(self.rules.num_players - 1)]
        try:
            place(cards.cards_of(unseen), dict(zip(holders, room[:-1].tolist())), set(cards.cards_of(dead)),
                  {s: set(cards.cards_of(allowed[s])) for s in holders}, self.rules.dead_cards)
        except SeatRecordError as err:
            self.fail(j, str(err).removeprefix("seat record: "))
        else:
            self.fail(j, "the cards this seat has not seen cannot be placed (a placement the replay missed)")

    # -- shared --------------------------------------------------------------------------------

    def _start(self, dealt: np.ndarray) -> State:
        """One single-hand game per record, dealt ``dealt[M, P]`` (each seat's cards). A row that is
        not a full deal, or whose record already failed, gets a stand-in deal (and fails)."""
        rules, recs = self.rules, self.recs
        p, size = rules.num_players, rules.hand_size
        union = np.bitwise_or.reduce(dealt, axis=1)
        whole = (cards.count(dealt) == size).all(axis=1) & (cards.count(union) == p * size)
        for j in np.flatnonzero(~whole):
            self.fail(j, "could not rebuild the deal (a placement the replay missed)")
        if self.failed.any():  # a stand-in deal: the deck's cards dealt round the table
            stand_in = np.asarray(cards.cards_of(rules.deck_bits))[:p * size]
            dealt = dealt.copy()
            dealt[self.failed] = [cards.bits_of(stand_in[s::p]) for s in range(p)]
        dead = rules.deck_bits & ~np.bitwise_or.reduce(dealt, axis=1)
        return engine.from_hands(rules, dealt, dead, np.array([r.hand_number for r in recs]),
                                 np.array([r.scores for r in recs], dtype=np.int64), single_hand=True)

    def _moves(self, state: State, picks: np.ndarray, turns: np.ndarray, played: np.ndarray, learn: bool,
               known=None, unseen=None, allowed=None) -> None:
        """Step every record's pass picks ``[M, P, K]`` and plays (``turns[M, T]`` seats, ``played``
        cards) in one compiled call; word the first move of each record that fails."""
        m, p = len(self.recs), self.rules.num_players
        failure = np.zeros((m, 4), dtype=np.int64)
        legal = np.zeros(m, dtype=np.uint64)
        c = constants(self.rules)
        if not learn:
            known, unseen, allowed = np.zeros((m, p), np.uint64), np.zeros(m, np.uint64), np.zeros((m, p), np.uint64)
        _replay_moves(c.params, c.bits, state.buffer, np.ascontiguousarray(picks), np.ascontiguousarray(turns),
                      played, self.seats, known, learn, unseen, allowed, self.failed.copy(), failure, legal)
        for j in np.flatnonzero(failure[:, 0] != FINE):
            self.fail(j, self._move_error(j, *failure[j].tolist(), legal[j]))

    def _move_error(self, j: int, kind: int, at: int, to_act: int, in_trick: int, legal) -> str:
        r = self.recs[j]
        shown = cards.format_cards(cards.cards_of(legal))
        if at < 0:  # a pass pick (only this seat's can fail: the others' are their own cards)
            if -at - 1 >= len(r.passed):
                return "the passes could not be replayed (a deal the replay missed)"
            return f"passed: cannot choose {cards.card_text(r.passed[-at - 1])} (legal there: {shown})"
        t, seat, card = r.plays()[at]
        where = f"tricks[{t}]" if t < len(r.tricks) else "trick"
        if kind == WRONG_TURN:
            lead = "led" if in_trick == 0 else "played next"
            return (f"{where}: the record has seat {seat} play {cards.card_text(card)}, but seat {to_act} {lead} there "
                    f"(the winner of a trick leads the next; the first trick is opened by the holder of "
                    f"{r.rules.opening_lead[0]})")
        return f"{where}: seat {seat} cannot play {cards.card_text(card)} (legal there: {shown})"

    def _check_turns(self, state: State) -> None:
        """Each record's seat must be to act, in its phase, with the trick's leader it says."""
        for j in np.flatnonzero(~self.failed):
            r = self.recs[j]
            phase = ("pass", "play", "over")[state.phase[j]]
            to_act, leader = int(state.current_player[j]), int(state.leader[j])
            if phase != r.phase or to_act != r.seat:
                self.fail(j, "after this history the hand is over: nobody is to act" if phase == "over" else
                          f"after this history it is seat {to_act}'s turn to {phase}, not seat {r.seat}'s")
            elif r.phase == "play" and r.trick.cards and leader != r.trick.leader:
                self.fail(j, f"trick: the record says seat {r.trick.leader} led, but seat {leader} did")
            elif r.phase == "play" and not r.trick.cards and r.trick.leader not in (-1, r.seat):
                self.fail(j, f"trick: no card played yet, so the leader is the seat to act ({r.seat}), "
                             f"not {r.trick.leader}")


@jit
def _replay_moves(params, bits, buffer, picks, turns, played, me, known, learn, unseen, allowed, failed, failure,
                  legal):
    """Every game's pass picks ``picks[g, seat, k]`` (-1: none; seat 0 first, as the engine takes
    them), then, with ``learn``, the other seats' hands cut to ``known``, then its plays
    (``turns[g, k]`` seat, ``played[g, k]`` card; -1 ends them): the k-th move of every game that
    has one in one engine step (``engine.step_buffer``). A game stops at its first move that is not
    that seat's turn or not legal: ``failure[g]`` = (kind, move: -1 - pick of this seat's or the
    play's index, seat to act, cards in the trick), ``legal[g]`` its legal cards. With ``learn``,
    ``allowed[g, seat]`` keeps the unseen cards that leave each play of ``seat`` legal."""
    counters, sets, seat_numbers, seat_sets, flags = state_views(params, buffer)[:5]
    m, p, k_max = counters.shape[1], params[PR_PLAYERS], picks.shape[2]
    chosen = np.zeros(m, dtype=np.int64)
    acting = np.zeros(m, dtype=np.bool_)
    mine = np.zeros(m, dtype=np.int64)  # this seat's picks so far
    for s in range(p):
        for k in range(k_max):
            moves = False
            for g in range(m):
                acting[g] = False
                card = picks[g, s, k]
                if card < 0 or failed[g]:
                    continue
                at = -1 - k_max  # (another seat's pick)
                if s == me[g]:
                    at = -1 - mine[g]
                    mine[g] += 1
                kind = _check(counters, sets, g, PASS, s, card)
                if kind != FINE:
                    _failed(counters, sets, g, kind, at, failed, failure, legal)
                    continue
                acting[g], chosen[g], moves = True, card, True
            if moves:
                step_buffer(params, bits, buffer, chosen, acting)
    if learn:
        for g in range(m):
            for s in range(p):
                if s != me[g] and not failed[g]:
                    seat_sets[HANDS, g, s] = known[g, s]
        update_legal_buffer(params, bits, buffer)
    for k in range(turns.shape[1]):
        moves = False
        for g in range(m):
            acting[g] = False
            seat, card = turns[g, k], played[g, k]
            if seat < 0 or failed[g]:
                continue
            kind = _check(counters, sets, g, PLAY, seat, card)
            if kind != FINE:
                _failed(counters, sets, g, kind, k, failed, failure, legal)
                continue
            if learn and seat != me[g] and unseen[g] != 0:  # would it still be legal had the seat held more?
                allowed[g, seat] &= legal_if_held(params, bits, counters, sets, seat_numbers, seat_sets, flags, g,
                                                  card, unseen[g])
            acting[g], chosen[g], moves = True, card, True
        if moves:
            step_buffer(params, bits, buffer, chosen, acting)


@jit
def _undo_exchange(post, offset, me, passed, received, passed_bits, picks, dealt):
    """The deal ``dealt[g]`` and every seat's pass picks ``picks[g]`` (-1: none) that lead to what
    each seat held after the exchange, ``post[g]``. This seat's picks (``passed``) and its giver's
    (``received``) are known; each other seat's are any cards its receiver held that did not come
    from this seat (nothing observed depends on them)."""
    m, p = post.shape
    k_max = picks.shape[2]
    chosen = np.zeros(p, dtype=np.uint64)
    for g in range(m):
        off = offset[g]
        picks[g] = -1
        if off == 0:
            dealt[g] = post[g]
            continue
        for s in range(p):
            if s == me[g]:
                picks[g, s] = passed[g]
            elif s == (me[g] - off) % p:
                picks[g, s] = received[g]
            else:
                pool = post[g, (s + off) % p] & ~passed_bits[g]
                for k in range(k_max):
                    picks[g, s, k] = nth_of(pool, k)
            chosen[s] = 0
            for k in range(k_max):
                if picks[g, s, k] >= 0:
                    chosen[s] |= bit(picks[g, s, k])
        for s in range(p):
            dealt[g, s] = (post[g, s] & ~chosen[(s - off) % p]) | chosen[s]


@jit
def _deal_in_order(unseen, dead, room, holdings, fits):
    """Game ``g``'s ``unseen`` cards to its holders in card order, each holder (the last: the dead
    pile) up to its ``room``; the ``dead`` cards to the dead pile only. ``fits[g]``: every holder full."""
    m, h = room.shape
    for g in range(m):
        holder, got, left = 0, 0, 0
        for c in range(52):
            card = bit(c)
            if not unseen[g] & card:
                continue
            if dead[g] & card:
                holdings[g, h - 1] |= card
                continue
            while holder < h - 1 and got >= room[g, holder]:
                holder, got = holder + 1, 0
            holdings[g, holder] |= card
            got += 1
        fits[g] = True
        for k in range(h):
            left = room[g, k]
            x = holdings[g, k]
            while x:
                x &= x - np.uint64(1)
                left -= 1
            if left != 0:
                fits[g] = False


@jit
def _check(counters, sets, g, phase, seat, card):
    if counters[PHASE, g] != phase or counters[CURRENT_PLAYER, g] != seat:
        return WRONG_TURN
    if card < 0 or card >= 52 or not (sets[LEGAL, g] >> np.uint64(card)) & np.uint64(1):
        return ILLEGAL
    return FINE


@jit
def _failed(counters, sets, g, kind, at, failed, failure, legal):
    failed[g] = True
    failure[g, 0] = kind
    failure[g, 1] = at
    failure[g, 2] = counters[CURRENT_PLAYER, g]
    failure[g, 3] = counters[NUM_IN_TRICK, g]
    legal[g] = sets[LEGAL, g]


def forced_dead(r: SeatRecord, unseen: int) -> set[int]:
    """Opening cards that must be dead: those before the card that opened (or must open) the hand."""
    rules = r.rules
    opening = list(rules.opening_ids)
    plays = r.plays()
    if plays:
        first = plays[0][2]
        if first not in opening:
            raise fail(f"the hand's first trick must be opened with {' / '.join(rules.opening_lead)}, "
                       f"but the record opens it with {cards.card_text(first)}")
        k = opening.index(first)
        what = f"the first trick was opened with {cards.card_text(first)}"
    else:
        held = [c for c in opening if c in r.hand]
        if not held:
            raise fail(f"no card has been played, so the holder of {rules.opening_lead[0]} leads; "
                       f"seat {r.seat} does not hold it, so it is not its turn")
        k = opening.index(held[0])
        what = f"seat {r.seat} is to open the first trick with {cards.card_text(held[0])}"
    earlier = opening[:k]
    if not earlier:
        return set()
    blocked = [c for c in earlier if not unseen >> c & 1]
    if blocked or len(earlier) > rules.dead_cards:
        raise fail(f"{what}, which is allowed only when {cards.format_cards(earlier)} "
                   f"{'is' if len(earlier) == 1 else 'are'} dead (set aside), but "
                   + (f"{cards.format_cards(blocked)} is in play" if blocked else
                      f"this game sets aside only {rules.dead_cards} cards"))
    return set(earlier)


def place(unseen: list[int], room: dict[int, int], dead: set[int], allowed: dict[int, set[int]],
          dead_count: int) -> dict[int, list[int]]:
    """Each unseen card to a seat with room that may hold it, or to the dead cards (key -1): one
    world of ``worlds.place`` (fixed seed). The dead pile may hold any card; the forced-dead cards
    only it. A record whose cards cannot be placed so raises its :class:`SeatRecordError`."""
    holders = [*room, -1]
    hidden = np.zeros((1, cards.NUM_CARDS), dtype=bool)
    hidden[0, unseen] = True
    may_hold = np.zeros((1, cards.NUM_CARDS, len(holders)), dtype=bool)
    for i, s in enumerate(room):
        may_hold[0, sorted(allowed[s] - dead), i] = True
    may_hold[0, :, -1] = True
    capacity = np.array([[*room.values(), dead_count]], dtype=np.int64)
    try:
        hands = worlds.place(hidden, capacity, may_hold, np.random.default_rng(0))
    except worlds.NoConsistentWorld as err:
        if err.card is None:
            raise fail("the cards this seat has not seen cannot be held consistently with the play "
                       f"({err})") from None
        card = err.card
        seats = [s for s in room if card not in allowed[s]]
        raise fail(
            f"the cards this seat has not seen cannot be held consistently with the play: "
            f"{cards.card_text(card)} fits no seat with room"
            + (f" (seat{'s' if len(seats) > 1 else ''} {', '.join(map(str, seats))} showed by their "
               "play that they cannot hold it)" if seats else "")
        ) from None
    return {h: cards.cards_of(hands[0, i]) for i, h in enumerate(holders)}


def _padded(rows: list[Sequence[int]], width: int, fill: int = -1) -> np.ndarray:
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for j, row in enumerate(rows):
        out[j, :len(row)] = row
    return out
