"""One game, one action at a time: the engine steps it, a ``Match`` records it and says what happened.

A ``Match`` holds a batch-of-one engine state; its record (the deal and actions of every hand, in
the arena's record format, ``hearts_env.records``) is read from the state's history. ``step(card)``
validates and applies one action of the seat to act and returns the *events* it caused, in order:
a pass pick, the exchange, a card played, hearts broken, a trick won, a hand scored (moon
included), the next hand dealt, the game over.

Everything an event reports comes from the engine: the state says what its last step did (the
last completed trick and its winner, whether a hand was scored and that hand whole), even though
the next hand is dealt within the same step.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from hearts_env import cards, deal, engine, loop, scoring
from hearts_env.records import current_hand, scored_hand
from hearts_env.passing import pass_offset
from hearts_env.rules import Rules
from hearts_env.state import OVER, PASS, State


class RecordMismatch(ValueError):
    """A record that the engine does not reproduce (edited, or written by another engine version)."""


# ---------------------------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class HandStarted:
    hand_number: int
    pass_direction: str  # "left", "right", "across" or "none"
    pass_to: int  # seat offset of the pass (0 = no pass)


@dataclasses.dataclass(frozen=True)
class Picked:
    """A seat chose one card to pass (secret until the exchange)."""

    seat: int
    card: int
    picks_left: int  # this seat's picks still to make


@dataclasses.dataclass(frozen=True)
class Exchanged:
    """Every seat's chosen cards moved: ``passed[s]`` left seat ``s``, ``received[s]`` reached it."""

    passed: tuple[tuple[int, ...], ...]
    received: tuple[tuple[int, ...], ...]
    offset: int


@dataclasses.dataclass(frozen=True)
class Played:
    seat: int
    card: int
    trick_number: int  # 0-based


@dataclasses.dataclass(frozen=True)
class HeartsBroken:
    seat: int
    card: int


@dataclasses.dataclass(frozen=True)
class TrickWon:
    trick_number: int  # 0-based
    plays: tuple[tuple[int, int], ...]  # (seat, card) in play order, the leader first
    winner: int
    points: int  # penalty card points in the trick


@dataclasses.dataclass(frozen=True)
class HandScored:
    hand_number: int
    points: tuple[int, ...]  # what the hand gave each seat (moon rule and J♦ applied)
    card_points: tuple[int, ...]  # penalty card points taken, before the moon
    totals: tuple[int, ...]  # game totals after the hand
    tricks: tuple[int, ...]  # tricks each seat won
    moon: int | None  # seat that shot the moon


@dataclasses.dataclass(frozen=True)
class GameOver:
    winner: int | None
    totals: tuple[int, ...]


Event = HandStarted | Picked | Exchanged | Played | HeartsBroken | TrickWon | HandScored | GameOver


# ---------------------------------------------------------------------------------------------
# The match
# ---------------------------------------------------------------------------------------------


class Match:
    """A game stepped one action at a time, with its record.

    Build one with :meth:`new` (from a seed, optionally a fixed first deal) or :meth:`from_record`
    (replaying a saved game's actions through the engine).
    """

    def __init__(self, rules: Rules, state: State, seed: int | None, custom_deal: bool = False):
        self.rules = rules
        self.state = state
        self.seed = seed  # the --seed the game seed came from (None when unknown, e.g. arena records)
        self.deal_seed = int(state.seed[0])
        self.first_hand = int(state.hand_number[0])
        self.start_scores = [int(x) for x in state.scores[0]]
        self.custom_deal = custom_deal  # the first hand was dealt by hand, not from the seed
        self.finished_hands: list[dict[str, Any]] = []  # scored hands, as records

    # ---- construction --------------------------------------------------------------------------

    @classmethod
    def new(
        cls,
        rules: Rules,
        seed: int,
        hand_number: int = 0,
        hands: Sequence[Sequence[str | int] | None] | None = None,
        scores: Sequence[int] | None = None,
    ) -> "Match":
        """A new game from ``seed`` (the game seed is ``deal.game_seeds(seed, 1)[0]``, as ``engine.init``).

        ``hands`` fixes the first deal, by seat (card texts or ids); a seat given as ``None`` (or
        missing) gets cards dealt at random from the rest, from ``seed``. Later hands are dealt
        from the game seed as usual. ``scores`` sets the totals before the first hand.
        """
        game_seed = deal.game_seeds(int(seed), 1)
        if hands is None:
            if scores is not None:
                raise ValueError("starting scores need a fixed deal (hands)")
            state = engine.init_from_seeds(rules, game_seed, hand_number)
            return cls(rules, state, int(seed))
        owner = engine.deal_from_hands(rules, complete_deal(rules, hands, seed))
        state = engine.from_deals(
            rules, owner[None, :], [hand_number], None if scores is None else [list(scores)], game_seed
        )
        return cls(rules, state, int(seed), custom_deal=True)

    @classmethod
    def from_record(cls, rules: Rules, game: dict[str, Any], on_event=None) -> "Match":
        """Rebuild a recorded game by stepping its actions through the engine, from its seed.

        Each hand's recorded deal is checked against what the engine deals; ``on_event(event)``
        sees every event on the way (the replay prints them). Raises :class:`RecordMismatch`.
        """
        hands = game.get("hands") or []
        if not hands:
            raise RecordMismatch("the game record has no hands")
        try:
            deal_seed = int(game["deal_seed"])
            first = int(game.get("hand_number", hands[0]["hand_number"]))
        except (KeyError, TypeError, ValueError) as err:
            raise RecordMismatch(f"the game record lacks a usable deal_seed / hand_number ({err})") from None
        if not 0 <= deal_seed < 2**64:  # seeds are 64-bit unsigned
            raise RecordMismatch(f"the game record's deal_seed {deal_seed} is not a seed (0 to 2**64 - 1)")
        seed = game.get("seed")
        if hands[0].get("custom_deal"):
            try:
                owner = engine.deal_from_hands(rules, hands[0]["dealt"])
            except ValueError as err:
                raise RecordMismatch(f"hand {first}: the recorded deal is not valid: {err}") from None
            scores = game.get("start_scores")
            state = engine.from_deals(
                rules, owner[None, :], [first], None if scores is None else [scores], [deal_seed]
            )
            match = cls(rules, state, seed, custom_deal=True)
        else:
            state = engine.init_from_seeds(rules, np.array([deal_seed], dtype=np.uint64), first)
            match = cls(rules, state, seed)
        if on_event:
            on_event(HandStarted(first, rules.pass_direction(first), match.pass_offset()))
        for recorded in hands:
            current = match.hands[-1]
            number = recorded.get("hand_number")
            if number != current["hand_number"]:
                raise RecordMismatch(
                    f"the record has hand {number} where the engine is at hand {current['hand_number']}"
                )
            dealt = [list(x) for x in recorded.get("dealt", [])]
            if dealt != current["dealt"] or list(recorded.get("dead", [])) != current["dead"]:
                raise RecordMismatch(
                    f"hand {number}: the recorded deal is not what the seed deals "
                    "(an edited record, or one written by another engine version)"
                )
            actions = recorded.get("actions", [])
            last_hand = recorded is hands[-1]
            for i, action in enumerate(actions):
                try:
                    seat, text = int(action[0]), action[1]
                    card = cards.parse_card(text)
                except (TypeError, ValueError, IndexError) as err:
                    raise RecordMismatch(
                        f"hand {number}, action {i + 1}: {action!r} is not [seat, card] ({err})"
                    ) from None
                if match.over:
                    raise RecordMismatch(f"hand {number}, action {i + 1}: the game is already over")
                if seat != match.to_act:
                    raise RecordMismatch(
                        f"hand {number}, action {i + 1}: the record has player_{seat} acting, "
                        f"the engine has player_{match.to_act} to act"
                    )
                try:
                    events = match.step(card)
                except engine.IllegalActionError as err:
                    raise RecordMismatch(f"hand {number}, action {i + 1}: {err}") from None
                if on_event:
                    for event in events:
                        # The engine deals on after the record's last hand: that hand was never played.
                        if not (last_hand and i == len(actions) - 1 and isinstance(event, HandStarted)):
                            on_event(event)
            scored = next((h["points"] for h in match.finished_hands if h["hand_number"] == number), None)
            if recorded.get("points") is not None and recorded["points"] != scored:
                raise RecordMismatch(
                    f"hand {number}: the record says points {recorded['points']}, the engine gives {scored}"
                )
        return match

    # ---- what the game looks like now ----------------------------------------------------------

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    @property
    def over(self) -> bool:
        return bool(self.state.phase[0] == OVER)

    @property
    def passing(self) -> bool:
        return bool(self.state.phase[0] == PASS)

    @property
    def to_act(self) -> int:
        return int(self.state.current_player[0])

    @property
    def hand_number(self) -> int:
        return int(self.state.hand_number[0])

    @property
    def trick_number(self) -> int:
        """Tricks finished this hand (0 on the first trick)."""
        return int(self.state.trick_number[0])

    @property
    def hearts_broken(self) -> bool:
        return bool(self.state.hearts_broken[0])

    @property
    def scores(self) -> list[int]:
        """Game totals before the current hand (after the last one when the game is over)."""
        return [int(x) for x in self.state.scores[0]]

    @property
    def winner(self) -> int | None:
        w = int(self.state.winner[0])
        return None if w < 0 else w

    @property
    def hands_finished(self) -> int:
        return len(self.finished_hands)

    def pass_offset(self) -> int:
        """Seat offset of this hand's pass (0 = no pass), from the engine."""
        return int(pass_offset(self.state, np.array([0]))[0])

    def hand(self, seat: int) -> list[int]:
        return cards.cards_of(self.state.hands[0, seat])

    def legal(self) -> list[int]:
        """The legal cards of the seat to act (empty when the game is over)."""
        return cards.cards_of(self.state.legal[0])

    def chosen_to_pass(self, seat: int) -> list[int]:
        """Cards ``seat`` has picked to pass this hand (so far, or in the exchange once done)."""
        return cards.cards_of(self.state.passed[0, seat])

    def received(self, seat: int) -> list[int]:
        """Cards passed to ``seat`` this hand, once the exchange is done."""
        offset = self.pass_offset()
        if offset == 0 or self.passing:
            return []
        return cards.cards_of(self.state.passed[0, (seat - offset) % self.num_players])

    def trick(self) -> list[tuple[int, int]]:
        """The current trick as (seat, card) in play order."""
        p = self.num_players
        leader = int(self.state.leader[0])
        order = [(leader + i) % p for i in range(p)]
        return [(s, int(self.state.trick[0, s])) for s in order if self.state.trick[0, s] >= 0]

    def card_points(self) -> list[int]:
        """Penalty card points each seat has taken this hand (before the moon)."""
        return [int(x) for x in scoring.card_points(self.rules, self.state.taken[0])]

    def tricks_won(self) -> list[int]:
        return [int(x) // self.num_players for x in cards.count(self.state.taken[0])]

    # ---- stepping -----------------------------------------------------------------------------

    def step(self, card: int) -> list[Event]:
        """The seat to act takes ``card``; returns the events. Raises ``engine.IllegalActionError``
        (naming the legal cards) and changes nothing when the card is not legal."""
        before = self.state
        if before.phase[0] == OVER:
            raise engine.IllegalActionError("the game is over")
        after = engine.step(before, np.array([int(card)], dtype=np.int64))  # validates first
        events = self._events(before, after, int(card))
        self.state = after
        return events

    def play_agents(self, agents: Sequence, seating: Sequence[int]) -> list[Event]:
        """Let ``agents`` play the seats they hold (``seating[seat]``: index into ``agents``, -1
        for a seat left to the caller) until such a seat is to act or the game is over; returns
        the events of every action, in order. An agent's error leaves the game at its turn."""
        taken: list[tuple[State, int]] = []
        state = self.state.copy()

        def remember(step: loop.Decisions) -> None:
            taken.append((step.state.copy(), int(step.action[0])))

        try:
            loop.play(state, agents, np.asarray(seating), on_decision=remember)
        finally:  # the actions applied before a failure count (scored hands included)
            self.state = state
            afters = [before for before, _ in taken[1:]] + [state]
            events = [event for (before, card), after in zip(taken, afters)
                      for event in self._events(before, after, card)]
        return events

    def _events(self, before: State, after: State, card: int) -> list[Event]:
        """What one action (``card``, from ``before`` to ``after``) did, as events."""
        rules, p = self.rules, self.num_players
        seat, phase = int(before.current_player[0]), int(before.phase[0])
        events: list[Event] = []
        if phase == PASS:
            picked = cards.count(after.passed[0, seat])
            events.append(Picked(seat, int(card), rules.pass_count - int(picked)))
            if after.phase[0] != PASS:  # the last pick: cards moved
                passed = tuple(tuple(cards.cards_of(after.passed[0, s])) for s in range(p))
                received = tuple(
                    tuple(cards.cards_of(after.hands[0, s] & ~before.hands[0, s])) for s in range(p)
                )
                events.append(Exchanged(passed, received, int(pass_offset(before, np.array([0]))[0])))
        else:
            trick_number = int(before.trick_number[0])
            events.append(Played(seat, int(card), trick_number))
            # (Hearts broken by a hand's very last card is not announced: the hand is scored at once.)
            if after.hearts_broken[0] and not before.hearts_broken[0] and not after.hand_over[0]:
                events.append(HeartsBroken(seat, int(card)))
            if before.num_in_trick[0] == p - 1:  # this card completes the trick
                leader = int(after.last_trick_leader[0])
                plays = tuple(((leader + i) % p, int(after.last_trick[0, (leader + i) % p])) for i in range(p))
                won = cards.bits_of(c for _, c in plays)
                points = int(scoring.card_points(rules, np.array([won]))[0])
                events.append(TrickWon(trick_number, plays, int(after.last_trick_winner[0]), points))
                if after.hand_over[0]:
                    events.extend(self._hand_end(after))
        return events

    def _hand_end(self, after: State) -> list[Event]:
        rules = self.rules
        hand = scored_hand(after, 0)
        if not self.finished_hands and self.custom_deal:
            hand["custom_deal"] = True
        self.finished_hands.append(hand)
        won = after.last_hand_won[0]
        events: list[Event] = [
            HandScored(
                hand["hand_number"],
                tuple(hand["points"]),
                tuple(int(x) for x in scoring.card_points(rules, won)),
                tuple(int(x) for x in after.scores[0]),
                tuple(int(x) // self.num_players for x in cards.count(won)),
                hand["moon"],
            )
        ]
        if after.phase[0] == OVER:
            w = int(after.winner[0])
            events.append(GameOver(None if w < 0 else w, tuple(int(x) for x in after.scores[0])))
        else:
            n = int(after.hand_number[0])
            offset = int(pass_offset(after, np.array([0]))[0])
            events.append(HandStarted(n, rules.pass_direction(n), offset))
        return events

    @property
    def hands(self) -> list[dict[str, Any]]:
        """Every hand so far as a record: the scored ones, then the one being played."""
        if self.over:
            return list(self.finished_hands)
        current = current_hand(self.state, 0)
        if not self.finished_hands and self.custom_deal:
            current["custom_deal"] = True
        return [*self.finished_hands, current]

    # ---- the record ---------------------------------------------------------------------------

    def game_record(self, seats: Sequence[str], specs: Sequence[str]) -> dict[str, Any]:
        """The ``{"type": "game", ...}`` line: the arena's game record plus what resuming needs."""
        finished = [h["points"] for h in self.hands if h.get("points") is not None]
        points = [sum(col) for col in zip(*finished)] if finished else [0] * self.num_players
        return {
            "type": "game",
            "deal_seed": str(self.deal_seed),
            "seed": self.seed,
            "hand_number": self.first_hand,
            "seats": list(seats),
            "specs": list(specs),
            "start_scores": self.start_scores,
            "hands": [dict(h, dealt=[list(x) for x in h["dealt"]], actions=[list(a) for a in h["actions"]])
                      for h in self.hands],
            "points": points,
            "scores": self.scores,
            "finished": self.over,
            "winner": self.winner,
        }


def refusal_reason(match: Match, card: int, legal: Sequence[int] | None = None) -> dict[str, str] | None:
    """The rule that forbids the seat to act to take ``card`` now, as a reason code with the card or
    suit it names (``{"code": "follow_suit", "suit": "C"}``), None when none is known.

    The engine decides what is legal; this only explains a refusal, in codes a page words in its
    player's language (:func:`why_not` in English). Codes: ``game_over``, ``not_held``,
    ``already_chosen`` (``card``), ``follow_suit`` (``suit``), ``first_trick_points``,
    ``opens_first_trick`` (``card``: the card that must lead), ``hearts_not_broken``, ``queen_waits``.
    """
    legal = match.legal() if legal is None else list(legal)
    if match.over:
        return {"code": "game_over"}
    seat = match.to_act
    if card not in match.hand(seat):
        return {"code": "not_held"}  # (the card asked for is not named back: it may be a hidden one)
    if match.passing:
        if card in match.chosen_to_pass(seat):
            return {"code": "already_chosen", "card": cards.card_text(card)}
        return None
    trick = match.trick()
    if trick:
        led = cards.suit_of(trick[0][1])
        if cards.suit_of(card) != led and all(cards.suit_of(c) == led for c in legal):
            return {"code": "follow_suit", "suit": cards.SUIT_CHARS[led]}
        if (match.trick_number == 0 and match.rules.first_trick_protection
                and card in cards.cards_of(match.rules.point_bits)):
            return {"code": "first_trick_points"}
        return None
    if match.trick_number == 0 and len(legal) == 1:
        return {"code": "opens_first_trick", "card": cards.card_text(legal[0])}
    if cards.suit_of(card) == cards.HEARTS and not match.hearts_broken:
        return {"code": "hearts_not_broken"}
    if card == cards.QUEEN_OF_SPADES and match.rules.queen_waits_for_hearts and not match.hearts_broken:
        return {"code": "queen_waits"}
    return None


def why_not(match: Match, card: int, legal: Sequence[int] | None = None) -> str:
    """:func:`refusal_reason` in English words ("" when none is known): what the terminal game and the
    web server's refusals say."""
    reason = refusal_reason(match, card, legal)
    if reason is None:
        return ""
    code = reason["code"]
    named = cards.card_symbol_text(cards.parse_card(reason.get("card", card)))
    words = {
        "game_over": "the game is over",
        "not_held": f"you do not hold {named}",
        "already_chosen": f"you already chose {named} to pass",
        "follow_suit": f"you must follow suit ({cards.SUIT_SYMBOLS[cards.SUIT_CHARS.index(reason.get('suit', 'C'))]})",
        "first_trick_points": "no hearts and no Q♠ on the first trick",
        "opens_first_trick": f"{named} opens the first trick",
        "hearts_not_broken": "hearts are not broken yet",
        "queen_waits": "Q♠ may not be led before hearts are broken",
    }
    return words[code]


def complete_deal(
    rules: Rules, hands: Sequence[Sequence[str | int] | None], seed: int
) -> list[list[int]]:
    """Hands for every seat: those given, the others dealt at random (from ``seed``) from the rest.

    The cards left over are the dead cards. Checking the result is ``engine.deal_from_hands``'s job.
    """
    hands = list(hands) + [None] * (rules.num_players - len(hands))
    if len(hands) > rules.num_players:
        raise ValueError(f"the deal lists {len(hands)} hands; this game has {rules.num_players} players")
    given = [None if h is None else cards.parse_cards(h) for h in hands]
    used = {c for h in given if h is not None for c in h}
    rest = [c for c in cards.cards_of(rules.deck_bits) if c not in used]
    rng = np.random.default_rng(int(seed))
    rest = [int(c) for c in rng.permutation(rest)]
    out = []
    for h in given:
        if h is None:
            h, rest = rest[: rules.hand_size], rest[rules.hand_size :]
        out.append(h)
    return out
