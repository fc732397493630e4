"""The losses of a fit, one function each, and the arithmetic they share.

:func:`imitation` (cross-entropy to the teacher's preferences where they are clear:
:func:`fit_targets`), :func:`regression` (the logits learn minus the points:
:func:`centered_regression_loss`) and :func:`improvement` (the student's odds times
``exp(-points / T)``, learnt without bias from one-deal labels: :func:`improvement_loss`) each turn a
set of :class:`~train.distill.shards.Labels` into an :class:`Objective`; :data:`LOSSES` names them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..config import REWARD_SCALE
from .shards import Labels, policy_probs


def teacher_targets(values: np.ndarray, mask: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(-values / T)`` over the legal cards (zeros elsewhere)."""
    legal_values = np.where(mask, values, np.inf)
    best = legal_values.min(axis=1, keepdims=True)
    weight = np.where(mask, np.exp(-(legal_values - best) / temperature), 0.0)
    return (weight / weight.sum(axis=1, keepdims=True)).astype(np.float32)


def fit_targets(values: np.ndarray, mask: np.ndarray, own_probs: np.ndarray, temperature: float,
                margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The card-play targets and which decisions the teacher overrules.

    The teacher's values are means over a dozen sampled deals: small differences are noise. Where
    the student's own (most probable) card is within ``margin`` points of the teacher's best, the
    student keeps its own odds; elsewhere it learns ``softmax(-values / T)``.
    """
    legal_values = np.where(mask, values, np.inf)
    own_card = own_probs.argmax(axis=1)
    gap = legal_values[np.arange(len(values)), own_card] - legal_values.min(axis=1)
    overruled = gap > margin
    target = np.where(overruled[:, None], teacher_targets(values, mask, temperature), own_probs)
    return target.astype(np.float32), overruled


def centered_regression_loss(logits, values, mask):
    """Mean squared error between the logits and minus the points, both centred over each
    decision's legal cards, in units of 26 points: only the differences between one decision's
    cards are learnt, so the luck of the deal (shared by all its cards) drops out."""
    import torch

    count = mask.sum(dim=-1, keepdim=True)
    target = torch.where(mask, -values, torch.zeros_like(values))
    target = target - target.sum(dim=-1, keepdim=True) / count
    pred = torch.where(mask, logits, torch.zeros_like(logits))
    pred = pred - pred.sum(dim=-1, keepdim=True) / count
    error = torch.where(mask, (pred - target) * REWARD_SCALE, torch.zeros_like(pred))
    return (error ** 2).sum() / mask.sum()


def improvement_loss(logits, values, mask, old_log_probs, temperature: float, valued=None):
    """``sum_a pi(a) * (points(a) / T + log pi(a) - log pi_old(a))`` per decision, averaged: the
    expected points under the new policy plus T times its divergence KL(pi || pi_old) from the
    student's. Minimised exactly by ``pi ~ pi_old * exp(-points / T)``, the student improved by the
    card values and kept near itself where they are unclear; and, being linear in the points, its
    mean over noisy one-deal labels is its value for their expectation: the noise averages out.

    ``valued`` marks the cards with points where a teacher values some legal cards only (the expert
    teacher's candidates): see :func:`improvement_among_valued_loss`.
    """
    import torch

    if valued is not None:
        # Apart, rather than this with every legal card valued: a rollout fit keeps its exact
        # arithmetic, so a recipe's rounds still give the same weights bit for bit.
        return improvement_among_valued_loss(logits, values, mask, old_log_probs, temperature, valued)
    log_probs = torch.log_softmax(logits, dim=-1)
    probs = log_probs.exp()
    points = torch.where(mask, values, torch.zeros_like(values))
    old = torch.where(mask, old_log_probs, torch.zeros_like(old_log_probs))
    per_card = torch.where(mask, points / temperature + log_probs - old, torch.zeros_like(points))
    return (probs * per_card).sum(dim=-1).mean()


def improvement_among_valued_loss(logits, values, mask, old_log_probs, temperature: float, valued):
    """:func:`improvement_loss` where only the ``valued`` legal cards have points. The improvement
    acts among those: the odds of each valued card, given that one of them is played, learn the
    student's such odds times ``exp(-points / T)``; the odds of the unvalued cards, and the share of
    the valued ones as a whole, are held at the student's (by the divergence over that coarser
    split). With every legal card valued it equals :func:`improvement_loss`."""
    import torch

    valued = valued & mask
    zeros = torch.zeros_like(values)
    log_probs = torch.log_softmax(logits, dim=-1)
    old = torch.where(mask, old_log_probs, zeros)
    # The log of the valued cards' share, new and old (a decision with none valued adds nothing).
    none = torch.full_like(values, -1e30)  # finite, so that such a decision's gradients stay finite
    any_valued = valued.any(dim=-1, keepdim=True)
    share = torch.where(any_valued, torch.logsumexp(torch.where(valued, log_probs, none), dim=-1, keepdim=True), 0.0)
    old_share = torch.where(any_valued, torch.logsumexp(torch.where(valued, old, none), dim=-1, keepdim=True), 0.0)
    given = log_probs - share
    points = torch.where(valued, values, zeros)
    within = torch.where(valued, given.exp() * (points / temperature + given - (old - old_share)), zeros).sum(dim=-1)
    unvalued = mask & ~valued
    rest = torch.where(unvalued, log_probs.exp() * (log_probs - old), zeros).sum(dim=-1)
    rest = rest + (share.exp() * (share - old_share)).squeeze(-1)
    return (within + rest).mean()


class Objective(NamedTuple):
    """A loss of :func:`fit`, made ready for one set of labels."""

    policy_loss: Callable  # (logits [B, 52], rows [B] of the labels) -> the policy loss of those rows
    overruled: np.ndarray  # [N] bool: the decisions where the teacher's card replaces the student's
    note: str = ""  # what the fit's first line says of it


def imitation(net, labels: Labels, temperature: float, margin: float) -> Objective:
    """``loss="imitation"``: cross-entropy to the teacher's preferences ``softmax(-points / T)``
    (among the cards it valued) where its best card beats the student's by more than ``margin``
    points, to the student's own odds elsewhere (:func:`fit_targets`): for the search teachers'
    averaged values."""
    import torch

    own_probs = policy_probs(net, labels.obs, labels.mask)
    # The valued cards as the legal ones: the unvalued weigh nothing, and a student's card the
    # teacher left unvalued is overruled.
    target, overruled = fit_targets(labels.values, labels.valued, own_probs, temperature, margin)
    target = torch.as_tensor(target)

    def policy_loss(logits, rows):
        return -(target[rows] * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()

    return Objective(policy_loss, overruled,
                     f" ({overruled.mean():.1%} where the teacher overrules the student by more than {margin} points)")


def improvement(net, labels: Labels, temperature: float, margin: float) -> Objective:
    """``loss="improvement"``: the student's odds times ``exp(-points / T)`` (:func:`improvement_loss`;
    among the valued cards where the teacher values some only), which stays near the student where
    the values are unclear."""
    import torch

    own_probs = policy_probs(net, labels.obs, labels.mask)
    old_log_probs = torch.as_tensor(np.log(np.maximum(own_probs, 1e-30, out=own_probs), out=own_probs))
    values, mask, valued = (torch.as_tensor(a) for a in (labels.values, labels.mask, labels.valued))

    def policy_loss(logits, rows):
        return improvement_loss(logits, values[rows], mask[rows], old_log_probs[rows], temperature,
                                valued[rows] if labels.partly_valued else None)

    return Objective(policy_loss, np.zeros(len(labels.values), dtype=bool))


def regression(net, labels: Labels, temperature: float, margin: float) -> Objective:
    """``loss="regression"``: the logits learn minus the points of each legal card, centred per
    decision (:func:`centered_regression_loss`). Every legal card must be valued."""
    import torch

    if labels.partly_valued:  # it weighs every legal card by its points; an unvalued card would read as free
        raise ValueError(f"the shards in {labels.folder} leave some legal cards unvalued (the expert teacher values "
                         f"the cards it searches only); fit them with loss 'imitation' or 'improvement', not "
                         f"'regression'")
    values, mask = torch.as_tensor(labels.values), torch.as_tensor(labels.mask)

    def policy_loss(logits, rows):
        return centered_regression_loss(logits, values[rows], mask[rows])

    return Objective(policy_loss, np.zeros(len(labels.values), dtype=bool))


#: The losses of :func:`fit`, by name.
LOSSES = {"imitation": imitation, "regression": regression, "improvement": improvement}
