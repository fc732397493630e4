"""A belief model: where the cards a seat has not seen probably are, read from its observation.

``BeliefNet`` maps one observation (of a four-player game) to, for each of the 52 cards, the
odds that each other seat holds it (left, across, right: the relative seats 1 to 3). It learns
them from games in which the hidden hands are known (``train/belief.py``): the opponents' passes
and plays say a lot about their hands (a seat that ducked a spade trick under Q♠ has the king or
the ace less often; a seat that dumped a high heart early has few hearts), which the constraint
rules alone (sizes, voids) never use. The search player deals its sampled worlds by these odds
(``hearts_env.worlds.place``) instead of uniformly, so its rollouts are played on deals like the
one it is in.

The odds are those of the opponents the model was trained against (``hard`` bots for the shipped
``agents/policies/belief_classic.pt``); against other players they are a prior, not the truth.
It sees only the observation, like every agent.

A belief file is a checkpoint (``agents.checkpoint``: tensors and JSON only, loaded without
running code) whose metadata says ``"kind": "belief"``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from hearts_env.cards import NUM_CARDS
from hearts_env.observe import OBS_DIM
from hearts_env.rules import Rules

from .checkpoint import CheckpointError, load_network, save
from .policy import mlp_trunk

#: The holders a belief gives odds for: the seats left, across and right of the viewer.
HOLDERS = 3
KIND = "belief"


class BeliefNet(nn.Module):
    """Observation ``[N, OBS_DIM]`` to logits ``[N, 52, 3]`` over the other seats, per card."""

    def __init__(self, hidden: Sequence[int] = (512, 512), obs_dim: int = OBS_DIM):
        super().__init__()
        self.hidden = tuple(int(h) for h in hidden)
        self.trunk = mlp_trunk(obs_dim, self.hidden)
        self.head = nn.Linear(self.hidden[-1] if self.hidden else obs_dim, NUM_CARDS * HOLDERS)

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(observation)).view(-1, NUM_CARDS, HOLDERS)


class Belief:
    """A trained :class:`BeliefNet` as the search player uses it."""

    def __init__(self, net: BeliefNet, name: str = "belief"):
        self.net = net.eval()
        self.name = name

    def holder_odds(self, observation: np.ndarray) -> np.ndarray:
        """``[N, 52, 3]`` float32: for each card, the odds that the seat left, across or right holds
        it (rows sum to 1; meaningful for the cards the viewer has not seen)."""
        with torch.no_grad():
            logits = self.net(torch.as_tensor(np.asarray(observation, dtype=np.float32).reshape(-1, OBS_DIM)))
            return torch.softmax(logits, dim=-1).numpy()


def save_belief(path, net: BeliefNet, meta: dict[str, Any]):
    """Write a belief file (a checkpoint with ``kind: belief``)."""
    return save(path, net, {**meta, "kind": KIND})


def load_belief(path, rules: Rules | None = None) -> Belief:
    """The belief model of a file, checked like a policy checkpoint (never runs code): its kind,
    observation version, rules (the same game as ``rules`` when given) and sizes."""
    net, meta = load_network(path, rules, KIND, "belief model", lambda hidden, _scorer: BeliefNet(hidden))
    players = meta["rules"]["num_players"]
    if players != 4:
        raise CheckpointError(f"{path} is made for {players} players; a belief model is for four")
    if meta.get("card_scorer", 0) != 0:
        raise CheckpointError(f"{path} is not a valid belief model: a belief model has no card scorer")
    return Belief(net, name=f"belief:{path}")
