"""An independent, deliberately plain reference implementation of ONE hand of Hearts.

It is written from the project's reading of the rules (``docs/rules.md``), with Python sets and
lists of card ids, one game at a time, and shares no logic with the batched engine: from the
engine package it reads only ``Rules`` option fields (and ``cards.card_text`` for messages).
The property tests step it side by side with the engine and compare every decision.

Card ids: ``13 * suit + rank``, suits C=0 D=1 H=2 S=3, ranks 2..A = 0..12 (QS=49, JD=22).
"""

from __future__ import annotations

from typing import Iterable

from hearts_env.cards import card_text
from hearts_env.rules import Rules

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
RANK_TEXT = "23456789TJQKA"
SUIT_TEXT = "CDHS"
QUEEN_OF_SPADES = 13 * SPADES + RANK_TEXT.index("Q")  # 49
JACK_OF_DIAMONDS = 13 * DIAMONDS + RANK_TEXT.index("J")  # 22
SHORT_DECK_RANKS = "2468TQA"
PASS_OFFSET = {"left": 1, "across": 2, "right": -1, "none": 0}


def suit(card: int) -> int:
    return card // 13


def rank(card: int) -> int:
    return card % 13


def parse(text: str) -> int:
    """Id of a normalised card text such as ``"2C"`` or ``"QS"``."""
    return 13 * SUIT_TEXT.index(text[1]) + RANK_TEXT.index(text[0])


def deck_of(rules: Rules) -> set[int]:
    if rules.deck == "full52":
        return set(range(52))
    return {13 * s + RANK_TEXT.index(r) for s in range(4) for r in SHORT_DECK_RANKS}


def point_cards_of(deck: Iterable[int]) -> set[int]:
    """Hearts and Q♠ of a deck."""
    return {c for c in deck if suit(c) == HEARTS or c == QUEEN_OF_SPADES}


def trump_index(rules: Rules) -> int | None:
    return None if rules.trump_suit is None else SUIT_TEXT.index(rules.trump_suit)


class ReferenceGame:
    """One hand in progress: ``phase`` is ``'pass'``, ``'play'`` or ``'done'``."""

    def __init__(
        self,
        rules: Rules,
        hands: list[Iterable[int]],
        dead: Iterable[int] = (),
        hand_number: int = 0,
        scores: Iterable[int] | None = None,
    ):
        self.rules = rules
        self.num_players = rules.num_players
        p = self.num_players
        if len(hands) != p:
            raise ValueError(f"need {p} hands, got {len(hands)}")
        self.hands = [set(int(c) for c in h) for h in hands]
        self.dead = set(int(c) for c in dead)
        self.deck = deck_of(rules)
        dealt = [c for h in self.hands for c in h]
        if len(dealt) != len(set(dealt)) or set(dealt) & self.dead:
            raise ValueError("a card is dealt twice")
        if set(dealt) | self.dead != self.deck:
            raise ValueError("hands and dead cards are not the deck")
        sizes = {len(h) for h in self.hands}
        if len(sizes) != 1:
            raise ValueError(f"hands of different sizes: {[len(h) for h in self.hands]}")
        self.hand_size = sizes.pop()
        self.dealt = [set(h) for h in self.hands]
        self.hand_number = int(hand_number)
        self.scores = [int(s) for s in scores] if scores is not None else [0] * p
        self.played = [set() for _ in range(p)]
        self.taken = [set() for _ in range(p)]
        self.trick: list[tuple[int, int]] = []  # (seat, card) in play order
        self.tricks_done = 0
        self.hearts_broken = False
        self.shown_void = [set() for _ in range(p)]  # suits each seat failed to follow
        self.history: list[int] = []
        direction = rules.pass_cycle[self.hand_number % len(rules.pass_cycle)]
        self.pass_offset = PASS_OFFSET[direction] % p
        self.picks: list[list[int]] = [[] for _ in range(p)]
        self.opening_card = next(c for c in (parse(t) for t in rules.opening_lead) if c not in self.dead)
        if self.pass_offset != 0 and rules.pass_count > 0:
            self.phase = "pass"
            self.current_player = 0
        else:
            self._start_play()

    # ---- phases -------------------------------------------------------------------------------

    def _start_play(self) -> None:
        holders = [s for s in range(self.num_players) if self.opening_card in self.hands[s]]
        assert len(holders) == 1
        self.phase = "play"
        self.leader = holders[0]
        self.current_player = holders[0]

    def _exchange(self) -> None:
        p = self.num_players
        gifts = [set(self.picks[s]) for s in range(p)]
        for s in range(p):
            self.hands[s] -= gifts[s]
        for s in range(p):
            self.hands[(s + self.pass_offset) % p] |= gifts[s]

    # ---- legal actions ------------------------------------------------------------------------

    def legal_actions(self) -> set[int]:
        if self.phase == "done":
            return set()
        seat = self.current_player
        hand = self.hands[seat]
        if self.phase == "pass":
            return hand - set(self.picks[seat])
        leading = not self.trick
        first_trick = self.tricks_done == 0
        legal = set(hand)
        # 1. follow suit if you can
        if not leading:
            led = suit(self.trick[0][1])
            same = {c for c in hand if suit(c) == led}
            if same:
                legal = same
        # 2. the first trick is opened with the opening card
        if leading and first_trick:
            legal = {self.opening_card}
        # 3. no hearts (and Q♠ when it waits) led before hearts are broken, unless nothing else
        if leading and not self.hearts_broken:
            banned = set()
            if self.rules.hearts_must_be_broken:
                banned |= {c for c in legal if suit(c) == HEARTS}
            if self.rules.queen_waits_for_hearts:
                banned.add(QUEEN_OF_SPADES)
            if legal - banned:
                legal = legal - banned
        # 4. first-trick protection: no point cards on trick one, unless nothing else
        if first_trick and not leading and self.rules.first_trick_protection:
            safe = {c for c in legal if suit(c) != HEARTS and c != QUEEN_OF_SPADES}
            if safe:
                legal = safe
        return legal

    # ---- acting -------------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        action = int(action)
        if action not in self.legal_actions():
            raise ValueError(
                f"seat {self.current_player} may not {self.phase} {card_text(action) if 0 <= action < 52 else action}"
            )
        self.history.append(action)
        seat = self.current_player
        if self.phase == "pass":
            self.picks[seat].append(action)
            while self.current_player < self.num_players and len(self.picks[self.current_player]) == self.rules.pass_count:
                self.current_player += 1
            if self.current_player == self.num_players:
                self._exchange()
                self._start_play()
            return
        self.hands[seat].remove(action)
        self.played[seat].add(action)
        if self.trick and suit(action) != suit(self.trick[0][1]):
            self.shown_void[seat].add(suit(self.trick[0][1]))
        if self.trick and suit(action) == HEARTS and suit(self.trick[0][1]) != HEARTS:
            self.hearts_broken = True
        if self.rules.queen_breaks_hearts and action == QUEEN_OF_SPADES:
            self.hearts_broken = True
        self.trick.append((seat, action))
        if len(self.trick) < self.num_players:
            self.current_player = (seat + 1) % self.num_players
            return
        winner = self._trick_winner()
        self.taken[winner] |= {c for _, c in self.trick}
        self.trick = []
        self.tricks_done += 1
        self.leader = winner
        self.current_player = winner
        if self.tricks_done == self.hand_size:
            self.phase = "done"
            self.current_player = -1

    def _trick_winner(self) -> int:
        trump = trump_index(self.rules)
        led = suit(self.trick[0][1])
        trumps = [(rank(c), s) for s, c in self.trick if trump is not None and suit(c) == trump]
        if trumps:
            return max(trumps)[1]
        return max((rank(c), s) for s, c in self.trick if suit(c) == led)[1]

    # ---- scoring ------------------------------------------------------------------------------

    def card_points(self) -> list[int]:
        """Hearts 1 each, Q♠ 13, of the cards each seat took (no moon, no J♦)."""
        return [
            sum(1 for c in t if suit(c) == HEARTS) + (13 if QUEEN_OF_SPADES in t else 0) for t in self.taken
        ]

    def shooter(self) -> int | None:
        """The seat that took every point card in play, if any."""
        in_play = point_cards_of(self.deck) - self.dead
        for s in range(self.num_players):
            if in_play <= self.taken[s]:
                return s
        return None

    def jack_points(self) -> list[int]:
        if not self.rules.jack_of_diamonds_bonus:
            return [0] * self.num_players
        return [self.rules.jack_of_diamonds_points if JACK_OF_DIAMONDS in t else 0 for t in self.taken]

    def hand_points(self) -> list[int]:
        if self.phase != "done":
            raise RuntimeError("the hand is not finished")
        p = self.num_players
        points = self.card_points()
        jack = self.jack_points()
        shooter = self.shooter()
        mode = self.rules.moon
        moon = self.rules.moon_points
        if shooter is not None and mode != "off":
            add = [0 if s == shooter else moon for s in range(p)]
            sub = [-moon if s == shooter else 0 for s in range(p)]
            if mode == "add_to_others":
                points = add
            elif mode == "subtract_from_self":
                points = sub
            else:  # shooters_choice
                totals = [self.scores[s] + add[s] + jack[s] for s in range(p)]
                lowest = min(totals)
                shooter_alone_lowest = totals[shooter] == lowest and totals.count(lowest) == 1
                if max(totals) >= self.rules.target_score and not shooter_alone_lowest:
                    points = sub
                else:
                    points = add
        return [points[s] + jack[s] for s in range(p)]

    def totals(self) -> list[int]:
        return [s + h for s, h in zip(self.scores, self.hand_points())]

    def game_over(self, totals: list[int]) -> bool:
        lowest = min(totals)
        return max(totals) >= self.rules.target_score and list(totals).count(lowest) == 1

    def winner(self, totals: list[int]) -> int:
        """Seat with the unique lowest total (only meaningful when the game is over)."""
        return list(totals).index(min(totals))
