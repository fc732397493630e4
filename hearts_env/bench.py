"""Random-play throughput of the engine, with OpenSpiel's ``hearts`` beside it when installed.

``hearts bench`` plays uniformly random legal actions (passing included) for a fixed time at
each batch size and reports full hands per second and decisions per second, then measures the
peak memory of one batch separately (tracemalloc slows the loop, so it is not timed). Games are
played with the target score set out of reach, so every batch stays full and the figure is the
steady-state hand rate. OpenSpiel, when importable, is measured in the same run with the same
time budget: a Python loop over ``pyspiel`` states with random chance and random actions.
"""

from __future__ import annotations

import dataclasses
import time
import tracemalloc

import numpy as np

from . import cards, engine
from .rules import Rules

DEFAULT_BATCH_SIZES = (1, 64, 1024, 8192)


@dataclasses.dataclass
class BenchResult:
    name: str
    batch_size: int
    hands_per_s: float
    decisions_per_s: float
    seconds: float
    peak_memory_mb: float | None = None


def random_actions(legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random card of each legal set (0 for empty sets)."""
    choice = rng.integers(0, np.maximum(cards.count(legal), 1))
    return cards.nth_card(legal, choice)


def _endless(rules: Rules) -> Rules:
    return rules.replace(target_score=10**9)


def bench_engine(rules: Rules, batch_size: int, seconds: float, seed: int = 0) -> BenchResult:
    state = engine.init(_endless(rules), batch_size, seed)
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    first_hand = state.hand_number.copy()
    while True:
        engine.step_inplace(state, random_actions(state.legal, rng))
        decisions += batch_size
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    hands = int((state.hand_number - first_hand).sum())
    return BenchResult("hearts_env", batch_size, hands / elapsed, decisions / elapsed, elapsed)


def peak_memory_mb(rules: Rules, batch_size: int, steps: int = 130, seed: int = 0) -> float:
    """Peak NumPy/Python memory of playing ``steps`` decisions at this batch size, in MiB."""
    tracemalloc.start()
    try:
        state = engine.init(_endless(rules), batch_size, seed)
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            engine.step_inplace(state, random_actions(state.legal, rng))
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench_open_spiel(seconds: float, seed: int = 0) -> BenchResult | None:
    """OpenSpiel ``hearts`` random play, or None when ``pyspiel`` is not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    import random

    game = pyspiel.load_game("hearts")
    rng = random.Random(seed)
    hands = decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        hands += 1
    elapsed = time.perf_counter() - start
    return BenchResult("open_spiel", 1, hands / elapsed, decisions / elapsed, elapsed)


def run(
    rules: Rules,
    batch_sizes=DEFAULT_BATCH_SIZES,
    seconds: float = 3.0,
    with_open_spiel: bool = True,
    progress=None,
) -> list[BenchResult]:
    results = []
    for n in batch_sizes:
        if progress:
            progress(f"hearts_env batch {n}")
        bench_engine(rules, n, min(0.3, seconds))  # warm-up: caches and first-touch memory
        result = bench_engine(rules, n, seconds)
        result.peak_memory_mb = peak_memory_mb(rules, n)
        results.append(result)
    if with_open_spiel and rules.num_players == 4:
        if progress:
            progress("open_spiel hearts")
        reference = bench_open_spiel(seconds)
        if reference is not None:
            results.append(reference)
    return results


def format_table(results: list[BenchResult], rules: Rules) -> str:
    rows = [f"random play, rules '{rules.name}' (passing included)", ""]
    rows.append(f"{'engine':<12} {'batch':>6} {'hands/s':>12} {'decisions/s':>14} {'peak MiB':>9}")
    for r in results:
        mem = "" if r.peak_memory_mb is None else f"{r.peak_memory_mb:9.1f}"
        rows.append(f"{r.name:<12} {r.batch_size:>6} {r.hands_per_s:>12,.0f} {r.decisions_per_s:>14,.0f} {mem}")
    reference = next((r for r in results if r.name == "open_spiel"), None)
    if reference:
        best = max(r.hands_per_s for r in results if r.name == "hearts_env")
        rows.append("")
        rows.append(f"best hearts_env / open_spiel hands/s: {best / reference.hands_per_s:.1f}x")
    else:
        rows.append("")
        rows.append("open_spiel not measured (not installed, or rules are not four-player)")
    return "\n".join(rows)
