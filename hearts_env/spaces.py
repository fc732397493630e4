"""Gymnasium spaces shared by the PettingZoo and Gymnasium environments."""

from __future__ import annotations

import functools

import numpy as np
from gymnasium import spaces

from . import cards
from .observe import OBS_DIM, OBSERVATION_LAYOUT

# Pieces that are not 0/1 flags: scores (total / target) can pass 1 or go below 0 (moon
# subtracted, J♦ bonus); ten targets either way is far beyond any real game. Everything else
# lies in [0, 1].
_WIDE = {"scores": 10.0}


@functools.lru_cache(maxsize=1)
def observation_box() -> spaces.Box:
    low = np.zeros(OBS_DIM, dtype=np.float32)
    high = np.ones(OBS_DIM, dtype=np.float32)
    for name, bound in _WIDE.items():
        piece = OBSERVATION_LAYOUT[name][0]
        low[piece], high[piece] = -bound, bound
    return spaces.Box(low=low, high=high, dtype=np.float32)


def action_mask_box() -> spaces.Box:
    return spaces.Box(low=0, high=1, shape=(cards.NUM_CARDS,), dtype=np.int8)


def action_space() -> spaces.Discrete:
    return spaces.Discrete(cards.NUM_CARDS)
