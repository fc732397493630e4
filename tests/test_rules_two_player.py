"""Scripted deals, played by card name, for the two-player 28-card game (003)."""

import numpy as np
import pytest

import hearts_env as he
from hearts_env import cards
from tests.scripted import cards_text, game, hand, legal, play, play_lowest

TWO = he.Rules.preset("two_player")
SHORT_DECK = cards_text(" ".join(r + s for s in "CDHS" for r in "2468TQA"))


def test_deck_is_28_cards_without_3_5_7_9_J_K():
    assert {cards.card_text(c) for c in cards.cards_of(TWO.deck_bits)} == SHORT_DECK
    assert not any(t[0] in "3579JK" for t in SHORT_DECK)


def test_deal_two_hands_of_13_and_two_dead_cards_never_dealt():
    state = he.init(TWO, 500, seed=5)
    assert (cards.count(state.hands) == 13).all() and (cards.count(state.dead) == 2).all()
    everything = state.hands[:, 0] | state.hands[:, 1] | state.dead
    assert (everything == TWO.deck_bits).all()
    assert ((state.hands[:, 0] | state.hands[:, 1]) & state.dead == 0).all()
    # Dead cards stay out of play for the whole hand.
    state = play_lowest(state.take([0]))
    assert state.last_hand_points[0].sum() in (20, int(cards.count(TWO.point_bits & ~he.init(TWO, 500, seed=5).dead[0])))


def test_no_passing_in_two_player():
    assert he.init(TWO, 8, seed=1).phase.tolist() == [he.PLAY] * 8


def test_two_of_clubs_leads():
    state = game(TWO, {1: "2C"}, dead="8C QC", hand_number=0)
    assert state.current_player[0] == 1 and legal(state) == {"2C"}


def test_lead_falls_back_to_four_of_clubs():
    state = game(TWO, {0: "6C", 1: "4C"}, dead="2C 8C", hand_number=0)
    assert state.current_player[0] == 1 and legal(state) == {"4C"}


def test_lead_falls_back_to_six_of_clubs():
    state = game(TWO, {0: "6C", 1: "8C"}, dead="2C 4C", hand_number=0)
    assert state.current_player[0] == 0 and legal(state) == {"6C"}


def test_hearts_trump_a_led_club():
    state = game(TWO, {0: "2C 4C 6C 8C TC QC AC", 1: "2H"}, dead="QH AH", hand_number=0)
    assert not any(c.endswith("C") for c in hand(state, 1))
    state = play(state, "2C 2H")
    assert state.leader[0] == 1 and cards.count(state.taken[0, 1]) == 2
    assert state.hearts_broken[0]  # a heart played on a club lead breaks hearts


def test_highest_trump_wins_a_heart_lead():
    state = game(TWO, {0: "2C 4H", 1: "4C 8H"}, dead="6C 8C", hand_number=0)
    state = play(state, "2C 4C")  # seat 1 wins with 4C and leads
    assert state.current_player[0] == 1


def test_higher_club_wins_without_trump():
    state = game(TWO, {0: "2C", 1: "AC"}, dead="4C 6C", hand_number=0)
    state = play(state, "2C AC")
    assert state.leader[0] == 1


def test_hearts_cannot_be_led_until_broken():
    state = game(TWO, {0: "2C 6D", 1: "AC 2H 4H 2S"}, dead="4C 6C", hand_number=0)
    state = play(state, "2C AC")
    assert state.current_player[0] == 1 and not state.hearts_broken[0]
    assert not {c for c in legal(state) if c.endswith("H")}


def test_queen_of_spades_any_time_and_no_first_trick_protection():
    state = game(TWO, {0: "2C", 1: "QS 2H 4H 6H 8H TH QH AH 2D 4D 6D 8D TD"}, dead="4C 6C", hand_number=0)
    state = play(state, "2C")
    assert {"QS", "2H", "2D"} <= legal(state)


def test_moon_in_two_player_gives_opponent_20():
    # Seat 0 holds every heart and Q♠ and the top cards: it takes every trick.
    hearts = "2H 4H 6H 8H TH QH AH"
    state = game(TWO, {0: "AC QC TC QS AS " + hearts[:-3] + " AH AD", 1: "2C"},
                 dead="QD 2S", hand_number=0)
    assert cards.count(state.hands[0, 0]) == 13
    state = play_lowest(state)
    assert state.last_hand_points[0].tolist() == [0, 20]


def test_moon_with_a_dead_point_card():
    # Q♥ is dead: taking the six other hearts and Q♠ is a moon.
    state = game(TWO, {0: "AC QC TC 8C QS AS AD 2H 4H 6H 8H TH AH", 1: "2C"}, dead="QH 2S", hand_number=0)
    state = play_lowest(state)
    assert state.last_hand_points[0].tolist() == [0, 20]


def test_two_player_points_without_moon():
    state = game(TWO, {0: "2C QS", 1: "AC 2H"}, dead="4C 6C", hand_number=0)
    state = play_lowest(state)
    pts = state.last_hand_points[0]
    assert sorted(pts.tolist()) != [0, 20] and pts.sum() == 13 + 7


def test_two_player_game_to_100_tie_plays_on():
    hearts = "2H 4H 6H 8H TH AH"
    fixed = {0: "AC QC TC 8C QS AS AD " + hearts, 1: "2C"}
    state = play_lowest(game(TWO, fixed, dead="QH 2S", hand_number=0, scores=[100, 80]))
    assert state.scores[0].tolist() == [100, 100] and not state.done[0]
    state = play_lowest(game(TWO, fixed, dead="QH 2S", hand_number=0, scores=[50, 80]))
    assert state.scores[0].tolist() == [50, 100] and state.done[0] and state.winner[0] == 0


def test_dead_cards_are_never_dealt_with_from_deal():
    with pytest.raises(ValueError, match="not in the short28 deck"):
        he.from_deals(TWO, np.zeros((1, 52), dtype=np.int64), [0])
