"""Seat records (``hearts_env.seat_record``): a record of what one seat saw goes through the engine and
gives ``observe``'s vector and the legal mask; the unseen cards respect what play revealed; impossible
records are refused with clear errors; cards may be given as texts or ids, rules as a preset. (The
JavaScript side is in ``clients/js/test/hearts.test.js``; the ``exported`` fixture is in conftest.py.)"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import hearts_env as he
from export import golden
from export.situations import sample_states
from hearts_env import cards, engine, observe, seat_record, seat_view
from hearts_env.seat_record import SeatRecordError


VARIANTS = [he.Rules.preset("classic"), he.Rules.preset("two_player"), golden.variant_rules()[1]]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: r.name)
def test_records_rebuild_the_engines_observation_and_mask(rules):
    """Every decision of a few hands: record -> replayed state -> observe == observe of the real game."""
    checked = placed_differently = 0
    for state in sample_states(rules, games=2, seed=11, agent="random"):
        record = seat_record.from_state(state)
        json.loads(json.dumps(record))  # plain JSON
        rebuilt, seat = seat_record.to_state(record)
        assert seat == state.current_player[0]
        assert np.array_equal(observe.observe(rebuilt, np.array([seat])), observe.observe(state))
        assert np.array_equal(engine.legal_mask(rebuilt), engine.legal_mask(state))
        others = [s for s in range(rules.num_players) if s != seat]
        placed_differently += not np.array_equal(rebuilt.hands[0, others], state.hands[0, others])
        checked += 1
    assert checked >= 2 * rules.hand_size
    # The unseen cards were dealt differently from the real game, and the observation did not care.
    assert placed_differently > checked // 2


def test_the_unseen_cards_respect_what_play_revealed():
    """A seat that showed a void gets no card of that suit in the rebuilt state."""
    rules = he.Rules.preset("classic")
    checked = voids_seen = 0
    for state in sample_states(rules, 3, seed=5):
        if state.trick_number[0] < 7:
            continue
        checked += 1
        rebuilt, seat = seat_record.to_state(seat_record.from_state(state))
        for s in range(4):
            for suit in range(4):
                if rebuilt.voids[0, s, suit]:
                    voids_seen += 1
                    assert not rebuilt.hands[0, s] & he.cards.SUIT_BITS[suit]
    assert checked > 20 and voids_seen > 0


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: r.name)
def test_a_record_s_view_is_the_seat_view_and_what_the_replay_knows(rules):
    """seat_record.view: the observation's seat view, the exact cards taken, and who may hold what,
    which always admits the real deal and never a played card, a shown void or a passed card
    elsewhere than with its receiver."""
    p = rules.num_players
    narrowed = 0
    for state in sample_states(rules, games=2, seed=3, agent="random"):
        seat = int(state.current_player[0])
        known = seat_record.view(seat_record.from_state(state))
        expected = seat_view.read(observe.observe(state), engine.legal_mask(state))
        for field in ("hand", "legal", "played_by", "trick_card", "voids", "points_taken", "winning_seat"):
            assert np.array_equal(getattr(known.view, field), getattr(expected, field)), field
        relative = [(seat + k) % p for k in range(p)]
        assert known.taken[:p].tolist() == state.taken[0, relative].tolist()
        played = np.bitwise_or.reduce(state.played[0])
        for k, s in enumerate(relative):
            may = cards.from_mask(known.may_hold[None, :, k])[0]
            assert state.hands[0, s] & ~may == 0, "the real holding is always possible"
            assert may & played == 0
            for suit in range(4):
                if state.voids[0, s, suit]:
                    assert may & cards.SUIT_BITS[suit] == 0
        mine = state.hands[0, seat]
        others = [cards.from_mask(known.may_hold[None, :, k])[0] for k in range(1, p)]
        assert all(may & mine == 0 for may in others)
        offset = int(rules.pass_offsets[state.hand_number[0] % len(rules.pass_cycle)])
        if state.phase[0] == he.PLAY and offset:
            sent = state.passed[0, seat] & ~played
            for k in range(1, p):
                if k != offset:
                    assert others[k - 1] & sent == 0, "a passed card is with its receiver"
        narrowed += state.phase[0] == he.PLAY and any(
            may != rules.deck_bits & ~mine & ~played for may in others)
    assert narrowed > 0


def test_impossible_records_get_clear_errors(exported):
    invalid = exported["golden"]["invalid"]
    assert len(invalid) >= 8
    for case in invalid:
        with pytest.raises(SeatRecordError, match=re.escape(case["error"])):
            seat_record.observation(case["record"])
    with pytest.raises(SeatRecordError, match="not valid JSON"):
        seat_record.parse("{oops")
    with pytest.raises(SeatRecordError, match="unknown key"):
        seat_record.parse({**exported["sample"], "hidden_hands": []})


def test_records_accept_card_texts_ids_and_rule_presets(exported):
    record = exported["sample"]
    as_ids = {**record, "hand": [he.cards.parse_card(c) for c in record["hand"]],
              "rules": {"preset": "classic"}}
    as_text = {**record, "hand": [c.replace("T", "10").lower() for c in record["hand"]]}
    expected = seat_record.observation(record)
    assert np.array_equal(seat_record.observation(as_ids), expected)
    assert np.array_equal(seat_record.observation(as_text), expected)
