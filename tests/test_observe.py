"""Observation v1: the decoder round-trips against the state, and nothing hidden leaks."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import hearts_env as he
from hearts_env import cards, observe
from hearts_app.bench import random_actions
from hearts_env.engine import EngineArgumentError, update_legal
from hearts_env.scoring import card_points

PRESETS = ["classic", "two_player"]
VARIANTS = {
    "classic": he.Rules.preset("classic"),
    "two_player": he.Rules.preset("two_player"),
    "jack": he.Rules.preset("classic").replace(jack_of_diamonds_bonus=True, moon="shooters_choice"),
}


def random_states(rules, batch, steps, seed):
    """A batch of games after ``steps`` random decisions (some mid-pass, mid-trick, later hands)."""
    state = he.init(rules, batch, seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        state = he.step(state, random_actions(state.legal, rng))
    return state


def card_plays(state):
    """``(observations, masks)`` of the games of ``state`` that are at a card play."""
    live = state.phase == he.PLAY
    return observe.observe(state)[live], he.legal_mask(state)[live]


def expected_pieces(state, g, seat):
    """What observation v1 should say for game g seen by seat, written out plainly."""
    rules, p = state.rules, state.num_players
    def rel(r):
        return (seat + r) % p
    def mask(bits):
        return cards.to_mask(np.array(bits, dtype=np.uint64)).astype(np.float32)
    offset = int(rules.pass_offsets[state.hand_number[g] % len(rules.pass_cycle)])
    exp = {name: np.zeros(shape, np.float32) for name, (_, shape) in observe.OBSERVATION_LAYOUT.items()}
    exp["hand"] = mask(state.hands[g, seat])
    exp["passed"] = mask(state.passed[g, seat])
    if state.phase[g] != he.PASS and offset:
        exp["received"] = mask(state.passed[g, (seat - offset) % p])
    for r in range(p):
        card = state.trick[g, rel(r)]
        if card >= 0:
            exp["trick"][r, card] = 1
        exp["played_by"][r] = mask(state.played[g, rel(r)])
        exp["voids"][r] = state.voids[g, rel(r)]
        exp["points_taken"][r] = card_points(rules, state.taken[g, rel(r)]) / 26
        if rules.jack_of_diamonds_bonus:
            exp["jack_taken"][r] = bool(state.taken[g, rel(r)] >> np.uint64(22) & np.uint64(1))
        exp["scores"][r] = state.scores[g, rel(r)] / rules.target_score
    if state.num_in_trick[g] > 0:
        exp["trick_leader"][(state.leader[g] - seat) % p] = 1
    if state.current_player[g] >= 0:
        exp["to_act"][(state.current_player[g] - seat) % p] = 1
    exp["trick_number"][0] = state.trick_number[g] / rules.hand_size
    if state.phase[g] == he.PASS:
        exp["phase"][0] = 1
    elif state.phase[g] == he.PLAY:
        exp["phase"][1] = 1
    if offset:
        exp["pass_direction"][offset] = 1
    exp["hearts_broken"][0] = state.hearts_broken[g]
    exp["queen_seen"][0] = any(state.played[g, s] >> np.uint64(49) & np.uint64(1) for s in range(p))
    exp["rules"] = observe.rule_flags(rules)
    return exp


def test_layout_is_contiguous_and_documented():
    stops = [s.stop for s, _ in observe.OBSERVATION_LAYOUT.values()]
    starts = [s.start for s, _ in observe.OBSERVATION_LAYOUT.values()]
    assert starts[0] == 0 and starts[1:] == stops[:-1] and stops[-1] == observe.OBS_DIM
    for name in observe.OBSERVATION_LAYOUT:
        assert name in observe.__doc__


@pytest.mark.parametrize("variant", list(VARIANTS))
@settings(max_examples=8, deadline=None)
@given(steps=st.integers(0, 140), seed=st.integers(0, 2**32))
def test_decoder_round_trips_against_the_state(variant, steps, seed):
    state = random_states(VARIANTS[variant], 6, steps, seed)
    for seat in range(state.num_players):
        obs = observe.observe(state, np.full(state.batch_size, seat))
        assert obs.dtype == np.float32 and obs.shape == (state.batch_size, observe.OBS_DIM)
        pieces = observe.decode(obs)
        for g in range(state.batch_size):
            for name, want in expected_pieces(state, g, seat).items():
                np.testing.assert_array_equal(pieces[name][g], want, err_msg=f"{name} game {g} seat {seat}")


def test_out_buffer_gives_the_same_vector():
    state = random_states(VARIANTS["classic"], 16, 30, 1)
    buf = np.full((16, observe.OBS_DIM), 7.0, np.float32)
    np.testing.assert_array_equal(observe.observe(state, out=buf), observe.observe(state))
    with pytest.raises(ValueError, match="float32"):
        observe.observe(state, out=np.zeros((3, 3)))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_observing_some_games_gives_their_rows(variant):
    # games= picks rows (in any order, repeated) and seats then go with the rows; out of range is refused.
    state = random_states(VARIANTS[variant], 24, 37, 2)
    games = np.array([5, 0, 23, 5, 11])
    whole = observe.observe(state)
    np.testing.assert_array_equal(observe.observe(state, games=games), whole[games])
    seats = np.array([1, 0, 1, 0, 1])
    by_seat = [observe.observe(state, seats=np.full(24, seat)) for seat in (0, 1)]
    np.testing.assert_array_equal(observe.observe(state, seats=seats, games=games),
                                  np.stack([by_seat[seat][g] for g, seat in zip(games, seats)]))
    assert observe.observe(state, games=np.array([], dtype=np.int64)).shape == (0, observe.OBS_DIM)
    for bad in ([24], [-1]):
        with pytest.raises(EngineArgumentError, match=r"games: no game -?\d+ in a batch of 24; .* 0\.\.23"):
            observe.observe(state, games=np.array(bad))


def test_decode_rejects_wrong_length():
    with pytest.raises(ValueError, match=str(observe.OBS_DIM)):
        observe.decode(np.zeros((2, 10), np.float32))


# ---- no peeking -----------------------------------------------------------------------------

def known_to(state, g, seat):
    """Card set the seat knows the place of: its hand, its passes, what was played, its receipts."""
    known = state.hands[g, seat] | state.passed[g, seat]
    for s in range(state.num_players):
        known |= state.played[g, s]
    return known


def relabel_hidden(state, g, seat, rng):
    """A copy of game g where two cards hidden from ``seat`` swap places (consistent with all
    it saw: voids respected); None when no such swap exists."""
    p = state.num_players
    # Who holds the opening card (and so which fallback is dead) is public: that seat leads.
    opening = cards.bits_of(state.rules.opening_ids)
    hidden = state.rules.deck_bits & ~known_to(state, g, seat) & ~opening
    holder = {}
    for s in range(p):
        if s != seat:
            for c in cards.cards_of(state.hands[g, s] & hidden):
                holder[c] = s
    for c in cards.cards_of(state.dead[g] & hidden):
        holder[c] = -1
    options = [
        (a, b) for a in holder for b in holder
        if a < b and holder[a] != holder[b]
        and (holder[b] < 0 or not state.voids[g, holder[b], a // 13])
        and (holder[a] < 0 or not state.voids[g, holder[a], b // 13])
    ]
    if not options:
        return None
    a, b = options[rng.integers(len(options))]
    swap = cards.BIT[a] | cards.BIT[b]
    out = state.take([g])

    def swapped(bits):
        has = (bits & swap) != 0
        one = ((bits & swap) == cards.BIT[a]) | ((bits & swap) == cards.BIT[b])
        return np.where(has & one, bits ^ swap, bits)

    for name in ("hands", "passed", "dealt", "dead"):
        setattr(out, name, swapped(getattr(out, name)))
    update_legal(out)
    return out


@pytest.mark.parametrize("variant", list(VARIANTS))
@settings(max_examples=10, deadline=None)
@given(steps=st.integers(0, 150), seed=st.integers(0, 2**32))
def test_hidden_cards_do_not_change_the_observation(variant, steps, seed):
    state = random_states(VARIANTS[variant], 4, steps, seed)
    rng = np.random.default_rng(seed)
    checked = 0
    for g in range(state.batch_size):
        for seat in range(state.num_players):
            other = relabel_hidden(state, g, seat, rng)
            if other is None:
                continue
            assert not other.equals(state.take([g]))  # the hidden deal really changed
            mine = observe.observe(state.take([g]), np.array([seat]))
            np.testing.assert_array_equal(observe.observe(other, np.array([seat])), mine)
            if state.current_player[g] == seat:
                np.testing.assert_array_equal(he.legal_mask(other), he.legal_mask(state.take([g])))
            checked += 1
    # At a hand's last card (all games step together, so e.g. after 63 decisions with a pass)
    # nothing hidden can be relabelled: hypothesis discards such examples, and fails the test as
    # unsatisfiable if it cannot find enough where something was checked.
    assume(checked > 0)


@settings(max_examples=10, deadline=None)
@given(steps=st.integers(0, 120), seed=st.integers(0, 2**32))
def test_what_a_seat_sees_changes_its_observation(steps, seed):
    state = random_states(VARIANTS["classic"], 1, steps, seed)
    seat = 0
    base = observe.observe(state, np.array([seat]))
    # Swap a card of my hand with a card of another hand: my hand changed.
    other = state.copy()
    mine = cards.cards_of(state.hands[0, seat])
    theirs = cards.cards_of(state.hands[0, 1])
    if mine and theirs:
        swap = cards.BIT[mine[0]] | cards.BIT[theirs[0]]
        other.hands[0, seat] ^= swap
        other.hands[0, 1] ^= swap
        assert not np.array_equal(observe.observe(other, np.array([seat])), base)
    # Scores, hearts broken and the hand number (pass direction) are seen too.
    for field, change in (("scores", lambda s: s.scores.__setitem__((0, 2), s.scores[0, 2] + 1)),
                          ("hearts_broken", lambda s: s.hearts_broken.__setitem__(0, ~s.hearts_broken[0])),
                          ("trick_number", lambda s: s.trick_number.__setitem__(0, s.trick_number[0] + 1))):
        other = state.copy()
        change(other)
        assert not np.array_equal(observe.observe(other, np.array([seat])), base), field
