"""A heuristic bot is an ordered list of rules; the first rule that applies to a game picks its card.

Each rule is a function ``rule(table) -> cards[N]`` returning, per game, the card it chooses
(always one of ``table.legal``) or -1 where it does not apply. The levels are lists of such rules,
so each level's code reads as the list in its docstring. The last resort is the lowest legal card.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from hearts_env import cards

from .table import Table

Rule = Callable[[Table], np.ndarray]


def first_match(table: Table, indexed_rules, none: int) -> tuple[np.ndarray, np.ndarray]:
    """Apply ``(index, rule)`` pairs in order; per game, the first card chosen and its rule's index
    (-1 and ``none`` where no rule applied)."""
    choice = np.full(table.n, -1, dtype=np.int64)
    chosen_by = np.full(table.n, none, dtype=np.int64)
    for index, rule in indexed_rules:
        pending = choice < 0
        if not pending.any():
            break
        pick = rule(table)
        take = pending & (pick >= 0)
        choice[take] = pick[take]
        chosen_by[take] = index
    return choice, chosen_by


def with_fallback(table: Table, choice: np.ndarray) -> np.ndarray:
    """``choice`` with the lowest legal card wherever no rule chose (-1)."""
    fallback = choice < 0
    choice[fallback] = cards.lowest_card(table.legal[fallback])
    return choice


class RuleBot:
    """Plays the first applicable rule of ``rules`` in every game of the batch."""

    name = "rules"
    rules: Sequence[Rule] = ()

    def __init__(self, seed: int | None = None):
        self.seed = seed  # the heuristic bots are deterministic; kept for the agent protocol

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        table = Table(observation, action_mask)
        return self.decide(table)[0]

    def decide(self, table: Table) -> tuple[np.ndarray, np.ndarray]:
        """(card per game, index of the rule that chose it; len(rules) for the fallback)."""
        choice, chosen_by = first_match(table, enumerate(self.rules), len(self.rules))
        return with_fallback(table, choice), chosen_by

    def explain(self, observation: np.ndarray, action_mask: np.ndarray) -> list[str]:
        """The name of the rule that chose each game's card (for tests and debugging)."""
        _, chosen_by = self.decide(Table(observation, action_mask))
        names = [rule.__name__ for rule in self.rules] + ["lowest_legal"]
        return [names[i] for i in chosen_by]
