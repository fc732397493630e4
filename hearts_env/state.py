"""The batch-first game state: one row per game, fixed shapes, plain NumPy arrays.

Card sets are ``uint64`` bitboards (bit ``id`` set = card present, see ``cards``). ``N`` is the
batch size and ``P`` the number of players. The state holds only what the rules need; everything
else (points this hand, who may act, the pass direction) is derived from it by the rule modules.

Layout (``shape dtype``: meaning)::

    seed            [N]     uint64  per-game seed; hand h's deal is a pure function of (seed, h)
    hand_number     [N]     int64   hands started so far minus one (0 = first hand)
    phase           [N]     int64   PASS, PLAY or OVER (game finished)
    current_player  [N]     int64   seat to act; -1 when the game is over
    scores          [N, P]  int64   game totals before the current hand
    dealt           [N, P]  uint64  each hand as dealt, before passing
    dead            [N]     uint64  cards set aside and seen by nobody (two-player game)
    hands           [N, P]  uint64  cards each seat holds now
    passed          [N, P]  uint64  cards each seat chose to pass (kept after the exchange)
    played          [N, P]  uint64  cards each seat has played this hand
    taken           [N, P]  uint64  cards each seat has won in tricks this hand
    voids           [N, P, 4] bool  seat p showed it has no cards of suit s (failed to follow)
    trick           [N, P]  int64   card each seat played to the current trick, -1 = none yet
    leader          [N]     int64   seat that led the current trick
    num_in_trick    [N]     int64   cards played to the current trick so far
    trick_number    [N]     int64   tricks finished this hand (0 on the first trick)
    hearts_broken   [N]     bool    hearts may be led
    legal           [N]     uint64  the legal cards of the player to act (empty when over)
    winner          [N]     int64   seat that won the game, -1 while it goes on (or not decided)
    final_hand      [N]     int64   hand number after which play stops (single-hand episodes), -1 = none
    history         [N, L]  int8    cards acted this hand in order (pass picks, then plays), -1 past them
    history_seat    [N, L]  int8    the seat that acted each of them
    history_length  [N]     int64   actions taken this hand

What just happened (read after a step; a game's fields change only when that game acts; the
property ``hand_over`` says that the game's last action ended a hand)::

    last_trick      [N, P]  int64   card each seat played to the last completed trick, -1 = none yet
    last_trick_leader [N]   int64   seat that led it, -1 = none yet
    last_trick_winner [N]   int64   seat that won it, -1 = none yet
    last_hand_number[N]     int64   hand number of the last scored hand, -1 = none yet
    last_hand_points[N, P]  int64   penalty points the last scored hand gave each seat
    last_hand_moon  [N, P]  bool    seat shot the moon in it (never when the moon is off)
    last_hand_won   [N, P]  uint64  cards each seat won in it
    last_hand_dealt [N, P]  uint64  its hands as dealt, before passing
    last_hand_dead  [N]     uint64  its dead cards
    last_hand_history [N, L] int8   its actions in order, as ``history``
    last_hand_history_seat [N, L] int8
    last_hand_length [N]    int64   its number of actions

``L = P * (pass_count + hand_size)``, the most actions a hand can take. When a hand ends, the next
one is dealt in the same step (unless the game is over), so the arrays of the current hand start
afresh; the ``last_hand_*`` arrays keep the scored hand whole: its deal, every action in order and
by whom, the cards each seat won and the points, which is all a game record needs.

A game in phase OVER takes no more actions: either the game is decided (``winner`` >= 0) or its
``final_hand`` was played (``winner`` stays -1 unless that hand also decided the game). The arrays
of its last hand (``taken``, ``played``, ...) are kept, so the end of the game can still be observed.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .rules import Rules

PASS, PLAY, OVER = 0, 1, 2
PHASE_NAMES = ("pass", "play", "over")


class EngineArgumentError(ValueError):
    """An engine function got an argument it does not allow; the message names the argument and
    what is allowed, and nothing was changed. (Defined here, below the engine, so ``State`` can
    raise it too; ``engine`` re-exports it.)"""


_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}


def check_games(games, batch_size: int, argument: str = "games") -> np.ndarray:
    """``games`` as an array that selects games of a batch: a boolean mask ``[batch_size]`` or
    integer indices in ``0..batch_size-1`` (one index, a list or an array; repeats allowed here).

    Checked because NumPy would read ``-1`` as the last game and give bare IndexErrors for the
    rest. At most one whole-array reduction, no Python loop: this runs on every step that selects games.
    """
    games = np.asarray(games)
    kind = games.dtype.kind
    if kind == "b":
        if games.shape != (batch_size,):
            raise EngineArgumentError(
                f"{argument}: a boolean mask needs one entry per game, shape ({batch_size},); "
                f"got shape {games.shape}"
            )
        return games
    if kind not in "iu":
        if games.size == 0:
            return np.zeros(0, dtype=np.int64)  # no game (an empty list arrives as float64)
        raise EngineArgumentError(
            f"{argument} must be integer game indices 0..{batch_size - 1} or a boolean mask, "
            f"got dtype {games.dtype}"
        )
    if games.ndim > 1:
        raise EngineArgumentError(f"{argument} must be one-dimensional, got shape {games.shape}")
    if games.size == 1:  # one game (single-table envs step this way): a Python test beats a reduction
        out_of_range = not 0 <= games.item() < batch_size
    else:  # seen as unsigned, a negative index is huge, so one reduction checks both ends of the range
        unsigned = games.view(_UNSIGNED[games.itemsize])
        out_of_range = games.size and np.maximum.reduce(unsigned, axis=None) >= batch_size
    if out_of_range:
        flat_games = games.reshape(-1)
        bad = flat_games[(flat_games < 0) | (flat_games >= batch_size)][0]
        raise EngineArgumentError(
            f"{argument}: no game {bad} in a batch of {batch_size}; game indices are 0..{batch_size - 1}"
        )
    return games


def history_length(rules: Rules) -> int:
    """The most actions one hand can take: every seat's pass picks and cards (``L`` above)."""
    return rules.num_players * (rules.pass_count + rules.hand_size)


def every_or(games: np.ndarray, batch_size: int) -> np.ndarray | slice:
    """``games`` (sorted, distinct, as the step passes them) as an index, or ``slice(None)`` when it
    names every game of the batch (the common case: slicing makes views where indexing copies)."""
    return slice(None) if games.size == batch_size else games


def flat(array: np.ndarray) -> np.ndarray:
    """A 1-D view of a state array, for fast ``game * P + seat`` indexing (never a copy)."""
    view = array.view()
    view.shape = (-1,)  # raises instead of copying if the array is not contiguous
    return view


_ARRAY_FIELDS = (
    "seed", "hand_number", "phase", "current_player", "scores", "dealt",
    "dead", "hands", "passed", "played", "taken", "voids", "trick", "leader", "num_in_trick",
    "trick_number", "hearts_broken", "legal", "winner", "final_hand", "history", "history_seat",
    "history_length", "last_trick", "last_trick_leader", "last_trick_winner", "last_hand_number",
    "last_hand_points", "last_hand_moon", "last_hand_won", "last_hand_dealt", "last_hand_dead",
    "last_hand_history", "last_hand_history_seat", "last_hand_length",
)


@dataclasses.dataclass(eq=False)
class State:
    """A batch of Hearts games under one ``Rules``. Build it with ``engine.init`` or ``engine.from_deal``."""

    rules: Rules
    seed: np.ndarray
    hand_number: np.ndarray
    phase: np.ndarray
    current_player: np.ndarray
    scores: np.ndarray
    dealt: np.ndarray
    dead: np.ndarray
    hands: np.ndarray
    passed: np.ndarray
    played: np.ndarray
    taken: np.ndarray
    voids: np.ndarray
    trick: np.ndarray
    leader: np.ndarray
    num_in_trick: np.ndarray
    trick_number: np.ndarray
    hearts_broken: np.ndarray
    legal: np.ndarray
    winner: np.ndarray
    final_hand: np.ndarray
    history: np.ndarray
    history_seat: np.ndarray
    history_length: np.ndarray
    last_trick: np.ndarray
    last_trick_leader: np.ndarray
    last_trick_winner: np.ndarray
    last_hand_number: np.ndarray
    last_hand_points: np.ndarray
    last_hand_moon: np.ndarray
    last_hand_won: np.ndarray
    last_hand_dealt: np.ndarray
    last_hand_dead: np.ndarray
    last_hand_history: np.ndarray
    last_hand_history_seat: np.ndarray
    last_hand_length: np.ndarray

    @classmethod
    def empty(cls, rules: Rules, batch_size: int) -> "State":
        n, p, longest = batch_size, rules.num_players, history_length(rules)
        i64 = lambda *shape: np.zeros(shape, dtype=np.int64)  # noqa: E731
        u64 = lambda *shape: np.zeros(shape, dtype=np.uint64)  # noqa: E731
        none = lambda *shape: np.full(shape, -1, dtype=np.int64)  # noqa: E731
        no_cards = lambda: np.full((n, longest), -1, dtype=np.int8)  # noqa: E731
        return cls(
            rules=rules, seed=u64(n), hand_number=i64(n), phase=i64(n), current_player=i64(n),
            scores=i64(n, p), dealt=u64(n, p), dead=u64(n),
            hands=u64(n, p), passed=u64(n, p), played=u64(n, p), taken=u64(n, p),
            voids=np.zeros((n, p, 4), dtype=bool), trick=none(n, p),
            leader=i64(n), num_in_trick=i64(n), trick_number=i64(n),
            hearts_broken=np.zeros(n, dtype=bool), legal=u64(n), winner=none(n), final_hand=none(n),
            history=no_cards(), history_seat=no_cards(), history_length=i64(n),
            last_trick=none(n, p), last_trick_leader=none(n),
            last_trick_winner=none(n), last_hand_number=none(n), last_hand_points=i64(n, p),
            last_hand_moon=np.zeros((n, p), dtype=bool), last_hand_won=u64(n, p), last_hand_dealt=u64(n, p),
            last_hand_dead=u64(n), last_hand_history=no_cards(), last_hand_history_seat=no_cards(),
            last_hand_length=i64(n),
        )

    @property
    def batch_size(self) -> int:
        return self.phase.shape[0]

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    @property
    def hand_over(self) -> np.ndarray:
        """``[N]`` bool: the game's last action ended a hand (scored in ``last_hand_*``).

        Derived, not stored: right after a hand is scored, the next hand has no action yet (or
        the game is over, and nothing follows)."""
        return ((self.history_length == 0) & (self.last_hand_number >= 0)) | (self.phase == OVER)

    @property
    def done(self) -> np.ndarray:
        """Which games are over."""
        return self.phase == OVER

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in _ARRAY_FIELDS}

    def copy(self) -> "State":
        """A deep copy: stepping the copy leaves this state untouched."""
        return State(rules=self.rules, **{k: v.copy() for k, v in self.arrays().items()})

    def take(self, games) -> "State":
        """The sub-batch of the given game indices (a copy)."""
        games = np.atleast_1d(check_games(games, self.batch_size))
        return State(rules=self.rules, **{k: v[games].copy() for k, v in self.arrays().items()})

    def assign(self, games, other: "State") -> None:
        """Overwrite the given games with the games of ``other`` (same rules, one per index)."""
        if other.rules != self.rules:
            raise ValueError("cannot assign games played under different rules")
        games = check_games(games, self.batch_size)
        for name, array in self.arrays().items():
            array[games] = getattr(other, name)

    @classmethod
    def concatenate(cls, states: list["State"]) -> "State":
        """One batch holding the games of several states with the same rules, in order."""
        rules = states[0].rules
        if any(s.rules != rules for s in states):
            raise ValueError("cannot concatenate states played under different rules")
        return cls(rules=rules, **{k: np.concatenate([getattr(s, k) for s in states]) for k in _ARRAY_FIELDS})

    def equals(self, other: "State") -> bool:
        """Same rules and the same value in every array."""
        return self.rules == other.rules and all(
            np.array_equal(a, getattr(other, k)) for k, a in self.arrays().items()
        )
