"""The interactive game: you (South, player_0) against agents, one action at a time.

``HumanGame.run()`` loops until the game is over (or ``hands`` hands were played): on your turn it
shows the table and reads a line; otherwise the opponents play on through the shared play loop
(``hearts_env.loop``), each agent getting only the observation and legal mask of its seat, until
it is your turn. Every action goes through the engine, which refuses illegal cards; bad input
never reaches it.

Input (see ``docs/play.md``): a card as text (``QS``, ``10h``, ``q♠``) or its number in the shown
hand; when passing, one card per prompt or several at once (``QS AS KS``). Words: ``help``,
``show``, ``save``, ``quit``. An empty line, a typo, a card you do not hold, an illegal card or
Ctrl-D gets one line naming the legal cards, and the same prompt again. Ctrl-C asks whether to
save and quit. Three end-of-inputs in a row (a closed pipe) save the game and stop.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from rich.console import Console
from rich.text import Text

from hearts_env import cards, engine

from ..session import records
from ..session.match import Event, HandStarted, Match, why_not
from . import screen

HUMAN = 0
EOF_LIMIT = 3

HELP = """\
Type a card as rank + suit: QS, 10h, q♠, t♥ (ranks 2-9, 10 or T, J, Q, K, A; suits C D H S or ♣ ♦ ♥ ♠),
or the card's number from your hand (the n: before it). Cards marked * are legal.
Passing: one card per prompt, or several at once: QS AS KS.
Words: show (the table again), save (save the record now), quit (save and quit), help.
Ctrl-C asks whether to save and quit; a saved game continues with: hearts play --resume FILE"""


class InputError(ValueError):
    """A line that names no usable card; the message says why, in one line."""


class InputClosed(Exception):
    """Standard input ended for good (end of input several times in a row)."""


class AgentFailed(RuntimeError):
    """An opponent chose an illegal action or failed: a bug in that agent."""


def parse_choice(
    line: str, hand: Sequence[int], legal: Sequence[int], passing: bool, picks_left: int = 1,
    match: Match | None = None,
) -> list[int]:
    """The card ids a line names, checked against the hand and the legal cards; else InputError.

    Numbers are 1-based positions in ``hand`` (sorted by suit, then rank, as shown).
    """
    tokens = line.replace(",", " ").split()
    if not tokens:
        raise InputError("empty line: type a card (e.g. QS, 10h, q♠) or its number")
    chosen = []
    for token in tokens:
        if token.isdigit():
            n = int(token)
            if not 1 <= n <= len(hand):
                raise InputError(f"there is no card number {n}: your cards are numbered 1 to {len(hand)}")
            chosen.append(hand[n - 1])
            continue
        try:
            card = cards.parse_card(token)
        except ValueError:
            raise InputError(
                f"{token!r} is not a card: write rank and suit (QS, 10h, q♠) or the card's number"
            ) from None
        if card not in hand:
            raise InputError(f"you do not hold {cards.card_symbol_text(card)}")
        chosen.append(card)
    if passing:
        if len(set(chosen)) != len(chosen):
            raise InputError("you named a card twice")
        if len(chosen) > picks_left:
            raise InputError(f"you have {picks_left} more card{'s' if picks_left != 1 else ''} to pass, "
                             f"not {len(chosen)}")
        for card in chosen:
            if card not in legal:
                raise InputError(f"you already chose {cards.card_symbol_text(card)} to pass")
        return chosen
    if len(chosen) > 1:
        raise InputError("play one card at a time")
    card = chosen[0]
    if card not in legal:
        reason = why_not(match, card, legal) if match is not None else ""
        because = f": {reason}" if reason else ""
        raise InputError(f"{cards.card_symbol_text(card)} cannot be played now{because}")
    return chosen


class HumanGame:
    """You at seat 0 against ``opponents`` (one agent per other seat), on ``match``."""

    def __init__(
        self,
        match: Match,
        opponents: dict[int, object],
        specs: Sequence[str],
        console: Console,
        save_path: Path | None = None,
        default_save: Path | None = None,
        hands: int | None = None,
        read_line: Callable[[str], str] | None = None,
    ):
        self.match = match
        self.opponents = opponents
        self.specs = list(specs)  # per seat, "human" for seat 0
        self.console = console
        self.save_path = save_path
        self.default_save = default_save or Path("hearts-game.jsonl")
        self.hands_limit = hands
        self.read_line = read_line or (lambda prompt: console.input(prompt, markup=False, emoji=False))
        self.eofs = 0
        self.reading = False  # inside a prompt: Ctrl-C interrupts it
        self.interrupted = False  # Ctrl-C came outside a prompt: ask at the next safe point
        self.start_hands = match.hands_finished
        compass = screen.seat_names(match.num_players)
        self.names = ["You"] + list(compass[1:])

    # ---- the loop ------------------------------------------------------------------------------

    def run(self, resumed: bool = False) -> int:
        """Play until the game is over (0), ``hands`` hands were played (0), the player saves and
        quits (0), input closes (1, saved) or an opponent fails (1, saved)."""
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, self._on_sigint) if main_thread else None
        try:
            return self._loop(resumed)
        finally:
            if main_thread:
                signal.signal(signal.SIGINT, previous)

    def _on_sigint(self, signum, frame) -> None:
        # Ctrl-C interrupts a prompt at once; elsewhere (an opponent thinking, a card being applied)
        # it waits for the end of that action, so no move is half recorded.
        if self.reading:
            raise KeyboardInterrupt
        self.interrupted = True

    def read(self, prompt: str) -> str:
        self.reading = True
        try:
            return self.read_line(prompt)
        finally:
            self.reading = False

    def _loop(self, resumed: bool) -> int:
        m = self.match
        self.show_start(resumed)
        saved_hands = m.hands_finished
        while True:
            if self.save_path is not None and m.hands_finished != saved_hands:
                self.save()  # after every hand
                saved_hands = m.hands_finished
            if m.over:
                self.finish()
                return 0
            if self.hands_limit is not None and m.hands_finished - self.start_hands >= self.hands_limit:
                where = self.save()
                self.console.print(f"Stopped after {self.hands_limit} hand(s) (--hands). "
                                   f"Continue with: hearts play --resume {where}")
                return 0
            try:
                if self.interrupted:
                    self.interrupted = False
                    raise KeyboardInterrupt
                if m.to_act == HUMAN:
                    self.human_turn()
                else:
                    self.opponent_turn()
            except _Quit:
                return self.save_and_quit()
            except KeyboardInterrupt:
                if self.ask_save_and_quit():
                    return self.save_and_quit()
            except InputClosed:
                where = self.save()
                self.console.print(f"\nInput closed: the game is saved to {where}; "
                                   f"continue with: hearts play --resume {where}")
                return 1
            except AgentFailed as err:
                where = self.save()
                self.console.print(f"\nError: {err}\nThe game so far is saved to {where}.")
                return 1

    def opponent_turn(self) -> None:
        """The opponents play on, through the shared play loop, until it is your turn or the game ends."""
        m = self.match
        seats = sorted(self.opponents)
        seating = np.full(m.num_players, -1)  # -1: your seat, left to you
        seating[seats] = np.arange(len(seats))
        try:
            events = m.play_agents([self.opponents[s] for s in seats], seating)
        except engine.IllegalActionError as err:
            raise AgentFailed(f"{self.who(m.to_act)} chose an illegal card: {err}") from None
        except Exception as err:  # an agent's bug ends the game, saved, with one line instead of a traceback
            raise AgentFailed(f"{self.who(m.to_act)} failed: {type(err).__name__}: {err}") from None
        self.show(events)

    def who(self, seat: int) -> str:
        return f"{self.names[seat]} ({self.specs[seat]})"

    def human_turn(self) -> None:
        m = self.match
        self.show_table()
        while True:
            hand, legal = m.hand(HUMAN), m.legal()
            picks_left = m.rules.pass_count - len(m.chosen_to_pass(HUMAN)) if m.passing else 1
            try:
                line = self.read(self.prompt(picks_left))
            except EOFError:
                self.eofs += 1
                if self.eofs >= EOF_LIMIT:
                    raise InputClosed from None
                self.error("end of input (Ctrl-D): type a card, or quit", legal, newline=True)
                continue
            self.eofs = 0
            word = line.strip().lower()
            if word in ("help", "?", "h"):
                self.console.print(HELP, markup=False)
                continue
            if word in ("show", "table"):
                self.show_table()
                continue
            if word == "save":
                where = self.save()
                self.console.print(f"Saved to {where}.")
                continue
            if word in ("quit", "exit", "q"):
                if self.ask_save_and_quit():
                    raise _Quit
                continue
            try:
                chosen = parse_choice(line, hand, legal, m.passing, picks_left, m)
            except InputError as err:
                self.error(str(err), legal)
                continue
            for card in chosen:
                self.show(m.step(card))
            return

    # ---- saving and quitting -------------------------------------------------------------------

    def ask_save_and_quit(self) -> bool:
        """Ctrl-C: y saves and quits, n continues; a second Ctrl-C counts as y."""
        while True:
            try:
                answer = self.read("\nSave and quit? [y/n] ").strip().lower()
            except KeyboardInterrupt:
                return True
            except EOFError:
                return False
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no"):
                self.console.print("Continuing.")
                return False

    def save_and_quit(self) -> int:
        where = self.save()
        self.console.print(f"Saved to {where}. Continue with: hearts play --resume {where}")
        return 0

    def save(self) -> Path:
        path = self.save_path or self.default_save
        return records.save(path, self.match, self.specs)

    def finish(self) -> None:
        """The game is over: save the record (asked first when no --save was given)."""
        if self.save_path is not None:
            self.console.print(f"Record saved to {self.save()}.")
            return
        while True:
            try:
                answer = self.read(f"Save the game record to {self.default_save}? [y/n] ").strip().lower()
            except (EOFError, KeyboardInterrupt):
                answer = "n"
            if answer in ("y", "yes"):
                self.console.print(f"Record saved to {self.save()}.")
            if answer in ("y", "yes", "n", "no"):
                return

    # ---- output -------------------------------------------------------------------------------

    def prompt(self, picks_left: int) -> str:
        m = self.match
        if m.passing:
            n = m.rules.pass_count
            target = self.names[(HUMAN + m.pass_offset()) % m.num_players]
            return f"Pass card {n - picks_left + 1} of {n} to {target} > "
        return f"Your play (legal: {screen.plain_cards(m.legal())}) > "

    def error(self, message: str, legal: Sequence[int], newline: bool = False) -> None:
        what = "you may pick" if self.match.passing else "legal"
        text = f"✗ {message}; {what}: {screen.plain_cards(legal)}"
        line = Text(("\n" if newline else "") + text, style="yellow")
        self.console.print(line)

    def show(self, events: list[Event]) -> None:
        for event in events:
            text = screen.describe(event, self.names, human=HUMAN, num_players=self.match.num_players)
            if text is not None:
                self.console.print(text)

    def show_start(self, resumed: bool) -> None:
        m = self.match
        opponents = " · ".join(f"{self.names[s]}: {self.specs[s]}" for s in range(1, m.num_players))
        what = "Resumed" if resumed else "New game"
        self.console.print(Text(
            f"{what}: rules {m.rules.name!r} to {m.rules.target_score} · seed {m.seed} · you are South"
            f" · {opponents}",
            style="bold"))
        if not resumed:
            self.console.print("Type help for the input forms; Ctrl-C to save and quit.")
        if resumed:
            trick = min(m.trick_number + 1, m.rules.hand_size)
            self.console.print(f"Hand {m.hand_number + 1}, trick {trick}; "
                               f"scores: " + ", ".join(f"{n} {s}" for n, s in zip(self.names, m.scores)))
        else:
            self.console.print(screen.describe(
                HandStarted(m.hand_number, m.rules.pass_direction(m.hand_number), m.pass_offset()),
                self.names, human=HUMAN, num_players=m.num_players))

    def show_table(self) -> None:
        m, c = self.match, self.console
        hand = m.hand(HUMAN)
        direction = m.rules.pass_direction(m.hand_number)
        pass_text = "no pass" if direction == "none" else f"pass {direction}"
        if m.passing:
            target = self.names[(HUMAN + m.pass_offset()) % m.num_players]
            c.print(Text(f"\nHand {m.hand_number + 1} · {pass_text}: choose {m.rules.pass_count} cards "
                         f"to pass to {target}", style="bold"))
            for row in screen.score_lines(self.names, m.scores, m.card_points(), m.tricks_won()):
                c.print(row)
            chosen = m.chosen_to_pass(HUMAN)
            c.print("Your hand (* = may pass, > = chosen):")
            for row in screen.hand_rows(hand, legal=m.legal(), chosen=chosen):
                c.print(row)
            return
        hearts = "hearts broken" if m.hearts_broken else "hearts not broken"
        c.print(Text(f"\nHand {m.hand_number + 1} · {pass_text} · trick {m.trick_number + 1} of "
                     f"{m.rules.hand_size} · {hearts}", style="bold"))
        for row in screen.score_lines(self.names, m.scores, m.card_points(), m.tricks_won(), to_act=m.to_act):
            c.print(row)
        trick = m.trick()
        line = Text("Trick: ")
        if trick:
            line.append_text(screen.trick_text(trick, self.names))
            line.append(" · You ?")
        else:
            line.append("you lead")
        c.print(line)
        received = m.received(HUMAN)
        if received and m.trick_number == 0:
            extra = Text("(received: ")
            extra.append_text(screen.card_list(received))
            extra.append(")")
            c.print(extra)
        c.print("Your hand (* = legal):")
        for row in screen.hand_rows(hand, legal=m.legal()):
            c.print(row)


class _Quit(KeyboardInterrupt):
    """``quit`` typed and confirmed: handled like a confirmed Ctrl-C."""
