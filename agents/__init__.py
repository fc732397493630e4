"""Agents: the batched agent protocol (``act(observation, action_mask) -> actions``) and ``make(spec)``.

Shipped: ``random`` and the heuristic bots ``easy``, ``normal``, ``hard``; trained policies follow.
"""

from . import heuristic, random_agent  # noqa: F401  (register "easy", "normal", "hard", "random")
from .base import Agent, FunctionAgent, available, make, register

__all__ = ["Agent", "FunctionAgent", "available", "make", "register"]
