"""The ``hard`` bot: ``normal`` plus card counting, card places and voids, passing by direction,
moon defence and shooting the moon.

What it knows, all from the observation (``table.Seat``): the cards *out* (not in its hand and not
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

7. ``discard_queen`` (``easy``'s): Q♠.
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

Like the other levels, the rules are written over one game (a ``table.Seat``) and compiled with
Numba: one compiled call decides every game of the batch.
"""

from __future__ import annotations

import numpy as np

from hearts_env import cards
from hearts_env.cards import highest_of, lowest_of, popcount
from hearts_env.compiled import inline, jit

from . import easy, normal
from .base import RuleBot, rule_chain
from .easy import NO_CARD, keepers, safe_discards, without
from .normal import QUEEN_FIRST, SPADE_HONOURS, held_back_leads, kept
from .table import (
    AH,
    AS,
    HEARTS,
    HIGH_RANK,
    JD,
    KS,
    LOW_RANK,
    NONE,
    QS,
    RANKS,
    SPADES_BELOW_QUEEN,
    above,
    below,
    has,
    pick,
    seat,
)

POINT_CARDS = HEARTS | QS
HIGH_CARDS = cards.from_mask(RANKS >= 9)  # J, Q, K, A of every suit
DIAMONDS = cards.SUIT_BITS[cards.DIAMONDS]
DIAMONDS_ABOVE_JACK = DIAMONDS & ~((JD << np.uint64(1)) - np.uint64(1))
SUIT_BITS = cards.SUIT_BITS

# Passing.
MOON_PASS_HIGH_CARDS = 6  # cards from the jack up that make a hand to shoot with
LOW_SPADES_TO_KEEP_QUEEN = 5  # spades below the queen that protect Q♠ kept
LOW_SPADES_TO_KEEP_HONOURS = 3  # ... that protect A♠/K♠ without Q♠
PASS_PROTECTION = 1.5  # rank a card loses per card of its suit below it kept
PASS_HIGH_HEART = 2.0  # rank J♥ and up gain
PASS_LOW_SPADE = 50.0  # rank spades below the queen lose (never passed while another card will do)
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

# ---- what hard works out ---------------------------------------------------------------------

@jit
def higher_out(s, card):
    """Cards out above ``card`` in its suit."""
    return popcount(s.out & above(card))


@jit
def lower_out(s, card):
    """Cards out below ``card`` in its suit."""
    return popcount(s.out & below(card))


@jit
def bosses(s, card_set):
    """Cards of ``card_set`` with no higher card still out in their suit (they win if led)."""
    found = NONE
    rest = card_set
    while rest:
        card = lowest_of(rest)
        rest &= rest - np.uint64(1)
        if s.out & above(card) == 0:
            found |= cards.bit(card)
    return found


@jit
def top_heart(s):
    hearts = s.hand & HEARTS
    return cards.bit(highest_of(hearts)) if hearts else NONE


# ---- passing --------------------------------------------------------------------------------

@jit
def low_spades_kept(s):
    return popcount(kept(s) & SPADES_BELOW_QUEEN)


@jit
def short_under_queen(s):
    return low_spades_kept(s) < LOW_SPADES_TO_KEEP_QUEEN


@inline
def pass_for_the_moon(s):
    strong = (popcount(s.hand & HIGH_CARDS) >= MOON_PASS_HIGH_CARDS and has(s.hand, AH) and has(s.hand, QS | AS)
              and s.passing and not s.moon_off)
    if not strong:
        return NO_CARD
    return pick(without(s.legal & ~HIGH_CARDS & ~HEARTS & ~SPADES_BELOW_QUEEN, keepers(s)), LOW_RANK)


@inline
def pass_spades_by_direction(s):
    if not (s.passing and has(s.hand, QS) and short_under_queen(s)):
        return NO_CARD
    if s.pass_offset == 1 or s.pass_offset == 2:
        together = pick(s.legal & SPADE_HONOURS, QUEEN_FIRST)
        if together >= 0:
            return together
    return pick(s.legal & QS, HIGH_RANK) if s.pass_offset == 3 else NO_CARD


@inline
def pass_exposed_spades(s):
    if not (s.passing and not has(s.hand, QS) and low_spades_kept(s) < LOW_SPADES_TO_KEEP_HONOURS):
        return NO_CARD
    return pick(s.legal & (AS | KS), HIGH_RANK)


@jit
def kept_spade_honours(s):
    """Q♠ with five low spades: it keeps Q♠, A♠ and K♠; passing Q♠ to the right: A♠ and K♠."""
    queen = s.passing and has(s.hand, QS)
    if queen and not short_under_queen(s):
        return SPADE_HONOURS
    if queen and s.pass_offset == 3 and has(s.passed, QS):
        return AS | KS
    return NONE


@inline
def pass_by_danger(s):
    if not s.passing:
        return NO_CARD
    mine = kept(s)
    for card in range(cards.NUM_CARDS):
        rank = card % cards.NUM_RANKS
        score = rank - PASS_PROTECTION * popcount(mine & below(card))
        if card // cards.NUM_RANKS == cards.HEARTS and rank >= 9:
            score += PASS_HIGH_HEART
        if has(SPADES_BELOW_QUEEN, cards.bit(card)):
            score -= PASS_LOW_SPADE
        s.card_scores[card] = score
    return pick(without(s.legal, kept_spade_honours(s) | keepers(s)), s.card_scores)


# ---- the moon -------------------------------------------------------------------------------

@jit
def moon_is_on(s):
    mine = s.points_taken[0]
    others_clean = s.points_taken[1] + s.points_taken[2] + s.points_taken[3] == 0
    hearts_mine = has(s.hand, AH) or mine > 0
    queen_mine = has(s.hand, QS) or mine >= 13
    if not (others_clean and hearts_mine and queen_mine and not s.passing and not s.moon_off):
        return False
    return mine >= MOON_POINTS_SUNK or popcount(s.hand & ~bosses(s, s.hand)) <= MOON_LOOSE_CARDS


@inline
def shoot_the_moon(s):
    if not moon_is_on(s):
        return NO_CARD
    if s.leading:
        top = bosses(s, s.legal)
        return pick(top, HIGH_RANK) if top != 0 else pick(without(s.legal, HEARTS), HIGH_RANK)
    if s.following:
        winners = s.legal & s.beats
        return pick(winners, HIGH_RANK) if winners != 0 else pick(s.legal, LOW_RANK)
    return pick(without(s.legal & ~POINT_CARDS, keepers(s)), LOW_RANK)


@jit
def moon_thresholds(s):
    """The opponent's points that start the moon defence, and the points taken from which it takes
    a point trick on purpose."""
    if s.players == 2:
        return MOON_THREAT_TWO_PLAYER, MOON_TAKE_TWO_PLAYER
    return MOON_THREAT, MOON_TAKE


@jit
def moon_threat(s, points):
    """Relative seat of an opponent who holds every point taken so far (at least ``points``, with
    points still to take), else -1."""
    taken = s.points_taken
    total, most = 0, 0
    for other in range(4):
        total += taken[other]
        if taken[other] > taken[most]:
            most = other
    alone = taken[most] == total and total >= points and most != 0
    points_left = (s.deck & ~s.played & POINT_CARDS) != 0
    return most if alone and points_left and not s.passing and not s.moon_off else -1


@inline
def stop_the_moon(s):
    threat, take_from = moon_thresholds(s)
    shooter = moon_threat(s, threat)
    if shooter < 0:
        return NO_CARD
    urgent = s.points_taken[0] + s.points_taken[1] + s.points_taken[2] + s.points_taken[3] >= take_from
    shooter_later = s.later[shooter]
    shooter_winning = s.winning_seat == shooter
    # Take on purpose a trick the shooter would take (with points in it, or still to play): with
    # the highest card, or in the two-player game (taking early, when a point is enough) the lowest.
    threat_here = (shooter_winning and s.trick_points > 0) or shooter_later
    if urgent and s.following and threat_here:
        card = pick(s.legal & s.beats, LOW_RANK if s.players == 2 else HIGH_RANK)
        if card >= 0:
            return card
    # Void, with hearts trump: the lowest heart takes the shooter's trick and a point with it.
    if urgent and s.void_now and shooter_winning:
        card = pick(s.legal & s.beats & HEARTS, LOW_RANK)
        if card >= 0:
            return card
    # Void: points go to a winner who is not the shooter, once the shooter has played ...
    winner_ok = not shooter_winning and not shooter_later
    if s.void_now and winner_ok:
        card = pick(safe_discards(s) & POINT_CARDS, QUEEN_FIRST)
        if card >= 0:
            return card
    # ... else shed a card without points, keeping the stopper.
    if s.void_now and not winner_ok:
        card = pick(safe_discards(s) & ~POINT_CARDS & ~top_heart(s), HIGH_RANK)
        if card >= 0:
            return card
    # Leading: a heart nobody can beat takes the points away from the shooter.
    if urgent and s.leading:
        return pick(bosses(s, s.legal & HEARTS), HIGH_RANK)
    return NO_CARD


# ---- discarding -----------------------------------------------------------------------------

@inline
def discard_by_danger(s):
    discards = safe_discards(s)
    if discards == 0:
        return NO_CARD
    for card in range(cards.NUM_CARDS):
        score = card % cards.NUM_RANKS - DISCARD_PROTECTION * popcount(s.hand & below(card))
        score += DISCARD_HEART if card // cards.NUM_RANKS == cards.HEARTS else 0.0
        s.card_scores[card] = score
    return pick(discards, s.card_scores)


# ---- following ------------------------------------------------------------------------------

@inline
def shed_on_first_trick(s):
    first = s.following and s.first_trick and s.trick_points == 0 and s.first_trick_protection
    return pick(s.legal, HIGH_RANK) if first else NO_CARD


@inline
def slip_queen(s):
    return pick(s.legal & QS & ~s.beats, HIGH_RANK) if s.following else NO_CARD


@inline
def unload_spade_honours(s):
    queen_later = False
    for other in range(4):
        queen_later |= s.later[other] and has(s.holds[other], QS)
    safe = (s.following and s.led_suit == cards.SPADES and s.queen_out and not queen_later
            and not has(s.trick_bits, QS))
    return pick(s.legal & (AS | KS), HIGH_RANK) if safe else NO_CARD


@inline
def win_the_jack(s):
    if not s.jack_bonus or s.passing:
        return NO_CARD
    if s.following and has(s.trick_bits, JD) and s.trick_points < 0:
        card = pick(without(s.legal & s.beats, QS), HIGH_RANK)
        if card >= 0:
            return card
    followers = True
    for other in range(4):
        followers &= has(s.holds[other], DIAMONDS) or not s.opponents[other]
    if s.leading and followers and (s.out & DIAMONDS_ABOVE_JACK) == 0:
        return pick(s.legal & JD, HIGH_RANK)
    return NO_CARD


@inline
def follow_must_win(s):
    if not (s.following and not s.last_to_play and (s.legal & ~s.beats) == 0):
        return NO_CARD
    legal = without(s.legal, QS)
    later = NONE
    for other in range(4):
        if s.later[other]:
            later |= s.holds[other]
    later_suit = later & SUIT_BITS[max(s.led_suit, 0)]
    catchable = legal & ~above(highest_of(later_suit)) if later_suit != 0 else NONE  # a later seat could overtake
    return pick(legal, HIGH_RANK) if catchable == 0 else pick(legal, LOW_RANK)


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


@inline
def lead_by_estimate(s):
    """Scores each candidate lead: minus its suit's length, minus ``LEAD_WEIGHT`` x its chance to
    win the trick x what a won trick of its suit costs (see the module's docstring)."""
    candidates = without(s.legal, held_back_leads(s)) if s.leading and not s.passing else NONE
    if candidates == 0:
        return NO_CARD
    hearts_out = popcount(s.out & HEARTS)
    queen_holders = 0
    for other in range(4):
        queen_holders += s.opponents[other] and has(s.holds[other], QS)
    queen_points = 13.0 / max(queen_holders, 1) if s.queen_out else 0.0
    bleed = s.queen_out and not has(s.hand, QS)
    for suit in range(4):
        suit_bits = SUIT_BITS[suit]
        if candidates & suit_bits == 0:
            continue
        # Who can follow the suit, who may dump points on it.
        k, m, dumpers, last_follows, dirty, queen_dump = 0, 0, 0, False, False, False
        for other in range(1, 4):
            if not s.opponents[other]:
                continue
            follows = has(s.holds[other], suit_bits)
            is_last = other == s.players - 1
            may_points = has(s.holds[other], POINT_CARDS)
            k += follows
            if follows:
                m += not is_last
                last_follows |= is_last
            else:
                # A seat before the last that cannot follow may dump points: the last seat then ducks too.
                dirty |= not is_last and may_points
                dumpers += may_points
                queen_dump |= has(s.holds[other], QS)
        m += last_follows and dirty
        last_follows = last_follows and not dirty
        cost = DUMP_POINTS * dumpers + (queen_points if queen_dump else 0.0) + LEAD_COST
        if suit == cards.HEARTS:
            cost += 1.0 + min(k, hearts_out)
        suit_score = -LEAD_SUIT_LENGTH * popcount(s.hand & suit_bits)
        if suit == cards.SPADES:
            suit_score -= LEAD_KEEP_QUEEN_GUARD if has(s.hand, QS) else 0.0
        at = ((k * 4 + m) * 2 + last_follows) * 169
        for card in range(suit * cards.NUM_RANKS, (suit + 1) * cards.NUM_RANKS):
            p_win = WIN_TABLE[at + higher_out(s, card) * 13 + lower_out(s, card)]
            score = suit_score - LEAD_WEIGHT * p_win * cost
            score += LEAD_BLEED if bleed and has(SPADES_BELOW_QUEEN, cards.bit(card)) else 0.0
            s.card_scores[card] = score
    return pick(candidates, s.card_scores)


# ---- the bot --------------------------------------------------------------------------------

#: hard's own rules, then ``normal``'s play rules, in the order ``first_rule`` tries them.
RULES = (
    pass_for_the_moon,
    pass_spades_by_direction,
    pass_exposed_spades,
    pass_by_danger,
    shoot_the_moon,
    stop_the_moon,
    easy.discard_queen,
    normal.discard_spade_honours,
    discard_by_danger,
    shed_on_first_trick,
    slip_queen,
    unload_spade_honours,
    win_the_jack,
    follow_must_win,
    lead_by_estimate,
) + normal.PLAY_RULES
first_rule = rule_chain(RULES)


@jit
def _decide(pieces, choice, chosen_by):
    scores = np.empty(cards.NUM_CARDS)
    for g in range(choice.size):
        choice[g], chosen_by[g] = first_rule(seat(pieces, g, scores))


class HardBot(RuleBot):
    name = "hard"
    rules = RULES
    kernel = _decide
