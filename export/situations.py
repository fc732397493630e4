"""Game situations to test an export on: seat records and one-game states at real decisions.

The exporter checks onnxruntime against torch on them (``export.model.verify``) and the golden
vectors list them (``export.golden``); the load test of ``hearts serve`` posts them.
"""

from __future__ import annotations

import numpy as np

from agents import make
from hearts_env import deal, engine, loop, seat_record
from hearts_env.rule_space import RuleSpace
from hearts_env.rules import Rules
from hearts_env.state import State


def sample_states(rules: Rules, games: int, seed: int = 0, agent: str = "easy") -> list:
    """One-game states at every decision of ``games`` one-hand games (hands cycling through the
    pass directions, scores set to varied totals), played by ``agent`` in every seat; game by game,
    in order of play. Each state keeps its hand's order of play (``history``)."""
    rng = np.random.default_rng(seed)
    seeds = np.concatenate([deal.game_seeds(seed * 1000 + g, 1) for g in range(games)])
    # (the totals drawn game by game: the golden files' situations depend on this order of draws)
    scores = np.stack([rng.integers(0, rules.target_score, size=rules.num_players) for _ in range(games)])
    state = engine.init_from_seeds(rules, seeds, np.arange(games) % len(rules.pass_cycle), single_hand=True,
                                   scores=scores)
    taken: list[tuple[np.ndarray, State]] = []
    loop.play(state, [make(agent, seed=seed)], np.zeros(rules.num_players, dtype=np.int64),
              on_decision=lambda step: taken.append((step.games, step.state.take(step.rows))))
    decisions = [(int(g), k, part.take([i])) for k, (games_of, part) in enumerate(taken)
                 for i, g in enumerate(games_of)]
    return [one for _, _, one in sorted(decisions, key=lambda d: d[:2])]


def sample_records(rules: Rules, count: int, seed: int = 0, games: int = 4, agent: str = "easy") -> list[dict]:
    """``count`` seat records spread over every decision of a few games (both phases, all passes)."""
    records = [seat_record.from_state(state) for state in sample_states(rules, games, seed, agent)]
    if count >= len(records):
        return records
    picks = np.linspace(0, len(records) - 1, count).round().astype(int)
    return [records[i] for i in picks]


#: Rule sets of a space's golden records besides its base: drawn from the space by this seed.
SPACE_RULE_SETS = 3


def space_rule_sets(rules: Rules, space: RuleSpace) -> list[Rules]:
    """The rule sets the test vectors of a network of ``rules`` covering ``space`` hold: ``rules``, one
    per held-out combination (on ``rules``) and :data:`SPACE_RULE_SETS` drawn from the space (seeded);
    ``rules`` alone for a one-rule-set space."""
    if space.is_point():
        return [rules]
    rng = np.random.default_rng(0)
    held = [rules.replace(**combo) for combo in space.held_out]
    return [rules, *held, *(space.sample(rng) for _ in range(SPACE_RULE_SETS))]


def space_records(rules: Rules, space: RuleSpace, count: int, seed: int = 0) -> list[dict]:
    """``count`` seat records spread over the rule sets of :func:`space_rule_sets` (``rules`` first, with
    the remainder); for a one-rule-set space the same records as :func:`sample_records`."""
    rule_sets = space_rule_sets(rules, space)
    share, extra = divmod(count, len(rule_sets))
    return [record for k, rules in enumerate(rule_sets)
            for record in sample_records(rules, share + (extra if k == 0 else 0), seed=seed + k)]
