"""The per-card scorer: its facts on scripted deals by card name, "takes the trick" against the
engine over random games, and a scorer added to a trained network changes nothing until fitted
(grown, saved, loaded and exported alike)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import hearts_env as he
from agents.card_scorer import CARD_FACT_NAMES, CONTEXT_FACT_NAMES, _constants, card_facts
from agents.checkpoint import load_net, save
from agents.policy import PolicyNet, widened
from hearts_env import cards, engine
from hearts_app.bench import random_actions
from hearts_env.observe import observe
from tests.scripted import NO_PASS_HAND, game, play

CLASSIC = he.Rules.preset("classic")
TWO = he.Rules.preset("two_player")


def facts_of(state, seat=None):
    """Per-card facts ``{name: {card text: value}}`` and context ``{name: value}`` of game 0, seen by
    ``seat`` (default: the seat to act)."""
    obs = observe(state) if seat is None else observe(state, np.array([seat]))
    facts, context = card_facts(torch.as_tensor(obs), _constants())
    per_card = {name: {cards.card_text(c): float(facts[0, c, k]) for c in range(52)}
                for k, name in enumerate(CARD_FACT_NAMES)}
    return per_card, {name: float(context[0, k]) for k, name in enumerate(CONTEXT_FACT_NAMES)}


def test_facts_of_the_last_seat_to_a_club_trick():
    # Seat 0 holds 2C and the other low clubs (the deal fills in id order); seat 3 plays last.
    state = play(game(CLASSIC, {0: "2C", 1: "KC", 2: "5C", 3: "AC 3C 7H QS"}, hand_number=NO_PASS_HAND), "2C KC 5C")
    assert state.current_player[0] == 3
    facts, context = facts_of(state)
    assert facts["held"]["AC"] == facts["held"]["QS"] == 1 and facts["held"]["KC"] == 0
    assert facts["out"]["KC"] == 0 and facts["out"]["AC"] == 0 and facts["out"]["4C"] == 1
    assert facts["takes_trick_now"]["AC"] == 1 and facts["takes_trick_now"]["3C"] == 0
    assert facts["takes_trick_now"]["7H"] == facts["takes_trick_now"]["QS"] == 0  # not the suit led
    assert facts["follows_lead"]["3C"] == 1 and facts["follows_lead"]["7H"] == 0
    assert facts["higher_in_trick"]["3C"] == pytest.approx(2 / 3)  # 5C and KC
    # Clubs out: 4C 6C 7C 8C 9C TC JC QC (seat 0's); 2C, 5C, KC are played, AC and 3C mine.
    assert facts["higher_out"]["3C"] == pytest.approx(8 / 12) and facts["lower_out"]["3C"] == 0
    assert facts["higher_out"]["AC"] == 0 and facts["lower_out"]["AC"] == pytest.approx(8 / 12)
    assert facts["suit_out"]["AC"] == pytest.approx(8 / 13) and facts["suit_held"]["AC"] == pytest.approx(2 / 13)
    assert facts["points"]["QS"] == 1 and facts["points"]["7H"] == pytest.approx(1 / 13) and facts["points"]["AC"] == 0
    assert facts["spades"]["QS"] == 1 and facts["rank"]["QS"] == pytest.approx(10 / 12)
    assert facts["trump"]["7H"] == 0
    assert context["cards_in_trick"] == 1 and context["last_to_play"] == 1 and context["leading"] == 0
    assert context["trick_points"] == 0 and context["trick_number"] == 0


def test_facts_of_a_leader_and_of_points_in_the_trick():
    state = play(game(CLASSIC, {0: "2C", 1: "KC", 2: "5C", 3: "AC 3C 7H QS"}, hand_number=NO_PASS_HAND), "2C KC 5C AC")
    facts, context = facts_of(state)  # seat 3 took the first trick and leads
    assert state.current_player[0] == 3 and context["leading"] == 1 and context["cards_in_trick"] == 0
    assert facts["takes_trick_now"]["3C"] == 0 and facts["follows_lead"]["3C"] == 0  # nothing led yet
    assert context["trick_number"] == pytest.approx(1 / 13)


def test_cards_i_passed_are_out_and_can_still_beat_mine():
    state = game(CLASSIC, {0: "QS KS AS 2D", 1: "2C"}, hand_number=0)  # hand 0 passes to the left
    picks = iter(["KS", "AS", "2D"])
    while state.phase[0] == he.PASS:  # seat 0 passes KS AS 2D, the others their lowest cards
        card = cards.parse_card(next(picks)) if state.current_player[0] == 0 else cards.lowest_card(state.legal)[0]
        state = he.step(state, np.array([card]))
    facts, _ = facts_of(state, seat=0)
    assert facts["held"]["KS"] == 0 and facts["out"]["KS"] == facts["out"]["AS"] == 1
    assert facts["higher_out"]["QS"] == pytest.approx(2 / 12)  # KS and AS, now in the left seat's hand


def test_hearts_trump_in_the_two_player_game():
    state = play(game(TWO, {0: "2C 4S", 1: "AC 4C 2H QS"}, dead="8C QC", hand_number=0), "2C")
    facts, context = facts_of(state)
    assert state.current_player[0] == 1 and context["last_to_play"] == 1
    assert facts["takes_trick_now"]["AC"] == facts["takes_trick_now"]["4C"] == 1
    assert facts["trump"]["2H"] == 1 and facts["takes_trick_now"]["2H"] == 1  # a trump on a club lead
    assert facts["takes_trick_now"]["QS"] == 0
    assert facts["out"]["3C"] == 0 and facts["out"]["6C"] == 1  # 3C is not in the 28-card deck


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), rules=st.sampled_from([CLASSIC, TWO]))
def test_takes_trick_now_is_who_takes_it_when_playing_last(seed, rules):
    """At every trick of a random hand, for the last seat to it, a legal card "takes the trick now"
    exactly when the engine gives it the trick."""
    state = he.init(rules, 16, seed)
    rng = np.random.default_rng(seed)
    checked = 0
    while not state.done.any() and state.hand_number[0] == 0:
        # The games move in step. The last trick is left out: ending the hand deals the next one,
        # which clears what each seat took.
        last_to_play = state.phase[0] == he.PLAY and state.num_in_trick[0] == rules.num_players - 1
        if last_to_play and state.trick_number[0] < rules.hand_size - 1:
            facts, _ = card_facts(torch.as_tensor(observe(state)), _constants())
            takes = facts[..., CARD_FACT_NAMES.index("takes_trick_now")].numpy()
            game, card = np.nonzero(engine.legal_mask(state))
            branches = state.take(game)
            seat = branches.current_player.copy()
            engine.step_inplace(branches, card)
            took = (branches.taken[np.arange(card.size), seat] & cards.BIT[card]) != 0
            np.testing.assert_array_equal(took, takes[game, card] == 1)
            checked += 1
        state = he.step(state, random_actions(state.legal, rng))
    assert checked == rules.hand_size - 1  # every trick of the hand but the last was checked


def test_a_scorer_added_or_grown_plays_exactly_as_before():
    torch.manual_seed(0)
    state = he.init(CLASSIC, 256, seed=3)
    obs, mask = torch.as_tensor(observe(state)), torch.as_tensor(engine.legal_mask(state))
    plain = PolicyNet(hidden=[16, 8])
    with_scorer = widened(plain, [16, 8], card_scorer=6)
    assert torch.equal(plain(obs, mask)[0], with_scorer(obs, mask)[0])
    with torch.no_grad():  # a trained scorer: its scores now matter
        with_scorer.card_scorer.out.weight.normal_()
    trained = with_scorer(obs, mask)[0]
    assert not torch.equal(plain(obs, mask)[0], trained)
    grown = widened(with_scorer, [24, 12], card_scorer=10)
    torch.testing.assert_close(grown(obs, mask)[0], trained)
    with pytest.raises(ValueError, match="cannot shrink the card scorer from 6 units to 4"):
        widened(with_scorer, [16, 8], card_scorer=4)


def test_a_scorer_is_saved_loaded_and_old_files_have_none(tmp_path):
    torch.manual_seed(1)
    net = widened(PolicyNet(hidden=[8]), [8], card_scorer=4)
    with torch.no_grad():
        net.card_scorer.out.weight.normal_()
    path = save(tmp_path / "scored.pt", net, {"rules": CLASSIC.to_dict()})
    loaded, meta = load_net(path)
    assert meta["card_scorer"] == 4 and loaded.card_scorer.width == 4
    state = he.init(CLASSIC, 32, seed=4)
    obs, mask = torch.as_tensor(observe(state)), torch.as_tensor(engine.legal_mask(state))
    assert torch.equal(loaded(obs, mask)[0], net(obs, mask)[0])
    assert set(loaded.state_dict()) == set(net.state_dict())  # the fixed tables are rebuilt, not stored
    plain, _ = load_net(save(tmp_path / "plain.pt", PolicyNet(hidden=[8]), {"rules": CLASSIC.to_dict()}))
    assert plain.card_scorer is None


def test_a_network_with_a_scorer_exports_to_onnx_that_plays_the_same(tmp_path):
    from export.model import export_policy

    torch.manual_seed(2)
    net = widened(PolicyNet(hidden=[16]), [16], card_scorer=4)
    with torch.no_grad():  # scores large enough to decide cards
        net.card_scorer.out.weight.normal_(std=10.0)
    path = save(tmp_path / "scored.pt", net, {"rules": TWO.to_dict(), "iteration": 0})
    # export_policy runs onnxruntime against torch on real two-player states and raises on any difference
    written = export_policy(path, tmp_path / "export", golden=2, verify_decisions=256)
    import json

    manifest = json.loads(written["manifest"].read_text())
    assert manifest["provenance"]["network"]["card_scorer"] == 4
    assert manifest["verified"]["actions_equal"]
