import pytest

from hearts_env import Rules, RulesError
from hearts_app.arguments import load_rules


def test_presets():
    assert Rules.preset("classic").target_score == 100
    assert Rules.preset("quick").target_score == 50
    assert Rules.preset("long").target_score == 150
    two = Rules.preset("two_player")
    assert (two.num_players, two.deck_size, two.dead_cards, two.hand_size) == (2, 28, 2, 13)
    assert two.trump_suit == "H" and two.moon_points == 20
    assert two.opening_lead == ("2C", "4C", "6C")


def test_classic_defaults_follow_the_rule_texts():
    r = Rules.preset("classic")
    assert r.pass_cycle == ("left", "right", "across", "none") and r.pass_count == 3
    assert r.first_trick_protection and r.hearts_must_be_broken
    assert not r.queen_breaks_hearts and not r.queen_waits_for_hearts
    assert r.moon == "add_to_others" and r.moon_points == 26
    assert not r.jack_of_diamonds_bonus and r.trump_suit is None


def test_rules_are_frozen_and_hashable():
    r = Rules.preset("classic")
    with pytest.raises(Exception):
        r.target_score = 5
    assert hash(r) == hash(Rules.preset("classic").replace())


def test_round_trip_dict():
    for name in ("classic", "quick", "long", "two_player"):
        r = Rules.preset(name)
        assert Rules.from_dict(r.to_dict()) == r


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"moon": "sometimes"}, "moon"),
        ({"num_players": 3}, "num_players"),
        ({"target_score": 0}, "target_score"),
        ({"dead_cards": 1}, "dead_cards"),
        ({"pass_cycle": []}, "pass_cycle"),
        ({"pass_cycle": ["left", "sideways"]}, "pass_cycle"),
        ({"pass_count": 14}, "pass_count"),
        ({"opening_lead": ["3D"], "deck": "short28", "num_players": 2, "dead_cards": 2,
          "pass_cycle": ["none"]}, "opening_lead"),
        ({"trump_suit": "X"}, "trump_suit"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_rules_name_the_field(changes, field):
    with pytest.raises(RulesError, match=field):
        Rules.preset("classic").replace(**changes)


def test_across_needs_four_players():
    with pytest.raises(RulesError, match="across"):
        Rules.preset("two_player").replace(pass_cycle=["left", "across"])


def test_two_player_opening_needs_fallbacks_for_dead_cards():
    with pytest.raises(RulesError, match="opening_lead"):
        Rules.preset("two_player").replace(opening_lead=["2C", "4C"])


def test_unknown_preset():
    with pytest.raises(RulesError, match="presets are"):
        Rules.preset("speedy")


def test_load_rules_file_and_overrides(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("preset: classic\njack_of_diamonds_bonus: true\n")
    r = load_rules(str(path), ["moon=subtract_from_self", "target_score=75"])
    assert r.jack_of_diamonds_bonus and r.moon == "subtract_from_self" and r.target_score == 75


def test_load_rules_bad_input(tmp_path):
    with pytest.raises(RulesError, match="neither a preset"):
        load_rules("nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(RulesError, match="mapping"):
        load_rules(str(bad))
    with pytest.raises(RulesError, match="KEY=VALUE"):
        load_rules("classic", ["moon"])
    with pytest.raises(RulesError, match="moon_pointz"):
        load_rules("classic", ["moon_pointz=3"])


def test_shipped_rules_configs_load():
    import pathlib
    paths = sorted(pathlib.Path(__file__).parent.parent.joinpath("configs", "rules").glob("*.yaml"))
    assert paths, "no configs/rules/*.yaml found"
    for path in paths:
        load_rules(str(path))


def test_same_game_ignores_only_the_name():
    classic = Rules.preset("classic")
    renamed = classic.replace(name="my table")
    assert renamed != classic and renamed.same_game(classic) and classic.same_game(renamed)
    assert classic.same_game("classic") and classic.same_game({"preset": "classic", "name": "x"})
    assert classic.differences(renamed) == "same options"
    other = classic.replace(name="classic", moon="subtract_from_self")
    assert not other.same_game(classic) and not classic.same_game(other)
    assert classic.differences(other) == "moon: 'add_to_others' vs 'subtract_from_self'"
    assert not classic.same_game("quick")  # target_score differs


@pytest.mark.parametrize("value", ["xy", [1, 2], [("target_score", 50)], 5, None, 2.5],
                         ids=["text", "list", "pairs", "number", "null", "float"])
def test_from_dict_refuses_what_is_not_a_mapping(value):
    with pytest.raises(RulesError, match="mapping"):
        Rules.from_dict(value)


@pytest.mark.parametrize("data", [{"preset": ["classic"]}, {"preset": 5}, {"preset": {"name": "x"}}, {"preset": True}],
                         ids=["list", "number", "mapping", "bool"])
def test_a_preset_that_is_not_a_name_is_a_rules_error(data):
    with pytest.raises(RulesError, match="preset"):
        Rules.from_dict(data)
    with pytest.raises(RulesError, match="preset"):
        Rules.resolve(data)


def test_option_names_must_be_text():
    with pytest.raises(RulesError, match="option"):
        Rules.from_dict({1: 2})


def test_whole_number_floats_from_settings_are_whole_numbers(tmp_path):
    for value in ("1e2", "1.0e2", "100.0", "1E+2"):
        rules = load_rules("classic", [f"target_score={value}"])
        assert rules.target_score == 100 and type(rules.target_score) is int
    path = tmp_path / "r.yaml"
    path.write_text("preset: classic\ntarget_score: 1.5e2\nmoon_points: 2.6e1\n")
    assert (load_rules(str(path)).target_score, load_rules(str(path)).moon_points) == (150, 26)
    assert Rules(num_players=2.0, deck="short28", dead_cards=2.0, pass_cycle=["none"],
                 opening_lead=["2C", "4C", "6C"]).num_players == 2


@pytest.mark.parametrize("override", ["target_score=100.5", "target_score=1.005e2", "target_score='100'",
                                      "target_score=true", "target_score=.inf", "target_score=.nan",
                                      "pass_count=2.5"])
def test_other_numbers_stay_refused_naming_the_option(override):
    with pytest.raises(RulesError, match=override.split("=")[0]):
        load_rules("classic", [override])
