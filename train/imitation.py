"""Imitation: learn to play like a heuristic bot, as PPO's warm start or alone (an imitation level).

The teacher plays every seat of ``num_tables`` tables at once, one hand each; every decision
becomes a training example (observation, mask, the teacher's card), and the seat's final reward
becomes the value target of its decisions. Data is streamed: each round of hands is trained on for
``epochs`` passes and then dropped, so memory stays that of one round (and no example is seen in
two rounds: labels cost nothing, so fresh hands are better than repeated ones).

:func:`agreement` is the held-out measure: on hands the net never trained on (deals of another seed
space), the share of the teacher's card plays *with a choice* (the play phase, two or more legal
cards) where the net's argmax is the teacher's card. Passes and forced plays are left out: a forced
play agrees by construction, and passing is a separate skill (reported on its own). It also reports
the agreement *up to equivalent cards*: a play counts as agreeing when the net's card and the bot's
are of one suit and every card ranked between them is in the seat's hand or already played (so
the two take the same tricks and, hearts being a point each, the same points), neither being the
Q♠ or the J♦. Which of such cards a bot picks changes nothing in the hand, yet it is part of the
plain agreement.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from agents import make
from agents.policy import PolicyNet
from hearts_env import deal, engine, loop, observe
from hearts_env.cards import JACK_OF_DIAMONDS, QUEEN_OF_SPADES
from hearts_env.rule_space import table_groups
from hearts_env.rules import Rules
from hearts_env.state import PLAY

from .config import REWARD_SCALE, TrainConfig

#: Held-out hands are dealt from seeds ``HELD_OUT_SEED + seed``: training rounds use
#: ``seed * 7919 + round`` (far below it for every seed the runs use), so the two never share a deal.
HELD_OUT_SEED = 2**62


def teacher_round(teacher, rules: Rules, num_tables: int, seed: int, rng: np.random.Generator):
    """One hand at every table played by ``teacher``: (obs, mask, action, value target, choice) arrays.

    ``choice`` marks the card plays with two or more legal cards (the decisions :func:`agreement` counts)."""
    state = engine.init_from_seeds(rules, deal.game_seeds(seed, num_tables),
                                   rng.integers(len(rules.pass_cycle), size=num_tables), single_hand=True)
    steps: list[loop.Decisions] = []
    plays: list[np.ndarray] = []

    def remember(step: loop.Decisions) -> None:
        steps.append(step)
        plays.append(step.state.phase[step.rows] == PLAY)  # read now: the state moves on after the step

    loop.play(state, [teacher], np.zeros(rules.num_players, dtype=np.int64), on_decision=remember)
    table_of = np.concatenate([step.games for step in steps])
    seat_of = np.concatenate([step.seat for step in steps])
    target = -state.last_hand_points[table_of, seat_of] * REWARD_SCALE
    mask = np.concatenate([step.mask for step in steps])
    choice = np.concatenate(plays) & (mask.sum(axis=1) > 1)
    return (np.concatenate([step.observation for step in steps]), mask,
            np.concatenate([step.action for step in steps]), target.astype(np.float32), choice)


def mixed_round(teacher, rules: Rules, config: TrainConfig, seed: int, rng: np.random.Generator):
    """:func:`teacher_round` at ``config.num_tables`` tables: all at ``rules``, or, with
    ``config.rule_space``, in ``config.rule_sets_per_round`` groups each at a rule set drawn from
    the space (each group's deals from its own seeds). The arrays of the groups are joined."""
    space = config.rule_space_value
    if space is None:
        return teacher_round(teacher, rules, config.num_tables, seed, rng)
    groups = table_groups(space, config.num_tables, config.rule_sets_per_round, rng)
    parts = [teacher_round(teacher, group_rules, tables, seed * len(groups) + k, rng)
             for k, (group_rules, tables) in enumerate(groups)]
    return tuple(np.concatenate(arrays) for arrays in zip(*parts))


def equivalent_cards(observation: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, whether cards ``a`` and ``b`` are equivalent for the seat that sees ``observation``:
    one suit, every card ranked between them held or already played (the current trick too), and
    neither the Q♠ nor the J♦ (cards that score alone). A card is equivalent to itself."""
    pieces = observe.OBSERVATION_LAYOUT

    def piece(name):
        where, shape = pieces[name]
        return observation[:, where].reshape(len(observation), *shape) > 0

    known = piece("hand") | piece("played_by").any(axis=1) | piece("trick").any(axis=1)
    low, high = np.minimum(a, b), np.maximum(a, b)
    out = low == high
    special = np.isin(low, (QUEEN_OF_SPADES, JACK_OF_DIAMONDS)) | np.isin(high, (QUEEN_OF_SPADES, JACK_OF_DIAMONDS))
    for row in np.nonzero(~out & (low // 13 == high // 13) & ~special)[0]:
        out[row] = known[row, low[row] + 1:high[row]].all()
    return out


def agreement_of(chosen: np.ndarray, action: np.ndarray, choice: np.ndarray,
                 observation: np.ndarray | None = None) -> dict[str, float]:
    """Where ``chosen`` equals the teacher's ``action``: ``agreement``, the share over the card plays
    with a choice (``choice`` true), and ``agreement_all``, over every decision (passes and forced
    plays too), with their counts; given the ``observation`` rows, also ``agreement_equivalent``,
    the share over the card plays with a choice up to equivalent cards (:func:`equivalent_cards`)."""
    same = np.asarray(chosen) == np.asarray(action)
    choice = np.asarray(choice, dtype=bool)
    out = {"agreement": float(same[choice].mean()) if choice.any() else float("nan"),
           "plays_with_choice": int(choice.sum()),
           "agreement_all": float(same.mean()) if len(same) else float("nan"),
           "decisions": int(len(same))}
    if observation is not None:
        alike = equivalent_cards(observation[choice], np.asarray(chosen)[choice], np.asarray(action)[choice])
        out["agreement_equivalent"] = float(alike.mean()) if choice.any() else float("nan")
    return out


def held_out_round(teacher, rules: Rules, tables: int, seed: int = 0):
    """The teacher's :func:`teacher_round` on ``tables`` held-out hands (deals from
    :data:`HELD_OUT_SEED` + ``seed``): (obs, mask, action, value target, choice)."""
    return teacher_round(teacher, rules, tables, HELD_OUT_SEED + seed, np.random.default_rng([seed, 11]))


@torch.no_grad()
def agreement(net: PolicyNet, teacher, rules: Rules, tables: int, seed: int = 0,
              device: torch.device | str = "cpu") -> dict[str, float]:
    """Held-out agreement of ``net``'s argmax with ``teacher`` on ``tables`` hands the teacher plays
    alone (:func:`held_out_round`): see :func:`agreement_of`."""
    obs, mask, action, _, choice = held_out_round(teacher, rules, tables, seed)
    was_training = net.training
    net.eval()
    chosen = []
    for start in range(0, len(action), 8192):
        logits, _ = net(torch.as_tensor(obs[start:start + 8192], device=device),
                        torch.as_tensor(mask[start:start + 8192], device=device))
        chosen.append(logits.argmax(-1).cpu().numpy())
    net.train(was_training)
    return agreement_of(np.concatenate(chosen), action, choice, obs)


def agent_agreement(agent, teacher, rules: Rules, tables: int, seed: int = 0) -> dict[str, float]:
    """:func:`agreement` of any agent (an exported level: ``onnx:``) on the same held-out hands."""
    obs, mask, action, _, choice = held_out_round(teacher, rules, tables, seed)
    return agreement_of(agent.act(obs, mask), action, choice, obs)


def agreement_at_table(agent, teacher, rules: Rules, opponent, tables: int, seed: int = 0) -> dict[str, float]:
    """The agreement of ``agent`` (any agent: a level's network) with ``teacher`` on the agent's own
    decisions at another table: the agent in seat 0, ``opponent`` in the others, ``tables`` hands
    (deals from :data:`HELD_OUT_SEED` + 1 + ``seed``). The bots decide from the observation alone, so
    the teacher is asked what it would have played in each of the agent's situations. Where the
    agent meets situations the teacher's own tables rarely produce, this is lower than
    :func:`agreement`. Keys as :func:`agreement_of`."""
    rng = np.random.default_rng([seed, 13])
    state = engine.init_from_seeds(rules, deal.game_seeds(HELD_OUT_SEED + 1 + seed, tables),
                                   rng.integers(len(rules.pass_cycle), size=tables), single_hand=True)
    rows: list[tuple[np.ndarray, ...]] = []

    def remember(step: loop.Decisions) -> None:
        mine = step.agent == 0
        if mine.any():
            play = step.state.phase[step.rows][mine] == PLAY
            rows.append((step.observation[mine], step.mask[mine], step.action[mine], play))

    seats = np.array([0] + [1] * (rules.num_players - 1))
    loop.play(state, [agent, opponent], seats, on_decision=remember)
    obs, mask, action, play = (np.concatenate([row[i] for row in rows]) for i in range(4))
    return agreement_of(action, teacher.act(obs, mask), play & (mask.sum(axis=1) > 1), obs)


def imitate(net: PolicyNet, rules: Rules, config: TrainConfig, device: torch.device, log=print) -> dict[str, float]:
    settings = config.imitation
    teacher = make(settings.teacher, seed=config.seed, rules=rules)  # rules: a policy for other rules is refused
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.learning_rate)
    rng = np.random.default_rng([config.seed, 7])
    started = time.perf_counter()
    seen, round_index = 0, 0
    accuracy = loss_value = 0.0
    net.train()
    while seen < settings.decisions:
        if settings.anneal_lr:  # linearly to 0 over the decisions (set per round)
            for group in optimizer.param_groups:
                group["lr"] = settings.learning_rate * max(0.02, 1.0 - seen / settings.decisions)
        obs, mask, action, target, _ = mixed_round(teacher, rules, config, config.seed * 7919 + round_index, rng)
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
    stats = {"accuracy": accuracy, "loss": loss_value, "decisions": float(seen),
             "seconds": round(time.perf_counter() - started, 1)}
    if settings.held_out_tables:
        held = agreement(net, teacher, rules, settings.held_out_tables, seed=config.seed, device=device)
        log(f"held-out agreement with {settings.teacher} on card plays with a choice: {held['agreement']:.4f} "
            f"({held['plays_with_choice']:,} plays; up to equivalent cards {held['agreement_equivalent']:.4f}; "
            f"all {held['decisions']:,} decisions {held['agreement_all']:.4f})")
        stats.update({f"held_out_{key}": float(value) for key, value in held.items()})
    return stats
