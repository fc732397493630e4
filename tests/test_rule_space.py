"""Rule spaces (hearts_env/rule_space.py): what a network covers, the families, drawing rule sets for
training, and the refusal of rules outside a space in checkpoints, exports and training configs."""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.checkpoint import CheckpointError, load_policy, save
from agents.policy import PolicyNet
from hearts_env import observe
from hearts_env.rule_space import FAMILIES, FIELDS, RuleSpace, table_groups
from hearts_env.rules import PRESETS, Rules, RulesError
from train.config import ConfigError, config_from_mapping

CLASSIC = Rules.preset("classic")


def page_rule_sets():
    """Every rule set the game's page lets a player set up: each preset with each single option the
    page offers on top (hearts_app/serve/app.py option_choices), where the rules accept the combination."""
    from hearts_app.serve.app import option_choices

    out = []
    for preset in PRESETS.values():
        for option, values in option_choices().items():
            for value in values:
                try:
                    out.append(preset.replace(**{option: value}))
                except RulesError:  # e.g. an 'across' pass with two players: the page's game refuses it too
                    continue
    return out


def test_the_families_cover_every_rule_set_the_page_offers_and_nothing_else():
    for rules in page_rule_sets():
        family = FAMILIES["two_player" if rules.num_players == 2 else "classic"]
        assert family.covers(rules), (rules.name, family.refusal(rules))
    other = FAMILIES["two_player"].refusal(CLASSIC)
    assert other == "num_players 4 is not among the values it covers: 2"
    for rules in (CLASSIC.replace(target_score=200), CLASSIC.replace(pass_count=2), CLASSIC.replace(moon_points=20)):
        assert not FAMILIES["classic"].covers(rules)
    assert FAMILIES["classic"].base == CLASSIC and FAMILIES["classic"].base.name == "classic"
    assert FAMILIES["two_player"].base == Rules.preset("two_player")


def test_a_refusal_names_the_first_option_outside_and_the_values_covered():
    space = FAMILIES["classic"]
    assert space.refusal(CLASSIC.replace(target_score=200)) == \
        "target_score 200 is not among the values it covers: 100, 50, 150"
    assert RuleSpace.point("classic").refusal(Rules.preset("quick")) == \
        "target_score 50 is not among the values it covers: 100"
    assert RuleSpace.point("classic").refusal(CLASSIC.replace(moon="off")) == \
        'moon "off" is not among the values it covers: "add_to_others"'
    assert space.refusal(Rules.preset("long").replace(queen_waits_for_hearts=True)) is None


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), family=st.sampled_from(sorted(FAMILIES)))
def test_drawn_rule_sets_are_valid_covered_and_never_held_out(seed, family):
    space = FAMILIES[family]
    rng = np.random.default_rng(seed)
    for _ in range(20):
        rules = space.sample(rng)
        assert space.covers(rules) and not space.is_held_out(rules)
        assert rules.name in ("custom", *PRESETS) and (rules.name == "custom") == (rules not in PRESETS.values())


def test_drawing_reaches_every_value_of_every_option_and_the_home_preset():
    rng = np.random.default_rng(0)
    space = FAMILIES["classic"]
    drawn = [space.sample(rng).to_dict() for _ in range(3000)]
    for field, values in space.fields.items():
        seen = {json.dumps(d[field]) for d in drawn}
        assert seen == {json.dumps(v) for v in values}, field
    assert any(d["name"] == "classic" for d in drawn)
    for combo in space.held_out:  # each held-out pair is drawn never, although each of its options is
        assert not any(all(d[k] == v for k, v in combo.items()) for d in drawn)


def test_table_groups_split_the_tables_each_at_a_drawn_rule_set():
    groups = table_groups(FAMILIES["classic"], 100, 8, np.random.default_rng(1))
    assert sum(n for _, n in groups) == 100 and sorted({n for _, n in groups}) == [12, 13]
    assert len({json.dumps(r.to_dict(), sort_keys=True) for r, _ in groups}) > 4
    assert len(table_groups(FAMILIES["classic"], 3, 8, np.random.default_rng(1))) == 3


def test_a_space_round_trips_and_a_malformed_one_is_refused_by_name():
    for space in (*FAMILIES.values(), RuleSpace.point("quick")):
        assert RuleSpace.from_dict(json.loads(json.dumps(space.to_dict()))) == space
    good = FAMILIES["classic"].to_dict()
    cases = [
        ({"fields": {**good["fields"], "colour": ["red"]}}, "unknown option"),
        ({"fields": {k: v for k, v in good["fields"].items() if k != "moon"}}, "no values for moon"),
        ({"fields": {**good["fields"], "moon": []}}, "moon needs a non-empty list"),
        ({"fields": {**good["fields"], "moon": ["sideways"]}}, "moon"),
        ({"fields": {**good["fields"], "target_score": [50, 50]}}, "lists a value twice"),
        ({"fields": good["fields"], "held_out": [{"target_score": 200}]}, "does not cover"),
        ({"fields": good["fields"], "held_out": "moon"}, "held_out must be a list"),
        ([1, 2], "expected"),
    ]
    for data, words in cases:
        with pytest.raises(RulesError, match=words):
            RuleSpace.from_dict(data)
    assert set(FIELDS) == set(Rules.model_fields) - {"name"}


def test_the_observation_tells_the_options_of_a_family_apart():
    """Options that change play are in observation v1 (the rule flags, the moon rule), so one network can
    play them all; the target is in it as scores over the target."""
    flags = {json.dumps(observe.rule_flags(r).tolist())
             for r in (CLASSIC, CLASSIC.replace(moon="off"), CLASSIC.replace(moon="subtract_from_self"),
                       CLASSIC.replace(moon="shooters_choice"), CLASSIC.replace(queen_waits_for_hearts=True),
                       CLASSIC.replace(queen_breaks_hearts=True), CLASSIC.replace(jack_of_diamonds_bonus=True),
                       CLASSIC.replace(first_trick_protection=False), CLASSIC.replace(hearts_must_be_broken=False))}
    assert len(flags) == 9


# ---- networks that declare a space -------------------------------------------------------------


def family_checkpoint(tmp_path, family="classic"):
    space = FAMILIES[family]
    return save(tmp_path / f"{family}.pt", PolicyNet(hidden=[8]),
                {"rules": space.base.to_dict(), "rule_space": space.to_dict()})


def test_a_checkpoint_covering_a_family_plays_its_rule_sets_and_refuses_others_in_one_line(tmp_path):
    path = family_checkpoint(tmp_path)
    for rules in (Rules.preset("quick"), Rules.preset("long").replace(moon="off", jack_of_diamonds_bonus=True)):
        load_policy(path, rules=rules)
    with pytest.raises(CheckpointError) as refused:
        load_policy(path, rules=CLASSIC.replace(target_score=300))
    assert str(refused.value) == (f"{path} was trained for a space of rule sets around 'classic' and cannot play the "
                                  "'custom' rules: target_score 300 is not among the values it covers: 100, 50, 150")
    with pytest.raises(CheckpointError, match=r"cannot play the 'two_player' rules: num_players 2 is not among"):
        load_policy(path, rules=Rules.preset("two_player"))


def test_a_checkpoint_with_a_malformed_space_or_one_missing_its_own_rules_is_refused(tmp_path):
    broken = save(tmp_path / "broken.pt", PolicyNet(hidden=[8]),
                  {"rules": CLASSIC.to_dict(), "rule_space": {"fields": {"moon": ["off"]}}})
    with pytest.raises(CheckpointError, match="no usable rule space"):
        load_policy(broken)
    elsewhere = save(tmp_path / "elsewhere.pt", PolicyNet(hidden=[8]),
                     {"rules": CLASSIC.to_dict(), "rule_space": FAMILIES["two_player"].to_dict()})
    with pytest.raises(CheckpointError, match="does not cover the network's own rules"):
        load_policy(elsewhere)


def test_an_exported_family_network_declares_its_space_and_golden_records_of_several_rule_sets(tmp_path):
    pytest.importorskip("onnxruntime")
    from agents import make
    from export.model import export_policy

    written = export_policy(family_checkpoint(tmp_path), tmp_path / "out", golden=12, verify_decisions=64)
    manifest = json.loads(written["manifest"].read_text())
    assert RuleSpace.from_dict(manifest["rule_space"]) == FAMILIES["classic"]
    golden = json.loads(written["golden"].read_text())
    rule_sets = {json.dumps(c["record"]["rules"], sort_keys=True) for c in golden["cases"]}
    assert len(rule_sets) >= 4 and all(FAMILIES["classic"].covers(json.loads(r)) for r in rule_sets)
    held = FAMILIES["classic"].held_out
    assert all(any(all(json.loads(r)[k] == v for k, v in combo.items()) for r in rule_sets) for combo in held)
    make(f"onnx:{written['model']}", rules=Rules.preset("quick").replace(moon="off"))
    with pytest.raises(Exception, match=r"cannot play the 'custom' rules: target_score 75 is not among"):
        make(f"onnx:{written['model']}", rules=CLASSIC.replace(target_score=75))


# ---- training across a space -------------------------------------------------------------------


def test_a_training_config_takes_a_family_that_covers_its_rules():
    config = config_from_mapping({"rules": "quick", "rule_space": "classic", "rule_sets_per_round": 4})
    assert config.rule_space_value == FAMILIES["classic"]
    with pytest.raises(ConfigError, match="rule_space does not cover the run's rules: num_players 4"):
        config_from_mapping({"rules": "classic", "rule_space": "two_player"})
    with pytest.raises(ConfigError, match="unknown rule family 'classik'"):
        config_from_mapping({"rules": "classic", "rule_space": "classik"})
    with pytest.raises(ConfigError, match="rule_sets_per_round 64 is more than num_tables 16"):
        config_from_mapping({"rule_space": "classic", "rule_sets_per_round": 64, "num_tables": 16})


def test_imitation_and_ppo_rounds_play_several_rule_sets_of_the_space():
    from agents import make
    from train.config import load_config
    from train.imitation import mixed_round
    from train.opponents import League
    from train.ppo import collect

    config = config_from_mapping({"rule_space": "classic", "rule_sets_per_round": 4, "num_tables": 16})
    obs, mask, action, target, choice = mixed_round(make("easy"), CLASSIC, config, 5, np.random.default_rng(0))
    where = observe.OBSERVATION_LAYOUT["rules"][0]
    assert len({row.tobytes() for row in obs[:, where]}) > 1  # the rule flags differ between groups
    assert mask[np.arange(len(action)), action].all()

    config = load_config("configs/smoke.yaml", ["rule_space=classic", "rule_sets_per_round=4", "num_tables=16",
                                                "hidden=[8]"])
    def rollout():
        torch.manual_seed(0)
        return collect(PolicyNet(hidden=[8]), League(config.league, CLASSIC, seed=0), CLASSIC, config, 0,
                       torch.device("cpu"))

    batch = rollout()
    assert len({row.tobytes() for row in batch.obs[:, where]}) > 1
    assert batch.mask[np.arange(len(batch.action)), batch.action].all() and np.isfinite(batch.advantage).all()
    again = rollout()  # the iteration's rule sets and deals come from its seed: the same rollout again
    assert np.array_equal(again.action, batch.action) and np.array_equal(again.obs, batch.obs)


def test_a_run_across_a_space_saves_its_space_in_the_checkpoint(tmp_path):
    from train.config import load_config
    from train.ppo import Run

    config = load_config("configs/smoke.yaml", ["rule_space=classic", "rule_sets_per_round=4", "num_tables=16",
                                                "hidden=[8]", "total_decisions=100", "imitation.decisions=200",
                                                "eval_every=0"])
    Run(config, runs_dir=tmp_path, progress=False, log=lambda *_: None).train()
    load_policy(tmp_path / "smoke" / "policy.pt", rules=Rules.preset("long").replace(moon="shooters_choice"))
    with pytest.raises(CheckpointError, match="target_score 77"):
        load_policy(tmp_path / "smoke" / "policy.pt", rules=CLASSIC.replace(target_score=77))


def test_a_family_narrowed_in_some_options_keeps_the_held_out_combinations_it_still_covers():
    narrowed = RuleSpace.from_dict({"family": "classic", "fields": {"moon": ["off"]}})
    assert narrowed.fields["moon"] == ("off",) and narrowed.fields["target_score"] == (100, 50, 150)
    assert narrowed.held_out == ({"queen_waits_for_hearts": True, "moon": "off"},)
    assert narrowed.refusal(CLASSIC) == 'moon "add_to_others" is not among the values it covers: "off"'
    assert narrowed.covers(Rules.preset("quick").replace(moon="off", jack_of_diamonds_bonus=True))
    with pytest.raises(RulesError, match="a narrowed family is"):
        RuleSpace.from_dict({"family": "classic", "fields": {"moon": ["off"]}, "held_out": []})
    with pytest.raises(RulesError, match="unknown rule family"):
        RuleSpace.from_dict({"family": "hearts"})


def test_a_policy_copy_declares_a_narrower_space_and_refuses_what_it_left_out(tmp_path):
    from agents.checkpoint import load_net, save_narrowed

    moon_off = RuleSpace.from_dict({"family": "classic", "fields": {"moon": ["off"]}})
    source = tmp_path / "moon_off.pt"
    save(source, PolicyNet(hidden=[8]), {"rules": Rules.preset("classic").replace(moon="off").to_dict(),
                                         "rule_space": moon_off.to_dict()})
    narrowed = RuleSpace.from_dict({"family": "classic", "fields": {"moon": ["off"], "jack_of_diamonds_bonus": [False]}})
    out = save_narrowed(source, tmp_path / "narrowed.pt", narrowed)
    with_jack = Rules.preset("classic").replace(moon="off", jack_of_diamonds_bonus=True)
    load_policy(source, rules=with_jack)  # the source still plays it
    with pytest.raises(CheckpointError, match="jack_of_diamonds_bonus true is not among the values it covers: false"):
        load_policy(out, rules=with_jack)
    load_policy(out, rules=Rules.preset("quick").replace(moon="off"))
    assert all(torch.equal(a, b) for a, b in zip(load_net(source)[0].state_dict().values(),
                                                 load_net(out)[0].state_dict().values()))
    # A space the policy does not play, or one without its own rules, is refused by the option.
    with pytest.raises(CheckpointError, match='moon "add_to_others" is not among the values it covers: "off"'):
        save_narrowed(source, tmp_path / "wider.pt", FAMILIES["classic"])
    elsewhere = RuleSpace.from_dict({"family": "classic", "fields": {"moon": ["off"], "target_score": [50]}})
    with pytest.raises(CheckpointError, match="target_score 100 is not among the values it covers: 50"):
        save_narrowed(source, tmp_path / "elsewhere.pt", elsewhere)
    assert not (tmp_path / "wider.pt").exists() and not (tmp_path / "elsewhere.pt").exists()
