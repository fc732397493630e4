"""Training a belief model (``agents.belief``): where the unseen cards are, learnt from play.

``collect``: tables of ``opponent`` bots play one hand each on the batched engine; in half of
them one seat is played by ``viewer`` instead (the search player's own policy, so that the states
its seat reaches are covered too). At every card play of a seat whose three other seats are
``opponent`` players, the seat's observation is kept with the true holder of every card it has
not seen (relative seat 1, 2 or 3, as 0, 1, 2; -1 for the cards it has seen). The holders are read
from the engine state: they are the labels, never an input.

``fit``: a :class:`agents.belief.BeliefNet` learns them by cross-entropy over the unseen cards.
Whole hands are held out (the examples of one hand share its deal, so holding out single examples
would test on deals the model trained on). Its held-out loss is reported beside the *room baseline*, the loss of odds
equal to each seat's share of the unseen cards (what the plain world sampler draws): the
difference is what the model knows that the constraint rules do not.

``train`` does both and writes a belief file. Command line: ``hearts belief`` (``hearts_app/commands/belief.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from agents import make
from hearts_env import cards, deal, engine, loop
from hearts_env.rules import Rules
from hearts_env.state import PLAY

from .workers import worker_pool

OPPONENT, VIEWER = 0, 1  # agent indices at a collection table
#: The defaults of :func:`train` (and so of ``hearts belief``): the shipped belief model's settings.
HANDS, HIDDEN, EPOCHS = 90112, (512, 512), 3


def collect(hands: int, seed: int, opponent: str = "hard", viewer: str = "ppo-classic", rules: str = "classic",
            tables: int = 4096, log=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(observations [M, OBS_DIM] float16, holders [M, 52] int8, hand [M] int64)`` from ``hands``
    hands; ``hand`` numbers each example's hand, 0 to ``hands - 1``."""
    rules_value = Rules.resolve(rules)
    if rules_value.num_players != 4 or rules_value.deck_size != 52 or rules_value.dead_cards:
        raise ValueError("a belief model is for four-player games with the whole 52-card deck")
    agents = [make(opponent, seed=seed, rules=rules_value), make(viewer, seed=seed, rules=rules_value)]
    rng = np.random.default_rng([seed, 23])
    observations, holders, hand_of = [], [], []
    seating = np.zeros((0, 4), dtype=np.int64)

    first = 0  # the number of the batch's first hand

    def keep(step: loop.Decisions) -> None:
        table = seating[step.games]
        others_are_opponents = ((table == OPPONENT) | (np.arange(4) == step.seat[:, None])).all(axis=1)
        chosen = (step.state.phase[step.rows] == PLAY) & others_are_opponents
        if not chosen.any():
            return
        rows, seat = step.rows[chosen], step.seat[chosen]
        owner = np.full((rows.size, cards.NUM_CARDS), -1, dtype=np.int8)
        for holder in range(3):  # relative seat holder + 1
            held = cards.to_mask(step.state.hands[rows, (seat + holder + 1) % 4])
            owner[held] = holder
        observations.append(step.observation[chosen].astype(np.float16))
        holders.append(owner)
        hand_of.append(first + step.games[chosen])

    began = time.perf_counter()
    for batch, start in enumerate(range(0, hands, tables)):
        n, first = min(tables, hands - start), start
        state = engine.init_from_seeds(rules_value, deal.game_seeds(seed * 7919 + batch, n),
                                       rng.integers(len(rules_value.pass_cycle), size=n), single_hand=True)
        seating = np.full((n, 4), OPPONENT, dtype=np.int64)
        with_viewer = (rng.random(n) < 0.5).nonzero()[0]
        seating[with_viewer, rng.integers(4, size=with_viewer.size)] = VIEWER
        loop.play(state, agents, seating, until="hand", on_decision=keep)
        if log:
            log(f"seed {seed}: {start + n:,} of {hands:,} hands, {sum(map(len, holders)):,} examples, "
                f"{time.perf_counter() - began:.0f} s")
    if not observations:
        raise ValueError("no examples collected (no hands played)")
    return np.concatenate(observations), np.concatenate(holders), np.concatenate(hand_of)


def room_baseline(holders: np.ndarray) -> float:
    """Mean cross-entropy (nats per unseen card) of odds equal to each seat's share of the unseen cards."""
    counts = np.stack([(holders == h).sum(axis=1) for h in range(3)], axis=1).astype(np.float64)  # [M, 3]
    share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)  # (a seat that has seen every card: no row)
    hidden = holders >= 0
    rows = np.broadcast_to(np.arange(len(holders))[:, None], holders.shape)[hidden]
    return float(-np.log(share[rows, holders[hidden]]).mean())


def fit(observations: np.ndarray, holders: np.ndarray, hands: np.ndarray, hidden=HIDDEN, epochs: int = EPOCHS,
        batch_size: int = 1024, learning_rate: float = 1e-3, holdout: float = 0.02, seed: int = 0, log=print):
    """A trained :class:`~agents.belief.BeliefNet` and its stats (held-out loss, room baseline);
    ``hands`` numbers each example's hand, and a ``holdout`` share of the hands is held out."""
    import torch  # the train extra, as is agents.belief (collecting the examples needs neither)
    from torch import nn

    from agents.belief import BeliefNet

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    numbers = np.unique(hands)
    held_hands = rng.choice(numbers, size=max(1, int(len(numbers) * holdout)), replace=False)
    is_held = np.isin(hands, held_hands)
    if is_held.all():
        raise ValueError(f"too few hands ({len(numbers)}) to hold some out and train on the rest")
    held = torch.as_tensor(is_held.nonzero()[0])
    train_rows = (~is_held).nonzero()[0]
    n = len(observations)
    obs_t, holders_t = torch.as_tensor(observations), torch.as_tensor(holders)  # int8: widened per batch
    net = BeliefNet(hidden)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)

    def loss_of(rows: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        logits, target = net(obs_t[rows].float()), holders_t[rows].long()
        unseen = target >= 0
        return nn.functional.cross_entropy(logits[unseen], target[unseen], reduction=reduction)

    def held_out() -> float:  # per unseen card, like the baseline
        with torch.no_grad():
            total = sum(loss_of(part, "sum").item() for part in torch.split(held, 8192))
        return total / int((holders_t[held] >= 0).sum())

    stats = {"examples": n, "held_out": len(held), "held_out_hands": len(held_hands),
             "room_baseline": room_baseline(holders[held.numpy()])}
    log(f"{n:,} examples; held out {len(held):,} (of {len(held_hands):,} hands), room baseline {stats['room_baseline']:.4f} nats per unseen card")
    steps = epochs * max(1, len(train_rows) // batch_size)
    step = 0
    bar = tqdm(total=steps, desc="fitting the belief", unit="step", disable=None, leave=False)  # (no bar off a terminal)
    for epoch in range(epochs):
        shuffled = torch.as_tensor(rng.permutation(train_rows))
        for begin in range(0, max(1, len(shuffled) - batch_size + 1), batch_size):
            for group in optimizer.param_groups:  # linear decay to zero
                group["lr"] = learning_rate * (1 - step / steps)
            loss = loss_of(shuffled[begin:begin + batch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            bar.update()
        stats[f"epoch_{epoch + 1}"] = held_out()
        log(f"epoch {epoch + 1}: held-out loss {stats[f'epoch_{epoch + 1}']:.4f} nats per unseen card")
    bar.close()
    stats["held_out_loss"] = stats[f"epoch_{epochs}"] if epochs else held_out()
    return net, stats


def _collect_job(job: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import torch  # the train extra

    torch.set_num_threads(1)
    hands, seed, opponent, viewer, rules = job
    return collect(hands, seed, opponent, viewer, rules, log=lambda m: print(m, file=sys.stderr, flush=True))


def train(out: Path, hands: int = HANDS, workers: int = 2, seed: int = 1, opponent: str = "hard",
          viewer: str = "ppo-classic", rules: str = "classic", hidden=HIDDEN, epochs: int = EPOCHS, log=print) -> dict:
    """Collect ``hands`` hands over ``workers`` processes (worker ``w`` deals from seed
    ``1000 * seed + w``, so no two seeds share deals), fit, write the belief file ``out``; returns
    the stats recorded in it. The examples are held in memory: the default 90,112 hands peak at
    7.9 GB, while the workers' arrays are gathered."""
    from agents.belief import save_belief  # imports torch (the train extra)

    began = time.perf_counter()
    shares = [hands // workers + (w < hands % workers) for w in range(workers)]
    jobs = [(share, 1000 * seed + w, opponent, viewer, rules) for w, share in enumerate(shares) if share]
    with worker_pool(len(jobs)) as pool:
        parts = list(pool.map(_collect_job, jobs))
    observations = np.concatenate([p[0] for p in parts])
    holders = np.concatenate([p[1] for p in parts])
    hand = np.concatenate([p[2] + sum(shares[:w]) for w, p in enumerate(parts)])  # numbered across workers
    del parts
    collected = time.perf_counter() - began
    net, stats = fit(observations, holders, hand, hidden=hidden, epochs=epochs, seed=seed, log=log)
    stats.update(collect_seconds=round(collected), fit_seconds=round(time.perf_counter() - began - collected))
    meta = {"rules": Rules.resolve(rules).to_dict(),
            "trained": {"opponent": opponent, "viewer": viewer, "hands": hands, "workers": workers, "seed": seed,
                        "epochs": epochs, **stats}}
    save_belief(out, net, meta)
    return meta["trained"]
