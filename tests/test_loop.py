"""The one batched play loop (``hearts_env.loop``): seating, stopping, hooks, errors, batch independence."""

import numpy as np
import pytest

import hearts_env as he
from hearts_env import engine, loop
from hearts_env.observe import observe
from tests.test_observe import random_states

CLASSIC = he.Rules.preset("classic")


class Lowest:
    """Plays the lowest legal card and counts its calls and rows."""

    def __init__(self, name="lowest"):
        self.name, self.calls, self.rows = name, 0, 0

    def act(self, observation, action_mask):
        self.calls += 1
        self.rows += len(action_mask)
        return np.asarray(action_mask, dtype=bool).argmax(axis=1)


class Seeded:
    """A random legal card from its own generator (so its draws depend on the rows it is given)."""

    name = "seeded"

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask):
        return (self.rng.random(action_mask.shape) * action_mask).argmax(axis=1)


def test_plays_every_game_to_its_end_and_counts_the_decisions():
    state = he.init(CLASSIC, 8, seed=1, single_hand=True)
    agent = Lowest()
    made = loop.play(state, [agent], [0, 0, 0, 0])
    assert state.done.all()
    assert made == agent.rows == 8 * (52 + 12 * (state.hand_number[0] % 4 != 3))  # every card (and pass pick)
    assert (state.last_hand_points.sum(axis=1) % 26 == 0).all()


def test_until_hand_stops_each_game_right_after_its_hand():
    state = he.init(CLASSIC, 6, seed=2)
    loop.play(state, [Lowest()], [0, 0, 0, 0], until="hand")
    assert state.hand_over.all() and not state.done.any()
    assert (state.hand_number == 1).all() and (state.history_length == 0).all()


def test_a_seat_left_to_the_caller_stops_the_game_at_its_turn():
    state = he.init(CLASSIC, 5, seed=3)
    loop.play(state, [Lowest()], [-1, 0, 0, 0])
    assert (state.current_player == 0).all() and not state.done.any()


def test_the_hooks_see_every_decision_and_every_hand_once():
    state = he.init(CLASSIC, 4, seed=4, single_hand=True)
    seen, hands = [], []

    def check(step: loop.Decisions):
        # What the agent saw is the observation of the state the decision was taken in.
        assert np.array_equal(step.observation, observe(step.state)[step.rows])
        assert np.array_equal(step.mask, engine.legal_mask(step.state)[step.rows])
        assert np.array_equal(step.seat, step.state.current_player[step.rows])
        seen.append(len(step.games))

    loop.play(state, [Lowest("a"), Lowest("b")], [0, 1, 0, 1], on_decision=check,
              on_hand_end=lambda ended: hands.extend(ended.games.tolist()))
    assert sum(seen) == state.last_hand_length.sum()  # every action of every hand, once
    assert sorted(hands) == [0, 1, 2, 3]


def test_each_agent_is_called_once_per_step_on_its_rows():
    state = he.init(CLASSIC, 32, seed=5, single_hand=True)
    a, b = Lowest("a"), Lowest("b")
    steps = []
    loop.play(state, [a, b], [0, 1, 0, 1], on_decision=steps.append)
    assert a.calls + b.calls <= 2 * len(steps)
    for step in steps:
        assert np.all(np.diff(step.games) > 0)  # rows in increasing game order


def reference_play(state, agents, seating):
    """The loop written plainly: the whole batch observed at every step, nothing dropped."""
    while not state.done.all():
        live = ~state.done
        who = np.where(live, seating[np.arange(state.batch_size), np.maximum(state.current_player, 0)], -1)
        obs, mask = observe(state), engine.legal_mask(state)
        actions = np.zeros(state.batch_size, dtype=np.int64)
        for index in np.unique(who[live]):
            rows = who == index
            actions[rows] = agents[index].act(obs[rows], mask[rows])
        engine.step_inplace(state, actions, live)


def test_the_loop_plays_exactly_as_the_plain_loop():
    """Dropping finished games from the working batch changes nothing, even for agents whose
    draws depend on the rows they are given (games end at different times in ``game`` episodes)."""
    rules = he.Rules.preset("quick")
    seating = np.where(np.arange(24)[:, None] % 2 == 0, [0, 1, 0, 1], [1, 0, 1, 0])
    plain = he.init(rules, 24, seed=9)
    reference_play(plain, [Seeded(1), Seeded(2)], seating)
    looped = he.init(rules, 24, seed=9)
    loop.play(looped, [Seeded(1), Seeded(2)], seating)
    assert looped.equals(plain)
    assert len(set(looped.last_hand_number.tolist())) > 1  # games did end at different hands


def test_a_game_plays_the_same_alone_as_in_a_batch():
    seeds = he.deal.game_seeds(9, 12)
    batch = he.engine.init_from_seeds(CLASSIC, seeds, np.arange(12) % 4, single_hand=True)
    loop.play(batch, [Lowest()], [0, 0, 0, 0])
    for g in range(12):
        alone = he.engine.init_from_seeds(CLASSIC, seeds[g:g + 1], [g % 4], single_hand=True)
        loop.play(alone, [Lowest()], [0, 0, 0, 0])
        assert alone.equals(batch.take([g]))


def test_only_the_chosen_games_are_played():
    state = he.init(CLASSIC, 6, seed=6, single_hand=True)
    before = state.copy()
    loop.play(state, [Lowest()], [0, 0, 0, 0], games=np.array([1, 4]))
    assert state.done[[1, 4]].all() and not state.done[[0, 2, 3, 5]].any()
    assert state.take([0, 2, 3, 5]).equals(before.take([0, 2, 3, 5]))


class Cheat:
    name = "cheat"

    def act(self, observation, action_mask):
        return np.where(action_mask.sum(axis=1) > 1, (~action_mask.astype(bool)).argmax(axis=1), action_mask.argmax(axis=1))


def test_an_illegal_action_names_the_agent_and_game_and_is_never_applied():
    state = he.init(CLASSIC, 6, seed=7, single_hand=True)
    seen = []
    with pytest.raises(loop.AgentError, match=r"agent 'cheat' chose an illegal action in game [0-5]: ") as err:
        loop.play(state, [Lowest(), Cheat()], [0, 1, 0, 0], games=np.array([1, 3, 4]), on_decision=seen.append)
    assert err.value.agent == 1 and isinstance(err.value, he.IllegalActionError)
    assert int(str(err.value).split("in game ")[1].split(":")[0]) in (1, 3, 4)  # the caller's game index
    # The hooks saw only legal decisions, and exactly those were applied (the failing step was not).
    assert all(step.mask[np.arange(len(step.action)), step.action].all() for step in seen)
    assert state.history_length.sum() == sum(len(step.games) for step in seen) > 0
    assert (state.history_length[[0, 2, 5]] == 0).all()
    loop.play(state, [Lowest()], [0, 0, 0, 0])  # and the games play on from there
    assert state.done.all()


def test_the_wrong_number_of_actions_is_an_error_naming_the_agent():
    class Short:
        name = "short"

        def act(self, observation, action_mask):
            return np.zeros(len(action_mask) + 1, dtype=np.int64)

    with pytest.raises(loop.AgentError, match="'short' returned"):
        loop.play(he.init(CLASSIC, 2, seed=8), [Short()], [0, 0, 0, 0])


def test_the_loop_stops_each_game_when_its_trick_is_complete():
    state = random_states(CLASSIC, 16, 30, 3)
    state = he.State.take(state, (state.phase == he.PLAY).nonzero()[0])
    before = state.trick_number.copy()
    from agents import make

    hard = make("hard")
    loop.play(state, [hard], [0, 0, 0, 0], until="trick")
    finished_hand = state.hand_over
    assert ((state.num_in_trick == 0) & (state.trick_number == before + 1) | finished_hand).all()
    # Passing never completes a trick: a game in its pass plays on to the end of its first trick.
    passing = he.init(CLASSIC, 4, seed=1)
    loop.play(passing, [hard], [0, 0, 0, 0], until="trick")
    assert (passing.trick_number == 1).all() and (passing.num_in_trick == 0).all()


def test_bad_arguments_are_refused():
    state = he.init(CLASSIC, 2, seed=9)
    with pytest.raises(ValueError, match="until"):
        loop.play(state, [Lowest()], [0, 0, 0, 0], until="round")
    with pytest.raises(ValueError, match="agent indices"):
        loop.play(state, [Lowest()], [0, 1, 0, 0])


class Typed:
    """The lowest legal card plus ``offset``, as an array of ``dtype``."""

    def __init__(self, dtype, offset=0.0, name="typed"):
        self.dtype, self.offset, self.name = dtype, offset, name

    def act(self, observation, action_mask):
        return (np.asarray(action_mask, dtype=bool).argmax(axis=1) + self.offset).astype(self.dtype)


@pytest.mark.parametrize("dtype, offset", [(np.float64, 0.7), (np.float32, 0.0), (bool, 0), (object, 0)])
def test_actions_that_are_not_integers_are_refused_not_truncated(dtype, offset):
    """A float is never a card id (0.7 is not card 0): the step is refused naming the agent."""
    state = he.init(CLASSIC, 3, seed=4, single_hand=True)
    seen = []
    with pytest.raises(loop.AgentError, match=r"agent 'floaty' returned .*integer") as err:
        loop.play(state, [Lowest(), Typed(dtype, offset, name="floaty")], [0, 1, 0, 1], on_decision=seen.append)
    assert err.value.agent == 1
    assert state.history_length.sum() == sum(len(step.games) for step in seen)  # the bad step was not applied


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_integer_actions_of_any_integer_type_play(dtype):
    state = he.init(CLASSIC, 3, seed=4, single_hand=True)
    loop.play(state, [Typed(dtype, 0)], [0, 0, 0, 0])
    assert state.done.all()


def test_a_play_function_returning_floats_is_refused_by_its_name():
    from agents import make

    def halves(observation, action_mask):
        return np.asarray(action_mask, dtype=bool).argmax(axis=1) + 0.5

    with pytest.raises(loop.AgentError, match="'halves' returned"):
        loop.play(he.init(CLASSIC, 2, seed=8), [make(halves)], [0, 0, 0, 0])


def test_an_agent_may_keep_what_it_was_given():
    # The arrays an agent receives are its own: the loop never writes into them at a later step.
    kept = []

    class Keeper:
        def act(self, observation, action_mask):
            kept.append((observation, action_mask, observation.copy(), action_mask.copy()))
            return np.argmax(action_mask, axis=1)

    for games in (1, 3):
        kept.clear()
        loop.play(engine.init("classic", games, seed=2), [Keeper()], np.zeros(4, dtype=np.int64), until="hand")
        assert len(kept) > 50
        assert all(np.array_equal(o, o0) and np.array_equal(m, m0) for o, m, o0, m0 in kept)


def test_an_agent_changing_its_arguments_does_not_change_what_the_hook_sees():
    class Scribbler:
        def act(self, observation, action_mask):
            choice = np.argmax(action_mask, axis=1)
            observation[:] = -1.0
            action_mask[:] = False
            return choice

    seen = []
    state = engine.init("classic", 2, seed=4)
    loop.play(state, [Scribbler()], np.zeros(4, dtype=np.int64), until="hand",
              on_decision=lambda d: seen.append((d.observation.min(), d.mask.any(axis=1).all())))
    assert seen and all(low >= 0.0 and any_legal for low, any_legal in seen)


def test_forced_cards_can_be_played_without_asking_a_deterministic_agent():
    from agents import make

    asked = []

    class Counting:
        def __init__(self):
            self.hard = make("hard")

        def act(self, observation, action_mask):
            asked.append(action_mask.sum(axis=1))
            return self.hard.act(observation, action_mask)

    decisions = {}
    for forced in (False, True):
        asked.clear()
        state = engine.init("classic", 6, seed=8)
        made = loop.play(state, [Counting()], np.zeros(4, dtype=np.int64), until="hand", forced_without_asking=forced)
        decisions[forced] = (state.buffer.copy(), made, sum(len(a) for a in asked), [a.min() for a in asked])
    (asking_buffer, asking_made, asking_rows, _), (buffer, made, rows, fewest) = decisions[False], decisions[True]
    assert np.array_equal(buffer, asking_buffer) and made == asking_made == asking_rows
    assert rows < asking_rows and min(fewest) > 1  # never asked about a single legal card
