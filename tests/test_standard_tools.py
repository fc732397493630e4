"""Outside tools on the registered envs, used the way their documentation says: Gymnasium's
``check_env`` and vector wrappers, Stable-Baselines3's ``make_vec_env``, PettingZoo's parallel
conversion and test; and the inputs every env refuses (non-integer actions, unknown reset options)."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

import hearts_env
from hearts_env import aec, cards
from hearts_env.gym import HeartsSeatEnv, HeartsVectorEnv
from hearts_env.loop import AgentError

# Player p holds suit p: seat 0 holds the 2C (card 0), and in hand 0 (pass left) it acts first.
BY_SUIT = [[cards.card_text(c) for c in range(13 * p, 13 * p + 13)] for p in range(4)]
KNOWN = "deal, hand_number, scores"


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def masked_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.where(masks, rng.random(masks.shape), -1).argmax(axis=1)


# ---- Gymnasium's check_env and the illegal-action default ----------------------------------------

@pytest.mark.parametrize("env_id", ["HeartsLab/Hearts-v1", "HeartsLab/HeartsTwoPlayer-v1"])
def test_check_env_passes_on_the_registered_env(env_id):
    check_env(gymnasium.make(env_id).unwrapped)
    check_env(gymnasium.make(env_id))  # warns that it is wrapped, then checks it all the same
    check_env(gymnasium.make(env_id, render_mode="ansi").unwrapped, skip_render_check=False)


def test_default_illegal_action_ends_the_episode_with_the_penalty():
    env = gymnasium.make("HeartsLab/Hearts-v1")
    _, info = env.reset(seed=0, options={"hand_number": 3})
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-26.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):  # a terminated episode stays over
        env.step(int(np.flatnonzero(info["action_mask"])[0]) if info["action_mask"].any() else 0)


def test_raise_is_one_keyword_away():
    env = gymnasium.make("HeartsLab/Hearts-v1", illegal_action="raise")
    _, info = env.reset(seed=0, options={"hand_number": 3})
    before = env.unwrapped.tables.state.copy()
    with pytest.raises(hearts_env.IllegalActionError, match="legal:"):
        env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert env.unwrapped.tables.state.equals(before)
    vec = gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=2, illegal_action="raise")
    _, info = vec.reset(seed=0)
    actions = info["action_mask"].argmax(axis=1)
    actions[1] = np.flatnonzero(info["action_mask"][1] == 0)[0]
    with pytest.raises(hearts_env.IllegalActionError):
        vec.step(actions)


# ---- Stable-Baselines3 ---------------------------------------------------------------------------

def test_sb3_make_vec_env_with_action_masks():
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    mask_utils = pytest.importorskip("sb3_contrib.common.maskable.utils")
    vec = env_util.make_vec_env("HeartsLab/Hearts-v1", n_envs=2, seed=0)  # asks for render_mode="rgb_array"
    obs = vec.reset()
    assert obs.shape == (2, vec.observation_space.shape[0])
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(40):
        masks = mask_utils.get_action_masks(vec)
        assert masks.dtype == bool and (masks.sum(axis=1) > 0).all()
        obs, _, dones, infos = vec.step(masked_actions(masks, rng))
        assert not any(info.get("illegal_action") for info in infos)
        episodes += int(dones.sum())
    assert episodes >= 2


def test_unsupported_render_mode_is_accepted_and_refused_on_render():
    # Gymnasium's convention: make() warns about a mode missing from metadata["render_modes"]; the
    # env refuses to render in it (SB3's make_vec_env asks for "rgb_array" whether it renders or not).
    env = HeartsSeatEnv(render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(gymnasium.error.UnsupportedMode, match="ansi"):
        env.render()


# ---- PettingZoo's parallel API -------------------------------------------------------------------

def test_aec_env_is_not_parallelizable_and_turn_based_conversion_passes():
    assert aec.raw_env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(aec.env())
    parallel_api_test(turn_based_aec_to_parallel(aec.env()), num_cycles=100)


# ---- Gymnasium vector wrappers with same-step autoreset ------------------------------------------

def test_record_episode_statistics_works_on_the_vector_env():
    vec = gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=4)
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(vec)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    returns, lengths, recorded = np.zeros(4), np.zeros(4, int), 0
    for _ in range(60):
        _, reward, terminated, _, info = env.step(masked_actions(info["action_mask"], rng))
        returns += reward
        lengths += 1
        if terminated.any():
            ended = info["_episode"]
            np.testing.assert_array_equal(ended, terminated)
            np.testing.assert_allclose(info["episode"]["r"][ended], returns[ended])
            np.testing.assert_array_equal(info["episode"]["l"][ended], lengths[ended])
            returns[ended], lengths[ended] = 0, 0
            recorded += int(ended.sum())
    assert recorded >= 4


def test_normalize_observation_refuses_same_step_autoreset():
    # Documented in docs/engine.md: it needs next-step autoreset.
    with pytest.raises((AssertionError, ValueError), match="NEXT_STEP"):
        gymnasium.wrappers.vector.NormalizeObservation(gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=2))


def test_an_opponents_illegal_card_is_its_own_error_not_the_learners():
    calls = []

    def bad_once(observation, action_mask):  # an illegal card on its first turn, legal ones after
        calls.append(1)
        return np.full(len(observation), 52) if len(calls) == 1 else action_mask.argmax(axis=1)

    env = HeartsSeatEnv(opponents=bad_once)  # default "terminate": for the learner's cards only
    env.reset(seed=0, options={"deal": BY_SUIT, "hand_number": 3})  # no pass: seat 0 leads the 2C
    with pytest.raises(AgentError, match="illegal"):
        env.step(0)



def test_an_opponent_returning_floats_is_refused_not_truncated():
    def nearly(observation, action_mask):  # 0.7 is no card: it must not be played as card 0
        return action_mask.argmax(axis=1) + 0.7

    env = HeartsSeatEnv(opponents=nearly)
    env.reset(seed=0, options={"deal": BY_SUIT, "hand_number": 3})  # no pass: seat 0 leads the 2C
    with pytest.raises(AgentError, match="'nearly' returned .*integer"):
        env.step(0)


def test_an_opponent_class_is_built_as_agents_make_builds_it():
    class Lowest:  # an agent class, given rules= and seed= as agents.make gives them
        def __init__(self, rules=None, seed=None):
            self.rules, self.seed = rules, seed

        def act(self, observation, action_mask):
            return action_mask.argmax(axis=1)

    env = HeartsSeatEnv(opponents=Lowest)
    assert all(type(o) is Lowest and o.rules is env.rules for o in env.tables.opponents.values())
    env.reset(seed=5, options={"deal": BY_SUIT, "hand_number": 3})
    assert sorted(o.seed for o in env.tables.opponents.values()) == [5 * 7919, 5 * 7919 + 1, 5 * 7919 + 2]
    env.step(0)


# ---- actions: integer card ids only --------------------------------------------------------------

@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
@pytest.mark.parametrize("action", [0.7, 0.0, "0", np.float32(0), True, np.array([0.0])])
def test_seat_env_refuses_non_integer_actions(action, illegal_action):
    # A float or a string is the caller's bug, not a move: refused in every illegal-action mode.
    env = HeartsSeatEnv(illegal_action=illegal_action)
    env.reset(seed=0, options={"deal": BY_SUIT, "hand_number": 0})
    before = env.tables.state.copy()
    with pytest.raises(hearts_env.IllegalActionError, match="integer"):
        env.step(action)
    assert env.tables.state.equals(before)


@pytest.mark.parametrize("action", [0, np.int8(0), np.int32(0), np.uint8(0), np.int64(0), np.uint64(0),
                                    np.array(0), np.array([0])])
def test_seat_env_accepts_integer_actions_of_any_type(action):
    env = HeartsSeatEnv(illegal_action="raise")
    env.reset(seed=0, options={"deal": BY_SUIT, "hand_number": 0})
    env.step(action)
    assert not env.action_masks()[0]  # the 2C is picked to pass: no longer a choice


@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
def test_vector_env_refuses_non_integer_actions(illegal_action):
    env = HeartsVectorEnv(num_envs=2, illegal_action=illegal_action)
    _, info = env.reset(seed=0)
    with pytest.raises(hearts_env.IllegalActionError, match="integer"):
        env.step(info["action_mask"].argmax(axis=1) + 0.2)
    env.step(info["action_mask"].argmax(axis=1).astype(np.int16))


# ---- reset options: unknown ones are refused, in every env -------------------------------------------

def test_aec_env_refuses_unknown_reset_options():
    for env in (aec.raw_env(), aec.env()):
        with pytest.raises(ValueError, match=f"'dael'.*{KNOWN}"):
            env.reset(seed=0, options={"dael": BY_SUIT})


@pytest.mark.parametrize("make", [HeartsSeatEnv, lambda: HeartsVectorEnv(num_envs=2),
                                  lambda: gymnasium.make("HeartsLab/Hearts-v1")])
def test_gym_envs_refuse_unknown_reset_options(make):
    with pytest.raises(ValueError, match=f"'dael'.*{KNOWN}"):
        make().reset(seed=0, options={"dael": BY_SUIT})


def test_pettingzoo_probe_option_is_accepted():
    # PettingZoo's api_test and parallel_api_test call reset(options={"options": 1}) to check the
    # signature; that one key is accepted and ignored.
    env = aec.raw_env()
    env.reset(seed=0, options={"options": 1})
    assert env.agents
