"""Misuse of the Python API beyond the engine's own arguments (``test_bad_arguments.py``): the
observation's seats, the envs' keywords and reset options, the play loop, agents asked without a
legal card, rules changed from a preset, card text. Each is refused by name and changes nothing,
instead of reading memory of another game, quietly dropping a keyword or acting on a non-card."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import numpy as np
import pytest

import agents
import hearts_env as he
from hearts_env import cards, engine, loop
from hearts_env.engine import EngineArgumentError
from hearts_env.observe import observe

CLASSIC = he.Rules.preset("classic")
SHIPPED_ONNX = "onnx:" + str(Path(__file__).resolve().parents[1] / "agents/policies/ppo_classic/policy.onnx")


# ---- the observation's seats ------------------------------------------------------------------


@pytest.mark.parametrize("seats, expected", [
    (np.array([2, 3]), r"seats must be 0\.\.1"),  # beyond the two-player game's seats: another game's hand
    (np.array([-1, 0]), r"seats must be 0\.\.1"),
    (np.array([1.9, 0.0]), r"integer seats"),
    (np.array([0, 1, 0]), r"one per observed game \(2\)"),
])
def test_observe_refuses_seats_outside_the_game(seats, expected):
    state = he.init("two_player", 2, seed=5)
    with pytest.raises(EngineArgumentError, match=expected):
        observe(state, seats)


def test_observe_takes_one_seat_for_all_games_or_one_each():
    state = he.init(CLASSIC, 3, seed=5)
    np.testing.assert_array_equal(observe(state, np.array(2)), observe(state, np.array([2, 2, 2])))


# ---- envs: keywords, reset options, stepping before reset ----------------------------------------


def test_make_vec_refuses_a_misspelled_keyword():
    with pytest.raises(TypeError, match="oponents"):
        gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=2, oponents="hard")


@pytest.mark.parametrize("num_envs", [2.5, "2", True, 0])
def test_vector_env_refuses_a_num_envs_that_is_not_a_whole_number(num_envs):
    with pytest.raises(ValueError, match="num_envs must be a whole number"):
        gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=num_envs)


@pytest.mark.parametrize("seat", [1.5, "1", True, 4])
def test_seat_env_refuses_a_seat_that_is_not_one(seat):
    with pytest.raises(ValueError, match=r"seat must be a whole number 0\.\.3"):
        gymnasium.make("HeartsLab/Hearts-v1", seat=seat)


def test_seat_env_refuses_opponents_at_seats_that_are_not_theirs():
    with pytest.raises(ValueError, match=r"seats \[0, 9\].*learner at seat 0"):
        gymnasium.make("HeartsLab/Hearts-v1", opponents={0: "hard", 1: "easy", 2: "easy", 3: "easy", 9: "hard"})


@pytest.mark.parametrize("penalty", [float("nan"), "x", None])
def test_seat_env_refuses_an_illegal_penalty_that_is_no_number(penalty):
    with pytest.raises(ValueError, match="illegal_penalty must be a finite number"):
        gymnasium.make("HeartsLab/Hearts-v1", illegal_penalty=penalty)


@pytest.mark.parametrize("options, expected", [
    ({"hand_number": 1.7}, r"hand_number'\] must be a whole number 0 or more"),
    ({"hand_number": "2"}, r"hand_number'\] must be a whole number 0 or more"),
    ({"hand_number": True}, r"hand_number'\] must be a whole number 0 or more"),
    ({"hand_number": -1}, r"hand_number'\] must be a whole number 0 or more"),
    ({"scores": [1.9, 0, 0, 0]}, r"scores'\] must be 4 whole numbers"),
    ({"scores": ["9", 0, 0, 0]}, r"scores'\] must be 4 whole numbers"),
    ({"scores": [1, 0, 0]}, r"scores'\] must be 4 whole numbers"),
])
def test_bad_reset_options_are_refused_and_the_aec_env_is_unchanged(options, expected):
    env = he.raw_env()
    env.reset(seed=1)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    before, selected = env.state.copy(), env.agent_selection
    with pytest.raises(ValueError, match=expected):
        env.reset(seed=2, options=options)
    assert env.state.equals(before) and env.agent_selection == selected
    seat_env = gymnasium.make("HeartsLab/Hearts-v1")
    with pytest.raises(ValueError, match=expected):
        seat_env.reset(seed=2, options=options)


def test_good_reset_options_still_apply():
    env = he.raw_env()
    env.reset(seed=1, options={"hand_number": np.int64(2), "scores": np.array([5, 0, 0, 7])})
    assert env.state.hand_number[0] == 2 and env.state.scores[0].tolist() == [5, 0, 0, 7]
    seat_env = gymnasium.make("HeartsLab/Hearts-v1")
    _, info = seat_env.reset(seed=1, options={"hand_number": 1, "scores": [3, 0, 0, 0]})
    assert info["hand_number"] == 1 and info["scores"].tolist() == [3, 0, 0, 0]


def test_envs_before_reset_say_so():
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        he.raw_env().step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        he.raw_env().observe("player_0")
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        gymnasium.make("HeartsLab/Hearts-v1", render_mode="ansi").unwrapped.render()
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        gymnasium.make("HeartsLab/Hearts-v1").unwrapped.step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=2).step(np.zeros(2, dtype=np.int64))


# ---- engine entry points ---------------------------------------------------------------------


def test_single_hand_is_a_flag():
    with pytest.raises(EngineArgumentError, match="single_hand must be True or False"):
        he.init(CLASSIC, 2, single_hand="no")


def test_a_hand_number_beyond_int64_is_refused_not_wrapped():
    with pytest.raises(EngineArgumentError, match=r"below 2\*\*63"):
        he.init(CLASSIC, 2, hand_number=2**63)


def test_from_deals_checks_seeds_and_owners_as_init_does():
    owners = np.repeat(np.arange(4), 13)[None]
    with pytest.raises(EngineArgumentError, match="seeds must be integers"):
        he.from_deals(CLASSIC, owners, [0], seeds=[1.9])
    with pytest.raises(EngineArgumentError, match="owners must be whole seat numbers"):
        he.from_deals(CLASSIC, owners + 0.7, [0])
    # A negative seed wraps modulo 2**64, as init's does.
    assert he.from_deals(CLASSIC, owners, [0], seeds=[-1]).seed.tolist() == [2**64 - 1]


# ---- the play loop ---------------------------------------------------------------------------


@pytest.mark.parametrize("games, expected", [
    ([-1], r"games.*-1"),  # NumPy would play the last game
    ([5], r"games.*5"),
    ([0, 0], "at most once"),  # game 0 played twice, one copy written back
])
def test_play_refuses_games_outside_the_batch_or_twice(games, expected):
    state = he.init(CLASSIC, 3, seed=1)
    before = state.copy()
    with pytest.raises(ValueError, match=expected):
        loop.play(state, [agents.make("random", seed=0)], [0, 0, 0, 0], until="hand", games=games)
    assert state.equals(before)


@pytest.mark.parametrize("seating", [[0.9] * 4, [0, 0, 0], [[0, 1, 0, 1]] * 2])
def test_play_refuses_seating_that_is_not_one_agent_index_per_seat(seating):
    state = he.init(CLASSIC, 1, seed=1)
    with pytest.raises(ValueError, match="seating: agent indices"):
        loop.play(state, [agents.make("random", seed=0), agents.make("hard")], seating, until="hand")


# ---- agents asked without a legal card, or with mismatched rows ---------------------------------


@pytest.mark.parametrize("spec", ["random", "easy", "hard", "ppo-classic"])
def test_agents_refuse_a_mask_row_without_a_legal_card(spec):
    state = he.init(CLASSIC, 2, seed=1)
    observation, mask = observe(state), engine.legal_mask(state).copy()
    mask[0] = False
    agent = agents.make(spec, seed=0)
    with pytest.raises(ValueError, match="row 0 has no legal card"):
        agent.act(observation, mask)
    with pytest.raises(ValueError, match="one row per observation"):
        agent.act(observation[:1], engine.legal_mask(state))


@pytest.mark.parametrize("spec", ["random", "easy", "hard", "ppo-classic", SHIPPED_ONNX])
def test_agents_read_torch_tensors_and_other_byte_orders_by_value(spec):
    torch = pytest.importorskip("torch")
    state = he.init(CLASSIC, 3, seed=1)
    observation, mask = observe(state), engine.legal_mask(state)
    expected = agents.make(spec, seed=0).act(observation, mask)
    given = torch.tensor(observation, requires_grad=True), torch.tensor(mask)  # torch's RuntimeError before
    np.testing.assert_array_equal(agents.make(spec, seed=0).act(*given), expected)
    swapped = observation.astype(">f4"), mask.astype(">i2")
    np.testing.assert_array_equal(agents.make(spec, seed=0).act(*swapped), expected)


@pytest.mark.parametrize("spec", ["random", "easy", "hard", "ppo-classic", SHIPPED_ONNX])
def test_agents_refuse_ragged_or_non_numeric_inputs_by_name(spec):
    state = he.init(CLASSIC, 2, seed=1)
    observation, mask = observe(state), engine.legal_mask(state)
    agent = agents.make(spec, seed=0)
    with pytest.raises(ValueError, match="observation must be numbers in a rectangular array"):
        agent.act([observation[0].tolist(), [0.0]], mask)
    with pytest.raises(ValueError, match="action_mask must be numbers in a rectangular array"):
        agent.act(observation, [mask[0].tolist(), [True]])
    with pytest.raises(ValueError, match="observation must be numbers .* got dtype <U"):
        agent.act(observation.astype(str), mask)


def test_the_play_loop_reads_an_agents_torch_actions_by_value_and_names_ragged_ones():
    torch = pytest.importorskip("torch")

    class Returns:
        name = "returns"

        def __init__(self, convert):
            self.convert = convert

        def act(self, observation, action_mask):
            return self.convert(np.argmax(action_mask, axis=1))

    played = [he.init(CLASSIC, 2, seed=1) for _ in range(3)]
    for state, convert in zip(played, (np.asarray, torch.tensor, lambda a: a.astype(">i2"))):
        loop.play(state, [Returns(convert)], [0, 0, 0, 0], until="hand")
    assert played[0].equals(played[1]) and played[0].equals(played[2])
    state = he.init(CLASSIC, 2, seed=1)
    before = state.copy()
    with pytest.raises(loop.AgentError, match="'returns' returned actions must be numbers in a rectangular array"):
        loop.play(state, [Returns(lambda a: [0, [1]])], [0, 0, 0, 0], until="hand")
    assert state.equals(before)


def test_envs_read_torch_actions_by_value_and_refuse_ragged_ones_by_name():
    torch = pytest.importorskip("torch")
    env = he.raw_env()
    env.reset(seed=1)
    card = int(np.argmax(env.observe(env.agent_selection)["action_mask"]))
    with pytest.raises(he.IllegalActionError, match="action must be numbers in a rectangular array"):
        env.step([0, [1]])
    env.step(torch.tensor(card))
    assert env.state.history_length.tolist() == [1]
    single = gymnasium.make("HeartsLab/Hearts-v1").unwrapped
    _, info = single.reset(seed=1)
    with pytest.raises(he.IllegalActionError, match="action must be numbers in a rectangular array"):
        single.step([[0], 1])
    single.step(torch.tensor(int(np.argmax(info["action_mask"])), dtype=torch.int32))
    vec = gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=2)
    _, info = vec.reset(seed=1)
    with pytest.raises(he.IllegalActionError, match="actions must be numbers in a rectangular array"):
        vec.step([0, [1]])
    vec.step(torch.tensor(np.argmax(info["action_mask"], axis=1), dtype=torch.float32, requires_grad=True).long())


# ---- rules changed from a preset -------------------------------------------------------------


def test_a_changed_preset_is_no_longer_named_as_the_preset():
    off = CLASSIC.replace(moon="off")
    assert off.name == "custom" and CLASSIC.replace(target_score=100).name == "classic"
    assert CLASSIC.replace(moon="off", name="no moon").name == "no moon"
    assert he.Rules.from_dict({"preset": "classic", "moon": "off"}).name == "custom"
    assert "ppo-classic" not in agents.builtin(off) and "ppo-classic" in agents.builtin(CLASSIC)
    with pytest.raises(agents.AgentSpecError, match=r"^ppo-classic was trained for the 'classic' rules and cannot play the "
                                                     r"'custom' rules: moon \"off\" is not among the values it covers: "
                                                     r"\"add_to_others\"$"):
        agents.make("ppo-classic", rules=off)


def test_lists_of_options_must_have_an_order():
    with pytest.raises(he.RulesError, match="pass_cycle: must be in order"):
        CLASSIC.replace(pass_cycle={"left", "right"})


# ---- card text -------------------------------------------------------------------------------


@pytest.mark.parametrize("card", [-1, 52, "5", 5.0, True])
def test_card_texts_refuse_what_is_not_a_card_id(card):
    for text in (cards.card_text, cards.card_symbol_text):
        with pytest.raises(ValueError, match="card id"):
            text(card)
    with pytest.raises(ValueError, match="card id"):
        cards.format_cards([card], symbols=True)


def test_parse_card_refuses_bools_and_takes_numpy_ids():
    with pytest.raises(ValueError, match="card id"):
        cards.parse_card(True)
    assert cards.parse_card(np.int32(3)) == 3 and cards.card_symbol_text(np.uint8(8)) == "10♣"


# ---- State -----------------------------------------------------------------------------------


def test_state_assign_and_concatenate_refuse_mismatched_games():
    state, other = he.init(CLASSIC, 3, seed=1), he.init(CLASSIC, 2, seed=2)
    before = state.copy()
    with pytest.raises(EngineArgumentError, match="1 games selected for the 2 games given"):
        state.assign([0], other)
    with pytest.raises(EngineArgumentError, match="1 games selected for the 2 games given"):
        state.assign(np.array([True, False, False]), other)
    assert state.equals(before)
    state.assign([2, 0], other)
    assert state.take([2, 0]).equals(other)
    with pytest.raises(EngineArgumentError, match="at least one state"):
        he.State.concatenate([])


@pytest.mark.parametrize("option, value", [("target_score", 10**30), ("moon_points", 2**63),
                                           ("jack_of_diamonds_points", -2**70)])
def test_numbers_in_rules_are_bounded(option, value):
    with pytest.raises(he.RulesError, match=rf"{option}: must be between"):
        CLASSIC.replace(**{option: value})


@pytest.mark.parametrize("call", [lambda: he.step("x", [0]), lambda: he.legal_mask(None),
                                  lambda: he.step_inplace({}, [0])])
def test_engine_calls_name_a_state_that_is_not_one(call):
    with pytest.raises(EngineArgumentError, match="expected a hearts_env State"):
        call()


def test_a_uint64_action_beyond_int64_is_named_as_given():
    state = he.init(CLASSIC, 3, seed=1)
    with pytest.raises(he.IllegalActionError, match=f"action {2**64 - 1} "):
        he.step(state, np.array([2**64 - 1, 0, 0], dtype=np.uint64))
    env = he.raw_env()
    env.reset(seed=1)
    with pytest.raises(he.IllegalActionError, match=f"action {2**64 - 1} "):
        env.step(np.uint64(2**64 - 1))


def test_from_deals_needs_a_game():
    with pytest.raises(EngineArgumentError, match="at least one game's deal"):
        he.from_deals(CLASSIC, np.zeros((0, 52), dtype=np.int64), [])


def test_the_vector_env_takes_reset_options_per_game():
    vec = gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=3)
    _, info = vec.reset(seed=0, options={"hand_number": np.array([0, 1, 2]), "scores": np.array([[1, 2, 3, 4]] * 3)})
    state = vec.unwrapped.tables.state
    assert state.hand_number.tolist() == [0, 1, 2] and state.scores.tolist() == [[1, 2, 3, 4]] * 3
    with pytest.raises(ValueError, match=r"or one per game \(3\)"):
        vec.reset(seed=0, options={"hand_number": np.array([0, 1])})


def test_a_refused_gymnasium_reset_changes_nothing():
    def deal_after(refused: bool) -> list[int]:
        env = gymnasium.make("HeartsLab/Hearts-v1").unwrapped
        env.reset(seed=1)
        if refused:
            with pytest.raises(ValueError):
                env.reset(seed=2, options={"hand_number": -1})
        env.reset()
        return env.tables.state.hands[0].tolist()

    assert deal_after(refused=True) == deal_after(refused=False)
