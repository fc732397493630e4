"""The one batched play loop: agents sit at the seats of a batch of games and play them on.

Everything that plays games with agents (the arena, PPO rollouts, label collection, imitation,
the search's rollouts, the Gym env's opponents, export sampling, the terminal game) calls
:func:`play`::

    loop.play(state, [hard, policy], seating, until="hand", on_decision=record, on_hand_end=score)

* ``agents``: a list of agents (anything with a batched ``act(observation, action_mask)``).
* ``seating``: ``[N, P]`` ints (or ``[P]``, the same for every game): the index in ``agents`` of
  who plays each seat of each game. ``-1`` is a seat the loop does not play: a game stops when such
  a seat is to act, and the caller acts for it (the Gym env's learner, a person at the terminal).
* ``until``: ``"game"`` plays each game to its end (phase OVER); ``"hand"`` stops each game as soon
  as a hand of it ends (its ``hand_over`` is set); ``"trick"`` as soon as a trick of it is complete
  (or its hand ends).
* ``on_decision(Decisions)``: called at every step, before the actions are applied, with every
  decision of that step: the games and seats, the agent that chose, the observation, the legal
  mask and the action.
* ``on_hand_end(HandsEnded)``: called after every step in which hands ended, with those games as
  they are right after the hand was scored (read ``last_hand_*``, ``scores``, ``winner``).

At each step the games are grouped by the agent sitting at the seat to act, and each agent is
called once, on its rows in increasing game order; agents draw from their own generators, so a
game plays the same whatever else is in the batch. The state is updated in place. Finished games
are dropped from the working batch once they are the majority, so the tail of a batch stays cheap
(games waiting for the caller stay: they are usually back at the next call).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np

from . import cards, engine
from .engine import EngineArgumentError, IllegalActionError
from .observe import observe
from .state import PLAY, State, as_array, check_games

UNTIL = ("game", "hand", "trick")
#: A game that has not ended after this many hands is a bug (or absurd rules): stop loudly.
MAX_HANDS = 1000


class AgentError(IllegalActionError):
    """An agent returned an illegal action, actions that are not integers, or not one action per
    row; the game is left as it was.

    ``agent`` is the index of the agent in the list given to :func:`play`.
    """

    def __init__(self, message: str, agent: int):
        super().__init__(message)
        self.agent = agent


@dataclasses.dataclass
class Decisions:
    """The decisions of one step (one row per acting game), seen before they are applied.

    ``state`` is the batch the decisions were taken in and ``rows`` their rows in it (it may be a
    compacted copy of the caller's state); ``games`` are the caller's game indices. Read-only.
    """

    state: State
    rows: np.ndarray  # [k] rows of ``state``
    games: np.ndarray  # [k] game indices in the state given to play()
    seat: np.ndarray  # [k] seat to act
    agent: np.ndarray  # [k] index of the agent that chose
    observation: np.ndarray  # [k, OBS_DIM] what the seat saw
    mask: np.ndarray  # [k, 52] bool, its legal cards
    action: np.ndarray  # [k] what it chose


@dataclasses.dataclass
class HandsEnded:
    """Games in which a hand was just scored: ``state`` holds just those games (a copy), in order."""

    games: np.ndarray  # [k] game indices in the state given to play()
    state: State


def agent_name(agent) -> str:
    return getattr(agent, "name", None) or type(agent).__name__


def play(
    state: State,
    agents: Sequence,
    seating: np.ndarray | Sequence[int],
    until: str = "game",
    games: np.ndarray | None = None,
    on_decision: Callable[[Decisions], None] | None = None,
    on_hand_end: Callable[[HandsEnded], None] | None = None,
    forced_without_asking: bool = False,
) -> int:
    """Play the games of ``state`` (or only ``games``) in place; returns the decisions made.

    See the module docstring for ``agents``, ``seating``, ``until`` and the hooks. An illegal
    action, actions that are not integers (a float is never a card id) or not one per row raise
    :class:`AgentError` naming the agent, with that step not applied.

    ``forced_without_asking``: a seat with one legal card plays it without its agent being called
    (the hook still sees the decision). Only for agents that choose the same whatever rows they are
    asked about, as deterministic ones do: an agent drawing random numbers would draw fewer.
    """
    if until not in UNTIL:
        raise ValueError(f"until must be one of {', '.join(UNTIL)}, got {until!r}")
    n, p = state.batch_size, state.num_players
    seating = np.asarray(seating)
    if seating.dtype.kind not in "iu" or seating.shape not in ((p,), (n, p)):
        raise ValueError(f"seating: agent indices (integers), one per seat [{p}] or per game and seat [{n}, {p}]; "
                         f"got dtype {seating.dtype}, shape {seating.shape}")
    seating = np.broadcast_to(seating.astype(np.int64, copy=False), (n, p))
    if seating.size and (seating.max() >= len(agents) or seating.min() < -1):
        raise ValueError(f"seating holds agent indices 0..{len(agents) - 1} (or -1 for seats left to the caller)")
    if games is not None:
        games = np.arange(n)[check_games(games, n, distinct=True)]  # (twice: one copy written back)
    ids = np.arange(n) if games is None else games  # caller's game of each working row
    work = state if games is None else state.take(ids)
    running = np.ones(ids.size, dtype=bool)  # not stopped by `until` (a seat left to the caller waits)
    decisions = 0
    max_steps = MAX_HANDS * (state.rules.deck_size + p * state.rules.pass_count)
    try:
        for _ in range(max_steps):
            live = ~work.done
            if int(live.sum()) < work.batch_size // 2:  # drop finished games so observing stays cheap
                keep, drop = live.nonzero()[0], (~live).nonzero()[0]
                if work is not state:  # (the caller's own state already holds the dropped games)
                    state.assign(ids[drop], work.take(drop))
                work, ids, running, live = work.take(keep), ids[keep], running[keep], live[keep]
            who = seating[ids, np.maximum(work.current_player, 0)]
            active = running & live & (who >= 0)
            count = int(active.sum())
            if count == 0:
                return decisions
            rows = active.nonzero()[0]
            mask = engine.legal_mask(work)
            actions = np.zeros(work.batch_size, dtype=np.int64)
            agent_of = np.where(active, who, -1)
            asked, asked_rows = agent_of, rows
            if forced_without_asking:
                forced = active & (cards.count(work.legal) == 1)
                actions[forced] = cards.lowest_card(work.legal[forced])
                asked = np.where(forced, -1, agent_of)
                asked_rows = (asked >= 0).nonzero()[0]
            if asked_rows.size == 1:  # one game to ask (single-game envs, the play mode): no grouping
                groups = [(int(asked[asked_rows[0]]), asked_rows)]
            else:
                groups = [(index, (asked == index).nonzero()[0]) for index in np.unique(asked[asked_rows])]
            # Only the games whose agent is asked are observed (not the finished ones, nor a seat's
            # forced card), each agent's together, so no observation is copied: encoding them is
            # most of the loop's own work. A hook sees every decision, so then all are observed.
            # Fresh arrays every step: an agent may keep what it was given.
            seen = observe(work, games=rows) if on_decision is not None else None
            if seen is not None:
                position = np.zeros(work.batch_size, dtype=np.int64)
                position[rows] = np.arange(rows.size)
            for index, mine in groups:
                obs = observe(work, games=mine) if seen is None else seen[position[mine]]
                returned = agents[index].act(obs, mask[mine])
                try:  # (a torch tensor is read by value, a ragged list refused by name)
                    chosen = as_array(returned, "actions").reshape(-1)
                except EngineArgumentError as error:
                    raise AgentError(f"agent {agent_name(agents[index])!r} returned {error}", int(index)) from None
                if chosen.shape != (mine.size,):
                    raise AgentError(f"agent {agent_name(agents[index])!r} returned {chosen.shape[0]} actions "
                                     f"for {mine.size} decisions", int(index))
                if chosen.dtype.kind not in "iu":  # writing 0.7 into `actions` would play card 0
                    raise AgentError(f"agent {agent_name(agents[index])!r} returned actions of type "
                                     f"{chosen.dtype}; card ids are integers", int(index))
                actions[mine] = chosen
            chosen = actions[rows]
            bad = engine.first_illegal(work, actions, active)
            if bad >= 0:  # refused before any hook sees the step, naming the caller's game
                index = int(agent_of[bad])
                reason = engine.describe_illegal(work.take([bad]), 0, int(actions[bad]))
                raise AgentError(f"agent {agent_name(agents[index])!r} chose an illegal action in game "
                                 f"{ids[bad]}: {reason}", index)
            if on_decision is not None:
                on_decision(Decisions(state=work, rows=rows, games=ids[rows], seat=work.current_player[rows],
                                      agent=agent_of[rows], observation=seen, mask=mask[rows], action=chosen))
            playing = work.phase[rows] == PLAY if until == "trick" else None
            engine.step_inplace(work, actions, active)
            decisions += count
            ended = rows[work.hand_over[rows]]
            if until == "trick":  # a play that leaves no card on the table completed a trick (or the hand)
                running[rows[playing & (work.num_in_trick[rows] == 0)]] = False
            if ended.size:
                if until == "hand":
                    running[ended] = False
                if on_hand_end is not None:
                    on_hand_end(HandsEnded(games=ids[ended], state=work.take(ended)))
        raise RuntimeError(f"games still running after {MAX_HANDS} hands (did the rules allow a game to end?)")
    finally:
        if work is not state:
            state.assign(ids, work)
