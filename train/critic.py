"""A critic that sees every hand: PPO's value of a decision read from the whole deal (training only).

The policy's own value head reads what its seat sees (observation v1), so its value of a hand is a
player's guess at the cards it cannot see. With ``critic: full_information`` the rollouts also
record, at each decision of the current policy, who holds every card the seat cannot see
(:func:`hidden_hands`), and a separate :class:`CriticNet` reads the observation and those hands to
value the decision; GAE's advantages and the value loss use it, and the policy head learns from
those advantages alone. The policy network, its observation and what is exported are unchanged: no
seat agent ever gets this input, which exists only inside a training run (rollouts, update,
checkpoint).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from agents.policy import mlp_trunk
from hearts_env import cards
from hearts_env.observe import OBS_DIM
from hearts_env.state import State

#: The other seats of a table of at most four, relative to the deciding seat (next, across, previous).
OTHER_SEATS = 3
#: Columns of :func:`hidden_hands`: card ``c`` held by the relative seat ``r`` (1 to 3) is column
#: ``52 (r - 1) + c``.
HIDDEN_WIDTH = cards.NUM_CARDS * OTHER_SEATS


def hidden_hands(state: State, rows: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """``[k, HIDDEN_WIDTH]`` bool: who of the other seats holds each card, for the games ``rows`` of
    ``state`` seen from ``seat`` (the deciding seats). Read from the whole deal: training only."""
    players = state.num_players
    out = np.zeros((len(rows), HIDDEN_WIDTH), dtype=bool)
    for relative in range(1, players):
        held = cards.to_mask(state.hands[rows, (seat + relative) % players])  # [k, 52]
        out[:, cards.NUM_CARDS * (relative - 1):cards.NUM_CARDS * relative] = held
    return out


class CriticNet(nn.Module):
    """The observation and the hidden hands to the expected reward of the hand (the policy's
    value head's target), through a trunk of its own."""

    def __init__(self, hidden: Sequence[int] = (256, 256)):
        super().__init__()
        self.hidden = tuple(int(h) for h in hidden)
        self.trunk = mlp_trunk(OBS_DIM + HIDDEN_WIDTH, self.hidden)
        self.value = nn.Linear(self.hidden[-1] if self.hidden else OBS_DIM + HIDDEN_WIDTH, 1)

    def forward(self, observation: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """Values ``[N]`` of ``observation [N, OBS_DIM]`` with ``hidden [N, HIDDEN_WIDTH]``."""
        return self.value(self.trunk(torch.cat([observation, hidden.to(observation.dtype)], dim=1))).squeeze(-1)


@torch.no_grad()
def values(critic: CriticNet, observation: np.ndarray, hidden: np.ndarray, device: torch.device,
           batch: int = 65536) -> np.ndarray:
    """The critic's values of many rows, in batches."""
    critic.eval()
    out = np.empty(len(observation), dtype=np.float32)
    for start in range(0, len(observation), batch):
        part = slice(start, start + batch)
        out[part] = critic(torch.as_tensor(observation[part], device=device),
                           torch.as_tensor(hidden[part], device=device)).cpu().numpy()
    return out
