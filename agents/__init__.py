"""Agents: the batched agent protocol (``act(observation, action_mask) -> actions``) and ``make(spec)``.

Shipped: ``random`` and the heuristic bots ``easy``, ``normal``, ``hard``; trained policies follow.
"""

from . import heuristic, random_agent  # noqa: F401  (register "easy", "normal", "hard", "random")
from .base import Agent, FunctionAgent, available, make, register, register_prefix


def _checkpoint_agent(path: str, seed, rules):
    from .checkpoint import load_policy  # torch is imported only when a checkpoint is used

    return load_policy(path, rules=rules, seed=seed)


def _onnx_agent(path: str, seed, rules):
    from .onnx_policy import load_onnx_policy  # onnxruntime is imported only when an exported model is used

    return load_onnx_policy(path, rules=rules)


register_prefix("ckpt:", _checkpoint_agent)
register_prefix("onnx:", _onnx_agent)

__all__ = ["Agent", "FunctionAgent", "available", "make", "register", "register_prefix"]
