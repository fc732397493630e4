"""A search player: perfect-information Monte Carlo (PIMC) over the unseen cards.

At each card play with a choice, the seat samples ``determinizations`` placements of the cards it
has not seen among the other seats, consistent with what it saw (hand sizes, the cards it passed,
the suits a seat showed it is void in) and, given a belief model (``agents.belief``; the expert's
is of ``hard`` opponents), in proportion to its odds of where each card is; it plays every legal
card in each of them and finishes the hand with rollout players (by default the hard bot in every
seat; the searching seat's own later cards may be played by another agent, e.g. the policy being
improved), then plays the card with
the fewest penalty points on average (moon included). Passing, and plays with one legal card, are
left to a base agent. With a base that reports its odds (a policy), the search can be narrowed to
the base's most probable cards (``candidates``) and skipped where the base is sure of its card
(``confident``): the ``expert`` spec searches ``ppo-classic``'s four likeliest cards and leaves it
the plays it gives 97% or more, about half of them, which makes it several times faster than
searching every card (``docs/strength.md``).

With a value model (``agents.value``: the points a whole deal at a trick's start gives each seat)
each candidate card's deals are played only ``lookahead`` tricks on (the current trick included)
and the value model gives the rest of the hand: ``expert-value``, several times cheaper per deal
than playing every deal to its end.

It sees only the observation and the mask, like every agent: the engine states it searches are
rebuilt from the observation (in relative seats: the seat itself is seat 0), never read from the
game. Everything is batched: the decisions of a call (``chunk`` at a time), their determinizations
and candidate cards are rolled out together on the engine, ``ROLLOUT_GAMES`` games at a time, with
torch (for a policy in the rollouts) on one thread.

It is a strong player and a slow one (``expert`` makes hundreds of decisions per second, the
searches over every card tens, where the bots make hundreds of thousands): an arena yardstick, a
teacher to imitate, and (``expert``) an app's hardest opponent on a server. Four-player games
with the whole deck only (nothing is dead, so every unseen card is in a hand).
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from hearts_env import engine, loop, seat_view, worlds
from hearts_env.observe import OBS_DIM
from hearts_env.rules import Rules
from hearts_env.state import PLAY, State

from .base import make


#: Games a rollout plays at once. Larger batches spread NumPy's per-call cost over more games, but
#: past about this size each step's arrays (the observations alone are 2.5 kB a game) are too large
#: for the allocator to reuse, and the kernel's mapping of fresh pages costs more than the batching
#: saves (measured on the 2-core machine: a 64-decision chunk of ppo-classic-search, about 18,000
#: games, spent 1 to 2.5 s of a 4 to 6 s call in the kernel in one batch, 0.1 s in two).
ROLLOUT_GAMES = 10240


def finish_hands(state: State, seat: np.ndarray, own, others, forced_without_asking: bool = False,
                 until: str = "hand") -> None:
    """Play every game of ``state`` to the end of its hand (``until="trick"``: of its trick), in
    place: ``own`` plays the cards of ``seat[g]`` in game ``g``, ``others`` every other seat (agents,
    given only observations).

    The games are played ``ROLLOUT_GAMES`` at a time, with torch (if loaded) on one thread; a
    deterministic agent plays each game the same whatever else is in its batch. With
    ``forced_without_asking`` a seat with one legal card plays it without asking its agent (see
    ``loop.play``: for deterministic agents)."""
    n = state.batch_size
    if own is others:  # one agent everywhere: one call per step on all the games
        agents, seating = [own], [0] * state.num_players
    else:
        agents = [own, others]
        seating = np.where(np.arange(state.num_players)[None, :] == seat[:, None], 0, 1)
    pieces = np.array_split(np.arange(n), -(-n // ROLLOUT_GAMES)) if n > ROLLOUT_GAMES else [None]
    with one_torch_thread():
        for games in pieces:
            loop.play(state, agents, seating, until=until, games=games,
                      forced_without_asking=forced_without_asking)


@contextlib.contextmanager
def one_torch_thread():
    """Run torch on one thread inside the block (when torch is loaded at all). The rollouts call a
    policy on a few hundred to a few thousand games per step, fifty steps per search: a second
    thread there buys little and, with the cores busy (arena workers, other processes), its
    synchronisation at every layer costs more CPU than the work."""
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else 1
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class SearchAgent:
    def __init__(self, rules: Rules | str = "classic", rollout="hard", base="hard", own=None,
                 determinizations: int = 16, seed: int | None = None, chunk: int = 64,
                 candidates: int | None = None, confident: float | None = None, belief=None, value=None,
                 lookahead: int = 1):
        """``rollout`` plays the other seats in the rollouts, ``own`` the searching seat's later
        cards (default: ``rollout``), ``base`` the passes and forced plays; each an agent spec or
        object. With a ``base`` that reports its odds (a policy's ``policy(observation, mask)``),
        ``candidates`` searches only its most probable legal cards, and ``confident`` plays its
        card without searching where it gives that card at least this probability. ``belief``
        (an ``agents.belief.Belief`` or the path of a belief file) deals the sampled worlds by its
        odds of where each unseen card is; without it they are dealt uniformly. ``value`` (an
        ``agents.value.Value`` or the path of a value file) replaces the rollouts: each card's deals
        are played only to the end of the trick (and ``lookahead - 1`` tricks more), and the value
        model says what the rest of the hand gives the seat."""
        self.rules = Rules.resolve(rules)
        if self.rules.num_players != 4 or self.rules.dead_cards or self.rules.deck_size != 52:
            raise ValueError("the search player plays four-player games with the whole 52-card deck only")
        if determinizations < 1 or (candidates is not None and candidates < 1):
            raise ValueError(f"determinizations and candidates must be 1 or more, got {determinizations}, {candidates}")
        self.rollout = make(rollout, seed=seed, rules=self.rules)
        self.own = self.rollout if own is None else make(own, seed=seed, rules=self.rules)
        self.base = make(base, seed=seed, rules=self.rules)
        if (candidates is not None or confident is not None) and not callable(getattr(self.base, "policy", None)):
            raise ValueError("candidates and confident need a base agent with policy(observation, mask) odds")
        if isinstance(belief, str) or hasattr(belief, "__fspath__"):
            from .belief import load_belief  # (torch: imported only when a belief file is named)

            belief = load_belief(belief, rules=self.rules)
        if belief is not None and not callable(getattr(belief, "holder_odds", None)):
            raise ValueError("belief must be a belief model (holder_odds(observation)) or the path of a belief file")
        self.belief = belief
        if isinstance(value, str) or hasattr(value, "__fspath__"):
            from .value import load_value  # (torch: imported only when a value file is named)

            value = load_value(value, rules=self.rules)
        if value is not None and not callable(getattr(value, "hand_points", None)):
            raise ValueError("value must be a value model (hand_points(state)) or the path of a value file")
        self.value = value
        if lookahead < 1:
            raise ValueError(f"lookahead must be 1 trick or more, got {lookahead}")
        self.lookahead = lookahead
        self.determinizations = determinizations
        self.candidates = candidates
        self.confident = confident
        self.chunk = chunk
        self.rng = np.random.default_rng(seed)
        self.name = f"search({self.rollout.name}, {determinizations})"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        with one_torch_thread():
            return self._act(observation, action_mask)

    def _act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        observation = np.asarray(observation, dtype=np.float32).reshape(-1, OBS_DIM)
        action_mask = np.asarray(action_mask, dtype=bool).reshape(-1, 52)
        searched = action_mask
        if self.candidates is not None or self.confident is not None:
            actions, odds = self.base.policy(observation, action_mask)
            searched = self.searched_cards(action_mask, odds, actions)
        else:
            actions = self.base.act(observation, action_mask)
        actions = np.asarray(actions, dtype=np.int64).copy()
        choice = (seat_view.read(observation).phase == PLAY) & (searched.sum(axis=1) > 1)
        rows = choice.nonzero()[0]
        for start in range(0, rows.size, self.chunk):
            part = rows[start:start + self.chunk]
            actions[part] = self.search(observation[part], action_mask[part], actions[part], searched[part])
        return actions

    def searched_cards(self, mask: np.ndarray, odds: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """``[N, 52]`` the legal cards worth searching: the base's ``chosen`` card and the
        ``candidates`` most probable under its ``odds``; only its card where it is ``confident``."""
        odds = np.where(mask, odds, -1.0)
        keep = mask.copy()
        if self.candidates is not None and self.candidates < 52:
            rank = np.argsort(-odds, axis=1, kind="stable")
            keep = np.zeros_like(mask)
            np.put_along_axis(keep, rank[:, :self.candidates], True, axis=1)
            keep &= mask
        if self.confident is not None:
            keep[odds.max(axis=1) >= self.confident] = False
        keep[np.arange(len(mask)), chosen] = True
        return keep

    # ---- one batch of decisions ---------------------------------------------------------------

    def search(self, observation: np.ndarray, mask: np.ndarray, default: np.ndarray,
               candidates: np.ndarray | None = None) -> np.ndarray:
        """The best card of each decision among ``candidates`` (default: every legal card;
        ``default`` wins ties)."""
        values = self.card_values(observation, mask, candidates)
        values += 1e-6 * (np.arange(52)[None, :] != default[:, None])  # ties: keep the base agent's card
        return values.argmin(axis=1)

    def card_values(self, observation: np.ndarray, mask: np.ndarray,
                    candidates: np.ndarray | None = None) -> np.ndarray:
        """``[B, 52]`` mean penalty points of the hand after playing each of the ``candidates``
        (default: every legal card; inf elsewhere)."""
        b, k = observation.shape[0], self.determinizations
        worlds = self.determinize(observation, mask, k)  # decision b's worlds are rows b*K .. b*K+K-1
        # Candidate rows: every candidate card of decision b in each of its K worlds (the same K
        # worlds for every card, so the cards are compared on common deals).
        decision, card = np.nonzero(mask if candidates is None else candidates & mask)
        world = (decision[:, None] * k + np.arange(k)[None, :]).reshape(-1)
        state = worlds.take(world)
        engine.step_inplace(state, np.repeat(card, k))
        # (The built-in searches' rollout agents, hard and greedy policies, are deterministic.)
        seat = np.zeros(state.batch_size, dtype=np.int64)
        for _ in range(1 if self.value is None else self.lookahead):
            finish_hands(state, seat, self.own, self.rollout, forced_without_asking=True,
                         until="hand" if self.value is None else "trick")
        points = state.last_hand_points[:, 0].astype(np.float64)
        if self.value is not None:  # the hands that go on after the trick: the value model's points
            going_on = (~state.hand_over).nonzero()[0]
            points[going_on] = self.value.hand_points(state, going_on)[:, 0]
        values = np.full((b, 52), np.inf)
        values[decision, card] = points.reshape(-1, k).mean(axis=1)
        return values

    # ---- rebuilding states from the observation --------------------------------------------

    def determinize(self, observation: np.ndarray, mask: np.ndarray, k: int) -> State:
        """``K`` engine states per observation, in relative seats, the unseen cards placed at random
        (by the belief model's odds, when the search has one): ``worlds.deal_seat_views`` of the
        seat's view of its observation."""
        odds = None if self.belief is None else self.belief.holder_odds(observation)
        return worlds.deal_seat_views(self.rules, seat_view.read(observation, mask), k, self.rng, belief=odds)
