"""The ``random`` agent: a uniformly random legal card for every game of the batch."""

from __future__ import annotations

import numpy as np

from .base import checked_inputs, register


class RandomAgent:
    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        """Draw from ``seed`` afresh (a league reseeds its bots each iteration: see train/opponents.py)."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        observation, action_mask = checked_inputs(observation, action_mask)
        # Each legal card gets a uniform key; the largest key wins (ties: probability about 1e-14).
        keys = self.rng.random(action_mask.shape)
        return np.where(action_mask.astype(bool), keys + 1.0, 0.0).argmax(axis=1)


register("random", RandomAgent)
