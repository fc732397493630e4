"""Agents: the batched agent protocol (``act(observation, action_mask) -> actions``) and ``make(spec)``.

Shipped so far: ``random``. The heuristic bots (easy, normal, hard) and trained policies follow.
"""

from . import random_agent  # noqa: F401  (registers "random")
from .base import Agent, FunctionAgent, available, make, register

__all__ = ["Agent", "FunctionAgent", "available", "make", "register"]
