"""The trained policy: a PyTorch actor-critic over observation v1, and the agent that plays it.

``PolicyNet(hidden=(256, 256))`` maps ``observation[N, OBS_DIM]`` to 52 action logits and a value.
Sizes come from ``hearts_env.observe`` (never hard-coded). Illegal actions are masked with a large
finite negative (``MASKED_LOGIT``), not ``-inf``: ``-inf`` turns into NaN in softmax gradients and
in exported models.

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

MASKED_LOGIT = -1e9


class PolicyNet(nn.Module):
    """Shared trunk, a policy head (52 logits) and a value head (expected reward of the hand)."""

    def __init__(self, hidden: Sequence[int] = (256, 256), obs_dim: int = OBS_DIM):
        super().__init__()
        self.hidden = tuple(int(h) for h in hidden)
        self.obs_dim = obs_dim
        layers: list[nn.Module] = []
        width = obs_dim
        for size in self.hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, NUM_CARDS)
        self.value_head = nn.Linear(width, 1)
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits [N, 52], value [N])."""
        features = self.trunk(observation)
        logits = self.policy_head(features)
        logits = torch.where(action_mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT))
        return logits, self.value_head(features).squeeze(-1)


class PolicyAgent:
    """Plays a :class:`PolicyNet` through the agent protocol (batched, no gradients)."""

    def __init__(self, net: PolicyNet, name: str = "policy", sample: bool = False, seed: int | None = None):
        self.net = net.eval()
        self.name = name
        self.sample = sample
        self.generator = torch.Generator().manual_seed(seed if seed is not None else 0)

    @torch.no_grad()
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        obs = torch.as_tensor(np.asarray(observation, dtype=np.float32))
        mask = torch.as_tensor(np.asarray(action_mask).astype(bool))
        logits, _ = self.net(obs, mask)
        if self.sample:
            actions = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=self.generator).squeeze(-1)
        else:
            actions = logits.argmax(dim=-1)
        return actions.numpy().astype(np.int64)
