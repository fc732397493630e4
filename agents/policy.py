"""The trained policy: a PyTorch actor-critic over observation v1, and the agent that plays it.

``PolicyNet(hidden=(256, 256))`` maps ``observation[N, OBS_DIM]`` to 52 action logits and a value.
Sizes come from ``hearts_env.observe`` (never hard-coded). Illegal actions are masked with a large
finite negative (``MASKED_LOGIT``), not ``-inf``: ``-inf`` turns into NaN in softmax gradients and
in exported models.

``PolicyNet(..., card_scorer=W)`` adds a per-card scorer (``agents.card_scorer``: exact facts
about each card, such as whether it takes the trick as it stands, computed from the observation
inside the network) to the logits; ``W = 0``, the default, has none.

``widened(net, hidden, card_scorer)`` grows a trained network into a larger one that computes exactly
the same function (Net2Net-style; a new scorer starts at zero), so a fine-tuning run can add capacity
without starting over.

``PolicyAgent`` is the agent-protocol face of a network (``act(observation, action_mask)``): the
most probable legal card by default, or a sample with ``sample=True``. ``ckpt:PATH`` specs load one
through :func:`agents.checkpoint.load_policy`, which never unpickles code.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import nn

from hearts_env.cards import NUM_CARDS
from hearts_env.observe import OBS_DIM

from .base import checked_inputs
from .card_scorer import CardScorer

MASKED_LOGIT = -1e9


def mlp_trunk(obs_dim: int, hidden: Sequence[int]) -> nn.Sequential:
    """Linear layers of the ``hidden`` widths, each followed by a ReLU (the networks' shared shape)."""
    layers: list[nn.Module] = []
    width = obs_dim
    for size in hidden:
        layers += [nn.Linear(width, int(size)), nn.ReLU()]
        width = int(size)
    return nn.Sequential(*layers)


class PolicyNet(nn.Module):
    """Shared trunk, a policy head (52 logits, plus the card scorer's when ``card_scorer`` units are
    asked for) and a value head (expected reward of the hand)."""

    def __init__(self, hidden: Sequence[int] = (256, 256), obs_dim: int = OBS_DIM, card_scorer: int = 0):
        super().__init__()
        if card_scorer < 0:
            raise ValueError(f"card_scorer is a number of units, 0 for none; got {card_scorer}")
        self.hidden = tuple(int(h) for h in hidden)
        self.obs_dim = obs_dim
        self.trunk = mlp_trunk(obs_dim, self.hidden)
        width = self.hidden[-1] if self.hidden else obs_dim
        self.policy_head = nn.Linear(width, NUM_CARDS)
        self.value_head = nn.Linear(width, 1)
        self.card_scorer = CardScorer(card_scorer, width) if card_scorer else None
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)

    @property
    def card_scorer_units(self) -> int:
        """Units of the per-card scorer, 0 for none."""
        return self.card_scorer.width if self.card_scorer is not None else 0

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits [N, 52], value [N])."""
        features = self.trunk(observation)
        logits = self.policy_head(features)
        if self.card_scorer is not None:
            logits = logits + self.card_scorer(observation, features)
        logits = torch.where(action_mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT))
        return logits, self.value_head(features).squeeze(-1)


def is_growth(old_hidden: Sequence[int], new_hidden: Sequence[int]) -> bool:
    """Whether ``new_hidden`` keeps every layer of ``old_hidden`` at least as wide, appended layers
    included (they must carry the last old layer's units through)."""
    old, new = list(old_hidden), list(new_hidden)
    if not old or len(new) < len(old) or any(n < o for n, o in zip(new, old)):
        return False
    return all(n >= old[-1] for n in new[len(old):])


@torch.no_grad()
def widened(net: PolicyNet, hidden: Sequence[int], card_scorer: int | None = None) -> PolicyNet:
    """A network with layers ``hidden`` (and ``card_scorer`` scorer units; default: as ``net``)
    whose logits and value equal ``net``'s on every input.

    The old units keep their weights in the leading rows; new units get fresh incoming weights and
    zero weight into every old unit and head, so they change nothing until training uses them.
    Layers appended after the old ones start as identities on the old units: their inputs come out
    of a ReLU and are never negative, so ReLU(x) = x passes them through unchanged. A scorer the
    old network lacks scores every card zero until trained; one it has keeps its weights (its new
    trunk inputs weigh zero).
    """
    if not is_growth(net.hidden, hidden):
        raise ValueError(f"cannot grow layers {list(net.hidden)} into {list(hidden)}: every layer must stay at "
                         f"least as wide and appended layers at least {net.hidden[-1] if net.hidden else 0} wide")
    old_scorer = net.card_scorer_units
    card_scorer = old_scorer if card_scorer is None else card_scorer
    if card_scorer < old_scorer:
        raise ValueError(f"cannot shrink the card scorer from {old_scorer} units to {card_scorer}")
    grown = PolicyNet(hidden=hidden, obs_dim=net.obs_dim, card_scorer=card_scorer)
    old_layers = [m for m in net.trunk if isinstance(m, nn.Linear)]
    new_layers = [m for m in grown.trunk if isinstance(m, nn.Linear)]
    live = net.obs_dim  # leading inputs of the current layer that carry the old network's signal
    for depth, layer in enumerate(new_layers):
        if depth < len(old_layers):
            source = old_layers[depth]
            rows = source.out_features
            layer.weight[:rows, :live] = source.weight
            layer.bias[:rows] = source.bias
        else:
            rows = live
            layer.weight[:rows, :live] = torch.eye(live)
            layer.bias[:rows] = 0.0
        layer.weight[:rows, live:] = 0.0
        live = rows
    for old_head, new_head in ((net.policy_head, grown.policy_head), (net.value_head, grown.value_head)):
        new_head.weight.zero_()
        new_head.weight[:, :live] = old_head.weight
        new_head.bias.copy_(old_head.bias)
    if net.card_scorer is not None:  # old units keep their weights; new ones start with zero out-weights
        old, new = net.card_scorer, grown.card_scorer
        new.card.weight[:old_scorer] = old.card.weight
        new.card.bias[:old_scorer] = old.card.bias
        new.context.weight[:old_scorer] = old.context.weight
        new.trunk.weight[:old_scorer] = 0.0
        new.trunk.weight[:old_scorer, :live] = old.trunk.weight
        new.out.weight.zero_()
        new.out.weight[:, :old_scorer] = old.out.weight
    return grown


class PolicyAgent:
    """Plays a :class:`PolicyNet` through the agent protocol (batched, no gradients)."""

    def __init__(self, net: PolicyNet, name: str = "policy", sample: bool = False, seed: int | None = None):
        self.net = net.eval()
        self.name = name
        self.sample = sample
        self.generator = torch.Generator().manual_seed(seed if seed is not None else 0)

    @torch.no_grad()
    def policy(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(actions [N] int64, probabilities [N, 52])``: the cards played and the softmax of the
        masked logits (what the exported model reports, and what a sampling agent draws from)."""
        observation, action_mask = checked_inputs(observation, action_mask)
        obs = torch.as_tensor(observation.astype(np.float32, copy=False))
        mask = torch.as_tensor(action_mask.astype(bool))
        logits, _ = self.net(obs, mask)
        probabilities = torch.softmax(logits, dim=-1)
        if self.sample:
            actions = torch.multinomial(probabilities, 1, generator=self.generator).squeeze(-1)
        else:
            actions = logits.argmax(dim=-1)
        return actions.numpy().astype(np.int64), probabilities.numpy()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return self.policy(observation, action_mask)[0]
