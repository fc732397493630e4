"""The one rules API: start games, list legal actions, step every game of a batch at once.

Everything that plays Hearts (the PettingZoo and Gymnasium envs, training, the arena, the play
mode) goes through these functions; no rule is implemented anywhere else.

* ``init(rules, batch_size, seed)``: a batch of new games, each dealt from its own seed.
* ``from_deal(rules, hands, ...)`` / ``from_deals``: games set up from given cards and hand number
  (replays, duplicate deals, search).
* ``legal_mask(state)``: ``[N, 52]`` bool, exactly the legal cards of the seat to act.
* ``step(state, actions)``: one action per game for the seat to act, returns the next state.
  An illegal action raises :class:`IllegalActionError`, naming the card and the legal ones, and
  leaves the state untouched. Finished games stay finished (their action is ignored).
  ``step_inplace`` does the same on the given state (fast path for loops that own their state).
  Both take an optional ``games`` selection: only those games act (the others wait).

A game runs hand after hand: when a hand ends it is scored, totals are updated, and unless the
game is over the next hand is dealt from the game's seed and the hand number, in the same step.
The state says what just happened: ``hand_over`` marks the games whose last action ended a hand,
and the ``last_hand_*`` arrays hold that hand whole (deal, actions in order, cards won, points,
moon); ``last_trick*`` hold the last completed trick and its winner (see ``state``).

The phase of each game is ``state.PASS`` (seats pick cards to pass, seat 0 first), ``state.PLAY``
or ``state.OVER``. The step is validate, then apply: pass pick or card play, then trick, hand and
game resolution for just the games that reached them, then the new legal sets.

The step runs as one compiled kernel (``hearts_env.compiled``) that loops over the games of the
batch and applies the rules of ``passing``, ``play``, ``scoring`` and ``deal`` to each. It takes the
state as one argument, its byte buffer (``State.buffer``), and the rules as two arrays; inside, it cuts
the buffer into the named storage arrays of ``state.GROUPS`` (``state_views``) and reads each field by
its named row (``counters[PHASE, g]``). Each rule function takes only the storage arrays it reads.
"""

from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from . import cards, deal
from .compiled import jit
from .constants import PR_DECK_LENGTH, PR_PLAYERS, constants, state_views
from .passing import choose, exchange, legal_passes, offset_of
from .play import finish_trick, legal_cards, play_card, start_play
from .rules import Rules, shown_value
from .scoring import is_game_over, score_hand, sole_lowest
from .state import (
    CURRENT_PLAYER, DEAD, DEALT, FINAL_HAND, HAND_NUMBER, HANDS, HISTORY, HISTORY_LENGTH, HISTORY_SEAT,
    LAST_HAND_DEAD, LAST_HAND_DEALT, LAST_HAND_HISTORY, LAST_HAND_HISTORY_SEAT, LAST_HAND_LENGTH, LAST_HAND_NUMBER,
    LAST_HAND_POINTS, LAST_HAND_WON, LEGAL, NUM_IN_TRICK, OVER, PASS, PASSED, PHASE, PHASE_NAMES, PLAY, PLAYED,
    SCORES, SEED, TAKEN, TRICK, TRICK_NUMBER, WINNER, EngineArgumentError, State, as_array, check_games,
)


class IllegalActionError(EngineArgumentError):
    """An action that is not legal for the seat to act; the state was left unchanged."""


# ---------------------------------------------------------------------------------------------
# Argument checks: cheap, once per call, so a bad argument is named instead of being misread by
# NumPy (a negative index, a truncated float) or failing deep inside with a bare IndexError.
# ---------------------------------------------------------------------------------------------

def integer_argument(value, argument: str) -> int:
    """``value`` as an ``int``: Python or NumPy integers only (not bools, floats or text)."""
    if isinstance(value, (bool, np.bool_)):
        raise EngineArgumentError(f"{argument} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise EngineArgumentError(f"{argument} must be an integer, got {value!r}") from None


def _flag(value, argument: str) -> bool:
    """``value`` as a bool: True or False only (``"no"`` would count as true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise EngineArgumentError(f"{argument} must be True or False, got {value!r}")
    return bool(value)


def _per_game(value, games: int, argument: str, at_least: int | None = None) -> np.ndarray:
    """Integers, one for all ``games`` or one per game, as an ``int64`` array of shape ``[games]``."""
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise EngineArgumentError(f"{argument} must be integers, got {shown_value(value)}")
    if array.ndim > 1 or array.size not in (1, games):
        raise EngineArgumentError(f"{argument}: give one number or one per game ({games}), got {shown_value(value)}")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:  # would wrap negative
        raise EngineArgumentError(f"{argument} must be below 2**63, got {shown_value(value)}")
    if at_least is not None and array.size and array.min() < at_least:
        raise EngineArgumentError(f"{argument} must be {at_least} or more, got {shown_value(value)}")
    return np.broadcast_to(array.astype(np.int64, copy=False).reshape(-1), (games,))


# ---------------------------------------------------------------------------------------------
# Starting games
# ---------------------------------------------------------------------------------------------


def init(
    rules: Rules | str | dict,
    batch_size: int,
    seed: int = 0,
    hand_number: np.ndarray | int = 0,
    single_hand: bool = False,
) -> State:
    """``batch_size`` new games, scores 0, first hand dealt; game ``i`` uses ``game_seeds(seed)[i]``.

    ``rules`` is a ``Rules``, a preset name (``"classic"``) or a mapping of options.
    ``hand_number`` (0 or more, one or one per game) sets the first hand and so its pass
    direction; with ``single_hand`` each game stops (phase OVER) when that hand is scored.
    """
    batch_size = integer_argument(batch_size, "batch_size")
    if batch_size < 1:
        raise EngineArgumentError(f"batch_size must be at least 1, got {batch_size}")
    seed = integer_argument(seed, "seed")
    return init_from_seeds(rules, deal.game_seeds(seed, batch_size), hand_number, single_hand)


def init_from_seeds(
    rules: Rules | str | dict, seeds: np.ndarray, hand_number: np.ndarray | int = 0, single_hand: bool = False,
    scores: np.ndarray | Sequence[Sequence[int]] | None = None,
) -> State:
    """New games with the given per-game seeds, starting at ``hand_number`` with ``scores``
    ``[G, P]`` (the game totals so far; default 0)."""
    rules = Rules.resolve(rules)
    single_hand = _flag(single_hand, "single_hand")
    seeds = np.asarray(seeds, dtype=np.uint64).reshape(-1)
    # hand_number -1 would also read as final_hand "none" and never stop a single-hand game.
    hand_number = _per_game(hand_number, seeds.size, "hand_number", at_least=0)
    scores = _checked_scores(scores, seeds.size, rules.num_players)
    state = State.empty(rules, seeds.size)
    state.seed[:] = seeds
    state.hand_number[:] = hand_number
    if scores is not None:
        state.scores[:] = scores
    if single_hand:
        state.final_hand[:] = state.hand_number
    hands, dead = deal.deal(rules, seeds, state.hand_number)
    _start(state, hands, dead)
    return state


def _checked_scores(scores, games: int, players: int) -> np.ndarray | None:
    """``scores`` as integer game totals ``[games, players]`` (or None), else EngineArgumentError."""
    if scores is None:
        return None
    scores = np.asarray(scores)
    if scores.dtype.kind not in "iu":
        raise EngineArgumentError(f"scores must be integers, got dtype {scores.dtype}")
    if scores.shape != (games, players):
        raise EngineArgumentError(
            f"scores: give one total per game and seat, shape ({games}, {players}); got shape {scores.shape}"
        )
    return scores


def from_deal(
    rules: Rules | str | dict,
    hands: Sequence[Sequence[str | int]],
    hand_number: int = 0,
    scores: Sequence[int] | None = None,
    seed: int = 0,
    single_hand: bool = False,
) -> State:
    """One game (batch of 1) from given hands, listed by seat as card texts or ids.

    ``hand_number`` (0 or more) fixes the pass direction; ``scores`` the totals so far, one per
    seat; ``seed`` deals the hands after this one. The cards not in any hand are the dead cards;
    every hand must have ``rules.hand_size`` cards from the rules' deck, no card twice.
    """
    rules = Rules.resolve(rules)
    hand_number = integer_argument(hand_number, "hand_number")
    seed = integer_argument(seed, "seed")
    if scores is not None:
        scores = np.asarray(scores)
        if scores.shape != (rules.num_players,):
            raise EngineArgumentError(
                f"scores: {rules.num_players} totals needed, one per seat; got {scores.tolist()!r}"
            )
        scores = scores[None, :]
    owner = deal_from_hands(rules, hands)
    return from_deals(rules, owner[None, :], [hand_number], scores, [seed], single_hand)


def from_deals(
    rules: Rules | str | dict,
    owners: np.ndarray,
    hand_numbers: Sequence[int] | np.ndarray,
    scores: np.ndarray | Sequence[Sequence[int]] | None = None,
    seeds: Sequence[int] | np.ndarray | None = None,
    single_hand: bool = False,
) -> State:
    """Games from deals given as ``owners[G, 52]``: the seat dealt each card, -1 for dead or absent.

    ``seeds`` deal the hands after these; ``single_hand`` stops each game after this hand.
    """
    rules = Rules.resolve(rules)
    single_hand = _flag(single_hand, "single_hand")
    owners = np.asarray(owners)
    if owners.dtype.kind not in "iu":
        raise EngineArgumentError(f"deals: owners must be whole seat numbers (-1 for dead), got dtype {owners.dtype}")
    owners = owners.astype(np.int64, copy=False)
    check_deals(rules, owners)
    g = owners.shape[0]
    if g == 0:
        raise EngineArgumentError("deals: give at least one game's deal, shape [games, 52]")
    hand_numbers = _per_game(hand_numbers, g, "hand_numbers", at_least=0)
    if seeds is not None:
        if np.shape(seeds) not in ((), (1,), (g,)):
            raise EngineArgumentError(
                f"seeds: give one number or one per game ({g}), got shape {np.shape(seeds)}"
            )
        if np.asarray(seeds).dtype.kind not in "iu":
            raise EngineArgumentError(f"seeds must be integers, got {seeds!r:.80}")
        seeds = np.asarray(seeds).astype(np.uint64)  # a negative seed wraps, as init reduces its seed mod 2**64
    scores = _checked_scores(scores, g, rules.num_players)
    seat_bits = [(owners == p) for p in range(rules.num_players)]
    hands = np.stack([cards.from_mask(m) for m in seat_bits], axis=1)
    dead = cards.from_mask(owners < 0) & rules.deck_bits
    return from_hands(rules, hands, dead, hand_numbers, scores, seeds, single_hand)


def from_hands(rules: Rules, hands: np.ndarray, dead: np.ndarray, hand_numbers: np.ndarray,
               scores: np.ndarray | None = None, seeds: np.ndarray | None = None, single_hand: bool = False) -> State:
    """Games from whole deals as card sets, ``hands[G, P]`` and ``dead[G]``, that the caller has
    checked (:func:`from_deals` checks its arguments, then deals through here)."""
    g = hands.shape[0]
    state = State.empty(rules, g)
    state.seed[:] = np.zeros(g, dtype=np.uint64) if seeds is None else seeds
    state.hand_number[:] = hand_numbers
    if single_hand:
        state.final_hand[:] = state.hand_number
    if scores is not None:
        state.scores[:] = scores
    _start(state, hands, dead)
    return state


def deal_from_hands(rules: Rules, hands: Sequence[Sequence[str | int]]) -> np.ndarray:
    """``owner[52]`` (seat per card, -1 for none) from hands listed by seat; checked."""
    if len(hands) != rules.num_players:
        raise EngineArgumentError(f"a deal needs {rules.num_players} hands (one per seat), got {len(hands)}")
    owner = np.full(cards.NUM_CARDS, -1, dtype=np.int64)
    for seat, hand in enumerate(hands):
        for card in cards.parse_cards(hand):
            if owner[card] >= 0:
                raise EngineArgumentError(
                    f"{cards.card_text(card)} is dealt twice (seats {owner[card]} and {seat})"
                )
            owner[card] = seat
    check_deals(rules, owner[None, :])
    return owner


def check_deals(rules: Rules, owners: np.ndarray) -> None:
    """Raise :class:`EngineArgumentError` unless every deal fits the rules: hand sizes, deck, dead cards."""
    if owners.ndim != 2 or owners.shape[1] != cards.NUM_CARDS:
        raise EngineArgumentError(f"deals must have shape [games, 52], got {owners.shape}")
    deck = cards.to_mask(np.array(rules.deck_bits))
    for g, owner in enumerate(owners):
        outside = np.flatnonzero((owner >= 0) & ~deck)
        if outside.size:
            raise EngineArgumentError(f"deal {g}: {cards.format_cards(outside)} not in the {rules.deck} deck")
        if ((owner < -1) | (owner >= rules.num_players)).any():
            raise EngineArgumentError(f"deal {g}: seats must be -1 (dead) or 0..{rules.num_players - 1}")
        sizes = np.bincount(owner[owner >= 0], minlength=rules.num_players)
        if (sizes != rules.hand_size).any():
            raise EngineArgumentError(
                f"deal {g}: every hand needs {rules.hand_size} cards, got {sizes.tolist()}"
            )


# ---------------------------------------------------------------------------------------------
# Stepping
# ---------------------------------------------------------------------------------------------


def legal_mask(state: State) -> np.ndarray:
    """``[N, 52]`` bool: the legal actions of the seat to act (all False for finished games)."""
    _check_state(state)
    return cards.to_mask(state.legal)


def _check_state(state) -> None:
    if not isinstance(state, State):  # (else an AttributeError from deep inside)
        raise EngineArgumentError(f"expected a hearts_env State (from init, from_deal or step), got "
                                  f"{type(state).__name__}")


def step(state: State, actions: np.ndarray | Sequence[int], games: np.ndarray | None = None) -> State:
    """The state after each game's seat to act takes its action; ``state`` is not modified.

    With ``games`` (distinct indices in ``0..N-1``, or a boolean mask ``[N]``) only those games
    act; the others stay as they are and their entries of ``actions`` are ignored. A bad
    ``games`` raises :class:`EngineArgumentError`.
    """
    actions, acting = _checked_arguments(state, actions, games)
    _refuse_illegal(state, actions, acting)  # before the copy: an illegal action costs no copy
    after = state.copy()
    _run_step(after, actions, acting)
    return after


def step_inplace(state: State, actions: np.ndarray | Sequence[int], games: np.ndarray | None = None) -> None:
    """Like :func:`step` but updates ``state`` itself (after validating, so an error changes nothing)."""
    actions, acting = _checked_arguments(state, actions, games)
    bad = _run_step(state, actions, acting)
    if bad >= 0:
        raise IllegalActionError(describe_illegal(state, bad, int(actions[bad])))


def validate_actions(
    state: State, actions: np.ndarray | Sequence[int], games: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(actions as int64, which games act)``, or :class:`IllegalActionError` naming the first illegal one.

    Only the acting games' entries of the returned actions are meaningful (the others are not checked)."""
    actions, acting = _checked_arguments(state, actions, games)
    _refuse_illegal(state, actions, acting)
    every = acting.size == 0
    return actions, (state.phase != OVER) if every else (acting & (state.phase != OVER))


def first_illegal(state: State, actions: np.ndarray | Sequence[int], games: np.ndarray | None = None) -> int:
    """The first acting game (of ``games``, default all) whose action is illegal, or -1; changes nothing."""
    actions, acting = _checked_arguments(state, actions, games)
    return int(_first_illegal_in(constants(state.rules).params, state.buffer, actions, acting))


def update_legal(state: State) -> None:
    """Recompute every game's legal set (``state.legal``) after its arrays were edited by hand."""
    c = constants(state.rules)
    _update_legal_in(c.params, c.bits, state.buffer)


def describe_illegal(state: State, game: int, action: int) -> str:
    legal = cards.format_cards(cards.cards_of(state.legal[game]))
    what = cards.card_text(action) if 0 <= action < cards.NUM_CARDS else f"action {action} (not a card id 0..51)"
    phase = PHASE_NAMES[state.phase[game]]
    where = f"game {game}: " if state.batch_size > 1 else ""
    return f"{where}player {state.current_player[game]} cannot {phase} {what}; legal: {legal}"


_EVERY_GAME = np.zeros(0, dtype=bool)  # ``acting`` for "every game that is not over"
_INT64 = np.dtype(np.int64)


def _checked_arguments(state: State, actions, games) -> tuple[np.ndarray, np.ndarray]:
    """``(actions as int64 [N], acting)``: shapes and types checked, legality not yet.

    ``acting`` is a bool mask ``[N]`` of the games selected, or empty for every game."""
    _check_state(state)
    actions = as_array(actions, "actions", IllegalActionError)
    if actions.shape != state.phase.shape:
        raise IllegalActionError(
            f"expected one action per game, shape ({state.batch_size},); got shape {actions.shape}"
        )
    if actions.dtype is not _INT64:  # (the kernels take int64 only: one compiled version)
        if actions.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be integer card ids 0..51, got dtype {actions.dtype}")
        if actions.dtype.kind == "u" and actions.size and actions.max() >= 2**63:
            # (int64 would read 2**64 - 1 as -1, and the message would name -1)
            raise IllegalActionError(f"cannot play action {actions.max()} (not a card id 0..51)")
        actions = actions.astype(np.int64)
    if not actions.flags.c_contiguous:
        actions = np.ascontiguousarray(actions)
    if games is None:
        return actions, _EVERY_GAME
    # A game listed twice would still act once: refuse it as the caller's mistake it is.
    games = check_games(games, state.batch_size, distinct=True)
    if games.dtype.kind == "b":
        return actions, np.ascontiguousarray(games)
    chosen = np.zeros(state.batch_size, dtype=bool)
    chosen[games] = True
    return actions, chosen


def _refuse_illegal(state: State, actions: np.ndarray, acting: np.ndarray) -> None:
    bad = int(_first_illegal_in(constants(state.rules).params, state.buffer, actions, acting))
    if bad >= 0:
        raise IllegalActionError(describe_illegal(state, bad, int(actions[bad])))


def _run_step(state: State, actions: np.ndarray, acting: np.ndarray) -> int:
    """Validate and apply in one kernel call; the first illegal game (state unchanged), or -1."""
    c = constants(state.rules)
    return _step(c.params, c.bits, state.buffer, actions, acting)


def _start(state: State, hands: np.ndarray, dead: np.ndarray) -> None:
    """Lay out every game's first hand (``hands[N, P]``, ``dead[N]``) and its legal sets."""
    c = constants(state.rules)
    _start_games(c.params, c.bits, state.buffer, np.ascontiguousarray(hands, dtype=np.uint64),
                 np.ascontiguousarray(dead, dtype=np.uint64))


# ---------------------------------------------------------------------------------------------
# Kernels: the step for a whole batch, a loop over its games. ``buffer`` is the state
# (``State.buffer``), cut into its storage arrays ``counters`` ... ``actions`` (``State.groups``);
# ``params``/``bits`` are the rules (``constants``).
# ---------------------------------------------------------------------------------------------


@jit
def _acts(counters, acting, g):
    return counters[PHASE, g] != OVER and (acting.size == 0 or acting[g])


@jit
def _first_illegal_in(params, buffer, actions, acting):
    counters, sets = state_views(params, buffer)[:2]
    return _first_illegal(counters, sets, actions, acting)


@jit
def _first_illegal(counters, sets, actions, acting):
    """The first acting game whose action is not one of its legal cards, or -1."""
    for g in range(counters.shape[1]):
        if _acts(counters, acting, g):
            card = actions[g]
            if card < 0 or card >= 52 or not (sets[LEGAL, g] >> np.uint64(card)) & np.uint64(1):
                return g
    return -1


@jit
def _update_legal(params, bits, counters, sets, seat_numbers, seat_sets, flags):
    """Recompute the legal set of every game's seat to act."""
    for g in range(counters.shape[1]):
        phase = counters[PHASE, g]
        if phase == PLAY:
            sets[LEGAL, g] = legal_cards(params, bits, counters, sets, seat_numbers, seat_sets, flags, g)
        elif phase == PASS:
            sets[LEGAL, g] = legal_passes(counters, seat_sets, g)
        else:
            sets[LEGAL, g] = 0


@jit
def _update_legal_in(params, bits, buffer):
    counters, sets, seat_numbers, seat_sets, flags = state_views(params, buffer)[:5]
    _update_legal(params, bits, counters, sets, seat_numbers, seat_sets, flags)


@jit
def _start_hand(params, counters, sets, seat_numbers, seat_sets, flags, voids, g, hands, dead):
    """Lay out freshly dealt hands; a hand with a pass starts in PASS, else straight in PLAY."""
    for seat in range(params[PR_PLAYERS]):
        seat_sets[DEALT, g, seat] = hands[seat]
        seat_sets[HANDS, g, seat] = hands[seat]
        seat_sets[PASSED, g, seat] = 0
        seat_sets[PLAYED, g, seat] = 0
        seat_sets[TAKEN, g, seat] = 0
        seat_numbers[TRICK, g, seat] = -1
        voids[0, g, seat, :] = False
    sets[DEAD, g] = dead
    counters[HISTORY_LENGTH, g] = 0
    counters[NUM_IN_TRICK, g] = 0
    counters[TRICK_NUMBER, g] = 0
    flags[0, g] = False
    if offset_of(params, counters[HAND_NUMBER, g]) != 0:
        counters[PHASE, g] = PASS
        counters[CURRENT_PLAYER, g] = 0
    else:
        start_play(params, counters, sets, seat_sets, g)


@jit
def _start_games(params, bits, buffer, hands, dead):
    counters, sets, seat_numbers, seat_sets, flags, _, voids, _ = state_views(params, buffer)
    for g in range(counters.shape[1]):
        _start_hand(params, counters, sets, seat_numbers, seat_sets, flags, voids, g, hands[g], dead[g])
    _update_legal(params, bits, counters, sets, seat_numbers, seat_sets, flags)


@jit
def _finish_hand(params, bits, counters, sets, seat_numbers, seat_sets, flags, seat_flags, voids, actions, g):
    """Score game ``g``'s hand, end the game if it is decided, else deal it the next hand."""
    p = params[PR_PLAYERS]
    scores = seat_numbers[SCORES, g]
    points = seat_numbers[LAST_HAND_POINTS, g]
    score_hand(params, bits, seat_sets[TAKEN, g], sets[DEAD, g], scores, points, seat_flags[0, g])
    scores += points
    # The whole scored hand is kept: the next one is dealt in this same step.
    counters[LAST_HAND_NUMBER, g] = counters[HAND_NUMBER, g]
    seat_sets[LAST_HAND_WON, g] = seat_sets[TAKEN, g]
    seat_sets[LAST_HAND_DEALT, g] = seat_sets[DEALT, g]
    sets[LAST_HAND_DEAD, g] = sets[DEAD, g]
    counters[LAST_HAND_LENGTH, g] = counters[HISTORY_LENGTH, g]
    actions[LAST_HAND_HISTORY, g] = actions[HISTORY, g]
    actions[LAST_HAND_HISTORY_SEAT, g] = actions[HISTORY_SEAT, g]
    decided = is_game_over(params, scores)
    if decided:
        counters[WINNER, g] = sole_lowest(scores)
    if decided or counters[HAND_NUMBER, g] == counters[FINAL_HAND, g]:
        # A finished game keeps its last hand's arrays, history included.
        counters[PHASE, g] = OVER
        counters[CURRENT_PLAYER, g] = -1
        return
    actions[HISTORY, g] = -1
    actions[HISTORY_SEAT, g] = -1
    counters[HAND_NUMBER, g] += 1
    hands = np.empty(p, dtype=np.uint64)
    order = np.empty(params[PR_DECK_LENGTH], dtype=np.int64)
    dead = deal.deal_game(params, sets[SEED, g], counters[HAND_NUMBER, g], order, hands)
    _start_hand(params, counters, sets, seat_numbers, seat_sets, flags, voids, g, hands, dead)


@jit
def _step(params, bits, buffer, chosen, acting):
    """Every acting game's seat to act plays ``chosen[g]``; returns -1, or the first game whose
    card is illegal (then nothing was changed)."""
    counters, sets, seat_numbers, seat_sets, flags, seat_flags, voids, actions = state_views(params, buffer)
    bad = _first_illegal(counters, sets, chosen, acting)
    if bad >= 0:
        return bad
    for g in range(counters.shape[1]):
        if not _acts(counters, acting, g):
            continue
        card = chosen[g]
        length = counters[HISTORY_LENGTH, g]
        actions[HISTORY, g, length] = card
        actions[HISTORY_SEAT, g, length] = counters[CURRENT_PLAYER, g]
        counters[HISTORY_LENGTH, g] = length + 1
        if counters[PHASE, g] == PASS:
            if choose(params, counters, seat_sets, g, card):
                exchange(params, counters, seat_sets, g)
                start_play(params, counters, sets, seat_sets, g)
        elif play_card(params, counters, seat_numbers, seat_sets, flags, voids, g, card):
            if finish_trick(params, counters, seat_numbers, seat_sets, g):
                _finish_hand(params, bits, counters, sets, seat_numbers, seat_sets, flags, seat_flags, voids,
                             actions, g)
    _update_legal(params, bits, counters, sets, seat_numbers, seat_sets, flags)
    return -1


@jit
def step_buffer(params, bits, buffer, chosen, acting):
    """The step above for kernels of other modules that step the games ``acting`` of a state
    buffer (the seat records' replay): -1, or the first game whose card is illegal."""
    return _step(params, bits, buffer, chosen, acting)


@jit
def update_legal_buffer(params, bits, buffer):
    """Recompute every game's legal set of a state buffer, for kernels of other modules."""
    _update_legal_in(params, bits, buffer)
