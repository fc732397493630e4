"""Game situations to test an export on: seat records and one-game states at real decisions.

The exporter checks onnxruntime against torch on them (``export.model.verify``) and the golden
vectors list them (``export.golden``); the load test of ``hearts serve`` posts them.
"""

from __future__ import annotations

import numpy as np

from agents import make
from hearts_env import deal, engine, loop, seat_record
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
