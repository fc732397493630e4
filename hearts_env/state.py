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

import sys

import numpy as np

from .compiled import jit
from .rules import Rules

PASS, PLAY, OVER = 0, 1, 2
PHASE_NAMES = ("pass", "play", "over")


class EngineArgumentError(ValueError):
    """An engine function got an argument it does not allow; the message names the argument and
    what is allowed, and nothing was changed. (Defined here, below the engine, so ``State`` can
    raise it too; ``engine`` re-exports it.)"""


_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}


def as_array(value, argument: str, error: type[ValueError] = EngineArgumentError) -> np.ndarray:
    """``value`` as a NumPy array, read by value, or ``error`` naming ``argument``.

    A torch tensor is copied out whatever its device and even if it requires grad (torch is not
    imported here: a tensor can only exist if its caller did). What NumPy cannot make one
    rectangular array of (a ragged list such as ``[0, [1]]``, a GPU array of another library) is
    refused by name instead of as NumPy's or torch's own error. Arrays pass through untouched.
    """
    if isinstance(value, np.ndarray):
        return value
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.is_floating_point() and value.dtype not in (torch.float16, torch.float32, torch.float64):
            value = value.float()  # bfloat16 and the float8 types have no NumPy dtype
        return value.resolve_conj().resolve_neg().numpy()
    try:
        return np.asarray(value)
    except (ValueError, TypeError, RuntimeError):  # ragged, or an array NumPy may not convert
        raise error(
            f"{argument} must be numbers in a rectangular array (rows of one length), not "
            f"{type(value).__name__} {_shorten(value)}"
        ) from None


def _shorten(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def check_games(games, batch_size: int, argument: str = "games", distinct: bool = False) -> np.ndarray:
    """``games`` as an array that selects games of a batch: a boolean mask ``[batch_size]``, or
    integer indices in ``0..batch_size-1`` (one index, a list or an array, a torch tensor; any
    integer dtype and byte order, read by value) returned as native ``int64``. ``distinct``
    refuses an index given twice (where a game would act twice, or once with one copy lost).

    The one check for every ``games=`` of the package: NumPy would read ``-1`` as the last game,
    read a big-endian ``-256`` as game 44 of 300, and give bare IndexErrors for the rest. At most
    one whole-array reduction, no Python loop (distinct aside): this runs on every step that selects games.
    """
    games = as_array(games, argument)
    kind = games.dtype.kind
    if kind == "b":
        if games.shape != (batch_size,):
            raise EngineArgumentError(
                f"{argument}: a boolean mask needs one entry per game, shape ({batch_size},); "
                f"got shape {games.shape}"
            )
        return games
    if kind not in "iu":
        if games.size == 0 and games.ndim == 1:
            return np.zeros(0, dtype=np.int64)  # no game (an empty list arrives as float64)
        raise EngineArgumentError(
            f"{argument} must be integer game indices 0..{batch_size - 1} or a boolean mask, "
            f"got dtype {games.dtype}"
        )
    if games.ndim > 1:
        raise EngineArgumentError(f"{argument} must be one-dimensional, got shape {games.shape}")
    if not games.dtype.isnative:  # (the unsigned view below reads bytes, so read the values first)
        games = games.astype(games.dtype.newbyteorder("="))
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
    games = games.astype(np.int64, copy=False)  # in range, so no value changes
    if distinct and games.size > 1:
        chosen = np.zeros(batch_size, dtype=bool)
        chosen[games] = True
        if np.count_nonzero(chosen) != games.size:
            values, counts = np.unique(games, return_counts=True)
            raise EngineArgumentError(f"{argument} lists game {values[counts > 1][0]} twice; "
                                      "each game acts at most once")
    return games


def game_indices(games, batch_size: int, argument: str = "games") -> np.ndarray:
    """``games`` checked by :func:`check_games`, as contiguous ``int64`` indices ``[M]`` (a boolean
    mask becomes the indices of its games): what compiled code that loops over games takes."""
    games = check_games(games, batch_size, argument)
    return np.flatnonzero(games) if games.dtype.kind == "b" else np.ascontiguousarray(games.reshape(-1))


def history_length(rules: Rules) -> int:
    """The most actions one hand can take: every seat's pass picks and cards (``L`` above)."""
    return rules.num_players * (rules.pass_count + rules.hand_size)


# Storage: the fields live in eight arrays, one per dtype and shape per game, with the fields
# as rows ``[field, game, ...]``, and the eight arrays are consecutive pieces of one byte buffer.
# Each field is a contiguous view of its row, so code reads and writes ``state.hands`` as usual,
# while a compiled kernel takes the whole state as one argument (at batch 1, passing arguments
# is a large part of a step's cost) and cuts the same views out of it (``storage_views``).
# (group, fields with their initial values); dtypes and shapes are those of ``storage_views``.
GROUPS = (
    ("counters", (
        ("hand_number", 0), ("phase", 0), ("current_player", 0), ("leader", 0), ("num_in_trick", 0),
        ("trick_number", 0), ("winner", -1), ("final_hand", -1), ("history_length", 0),
        ("last_trick_leader", -1), ("last_trick_winner", -1), ("last_hand_number", -1), ("last_hand_length", 0),
    )),
    ("sets", (("seed", 0), ("dead", 0), ("legal", 0), ("last_hand_dead", 0))),
    ("seat_numbers", (("scores", 0), ("trick", -1), ("last_trick", -1), ("last_hand_points", 0))),
    ("seat_sets", (
        ("dealt", 0), ("hands", 0), ("passed", 0), ("played", 0), ("taken", 0), ("last_hand_won", 0),
        ("last_hand_dealt", 0),
    )),
    ("flags", (("hearts_broken", False),)),
    ("seat_flags", (("last_hand_moon", False),)),
    ("seat_suit_flags", (("voids", False),)),
    ("actions", (
        ("history", -1), ("history_seat", -1), ("last_hand_history", -1), ("last_hand_history_seat", -1),
    )),
)
GROUP_NAMES = tuple(group for group, _ in GROUPS)
#: field -> (group, row): where each field is stored.
FIELD_ROWS = {field: (group, row) for group, fields in GROUPS for row, (field, _) in enumerate(fields)}
_ARRAY_FIELDS = tuple(FIELD_ROWS)
# Row indices the kernels use (``counters[PHASE, g]``), named after the fields.
(HAND_NUMBER, PHASE, CURRENT_PLAYER, LEADER, NUM_IN_TRICK, TRICK_NUMBER, WINNER, FINAL_HAND, HISTORY_LENGTH,
 LAST_TRICK_LEADER, LAST_TRICK_WINNER, LAST_HAND_NUMBER, LAST_HAND_LENGTH) = range(13)
SEED, DEAD, LEGAL, LAST_HAND_DEAD = range(4)
SCORES, TRICK, LAST_TRICK, LAST_HAND_POINTS = range(4)
DEALT, HANDS, PASSED, PLAYED, TAKEN, LAST_HAND_WON, LAST_HAND_DEALT = range(7)
HISTORY, HISTORY_SEAT, LAST_HAND_HISTORY, LAST_HAND_HISTORY_SEAT = range(4)


@jit
def _bytes_per_game(p, longest):
    # The 8-byte groups come first, so every group starts aligned for its dtype.
    return 8 * (13 + 4 + 4 * p + 7 * p) + (1 + p + 4 * p) + 4 * longest


@jit
def storage_views(buffer, p, longest):
    """The eight storage arrays of a state buffer of ``p``-player games (``longest`` = ``L``), in
    ``GROUPS`` order: views, not copies."""
    n = buffer.size // _bytes_per_game(p, longest)
    at = 0
    counters = buffer[at:at + 8 * 13 * n].view(np.int64).reshape((13, n))
    at += 8 * 13 * n
    sets = buffer[at:at + 8 * 4 * n].view(np.uint64).reshape((4, n))
    at += 8 * 4 * n
    seat_numbers = buffer[at:at + 8 * 4 * n * p].view(np.int64).reshape((4, n, p))
    at += 8 * 4 * n * p
    seat_sets = buffer[at:at + 8 * 7 * n * p].view(np.uint64).reshape((7, n, p))
    at += 8 * 7 * n * p
    flags = buffer[at:at + n].view(np.bool_).reshape((1, n))
    at += n
    seat_flags = buffer[at:at + n * p].view(np.bool_).reshape((1, n, p))
    at += n * p
    seat_suit_flags = buffer[at:at + n * p * 4].view(np.bool_).reshape((1, n, p, 4))
    at += n * p * 4
    actions = buffer[at:at + 4 * n * longest].view(np.int8).reshape((4, n, longest))
    return counters, sets, seat_numbers, seat_sets, flags, seat_flags, seat_suit_flags, actions


@jit
def _hand_over(counters, out):
    for g in range(out.size):
        out[g] = (counters[HISTORY_LENGTH, g] == 0 and counters[LAST_HAND_NUMBER, g] >= 0) or counters[PHASE, g] == OVER


_DTYPES = tuple(np.dtype(t) for t in (np.int64, np.uint64, np.int64, np.uint64, np.bool_, np.bool_, np.bool_, np.int8))


def _numpy_views(buffer: np.ndarray, p: int, longest: int) -> list[np.ndarray]:
    """``storage_views`` cut by NumPy: the same arrays (``tests/test_compiled.py`` checks), made
    faster from Python than arrays handed back by compiled code."""
    n = buffer.size // _bytes_per_game(p, longest)
    shapes = ((13, n), (4, n), (4, n, p), (7, n, p), (1, n), (1, n, p), (1, n, p, 4), (4, n, longest))
    views, at = [], 0
    for dtype, shape in zip(_DTYPES, shapes):
        size = dtype.itemsize
        for extent in shape:
            size *= extent
        views.append(buffer[at:at + size].view(dtype).reshape(shape))
        at += size
    return views


def _new_buffer(rules: Rules, batch_size: int) -> np.ndarray:
    """An uninitialised state buffer, 8-byte aligned."""
    size = batch_size * int(_bytes_per_game(rules.num_players, history_length(rules)))
    return np.empty(-(-size // 8), dtype=np.int64).view(np.uint8)[:size]


#: Blank buffers of small batches by (players, history length, batch size), copied by ``State.empty``.
_BLANK: dict[tuple[int, int, int], np.ndarray] = {}


class State:
    """A batch of Hearts games under one ``Rules``. Build it with ``engine.init`` or ``engine.from_deal``.

    Every field of the layout above is an attribute holding a NumPy array view (write into it,
    ``state.hands[g, p] = ...``; assigning a new array to a field copies it into the view).
    ``buffer`` holds them all; ``groups`` names the eight arrays they are rows of.
    """

    def __init__(self, rules: Rules, buffer: np.ndarray):
        set_ = object.__setattr__
        set_(self, "rules", rules)
        set_(self, "buffer", buffer)
        groups = dict(zip(GROUP_NAMES, _numpy_views(buffer, rules.num_players, history_length(rules))))
        set_(self, "groups", groups)
        for field, (group, row) in FIELD_ROWS.items():
            set_(self, field, groups[group][row])

    def __setattr__(self, name: str, value) -> None:
        if name in FIELD_ROWS:  # keep the field a view of the buffer: copy, never rebind
            getattr(self, name)[...] = value
        elif name in ("rules", "buffer", "groups"):
            raise AttributeError(f"State.{name} cannot be replaced")
        else:
            object.__setattr__(self, name, value)

    def __reduce__(self):
        return (State, (self.rules, self.buffer.copy()))

    def __repr__(self) -> str:
        return f"State(rules={self.rules.name!r}, batch_size={self.batch_size})"

    @classmethod
    def empty(cls, rules: Rules, batch_size: int) -> "State":
        """``batch_size`` games before any deal: every field at its initial value."""
        key = (rules.num_players, history_length(rules), batch_size)
        blank = _BLANK.get(key)
        if blank is not None:  # (a copy of the same fields: filling them costs more at small batches)
            buffer = _new_buffer(rules, batch_size)
            buffer[:] = blank
            return cls(rules, buffer)
        state = cls(rules, _new_buffer(rules, batch_size))
        for group, fields in GROUPS:
            array = state.groups[group]
            for row, (_, initial) in enumerate(fields):
                array[row] = initial
        if batch_size <= 64:
            _BLANK[key] = state.buffer.copy()
        return state

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
        out = np.empty(self.batch_size, dtype=bool)  # (allocated here: cheaper than inside the kernel)
        _hand_over(self.groups["counters"], out)
        return out

    @property
    def done(self) -> np.ndarray:
        """Which games are over."""
        return self.phase == OVER

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in _ARRAY_FIELDS}

    def copy(self) -> "State":
        """A deep copy: stepping the copy leaves this state untouched."""
        buffer = _new_buffer(self.rules, self.batch_size)
        buffer[:] = self.buffer
        return State(self.rules, buffer)

    def take(self, games) -> "State":
        """The sub-batch of the given game indices (a copy)."""
        games = np.atleast_1d(check_games(games, self.batch_size))
        size = int(np.count_nonzero(games)) if games.dtype.kind == "b" else games.size
        taken = State(self.rules, _new_buffer(self.rules, size))
        for name, array in self.groups.items():
            taken.groups[name][...] = array[:, games]
        return taken

    def assign(self, games, other: "State") -> None:
        """Overwrite the given games with the games of ``other`` (same rules, one per index)."""
        if other.rules != self.rules:
            raise ValueError("cannot assign games played under different rules")
        games = check_games(games, self.batch_size)
        count = int(games.sum()) if games.dtype == bool else games.size
        if count != other.batch_size:
            raise EngineArgumentError(f"assign: {count} games selected for the {other.batch_size} games given")
        for name, array in self.groups.items():
            array[:, games] = other.groups[name]

    @classmethod
    def concatenate(cls, states: list["State"]) -> "State":
        """One batch holding the games of several states with the same rules, in order."""
        if not states:
            raise EngineArgumentError("concatenate: give at least one state")
        rules = states[0].rules
        if any(s.rules != rules for s in states):
            raise ValueError("cannot concatenate states played under different rules")
        joined = cls(rules, _new_buffer(rules, sum(s.batch_size for s in states)))
        for name, array in joined.groups.items():
            np.concatenate([s.groups[name] for s in states], axis=1, out=array)
        return joined

    def equals(self, other: "State") -> bool:
        """Same rules and the same value in every array."""
        return self.rules == other.rules and all(
            np.array_equal(a, other.groups[k]) for k, a in self.groups.items()
        )
