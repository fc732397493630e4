"""A heuristic bot is an ordered list of rules; the first rule that applies to a game picks its card.

Each rule is a compiled function ``rule(seat) -> card`` over one game (a ``table.Seat``),
returning the card it chooses (always one of ``seat.legal``) or -1 where it does not apply. A
level is a tuple of such rules (``rules``, its order written once, as in its docstring);
:func:`rule_chain` compiles the tuple into ``first_rule``, which tries them in that order, and the
level's kernel runs ``first_rule`` over every game of a batch. The last resort is the lowest
legal card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import numba

from hearts_env.cards import lowest_of
from hearts_env.compiled import inline

from .table import Table


@inline
def lowest_legal(s):
    """The last resort: the lowest legal card."""
    return lowest_of(s.legal)


def rule_chain(rules: Sequence[Callable]) -> Callable:
    """A compiled ``first_rule(seat) -> (card, index)``: the card of the first of ``rules`` that
    applies and its index in ``rules``; the lowest legal card and ``len(rules)`` where none does.

    It is the cascade of early returns one would write by hand (``card = rules[0](s); if card >=
    0: return card, 0; ...``), written from the tuple so that a level states its order once. (A
    chain of nested functions, one per rule, made Numba emit clashing names once inlined 26 deep.)
    The cascade is compiled without an on-disk cache, as it has no file of its own; the level's
    cached kernel holds it inlined."""
    names = {f"rule_{i}": rule for i, rule in enumerate(rules)}
    lines = ["def first_rule(s):"]
    for i, name in enumerate(names):
        lines += [f"    card = {name}(s)", "    if card >= 0:", f"        return card, {i}"]
    lines.append(f"    return lowest_legal(s), {len(rules)}")
    namespace = {**names, "lowest_legal": lowest_legal}
    exec("\n".join(lines), namespace)  # (the text above, from the rules' own names only)
    return numba.njit(inline="always")(namespace["first_rule"])


class RuleBot:
    """A level of rules: in every game of the batch, the card of the first rule that applies.

    A level sets ``rules`` (the rule functions, in the order its ``first_rule = rule_chain(rules)``
    tries them: their names explain its choices) and ``kernel``: ``kernel(table.pieces(), choice, chosen_by)`` writes
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
