"""Agents: the batched agent protocol (``act(observation, action_mask) -> actions``) and ``make(spec)``.

Shipped: ``random``, the heuristic bots ``easy``, ``normal``, ``hard``, the trained policies
``ppo-classic`` and ``ppo-two-player`` (``agents/policies``; torch needed: ``pip install .[train]``),
and ``search``, a slow Monte Carlo search player over the hard bot (``agents/search.py``).
"""

from . import heuristic, random_agent  # noqa: F401  (register "easy", "normal", "hard", "random")
from pathlib import Path

from .base import Agent, FunctionAgent, available, builtin, make, register, register_prefix

#: Trained policies shipped with the project: spec -> (file under agents/policies, rules preset).
SHIPPED_POLICIES = {
    "ppo-classic": ("ppo_classic.pt", "classic"),
    "ppo-two-player": ("ppo_two_player.pt", "two_player"),
}
POLICY_DIR = Path(__file__).parent / "policies"


def _checkpoint_agent(path: str, seed, rules):
    from .checkpoint import load_policy  # torch is imported only when a checkpoint is used

    return load_policy(path, rules=rules, seed=seed)


def _onnx_agent(path: str, seed, rules):
    from .onnx_policy import load_onnx_policy  # onnxruntime is imported only when an exported model is used

    return load_onnx_policy(path, rules=rules)


def _shipped(filename: str):
    def factory(seed):
        from .checkpoint import load_policy

        return load_policy(POLICY_DIR / filename, seed=seed)

    return factory


register_prefix("ckpt:", _checkpoint_agent)
register_prefix("onnx:", _onnx_agent)
for _spec, (_file, _preset) in SHIPPED_POLICIES.items():
    if (POLICY_DIR / _file).is_file():
        register(_spec, _shipped(_file), rules=_preset)

__all__ = ["Agent", "FunctionAgent", "SHIPPED_POLICIES", "available", "builtin", "make", "register",
           "register_prefix"]


def _search(seed):
    from .search import SearchAgent

    return SearchAgent("classic", seed=seed)


register("search", _search, rules="classic", slow=True)
