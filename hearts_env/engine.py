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
"""

from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from . import cards, deal, passing, play, scoring
from .rules import Rules
from .state import OVER, PASS, PHASE_NAMES, PLAY, EngineArgumentError, State, check_games, every_or, flat


class IllegalActionError(EngineArgumentError):
    """An action that is not legal for the seat to act; the state was left unchanged."""


# ---------------------------------------------------------------------------------------------
# Argument checks: cheap, once per call, so a bad argument is named instead of being misread by
# NumPy (a negative index, a truncated float) or failing deep inside with a bare IndexError.
# ---------------------------------------------------------------------------------------------

def _whole_number(value, argument: str) -> int:
    """``value`` as an ``int``: Python or NumPy integers only (not bools, floats or text)."""
    if isinstance(value, (bool, np.bool_)):
        raise EngineArgumentError(f"{argument} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise EngineArgumentError(f"{argument} must be an integer, got {value!r}") from None


def _per_game(value, games: int, argument: str, at_least: int | None = None) -> np.ndarray:
    """Integers, one for all ``games`` or one per game, as an ``int64`` array of shape ``[games]``."""
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise EngineArgumentError(f"{argument} must be integers, got {value!r}")
    if array.ndim > 1 or array.size not in (1, games):
        raise EngineArgumentError(f"{argument}: give one number or one per game ({games}), got {value!r}")
    if at_least is not None and array.size and array.min() < at_least:
        raise EngineArgumentError(f"{argument} must be {at_least} or more, got {value!r}")
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
    batch_size = _whole_number(batch_size, "batch_size")
    if batch_size < 1:
        raise EngineArgumentError(f"batch_size must be at least 1, got {batch_size}")
    seed = _whole_number(seed, "seed")
    return init_from_seeds(rules, deal.game_seeds(seed, batch_size), hand_number, single_hand)


def init_from_seeds(
    rules: Rules | str | dict, seeds: np.ndarray, hand_number: np.ndarray | int = 0, single_hand: bool = False
) -> State:
    """New games with the given per-game seeds, starting at ``hand_number`` (scores 0)."""
    rules = Rules.resolve(rules)
    seeds = np.asarray(seeds, dtype=np.uint64).reshape(-1)
    # hand_number -1 would also read as final_hand "none" and never stop a single-hand game.
    hand_number = _per_game(hand_number, seeds.size, "hand_number", at_least=0)
    state = State.empty(rules, seeds.size)
    state.seed[:] = seeds
    state.hand_number[:] = hand_number
    if single_hand:
        state.final_hand[:] = state.hand_number
    games = np.arange(seeds.size)
    hands, dead = deal.deal(rules, seeds, state.hand_number)
    _start_hand(state, games, hands, dead)
    _update_legal(state)
    return state


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
    hand_number = _whole_number(hand_number, "hand_number")
    seed = _whole_number(seed, "seed")
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
    owners = np.asarray(owners, dtype=np.int64)
    check_deals(rules, owners)
    g = owners.shape[0]
    hand_numbers = _per_game(hand_numbers, g, "hand_numbers", at_least=0)
    if seeds is not None and np.shape(seeds) not in ((), (1,), (g,)):
        raise EngineArgumentError(
            f"seeds: give one number or one per game ({g}), got shape {np.shape(seeds)}"
        )
    if scores is not None:
        scores = np.asarray(scores)
        if scores.dtype.kind not in "iu":
            raise EngineArgumentError(f"scores must be integers, got dtype {scores.dtype}")
        if scores.shape != (g, rules.num_players):
            raise EngineArgumentError(
                f"scores: give one total per game and seat, shape ({g}, {rules.num_players}); "
                f"got shape {scores.shape}"
            )
    state = State.empty(rules, g)
    state.seed[:] = np.zeros(g, dtype=np.uint64) if seeds is None else np.asarray(seeds, dtype=np.uint64)
    state.hand_number[:] = hand_numbers
    if single_hand:
        state.final_hand[:] = state.hand_number
    if scores is not None:
        state.scores[:] = scores
    seat_bits = [(owners == p) for p in range(rules.num_players)]
    hands = np.stack([cards.from_mask(m) for m in seat_bits], axis=1)
    dead = cards.from_mask(owners < 0) & rules.deck_bits
    _start_hand(state, np.arange(g), hands, dead)
    _update_legal(state)
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
    return cards.to_mask(state.legal)


def step(state: State, actions: np.ndarray | Sequence[int], games: np.ndarray | None = None) -> State:
    """The state after each game's seat to act takes its action; ``state`` is not modified.

    With ``games`` (distinct indices in ``0..N-1``, or a boolean mask ``[N]``) only those games
    act; the others stay as they are and their entries of ``actions`` are ignored. A bad
    ``games`` raises :class:`EngineArgumentError`.
    """
    acting = validate_actions(state, actions, games)
    after = state.copy()
    _apply(after, *acting)
    return after


def step_inplace(state: State, actions: np.ndarray | Sequence[int], games: np.ndarray | None = None) -> None:
    """Like :func:`step` but updates ``state`` itself (after validating, so an error changes nothing)."""
    _apply(state, *validate_actions(state, actions, games))


def validate_actions(
    state: State, actions: np.ndarray | Sequence[int], games: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(actions as int64, which games act)``, or :class:`IllegalActionError` naming the first illegal one.

    Only the acting games' entries of the returned actions are meaningful (the others are not checked)."""
    actions = np.asarray(actions)
    if actions.shape != (state.batch_size,):
        raise IllegalActionError(
            f"expected one action per game, shape ({state.batch_size},); got shape {actions.shape}"
        )
    if actions.dtype.kind not in "iu":
        raise IllegalActionError(f"actions must be integer card ids 0..51, got dtype {actions.dtype}")
    actions = actions.astype(np.int64, copy=False)
    acting = state.phase != OVER
    if games is not None:
        games = check_games(games, state.batch_size)
        if games.dtype.kind == "b":
            acting &= games
        else:
            chosen = np.zeros(state.batch_size, dtype=bool)
            chosen[games] = True
            # A game listed twice would still act once: refuse it as the caller's mistake it is.
            if np.count_nonzero(chosen) != games.size:
                values, counts = np.unique(games, return_counts=True)
                raise EngineArgumentError(f"games lists game {values[counts > 1][0]} twice; "
                                          "each game acts at most once per step")
            acting &= chosen
    in_range = (actions >= 0) & (actions < cards.NUM_CARDS)
    safe = np.where(in_range, actions, 0).astype(np.uint64)
    ok = ~acting | (in_range & ((state.legal >> safe) & np.uint64(1)).astype(bool))
    if not ok.all():
        game = int(np.flatnonzero(~ok)[0])
        raise IllegalActionError(describe_illegal(state, game, int(actions[game])))
    return actions, acting


def describe_illegal(state: State, game: int, action: int) -> str:
    legal = cards.format_cards(cards.cards_of(state.legal[game]))
    what = cards.card_text(action) if 0 <= action < cards.NUM_CARDS else f"action {action} (not a card id 0..51)"
    phase = PHASE_NAMES[state.phase[game]]
    where = f"game {game}: " if state.batch_size > 1 else ""
    return f"{where}player {state.current_player[game]} cannot {phase} {what}; legal: {legal}"


def _apply(state: State, actions: np.ndarray, acting: np.ndarray) -> None:
    games = acting.nonzero()[0]
    actions = actions[games]
    _record(state, games, actions)
    passing_now = state.phase[games] == PASS
    passing_games, passing_actions = games[passing_now], actions[passing_now]
    playing_games, playing_actions = games[~passing_now], actions[~passing_now]
    if passing_games.size:
        exchanged = passing.choose(state, passing_games, passing_actions)
        if exchanged.size:
            passing.exchange(state, exchanged)
            _start_play(state, exchanged)
    if playing_games.size:
        tricks_done = play.play_card(state, playing_games, playing_actions)
        if tricks_done.size:
            hands_done = play.finish_trick(state, tricks_done)
            if hands_done.size:
                _finish_hand(state, hands_done)
    _update_legal(state)


def _record(state: State, games: np.ndarray, actions: np.ndarray) -> None:
    """Append each acting game's action (``actions[i]`` of ``games[i]``) to its hand's history."""
    rows = every_or(games, state.batch_size)
    length = state.history_length[rows]
    at = games * state.history.shape[1] + length  # flat indices: one write per array
    flat(state.history)[at] = actions
    flat(state.history_seat)[at] = state.current_player[rows]
    state.history_length[rows] = length + 1


def _update_legal(state: State) -> None:
    """Recompute the legal set of every game's seat to act."""
    passing_games = (state.phase == PASS).nonzero()[0]
    playing_games = (state.phase == PLAY).nonzero()[0]
    if playing_games.size == state.batch_size:  # every game is playing a card: no scatter
        state.legal = play.legal_plays(state, playing_games)
        return
    legal = np.zeros(state.batch_size, dtype=np.uint64)
    if passing_games.size:
        legal[passing_games] = passing.legal_passes(state, passing_games)
    if playing_games.size:
        legal[playing_games] = play.legal_plays(state, playing_games)
    state.legal = legal


# ---------------------------------------------------------------------------------------------
# Hands and games
# ---------------------------------------------------------------------------------------------


def _start_hand(state: State, games: np.ndarray, hands: np.ndarray, dead: np.ndarray) -> None:
    """Lay out freshly dealt hands; a hand with a pass starts in PASS, else straight in PLAY."""
    state.dealt[games] = hands
    state.hands[games] = hands
    state.dead[games] = dead
    for name in ("passed", "played", "taken", "history_length"):
        getattr(state, name)[games] = 0
    state.voids[games] = False
    state.trick[games] = -1
    state.num_in_trick[games] = 0
    state.trick_number[games] = 0
    state.hearts_broken[games] = False
    with_pass = passing.pass_offset(state, games) != 0
    state.phase[games[with_pass]] = PASS
    state.current_player[games[with_pass]] = 0
    if (~with_pass).any():
        _start_play(state, games[~with_pass])


def _start_play(state: State, games: np.ndarray) -> None:
    """The holder of the opening card leads the first trick."""
    opening = play.opening_card_bits(state, games)
    leader = ((state.hands[games] & opening[:, None]) != 0).argmax(axis=1)
    state.phase[games] = PLAY
    state.leader[games] = leader
    state.current_player[games] = leader


def _finish_hand(state: State, games: np.ndarray) -> None:
    """Score the hand, end the games that are decided, deal the next hand to the others."""
    rules = state.rules
    points = scoring.hand_points(rules, state.taken[games], state.dead[games], state.scores[games])
    totals = state.scores[games] + points
    state.scores[games] = totals
    state.last_hand_points[games] = points
    state.last_hand_moon[games] = (rules.moon != "off") & scoring.moon_shooter(rules, state.taken[games],
                                                                              state.dead[games])
    # The whole scored hand is kept: the next one is dealt in this same step.
    state.last_hand_number[games] = state.hand_number[games]
    state.last_hand_won[games] = state.taken[games]
    state.last_hand_dealt[games] = state.dealt[games]
    state.last_hand_dead[games] = state.dead[games]
    state.last_hand_length[games] = state.history_length[games]
    decided = scoring.game_over(rules, totals)
    state.winner[games[decided]] = totals[decided].argmin(axis=1)
    over = decided | (state.hand_number[games] == state.final_hand[games])
    finished, going_on = games[over], games[~over]
    # The scored hand's actions move to last_hand_*; a game going on starts an empty history (a
    # finished game keeps its last hand's, like its other arrays).
    if going_on.size == state.batch_size:  # every game goes on to a new hand: swap, copy nothing
        state.last_hand_history, state.history = state.history, state.last_hand_history
        state.last_hand_history_seat, state.history_seat = state.history_seat, state.last_hand_history_seat
        state.history.fill(-1)
        state.history_seat.fill(-1)
    else:
        state.last_hand_history[games] = state.history[games]
        state.last_hand_history_seat[games] = state.history_seat[games]
        state.history[going_on] = -1
        state.history_seat[going_on] = -1
    state.phase[finished] = OVER
    state.current_player[finished] = -1
    if going_on.size:
        state.hand_number[going_on] += 1
        hands, dead = deal.deal(rules, state.seed[going_on], state.hand_number[going_on])
        _start_hand(state, going_on, hands, dead)
