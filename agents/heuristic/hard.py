"""The ``hard`` bot: ``normal`` plus card counting, card places and voids, passing by direction,
moon defence and shooting the moon.

What it knows (``Facts``), all from the observation: the cards *out* (not in its hand and not
played), for each card how many cards out are above and below it in its suit, and for each other
seat the cards it *may hold*: the cards out, less the suits it showed void in, less the cards I
passed to another seat (those I know: the receiver holds them until they are played). From that
it knows which seats still to play to the trick could beat a card or hold Q♠, and who holds Q♠
when only one seat can.

Rules, first match wins (then ``normal``'s play rules):

Passing

1. ``pass_for_the_moon``: with a hand made to shoot (six or more cards from the jack up, A♥, and
   Q♠ or A♠), pass low clubs and diamonds (J♦ kept when it is a bonus) and keep the high cards.
2. ``pass_spades_by_direction``: holding Q♠ with fewer than five spades below it, pass Q♠ and, to
   the left or across (the receiver plays after us and would drop Q♠ on our honours), A♠ and K♠
   with it; to the right (the receiver plays before us) Q♠ goes alone. With five low spades it
   keeps all three.
3. ``pass_exposed_spades``: without Q♠ and with fewer than three spades below the queen, pass A♠
   and K♠.
4. ``pass_by_danger``: pass the highest cards, each counted down by the cards of its suit below it
   that it keeps (they protect it), J♥ and up counted up; never a spade below the queen.

Playing (the moon first)

5. ``shoot_the_moon``: commits to the moon when no one else has a point and either it has taken
   13 points or more (giving up would cost those anyway) or it holds A♥ (or has points), holds Q♠
   (or took it) and at most five of its cards are not the highest still out in their suits. It
   leads a card nobody can beat (else its highest non-heart), wins every trick it can with its
   highest card, plays its lowest when it cannot, and discards its lowest card without points.
   It aborts by itself as soon as another seat takes a point: the test is made at every move.
6. ``stop_the_moon``: an opponent holds every point taken so far, and at least 14: points go only
   to a winner who is not that opponent, and when the shooter wins or is still to play it sheds
   cards without points and keeps its highest heart (the stopper). From 17 points it takes on
   purpose a trick the shooter would take, and leads a heart nobody can beat. In the two-player
   game it defends from the opponent's first point: there a moon costs 20 and one heart taken
   stops it, and nobody else will. It takes a trick with points with its lowest winning card, and
   when void ruffs the shooter's trick with its lowest heart (hearts are trump there).

Discarding (void in the led suit; never a card that takes the trick, nor a J♦ bonus, while
another card will do)

7. ``dump_queen_on_the_winner``: Q♠.
8. ``discard_spade_honours``: A♠ or K♠ while Q♠ is out.
9. ``discard_by_danger``: the card most likely to win a trick later: high rank, few cards of its
   suit below it in hand; hearts first (they also give points away).

Following suit

10. ``shed_on_first_trick``: the first trick cannot carry points: shed the highest card.
11. ``slip_queen``: a higher spade wins already: play Q♠, at any position.
12. ``unload_spade_honours``: spades led, Q♠ out but none of the seats still to play can hold it
    (and it is not in the trick): A♠ or K♠ wins safely, play it.
13. ``win_the_jack``: with the J♦ bonus, take a trick that holds J♦ and is worth it; lead J♦ when
    nothing can beat it and every opponent can still follow diamonds.
14. ``follow_must_win``: every legal card beats the trick and seats are still to play: when no
    seat after it can hold a card of the suit above its lowest, the trick is its anyway: win with
    the highest (Q♠ last); else play the lowest, the one the seats after it can overtake.

Leading

15. ``lead_by_estimate``: scores each legal card (Q♠, and A♠/K♠ while Q♠ is out, held back) by
    its chance to win the trick times what a won trick costs (its expected points, plus one for
    having to lead again), and prefers short suits.
    The chance counts, for the seats that can still follow, the cards out above and below it:
    a card with no lower card out and a higher one surely loses, one with no higher card surely
    wins; the opponents (like ``normal``) play under the lead when they can and the last seat
    takes a clean trick, unless a seat before it could dump points. The points count the hearts
    of a heart lead, one expected dump for each opponent that cannot follow and may hold points,
    and Q♠'s 13 shared among the seats that may hold it, for those that cannot follow (all 13 when
    we know who holds it, e.g. because we passed it). Spades
    below the queen are preferred while Q♠ is out and not ours (bleeding); holding Q♠ it all but
    never leads a spade (its guards).

Then ``normal``'s play rules (``take_clean_trick_last``, ``play_highest_loser``, ...).

The bot is batched like the others, and to stay fast ``HardBot.decide`` runs each phase (passing,
leading, following, discarding) on its own games with only the rules tagged for that phase (the
moon rules, which open every play phase's list, once on all the play games); the result is the
same as running the whole list on every game. The tables of those games are ``Subset``s: each
piece, and the ``Facts`` worked out once for the whole batch, is cut for them when a rule first
reads it.
"""

from __future__ import annotations

import copy
import functools

import numpy as np

from hearts_env import cards
from hearts_env.observe import decode

from . import normal
from .base import RuleBot, first_match, with_fallback
from .easy import keepers, safe_discards, without
from .normal import QUEEN_FIRST, SPADE_HONOURS, kept
from .table import AH, AS, HEARTS, HIGH_RANK, JD, KS, LOW_RANK, NONE, QS, RANKS, SPADES_BELOW_QUEEN, SUITS
from .table import Table, above, has, pick

POINT_CARDS = HEARTS | QS
HIGH_CARDS = cards.from_mask(RANKS >= 9)  # J, Q, K, A of every suit
DIAMONDS_ABOVE_JACK = cards.SUIT_BITS[cards.DIAMONDS] & ~((JD << np.uint64(1)) - np.uint64(1))
#: VOID_SETS[i]: the cards of the suits whose bits are set in i (bit s = suit s).
VOID_SETS = np.array(
    [sum(int(cards.SUIT_BITS[s]) for s in range(4) if i >> s & 1) for i in range(16)], dtype=np.uint64
)
SUIT_WEIGHTS = np.array([1, 2, 4, 8])
SEATS = np.arange(4)
IS_HEART = SUITS == cards.HEARTS
LOW_SPADE = cards.to_mask(SPADES_BELOW_QUEEN)
NO_CARD = -1

# Passing.
MOON_PASS_HIGH_CARDS = 6  # cards from the jack up that make a hand to shoot with
LOW_SPADES_TO_KEEP_QUEEN = 5  # spades below the queen that protect Q♠ kept
LOW_SPADES_TO_KEEP_HONOURS = 3  # ... that protect A♠/K♠ without Q♠
PASS_PROTECTION = 1.5  # rank a card loses per card of its suit below it kept
PASS_HIGH_HEART = 2.0  # rank J♥ and up gain
# The moon.
MOON_POINTS_SUNK = 13  # points taken (nobody else having any) that commit to the moon
MOON_LOOSE_CARDS = 5  # cards that may not be bosses in a hand that shoots
MOON_THREAT = 14  # points of a lone opponent that start the moon defence
MOON_TAKE = 17  # ... from which it takes a point trick on purpose
MOON_THREAT_TWO_PLAYER = 1  # the same two in the two-player game: a 20-point moon, no third seat
MOON_TAKE_TWO_PLAYER = 1  # to stop it, and one heart (1 point) taken is enough
# Discarding.
DISCARD_PROTECTION = 1.0
DISCARD_HEART = 6.0
# Leading.
LEAD_COST = 1.0  # cost of winning a trick without points (the lead comes back)
DUMP_POINTS = 1.5  # points expected from each opponent that cannot follow and may hold points
LEAD_WEIGHT = 5.0  # weight of the expected points of a lead
LEAD_SUIT_LENGTH = 2.0  # score lost per card held in the suit (short suits empty sooner)
LEAD_BLEED = 5.0  # score gained by spades below the queen while Q♠ is out and not mine
LEAD_KEEP_QUEEN_GUARD = 60.0  # score lost by spades while holding Q♠

PASS, LEAD, FOLLOW, DISCARD = "pass", "lead", "follow", "discard"
PLAY = (LEAD, FOLLOW, DISCARD)


def phases(*names):
    """Tags a rule with the phases in which it can apply (``HardBot.decide`` skips it elsewhere)."""

    def tag(rule):
        rule.phases = frozenset(names)
        return rule

    return tag


class HardTable(Table):
    """``Table`` plus the one rule flag hard needs that ``Table`` does not decode: moon off."""

    def __init__(self, observation: np.ndarray, action_mask: np.ndarray):
        super().__init__(observation, action_mask)
        self.moon_off = decode(np.asarray(observation))["rules"][:, 11] > 0.5


def moon_off(t: Table) -> np.ndarray:
    return getattr(t, "moon_off", np.zeros(t.n, dtype=bool))


class Subset(Table):
    """The table of some games of another table. Each piece is cut from the other table's when a
    rule first reads it (most rules read a few of the pieces), and so are the ``Facts`` when the
    other table has them worked out."""

    def __init__(self, parent: Table, rows: np.ndarray):  # (not Table.__init__: nothing to decode)
        self._parent, self._rows, self.n = parent, rows, len(rows)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_facts":  # (facts are cut by facts())
            raise AttributeError(name)
        value = getattr(self._parent, name)
        if isinstance(value, np.ndarray) and value.ndim and value.shape[0] == self._parent.n:
            value = value[self._rows]
        self.__dict__[name] = value
        return value


def subset(t: Table, rows: np.ndarray) -> Table:
    """The table of the games ``rows`` only."""
    return Subset(t, rows)


def on_rows(t: Table, active: np.ndarray, rule) -> np.ndarray:
    """``rule`` evaluated only for the games where ``active`` (-1 elsewhere)."""
    rows = np.flatnonzero(active)
    if rows.size == t.n:
        return rule(t)
    out = np.full(t.n, NO_CARD, dtype=np.int64)
    if rows.size:
        out[rows] = rule(subset(t, rows))
    return out


class Facts:
    """What hard works out beyond ``Table``: where cards can be, who plays after it, counts."""

    def __init__(self, t: Table):
        self.t = t
        #: Cards held by the other seats (or dead): not mine and not played.
        self.out = t.deck & ~t.hand & ~t.played
        exchanged = ~t.passing & (t.pass_offset > 0)
        #: Cards I passed that their receiver still holds.
        self.sent = np.where(exchanged, t.passed & ~t.played, NONE)
        void_sets = VOID_SETS[t.voids @ SUIT_WEIGHTS]  # [N, 4]
        holds = np.zeros((t.n, 4), dtype=np.uint64)
        holds[:, 0] = t.hand
        for r in (1, 2, 3):
            base = self.out & ~void_sets[:, r]
            base = np.where(t.pass_offset == r, base | self.sent, base & ~self.sent)
            holds[:, r] = np.where(t.players > r, base, NONE)
        #: [N, 4] cards each relative seat may hold (seat 0: my hand).
        self.holds = holds
        #: [N, 4] the other seats of the game.
        self.opponents = (SEATS > 0) & (SEATS < t.players[:, None])
        #: [N, 4] seats still to play to this trick after me.
        self.later = (t.trick_card < 0) & self.opponents
        self._counts = None

    def cut(self, t: Table, rows: np.ndarray) -> Facts:
        """These facts for the games ``rows`` only (``t``: their table)."""
        f = copy.copy(self)
        f.t = t
        for name in ("out", "sent", "holds", "opponents", "later"):
            setattr(f, name, getattr(self, name)[rows])
        f._counts = None if self._counts is None else tuple(c[rows] for c in self._counts)
        return f

    def _count(self):
        if self._counts is None:
            n = self.t.n
            out_mask = cards.to_mask(self.out).reshape(n, 4, 13).astype(np.int8)
            out_at = np.cumsum(out_mask, axis=2, dtype=np.int8)
            hand_mask = cards.to_mask(self.t.hand).reshape(n, 4, 13).astype(np.int8)
            mine_at = np.cumsum(hand_mask, axis=2, dtype=np.int8)
            self._counts = (
                (out_at - out_mask).reshape(n, 52),
                (out_at[:, :, -1:] - out_at).reshape(n, 52),
                (mine_at - hand_mask).reshape(n, 52),
                mine_at[:, :, -1],
            )
        return self._counts

    @property
    def lower_out(self) -> np.ndarray:
        """[N, 52] cards out below each card in its suit."""
        return self._count()[0]

    @property
    def higher_out(self) -> np.ndarray:
        """[N, 52] cards out above each card in its suit."""
        return self._count()[1]

    @property
    def my_lower(self) -> np.ndarray:
        """[N, 52] my cards below each card in its suit."""
        return self._count()[2]

    @property
    def my_length(self) -> np.ndarray:
        """[N, 4] my cards per suit."""
        return self._count()[3]


def facts(t: Table) -> Facts:
    f = t.__dict__.get("_facts")
    if f is None:
        parent = t.__dict__.get("_parent")
        f = t._facts = facts(parent).cut(t, t._rows) if _knows_facts(parent) else Facts(t)
    return f


def _knows_facts(t: Table | None) -> bool:
    """Whether ``t`` or a table it was cut from has its facts worked out."""
    while t is not None and "_facts" not in t.__dict__:
        t = t.__dict__.get("_parent")
    return t is not None


def bosses(t: Table, bits: np.ndarray) -> np.ndarray:
    """Cards of ``bits`` with no higher card still out in their suit (they win if led)."""
    return cards.from_mask(cards.to_mask(bits) & (facts(t).higher_out == 0))


def top_heart(t: Table) -> np.ndarray:
    hearts = t.hand & HEARTS
    return np.where(hearts != 0, cards.BIT[np.maximum(cards.highest_card(hearts), 0)], NONE)


# ---- passing --------------------------------------------------------------------------------

def low_spades_kept(t: Table) -> np.ndarray:
    return cards.count(kept(t) & SPADES_BELOW_QUEEN).astype(np.int64)


def short_under_queen(t: Table) -> np.ndarray:
    return low_spades_kept(t) < LOW_SPADES_TO_KEEP_QUEEN


@phases(PASS)
def pass_for_the_moon(t: Table) -> np.ndarray:
    hand = t.hand
    strong = (cards.count(hand & HIGH_CARDS) >= MOON_PASS_HIGH_CARDS) & has(hand, AH) & has(hand, QS | AS)
    strong &= t.passing & ~moon_off(t)
    low = without(t, t.legal & ~HIGH_CARDS & ~HEARTS & ~SPADES_BELOW_QUEEN, keepers(t))
    return pick(np.where(strong, low, 0), LOW_RANK)


@phases(PASS)
def pass_spades_by_direction(t: Table) -> np.ndarray:
    short = t.passing & has(t.hand, QS) & short_under_queen(t)
    left_or_across = (t.pass_offset == 1) | (t.pass_offset == 2)
    together = pick(np.where(short & left_or_across, t.legal & SPADE_HONOURS, 0), QUEEN_FIRST)
    alone = pick(np.where(short & (t.pass_offset == 3), t.legal & QS, 0), HIGH_RANK)
    return np.where(together >= 0, together, alone)


@phases(PASS)
def pass_exposed_spades(t: Table) -> np.ndarray:
    exposed = t.passing & ~has(t.hand, QS) & (low_spades_kept(t) < LOW_SPADES_TO_KEEP_HONOURS)
    return pick(np.where(exposed, t.legal & (AS | KS), 0), HIGH_RANK)


def kept_spade_honours(t: Table) -> np.ndarray:
    """Q♠ with five low spades: it keeps Q♠, A♠ and K♠; passing Q♠ to the right: A♠ and K♠."""
    queen = t.passing & has(t.hand, QS)
    long = queen & ~short_under_queen(t)
    right = queen & (t.pass_offset == 3) & has(t.passed, QS)
    return np.where(long, SPADE_HONOURS, np.where(right, AS | KS, NONE))


@phases(PASS)
def pass_by_danger(t: Table) -> np.ndarray:
    n = t.n
    mask = cards.to_mask(kept(t)).reshape(n, 4, 13).astype(np.int8)
    my_lower = (np.cumsum(mask, axis=2, dtype=np.int8) - mask).reshape(n, 52)
    score = RANKS - PASS_PROTECTION * my_lower
    score += np.where(IS_HEART & (RANKS >= 9), PASS_HIGH_HEART, 0.0)
    score -= np.where(LOW_SPADE, 50.0, 0.0)
    legal = without(t, t.legal, kept_spade_honours(t) | keepers(t))
    return pick(np.where(t.passing, legal, 0), score)


# ---- the moon -------------------------------------------------------------------------------

def moon_is_on(t: Table) -> np.ndarray:
    mine = t.points_taken[:, 0]
    others_clean = t.points_taken[:, 1:].sum(axis=1) == 0
    hearts_mine = has(t.hand, AH) | (mine > 0)
    queen_mine = has(t.hand, QS) | (mine >= 13)
    maybe = others_clean & hearts_mine & queen_mine & ~t.passing & ~moon_off(t)
    strong = maybe & (mine >= MOON_POINTS_SUNK)
    rows = np.flatnonzero(maybe & ~strong)
    if rows.size:
        sub = subset(t, rows)
        loose = cards.count(sub.hand & ~bosses(sub, sub.hand))
        strong[rows] = loose <= MOON_LOOSE_CARDS
    return strong


@phases(*PLAY)
def shoot_the_moon(t: Table) -> np.ndarray:
    return on_rows(t, moon_is_on(t), _shoot)


def _shoot(t: Table) -> np.ndarray:
    top = bosses(t, t.legal)
    lead = np.where(top != 0, pick(top, HIGH_RANK), pick(without(t, t.legal, HEARTS), HIGH_RANK))
    winners = t.legal & t.beats
    follow = np.where(winners != 0, pick(winners, HIGH_RANK), pick(t.legal, LOW_RANK))
    discard = pick(without(t, without(t, t.legal & ~POINT_CARDS, NONE), keepers(t)), LOW_RANK)
    return np.where(t.leading, lead, np.where(t.following, follow, discard))


def moon_threat(t: Table, points: int) -> np.ndarray:
    """Relative seat of an opponent who holds every point taken so far (at least ``points``,
    with points still to take), else -1."""
    taken = t.points_taken
    total = taken.sum(axis=1)
    seat = taken.argmax(axis=1)
    alone = (taken.max(axis=1) == total) & (total >= points) & (seat != 0)
    points_left = (t.deck & ~t.played & POINT_CARDS) != 0
    return np.where(alone & points_left & ~t.passing & ~moon_off(t), seat, -1)


@phases(*PLAY)
def stop_the_moon(t: Table) -> np.ndarray:
    return on_rows(t, moon_threat(t, _moon_thresholds(t)[0]) >= 0, _stop)


def _moon_thresholds(t: Table) -> tuple[np.ndarray, np.ndarray]:
    """Per game, the opponent's points that start the moon defence, and the points taken from
    which it takes a point trick on purpose."""
    two = t.players == 2
    return (np.where(two, MOON_THREAT_TWO_PLAYER, MOON_THREAT),
            np.where(two, MOON_TAKE_TWO_PLAYER, MOON_TAKE))


def _stop(t: Table) -> np.ndarray:
    threat, take_from = _moon_thresholds(t)
    shooter = moon_threat(t, threat)
    f = facts(t)
    urgent = t.points_taken.sum(axis=1) >= take_from
    two = t.players == 2
    shooter_later = f.later[np.arange(t.n), shooter]
    shooter_winning = t.winning_seat == shooter
    # Take on purpose a trick the shooter would take (with points in it, or still to play): with
    # the highest card, or in the two-player game (taking early, when a point is enough) the lowest.
    threat_here = (shooter_winning & (t.trick_points > 0)) | shooter_later
    take = np.where(urgent & t.following & threat_here, t.legal & t.beats, 0)
    choice = np.where(two, pick(take, LOW_RANK), pick(take, HIGH_RANK))
    # Void, with hearts trump: the lowest heart takes the shooter's trick and a point with it.
    ruff = np.where(urgent & t.void_now & shooter_winning, t.legal & t.beats & HEARTS, 0)
    choice = np.where(choice < 0, pick(ruff, LOW_RANK), choice)
    # Void: points go to a winner who is not the shooter, once the shooter has played ...
    winner_ok = ~shooter_winning & ~shooter_later
    dump = pick(np.where(t.void_now & winner_ok, safe_discards(t) & POINT_CARDS, 0), QUEEN_FIRST)
    choice = np.where(choice < 0, dump, choice)
    # ... else shed a card without points, keeping the stopper.
    shed = without(t, safe_discards(t) & ~POINT_CARDS & ~top_heart(t), NONE)
    shed = pick(np.where(t.void_now & ~winner_ok, shed, 0), HIGH_RANK)
    choice = np.where(choice < 0, shed, choice)
    # Leading: a heart nobody can beat takes the points away from the shooter.
    lead = pick(np.where(urgent & t.leading, bosses(t, t.legal & HEARTS), 0), HIGH_RANK)
    return np.where(choice < 0, lead, choice)


# ---- discarding -----------------------------------------------------------------------------

@phases(DISCARD)
def dump_queen_on_the_winner(t: Table) -> np.ndarray:
    return pick(safe_discards(t) & QS, HIGH_RANK)


@phases(DISCARD)
def discard_spade_honours(t: Table) -> np.ndarray:
    return pick(np.where(t.queen_out, safe_discards(t) & (AS | KS), 0), HIGH_RANK)


@phases(DISCARD)
def discard_by_danger(t: Table) -> np.ndarray:
    score = RANKS - DISCARD_PROTECTION * facts(t).my_lower + np.where(IS_HEART, DISCARD_HEART, 0.0)
    return pick(safe_discards(t), score)


# ---- following ------------------------------------------------------------------------------

@phases(FOLLOW)
def shed_on_first_trick(t: Table) -> np.ndarray:
    first = t.following & (t.trick_number == 0) & (t.trick_points == 0) & t.first_trick_protection
    return pick(np.where(first, t.legal, 0), HIGH_RANK)


@phases(FOLLOW)
def slip_queen(t: Table) -> np.ndarray:
    return pick(np.where(t.following, t.legal & QS & ~t.beats, 0), HIGH_RANK)


@phases(FOLLOW)
def unload_spade_honours(t: Table) -> np.ndarray:
    f = facts(t)
    queen_later = (has(f.holds, QS) & f.later).any(axis=1)
    safe = t.following & (t.led_suit == cards.SPADES) & t.queen_out & ~queen_later & ~has(t.trick_bits, QS)
    return pick(np.where(safe, t.legal & (AS | KS), 0), HIGH_RANK)


@phases(FOLLOW, LEAD)
def win_the_jack(t: Table) -> np.ndarray:
    active = t.jack_bonus & ~t.passing
    if not active.any():
        return np.full(t.n, NO_CARD)
    f = facts(t)
    worth = active & t.following & has(t.trick_bits, JD) & (t.trick_points < 0)
    take = pick(np.where(worth, without(t, t.legal & t.beats, QS), 0), HIGH_RANK)
    diamonds = cards.SUIT_BITS[cards.DIAMONDS]
    followers = ((f.holds & diamonds) != 0) | ~f.opponents
    safe = active & t.leading & followers.all(axis=1) & ((f.out & DIAMONDS_ABOVE_JACK) == 0)
    lead = pick(np.where(safe, t.legal & JD, 0), HIGH_RANK)
    return np.where(take >= 0, take, lead)


@phases(FOLLOW)
def follow_must_win(t: Table) -> np.ndarray:
    active = t.following & ~t.last_to_play & ((t.legal & ~t.beats) == 0)
    if not active.any():
        return np.full(t.n, NO_CARD)
    f = facts(t)
    legal = np.where(active, without(t, t.legal, QS), 0)
    later = np.bitwise_or.reduce(np.where(f.later, f.holds, NONE), axis=1)
    later_suit = later & cards.SUIT_BITS[np.maximum(t.led_suit, 0)]
    top = np.where(later_suit != 0, cards.highest_card(later_suit), -1)
    catchable = np.where(top >= 0, legal & ~above(top), NONE)  # cards a later seat could overtake
    return np.where(catchable == 0, pick(legal, HIGH_RANK), pick(legal, LOW_RANK))


# ---- leading --------------------------------------------------------------------------------

def _win_table() -> np.ndarray:
    """P(a lead wins the trick), flat-indexed [k, m, last_follows, higher, lower]: k opponents can
    follow suit, m of them play under when they can (those before the last seat, and the last
    seat too once the trick may hold points), ``last_follows``: the last seat follows and takes a
    clean trick whenever it can; ``higher``/``lower`` cards out above and below the led card,
    spread evenly over the k seats."""
    k = np.arange(4)[:, None, None, None, None]
    m = np.arange(4)[None, :, None, None, None]
    last = np.arange(2)[None, None, :, None, None]
    h = np.arange(13)[None, None, None, :, None]
    low = np.arange(13)[None, None, None, None, :]
    q = np.where(k > 0, (k - 1) / np.maximum(k, 1), 0.0)  # a given seat holds none of one card
    qh, ql = q**h, q**low
    # A seat that ducks beats the lead only holding a higher card and no lower one.
    p = (1.0 - (1.0 - qh) * ql) ** m * qh**last
    p = np.where(h == 0, 1.0, np.where(low == 0, 0.0, p))
    return np.ascontiguousarray(p.reshape(-1))


WIN_TABLE = _win_table()


def lead_estimates(t: Table) -> tuple[np.ndarray, np.ndarray]:
    """([N, 52] chance that leading each card wins the trick, [N, 4] points a won trick of each
    suit brings, plus the cost of keeping the lead)."""
    f = facts(t)
    opponents = f.opponents
    holds_suit = (f.holds[:, :, None] & cards.SUIT_BITS[None, None, :]) != 0  # [N, 4 seats, 4 suits]
    can_follow = holds_suit & opponents[:, :, None]
    cannot = opponents[:, :, None] & ~holds_suit
    is_last = (SEATS == (t.players - 1)[:, None])[:, :, None]
    may_points = ((f.holds & POINT_CARDS) != 0)[:, :, None]
    k = can_follow.sum(axis=1)  # [N, 4 suits]
    # A seat before the last that cannot follow may dump points: the last seat then ducks too.
    dirty = (cannot & ~is_last & may_points).any(axis=1)
    last_follows = (can_follow & is_last).any(axis=1)
    m = (can_follow & ~is_last).sum(axis=1) + (last_follows & dirty)
    last_follows &= ~dirty
    suit_index = ((k * 4 + m) * 2 + last_follows) * 169  # [N, 4]
    p_win = WIN_TABLE[suit_index[:, SUITS] + f.higher_out.astype(np.int64) * 13 + f.lower_out]
    queen_holders = np.maximum((has(f.holds, QS) & opponents).sum(axis=1), 1)
    queen_points = np.where(t.queen_out, 13.0 / queen_holders, 0.0)
    dumpers = (cannot & may_points).sum(axis=1)
    queen_dump = (cannot & has(f.holds, QS)[:, :, None]).any(axis=1)
    cost = DUMP_POINTS * dumpers + queen_dump * queen_points[:, None] + LEAD_COST
    hearts_out = cards.count(f.out & HEARTS)
    cost[:, cards.HEARTS] += 1.0 + np.minimum(k[:, cards.HEARTS], hearts_out)
    return p_win, cost


@phases(LEAD)
def lead_by_estimate(t: Table) -> np.ndarray:
    f = facts(t)
    held_back = np.where(t.queen_out, SPADE_HONOURS, QS) | keepers(t)
    candidates = np.where(t.leading & ~t.passing, without(t, t.legal, held_back), 0)
    p_win, cost = lead_estimates(t)
    suit_score = -LEAD_SUIT_LENGTH * f.my_length
    suit_score[:, cards.SPADES] -= np.where(has(t.hand, QS), LEAD_KEEP_QUEEN_GUARD, 0.0)
    score = suit_score[:, SUITS] - LEAD_WEIGHT * p_win * cost[:, SUITS]
    bleed = t.queen_out & ~has(t.hand, QS)
    score += np.where(bleed[:, None] & LOW_SPADE, LEAD_BLEED, 0.0)
    return pick(candidates, score)


# ---- the bot --------------------------------------------------------------------------------

#: ``normal``'s play rules, with the phase each can apply in.
NORMAL_PLAY = tuple(rule for rule in normal.NormalBot.rules if not rule.__name__.startswith("pass_"))
_NORMAL_PHASES = {
    "take_clean_trick_last": FOLLOW, "slip_queen_under": FOLLOW, "play_highest_loser": FOLLOW,
    "win_with_highest": FOLLOW, "discard_queen": DISCARD, "discard_spade_honours": DISCARD,
    "discard_highest_heart": DISCARD, "discard_highest": DISCARD, "bleed_spades": LEAD,
    "lead_low_from_short_suit": LEAD, "lead_lowest": LEAD,
}


def phases_of(rule) -> frozenset:
    """The phases a rule can apply in (every phase for a rule it does not know)."""
    tagged = getattr(rule, "phases", None)
    if tagged is not None:
        return tagged
    phase = _NORMAL_PHASES.get(rule.__name__)
    return frozenset([phase]) if phase else frozenset((PASS,) + PLAY)


class HardBot(RuleBot):
    name = "hard"
    rules = (
        pass_for_the_moon,
        pass_spades_by_direction,
        pass_exposed_spades,
        pass_by_danger,
        shoot_the_moon,
        stop_the_moon,
        dump_queen_on_the_winner,
        discard_spade_honours,
        discard_by_danger,
        shed_on_first_trick,
        slip_queen,
        unload_spade_honours,
        win_the_jack,
        follow_must_win,
        lead_by_estimate,
    ) + NORMAL_PLAY

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return self.decide(HardTable(observation, action_mask))[0]

    def explain(self, observation: np.ndarray, action_mask: np.ndarray) -> list[str]:
        _, chosen_by = self.decide(HardTable(observation, action_mask))
        names = [rule.__name__ for rule in self.rules] + ["lowest_legal"]
        return [names[i] for i in chosen_by]

    def decide(self, table: Table) -> tuple[np.ndarray, np.ndarray]:
        """As ``RuleBot.decide``, but each phase runs on its own games with the rules tagged for it;
        the rules that open every play phase's list (the moon rules) run once on all the play
        games, and each phase's other rules on its games that they left open."""
        none = len(self.rules)
        choice = np.full(table.n, NO_CARD, dtype=np.int64)
        chosen_by = np.full(table.n, none, dtype=np.int64)
        group = np.select([table.passing, table.leading, table.following], [0, 1, 2], 3)
        lists, opening = _phase_lists(tuple(self.rules))
        playing = np.flatnonzero(group > 0)
        if playing.size:
            facts(table)  # worked out once for all the games, cut for each subset
            if opening:
                t = table if playing.size == table.n else subset(table, playing)
                choice[playing], chosen_by[playing] = first_match(t, opening, none)
        for g, phase in enumerate((PASS,) + PLAY):
            rows = np.flatnonzero((group == g) & (choice < 0))
            if rows.size == 0:
                continue
            t = table if rows.size == table.n else subset(table, rows)
            choice[rows], chosen_by[rows] = first_match(t, lists[phase], none)
        choice = with_fallback(table, choice)
        return choice, chosen_by


@functools.lru_cache(maxsize=8)
def _phase_lists(rules: tuple) -> tuple[dict, list]:
    """(phase -> its ``(index, rule)`` list, the play phases' common opening rules taken out of
    theirs; that opening)."""
    lists = {phase: [(i, rule) for i, rule in enumerate(rules) if phase in phases_of(rule)] for phase in (PASS,) + PLAY}
    opening = []
    for entries in zip(*(lists[phase] for phase in PLAY)):
        if any(entry != entries[0] for entry in entries):
            break
        opening.append(entries[0])
    for phase in PLAY:
        lists[phase] = lists[phase][len(opening):]
    return lists, opening
