"""Training a value model (``agents.value``): the points each seat ends a hand with, from whole deals.

``collect``: tables of players drawn seat by seat from ``players`` (bots and networks: the value
model must not expect every table to be one kind of player) play one hand each on the batched
engine. At the start of every trick the whole deal is encoded (``agents.value.encode``, relative to
the trick's leader) and, once the hand is over, labelled with the points it gave each seat and who
shot the moon.

``fit``: a :class:`agents.value.ValueNet` learns them (squared error on the points, cross-entropy
on the moon). Whole hands are held out (a hand's examples share its deal). The held-out report gives
the error of the points by the number of tricks left and the moon's calibration: the predicted
chance that somebody shoots it against how often somebody did, by bins of that chance.

``train`` does both and writes a value file. Command line: ``hearts value`` (``hearts_app/commands/value.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from agents import make
from hearts_env import deal, engine, loop
from hearts_env.rules import Rules
from hearts_env.state import PLAY

from .workers import worker_pool

#: The default mixture: each seat of each table is one of these, drawn uniformly (a name twice is
#: twice as likely).
PLAYERS = ("hard", "hard", "normal", "easy", "random", "ppo-classic", "ppo-classic", "level:hard")
#: The defaults of :func:`train` (and so of ``hearts value`` and a recipe's value stage): the shipped
#: value model's settings.
HANDS, HIDDEN, EPOCHS = 2_000_000, (512, 256), 2
#: Bins of the predicted chance that somebody shoots the moon, for the calibration table.
MOON_BINS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)


def collect(hands: int, seed: int, players=PLAYERS, rules: str = "classic", tables: int = 4096,
            log=None) -> dict[str, np.ndarray]:
    """The examples of ``hands`` hands: ``codes [M, CODE_WIDTH] int8`` (``agents.value.encode``),
    ``points [M, 4] int8`` the hand's points per relative seat, ``moon [M] int8`` the relative seat
    that shot the moon (4: nobody), ``tricks_left [M] int8`` (13 at the first trick), ``hand [M]``
    numbering each example's hand from 0."""
    from agents.value import SEATS, check_rules, encode, leader_seats  # (torch: the train extra)

    rules_value = Rules.resolve(rules)
    check_rules(rules_value)
    agents = [make(spec, seed=seed, rules=rules_value) for spec in players]
    rng = np.random.default_rng([seed, 29])
    parts: dict[str, list] = {"codes": [], "leader": [], "game": [], "tricks_left": []}
    done: dict[str, list] = {name: [] for name in ("codes", "points", "moon", "tricks_left", "hand")}

    def keep(step: loop.Decisions) -> None:
        state, rows = step.state, step.rows
        start = (state.phase[rows] == PLAY) & (state.num_in_trick[rows] == 0)
        if not start.any():
            return
        codes, leader = encode(state, rows[start])
        parts["codes"].append(codes)
        parts["leader"].append(leader)
        parts["game"].append(step.games[start])
        parts["tricks_left"].append((rules_value.hand_size - state.trick_number[rows[start]]).astype(np.int8))

    began = time.perf_counter()
    for batch, first in enumerate(range(0, hands, tables)):
        n = min(tables, hands - first)
        state = engine.init_from_seeds(rules_value, deal.game_seeds(seed * 7919 + batch, n),
                                       rng.integers(len(rules_value.pass_cycle), size=n), single_hand=True)
        seating = rng.integers(len(agents), size=(n, SEATS))
        for values in parts.values():
            values.clear()
        loop.play(state, agents, seating, until="hand", on_decision=keep)
        game, leader = np.concatenate(parts["game"]), np.concatenate(parts["leader"])
        relative = leader_seats(leader)
        done["codes"].append(np.concatenate(parts["codes"]))
        done["points"].append(np.take_along_axis(state.last_hand_points[game], relative, axis=1).astype(np.int8))
        moon = state.last_hand_moon[game]
        done["moon"].append(np.where(moon.any(axis=1), (moon.argmax(axis=1) - leader) % SEATS, SEATS).astype(np.int8))
        done["tricks_left"].append(np.concatenate(parts["tricks_left"]))
        done["hand"].append(first + game)
        if log:
            log(f"seed {seed}: {first + n:,} of {hands:,} hands, {sum(map(len, done['hand'])):,} examples, "
                f"{time.perf_counter() - began:.0f} s")
    if not done["hand"]:
        raise ValueError("no examples collected (no hands played)")
    return {name: np.concatenate(values) for name, values in done.items()}


def fit(examples: dict[str, np.ndarray], hidden=HIDDEN, epochs: int = EPOCHS, batch_size: int = 2048,
        learning_rate: float = 1e-3, holdout: float = 0.02, seed: int = 0, log=print):
    """A trained :class:`~agents.value.ValueNet` and its held-out report (see the module docstring)."""
    import torch  # the train extra
    from torch import nn

    from agents.value import POINTS, ValueNet

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    hands = examples["hand"]
    numbers = np.unique(hands)
    is_held = np.isin(hands, rng.choice(numbers, size=max(1, int(len(numbers) * holdout)), replace=False))
    if is_held.all() or not is_held.any():
        raise ValueError(f"too few hands ({len(numbers)}) to hold some out and train on the rest")
    held = torch.as_tensor(is_held.nonzero()[0])
    train_rows = (~is_held).nonzero()[0]
    codes = torch.as_tensor(examples["codes"])
    points = torch.as_tensor(examples["points"])  # int8: widened per batch
    moon = torch.as_tensor(examples["moon"])
    net = ValueNet(hidden)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)

    def losses(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        predicted, moon_logits = net(codes[rows])
        squared = ((predicted - points[rows].float()) / POINTS) ** 2
        return squared.mean(), nn.functional.cross_entropy(moon_logits, moon[rows].long())

    steps = epochs * max(1, len(train_rows) // batch_size)
    step = 0
    bar = tqdm(total=steps, desc="fitting the value model", unit="step", disable=None, leave=False)
    for epoch in range(epochs):
        shuffled = torch.as_tensor(rng.permutation(train_rows))
        for begin in range(0, max(1, len(shuffled) - batch_size + 1), batch_size):
            for group in optimizer.param_groups:  # linear decay to zero
                group["lr"] = learning_rate * (1 - step / steps)
            squared, moon_loss = losses(shuffled[begin:begin + batch_size])
            optimizer.zero_grad()
            (squared + 0.1 * moon_loss).backward()
            optimizer.step()
            step += 1
            bar.update()
        report = held_out_report(net, examples, is_held)
        log(f"epoch {epoch + 1}: held-out error {report['rmse']:.3f} points per seat (the points' own spread "
            f"{report['spread']:.3f})")
    bar.close()
    report = held_out_report(net, examples, is_held)
    report.update(examples=int(len(hands)), held_out=int(len(held)), held_out_hands=int(len(np.unique(hands[is_held]))))
    return net, report


def held_out_report(net, examples: dict[str, np.ndarray], is_held: np.ndarray) -> dict:
    """Root-mean-square error of the points per seat on the held-out examples, overall and by tricks
    left (beside the points' own spread there), and the moon's calibration by bins of the predicted
    chance that somebody shoots it."""
    import torch

    rows = is_held.nonzero()[0]
    predicted, moon_odds = [], []
    with torch.inference_mode():
        for part in np.array_split(rows, max(1, len(rows) // 16384)):
            points, moon_logits = net(torch.as_tensor(examples["codes"][part]))
            predicted.append(points.numpy())
            moon_odds.append(1 - torch.softmax(moon_logits, dim=1)[:, -1].numpy())
    predicted, moon_odds = np.concatenate(predicted), np.concatenate(moon_odds)
    truth = examples["points"][rows].astype(np.float64)
    tricks_left = examples["tricks_left"][rows]
    error = (predicted - truth) ** 2
    by_tricks = {int(t): {"rmse": round(float(np.sqrt(error[tricks_left == t].mean())), 3),
                          "spread": round(float(truth[tricks_left == t].std()), 3)}
                 for t in np.unique(tricks_left)}
    mooned = examples["moon"][rows] < 4
    calibration = []
    for low, high in zip(MOON_BINS[:-1], MOON_BINS[1:]):
        inside = (moon_odds >= low) & ((moon_odds < high) | (high == MOON_BINS[-1]))
        if inside.any():
            calibration.append({"predicted": f"{low:.2f}-{high:.2f}", "examples": int(inside.sum()),
                                "mean_predicted": round(float(moon_odds[inside].mean()), 4),
                                "observed": round(float(mooned[inside].mean()), 4)})
    return {"rmse": round(float(np.sqrt(error.mean())), 3), "spread": round(float(truth.std()), 3),
            "by_tricks_left": by_tricks, "moon_calibration": calibration}


def _collect_job(job: tuple) -> dict[str, np.ndarray]:
    import torch  # the train extra

    torch.set_num_threads(1)
    hands, seed, players, rules = job
    return collect(hands, seed, players, rules, log=lambda m: print(m, file=sys.stderr, flush=True))


def train(out: Path, hands: int = HANDS, workers: int = 2, seed: int = 1, players=PLAYERS,
          rules: str = "classic", hidden=HIDDEN, epochs: int = EPOCHS, log=print) -> dict:
    """Collect ``hands`` hands over ``workers`` processes (worker ``w`` deals from seed
    ``1000 * seed + w``), fit, write the value file ``out``; returns the stats recorded in it. The
    examples are held in memory, compactly: 13 per hand of 67 bytes each (about 0.9 GB per million
    hands), plus the fit's working copies (the default 2 M hands peak at 4.0 GB)."""
    from agents.value import save_value  # imports torch (the train extra)

    began = time.perf_counter()
    shares = [hands // workers + (w < hands % workers) for w in range(workers)]
    jobs = [(share, 1000 * seed + w, tuple(players), rules) for w, share in enumerate(shares) if share]
    with worker_pool(len(jobs)) as pool:
        parts = list(pool.map(_collect_job, jobs))
    for w, part in enumerate(parts):  # hands numbered across workers
        part["hand"] = part["hand"] + sum(shares[:w])
    examples = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    del parts
    collected = time.perf_counter() - began
    net, report = fit(examples, hidden=hidden, epochs=epochs, seed=seed, log=log)
    report.update(collect_seconds=round(collected), fit_seconds=round(time.perf_counter() - began - collected))
    meta = {"rules": Rules.resolve(rules).to_dict(),
            "trained": {"players": list(players), "hands": hands, "workers": workers, "seed": seed,
                        "epochs": epochs, **report}}
    save_value(out, net, meta)
    return meta["trained"]
