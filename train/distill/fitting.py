"""The fit: a student trained on a folder of shards, by one of the losses, with a value fit beside it.

:func:`fit` loads the student, reads the shards (:mod:`train.distill.shards`), builds the chosen
loss (:mod:`train.distill.losses`) and writes the trained policy as an ordinary checkpoint, its
lineage in the metadata. :func:`train_policy` is the training loop. It runs in one of two ways: the
shards held in memory as one group (the default), or streamed a group at a time
(``shards_in_memory``); the two differ only in how the held-out decisions are gathered and how each
epoch's groups are read, and the loop reads the same either way.
:func:`held_out_measures` and :func:`describe` are what is reported.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from agents.base import sha256_file

from .losses import LOSSES, Objective
from .shards import Labels, join_labels, read_labels, shard_headers, shard_paths, take_labels


def fit(start_path: str, data: Path, out_path: Path, epochs: int = 4, temperature: float = 1.0,
        margin: float = 2.0, learning_rate: float = 3e-4, batch_size: int = 2048, holdout: float = 0.05,
        seed: int = 0, loss: str = "imitation", hidden: list[int] | None = None, card_scorer: int | None = None,
        shards_in_memory: int | None = None, log=print) -> dict:
    """Train the policy of ``start_path`` on the teacher's values (card plays, and passes where the
    rollout teacher labelled them) and on its own odds (the decisions the teacher left alone);
    write a checkpoint to ``out_path``.

    ``loss``: one of :data:`LOSSES`. :func:`imitation` (cross-entropy to the teacher's preferences
    where they beat the student's card by more than ``margin``) suits the search teachers' averaged
    values; :func:`regression` (the logits learn minus the points, so the greedy card is the one
    expected to cost the fewest points and ``softmax(logits)`` weighs cards by e per point) and
    :func:`improvement` (the student's odds times ``exp(-points / T)``) suit the rollout teacher's
    noisy one-deal labels, whose noise they average out where a cross-entropy to each label's best
    card would learn it; in the measurements so far only the improvement loss beat its student.
    The training itself, with a value fit beside the policy loss: :func:`train_policy`.

    ``hidden`` grows the start's network to those layers first (``agents.policy.widened``: it plays
    exactly as before until the fit uses the new units), for more capacity to learn the values;
    ``card_scorer`` adds (or grows) the per-card scorer of ``agents.card_scorer`` the same way.

    ``shards_in_memory``: hold at most this many shards at once, streaming the rest from disk
    (each epoch visits the groups of shards in a random order, shuffled within each); the default
    holds them all, as one group. One group and several fit alike except for the order of the
    examples; the held-out decisions are the same either way.

    Reported on held-out labelled decisions: agreement with the teacher (the student's card is one
    the teacher values best, equal values included), and *regret*,
    the teacher's points for the student's greedy card minus those of its best card (per decision;
    passes and card plays apart where passes are labelled).
    """
    import torch

    from agents.checkpoint import load_net, save  # (torch: the train extra)
    from agents.policy import widened

    if loss not in LOSSES:
        raise ValueError(f"loss must be 'imitation', 'regression' or 'improvement', got {loss!r}")
    if shards_in_memory is not None and shards_in_memory < 1:
        raise ValueError(f"shards_in_memory must be 1 or more, got {shards_in_memory}")
    torch.manual_seed(seed)
    net, meta = load_net(start_path)
    start_hidden = list(net.hidden)
    start_scorer = net.card_scorer_units
    if hidden is not None or card_scorer is not None:  # an exact copy when the sizes match; a ValueError naming both when they cannot grow
        net = widened(net, hidden if hidden is not None else net.hidden, card_scorer)
    paths = shard_paths(data)
    per_group = len(paths) if shards_in_memory is None else shards_in_memory
    groups = [paths[i:i + per_group] for i in range(0, len(paths), per_group)]
    start = copy.deepcopy(net)  # the student's odds in the objectives stay the start's

    def read(group: list[Path]) -> Labels:
        return read_labels(data, meta["rules"], start_path, group)

    def objective_for(labels: Labels) -> Objective:
        return LOSSES[loss](start, labels, temperature, margin)

    stats = train_policy(net, groups, read, objective_for, loss, epochs, learning_rate, batch_size, holdout, seed,
                         log)
    meta = dict(meta)
    # Each round records the one before it ("after"), so a policy's whole lineage stays in its file:
    # the start by name and content, not by a path of this machine (a shipped file would carry it).
    meta["distilled"] = {"start": Path(start_path).name, "start_sha256": sha256_file(start_path),
                         "data": Path(data).name, "examples": stats["examples"], "epochs": epochs, "loss": loss,
                         "temperature": temperature, "margin": margin, "learning_rate": learning_rate,
                         "batch_size": batch_size, "seed": seed, "start_hidden": start_hidden,
                         "start_card_scorer": start_scorer,
                         "after": meta.get("distilled")}
    save(out_path, net, meta)
    return stats


def train_policy(net, groups: list[list[Path]], read: Callable[[list[Path]], Labels],
                 objective_for: Callable[[Labels], Objective], loss: str, epochs: int, learning_rate: float,
                 batch_size: int, holdout: float, seed: int, log) -> dict:
    """Fit ``net`` in place on the shards of ``groups``, each group read whole (``read``) when its
    turn comes: ``objective_for(labels)``'s policy loss on the labelled decisions, plus a value fit
    (to minus the points of the teacher's best card) and cross-entropy to the student's own odds on
    the kept decisions (spread over the group's steps); Adam, its step size decaying linearly to
    zero, gradients clipped to norm 0.5. A ``holdout`` share of the labelled decisions is held out
    and measured (:func:`held_out_measures`) before the fit and after each epoch: the returned stats.
    With one group it is read once and stays in memory; with several, each epoch reads them in a
    random order and only the held-out decisions stay."""
    import torch

    headers = [shard_headers(group) for group in groups]
    sizes = [sum(h["obs"][0][0] for h in group) for group in headers]
    kept_total = sum(h["kept_obs"][0][0] for group in headers for h in group)
    bounds = np.cumsum([0, *sizes])  # group g's labelled decisions are rows bounds[g] .. bounds[g+1]-1
    n = int(bounds[-1])
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    held = order[: max(1, int(n * holdout))] if n > 1 else order[:0]
    train = order[len(held):]

    # The two ways: one group read now and kept, or several read again in each epoch.
    if len(groups) == 1:
        resident = read(groups[0])
        resident_objective = objective_for(resident)
        held_out = HeldOut(resident, torch.as_tensor(held), float(resident_objective.overruled.mean()),
                           int(resident.is_pass.sum()), resident_objective.note)
    else:
        resident = resident_objective = None
        held_out = gather_held_out(groups, read, objective_for, loss, held, bounds)

    before = held_out_measures(net, held_out.labels, held_out.rows)
    stats: dict = {"examples": n, "kept_examples": kept_total, "loss": loss, "overruled": held_out.overruled,
                   "before": before}
    log(f"{n:,} labelled decisions ({held_out.passes:,} of them passes){held_out.note}, {kept_total:,} decisions "
        f"kept at the student's odds; held out: {describe(before)}")
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    train_of = [train[(train >= bounds[g]) & (train < bounds[g + 1])] - bounds[g] for g in range(len(groups))]
    steps_of = [-(-len(rows) // batch_size) for rows in train_of]
    steps_per_epoch = max(1, sum(steps_of))
    for epoch in range(epochs):
        losses: list[float] = []
        overruled: list[float] = []  # per group read (streamed only)
        if resident is not None:
            turns: Iterator[tuple[Any, Labels, Objective]] = iter([(0, resident, resident_objective)])
        else:
            turns = read_in_turn(groups, rng.permutation(len(groups)), read, objective_for, overruled)
        step = 0
        for g, labels, objective in turns:
            step += fit_group(net, optimizer, labels, objective, train_of[g], steps_of[g], rng, batch_size,
                              learning_rate, epoch * steps_per_epoch + step, epochs * steps_per_epoch, losses)
            del labels, objective  # before the next group is read (only one group is held at a time)
        if resident is None and epoch == 0:
            stats["overruled"] = sum(overruled, 0.0) / max(1, n)
        stats[f"epoch_{epoch + 1}"] = held_out_measures(net, held_out.labels, held_out.rows)
        log(f"epoch {epoch + 1}: mean policy loss {np.mean(losses):.3f}; held out: {describe(stats[f'epoch_{epoch + 1}'])}")
    return stats


class HeldOut(NamedTuple):
    """The held-out labelled decisions of :func:`train_policy`, and what its first line says of the data."""

    labels: Labels
    rows: Any  # torch tensor: the held-out rows of ``labels``
    overruled: float  # the share of decisions the teacher overrules (counted in the first epoch when streamed)
    passes: int  # how many labelled decisions are passes
    note: str  # what the first line says of the reading or of the loss


def gather_held_out(groups: list[list[Path]], read: Callable[[list[Path]], Labels],
                    objective_for: Callable[[Labels], Objective], loss: str, held: np.ndarray,
                    bounds: np.ndarray) -> HeldOut:
    """The held-out decisions ``held`` (rows over all groups; group ``g`` holds rows ``bounds[g]`` to
    ``bounds[g + 1] - 1``), gathered in one pass over the groups, in ``held``'s order; a regression
    over labels it cannot fit is refused here, before any training."""
    import torch

    per_read = len(groups[0])
    parts, passes = [], 0
    for g, group in enumerate(groups):
        labels = read(group)
        if loss == "regression" and labels.partly_valued:
            objective_for(labels)  # (refuses such labels, before any training)
        mine = held[(held >= bounds[g]) & (held < bounds[g + 1])]
        parts.append((mine, take_labels(labels, mine - bounds[g])))
        passes += int(labels.is_pass.sum())
        del labels
    rows = np.concatenate([mine for mine, _ in parts])
    position = np.argsort(rows)[np.searchsorted(np.sort(rows), held)]  # where each held row is in `rows`
    return HeldOut(take_labels(join_labels([part for _, part in parts]), position), torch.arange(len(held)), 0.0,
                   passes, f", read {per_read} shard{'s' * (per_read > 1)} at a time")


def read_in_turn(groups: list[list[Path]], order: np.ndarray, read: Callable[[list[Path]], Labels],
                 objective_for: Callable[[Labels], Objective],
                 overruled: list[float]) -> Iterator[tuple[Any, Labels, Objective]]:
    """The groups in ``order``, each read (with its objective) when its turn comes: ``(index, labels,
    objective)``; each one's count of overruled decisions is appended to ``overruled``."""
    for g in order:
        labels = read(groups[g])
        objective = objective_for(labels)
        overruled.append(float(objective.overruled.sum()))
        yield g, labels, objective
        del labels, objective  # before the next group is read


def fit_group(net, optimizer, labels: Labels, objective: Objective, rows: np.ndarray, steps: int,
              rng: np.random.Generator, batch_size: int, learning_rate: float, first_step: int, total_steps: int,
              losses: list[float]) -> int:
    """One pass over the training ``rows`` of one group's ``labels``, shuffled, ``batch_size`` at a
    time (``steps`` batches), the group's kept decisions spread over them; the step size decays
    linearly from ``learning_rate`` to zero over ``total_steps``, this group's first being
    ``first_step``. Appends each batch's policy loss to ``losses``; returns the batches taken."""
    import torch
    from torch import nn

    obs_t, mask_t = torch.as_tensor(labels.obs), torch.as_tensor(labels.mask)
    value_target = torch.as_tensor(labels.value_target, dtype=torch.float32)
    has_kept = len(labels.kept_obs) > 0
    if has_kept:
        kept_obs, kept_mask = torch.as_tensor(labels.kept_obs), torch.as_tensor(labels.kept_mask)
        kept_probs = torch.as_tensor(labels.kept_probs)
    shuffled = torch.as_tensor(rng.permutation(rows))
    kept_order = torch.as_tensor(rng.permutation(len(kept_obs))) if has_kept else None
    kept_batch = -(-len(kept_obs) // max(1, steps)) if has_kept else 0
    taken = 0
    for group_step, begin in enumerate(range(0, len(shuffled), batch_size)):
        for param_group in optimizer.param_groups:  # linear decay to zero
            done = (first_step + group_step) / total_steps
            param_group["lr"] = learning_rate * (1 - done)
        idx = shuffled[begin:begin + batch_size]
        logits, value = net(obs_t[idx].float(), mask_t[idx])
        policy_loss = objective.policy_loss(logits, idx)
        total = policy_loss + 0.5 * ((value - value_target[idx]) ** 2).mean()
        if has_kept:
            kept_rows = kept_order[group_step * kept_batch:(group_step + 1) * kept_batch]
            if len(kept_rows):
                kept_logits, _ = net(kept_obs[kept_rows].float(), kept_mask[kept_rows])
                total = total - (kept_probs[kept_rows] * torch.log_softmax(kept_logits, dim=-1)).sum(dim=-1).mean()
        optimizer.zero_grad()
        total.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        optimizer.step()
        losses.append(policy_loss.item())
        taken += 1
    return taken


def held_out_measures(net, labels: Labels, held) -> dict[str, float]:
    """Agreement with the teacher and regret on the labelled decisions ``held`` (see :func:`fit`)."""
    import torch

    if not len(held):
        return {"agreement": 0.0, "regret": 0.0}
    values = torch.as_tensor(labels.values)[held]
    best = torch.as_tensor(labels.best)[held]
    net.eval()
    with torch.no_grad():
        logits, _ = net(torch.as_tensor(labels.obs)[held].float(), torch.as_tensor(labels.mask)[held])
    net.train()
    chosen = logits.argmax(-1)
    regret = values.gather(1, chosen[:, None]).squeeze(1) - values.gather(1, best[:, None]).squeeze(1)
    valued = torch.as_tensor(labels.valued)[held].gather(1, chosen[:, None]).squeeze(1)
    # Agreement: the student's card is one the teacher values best. Equal values are common
    # (neighbouring cards such as 2♥ and 3♥ often play out the same), so the student agrees
    # with any of them, not only with the first in card order.
    agrees = valued & (regret <= 1e-6)
    out = {"agreement": float(agrees.float().mean()), "regret": float(regret.mean())}
    if not valued.all():  # a card the teacher did not value has no regret to count: reported apart
        out["regret"] = float(regret[valued].mean()) if valued.any() else 0.0
        out["unvalued"] = float((~valued).float().mean())
    passes = torch.as_tensor(labels.is_pass)[held]
    if passes.any():  # the rollout teacher labels passes: their regret apart from the card plays'
        out["pass_regret"] = float(regret[passes].mean())
        if not passes.all():
            out["play_regret"] = float(regret[~passes].mean())
    return out


def describe(measured: dict[str, float]) -> str:
    """One line of :func:`fit`'s held-out measures."""
    text = f"agreement with the teacher {measured['agreement']:.3f}, regret {measured['regret']:.3f} points/decision"
    if "pass_regret" in measured and "play_regret" in measured:
        text += f" (passes {measured['pass_regret']:.3f}, card plays {measured['play_regret']:.3f})"
    elif "pass_regret" in measured:
        text += " (passes only)"
    if "unvalued" in measured:
        text += f"; {measured['unvalued']:.1%} of its cards unvalued by the teacher (left out of the regret)"
    return text
