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
from export.situations import sample_records, sample_states
from hearts_env import cards, engine, observe, play, seat_record, seat_view
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


@pytest.mark.parametrize("text, says", [
    ("a" * 100_000, "not valid JSON (nor the path of an existing file)"),  # longer than a file name may be
    ("x\x00y", "not valid JSON (nor the path of an existing file)"),
    ("[" * 100_000, "not valid JSON: nested too deeply"),
    ('{"version": ' + "9" * 5000 + "}", "not valid JSON: a number of more than 4,300 digits"),
], ids=["long-text", "nul", "deep", "long-number"])
def test_a_record_text_that_is_no_record_is_refused_in_one_line(text, says):
    with pytest.raises(SeatRecordError) as refused:
        seat_record.parse(text)
    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert "set_int_max_str_digits" not in str(refused.value)


def test_a_record_path_that_is_a_folder_or_too_large_is_refused(tmp_path):
    with pytest.raises(SeatRecordError, match="is not a file"):
        seat_record.parse(tmp_path)
    large = tmp_path / "record.json"
    large.write_text("{" + " " * (seat_record.MAX_RECORD_BYTES + 1) + "}")
    with pytest.raises(SeatRecordError, match="a record is at most"):
        seat_record.parse(large)


def test_records_accept_card_texts_ids_and_rule_presets(exported):
    record = exported["sample"]
    as_ids = {**record, "hand": [he.cards.parse_card(c) for c in record["hand"]],
              "rules": {"preset": "classic"}}
    as_text = {**record, "hand": [c.replace("T", "10").lower() for c in record["hand"]]}
    expected = seat_record.observation(record)
    assert np.array_equal(seat_record.observation(as_ids), expected)
    assert np.array_equal(seat_record.observation(as_text), expected)


def _every_rule_set() -> list[he.Rules]:
    """Every preset and every golden variant, each game once."""
    out: list[he.Rules] = []
    for rules in [*he.PRESETS.values(), *golden.variant_rules()]:
        if not any(rules.same_game(seen) for seen in out):
            out.append(rules)
    return out


def test_a_batch_of_records_of_every_rule_set_rebuilds_every_decision(monkeypatch):
    """encode_batch over every decision of sample games of every preset and golden variant, the rule
    sets mixed in one batch: the engine's observation and mask of each real game, all rebuilt by the
    batched replay (none left to the one-record path)."""
    states = [state for i, rules in enumerate(_every_rule_set())
              for state in sample_states(rules, games=2, seed=20 + i, agent="random")]
    order = np.random.default_rng(0).permutation(len(states))
    states = [states[i] for i in order]
    records = [seat_record.from_state(state) for state in states]
    one_by_one = []
    monkeypatch.setattr(seat_record, "to_state", lambda r: one_by_one.append(r) or pytest.fail("fell back"))
    obs, masks, errors = seat_record.encode_batch(records)
    assert errors == [None] * len(records) and not one_by_one
    assert obs.dtype == np.float32 and masks.dtype == bool
    assert np.array_equal(obs, np.concatenate([observe.observe(s) for s in states]))
    assert np.array_equal(masks, np.concatenate([engine.legal_mask(s) for s in states]))
    assert {r["phase"] for r in records} == {"pass", "play"}
    assert len({json.dumps(r["rules"]) for r in records}) >= 5


def test_a_batch_answers_every_record_and_words_each_error_as_one_record_would():
    """Valid and invalid records in one batch (two rule sets): each invalid one gets exactly its
    single-record error, the valid ones their observations; encode raises the first error."""
    valid = [*sample_records(he.Rules.preset("classic"), 12, seed=4, games=2),
             *sample_records(he.Rules.preset("two_player"), 6, seed=5, games=1)]
    invalid = golden.invalid_records()
    records, expected = [], []
    for i in range(max(len(valid), len(invalid))):
        for group in (valid, invalid):
            if i < len(group):
                records.append(group[i]["record"] if group is invalid else group[i])
                expected.append(group[i]["message"] if group is invalid else None)
    records.append("{oops")
    expected.append(str(pytest.raises(SeatRecordError, seat_record.parse, "{oops").value))
    obs, masks, errors = seat_record.encode_batch(records)
    assert len(errors) == len(records) == obs.shape[0] == masks.shape[0]
    for record, message, error, o, m in zip(records, expected, errors, obs, masks):
        if message is None:
            assert error is None
            assert np.array_equal(o, seat_record.observation(record))
            assert np.array_equal(m, seat_record.legal_mask(record))
        else:
            assert isinstance(error, SeatRecordError) and str(error) == message
            assert not o.any() and not m.any()
    first = next(message for message in expected if message is not None)
    with pytest.raises(SeatRecordError) as raised:
        seat_record.encode(records)
    assert str(raised.value) == first
    empty_obs, empty_masks, none = seat_record.encode_batch([])
    assert empty_obs.shape == (0, observe.OBS_DIM) and empty_masks.shape == (0, 52) and none == []


def test_the_what_if_kernel_asks_the_engine_s_legal_play_rule():
    """play.legal_if_also_held: the card still legal with the hand extended by each candidate, as
    the engine's legal plays say of a copy whose hand holds it."""
    rules = he.Rules.preset("classic")
    states = [s for s in sample_states(rules, games=2, seed=7, agent="random") if s.phase[0] == he.PLAY]
    state = he.State.concatenate(states)
    games = np.arange(state.batch_size)
    seat = state.current_player
    candidates = rules.deck_bits & ~state.hands[games, seat] & ~np.bitwise_or.reduce(state.played, axis=1)
    played = cards.lowest_card(state.legal)
    before = state.buffer.copy()
    got = play.legal_if_also_held(state, games, played, candidates)
    assert np.array_equal(state.buffer, before)
    narrowed = 0
    for g in games:
        expected = 0
        for c in cards.cards_of(candidates[g]):
            what_if = state.take([g])
            what_if.hands[0, seat[g]] |= cards.BIT[c]
            if play.legal_plays(what_if, np.arange(1))[0] >> np.uint64(played[g]) & np.uint64(1):
                expected |= 1 << c
        assert int(got[g]) == expected
        narrowed += expected != int(candidates[g])
    assert narrowed > 0


def test_a_batch_of_damaged_records_gets_the_one_record_answer_for_each():
    """Records with cards swapped, a card twice, a wrong seat or leader, in one batch: each gets what
    the one-record path gives it, its error message word for word or its observation and mask."""
    rng = np.random.default_rng(1)
    base = [*sample_records(he.Rules.preset("classic"), 10**6, seed=8, games=2, agent="random"),
            *sample_records(he.Rules.preset("two_player"), 10**6, seed=9, games=1, agent="random")]

    def card_lists(record):
        return [ids for ids in (record["hand"], record["passed"], record["received"],
                                *(t["cards"] for t in record["tricks"]), record["trick"]["cards"]) if ids]

    records = []
    for pick in rng.integers(len(base), size=240):
        record = json.loads(json.dumps(base[pick]))
        lists, kind = card_lists(record), rng.integers(4)
        a, b = (lists[j] for j in rng.integers(len(lists), size=2))
        i, j = rng.integers(len(a)), rng.integers(len(b))
        if kind == 0:
            a[i], b[j] = b[j], a[i]  # two cards change places (often still a possible record)
        elif kind == 1:
            b[j] = a[i]  # a card twice
        elif kind == 2:
            record["seat"] = int(rng.integers(len(record["scores"])))
        elif record["tricks"]:
            record["tricks"][-1]["leader"] = int(rng.integers(len(record["scores"])))
        records.append(record)
    obs, masks, errors = seat_record.encode_batch(records)
    valid = 0
    for record, o, m, error in zip(records, obs, masks, errors):
        try:
            expected = seat_record.observation(record), seat_record.legal_mask(record)
        except SeatRecordError as err:
            assert str(error) == str(err)
        else:
            valid += 1
            assert error is None and np.array_equal(o, expected[0]) and np.array_equal(m, expected[1])
    assert 20 < valid < len(records) - 20
