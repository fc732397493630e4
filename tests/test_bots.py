"""The heuristic bots, rule by rule, by card name; legality and no-peeking over random states."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hearts_env as he
from agents import available, make
from hearts_env import cards
from hearts_env.observe import observe
from tests.scripted import game, play
from tests.test_observe import VARIANTS, random_states, relabel_hidden

CLASSIC = he.Rules.preset("classic")
LEVELS = ["easy", "normal", "hard"]


def choice(level, state):
    """(card text, rule name) the bot picks for the seat to act in game 0."""
    bot = make(level)
    obs, mask = observe(state), he.legal_mask(state)
    card = int(bot.act(obs, mask)[0])
    return cards.card_text(card), bot.explain(obs, mask)[0]


def test_specs_are_registered():
    assert {"random", "easy", "normal", "hard"} <= set(available())
    with pytest.raises(ValueError, match="unknown agent spec"):
        make("grandmaster")


# ---- easy ------------------------------------------------------------------------------------

def test_easy_passes_its_highest_cards():
    state = game(CLASSIC, {0: "AS KH QD 2C 3C"}, hand_number=0)
    assert choice("easy", state) == ("AS", "pass_highest")
    state = play(state, "AS")
    assert choice("easy", state) == ("KH", "pass_highest")


def test_easy_follows_with_its_lowest_card():
    state = play(game(CLASSIC, {0: "2C", 1: "3C TC KC 5D"}), "2C")
    assert choice("easy", state) == ("3C", "follow_lowest")


def discard_spot(seat2_cards):
    """Seat 2 to play to a diamond trick (trick 2) holding ``seat2_cards`` and no diamonds."""
    state = game(CLASSIC, {0: "2C", 1: "3C", 2: "5C " + seat2_cards, 3: "AC 4D"})
    state = play(state, "2C 3C 5C AC 4D")
    while state.current_player[0] != 2:
        state = he.step(state, cards.lowest_card(state.legal))
    return state


def test_easy_discards_queen_then_highest_heart_then_highest_card():
    assert choice("easy", discard_spot("QS AH 5H 9S KS 2S 3S 4S 5S 6S 7S 8S")) == ("QS", "discard_queen")
    assert choice("easy", discard_spot("JS AH 5H 9S KS 2S 3S 4S 5S 6S 7S 8S")) == ("AH", "discard_highest_heart")
    assert choice("easy", discard_spot("JS QS AS 9S KS 2S 3S 4S 5S 6S 7S 8S").take([0]))[1] == "discard_queen"
    assert choice("easy", discard_spot("JS TC AS 9S KS 2S 3S 4S 5S 6S 7S 8S")) == ("AS", "discard_highest")


def test_easy_leads_its_lowest_card():
    state = play(game(CLASSIC, {0: "2C", 1: "AC 9D 4S 7S", 2: "3C", 3: "4C"}), "2C AC 3C 4C")
    text, rule = choice("easy", state)
    assert rule == "lead_lowest" and text[0] in "234"


# ---- normal ----------------------------------------------------------------------------------

def test_normal_passes_queen_when_short_in_spades():
    state = game(CLASSIC, {0: "QS AS 2S AH KH 2C 3C 4C 5C 6C 7C 8C 9C"}, hand_number=0)
    assert choice("normal", state) == ("QS", "pass_exposed_spades")
    state = play(state, "QS")
    assert choice("normal", state) == ("AS", "pass_exposed_spades")


def test_normal_keeps_queen_when_long_in_spades_and_passes_high_hearts():
    state = game(CLASSIC, {0: "QS 2S 3S 4S 5S KH JH 2C 3C 4C 5C 6C 7C"}, hand_number=0)
    assert choice("normal", state) == ("KH", "pass_high_hearts")


def test_normal_passes_to_void_a_short_suit():
    state = game(CLASSIC, {0: "2S 3S 4S 5S 6S 7S 2H 3H 4H 5H 6H KD 9D"}, hand_number=0)
    assert choice("normal", state) == ("KD", "pass_to_void")


def test_normal_plays_the_highest_card_that_still_loses():
    state = play(game(CLASSIC, {0: "2C", 1: "JC", 2: "3C 9C TC QC KC"}), "2C JC")
    assert choice("normal", state) == ("TC", "play_highest_loser")


def test_normal_takes_a_clean_trick_last_with_its_highest():
    state = play(game(CLASSIC, {0: "2C", 1: "5C", 2: "6C", 3: "3C 9C KC"}), "2C 5C 6C")
    assert choice("normal", state) == ("KC", "take_clean_trick_last")


def test_normal_slips_the_queen_under_a_higher_spade():
    fixed = {0: "2C 2S", 1: "AC AS", 2: "3C QS 4S", 3: "4C"}
    state = play(game(CLASSIC, fixed), "2C AC 3C 4C")  # seat 1 leads
    state = play(state, "AS")
    assert choice("normal", state) == ("QS", "slip_queen_under")


def test_normal_dumps_spade_honours_while_queen_is_out():
    assert choice("normal", discard_spot("KS 9C TC JC 2S 3S 4S 5S 6S 7S 8S 9S")) == ("KS", "discard_spade_honours")


def test_normal_bleeds_spades_without_the_queen():
    state = play(game(CLASSIC, {0: "2C", 1: "AC 3S 9S 2D 3D", 2: "3C", 3: "4C QS"}), "2C AC 3C 4C")
    assert choice("normal", state) == ("3S", "bleed_spades")


def test_normal_leads_low_from_its_shortest_suit():
    fixed = {0: "2C", 1: "AC 9D QS 5S 6S 7S 8S 9S TS JS KS AS 2S", 2: "3C", 3: "4C"}
    state = play(game(CLASSIC, fixed), "2C AC 3C 4C")
    # Holding Q♠ it does not bleed; its shortest suit is diamonds.
    assert choice("normal", state) == ("9D", "lead_low_from_short_suit")


# ---- options -------------------------------------------------------------------------------

def test_jack_of_diamonds_is_kept_when_it_is_a_bonus():
    rules = CLASSIC.replace(jack_of_diamonds_bonus=True)
    fixed = {0: "2C 2S", 1: "AC", 2: "3C", 3: "4C 5C JD 2D 3D 4D 5D 6D 7D 8D 9D TD QD"}
    state = play(game(rules, fixed), "2C AC 3C 4C")
    for level in LEVELS:
        assert choice(level, state)[0] != "JD"


def test_two_player_discards_do_not_ruff_with_hearts():
    two = he.Rules.preset("two_player")
    state = game(two, {0: "2C 4C 6C 8C TC QC AC", 1: "2H 4D"}, dead="QH AH", hand_number=0)
    state = play(state, "2C")
    for level in LEVELS:
        assert not choice(level, state)[0].endswith("H")  # a heart would ruff and take the trick


# ---- the levels' order ------------------------------------------------------------------------

@pytest.mark.parametrize("preset", ["classic", "two_player"])
def test_each_level_beats_random_by_more_than_the_level_below(preset):
    """easy < normal < hard in both games: against random on 2,000 duplicate deals, each level takes
    fewer points per hand, and each interval excludes the neighbouring level's mean."""
    from eval import arena

    result = arena.head_to_head(LEVELS, "random", he.Rules.preset(preset), deals=2000, workers=1,
                                progress=False)
    rows = [result.row(level)["points_per_hand"] for level in LEVELS]
    for weaker, stronger in zip(rows, rows[1:]):
        assert stronger["high"] < weaker["mean"] and stronger["mean"] < weaker["low"], (preset, rows)


# ---- every level, every variant: legal moves, no peeking ------------------------------------

@pytest.mark.parametrize("variant", list(VARIANTS) + ["queen_waits"])
@settings(max_examples=6, deadline=None)
@given(steps=st.integers(0, 150), seed=st.integers(0, 2**32))
def test_bots_always_play_legal_cards(variant, steps, seed):
    rules = VARIANTS.get(variant) or CLASSIC.replace(queen_waits_for_hearts=True, queen_breaks_hearts=True)
    state = random_states(rules, 32, steps, seed)
    live = ~state.done
    obs, mask = observe(state), he.legal_mask(state)
    for level in ["random"] + LEVELS:
        actions = make(level, seed=1).act(obs[live], mask[live])
        assert mask[live][np.arange(live.sum()), actions].all(), level


@settings(max_examples=10, deadline=None)
@given(steps=st.integers(0, 150), seed=st.integers(0, 2**32))
def test_bots_see_only_their_arguments(steps, seed):
    """A state whose hidden cards were re-dealt gives the same observation, hence the same move;
    and the bots are stateless: the same arguments give the same move."""
    state = random_states(CLASSIC, 4, steps, seed)
    rng = np.random.default_rng(seed)
    for g in range(4):
        seat = int(state.current_player[g])
        if seat < 0:
            continue
        other = relabel_hidden(state, g, seat, rng)
        if other is None:
            continue
        mine = state.take([g])
        for level in LEVELS:
            bot = make(level)
            a = bot.act(observe(mine), he.legal_mask(mine))
            b = bot.act(observe(other), he.legal_mask(other))
            assert a == b == bot.act(observe(mine), he.legal_mask(mine))


def _as_compiled(game_seat):
    """A ``Seat`` back from compiled code with its fields as the kernels type them (Python ints would
    come back in as int64, not as uint64 card sets)."""
    card_sets = {"hand", "legal", "passed", "played", "deck", "beats", "trick_bits", "out", "sent"}
    fields = {}
    for name, value in game_seat._asdict().items():
        if name in card_sets:
            value = np.uint64(value)
        elif name == "holds":
            value = tuple(np.uint64(v) for v in value)
        elif name == "points_taken":
            value = tuple(np.int64(v) for v in value)
        elif isinstance(value, int) and not isinstance(value, bool):
            value = np.int64(value)
        fields[name] = value
    return type(game_seat)(**fields)


@pytest.mark.parametrize("level", LEVELS)
def test_each_choice_is_the_first_rule_of_the_level_that_applies(level):
    # A level's compiled chain is written from its ``rules`` tuple (which names its choices): the
    # rule named for each choice gives that card, and every rule before it gives none.
    from agents.heuristic.table import Table, seat

    bot = make(level)
    states = [random_states(rules, 48, steps, seed=steps) for rules in VARIANTS.values() for steps in (5, 40, 90)]
    for state in states:
        live = ~state.done
        table = Table(observe(state)[live], he.legal_mask(state)[live])
        chosen, chosen_by = bot.decide(table)
        scores = np.empty(cards.NUM_CARDS)
        for g in range(table.n):
            game_seat = _as_compiled(seat(table.pieces(), g, scores))
            index = int(chosen_by[g])
            assert all(rule(game_seat) < 0 for rule in bot.rules[:index]), (g, index)
            if index < len(bot.rules):
                assert bot.rules[index](game_seat) == chosen[g], (g, bot.rules[index].__name__)
            else:
                assert chosen[g] == cards.lowest_card(table.view.legal[g:g + 1])[0]


def test_whole_games_with_bots_finish():
    state = he.init(CLASSIC, 16, seed=2)
    bots = [make(level) for level in ["easy", "normal", "hard", "random"]]
    while not state.done.all():
        obs, mask = observe(state), he.legal_mask(state)
        actions = np.zeros(16, dtype=np.int64)
        for seat, bot in enumerate(bots):
            rows = ~state.done & (state.current_player == seat)
            if rows.any():
                actions[rows] = bot.act(obs[rows], mask[rows])
        he.step_inplace(state, actions, ~state.done)
    assert (state.winner >= 0).all()
