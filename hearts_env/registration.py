"""Registered ids: ``gymnasium.make("HeartsLab/Hearts-v1")`` and ``pettingzoo.make("aec", "HeartsLab/hearts-v1")``.

Gymnasium ids (single-seat env, and ``gymnasium.make_vec`` for the batched vector env):

* ``HeartsLab/Hearts-v1``: classic Hearts, learner at seat 0, random opponents, one-hand episodes;
* ``HeartsLab/HeartsTwoPlayer-v1``: the same for the two-player game.

Keyword arguments of ``make`` override the defaults (``rules``, ``seat``, ``opponents``, ``episode``,
``illegal_action``: ``"terminate"``, so Gymnasium's ``check_env`` passes; ``"raise"`` on request).
"""

from __future__ import annotations

import gymnasium

GYM_IDS = {
    "HeartsLab/Hearts-v1": {"rules": "classic"},
    "HeartsLab/HeartsTwoPlayer-v1": {"rules": "two_player"},
}
PETTINGZOO_IDS = {
    "HeartsLab/hearts-v1": {"rules": "classic"},
    "HeartsLab/hearts_two_player-v1": {"rules": "two_player"},
}

for _id, _kwargs in GYM_IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(
            id=_id,
            entry_point="hearts_env.gym:HeartsSeatEnv",
            vector_entry_point="hearts_env.gym:HeartsVectorEnv",
            kwargs=_kwargs,
        )

try:
    import pettingzoo
except ImportError:  # pragma: no cover - pettingzoo is a dependency; keep the engine importable
    pettingzoo = None
if pettingzoo is not None and hasattr(pettingzoo, "register"):
    for _id, _kwargs in PETTINGZOO_IDS.items():
        if _id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", _id, entry_point="hearts_env.aec:env", kwargs=_kwargs)
