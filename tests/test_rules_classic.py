"""Scripted deals, played by card name, for every rule of classic Hearts (SUMMARY.md)."""

import numpy as np
import pytest

import hearts_env as he
from hearts_env import cards, scoring
from tests.scripted import NO_PASS_HAND, cards_text, game, hand, legal, owner_of, play, play_lowest

CLASSIC = he.Rules.preset("classic")
# Seat 0 holds the top four clubs, diamonds and spades and A♥: it wins every trick.
MOON_HAND = "AC KC QC JC AD KD QD JD AS KS QS JS AH"


# ---- deal -------------------------------------------------------------------------------------

def test_four_hands_of_thirteen_from_52_cards():
    state = he.init(CLASSIC, 64, seed=3)
    assert (cards.count(state.hands) == 13).all()
    assert (np.bitwise_or.reduce(state.hands, axis=1) == cards.ALL_BITS).all()
    assert (state.dead == 0).all()


# ---- passing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("hand_number, direction, receiver", [(0, "left", 1), (1, "right", 3), (2, "across", 2),
                                                               (4, "left", 1)])
def test_pass_directions_cycle(hand_number, direction, receiver):
    state = game(CLASSIC, {0: "AS KS QS", 1: "2C 3C 4C", 2: "5C 6C 7C", 3: "8C 9C TC"}, hand_number=hand_number)
    assert state.phase[0] == he.PASS and CLASSIC.pass_direction(hand_number) == direction
    state = play(state, "AS KS QS 2C 3C 4C 5C 6C 7C 8C 9C")
    # Cards move only when every seat has chosen: nothing has moved yet.
    assert {"AS", "KS", "QS"} <= hand(state, 0)
    state = play(state, "TC")
    assert {"AS", "KS", "QS"} <= hand(state, receiver)
    assert not {"AS", "KS", "QS"} & hand(state, 0)
    assert state.phase[0] == he.PLAY


def test_no_pass_every_fourth_hand():
    state = game(CLASSIC, {}, hand_number=3)
    assert state.phase[0] == he.PLAY
    assert CLASSIC.pass_direction(7) == "none"


def test_pass_picks_one_seat_at_a_time_and_never_the_same_card_twice():
    state = game(CLASSIC, {0: "AS KS QS"}, hand_number=0)
    state = play(state, "AS")
    assert state.current_player[0] == 0 and "AS" not in legal(state)
    with pytest.raises(he.IllegalActionError, match="AS"):
        play(state, "AS")
    state = play(state, "KS QS")
    assert state.current_player[0] == 1


def test_pass_count_option():
    rules = CLASSIC.replace(pass_count=1)
    state = game(rules, {0: "AS", 1: "2C", 2: "3C", 3: "4C"}, hand_number=0)
    state = play(state, "AS 2C 3C 4C")
    assert state.phase[0] == he.PLAY and "AS" in hand(state, 1) and "4C" in hand(state, 0)


# ---- first trick ------------------------------------------------------------------------------

def test_two_of_clubs_holder_leads_it():
    state = game(CLASSIC, {2: "2C"})
    assert state.current_player[0] == 2 and legal(state) == {"2C"}


def test_first_trick_no_hearts_or_queen_when_something_else():
    state = game(CLASSIC, {0: "2C", 1: "QS AH KH 2D 3H 4H 5H 6H 7H 8H 9H TH JH"})
    state = play(state, "2C")
    assert legal(state) == {"2D"}


def test_first_trick_only_hearts_and_queen_may_play_any():
    state = game(CLASSIC, {0: "2C", 1: "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"})
    state = play(state, "2C")
    assert legal(state) == cards_text("QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")


def test_first_trick_protection_off():
    state = game(CLASSIC.replace(first_trick_protection=False), {0: "2C", 1: "QS AH 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD"})
    state = play(state, "2C")
    assert {"QS", "AH", "2D"} <= legal(state)


# ---- following and winning ------------------------------------------------------------------

def test_must_follow_suit():
    state = game(CLASSIC, {0: "2C", 1: "KC QS AH 2D"})
    state = play(state, "2C")
    assert legal(state) == {"KC"}


def test_highest_of_led_suit_wins_no_trump():
    state = game(CLASSIC, {0: "2C 3D", 1: "5C", 2: "AD 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS", 3: "9C"})
    state = play(state, "2C 5C AD 9C")  # seat 2 is void in clubs: its A♦ does not win
    assert state.current_player[0] == 3 and state.leader[0] == 3
    assert cards.cards_of(state.taken[0, 3]) == sorted(cards.parse_cards("2C 5C AD 9C"))


# ---- hearts broken ----------------------------------------------------------------------------

def broken_hearts_deal(rules=CLASSIC):
    # Seat 0 leads clubs twice; seat 1 is void in clubs after trick 1 and discards a heart on trick 2.
    return game(rules, {0: "2C 3C 4C 5H 2S", 1: "AC 6H 7H 3S 4S QS", 2: "5C 6C 2D", 3: "7C 8C 3D"})


def test_hearts_cannot_be_led_before_broken():
    state = broken_hearts_deal()
    state = play(state, "2C AC 5C 7C")  # seat 1 wins and leads
    assert state.current_player[0] == 1
    assert not any(c.endswith("H") for c in legal(state))
    assert "3S" in legal(state)


def test_only_hearts_may_lead_hearts():
    hearts = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"
    state = game(CLASSIC, {0: "2C", 1: "AC " + hearts, 2: "3C", 3: "4C"})
    state = play(state, "2C AC 3C 4C")
    assert state.current_player[0] == 1 and not state.hearts_broken[0]
    assert legal(state) == cards_text(hearts)


def test_discarded_heart_breaks_hearts():
    # Seat 3 is void in diamonds and discards a heart on trick 2; seat 1 then may lead hearts.
    state = game(CLASSIC, {0: "2C 2D", 1: "AC AD 2H 3H", 2: "3C 3D", 3: "4C 5H 6H 7H 8H 9H TH JH QH KH AH 2S 3S"})
    state = play(state, "2C AC 3C 4C")  # seat 1 wins trick 1
    state = play(state, "AD 3D 5H 2D")  # seat 1 leads A♦; seat 3 discards 5♥
    assert state.hearts_broken[0]
    assert state.current_player[0] == 1 and "2H" in legal(state)


def queen_discard_deal(rules):
    # Seat 3: only clubs and spades, so it discards Q♠ on seat 1's diamond lead.
    return game(rules, {0: "2C 2D 3D 4D 5D 6D", 1: "AC AD 2H 3H", 2: "3C 7D 8D 9D TD",
                        3: "4C 5C 6C 7C 8C 9C TC JC QC KC QS 2S 3S"})


@pytest.mark.parametrize("queen_breaks", [False, True])
def test_queen_breaks_hearts_option(queen_breaks):
    state = queen_discard_deal(CLASSIC.replace(queen_breaks_hearts=queen_breaks))
    state = play(state, "2C AC 3C 4C AD 7D QS 2D")
    assert bool(state.hearts_broken[0]) == queen_breaks
    assert ("2H" in legal(state)) == queen_breaks


def test_hearts_must_be_broken_off():
    state = game(CLASSIC.replace(hearts_must_be_broken=False), {0: "2C", 1: "AC 2H 2S", 2: "3C", 3: "4C"})
    state = play(state, "2C AC 3C 4C")
    assert "2H" in legal(state)


def test_queen_waits_for_broken_hearts():
    fixed = {0: "2C", 1: "AC QS 2S 2H", 2: "3C", 3: "4C"}
    for waits in (False, True):
        state = play(game(CLASSIC.replace(queen_waits_for_hearts=waits), fixed), "2C AC 3C 4C")
        assert ("QS" in legal(state)) == (not waits)
        assert "2S" in legal(state)


def test_queen_waits_but_leader_has_nothing_else():
    rules = CLASSIC.replace(queen_waits_for_hearts=True)
    # Seat 1 keeps only A♣, Q♠ and hearts: after trick 1 it may lead Q♠ or a heart.
    state = game(rules, {0: "2C", 1: "AC QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH", 2: "3C", 3: "4C"})
    state = play(state, "2C AC 3C 4C")
    assert legal(state) == cards_text("QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH")


# ---- scoring and the moon --------------------------------------------------------------------

def taken_bits(*texts):
    return np.array([[cards.bits_of(cards.parse_cards(t)) for t in texts]], dtype=np.uint64)


def test_each_heart_one_queen_thirteen():
    taken = taken_bits("2H 3H QS 2C", "4H 5H 6H 7H 8H 9H TH JH QH KH AH", "", "3C")
    pts = scoring.hand_points(CLASSIC, taken, np.zeros(1, np.uint64), np.zeros((1, 4), np.int64))
    assert pts.tolist() == [[15, 11, 0, 0]] and pts.sum() == 26


def test_played_hand_gives_26_points():
    state = he.init(CLASSIC, 1, seed=11)
    state = play_lowest(state)
    assert state.last_hand_points[0].sum() == 26
    assert not state.last_hand_moon.any()


@pytest.mark.parametrize(
    "moon, expected",
    [("add_to_others", [0, 26, 26, 26]), ("subtract_from_self", [-26, 0, 0, 0]), ("off", [26, 0, 0, 0])],
)
def test_moon_options_played_out(moon, expected):
    state = game(CLASSIC.replace(moon=moon), {0: MOON_HAND})
    state = play_lowest(state)
    assert state.last_hand_points[0].tolist() == expected
    assert state.scores[0].tolist() == expected
    # The next hand is already dealt (nothing won yet); the shooter is kept beside the points.
    assert state.hand_number[0] == NO_PASS_HAND + 1 and not state.taken.any()
    assert state.last_hand_moon[0].tolist() == [moon != "off", False, False, False]


def test_shooters_choice_adds_when_that_does_not_lose():
    rules = CLASSIC.replace(moon="shooters_choice")
    state = play_lowest(game(rules, {0: MOON_HAND}, scores=[90, 80, 85, 95]))
    assert state.last_hand_points[0].tolist() == [0, 26, 26, 26]
    assert state.phase[0] == he.OVER and state.winner[0] == 0


def test_shooters_choice_subtracts_when_adding_would_lose():
    rules = CLASSIC.replace(moon="shooters_choice")
    state = play_lowest(game(rules, {0: MOON_HAND}, scores=[90, 60, 70, 75]))
    assert state.last_hand_points[0].tolist() == [-26, 0, 0, 0]
    assert state.scores[0].tolist() == [64, 60, 70, 75] and state.phase[0] != he.OVER


def test_jack_of_diamonds_bonus():
    rules = CLASSIC.replace(jack_of_diamonds_bonus=True)
    taken = taken_bits("2H 3H QS JD", "4H 5H 6H 7H 8H 9H TH JH QH KH AH", "", "3C")
    pts = scoring.hand_points(rules, taken, np.zeros(1, np.uint64), np.zeros((1, 4), np.int64))
    assert pts.tolist() == [[5, 11, 0, 0]]
    # A moon keeps the bonus: the shooter took J♦ too.
    state = play_lowest(game(rules, {0: MOON_HAND}))
    assert state.last_hand_points[0].tolist() == [-10, 26, 26, 26]


def test_jack_of_diamonds_off_by_default():
    taken = taken_bits("JD", "2H", "", "")
    pts = scoring.hand_points(CLASSIC, taken, np.zeros(1, np.uint64), np.zeros((1, 4), np.int64))
    assert pts.tolist() == [[0, 1, 0, 0]]


# ---- game end ---------------------------------------------------------------------------------

@pytest.mark.parametrize("preset, target", [("classic", 100), ("quick", 50), ("long", 150)])
def test_game_ends_when_target_reached_lowest_wins(preset, target):
    rules = he.Rules.preset(preset)
    below = target - 26
    state = play_lowest(game(rules, {0: MOON_HAND}, scores=[30, below - 1, below, below + 1]))
    assert state.phase[0] == he.OVER and state.winner[0] == 0
    assert state.current_player[0] == -1 and state.legal[0] == 0


@pytest.mark.parametrize("preset, target", [("classic", 100), ("quick", 50), ("long", 150)])
def test_game_goes_on_below_target(preset, target):
    rules = he.Rules.preset(preset)
    state = play_lowest(game(rules, {0: MOON_HAND}, scores=[0, target - 27, 0, 0]))
    assert state.phase[0] != he.OVER and state.hand_number[0] == 4


def test_tie_for_lowest_at_target_plays_another_hand():
    # Seat 0 shoots; seats 1 and 2 end level with seat 0 at 80, seat 3 passes 100.
    state = play_lowest(game(CLASSIC, {0: MOON_HAND}, scores=[80, 54, 54, 75]))
    assert state.scores[0].tolist() == [80, 80, 80, 101]
    assert state.phase[0] != he.OVER and state.hand_number[0] == 4
    assert (cards.count(state.hands[0]) == 13).all()  # the next hand was dealt


def test_finished_game_stays_finished():
    state = play_lowest(game(CLASSIC, {0: MOON_HAND}, scores=[30, 80, 80, 80]))
    assert state.done[0]
    after = he.step(state, np.array([-1]))
    assert after.equals(state)


# ---- illegal actions --------------------------------------------------------------------------

def test_illegal_card_is_refused_naming_it_and_the_legal_ones():
    state = game(CLASSIC, {0: "2C 3C", 1: "KC QS AH 2D"})
    state = play(state, "2C")
    before = state.copy()
    with pytest.raises(he.IllegalActionError) as err:
        play(state, "QS")
    assert "QS" in str(err.value) and "legal: KC" in str(err.value)
    assert state.equals(before)
    with pytest.raises(he.IllegalActionError, match="not a card"):
        he.step(state, np.array([60]))
    with pytest.raises(he.IllegalActionError, match="one action per game"):
        he.step(state, np.array([1, 2]))
    with pytest.raises(he.IllegalActionError, match="integer"):
        he.step(state, np.array([1.5]))
    assert state.equals(before)


def test_card_not_held_is_illegal():
    state = game(CLASSIC, {0: "2C", 1: "AS"})
    with pytest.raises(he.IllegalActionError, match="AS"):
        play(state, "AS")


def test_from_deal_checks_the_cards():
    with pytest.raises(ValueError, match="13 cards"):
        he.from_deal(CLASSIC, [["2C"], [], [], []])
    with pytest.raises(ValueError, match="twice"):
        he.from_deal(CLASSIC, [["2C", "2C"], [], [], []])
    with pytest.raises(ValueError, match="4 hands"):
        he.from_deal(CLASSIC, [["2C"]])


def test_from_deal_by_card_text():
    owner = owner_of(CLASSIC, {0: MOON_HAND})
    hands = [[cards.card_text(c) for c in np.flatnonzero(owner == p)] for p in range(4)]
    state = he.from_deal(CLASSIC, hands, hand_number=1, scores=[1, 2, 3, 4])
    assert hand(state, 0) == cards_text(MOON_HAND)
    assert state.scores[0].tolist() == [1, 2, 3, 4] and state.phase[0] == he.PASS


def test_render_shows_suit_symbols():
    from hearts_env.render import render
    state = game(CLASSIC, {0: MOON_HAND})
    text = render(state)
    assert "♠" in text and "♥" in text and "player_0" in text
    assert "13 cards" in render(state, seat=1)


def test_moon_shooter_names_the_seat_that_took_every_point_card_whatever_the_moon_rule():
    taken = np.zeros((1, 4), np.uint64)
    taken[0, 2] = cards.SUIT_BITS[cards.HEARTS] | cards.BIT[cards.QUEEN_OF_SPADES]
    for moon in ("add_to_others", "off"):
        rules = CLASSIC.replace(moon=moon)
        assert scoring.moon_shooter(rules, taken, np.zeros(1, np.uint64)).tolist() == [[False, False, True, False]]


def test_scoring_takes_one_dead_set_for_every_hand():
    # ``dead`` of shape [1] (or a scalar) is every hand's dead cards, as NumPy broadcasting reads it.
    heart = cards.parse_card("2H")
    taken = np.zeros((500, 4), np.uint64)
    taken[:, 1] = (cards.SUIT_BITS[cards.HEARTS] | cards.BIT[cards.QUEEN_OF_SPADES]) & ~cards.BIT[heart]
    for dead in (np.array([cards.BIT[heart]]), cards.BIT[heart]):
        assert scoring.moon_shooter(CLASSIC, taken, dead)[:, 1].all()
        assert (scoring.hand_points(CLASSIC, taken, dead, np.zeros((500, 4), np.int64))[:, 1] == 0).all()
