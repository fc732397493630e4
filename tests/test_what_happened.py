"""The engine state says what its last step did: hand ended, cards won, last trick, order of play."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hearts_env as he
from hearts_env import cards, records, scoring
from tests.scripted import NO_PASS_HAND, game, play, play_lowest

CLASSIC = he.Rules.preset("classic")
# Seat 0 holds the top four clubs, diamonds and spades and A♥: it wins every trick.
MOON_HAND = "AC KC QC JC AD KD QD JD AS KS QS JS AH"


def texts(bits) -> set[str]:
    return {cards.card_text(c) for c in cards.cards_of(bits)}


def test_a_completed_trick_and_its_winner_stay_readable():
    state = game(CLASSIC, {0: "2C 3H", 1: "KC", 2: "9C", 3: "AC"})
    assert state.last_trick_winner[0] == -1 and (state.last_trick[0] == -1).all()
    state = play(state, "2C KC 9C")
    assert state.last_trick_winner[0] == -1  # the trick is not complete yet
    state = play(state, "AC")
    assert state.last_trick_winner[0] == 3 and state.last_trick_leader[0] == 0
    assert [cards.card_text(c) for c in state.last_trick[0]] == ["2C", "KC", "9C", "AC"]
    assert (state.trick[0] == -1).all()  # the table is cleared for the next trick
    assert not state.hand_over[0]


def test_the_order_of_play_is_kept_with_who_played_each_card():
    state = game(CLASSIC, {0: "AS KS QS", 1: "2C 3C 4C", 2: "5C 6C 7C", 3: "8C 9C TC"}, hand_number=0)
    state = play(state, "AS KS QS 2C 3C 4C 5C 6C 7C 8C 9C TC")  # the passes, seat by seat
    length = int(state.history_length[0])
    assert length == 12
    assert state.history_seat[0, :length].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert [cards.card_text(c) for c in state.history[0, :3]] == ["AS", "KS", "QS"]


def test_a_hand_end_keeps_the_scored_hand_whole_although_the_next_is_dealt():
    state = game(CLASSIC, {0: MOON_HAND}, seed=4)
    dealt = state.dealt[0].copy()
    state = play_lowest(state)
    assert state.hand_over[0] and state.hand_number[0] == NO_PASS_HAND + 1
    assert state.last_hand_number[0] == NO_PASS_HAND
    assert texts(state.last_hand_won[0, 0]) == texts(cards.ALL_BITS)  # seat 0 took every card
    assert state.last_hand_moon[0].tolist() == [True, False, False, False]
    assert state.last_hand_points[0].tolist() == [0, 26, 26, 26]
    assert np.array_equal(state.last_hand_dealt[0], dealt)
    assert state.last_hand_length[0] == 52 and state.history_length[0] == 0  # the new hand has no actions
    assert state.taken[0].sum() == 0  # the new hand's cards won start empty
    # The next action clears the flag.
    state = he.step(state, cards.lowest_card(state.legal))
    assert not state.hand_over[0] and state.last_hand_number[0] == NO_PASS_HAND


def test_a_hand_record_replays_to_the_same_points():
    """The record read from the state after a hand, replayed from its deal, scores the same."""
    state = he.init(CLASSIC, 1, seed=21)
    while not state.hand_over[0]:
        state = he.step(state, cards.lowest_card(state.legal))
    hand = records.scored_hand(state, 0)
    replay = he.from_deal(CLASSIC, hand["dealt"], hand_number=hand["hand_number"])
    for seat, card in hand["actions"]:
        assert replay.current_player[0] == seat
        replay = he.step(replay, np.array([cards.parse_card(card)]))
    assert replay.hand_over[0] and replay.last_hand_points[0].tolist() == hand["points"]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), preset=st.sampled_from(["classic", "two_player", "quick"]))
def test_what_happened_agrees_with_the_hand_it_describes(seed, preset):
    """Over random games: every scored hand's won cards are the deck less the dead cards, its points
    are the scoring of those cards, its history has every card once, and the last trick's cards
    are the last P cards played."""
    rules = he.Rules.preset(preset)
    n, p = 16, rules.num_players
    state = he.init(rules, n, seed=seed)
    rng = np.random.default_rng(seed)
    hands_seen = 0
    while hands_seen < 2 * n and not state.done.all():
        legal = he.legal_mask(state)
        noise = rng.random(legal.shape) * legal
        state = he.step(state, noise.argmax(axis=1))
        for g in state.hand_over.nonzero()[0]:
            hands_seen += 1
            won = np.bitwise_or.reduce(state.last_hand_won[g])
            assert won == rules.deck_bits & ~state.last_hand_dead[g]
            points = scoring.hand_points(rules, state.last_hand_won[g][None], state.last_hand_dead[g][None],
                                         state.scores[g][None] - state.last_hand_points[g][None])
            assert points[0].tolist() == state.last_hand_points[g].tolist()
            length = int(state.last_hand_length[g])
            plays = state.last_hand_history[g, length - p * rules.hand_size:length]
            assert sorted(plays.tolist()) == sorted(cards.cards_of(won))
            last = plays[-p:]
            assert set(last.tolist()) == set(state.last_trick[g].tolist())
            assert last[0] == state.last_trick[g, state.last_trick_leader[g]]
    assert hands_seen > 0
