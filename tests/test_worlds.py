"""Worlds consistent with a seat's view (``hearts_env.worlds``): scripted cases by card name (voids,
cards known passed, room, conservation, the two-player dead pile, impossible views) and a property
test over positions of random real games: every world sampled fits what the seat saw, and the
true deal is always among the feasible ones (the sampler never raises on a real game)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hearts_env as he
from hearts_env import cards, worlds
from hearts_env.state import PASS

CLASSIC = he.Rules.preset("classic")
TWO = he.Rules.preset("two_player")


def bits(text: str) -> np.uint64:
    return cards.bits_of(cards.parse_cards(text))


def names(card_set) -> set[str]:
    return {cards.card_text(c) for c in cards.cards_of(card_set)}


def problem(hidden: str, room: list[int], k: int = 1):
    """``k`` copies of one placement problem: ``hidden`` cards, every holder may hold every card."""
    h = len(room)
    return (np.full(k, bits(hidden), dtype=np.uint64), np.tile(room, (k, 1)),
            np.ones((k, 52, h), dtype=bool))


def suit_cards(suit: str, skip: str = "") -> str:
    return " ".join(r + suit for r in cards.RANK_CHARS if r + suit not in skip.split())


def classic_hidden(own: str) -> str:
    """The 39 cards of the classic deck outside ``own``."""
    mine = set(own.split())
    return " ".join(cards.card_text(c) for c in range(52) if cards.card_text(c) not in mine)


OWN = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"  # this seat holds the clubs: 39 cards to place


# ---- scripted cases ----------------------------------------------------------------------------


def test_a_seat_void_in_a_suit_never_gets_a_card_of_it():
    own = "2C 3C 4C 5C 2D 3D 4D 5D 2H 3H 4H 5H 2S"
    hidden, room, may = problem(classic_hidden(own), [13, 13, 13], k=300)
    voids = np.zeros((300, 3, 4), dtype=bool)
    voids[:, 1, cards.CLUBS] = True  # across showed it has no clubs
    voids[:, 2, cards.HEARTS] = True  # right showed it has no hearts
    hands = worlds.place(hidden, room, worlds.may_hold_from_voids(voids), np.random.default_rng(1))
    assert not (hands[:, 1] & cards.SUIT_BITS[cards.CLUBS]).any()
    assert not (hands[:, 2] & cards.SUIT_BITS[cards.HEARTS]).any()
    # The nine hidden clubs are then all with left or right; both get some of them sometimes.
    assert ((hands[:, 0] & cards.SUIT_BITS[cards.CLUBS]) != 0).any()
    assert ((hands[:, 2] & cards.SUIT_BITS[cards.CLUBS]) != 0).any()


def test_room_is_respected_and_the_hidden_cards_are_placed_exactly_once():
    hidden, room, may = problem(classic_hidden(OWN), [12, 13, 14], k=200)
    hands = worlds.place(hidden, room, may, np.random.default_rng(2))
    assert (cards.count(hands) == room).all()
    assert (np.bitwise_or.reduce(hands, axis=1) == hidden).all()  # every hidden card placed ...
    assert (cards.count(hands).sum(axis=1) == 39).all()  # ... and only once
    assert not (hands & bits(OWN)).any()


def test_a_boolean_card_mask_works_like_a_card_set():
    hidden, room, may = problem(classic_hidden(OWN), [13, 13, 13], k=5)
    as_set = worlds.place(hidden, room, may, np.random.default_rng(3))
    as_mask = worlds.place(cards.to_mask(hidden), room, may, np.random.default_rng(3))
    np.testing.assert_array_equal(as_set, as_mask)


def test_cards_go_to_each_holder_in_proportion_to_its_room():
    hidden, room, may = problem(classic_hidden(OWN), [13, 13, 13], k=3000)
    hands = worlds.place(hidden, room, may, np.random.default_rng(4))
    share = ((hands & cards.BIT[cards.QUEEN_OF_SPADES]) != 0).mean(axis=0)
    np.testing.assert_allclose(share, 1 / 3, atol=0.04)


def test_a_card_known_passed_to_the_left_seat_is_always_there():
    # A real hand: seat 0 passes AS KS QS to the left (hand 0); after the exchange seat 0's view
    # knows they are with seat 1 until seat 1 plays them.
    deal = [OWN.split()[:10] + ["AS", "KS", "QS"],
            "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD".split(),
            "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH".split(),
            "2S 3S 4S 5S 6S 7S 8S 9S TS JS".split() + ["KC", "AC", "QC"]]
    state = he.from_deal(CLASSIC, deal, hand_number=0)
    for hand in deal:
        for card in hand[-3:]:
            he.step_inplace(state, [cards.parse_card(card)])
    assert state.phase[0] == he.PLAY
    view = worlds.hidden_cards(state, 0)
    assert list(view.holder_seats[0]) == [1, 2, 3]
    assert names(view.known[0, 0]) == {"AS", "KS", "QS"}
    assert not view.hidden[0] & bits("AS KS QS")
    hands = view.sample(np.random.default_rng(5), k=200)
    assert (hands[:, 0] & bits("AS KS QS") == bits("AS KS QS")).all()
    assert (cards.count(hands) == 13).all()
    # The same, said as a constraint instead: AS hidden, but only the left seat may hold it.
    hidden, room, may = problem(classic_hidden(OWN), [13, 13, 13], k=200)
    may[:, cards.parse_card("AS"), 1:] = False
    hands = worlds.place(hidden, room, may, np.random.default_rng(6))
    assert (hands[:, 0] & bits("AS")).all()


def test_two_players_share_the_hidden_cards_with_the_dead_pile():
    # The 28-card deck (2 4 6 8 T Q A of each suit), 13 cards each, 2 dead. This seat holds 13
    # (five hearts among them); 15 are hidden: 13 with the other seat, 2 dead. The other seat
    # showed it has no hearts: the two hidden hearts, QH and AH, are the dead cards.
    own = "2C 4C 6C 8C 2D 4D 6D 8D 2H 4H 6H 8H TH"
    hidden = " ".join(c for c in map(cards.card_text, cards.cards_of(TWO.deck_bits)) if c not in own.split())
    assert len(hidden.split()) == 15
    h, room, anywhere = problem(hidden, [13, 2], k=300)
    voids = np.zeros((300, 2, 4), dtype=bool)
    voids[:, 0, cards.HEARTS] = True  # the dead pile (holder 1) shows nothing
    hands = worlds.place(h, room, worlds.may_hold_from_voids(voids), np.random.default_rng(7))
    assert (hands[:, 1] == bits("QH AH")).all()
    assert (hands[:, 0] == h & ~bits("QH AH")).all()
    # Without the void, the dead pile gets two of the hidden cards at random.
    hands = worlds.place(h, room, anywhere, np.random.default_rng(8))
    assert (cards.count(hands) == [13, 2]).all()
    assert len(set(hands[:, 1].tolist())) > 20


def test_a_two_player_game_view_has_the_dead_pile_as_last_holder():
    state = he.init(TWO, 4, seed=3)
    view = worlds.hidden_cards(state)
    assert (view.holder_seats[:, -1] == worlds.DEAD).all()
    assert (view.room == [[TWO.hand_size, TWO.dead_cards]]).all()
    assert (cards.count(view.hidden) == TWO.hand_size + TWO.dead_cards).all()


def test_an_impossible_view_raises_naming_the_card_that_fits_no_holder():
    hidden, room, may = problem(classic_hidden("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2D"), [13, 13, 13], k=3)
    voids = np.zeros((3, 3, 4), dtype=bool)
    voids[2, :, cards.CLUBS] = True  # world 2: every other seat void in clubs, yet AC is hidden
    with pytest.raises(worlds.NoConsistentWorld, match="game 2: .*AC fits no holder") as err:
        worlds.place(hidden, room, worlds.may_hold_from_voids(voids), np.random.default_rng(0))
    assert isinstance(err.value, ValueError)
    assert (err.value.game, cards.card_text(err.value.card), err.value.holders) == (2, "AC", ())
    # Too many cards for the only seats that may hold them: 13 hidden hearts, only left may hold
    # hearts and it has room for 12.
    hidden, room, may = problem(classic_hidden(OWN), [12, 14, 13])
    may[:, 26:39, 1:] = False
    with pytest.raises(worlds.NoConsistentWorld, match=r"13 hidden cards \(2H .* AH\) may be held only by "
                                                       r"holder 0, with room for 12, so .H fits no holder"):
        worlds.check(hidden, room, may)
    # Rooms that do not add up.
    hidden, room, may = problem(classic_hidden(OWN), [13, 13, 14])
    with pytest.raises(worlds.NoConsistentWorld, match="room for 40 cards, but 39 are hidden"):
        worlds.place(hidden, room, may, np.random.default_rng(0))


def test_a_fixed_seed_gives_the_same_worlds():
    hidden, room, may = problem(classic_hidden(OWN), [13, 13, 13], k=20)
    one = worlds.place(hidden, room, may, np.random.default_rng(9))
    two = worlds.place(hidden, room, may, np.random.default_rng(9))
    np.testing.assert_array_equal(one, two)


# ---- property: positions of real games ---------------------------------------------------------


def random_positions(rules: he.Rules, games: int, steps: int, seed: int) -> he.State:
    """``games`` games of random legal play, ``steps`` actions in (finished games left out)."""
    rng = np.random.default_rng(seed)
    state = he.init(rules, games, seed=seed, hand_number=rng.integers(0, 4, games), single_hand=True)
    for _ in range(steps):
        if state.done.all():
            break
        mask = he.legal_mask(state)  # all False in finished games, which take no action
        he.step_inplace(state, np.argmax(rng.random(mask.shape) * mask, axis=1))
    return state.take((~state.done).nonzero()[0])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from([CLASSIC, TWO, CLASSIC.replace(hearts_must_be_broken=False)]),
       steps=st.integers(0, 64), seed=st.integers(0, 2**32 - 1))
def test_worlds_of_real_games_fit_what_the_seat_saw(rules, steps, seed):
    state = random_positions(rules, 16, steps, seed)
    if not state.batch_size:
        return
    n, k, _p = state.batch_size, 12, rules.num_players
    view = worlds.hidden_cards(state)
    games = np.arange(n)
    seat = state.current_player
    holders = view.holder_seats
    dead = holders < 0
    true = np.where(dead, state.dead[:, None], state.hands[games[:, None], np.maximum(holders, 0)])
    # The true deal is one of the feasible ones: known cards are really there, the hidden ones
    # are with a holder that may hold them, and each holder's room is its true hidden holding.
    assert ((true & view.known) == view.known).all()
    true_hidden = true & ~view.known
    assert (np.bitwise_or.reduce(true_hidden, axis=1) == view.hidden).all()
    np.testing.assert_array_equal(cards.count(true_hidden), view.room)
    true_mask = cards.to_mask(true_hidden)  # [N, H, 52]
    assert not (true_mask & ~np.moveaxis(view.may_hold, 1, 2)).any()
    worlds.check(view.hidden, view.room, view.may_hold)

    hands = view.sample(np.random.default_rng(seed), k)  # never raises on a real game
    rep = lambda a: np.repeat(a, k, axis=0)  # noqa: E731
    np.testing.assert_array_equal(cards.count(hands), cards.count(rep(true)))  # sizes
    placed = np.bitwise_or.reduce(hands, axis=1)
    assert (cards.count(hands).sum(axis=1) == cards.count(placed)).all()  # each card once
    own = rep(state.hands[games, seat])
    played = rep(np.bitwise_or.reduce(state.played, axis=1))
    assert (placed == rules.deck_bits & ~own & ~played).all()  # the seat's hand untouched
    assert ((hands & rep(view.known)) == rep(view.known)).all()
    seat_holders = np.maximum(rep(holders), 0)
    voids = np.take_along_axis(rep(state.voids), seat_holders[:, :, None], axis=1)  # [N*k, H, 4]
    for suit in range(4):
        shown = voids[:, :, suit] & ~rep(dead)
        assert not (hands[shown] & cards.SUIT_BITS[suit]).any()
    if (state.phase == PASS).all():
        assert not view.known.any()
