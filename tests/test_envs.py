"""The PettingZoo AEC env and the Gymnasium envs: API conformance, masks, rewards, options."""

import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import hearts_env
from hearts_env import aec, cards
from hearts_env.gym import HeartsSeatEnv, HeartsVectorEnv
from hearts_env.observe import OBS_DIM
from tests.scripted import owner_of

MOON_HAND = "AC KC QC JC AD KD QD JD AS KS QS JS AH"


def moon_deal():
    owner = owner_of(hearts_env.Rules.preset("classic"), {0: MOON_HAND})
    return [[cards.card_text(c) for c in np.flatnonzero(owner == p)] for p in range(4)]


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ---- PettingZoo -----------------------------------------------------------------------------

@pytest.mark.parametrize("rules", ["classic", "two_player"])
@pytest.mark.parametrize("episode", ["hand", "game"])
def test_pettingzoo_api(rules, episode):
    api_test(aec.env(rules=rules, episode=episode), num_cycles=200)
    api_test(aec.raw_env(rules=rules, episode=episode), num_cycles=200)


@pytest.mark.parametrize("rules", ["classic", "two_player"])
def test_pettingzoo_seed_render_parallel(rules):
    seed_test(lambda **kw: aec.env(rules=rules, **kw), num_cycles=200)
    render_test(lambda render_mode=None: aec.env(rules=rules, render_mode=render_mode))
    parallel_api_test(turn_based_aec_to_parallel(aec.env(rules=rules)), num_cycles=200)


def test_pettingzoo_registry_and_lazy_exports():
    env = pettingzoo.make("aec", "HeartsLab/hearts-v1")
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1", "player_2", "player_3"]
    assert hearts_env.env is aec.env and hearts_env.raw_env is aec.raw_env
    two = pettingzoo.make("aec", "HeartsLab/hearts_two_player-v1")
    two.reset(seed=0)
    assert two.agents == ["player_0", "player_1"]


def play_out(env, choose=lambda mask: int(np.flatnonzero(mask)[0])):
    """Play every agent's lowest legal card until the episode ends; returns cumulative rewards."""
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        env.step(None if term or trunc else choose(obs["action_mask"]))
    return total


def test_masks_only_for_the_agent_to_act():
    env = aec.raw_env()
    env.reset(seed=3)
    for agent in env.possible_agents:
        mask = env.observe(agent)["action_mask"]
        assert mask.dtype == np.int8
        if agent == env.agent_selection:
            assert mask.sum() > 0
            np.testing.assert_array_equal(mask, hearts_env.legal_mask(env.state)[0])
        else:
            assert mask.sum() == 0
    assert env.observe("player_0")["observation"].shape == (OBS_DIM,)


def test_reset_options_deal_hand_number_scores_and_moon_rewards():
    env = aec.raw_env()
    env.reset(seed=0, options={"deal": moon_deal(), "hand_number": 3, "scores": [1, 2, 3, 4]})
    assert env.state.scores[0].tolist() == [1, 2, 3, 4]
    total = play_out(env)
    assert total == {"player_0": 0.0, "player_1": -26.0, "player_2": -26.0, "player_3": -26.0}


def test_hand_rewards_are_minus_points():
    env = aec.raw_env()
    env.reset(seed=11)
    total = play_out(env)
    points = env.state.last_hand_points[0]
    assert [total[f"player_{i}"] for i in range(4)] == [-float(x) for x in points]
    assert sum(total.values()) == -26


def test_game_episode_runs_to_the_target():
    env = aec.raw_env(episode="game")
    env.reset(seed=5)
    total = play_out(env)
    assert env.state.done[0] and env.state.winner[0] >= 0
    np.testing.assert_array_equal([total[a] for a in env.possible_agents], -env.state.scores[0])


def test_hand_episode_pass_direction_comes_from_the_seed():
    directions = set()
    env = aec.raw_env()
    for seed in range(12):
        env.reset(seed=seed)
        directions.add(env.rules.pass_direction(int(env.state.hand_number[0])))
    assert directions == {"left", "right", "across", "none"}


def test_raw_env_refuses_illegal_action_unchanged():
    env = aec.raw_env()
    env.reset(seed=0, options={"hand_number": 3})
    before = env.state.copy()
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(hearts_env.IllegalActionError, match="legal:"):
        env.step(illegal)
    assert env.state.equals(before)


def test_wrapped_env_terminates_on_illegal_action():
    env = aec.env()
    env.reset(seed=0, options={"hand_number": 3})
    mask = env.observe(env.agent_selection)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())


def test_unknown_reset_option_is_refused():
    env = aec.raw_env()
    with pytest.raises(ValueError, match="deals"):
        env.reset(seed=0, options={"deals": []})


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="episode"):
        aec.raw_env(episode="season")
    with pytest.raises(hearts_env.RulesError, match="presets are"):
        aec.raw_env(rules="speedy")
    with pytest.raises(ValueError, match="render_mode"):
        aec.raw_env(render_mode="rgb_array")


# ---- Gymnasium single seat --------------------------------------------------------------------

def test_gymnasium_check_env():
    check_env(HeartsSeatEnv(illegal_action="terminate"), skip_render_check=False)
    check_env(HeartsSeatEnv(rules="two_player", illegal_action="terminate"))


def test_gymnasium_registry():
    env = gymnasium.make("HeartsLab/Hearts-v1")
    obs, info = env.reset(seed=0)
    assert obs.shape == (OBS_DIM,) and info["action_mask"].sum() > 0
    env = gymnasium.make("HeartsLab/HeartsTwoPlayer-v1", opponents=["random"])
    env.reset(seed=0)


def run_seat_episode(env, seed, **reset):
    obs, info = env.reset(seed=seed, **reset)
    total, steps = 0.0, 0
    while True:
        np.testing.assert_array_equal(env.action_masks(), info["action_mask"].astype(bool))
        action = int(np.flatnonzero(info["action_mask"])[-1])
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps += 1
        if terminated or truncated:
            return total, steps


def test_seat_env_plays_a_hand_and_rewards_minus_points():
    for seat in range(4):
        env = HeartsSeatEnv(seat=seat, opponents="random")
        total, steps = run_seat_episode(env, seed=seat)
        assert total == -env.tables.state.last_hand_points[0, seat]
        assert 13 <= steps <= 16


def test_seat_env_moon_via_reset_options():
    env = HeartsSeatEnv(seat=1, opponents="random")
    total, _ = run_seat_episode(env, 0, options={"deal": moon_deal(), "hand_number": 3})
    assert total == -26


def test_seat_env_same_seed_same_episode():
    a = run_seat_episode(HeartsSeatEnv(), seed=9)
    b = run_seat_episode(HeartsSeatEnv(), seed=9)
    assert a == b


def test_seat_env_opponents_by_callable_and_by_seat():
    calls = []

    def lowest(observation, action_mask):
        calls.append(len(observation))
        return action_mask.argmax(axis=1)

    env = HeartsSeatEnv(opponents={1: lowest, 2: "random", 3: lowest})
    run_seat_episode(env, seed=1)
    assert calls
    with pytest.raises(ValueError, match="seats"):
        HeartsSeatEnv(opponents={1: "random"})
    with pytest.raises(ValueError, match="unknown agent spec"):
        HeartsSeatEnv(opponents="grandmaster")


def test_seat_env_illegal_actions():
    env = HeartsSeatEnv(illegal_action="raise")
    obs, info = env.reset(seed=0, options={"hand_number": 3})
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    before = env.tables.state.copy()
    with pytest.raises(hearts_env.IllegalActionError, match="legal:"):
        env.step(illegal)
    assert env.tables.state.equals(before)
    env = HeartsSeatEnv(illegal_action="terminate", illegal_penalty=5)
    obs, info = env.reset(seed=0, options={"hand_number": 3})
    _, reward, terminated, _, info = env.step(illegal)
    assert reward == -5 and terminated and info["illegal_action"]


# ---- Gymnasium vector -------------------------------------------------------------------------

def test_vector_env_same_step_autoreset_and_masks():
    env = HeartsVectorEnv(num_envs=32, opponents="random")
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=0)
    assert obs.shape == (32, OBS_DIM) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    episodes, returns = 0, []
    ret = np.zeros(32)
    for _ in range(120):
        mask = info["action_mask"]
        assert (mask.sum(axis=1) > 0).all()  # every game waits for the learner
        actions = np.where(mask, rng.random(mask.shape), -1).argmax(axis=1)
        obs, reward, terminated, truncated, info = env.step(actions)
        ret += reward
        if terminated.any():
            assert info["_final_obs"].tolist() == terminated.tolist()
            assert info["final_obs"].shape == (32, OBS_DIM)
            returns.extend(ret[terminated])
            ret[terminated] = 0
            episodes += int(terminated.sum())
    assert episodes >= 100
    # A random seat averages a quarter of 26 points, up to moons.
    assert -9 < np.mean(returns) < -4


def test_vector_env_refuses_illegal_actions_and_make_vec():
    env = gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=4, illegal_action="raise")
    obs, info = env.reset(seed=1)
    bad = np.flatnonzero(info["action_mask"][0] == 0)[0]
    actions = info["action_mask"].argmax(axis=1)
    actions[0] = bad
    with pytest.raises(hearts_env.IllegalActionError):
        env.step(actions)


def test_vector_env_terminate_mode():
    env = HeartsVectorEnv(num_envs=3, illegal_action="terminate", illegal_penalty=7)
    obs, info = env.reset(seed=1)
    actions = info["action_mask"].argmax(axis=1)
    actions[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    obs, reward, terminated, _, info = env.step(actions)
    assert terminated[1] and reward[1] == -7 and info["illegal_action"][1]
    assert info["action_mask"][1].sum() > 0  # the game was reset for a new episode


# ---- an outside trainer -----------------------------------------------------------------------

def test_maskable_ppo_trains_without_illegal_moves():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = HeartsSeatEnv(opponents="random", illegal_action="raise")  # one illegal move fails the test
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=0,
                                    policy_kwargs={"net_arch": [64]}, device="cpu", verbose=0)
    model.learn(total_timesteps=2048)
    obs, info = env.reset(seed=123)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert info["action_mask"][int(action)] == 1
