"""PPO's rollouts: one iteration's tables planned, split into shards, played, and merged.

The driver draws an iteration's :class:`TablePlan` (deals, pass directions, rule sets, who sits where,
the seeds of the sampling) from ``(seed, iteration)``. The plan's tables are split into
``rollout_shards`` contiguous shards (:func:`shards`), each with sampling seeds of its own; a shard
is played by :func:`play_shard` in this process or in a rollout worker (train/rollout_workers.py,
or a Ray actor from eval/cluster.py), and the shards' :class:`Rollout`\\ s are merged in table order
(:func:`merge`). What a shard plays depends only on the plan, the weights and the league's snapshots,
never on which worker plays it or on how many workers there are: with the same config (its
``rollout_shards`` included) a run trains the same weights in one process, on any number of local
workers, or on Ray. Shard 0 takes the plan's own seeds, so one shard is the whole rollout as one
batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from agents.policy import PolicyNet
from hearts_env import deal, engine, loop
from hearts_env.observe import OBS_DIM
from hearts_env.rule_space import table_groups
from hearts_env.rules import Rules

from .config import REWARD_SCALE, TrainConfig
from .critic import HIDDEN_WIDTH, CriticNet, hidden_hands
from .critic import values as critic_values
from .opponents import CURRENT, League


def iteration_rng(seed: int, iteration: int) -> np.random.Generator:
    return np.random.default_rng([seed, iteration])


@dataclass
class Rollout:
    obs: np.ndarray  # [T, OBS_DIM] float32, one row per learner decision
    mask: np.ndarray  # [T, 52] bool
    action: np.ndarray  # [T]
    logp: np.ndarray  # [T]
    advantage: np.ndarray  # [T]
    returns: np.ndarray  # [T]
    value: np.ndarray  # [T]
    decisions: int  # all decisions played, every seat
    learner_points: np.ndarray  # penalty points of each learner seat's hand
    moons_made: float  # the share of learner seats that shot the moon
    moons_suffered: float  # the share of learner seats against whom another seat shot it
    hidden: np.ndarray | None = None  # [T, HIDDEN_WIDTH] bool: the other seats' hands (a full-information critic's)


@dataclass
class TablePlan:
    """What one iteration's tables (or a shard of them) play: drawn by the driver, played anywhere."""

    seeds: np.ndarray  # [tables] deal seeds
    hand_numbers: np.ndarray  # [tables] hand number of each deal (its pass direction)
    groups: list[tuple[Rules, int]]  # consecutive tables playing one rule set: (rules, how many)
    seats: np.ndarray  # [tables, P] league seat codes (CURRENT, a snapshot index, a bot code)
    league_seed: int  # the league's sampling seed (League.reseed)
    learner_seed: int  # the current policy's sampling seed

    @property
    def tables(self) -> int:
        return len(self.seeds)


def plan_tables(league: League, rules: Rules, config: TrainConfig, iteration: int) -> TablePlan:
    """The tables of iteration ``iteration``, drawn from ``(config.seed, iteration)`` alone."""
    rng = iteration_rng(config.seed, iteration)
    tables = config.num_tables
    seeds = deal.game_seeds(config.seed * 1_000_003 + iteration, tables)
    space = config.rule_space_value
    if space is None:
        groups = [(rules, tables)]
        hand_numbers = rng.integers(len(rules.pass_cycle), size=tables)
    else:  # tables in groups, each at a rule set of the space (the engine steps one rule set per batch)
        groups = table_groups(space, tables, config.rule_sets_per_round, rng)
        hand_numbers = np.concatenate([rng.integers(len(r.pass_cycle), size=n) for r, n in groups])
    seats = league.sample_tables(tables, rng)
    league_seed = int(rng.integers(2**62))
    learner_seed = int(rng.integers(2**62))
    return TablePlan(seeds, hand_numbers, groups, seats, league_seed, learner_seed)


def shards(plan: TablePlan, count: int) -> list[TablePlan]:
    """``plan`` split into ``count`` shards of consecutive tables (sizes differing by one at most);
    shard 0 keeps the plan's seeds, shard k > 0 gets seeds drawn from them and k."""
    bounds = np.linspace(0, plan.tables, count + 1).round().astype(int)
    out = []
    for k, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
        groups, first = [], 0
        for rules, size in plan.groups:  # the rule-set groups, clipped to [start, stop)
            overlap = min(stop, first + size) - max(start, first)
            if overlap > 0:
                groups.append((rules, int(overlap)))
            first += size
        league_seed, learner_seed = plan.league_seed, plan.learner_seed
        if k:
            league_seed, learner_seed = (int(s) for s in np.random.default_rng([plan.learner_seed, k]).integers(
                2**62, size=2))
        out.append(TablePlan(plan.seeds[start:stop], plan.hand_numbers[start:stop], groups, plan.seats[start:stop],
                             league_seed, learner_seed))
    return out


def play_shard(net: PolicyNet, league: League, plan: TablePlan, config: TrainConfig,
               device: torch.device, critic: CriticNet | None = None) -> Rollout:
    """Play one hand at every table of ``plan``; return the current policy's decisions with advantages
    (valued by ``critic`` from the whole deal when given, else by the policy's value head)."""
    tables, players = plan.tables, plan.seats.shape[1]
    seats = plan.seats
    league.reseed(plan.league_seed)
    learner = seats == CURRENT
    generator = torch.Generator().manual_seed(plan.learner_seed)

    longest = max(r.hand_size + r.pass_count for r, _ in plan.groups)  # decisions of one seat in one hand, at most
    # One trajectory slot per learner (table, seat), numbered in row-major order, so the rows
    # handed to the update come in the same order as with a [tables, players] layout; bot seats
    # get no buffer (with one learner per table that is a quarter of the memory).
    slots = int(learner.sum())
    slot_of = np.full((tables, players), -1, dtype=np.int64)
    slot_of[learner] = np.arange(slots)
    obs_buf = np.zeros((slots, longest, OBS_DIM), dtype=np.float32)
    mask_buf = np.zeros((slots, longest, 52), dtype=bool)
    action_buf = np.zeros((slots, longest), dtype=np.int64)
    logp_buf = np.zeros((slots, longest), dtype=np.float32)
    value_buf = np.zeros((slots, longest), dtype=np.float32)
    hidden_buf = np.zeros((slots, longest, HIDDEN_WIDTH), dtype=bool) if critic is not None else None
    count = np.zeros(slots, dtype=np.int64)
    current = _Learner(net, device, generator)
    first = 0  # the group's first table

    def remember(step: loop.Decisions) -> None:
        mine = step.agent == 0
        if not mine.any():
            return
        slot = slot_of[first + step.games[mine], step.seat[mine]]
        k = count[slot]
        obs_buf[slot, k] = step.observation[mine]
        mask_buf[slot, k] = step.mask[mine]
        action_buf[slot, k] = step.action[mine]
        logp_buf[slot, k] = current.logp
        value_buf[slot, k] = current.value
        if hidden_buf is not None:
            hidden_buf[slot, k] = hidden_hands(step.state, step.rows[mine], step.seat[mine])
        count[slot] += 1

    # Agent 0 is the current policy; the league's other seats follow in the order of their codes.
    codes = np.unique(seats[seats != CURRENT])
    agents = [current] + [league.agent(int(code)) for code in codes]
    seating = np.where(seats == CURRENT, 0, 1 + np.searchsorted(codes, seats))
    net.eval()
    decisions, hand_points, moons = 0, [], []
    for group_rules, size in plan.groups:
        part = slice(first, first + size)
        state = engine.init_from_seeds(group_rules, plan.seeds[part], plan.hand_numbers[part], single_hand=True)
        decisions += loop.play(state, agents, seating[part], on_decision=remember)
        hand_points.append(state.last_hand_points)
        moons.append(state.last_hand_moon)
        first += size

    points = np.concatenate(hand_points).astype(np.float64)  # [tables, P]
    if config.reward == "relative":
        others = (points.sum(axis=1, keepdims=True) - points) / (players - 1)
        reward = -(points - others) * REWARD_SCALE
    else:
        reward = -points * REWARD_SCALE

    valid = np.arange(longest)[None, :] < count[:, None]
    if critic is not None:  # every decision valued at once, from the whole deal
        value_buf[valid] = critic_values(critic, obs_buf[valid], hidden_buf[valid], device)
    advantage = gae(value_buf, count, reward[learner], config.gamma, config.gae_lambda)
    shooter = np.concatenate(moons)
    moon = shooter.any(axis=1)
    return Rollout(
        obs=obs_buf[valid], mask=mask_buf[valid], action=action_buf[valid], logp=logp_buf[valid],
        advantage=advantage[valid], returns=(advantage + value_buf)[valid], value=value_buf[valid],
        decisions=decisions, learner_points=points[learner],
        moons_made=float(shooter[learner].mean()) if learner.any() else 0.0,
        moons_suffered=float((moon[:, None] & ~shooter)[learner].mean()) if learner.any() else 0.0,
        hidden=hidden_buf[valid] if hidden_buf is not None else None,
    )


def merge(parts: list[Rollout]) -> Rollout:
    """The shards' rollouts as one, in table order (each share weighted by its learner seats)."""
    if len(parts) == 1:
        return parts[0]
    seats = np.array([len(part.learner_points) for part in parts], dtype=np.float64)
    weights = seats / seats.sum() if seats.sum() else seats

    def joined(name: str) -> np.ndarray:
        return np.concatenate([getattr(part, name) for part in parts])

    return replace(parts[0], obs=joined("obs"), mask=joined("mask"), action=joined("action"), logp=joined("logp"),
                   advantage=joined("advantage"), returns=joined("returns"), value=joined("value"),
                   decisions=sum(part.decisions for part in parts), learner_points=joined("learner_points"),
                   moons_made=float(weights @ [part.moons_made for part in parts]),
                   moons_suffered=float(weights @ [part.moons_suffered for part in parts]),
                   hidden=joined("hidden") if parts[0].hidden is not None else None)


class _Learner:
    """The current policy as an agent that samples its actions and keeps their log-probabilities
    and values (of its last call) for the rollout buffers."""

    name = "current"

    def __init__(self, net: PolicyNet, device: torch.device, generator: torch.Generator):
        self.net, self.device, self.generator = net, device, generator
        self.logp = self.value = None

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits, value = self.net(torch.as_tensor(observation, device=self.device),
                                     torch.as_tensor(action_mask, device=self.device))
            probs = torch.softmax(logits, dim=-1).cpu()
            chosen = torch.multinomial(probs, 1, generator=self.generator).squeeze(-1)
            logp = torch.log(probs.gather(1, chosen[:, None]).squeeze(1).clamp_min(1e-12))
        self.logp, self.value = logp.numpy(), value.cpu().numpy()
        return chosen.numpy()


def gae(values: np.ndarray, count: np.ndarray, reward: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Advantages ``[..., L]`` for trajectories ``values[..., L]`` of ``count[...]`` steps with a final ``reward[...]``."""
    longest = values.shape[-1]
    advantage = np.zeros_like(values)
    running = np.zeros(values.shape[:-1], dtype=np.float32)
    for t in range(longest - 1, -1, -1):
        inside = t < count
        last = t == count - 1
        next_value = values[..., t + 1] if t + 1 < longest else np.zeros(values.shape[:-1], np.float32)
        # Only the last step of a trajectory sees the reward; the others bootstrap from V(t+1).
        delta = np.where(last, reward - values[..., t], gamma * next_value - values[..., t])
        running = np.where(last, delta, delta + gamma * lam * running)
        running = np.where(inside, running, 0.0)
        advantage[..., t] = running
    return advantage
