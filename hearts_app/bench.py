"""Throughput of the engine and the environments, with OpenSpiel's ``hearts`` beside them.

``hearts bench`` measures, for a fixed time each:

* ``engine``: uniformly random legal actions (passing included) at each batch size;
* ``engine+obs``: the same with an observation v1 and a legal mask built for every decision;
* ``aec_env``: the PettingZoo AEC env, one game, ``last()`` + ``step`` per decision;
* ``gym_env``: the Gymnasium single-seat env, one game, random learner and random opponents; its
  decisions/s count every seat's decisions (the opponents move inside the learner's steps);
* ``vector_env``: the Gymnasium vector env (learner at seat 0, random opponents, every
  opponent decision observed too) at the largest batch size; its decisions/s are the
  learner's steps/s;
* ``agent:SPEC``: moves/s of each agent (random, easy, normal, hard) deciding for a batch of
  observations taken from random mid-hand states (its decisions/s column); a search player
  (``expert`` and ``ppo-classic-search`` by default, ``search``, ``expert:N``), far slower, decides
  at its budget for a fixed batch of ``SEARCH_DECISIONS`` real card plays with a choice, taken from
  games of hard bots (a head-to-head arena of 2,000 deals asks it for about 170 per call);
* ``open_spiel`` / ``open_spiel+obs``: OpenSpiel's ``hearts`` driven by a Python loop, without and
  with ``information_state_tensor`` on every decision (only when ``pyspiel`` is installed).

Hands/s counts finished hands, decisions/s every action of every seat (12 pass picks on three
hands in four, 52 plays). Below the table, each measure's decisions/s over OpenSpiel's in the same
run: the engine alone against ``open_spiel``, everything that observes every decision against
``open_spiel+obs`` (``ratios``). Games are played with the target score out of reach, so batches stay
full and the figures are steady-state rates. Peak memory of the engine rows is measured in a
separate short run with tracemalloc (it slows the loop, so it is not timed).
"""

from __future__ import annotations

import dataclasses
import random
import time
import tracemalloc
import warnings
from typing import Callable

import numpy as np

from agents import AgentSpecError, builtin, is_slow, make
from hearts_env import cards, engine, loop
from hearts_env.aec import raw_env
from hearts_env.gym import HeartsSeatEnv, HeartsVectorEnv
from hearts_env.observe import OBS_DIM, decode, observe
from hearts_env.rules import Rules

DEFAULT_BATCH_SIZES = (1, 64, 1024, 8192)
#: The largest batch measured (twice the largest default: 32,768 games with their observations
#: already take about 1 GB), and the longest measurement.
MAX_BATCH_SIZE = 16_384
MAX_SECONDS = 3600.0
FAST_AGENTS = ("random", "easy", "normal", "hard")
#: Search players measured by default, when installed (they need the ppo-classic policy file).
SEARCH_AGENTS = ("expert", "expert-value", "ppo-classic-search")
#: Card-play decisions in the search players' batch (fewer than an arena's calls hold: a search
#: makes more decisions per second in larger batches).
SEARCH_DECISIONS = 128


def default_agents() -> tuple[str, ...]:
    """The agents ``hearts bench`` measures unless told: the bots and the installed search players."""
    return FAST_AGENTS + tuple(spec for spec in SEARCH_AGENTS if spec in builtin(slow=True))


def is_search_agent(spec: str) -> bool:
    """A search player (``expert:N`` too): measured on ``SEARCH_DECISIONS`` decisions."""
    return is_slow(spec)


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
    legal = np.asarray(legal)
    return cards.uniform_cards(legal, rng.random(legal.size))


class RandomCards:
    """Uniformly random legal cards for the timed loops, the uniform numbers drawn in blocks: one
    ``rng.random`` call per step would cost more than the engine's own step at batch 1 (the
    OpenSpiel loop beside it picks with Python's ``random.choice``, as cheap)."""

    def __init__(self, rng: np.random.Generator, batch_size: int):
        self.rng, self.batch_size = rng, batch_size
        self.rows = max(1, 2**16 // batch_size)
        self.block, self.row = None, self.rows
        self.out = np.empty(batch_size, dtype=np.int64)

    def __call__(self, legal: np.ndarray) -> np.ndarray:
        if self.row == self.rows:
            self.block, self.row = self.rng.random((self.rows, self.batch_size)), 0
        self.row += 1
        return cards.uniform_cards(legal, self.block[self.row - 1], self.out)


def _endless(rules: Rules) -> Rules:
    return rules.replace(target_score=10**9)


def _timed(step: Callable[[], int], seconds: float, finished: Callable[[], bool] = lambda: True) -> tuple[int, float]:
    """Call ``step`` (returning decisions made) until ``seconds`` pass and ``finished()`` (e.g. a
    whole hand was played, so a hands/s figure is never a zero from a short or starved run);
    (decisions, elapsed)."""
    decisions = 0
    start = time.perf_counter()
    while True:
        decisions += step()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and finished():
            return decisions, elapsed


def bench_engine(rules: Rules, batch_size: int, seconds: float, seed: int = 0, with_obs: bool = False) -> BenchResult:
    state = engine.init(_endless(rules), batch_size, seed)
    pick = RandomCards(np.random.default_rng(seed), batch_size)
    buffer = np.zeros((batch_size, OBS_DIM), dtype=np.float32)
    first_hand = state.hand_number.copy()

    # Small batches take several steps per timed call, so the timing loop's own cost does not count
    # (the OpenSpiel loop beside it also times whole hands).
    steps_per_call = max(1, 64 // batch_size)

    def step() -> int:
        for _ in range(steps_per_call):
            if with_obs:
                observe(state, out=buffer)
                engine.legal_mask(state)
            engine.step_inplace(state, pick(state.legal))
        return batch_size * steps_per_call

    decisions, elapsed = _timed(step, seconds, finished=lambda: bool((state.hand_number > first_hand).any()))
    hands = int((state.hand_number - first_hand).sum())
    name = "engine+obs" if with_obs else "engine"
    return BenchResult(name, batch_size, hands / elapsed, decisions / elapsed, elapsed)


def peak_memory_mb(rules: Rules, batch_size: int, steps: int = 130, seed: int = 0, with_obs: bool = False) -> float:
    """Peak NumPy/Python memory of playing ``steps`` decisions at this batch size, in MiB."""
    tracemalloc.start()
    try:
        state = engine.init(_endless(rules), batch_size, seed)
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            if with_obs:
                observe(state)
                engine.legal_mask(state)
            engine.step_inplace(state, random_actions(state.legal, rng))
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench_aec(rules: Rules, seconds: float, seed: int = 0) -> BenchResult:
    """The PettingZoo AEC env, one game, hand episodes, random legal actions from the mask."""
    env = raw_env(rules=rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    hands = 0

    def episode() -> int:
        nonlocal hands
        env.reset()
        made = 0
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            made += 1
        hands += 1
        return made

    decisions, elapsed = _timed(episode, seconds)
    return BenchResult("aec_env", 1, hands / elapsed, decisions / elapsed, elapsed)


def bench_gym(rules: Rules, seconds: float, seed: int = 0) -> BenchResult:
    """The Gymnasium single-seat env, one game, hand episodes: a random learner at seat 0 against
    random opponents. Its decisions/s count every seat's decisions (the learner's steps and the
    opponents' moves made inside them), so it compares with the other rows per decision."""
    env = HeartsSeatEnv(rules=rules, opponents="random")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    hands = 0

    def episode() -> int:
        nonlocal hands
        _, info = env.reset()
        terminated = False
        while not terminated:
            legal = np.flatnonzero(info["action_mask"])
            _, _, terminated, _, info = env.step(int(legal[rng.integers(legal.size)]))
        hands += 1
        return int(env.tables.state.last_hand_length[0])  # every seat's actions in the hand

    decisions, elapsed = _timed(episode, seconds)
    return BenchResult("gym_env", 1, hands / elapsed, decisions / elapsed, elapsed)


def bench_vector(rules: Rules, num_envs: int, seconds: float, seed: int = 0) -> BenchResult:
    """The Gymnasium vector env: learner at seat 0 acting randomly, random opponents.

    Its decisions/s are the learner's env steps per second (each also runs the opponents'
    observed decisions up to the learner's next turn).
    """
    env = HeartsVectorEnv(num_envs=num_envs, rules=rules, opponents="random")
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    hands = 0

    def step() -> int:
        nonlocal hands, info
        legal = cards.from_mask(info["action_mask"].astype(bool))
        _, _, terminated, _, info = env.step(random_actions(legal, rng))
        hands += int(terminated.sum())
        return num_envs

    steps, elapsed = _timed(step, seconds, finished=lambda: hands > 0)
    return BenchResult("vector_env", num_envs, hands / elapsed, steps / elapsed, elapsed)


def bench_agents(rules: Rules, specs: list[str], batch_size: int, seconds: float, seed: int = 0) -> list[BenchResult]:
    """Moves/s of each agent deciding for a batch of observations from random mid-hand states."""
    state = engine.init(_endless(rules), batch_size, seed)
    rng = np.random.default_rng(seed)
    samples = []
    for step in range(64):  # states spread over a hand: passing, early and late tricks
        if step % 8 == 0:
            samples.append((observe(state), engine.legal_mask(state)))
        engine.step_inplace(state, random_actions(state.legal, rng))
    results = []
    for spec in specs:
        agent = make(spec, seed=seed)
        agent.act(*samples[0])  # warm-up: the first call may compile the agent's kernels
        calls = 0

        def decide() -> int:
            nonlocal calls
            obs, mask = samples[calls % len(samples)]
            agent.act(obs, mask)
            calls += 1
            return batch_size

        moves, elapsed = _timed(decide, seconds)
        results.append(BenchResult(f"agent:{spec}", batch_size, 0.0, moves / elapsed, elapsed))
    return results


def search_decisions(rules: Rules, count: int = SEARCH_DECISIONS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` card plays with a choice (observations, masks), spread over the hands of four
    hard bots playing eight deals."""
    state = engine.init(rules, 8, seed)
    seen = []
    loop.play(state, [make("hard", rules=rules)], [0] * rules.num_players, until="hand",
              on_decision=lambda d: seen.append((d.observation.copy(), d.mask.copy())))
    obs = np.concatenate([o for o, _ in seen])
    mask = np.concatenate([m for _, m in seen])
    rows = ((decode(obs)["phase"][:, 1] > 0) & (mask.sum(axis=1) > 1)).nonzero()[0]
    rows = rows[np.linspace(0, rows.size - 1, count).round().astype(int)]
    return obs[rows], mask[rows]


def bench_search(rules: Rules, spec: str, seconds: float, seed: int = 0) -> BenchResult:
    """Decisions/s of a search player at its default budget, on :func:`search_decisions`."""
    agent = make(spec, seed=seed, rules=rules)
    obs, mask = search_decisions(rules, seed=seed)
    agent.act(obs[:1], mask[:1])  # warm-up: the first call may compile kernels

    def decide() -> int:
        agent.act(obs, mask)
        return len(obs)

    moves, elapsed = _timed(decide, seconds)
    return BenchResult(f"agent:{spec}", len(obs), 0.0, moves / elapsed, elapsed)


def bench_open_spiel(seconds: float, seed: int = 0, with_obs: bool = False) -> BenchResult | None:
    """OpenSpiel ``hearts`` random play, or None when ``pyspiel`` is not installed."""
    try:
        import pyspiel  # the bench extra (OpenSpiel): measured only when installed
    except ImportError:
        return None
    game = pyspiel.load_game("hearts")
    rng = random.Random(seed)
    hands = 0

    def hand() -> int:
        nonlocal hands
        state = game.new_initial_state()
        made = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                if with_obs:
                    state.information_state_tensor(state.current_player())
                state.apply_action(rng.choice(state.legal_actions()))
                made += 1
        hands += 1
        return made

    decisions, elapsed = _timed(hand, seconds)
    name = "open_spiel+obs" if with_obs else "open_spiel"
    return BenchResult(name, 1, hands / elapsed, decisions / elapsed, elapsed)


def run(
    rules: Rules,
    batch_sizes=DEFAULT_BATCH_SIZES,
    seconds: float = 3.0,
    with_open_spiel: bool = True,
    with_envs: bool = True,
    agent_specs: tuple[str, ...] | None = None,
    progress=None,
) -> list[BenchResult]:
    """Every measure; ``agent_specs`` default :func:`default_agents`."""
    say = progress or (lambda message: None)
    results = []
    for with_obs in (False, True):
        for n in batch_sizes:
            label = "engine+obs" if with_obs else "engine"
            say(f"{label} batch {n}")
            bench_engine(rules, n, min(0.3, seconds), with_obs=with_obs)  # warm-up
            result = bench_engine(rules, n, seconds, with_obs=with_obs)
            result.peak_memory_mb = peak_memory_mb(rules, n, with_obs=with_obs)
            results.append(result)
    if with_envs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            say("PettingZoo AEC env")
            bench_aec(rules, 0.0)  # warm-ups (one hand each): the first calls may compile kernels
            bench_gym(rules, 0.0)
            results.append(bench_aec(rules, seconds))
            say("Gymnasium single-seat env")
            results.append(bench_gym(rules, seconds))
            say(f"Gymnasium vector env, {max(batch_sizes)} games")
            results.append(bench_vector(rules, max(batch_sizes), seconds))
    if agent_specs is None:
        agent_specs = default_agents()
    fast = [spec for spec in agent_specs if not is_search_agent(spec)]
    if fast:
        say(f"agents {', '.join(fast)} at batch {max(batch_sizes)}")
        results.extend(bench_agents(rules, fast, max(batch_sizes), seconds))
    for spec in agent_specs:
        if not is_search_agent(spec):
            continue
        say(f"search player {spec} on {SEARCH_DECISIONS} card plays")
        try:
            results.append(bench_search(rules, spec, seconds))
        except AgentSpecError as err:  # (rules it does not play, a policy file not installed, a typo)
            say(f"{spec} skipped: {err}")
    if with_open_spiel and rules.num_players == 4:
        for with_obs in (False, True):
            say("OpenSpiel hearts" + (" with information_state_tensor" if with_obs else ""))
            reference = bench_open_spiel(seconds, with_obs=with_obs)
            if reference is not None:
                results.append(reference)
    return results


def format_table(results: list[BenchResult], rules: Rules) -> str:
    rows = [f"random play, rules '{rules.name}' (passing included)", ""]
    width = max([15] + [len(r.name) for r in results])
    rows.append(f"{'measure':<{width}} {'batch':>6} {'hands/s':>12} {'decisions/s':>14} {'peak MiB':>9}")
    for r in results:
        mem = "" if r.peak_memory_mb is None else f"{r.peak_memory_mb:9.1f}"
        hands = "" if r.name.startswith("agent:") else f"{r.hands_per_s:,.0f}"
        rate = f"{r.decisions_per_s:>14,.0f}" if r.decisions_per_s >= 100 else f"{r.decisions_per_s:>14,.1f}"
        rows.append(f"{r.name:<{width}} {r.batch_size:>6} {hands:>12} {rate} {mem}")
    rows.append("")
    found = ratios(results)
    if found:
        rows.append("per decision, against OpenSpiel in this run:")
        width = max(len(label) for label in found)
        rows.extend(f"  {label:<{width}}  {value:6.2f}x" for label, value in found.items())
    else:
        rows.append("open_spiel not measured (not installed, or rules are not four-player)")
    return "\n".join(rows)


#: (our measure, OpenSpiel's measure it is compared with): the engine alone with OpenSpiel alone, and
#: everything that builds an observation for every decision with OpenSpiel computing its
#: information-state tensor for every decision.
COMPARISONS = (("engine", "open_spiel"), ("engine+obs", "open_spiel+obs"), ("aec_env", "open_spiel+obs"),
               ("gym_env", "open_spiel+obs"))


def ratios(results: list[BenchResult]) -> dict[str, float]:
    """Decisions/s of each single-game and batched measure over OpenSpiel's, by label."""
    by_name = {}
    for r in results:
        by_name.setdefault(r.name, []).append(r)
    out = {}
    for ours, theirs in COMPARISONS:
        if theirs not in by_name:
            continue
        reference = by_name[theirs][0].decisions_per_s
        for r in by_name.get(ours, []):
            out[f"{ours} batch {r.batch_size} / {theirs}"] = r.decisions_per_s / reference
    return out
