"""Warm start by imitation: learn to play like a heuristic bot before PPO takes over.

The teacher plays every seat of ``num_tables`` tables at once, one hand each; every decision
becomes a training example (observation, mask, the teacher's card), and the seat's final reward
becomes the value target of its decisions. Data is streamed: each round of hands is trained on for
``epochs`` passes and then dropped, so memory stays that of one round.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents import make
from agents.policy import PolicyNet
from hearts_env import deal, engine, loop
from hearts_env.rules import Rules

from .config import REWARD_SCALE, TrainConfig


def teacher_round(teacher, rules: Rules, num_tables: int, seed: int, rng: np.random.Generator):
    """One hand at every table played by ``teacher``: (obs, mask, action, value target) arrays."""
    state = engine.init_from_seeds(rules, deal.game_seeds(seed, num_tables),
                                   rng.integers(len(rules.pass_cycle), size=num_tables), single_hand=True)
    steps: list[loop.Decisions] = []
    loop.play(state, [teacher], np.zeros(rules.num_players, dtype=np.int64), on_decision=steps.append)
    table_of = np.concatenate([step.games for step in steps])
    seat_of = np.concatenate([step.seat for step in steps])
    target = -state.last_hand_points[table_of, seat_of] * REWARD_SCALE
    return (np.concatenate([step.observation for step in steps]), np.concatenate([step.mask for step in steps]),
            np.concatenate([step.action for step in steps]), target.astype(np.float32))


def imitate(net: PolicyNet, rules: Rules, config: TrainConfig, device: torch.device, log=print) -> dict[str, float]:
    settings = config.imitation
    teacher = make(settings.teacher, seed=config.seed, rules=rules)  # rules: a policy for other rules is refused
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.learning_rate)
    rng = np.random.default_rng([config.seed, 7])
    seen, round_index = 0, 0
    accuracy = loss_value = 0.0
    net.train()
    while seen < settings.decisions:
        obs, mask, action, target = teacher_round(teacher, rules, config.num_tables,
                                                  config.seed * 7919 + round_index, rng)
        obs_t = torch.as_tensor(obs, device=device)
        mask_t = torch.as_tensor(mask, device=device)
        action_t = torch.as_tensor(action, device=device)
        target_t = torch.as_tensor(target, device=device)
        for _ in range(settings.epochs):
            order = torch.as_tensor(rng.permutation(len(action)), device=device)
            hits = total = 0
            for start in range(0, len(action), settings.batch_size):
                idx = order[start:start + settings.batch_size]
                logits, value = net(obs_t[idx], mask_t[idx])
                loss = nn.functional.cross_entropy(logits, action_t[idx]) + 0.5 * ((value - target_t[idx]) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
                optimizer.step()
                hits += (logits.argmax(-1) == action_t[idx]).sum().item()
                total += len(idx)
                loss_value = loss.item()
            accuracy = hits / total
        seen += len(action)
        round_index += 1
        log(f"imitating {settings.teacher}: {seen:,}/{settings.decisions:,} decisions, "
            f"accuracy {accuracy:.3f}, loss {loss_value:.3f}")
    return {"accuracy": accuracy, "loss": loss_value, "decisions": float(seen)}
