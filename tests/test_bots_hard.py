"""The ``hard`` bot, rule by rule, by card name (scripted deals played with the engine).

Each test sets up a position where ``hard``'s rule gives a different card than the naive play
(``normal``'s, checked alongside where it differs), so a rule that stops firing fails its test.
"""

import numpy as np
import pytest

import hearts_env as he
from agents import make
from agents.heuristic import hard, normal
from agents.heuristic.table import Table
from hearts_env import cards, engine, seat_view
from hearts_env.observe import observe
from tests.scripted import game, hand, play
from tests.test_observe import VARIANTS

CLASSIC = he.Rules.preset("classic")
LEFT, RIGHT, ACROSS = 0, 1, 2  # hand numbers of the classic pass directions


def choice(level, state):
    """(card text, rule name) the bot picks for the seat to act in game 0."""
    bot = make(level)
    obs, mask = observe(state), he.legal_mask(state)
    card = int(bot.act(obs, mask)[0])
    return cards.card_text(card), bot.explain(obs, mask)[0]


def hard_choice(state):
    return choice("hard", state)


# ---- passing ---------------------------------------------------------------------------------

SHORT_QUEEN = "QS AS KS 2S 3S 2H 5H 9H 2D 5D 8D 4C 6C"  # Q♠ A♠ K♠ with two low spades


@pytest.mark.parametrize("hand_number", [LEFT, ACROSS])
def test_passing_left_or_across_short_queen_goes_with_ace_and_king(hand_number):
    state = game(CLASSIC, {0: SHORT_QUEEN}, hand_number=hand_number)
    for expected in ("QS", "AS", "KS"):
        assert hard_choice(state) == (expected, "pass_spades_by_direction")
        state = play(state, expected)


def test_passing_right_short_queen_goes_alone():
    state = game(CLASSIC, {0: SHORT_QUEEN}, hand_number=RIGHT)
    assert hard_choice(state) == ("QS", "pass_spades_by_direction")
    state = play(state, "QS")
    # normal would pass A♠ next; hard keeps A♠ and K♠ when Q♠ goes to the right.
    assert choice("normal", state)[0] == "AS"
    for _ in range(2):
        card, rule = hard_choice(state)
        assert card not in ("AS", "KS") and rule == "pass_by_danger"
        state = play(state, card)


def test_passing_with_queen_and_five_low_spades_keeps_all_three():
    state = game(CLASSIC, {0: "QS AS KS 2S 3S 4S 5S 6S 2H 5H 9H 2D 4C"}, hand_number=LEFT)
    for _ in range(3):
        card, rule = hard_choice(state)
        assert card not in ("QS", "AS", "KS") and rule == "pass_by_danger"
        state = play(state, card)


def test_passing_exposed_ace_of_spades_without_the_queen():
    state = game(CLASSIC, {0: "AS 2S 2H 5H 9H 2D 5D 8D 4C 6C 7C 8C 9C"}, hand_number=LEFT)
    assert hard_choice(state) == ("AS", "pass_exposed_spades")


def test_passing_counts_the_low_cards_that_protect_a_high_card():
    # K♣ has five low clubs under it; 9♥ has none: hard passes 9♥, normal its highest card.
    state = game(CLASSIC, {0: "KC 2C 3C 4C 5C 6C 9H 2S 3S 4S 5S 6S 7S"}, hand_number=LEFT)
    assert hard_choice(state) == ("9H", "pass_by_danger")
    assert choice("normal", state)[0] == "KC"


def test_passing_a_moon_hand_passes_low_cards():
    state = game(CLASSIC, {0: "AH KH QH JH QS AC KC 2C 3C 4D 5D 6D 7H"}, hand_number=LEFT)
    assert hard_choice(state) == ("2C", "pass_for_the_moon")
    assert choice("normal", state)[0] == "QS"


# ---- discarding ------------------------------------------------------------------------------

def void_in_clubs(seat0_cards):
    """Seat 0 (holding 4C and ``seat0_cards``) plays last to the club trick 2, void in clubs."""
    state = game(CLASSIC, {0: "4C " + seat0_cards, 1: "AC 3C", 2: "5C 6C", 3: "2C 7C"})
    return play(state, "2C 4C AC 5C 3C 6C 7C")


def test_void_dumps_the_queen():
    state = void_in_clubs("QS AH KH 2D 3D 4D 5D 6D 7D 8D 9D TD")
    assert hard_choice(state) == ("QS", "discard_queen")


def test_void_dumps_king_of_spades_while_the_queen_is_out():
    state = void_in_clubs("KS AH KH 2D 3D 4D 5D 6D 7D 8D 9D TD")
    assert hard_choice(state) == ("KS", "discard_spade_honours")


def test_void_dumps_the_unprotected_high_card_before_a_low_heart():
    state = void_in_clubs("KD 3H 2S 3S 4S 5S 6S 7S 8S 9S TS JS")
    assert hard_choice(state) == ("KD", "discard_by_danger")
    assert choice("normal", state)[0] == "3H"


# ---- following -------------------------------------------------------------------------------

def test_first_trick_sheds_the_highest_card():
    # Seat 0 plays second to 2♣: later seats may overtake, yet the first trick carries no points.
    fixed = {0: "3C 9C QC 2D 3D 4D 5D 6D 7D 8D 2H 3H 4H", 3: "2C"}
    state = play(game(CLASSIC, fixed), "2C")
    assert hard_choice(state) == ("QC", "shed_on_first_trick")


def test_queen_slips_under_the_ace_even_when_playing_last():
    fixed = {0: "3C QS 2S 2D 3D 4D 5D 6D 7D 8D 2H 3H 4H", 1: "AC 5S", 2: "4C AS", 3: "2C 4S"}
    state = play(game(CLASSIC, fixed), "2C 3C AC 4C 5S AS 4S")
    assert hard_choice(state) == ("QS", "slip_queen")
    assert choice("normal", state)[0] == "2S"  # normal "takes the clean trick" with its 2♠


def test_ace_of_spades_unloads_when_the_queen_holder_has_played():
    # Seat 0 passed Q♠ across; seat 2 leads a low spade, so no seat still to play holds Q♠.
    fixed = {0: "QS 9D 8D AS 2S 3C 4D 5D 6D 7D 2H 3H 4H", 1: "2C 5C KH QH JH", 2: "AC 3S TH 9H 8H",
             3: "6S 4C 7H 6H 5H"}
    state = play(game(CLASSIC, fixed, hand_number=ACROSS), "QS 9D 8D KH QH JH TH 9H 8H 7H 6H 5H")
    assert "QS" in hand(state, 2)
    state = play(state, "2C AC 4C 3C 3S 6S")
    assert hard_choice(state) == ("AS", "unload_spade_honours")
    assert choice("normal", state)[0] == "2S"


def test_ace_of_spades_ducks_while_a_seat_to_play_may_hold_the_queen():
    fixed = {0: "JS 9D 8D AS 2S 3C 4D 5D 6D 7D 2H 3H 4H", 1: "2C 5C KH QH JH QS", 2: "AC 3S", 3: "6S 4C"}
    state = play(game(CLASSIC, fixed), "2C AC 4C 3C 3S 6S")
    assert hard_choice(state) == ("2S", "play_highest_loser")


def test_must_win_plays_low_when_a_later_seat_may_overtake():
    fixed = {0: "3C 9D KD 2H 3H 4H 5H 6H 7H 2S 3S 4S 5S", 1: "2C", 2: "4C", 3: "AC 2D"}
    state = play(game(CLASSIC, fixed), "2C 4C AC 3C 2D")
    assert hard_choice(state) == ("9D", "follow_must_win")
    assert choice("normal", state)[0] == "KD"


def test_must_win_plays_high_when_nothing_can_overtake():
    fixed = {0: "3C KD AD 2H 3H 4H 5H 6H 7H 2S 3S 4S 5S", 1: "2C", 2: "4C", 3: "AC 2D"}
    state = play(game(CLASSIC, fixed), "2C 4C AC 3C 2D")
    assert hard_choice(state) == ("AD", "follow_must_win")


def test_jack_of_diamonds_bonus_is_taken():
    rules = CLASSIC.replace(jack_of_diamonds_bonus=True)
    fixed = {0: "4C QD 3D 2H 3H 4H 5H 6H 7H 2S 3S 4S 5S", 1: "2C", 2: "AC 5D", 3: "3C JD"}
    state = play(game(rules, fixed), "2C AC 3C 4C 5D JD")
    assert hard_choice(state) == ("QD", "win_the_jack")
    assert choice("normal", state)[0] == "3D"


# ---- leading ---------------------------------------------------------------------------------

def test_leads_a_card_that_surely_loses_rather_than_one_that_may_win():
    # After 2♣ 3♣ 4♣ A♣ no club below 5♣ is out: 5♣ (or 6♣) surely loses; 3♦ may win (2♦ is out).
    fixed = {0: "AC 5C 6C 3D KD QS 2H 3H 4H 5H 6H 7H 8H", 1: "2C", 2: "3C", 3: "4C"}
    state = play(game(CLASSIC, fixed), "2C 3C 4C AC")
    card, rule = hard_choice(state)
    assert card in ("5C", "6C") and rule == "lead_by_estimate"
    assert choice("normal", state)[0] == "3D"


def clubs_or_diamonds_lead(seat3_first_card):
    fixed = {0: "AC 9C TC TD JD QS 2H 3H 4H 5H 6H 7H 8H", 1: "2C", 2: "3C",
             3: seat3_first_card + " 3D 4D 5D 6D 7D 8D 2S 3S 4S 5S 6S 7S"}
    return play(game(CLASSIC, fixed), f"2C 3C {seat3_first_card} AC")


def test_avoids_leading_a_suit_an_opponent_is_void_in():
    assert hard_choice(clubs_or_diamonds_lead("4C")) == ("9C", "lead_by_estimate")  # nobody void: a club
    state = clubs_or_diamonds_lead("2D")  # seat 3, on seat 0's right, showed a void in clubs
    assert seat_view.read(observe(state)).voids[0, 3, cards.CLUBS]
    assert hard_choice(state) == ("TD", "lead_by_estimate")


def test_holding_the_queen_it_does_not_lead_spades():
    fixed = {0: "AC QS 2S 3S 4S 5S 6S 7S 8S KD 2H 3H 4H", 1: "2C", 2: "3C", 3: "4C"}
    state = play(game(CLASSIC, fixed), "2C 3C 4C AC")
    card, rule = hard_choice(state)
    assert card == "KD" and rule == "lead_by_estimate"


# ---- the moon --------------------------------------------------------------------------------

MOON = {0: "AD KD QD JD TD AS KS QS JS TS AH KH QH", 1: "2C 2H 2D 3D 4D 5D 6D 7D 8D 9D 3H 4H 5H",
        2: "3C 4C 2S 3S 4S 5S 6S 7S 8S 9S 6H 7H 8H", 3: "AC 5C 6C 7C 8C 9C TC JC QC KC 9H TH JH"}


def test_shoots_the_moon_with_a_hand_of_winners_and_aborts_when_someone_takes_a_point():
    state = play(game(CLASSIC, MOON), "2C 3C AC")
    assert hard_choice(state) == ("TD", "shoot_the_moon")  # lowest card without points
    state = play(state, "TD 5C")
    assert hard_choice(state) == ("TS", "shoot_the_moon")  # not Q♠: it is going for every point
    assert choice("normal", state)[0] == "QS"
    state = play(state, "TS 2H 4C 6C")  # seat 3 took 2♥: the moon is off
    assert hard_choice(state) == ("QS", "discard_queen")


def test_does_not_shoot_when_the_moon_is_off():
    state = play(game(CLASSIC.replace(moon="off"), MOON), "2C 3C AC TD 5C")
    assert hard_choice(state) == ("QS", "discard_queen")


SHOOTER = {1: "3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 5H", 2: "2C QS AH 2D 3D 4D 5D 6D 7D 8D 9D TD JD",
           3: "2H 7H 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS", 0: "3H 4H 6H KH QD KD AD AS 8H 9H TH JH QH"}


def test_moon_defence_keeps_the_heart_stopper():
    # Seat 1 has taken Q♠ and 2♥ (14, all the points) and wins this trick too: seat 0 keeps K♥.
    state = play(game(CLASSIC, SHOOTER), "2C 2S QD AC KC QS 2H KD QC AH 7H")
    card, rule = hard_choice(state)
    assert rule == "stop_the_moon" and card in ("AS", "AD")
    assert choice("normal", state)[0] == "KH"


def test_moon_defence_takes_a_heart_trick_on_purpose():
    # Seat 1 has all 17 points so far and leads 5♥: seat 0 takes it with K♥ instead of ducking.
    state = play(game(CLASSIC, SHOOTER), "2C 2S QD AC KC QS 2H KD QC AH 7H 4H 5H 2D 3S")
    assert hard_choice(state) == ("KH", "stop_the_moon")
    assert choice("normal", state)[0] == "3H"


TWO_PLAYER = he.Rules.preset("two_player")


def test_two_player_moon_defence_ruffs_the_shooters_trick_with_its_lowest_heart():
    # Seat 1 took Q♠ (all 13 points so far) and leads a club; seat 0 has no clubs. One heart
    # taken stops a 20-point moon: hard ruffs with 2♥ (hearts are trump), normal keeps its hearts.
    fixed = {0: "QS 2H 8H 2D 4D 6D 8D TD 2S 4S 6S 8S TS", 1: "2C 4C 6C 8C TC QC AC 4H 6H AS QD AD AH"}
    state = play(game(TWO_PLAYER, fixed, dead="TH QH", hand_number=0), "2C QS 4C")
    assert hard_choice(state) == ("2H", "stop_the_moon")
    assert not choice("normal", state)[0].endswith("H")


def test_two_player_moon_defence_takes_a_heart_trick_with_its_lowest_winner():
    # Seat 1 ruffed a diamond with 4♥ (the only point taken) and leads 6♥: hard takes it with 8♥,
    # the lowest heart that wins; normal plays under with 2♥.
    fixed = {0: "4C 2D 4D 6D 8D TD QD AD 2H 8H TH 2S 4S", 1: "2C 6C 8C TC QC AC 4H 6H 6S 8S TS QS AS"}
    state = play(game(TWO_PLAYER, fixed, dead="QH AH", hand_number=0), "2C 4C 2D 4H 6H")
    assert hard_choice(state) == ("8H", "stop_the_moon")
    assert choice("normal", state)[0] == "2H"


# ---- the bot as a whole ----------------------------------------------------------------------

def mixed_states(rules, n, seed):
    """Games played by ``hard`` for a random number of moves each: every phase, moons included."""
    state = engine.init(rules, n, seed)
    rng = np.random.default_rng(seed)
    stop = rng.integers(0, 14 * rules.num_players + 12, n)
    bot = make("hard")
    for move in range(int(stop.max())):
        live = (move < stop) & ~state.done
        if not live.any():
            break
        actions = np.zeros(n, dtype=np.int64)
        actions[live] = bot.act(observe(state)[live], he.legal_mask(state)[live])
        engine.step_inplace(state, actions, live)
    return state.take(np.flatnonzero(~state.done))


@pytest.mark.parametrize("variant", list(VARIANTS) + ["moon_off"])
def test_decides_each_game_of_a_batch_as_that_game_alone(variant):
    # The compiled rules run game by game over a batch: nothing of one game may reach another's.
    rules = VARIANTS.get(variant) or CLASSIC.replace(moon="off")
    state = mixed_states(rules, 256, seed=5)
    obs, mask = observe(state), he.legal_mask(state)
    bot = hard.HardBot()
    cards_chosen, rules_chosen = bot.decide(Table(obs, mask))
    alone = [bot.decide(Table(obs[g:g + 1], mask[g:g + 1])) for g in range(len(obs))]
    np.testing.assert_array_equal(cards_chosen, [card[0] for card, _ in alone])
    np.testing.assert_array_equal(rules_chosen, [rule[0] for _, rule in alone])
    assert mask[np.arange(len(obs)), cards_chosen].all()
    assert len(set(rules_chosen)) >= 6  # the states reach rules of every phase


def test_rules_are_documented_in_order():
    doc = hard.__doc__
    positions = [doc.find(f"``{rule.__name__}``") for rule in hard.HardBot.rules[: -len(normal.PLAY_RULES)]]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
