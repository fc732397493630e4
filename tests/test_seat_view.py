"""The seat view: reading an observation back gives what the seat knows in the state, by the rules."""

import numpy as np
import pytest

import hearts_env as he
from hearts_env import cards, observe, seat_view, worlds
from hearts_env.play import trick_winner
from hearts_env.scoring import card_points
from tests.test_observe import VARIANTS, random_states


def views_of(state):
    """Every game seen by every seat: (view, games, seats)."""
    p = state.num_players
    games = np.repeat(np.arange(state.batch_size), p)
    seats = np.tile(np.arange(p), state.batch_size)
    obs = observe.observe(state, seats=seats, games=games)
    mask = np.zeros((games.size, 52), dtype=bool)
    to_act = seats == state.current_player[games]
    mask[to_act] = cards.to_mask(state.legal[games[to_act]])
    return seat_view.read(obs, mask), games, seats


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("steps", [0, 7, 19, 40, 90])
def test_the_view_is_the_state_as_the_seat_knows_it(variant, steps):
    rules = VARIANTS[variant]
    state = random_states(rules, 24, steps, seed=steps)
    view, games, seats = views_of(state)
    p = rules.num_players
    for i, (g, seat) in enumerate(zip(games, seats)):
        rel = [(seat + r) % p for r in range(p)]
        assert view.players[i] == p
        assert view.deck[i] == rules.deck_bits
        assert view.trump[i] == rules.trump
        assert view.hand[i] == state.hands[g, seat]
        assert view.passed[i] == state.passed[g, seat]
        assert view.played_by[i, :p].tolist() == state.played[g, rel].tolist()
        assert (view.played_by[i, p:] == 0).all() and view.played[i] == np.bitwise_or.reduce(state.played[g])
        assert view.trick_card[i, :p].tolist() == state.trick[g, rel].tolist()
        assert view.in_trick[i] == state.num_in_trick[g]
        assert view.tricks_done[i] == state.trick_number[g]
        assert view.points_taken[i, :p].tolist() == [card_points(rules, state.taken[g, s]) for s in rel]
        assert view.score_points(rules.target_score)[i, :p].tolist() == state.scores[g, rel].tolist()
        assert (view.voids[i, :p] == state.voids[g, rel]).all()
        assert view.phase[i] == state.phase[g]
        assert view.to_act[i] == (-1 if state.current_player[g] < 0 else (state.current_player[g] - seat) % p)
        assert view.hearts_broken[i] == state.hearts_broken[g]
        if view.to_act[i] == 0:
            assert view.legal[i] == state.legal[g]
        if state.num_in_trick[g]:
            leader = state.leader[g]
            assert view.leader[i] == (leader - seat) % p
            in_order = np.array([state.trick[g, (leader + j) % p] for j in range(state.num_in_trick[g])])
            winner = (leader + trick_winner(in_order, 0, rules.trump)) % p
            assert view.winning_seat[i] == (winner - seat) % p
            assert view.winning_card[i] == state.trick[g, winner]
            assert view.led_suit[i] == state.trick[g, leader] // 13
        else:
            assert view.leader[i] == view.winning_seat[i] == view.winning_card[i] == view.led_suit[i] == -1


def test_the_cards_that_beat_the_trick():
    rules = he.Rules.preset("two_player")  # hearts are trump
    view = seat_view.read(np.zeros(observe.OBS_DIM, dtype=np.float32))
    assert view.leader[0] == -1 and view.beats[0] == 0
    obs = np.zeros(observe.OBS_DIM, dtype=np.float32)
    pieces = observe.decode(obs)
    pieces["trick"][1, cards.parse_card("8C")] = 1
    pieces["played_by"][1, cards.parse_card("8C")] = 1
    pieces["trick_leader"][1] = 1
    pieces["rules"][:] = observe.rule_flags(rules)
    view = seat_view.read(obs)
    assert view.players[0] == 2 and view.winning_seat[0] == 1 and view.last_to_play[0]
    assert set(cards.cards_of(view.beats[0])) == set(cards.parse_cards("9C TC JC QC KC AC")) | set(range(26, 39))


def test_a_view_of_one_vector_and_bad_shapes():
    state = random_states(VARIANTS["classic"], 2, 20, seed=1)
    obs = observe.observe(state)
    assert seat_view.read(obs[0]).hand[0] == state.hands[0, state.current_player[0]]
    with pytest.raises(he.EngineArgumentError, match="629 floats"):
        seat_view.read(obs[:, :100])
    with pytest.raises(he.EngineArgumentError, match="action_mask"):
        seat_view.read(obs, np.ones((3, 52), dtype=bool))


def test_hidden_cards_do_not_change_the_view():
    """Two deals that differ only in cards the seat has not seen give it the same view."""
    rules = VARIANTS["classic"]
    state = random_states(rules, 16, 30, seed=4)
    seat = state.current_player.copy()
    hidden = worlds.hidden_cards(state, seat)
    swapped = state.take(np.arange(16))
    worlds_hands = hidden.sample(np.random.default_rng(9))
    for g in range(16):
        for h, s in enumerate(hidden.holder_seats[g]):
            swapped.hands[g, s] = worlds_hands[g, h]
    assert (swapped.hands != state.hands).any()
    a = seat_view.read(observe.observe(state, seats=seat))
    b = seat_view.read(observe.observe(swapped, seats=seat))
    for field in ("hand", "played_by", "trick_card", "voids", "points_taken", "winning_seat", "beats"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


def test_deal_seat_views_rebuilds_the_game_the_seat_sees():
    rules = VARIANTS["jack"]
    state = random_states(rules, 32, 40, seed=6)
    playing = (state.phase == he.PLAY).nonzero()[0]
    obs = observe.observe(state, games=playing)
    mask = cards.to_mask(state.legal[playing])
    view = seat_view.read(obs, mask)
    k = 3
    dealt = worlds.deal_seat_views(rules, view, k, np.random.default_rng(0))
    assert dealt.batch_size == playing.size * k
    again = seat_view.read(observe.observe(dealt, seats=0), cards.to_mask(dealt.legal))
    for field in ("hand", "legal", "passed", "received", "played_by", "trick_card", "voids", "points_taken",
                  "jack_taken", "winning_seat", "tricks_done", "hearts_broken"):
        assert np.array_equal(np.repeat(getattr(view, field), k, axis=0), getattr(again, field)), field
    assert np.array_equal(np.repeat(view.score_points(rules.target_score), k, axis=0),
                          again.score_points(rules.target_score))
    # Every card is somewhere, once.
    held = np.bitwise_or.reduce(dealt.hands, axis=1) | np.bitwise_or.reduce(dealt.played, axis=1)
    assert (held == rules.deck_bits).all()
    with pytest.raises(ValueError, match="seat to play"):
        worlds.deal_seat_views(rules, seat_view.read(observe.observe(state, seats=0)), 1,
                               np.random.default_rng(0))
