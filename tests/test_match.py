"""The terminal game's ``Match``: agents play through the shared loop with the same events and
record as stepping one card at a time, and a failing agent loses nothing already played."""

import numpy as np
import pytest

import hearts_env as he
from hearts_app.session.match import Exchanged, HandScored, Match

CLASSIC = he.Rules.preset("classic")


class First:
    """The lowest legal card."""

    name = "first"

    def act(self, observation, action_mask):
        return np.asarray(action_mask, dtype=bool).argmax(axis=1)


class FailsAfter:
    """The lowest legal card for ``n`` decisions, then an error (an agent's bug)."""

    name = "fails"

    def __init__(self, n):
        self.left = n

    def act(self, observation, action_mask):
        if self.left <= 0:
            raise RuntimeError("agent bug")
        self.left -= len(action_mask)
        return np.asarray(action_mask, dtype=bool).argmax(axis=1)


def lowest(match: Match) -> int:
    return int(np.flatnonzero(he.legal_mask(match.state)[0])[0])


def test_agents_through_the_loop_give_the_events_and_record_of_single_steps():
    by_loop = Match.new(CLASSIC, seed=3)
    events = by_loop.play_agents([First()], [0, 0, 0, 0])
    by_step = Match.new(CLASSIC, seed=3)
    expected = []
    while not by_step.over:
        expected += by_step.step(lowest(by_step))
    assert events == expected
    assert [e.offset for e in events if isinstance(e, Exchanged)][:3] == [1, 3, 2]  # left, right, across
    assert by_loop.game_record(["a"] * 4, ["first"] * 4) == by_step.game_record(["a"] * 4, ["first"] * 4)


def test_an_agent_failing_in_the_next_hand_keeps_the_hand_it_finished():
    match = Match.new(CLASSIC, seed=0)
    # 12 pass picks and 52 cards finish the first hand; the agent fails at the next hand's first pick.
    with pytest.raises(RuntimeError, match="agent bug"):
        match.play_agents([FailsAfter(64)], [0, 0, 0, 0])
    assert match.hand_number == 1 and match.hands_finished == 1
    record = match.game_record(["a"] * 4, ["x"] * 4)
    assert [h["hand_number"] for h in record["hands"]] == [0, 1]
    assert sum(record["hands"][0]["points"]) in (26, 78)  # the scored hand is in the record
    resumed = Match.from_record(CLASSIC, record)  # and the record resumes to the same game
    assert resumed.state.equals(match.state)


def test_the_events_before_a_failure_are_the_single_steps_events():
    failing = Match.new(CLASSIC, seed=5)
    with pytest.raises(RuntimeError):
        failing.play_agents([FailsAfter(70)], [0, 0, 0, 0])
    stepped = Match.new(CLASSIC, seed=5)
    events = []
    for _ in range(70):
        events += stepped.step(lowest(stepped))
    assert failing.state.equals(stepped.state)
    assert any(isinstance(e, HandScored) for e in events)
