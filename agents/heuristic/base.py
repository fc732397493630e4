"""A heuristic bot is an ordered list of rules; the first rule that applies to a game picks its card.

Each rule is a compiled function ``rule(seat) -> card`` over one game (a ``table.Seat``),
returning the card it chooses (always one of ``seat.legal``) or -1 where it does not apply. The
levels are lists of such rules, so each level's code reads as the list in its docstring; each
level's ``first_rule`` tries them in that order, and its kernel runs ``first_rule`` over every
game of a batch. The last resort is the lowest legal card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hearts_env.cards import lowest_of
from hearts_env.compiled import inline

from .table import Table


@inline
def lowest_legal(s):
    """The last resort: the lowest legal card."""
    return lowest_of(s.legal)


class RuleBot:
    """A level of rules: in every game of the batch, the card of the first rule that applies.

    A level sets ``rules`` (the rule functions, in the order its ``first_rule`` tries them: their
    names explain its choices) and ``kernel``: ``kernel(table.pieces(), choice, chosen_by)`` writes
    each game's card and the index in ``rules`` of the rule that chose it (``len(rules)`` for the
    fallback, the lowest legal card)."""

    name = "rules"
    rules: Sequence[Callable] = ()
    kernel: Callable

    def __init__(self, seed: int | None = None):
        self.seed = seed  # the heuristic bots are deterministic; kept for the agent protocol

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return self.decide(Table(observation, action_mask))[0]

    def decide(self, table: Table) -> tuple[np.ndarray, np.ndarray]:
        """(card per game, index of the rule that chose it; len(rules) for the fallback)."""
        choice = np.empty(table.n, dtype=np.int64)
        chosen_by = np.empty(table.n, dtype=np.int64)
        type(self).kernel(table.pieces(), choice, chosen_by)  # (from the class: a compiled function, not a method)
        return choice, chosen_by

    def explain(self, observation: np.ndarray, action_mask: np.ndarray) -> list[str]:
        """The name of the rule that chose each game's card (for tests and debugging)."""
        _, chosen_by = self.decide(Table(observation, action_mask))
        names = [rule.__name__ for rule in self.rules] + ["lowest_legal"]
        return [names[i] for i in chosen_by]
