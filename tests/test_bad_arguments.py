"""Bad arguments to the engine, to ``Rules`` and to the settings readers: each is refused with the
project's own error naming the argument and what is allowed (never a bare NumPy, pydantic or YAML
traceback, and never silently read as something else)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import hearts_env as he
from hearts_app.arguments import load_rules
from hearts_env import Rules, RulesError, engine, passing, play, seat_view
from hearts_env.engine import EngineArgumentError
from hearts_env.observe import observe
from hearts_env.settings_files import apply_overrides, read_mapping

CLASSIC = Rules.preset("classic")
DOCS = __import__("pathlib").Path(__file__).parent.parent / "docs" / "rules.md"


def lowest_legal(state):
    return np.argmax(engine.legal_mask(state), axis=1)


# ---- games= ------------------------------------------------------------------------------------


def test_errors_are_value_errors():
    assert issubclass(EngineArgumentError, ValueError)
    assert issubclass(he.IllegalActionError, EngineArgumentError)


@pytest.mark.parametrize(
    "games, expected",
    [
        ([-1], r"games.*-1.*0\.\.3"),  # NumPy would act on the last game
        ([4], r"games.*4.*0\.\.3"),
        (np.array([0, 9]), r"games.*9.*0\.\.3"),
        ([1.0], r"games.*integer"),
        ([[0, 1]], r"games.*one-dimensional"),
        (np.array([True, False]), r"games.*boolean mask.*4"),
        (np.ones((4, 1), dtype=bool), r"games.*boolean mask.*4"),
        ([0, 0], r"games.*twice"),
        ("0", r"games.*integer"),
    ],
)
@pytest.mark.parametrize("stepper", [engine.step, engine.step_inplace])
def test_bad_games_are_refused_and_change_nothing(stepper, games, expected):
    state = engine.init(CLASSIC, 4, seed=3)
    before = state.copy()
    with pytest.raises(EngineArgumentError, match=expected):
        stepper(state, lowest_legal(state), games=games)
    assert state.equals(before)


def test_good_games_still_select_games():
    state = engine.init(CLASSIC, 4, seed=3)
    actions = lowest_legal(state)
    by_index = engine.step(state, actions, games=[2, 0])
    by_mask = engine.step(state, actions, games=np.array([True, False, True, False]))
    by_numpy_int = engine.step(state, actions, games=np.array([0, 2], dtype=np.uint8))
    assert by_index.equals(by_mask) and by_index.equals(by_numpy_int)
    assert by_index.history_length.tolist() == [1, 0, 1, 0]
    assert engine.step(state, actions, games=1).history_length.tolist() == [0, 1, 0, 0]
    assert engine.step(state, actions, games=[]).equals(state)  # no game acts


@pytest.mark.parametrize("games", [[-1], [4], [0.5]])
def test_state_take_and_assign_check_games(games):
    state = engine.init(CLASSIC, 4, seed=3)
    with pytest.raises(EngineArgumentError, match="games"):
        state.take(games)
    with pytest.raises(EngineArgumentError, match="games"):
        state.assign(games, engine.init(CLASSIC, 1, seed=4))
    assert state.take([3, 3]).batch_size == 2  # a game may be taken twice (search copies a game)


@pytest.mark.parametrize("dtype", [">i8", ">i2", ">u4", "<i4", "=u1"])
def test_games_in_any_byte_order_are_read_by_value(dtype):
    state = engine.init(CLASSIC, 4, seed=3)
    actions, games = lowest_legal(state), np.array([0, 2], dtype=dtype)
    expected = engine.step(state, actions, games=[0, 2])
    assert engine.step(state, actions, games=games).equals(expected)
    inplace = state.copy()
    engine.step_inplace(inplace, actions, games=games)
    assert inplace.equals(expected)
    assert state.take(games).equals(state.take([0, 2]))
    np.testing.assert_array_equal(observe(state, games=games), observe(state, games=[0, 2]))


def test_a_negative_game_in_another_byte_order_is_refused_not_read_as_another_game():
    # As raw bytes, big-endian -256 reads as game 255 of a batch of 300: in range, then game 44 acted.
    state = engine.init(CLASSIC, 300, seed=3)
    before, games = state.copy(), np.array([0, -256], ">i2")
    for call in (lambda: engine.step_inplace(state, lowest_legal(state), games=games),
                 lambda: engine.step(state, lowest_legal(state), games=games), lambda: state.take(games),
                 lambda: engine.first_illegal(state, lowest_legal(state), games),
                 lambda: observe(state, games=games)):
        with pytest.raises(EngineArgumentError, match=r"games: no game -256 in a batch of 300; .*0\.\.299"):
            call()
    assert state.equals(before)


def test_the_rule_modules_take_games_as_the_engine_does():
    # Their kernels do not check bounds: game 300 of 300 read past the batch, -256 read game 44.
    state = engine.init(CLASSIC, 300, seed=3)
    for call in (lambda games: play.legal_plays(state, games), lambda games: passing.pass_offset(state, games),
                 lambda games: play.legal_if_also_held(state, games, [0, 0], [1, 1])):
        with pytest.raises(EngineArgumentError, match=r"games: no game -256 in a batch of 300"):
            call(np.array([0, -256], ">i2"))
        with pytest.raises(EngineArgumentError, match=r"games: no game 300 in a batch of 300"):
            call([0, 300])
    state = engine.init(CLASSIC, 4, seed=3, hand_number=3)  # no pass: every game is playing
    np.testing.assert_array_equal(play.legal_plays(state, np.array([0, 2], ">i8")), state.legal[[0, 2]])
    np.testing.assert_array_equal(play.legal_plays(state, np.array([True, False, True, False])), state.legal[[0, 2]])


@pytest.mark.parametrize("dtype", [">i8", ">u2", "<i2", ">i4"])
def test_actions_in_any_byte_order_are_read_by_value(dtype):
    state = engine.init(CLASSIC, 4, seed=3)
    actions = lowest_legal(state)
    assert engine.step(state, actions.astype(dtype)).equals(engine.step(state, actions))


@pytest.mark.parametrize("call, expected", [
    (lambda s: engine.step(s, [2, 9, [], 50]), r"actions must be numbers in a rectangular array"),
    (lambda s: engine.step_inplace(s, [0, [1], 2, 3]), r"actions must be numbers in a rectangular array"),
    (lambda s: engine.step(s, lowest_legal(s), games=[0, [1]]), r"games must be numbers in a rectangular array"),
    (lambda s: engine.step_inplace(s, lowest_legal(s), games=[[0], 1]), r"games must be numbers in a rectangular"),
    (lambda s: s.take([0, [1]]), r"games must be numbers in a rectangular array"),
    (lambda s: observe(s, games=[0, [1]]), r"games must be numbers in a rectangular array"),
    (lambda s: observe(s, games=[0.7]), r"games must be integer game indices"),  # was read as game 0
    (lambda s: observe(s, seats=[0, [1], 2, 3]), r"seats must be numbers in a rectangular array"),
    (lambda s: seat_view.read([[0.0] * 629, [0.0]]), r"observation must be numbers in a rectangular array"),
])
def test_ragged_actions_and_games_are_refused_by_name(call, expected):
    state = engine.init(CLASSIC, 4, seed=3)
    before = state.copy()
    with pytest.raises(EngineArgumentError, match=expected):
        call(state)
    assert state.equals(before)


def test_torch_tensors_are_read_by_value():
    torch = pytest.importorskip("torch")
    state = engine.init(CLASSIC, 4, seed=3)
    actions = lowest_legal(state)
    expected = engine.step(state, actions, games=[0, 2])
    assert engine.step(state, torch.tensor(actions), games=torch.tensor([0, 2])).equals(expected)
    assert engine.step(state, actions, games=torch.tensor([True, False, True, False])).equals(expected)
    assert state.take(torch.tensor([0, 2], dtype=torch.int16)).equals(state.take([0, 2]))
    np.testing.assert_array_equal(observe(state, games=torch.tensor([2])), observe(state, games=[2]))
    # Floats are refused as floats are, even a tensor that requires grad (torch's own error before).
    before = state.copy()
    with pytest.raises(he.IllegalActionError, match="actions must be integer card ids"):
        engine.step_inplace(state, torch.tensor(actions, dtype=torch.float32, requires_grad=True))
    with pytest.raises(EngineArgumentError, match="games must be integer game indices"):
        engine.step_inplace(state, actions, games=torch.tensor([0.0, 1.0], requires_grad=True))
    assert state.equals(before)


# ---- init ---------------------------------------------------------------------------------------


def test_init_takes_a_preset_name():
    assert engine.init("classic", 1).equals(engine.init(CLASSIC, 1))
    assert engine.init("two_player", 2, seed=5).equals(engine.init(Rules.preset("two_player"), 2, seed=5))
    assert he.from_deal("classic", [list(range(s, 52, 4)) for s in range(4)]).rules == CLASSIC


@pytest.mark.parametrize(
    "args, kwargs, error, expected",
    [
        ((1, 1), {}, RulesError, "rules"),
        (("classik", 1), {}, RulesError, "presets are"),
        ((CLASSIC, 0), {}, EngineArgumentError, "batch_size.*at least 1"),
        ((CLASSIC, 2.0), {}, EngineArgumentError, "batch_size.*integer"),
        ((CLASSIC, "2"), {}, EngineArgumentError, "batch_size.*integer"),
        ((CLASSIC, True), {}, EngineArgumentError, "batch_size.*integer"),
        ((CLASSIC, 1), {"seed": 1.5}, EngineArgumentError, "seed.*integer"),
        ((CLASSIC, 1), {"hand_number": -1}, EngineArgumentError, "hand_number.*0 or more"),
        ((CLASSIC, 1), {"hand_number": 1.5}, EngineArgumentError, "hand_number.*integer"),
        ((CLASSIC, 2), {"hand_number": [0, 1, 2]}, EngineArgumentError, "hand_number.*one per game"),
    ],
)
def test_init_bad_arguments(args, kwargs, error, expected):
    with pytest.raises(error, match=expected):
        engine.init(*args, **kwargs)


# ---- from_deal / from_deals ---------------------------------------------------------------------

HANDS = [list(range(seat, 52, 4)) for seat in range(4)]


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"scores": [1, 2, 3]}, r"scores.*4.*one per seat"),
        ({"scores": [1, 2, 3, 4, 5]}, r"scores.*4.*one per seat"),
        ({"scores": [1.5, 0, 0, 0]}, r"scores.*integer"),
        ({"hand_number": -1}, r"hand_number.*0 or more"),
        ({"hand_number": 0.5}, r"hand_number.*integer"),
        ({"seed": "x"}, r"seed.*integer"),
    ],
)
def test_from_deal_bad_arguments(kwargs, expected):
    with pytest.raises(EngineArgumentError, match=expected):
        he.from_deal(CLASSIC, HANDS, **kwargs)


def test_from_deal_good_arguments():
    state = he.from_deal(CLASSIC, HANDS, hand_number=np.int64(2), scores=np.array([1, 2, 3, 4]), seed=7)
    assert state.scores.tolist() == [[1, 2, 3, 4]] and state.hand_number.tolist() == [2]


def test_from_deals_bad_arguments():
    owners = engine.deal_from_hands(CLASSIC, HANDS)[None, :].repeat(2, axis=0)
    with pytest.raises(EngineArgumentError, match="hand_numbers.*one per game"):
        he.from_deals(CLASSIC, owners, [0, 1, 2])
    with pytest.raises(EngineArgumentError, match="hand_numbers.*0 or more"):
        he.from_deals(CLASSIC, owners, [0, -1])
    with pytest.raises(EngineArgumentError, match=r"scores.*\(2, 4\)"):
        he.from_deals(CLASSIC, owners, [0, 1], scores=[[0, 0, 0, 0]] * 3)
    with pytest.raises(EngineArgumentError, match="seeds.*one per game"):
        he.from_deals(CLASSIC, owners, [0, 1], seeds=[1, 2, 3])


# ---- Rules --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"num_players": 3}, "num_players"),
        ({"num_players": 4.5}, "num_players"),
        ({"target_score": "100"}, "target_score"),
        ({"target_score": 100.5}, "target_score"),
        ({"target_score": float("inf")}, "target_score"),
        ({"moon_points": True}, "moon_points"),
        ({"dead_cards": "0"}, "dead_cards"),
        ({"first_trick_protection": "yes"}, "first_trick_protection"),
        ({"hearts_must_be_broken": 1}, "hearts_must_be_broken"),
        ({"moon": False}, "moon"),
        ({"pass_cycle": ["left", "sideways"]}, "pass_cycle"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_rules_construction_errors_are_rules_errors(fields, field):
    with pytest.raises(RulesError, match=field):
        Rules(**fields)
    with pytest.raises(RulesError, match=field):
        Rules.create(**fields)


def test_rules_keep_whole_numbers_from_numpy():
    assert Rules(target_score=np.int64(75)).target_score == 75
    assert type(Rules(target_score=np.int64(75)).target_score) is int


# ---- documented spellings -----------------------------------------------------------------------


def documented_options() -> list[tuple[str, str, str]]:
    """``(field, preset, spelling)`` for every cell of the options table of docs/rules.md."""
    rows = []
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[0] != "`field`":
            field = cells[0].strip("`")
            for preset, cell in zip(("classic", "two_player"), cells[1:3]):
                rows.append((field, preset, cell.replace("`", "")))
    return rows


def test_docs_table_was_read():
    fields = {field for field, _, _ in documented_options()}
    assert fields == set(Rules.model_fields) - {"name"}


@pytest.mark.parametrize("field, preset, spelling", documented_options())
def test_every_documented_value_is_settable_by_its_spelling(tmp_path, field, preset, spelling):
    """The table's value for a preset, written as the table writes it, gives that preset's value."""
    expected = Rules.preset(preset)
    assert load_rules(preset, [f"{field}={spelling}"]) == expected
    path = tmp_path / "rules.yaml"
    path.write_text(f"preset: {preset}\n{field}: {spelling}\n", encoding="utf-8")
    assert load_rules(str(path)) == expected


@pytest.mark.parametrize("moon", ["add_to_others", "subtract_from_self", "shooters_choice", "off"])
def test_every_moon_value_is_settable(tmp_path, moon):
    assert moon in DOCS.read_text(encoding="utf-8")
    assert load_rules("classic", [f"moon={moon}"]).moon == moon
    path = tmp_path / "rules.yaml"
    path.write_text(f"preset: classic\nmoon: {moon}\n", encoding="utf-8")
    assert load_rules(str(path)).moon == moon


def test_true_and_false_stay_booleans_and_yes_no_on_off_stay_text():
    items = ["a=true", "b=False", "c=off", "d=yes", "e=null", "f=3"]
    assert apply_overrides({}, items, RulesError, "x=1") == {
        "a": True, "b": False, "c": "off", "d": "yes", "e": None, "f": 3}
    with pytest.raises(RulesError, match="first_trick_protection"):
        load_rules("classic", ["first_trick_protection=yes"])


def test_numbers_in_exponent_notation_are_floats_as_in_yaml_1_2(tmp_path):
    # PyYAML (YAML 1.1) reads 1e6 and 1e-4 as strings: without a dot and a signed exponent.
    items = ["a=1e6", "b=1e-4", "c=1.0e6", "d=-2.5E-3", "e=.5e1", "f=1.e2", "g=1_000", "h=100", "i=1e", "j=e5",
             "k='1e6'", "l=1.5"]
    assert apply_overrides({}, items, RulesError, "x=1") == {
        "a": 1e6, "b": 1e-4, "c": 1e6, "d": -2.5e-3, "e": 5.0, "f": 100.0, "g": 1000, "h": 100, "i": "1e",
        "j": "e5", "k": "1e6", "l": 1.5}
    assert type(apply_overrides({}, ["a=1e6"], RulesError, "x=1")["a"]) is float
    path = tmp_path / "settings.json"  # JSON files are read by the same loader: 1e2 is a JSON number
    path.write_text('{"a": 1e2, "b": [1E-4, 2e+3]}')
    assert read_mapping(path, RulesError, "rules") == {"a": 100.0, "b": [1e-4, 2000.0]}


def test_bad_override_value_is_one_line_error():
    with pytest.raises(RulesError, match="opening_lead") as err:
        load_rules("classic", ["opening_lead=[2C"])
    assert "\n" not in str(err.value)


# ---- settings files -----------------------------------------------------------------------------


class MyError(Exception):
    pass


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"\x00\x01\x02\xff\xfe binary", "not a text file"),
        ("moon: caf\u00e9\n".encode("latin-1"), "not UTF-8"),
        (b"a: b: c\n", "not valid YAML"),
        (b"moon: [off\n", "not valid YAML"),
        (b"\x07bell: 1\n", "not valid YAML"),
    ],
)
def test_unreadable_settings_files_give_one_line(tmp_path, content, expected):
    path = tmp_path / "settings.yaml"
    path.write_bytes(content)
    with pytest.raises(MyError, match=expected) as err:
        read_mapping(path, MyError, "rules")
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    with pytest.raises(RulesError, match=re.escape(str(path))):
        load_rules(str(path))


def test_training_config_reader_names_a_binary_file(tmp_path):
    from train.config import ConfigError, load_config

    path = tmp_path / "config.yaml"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(ConfigError, match="not a text file"):
        load_config(path)


def test_a_folder_is_not_a_settings_file(tmp_path):
    with pytest.raises(MyError, match="not a file"):
        read_mapping(tmp_path, MyError, "rules")


# ---- actions, observations and bots' inputs ---------------------------------------------------


def test_a_wrong_shape_is_named_before_a_wrong_type():
    state = engine.init(CLASSIC, 2, 0)
    with pytest.raises(engine.IllegalActionError, match=r"expected one action per game, shape \(2,\)"):
        engine.step(state, np.zeros(3, dtype=np.float64))
    with pytest.raises(engine.IllegalActionError, match="integer card ids"):
        engine.step(state, np.zeros(2, dtype=np.float64))


def test_observe_refuses_a_read_only_out():
    from hearts_env.observe import OBS_DIM, observe

    state = engine.init(CLASSIC, 2, 0)
    out = np.zeros((2, OBS_DIM), dtype=np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        observe(state, out=out)


@pytest.mark.parametrize("action", [2**63, np.uint64(2**64 - 1), "legal in a list", "legal in a 2-d array", 1.0, "2C"])
def test_aec_step_refuses_what_is_not_one_card_id(action):
    from hearts_env.aec import raw_env

    env = raw_env()
    env.reset(seed=1)
    card = int(np.argmax(engine.legal_mask(env.state)[0]))
    action = {"legal in a list": np.array([card]), "legal in a 2-d array": np.array([[card]])}.get(action, action)
    before = env.state.copy()
    with pytest.raises(engine.IllegalActionError):
        env.step(action)
    assert env.state.equals(before)


def test_bot_tables_refuse_inputs_of_the_wrong_shape():
    from agents.heuristic.table import Table
    from hearts_env.observe import OBS_DIM

    with pytest.raises(ValueError, match=f"{OBS_DIM} floats"):
        Table(np.zeros((2, 100), np.float32), np.zeros((2, 52), bool))
    with pytest.raises(ValueError, match=f"{OBS_DIM} floats"):
        Table(np.zeros(OBS_DIM, np.float32), np.zeros(52, bool))
    with pytest.raises(ValueError, match="action_mask must have shape"):
        Table(np.zeros((2, OBS_DIM), np.float32), np.zeros((2, 10), bool))
