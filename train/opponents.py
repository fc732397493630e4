"""The league: who sits in each seat of the learner's tables.

Each seat of each table is drawn by weight from: the current policy (shared weights; its
decisions are the ones trained on), a past snapshot of the policy, or a heuristic bot. Every table
keeps at least ``min_learners`` current-policy seats. Snapshots are added on a schedule and the
oldest dropped past ``max_snapshots``.

Seats are coded as small integers per table: ``CURRENT`` (-1), a snapshot index (0..), or a bot
code (``BOT_BASE + i``), so one step groups the games by who is to act with array operations.
"""

from __future__ import annotations

import copy

import numpy as np

from agents import make
from agents.policy import PolicyAgent, PolicyNet
from hearts_env.rules import Rules

from .config import LeagueConfig

CURRENT = -1
BOT_BASE = 1000


class League:
    def __init__(self, config: LeagueConfig, rules: Rules, seed: int = 0):
        self.config = config
        self.num_players = rules.num_players
        self.bot_specs = [spec for spec, weight in config.bots.items() if weight > 0]
        # rules: a bot made for other rules (a trained policy) is refused rather than seated.
        self.bots = [make(spec, seed=seed + i, rules=rules) for i, spec in enumerate(self.bot_specs)]
        self.snapshots: list[PolicyAgent] = []
        self.snapshot_steps: list[int] = []

    def add_snapshot(self, net: PolicyNet, step: int) -> None:
        frozen = copy.deepcopy(net).cpu().eval()
        self.snapshots.append(PolicyAgent(frozen, name=f"snapshot@{step}", sample=True, seed=step))
        self.snapshot_steps.append(step)
        if len(self.snapshots) > self.config.max_snapshots:
            self.snapshots.pop(0)
            self.snapshot_steps.pop(0)

    def snapshot_states(self) -> list[tuple[int, dict]]:
        """``(step, state_dict)`` of each snapshot, oldest first: what a rollout worker's league needs."""
        return [(step, agent.net.state_dict()) for step, agent in zip(self.snapshot_steps, self.snapshots)]

    def replace_snapshots(self, states: list[tuple[int, dict]], hidden: list[int]) -> None:
        """Hold exactly the snapshots ``states`` (of :meth:`snapshot_states`; networks of ``hidden`` layers)."""
        self.snapshots, self.snapshot_steps = [], []
        for step, weights in states:
            net = PolicyNet(hidden=hidden)
            net.load_state_dict(weights)
            self.add_snapshot(net, step)

    def reseed(self, seed: int) -> None:
        """Seed the sampling of every snapshot and every bot that draws random numbers afresh (each
        iteration and each shard of it), so a resumed run, whose snapshots were reloaded from disk,
        samples exactly as the uninterrupted run did, and a shard plays the same in any process."""
        for index, snapshot in enumerate(self.snapshots):
            snapshot.generator.manual_seed(seed + index)
        for index, bot in enumerate(self.bots):
            if hasattr(bot, "reseed"):
                bot.reseed(seed + BOT_BASE + index)

    def sample_tables(self, num_tables: int, rng: np.random.Generator) -> np.ndarray:
        """``[tables, P]`` seat codes."""
        codes = [CURRENT]
        weights = [self.config.current]
        if self.snapshots:
            share = self.config.snapshots / len(self.snapshots)
            codes += list(range(len(self.snapshots)))
            weights += [share] * len(self.snapshots)
        for i, spec in enumerate(self.bot_specs):
            codes.append(BOT_BASE + i)
            weights.append(self.config.bots[spec])
        weights = np.asarray(weights, dtype=np.float64)
        seats = rng.choice(np.asarray(codes), size=(num_tables, self.num_players), p=weights / weights.sum())
        # Guarantee the learner its seats: the first ``min_learners`` of a random seat order.
        need = min(self.config.min_learners, self.num_players)
        order = rng.permutation(self.num_players)
        for k in range(need):
            short = (seats == CURRENT).sum(axis=1) < need
            seats[short, order[k]] = CURRENT
        return seats

    def agent(self, code: int):
        if code >= BOT_BASE:
            return self.bots[code - BOT_BASE]
        return self.snapshots[code]

    def describe(self, code: int) -> str:
        if code == CURRENT:
            return "current"
        if code >= BOT_BASE:
            return self.bot_specs[code - BOT_BASE]
        return f"snapshot@{self.snapshot_steps[code]}"
