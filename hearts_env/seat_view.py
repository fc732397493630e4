"""What one seat knows, read back from its observation: the inverse of ``observe``.

``read(observation, action_mask)`` turns a batch of observation v1 vectors (and the legal masks,
when given) into a :class:`SeatView`: card sets (``uint64`` bitboards, see ``cards``) and small
integer arrays, batch first, in relative seats (0 = me, 1 = left, 2 = across, 3 = right; rows past
the player count stay empty). It is the one decoder of the observation: the heuristic bots, the
search and a user's own agent read the same facts from it, and it is compiled (one pass over the
batch), so a bot deciding millions of situations a second pays little for it::

    view = hearts_env.seat_view.read(observation, action_mask)
    view.hand[0], view.trick_card[0], view.winning_seat[0], view.voids[0]

Besides the observation's pieces it holds what follows from them by the rules: the trick's
current winner by the engine's own rule (``play.trick_winner``), the cards that would beat it,
whether the seat leads, follows or is last to play, and how many tricks are done. The player count
is read here (``observe.player_count`` of the ``two_players`` rule flag).

A seat view holds only what the observation holds, so it never knows a hidden card.
``worlds.deal_seat_views`` builds engine states consistent with a seat view (the search's sampled
deals).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import cards
from .compiled import jit
from .observe import OBS_DIM, OBS_VERSION, OBSERVATION_LAYOUT, RULE_FLAGS, player_count
from .play import trick_winner
from .rules import PRESETS
from .state import OVER, PASS, PLAY, EngineArgumentError, as_array

SEATS = 4  # relative seat rows, as in the observation


@dataclasses.dataclass(frozen=True)
class SeatView:
    """What each of ``n`` seats knows (one row per observation), in relative seats.

    Card sets are ``uint64`` bitboards; a seat index ``-1`` and a card ``-1`` mean "none".
    """

    n: int
    players: np.ndarray  # [N] int64 2 or 4
    deck: np.ndarray  # [N] uint64 the cards of the game's deck (whole or short)
    trump: np.ndarray  # [N] int64 trump suit, -1 for none
    rule_flags: np.ndarray  # [N, 12] bool the observation's ``rules`` piece (``observe.RULE_FLAGS``)
    jack_bonus: np.ndarray  # [N] bool J♦ counts as a bonus
    first_trick_protection: np.ndarray  # [N] bool no points on the first trick
    moon_off: np.ndarray  # [N] bool shooting the moon is off
    phase: np.ndarray  # [N] int64 ``state.PASS``, ``state.PLAY`` or ``state.OVER``
    passing: np.ndarray  # [N] bool phase is passing
    pass_offset: np.ndarray  # [N] int64 this hand's pass as the receiving relative seat (0: no pass)
    legal: np.ndarray  # [N] uint64 the legal cards (the mask; empty when no mask was given)
    hand: np.ndarray  # [N] uint64 my cards
    passed: np.ndarray  # [N] uint64 the cards I pass (or passed) this hand
    received: np.ndarray  # [N] uint64 the cards passed to me (after the exchange)
    played_by: np.ndarray  # [N, 4] uint64 cards each relative seat played this hand (trick included)
    played: np.ndarray  # [N] uint64 every card played this hand
    trick_card: np.ndarray  # [N, 4] int64 the card each relative seat played to the trick (-1: none yet)
    in_trick: np.ndarray  # [N] int64 cards in the current trick
    trick_bits: np.ndarray  # [N] uint64 the current trick's cards
    leader: np.ndarray  # [N] int64 relative seat that led the trick (-1 before the lead)
    led_suit: np.ndarray  # [N] int64 (-1 before the lead)
    winning_card: np.ndarray  # [N] int64 the card winning the trick so far (-1 before the lead)
    winning_seat: np.ndarray  # [N] int64 relative seat winning it so far (-1 before the lead)
    beats: np.ndarray  # [N] uint64 cards that would beat the winning card (empty before the lead)
    leading: np.ndarray  # [N] bool no card is in the trick
    last_to_play: np.ndarray  # [N] bool my card completes the trick
    following: np.ndarray  # [N] bool a card has been led and I hold (legal) cards of its suit
    void_now: np.ndarray  # [N] bool a card has been led and I cannot follow it
    tricks_done: np.ndarray  # [N] int64 tricks finished this hand
    trick_number: np.ndarray  # [N] float the observation's trick_number (tricks done / hand size)
    voids: np.ndarray  # [N, 4, 4] bool suits (C, D, H, S) each relative seat showed it is void in
    points_taken: np.ndarray  # [N, 4] int64 penalty card points each relative seat took this hand
    jack_taken: np.ndarray  # [N, 4] bool the relative seat that took J♦ (with the J♦ bonus)
    scores: np.ndarray  # [N, 4] float game totals before this hand, as shares of the target score
    to_act: np.ndarray  # [N] int64 relative seat to act (-1: game over)
    hearts_broken: np.ndarray  # [N] bool hearts may be led
    queen_seen: np.ndarray  # [N] bool Q♠ was played this hand
    queen_out: np.ndarray  # [N] bool Q♠ is neither mine nor played (another seat holds it, or it is dead)

    def score_points(self, target_score: int) -> np.ndarray:
        """``[N, 4]`` int64 game totals before this hand, given the game's target score (the
        observation holds them as shares of it)."""
        return np.rint(self.scores * target_score).astype(np.int64)


def read(observation: np.ndarray, action_mask: np.ndarray | None = None) -> SeatView:
    """The :class:`SeatView` of each observation ``[N, OBS_DIM]`` (or one ``[OBS_DIM]``), with its
    legal mask ``[N, 52]`` when given."""
    observation = as_array(observation, "observation")
    if observation.ndim == 1:
        observation = observation[None, :]
    if observation.ndim != 2 or observation.shape[1] != OBS_DIM:
        raise EngineArgumentError(f"observation v{OBS_VERSION} vectors have {OBS_DIM} floats: give [N, {OBS_DIM}], "
                                  f"got shape {observation.shape}")
    if observation.dtype not in (np.float32, np.float64):  # (the two the compiled reader takes)
        observation = observation.astype(np.float64)
    n = observation.shape[0]
    if action_mask is None:
        action_mask = np.zeros((n, cards.NUM_CARDS), dtype=bool)
    else:
        action_mask = as_array(action_mask, "action_mask")
        if action_mask.ndim == 1:
            action_mask = action_mask[None, :]
        if action_mask.shape != (n, cards.NUM_CARDS):
            raise EngineArgumentError(f"action_mask: give [N, 52] with N = {n} observations, got shape "
                                      f"{action_mask.shape}")
        if action_mask.dtype.kind not in "biuf":
            raise EngineArgumentError(f"action_mask must be numbers or booleans, got dtype {action_mask.dtype}")
    observation, action_mask = np.ascontiguousarray(observation), np.ascontiguousarray(action_mask)
    ints = lambda *shape: np.empty((n,) + shape, dtype=np.int64)  # noqa: E731
    sets = lambda *shape: np.empty((n,) + shape, dtype=np.uint64)  # noqa: E731
    flags = lambda *shape: np.empty((n,) + shape, dtype=bool)  # noqa: E731
    fields = dict(
        players=ints(), deck=sets(), trump=ints(), rule_flags=flags(len(RULE_FLAGS)), jack_bonus=flags(),
        first_trick_protection=flags(), moon_off=flags(), phase=ints(), passing=flags(), pass_offset=ints(),
        legal=sets(), hand=sets(), passed=sets(), received=sets(), played_by=sets(SEATS), played=sets(),
        trick_card=ints(SEATS), in_trick=ints(), trick_bits=sets(), leader=ints(), led_suit=ints(),
        winning_card=ints(), winning_seat=ints(), beats=sets(), leading=flags(), last_to_play=flags(),
        following=flags(), void_now=flags(), tricks_done=ints(), trick_number=np.empty(n, dtype=observation.dtype),
        voids=flags(SEATS, 4), points_taken=ints(SEATS), jack_taken=flags(SEATS),
        scores=np.empty((n, SEATS), dtype=observation.dtype), to_act=ints(), hearts_broken=flags(),
        queen_seen=flags(), queen_out=flags(),
    )
    _read(observation, action_mask, *fields.values())
    return SeatView(n=n, **fields)


# ---- the compiled reader ----------------------------------------------------------------------

_AT = {name: piece.start for name, (piece, _) in OBSERVATION_LAYOUT.items()}
_HAND, _PASSED, _RECEIVED, _TRICK, _PLAYED_BY = _AT["hand"], _AT["passed"], _AT["received"], _AT["trick"], _AT["played_by"]
_TRICK_LEADER, _VOIDS, _POINTS_TAKEN, _JACK_TAKEN = _AT["trick_leader"], _AT["voids"], _AT["points_taken"], _AT["jack_taken"]
_SCORES, _TO_ACT, _TRICK_NUMBER, _PHASE = _AT["scores"], _AT["to_act"], _AT["trick_number"], _AT["phase"]
_PASS_DIRECTION, _HEARTS_BROKEN, _QUEEN_SEEN, _RULES = (
    _AT["pass_direction"], _AT["hearts_broken"], _AT["queen_seen"], _AT["rules"])
_FLAG = {name: i for i, name in enumerate(RULE_FLAGS)}
_FIRST_TRICK_PROTECTION, _JACK_BONUS, _HEARTS_TRUMP = (
    _FLAG["first_trick_protection"], _FLAG["jack_of_diamonds_bonus"], _FLAG["hearts_trump"])
_SHORT_DECK, _TWO_PLAYERS, _MOON_OFF = _FLAG["short_deck"], _FLAG["two_players"], _FLAG["moon_off"]
_NUM_FLAGS = len(RULE_FLAGS)
_SHORT_DECK_BITS = PRESETS["two_player"].deck_bits
_ALL_BITS = cards.ALL_BITS
_SUIT_BITS = cards.SUIT_BITS
_QUEEN = cards.BIT[cards.QUEEN_OF_SPADES]
_HEARTS = cards.HEARTS
_RANKS = cards.NUM_RANKS
#: Where the card sets start in the observation: hand, passed, received, the trick's four cards
#: and the four seats' played cards, by relative seat.
_CARD_SET_AT = np.array([_HAND, _PASSED, _RECEIVED] + [_TRICK + cards.NUM_CARDS * seat for seat in range(SEATS)]
                        + [_PLAYED_BY + cards.NUM_CARDS * seat for seat in range(SEATS)], dtype=np.int64)
_CARD_SETS = len(_CARD_SET_AT)


_player_count = jit(player_count)


@jit
def _first_max(values, at, count):
    """np.argmax of ``values[at:at + count]`` (the first highest; a NaN first of all)."""
    best = 0
    for i in range(1, count):
        if np.isnan(values[at + best]):
            break
        if np.isnan(values[at + i]) or values[at + i] > values[at + best]:
            best = i
    return best


@jit
def _one_hot_seat(values, at):
    """The relative seat a one-hot seat piece marks; -1 when it marks none."""
    seat = _first_max(values, at, SEATS)
    return seat if values[at + seat] > 0.5 else -1


@jit
def _read(observation, action_mask, players, deck, trump, rule_flags, jack_bonus, first_trick_protection, moon_off,
          phase, passing, pass_offset, legal, hand, passed, received, played_by, played, trick_card, in_trick,
          trick_bits, leader, led_suit, winning_card, winning_seat, beats, leading, last_to_play, following,
          void_now, tricks_done, trick_number, voids, points_taken, jack_taken, scores, to_act, hearts_broken,
          queen_seen, queen_out):
    """Every ``SeatView`` field of every row (see ``SeatView``)."""
    # The card sets (and the legal set) are read first, each in a tight loop of its own: read in
    # among the other pieces they made the reading several times slower (not vectorised there).
    n = observation.shape[0]
    card_sets = np.zeros((n, _CARD_SETS), dtype=np.uint64)
    for g in range(n):
        for k in range(_CARD_SETS):
            at = _CARD_SET_AT[k]
            found = np.uint64(0)
            for card in range(cards.NUM_CARDS):
                if observation[g, at + card] > 0.5:
                    found |= cards.bit(card)
            card_sets[g, k] = found
        mine = np.uint64(0)
        for card in range(cards.NUM_CARDS):
            if action_mask[g, card] > 0:
                mine |= cards.bit(card)
        legal[g] = mine
    in_play_order = np.empty(SEATS, dtype=np.int64)
    for g in range(n):
        o = observation[g]
        for k in range(_NUM_FLAGS):
            rule_flags[g, k] = o[_RULES + k] > 0.5
        p = _player_count(np.int64(rule_flags[g, _TWO_PLAYERS]))
        players[g] = p
        trump[g] = _HEARTS if rule_flags[g, _HEARTS_TRUMP] else -1
        jack_bonus[g] = rule_flags[g, _JACK_BONUS]
        first_trick_protection[g] = rule_flags[g, _FIRST_TRICK_PROTECTION]
        moon_off[g] = rule_flags[g, _MOON_OFF]
        deck[g] = _SHORT_DECK_BITS if rule_flags[g, _SHORT_DECK] else _ALL_BITS
        passing[g] = o[_PHASE] > 0.5
        phase[g] = PASS if passing[g] else PLAY if o[_PHASE + 1] > 0.5 else OVER
        pass_offset[g] = _first_max(o, _PASS_DIRECTION, SEATS)
        hearts_broken[g] = o[_HEARTS_BROKEN] > 0.5
        queen_seen[g] = o[_QUEEN_SEEN] > 0.5
        trick_number[g] = o[_TRICK_NUMBER]
        to_act[g] = _one_hot_seat(o, _TO_ACT)

        hand[g], passed[g], received[g] = card_sets[g, 0], card_sets[g, 1], card_sets[g, 2]
        all_played, bits, count = np.uint64(0), np.uint64(0), 0
        for seat in range(SEATS):
            played_by[g, seat] = card_sets[g, 7 + seat]
            all_played |= played_by[g, seat]
            trick_set = card_sets[g, 3 + seat]
            trick_card[g, seat] = -1 if trick_set == 0 else cards.lowest_of(trick_set)
            if trick_set != 0:
                count += 1
                bits |= cards.bit(trick_card[g, seat])
            for suit in range(4):
                voids[g, seat, suit] = o[_VOIDS + 4 * seat + suit] > 0.5
            points_taken[g, seat] = np.int64(np.rint(o[_POINTS_TAKEN + seat] * 26))
            jack_taken[g, seat] = o[_JACK_TAKEN + seat] > 0.5
            scores[g, seat] = o[_SCORES + seat]
        played[g] = all_played
        in_trick[g], trick_bits[g] = count, bits
        # Each seat plays one card to every finished trick.
        tricks_done[g] = cards.popcount(played_by[g, 0] & ~bits)
        queen_out[g] = not (all_played | hand[g]) & _QUEEN

        # The current trick: its leader, and its winner so far by the engine's rule (the cards in
        # play order, from the leader).
        leading[g] = count == 0
        last_to_play[g] = count == p - 1
        if count == 0:
            leader[g], led_suit[g], winning_card[g], winning_seat[g], beats[g] = -1, -1, -1, -1, 0
        else:
            lead = _first_max(o, _TRICK_LEADER, SEATS)
            leader[g] = lead
            led_suit[g] = trick_card[g, lead] // _RANKS
            for i in range(count):
                in_play_order[i] = trick_card[g, (lead + i) % p]
            winner = (lead + trick_winner(in_play_order[:count], 0, trump[g])) % p
            winning_seat[g] = winner
            card = trick_card[g, winner]
            winning_card[g] = card
            suit = card // _RANKS
            higher = _SUIT_BITS[suit] & ~((cards.bit(card) << np.uint64(1)) - np.uint64(1))
            if suit == trump[g] or trump[g] < 0 or led_suit[g] == trump[g]:
                beats[g] = higher
            else:
                beats[g] = higher | _SUIT_BITS[trump[g]]
        following[g] = count != 0 and (legal[g] & _SUIT_BITS[max(led_suit[g], 0)]) != 0
        void_now[g] = count != 0 and not following[g]
