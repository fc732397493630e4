"""The agent protocol and ``make(spec)``: agents are named by short spec strings.

An agent is stateless and batched: ``act(observation[N, OBS_DIM], action_mask[N, 52]) -> actions[N]``.
Everything it may use is in its arguments (observation v1 and the legal mask), so no agent can
peek at hidden cards. Randomised agents take a seed and draw from their own generator.

Specs: ``random`` (and, as they land, ``easy``, ``normal``, ``hard``, ``ckpt:PATH``, ``onnx:PATH``).
A plain callable ``f(observation, action_mask) -> actions`` is accepted wherever a spec is.
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything with a batched ``act``."""

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray: ...


class FunctionAgent:
    """Wraps a plain callable ``f(observation, action_mask) -> actions`` as an agent."""

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], np.ndarray], name: str | None = None):
        self.function = function
        self.name = name or getattr(function, "__name__", "function")

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return np.asarray(self.function(observation, action_mask), dtype=np.int64)


_FACTORIES: dict[str, Callable[[int | None], Agent]] = {}
_RULES_ONLY: dict[str, str] = {}  # spec -> the rules preset it plays (trained policies)
_PREFIXES: dict[str, Callable[[str, int | None, object], Agent]] = {}
_SLOW: set[str] = set()  # agents too slow for default line-ups (the search player)


def register(name: str, factory: Callable[[int | None], Agent], rules: str | None = None,
             slow: bool = False) -> None:
    """Make ``make(name)`` build ``factory(seed)``; ``rules`` names the only preset it plays;
    ``slow`` agents (searching players) stay out of default line-ups."""
    _FACTORIES[name] = factory
    if rules is not None:
        _RULES_ONLY[name] = rules
    if slow:
        _SLOW.add(name)


def register_prefix(prefix: str, factory: Callable[[str, int | None, object], Agent]) -> None:
    """Make ``make(prefix + PATH)`` build ``factory(PATH, seed, rules)`` (e.g. ``ckpt:``)."""
    _PREFIXES[prefix] = factory


def available() -> list[str]:
    return sorted(_FACTORIES) + [f"{p}PATH" for p in sorted(_PREFIXES)]


def builtin(rules=None, slow: bool = False) -> list[str]:
    """The named agents (no file prefixes) that play ``rules`` (a Rules or preset name; None: all);
    the slow ones only when ``slow``."""
    name = getattr(rules, "name", rules)
    return [spec for spec in sorted(_FACTORIES)
            if (rules is None or _RULES_ONLY.get(spec, name) == name) and (slow or spec not in _SLOW)]


def _check_plays(name: str, rules) -> None:
    """Refuse a trained policy for rules other than the ones it was trained for."""
    required = _RULES_ONLY.get(name)
    if required is None or rules is None:
        return
    from hearts_env.rules import Rules

    if Rules.preset(required).model_dump(exclude={"name"}) != Rules.resolve(rules).model_dump(exclude={"name"}):
        raise ValueError(f"{name} was trained for the '{required}' rules and cannot play '{getattr(rules, 'name', rules)}'")


def make(spec: str | Agent | Callable, seed: int | None = None, rules=None) -> Agent:
    """An agent from a spec string, an agent object or a callable.

    ``rules``, when given, lets file-backed agents (``ckpt:PATH``) refuse a model made for other rules.
    """
    if isinstance(spec, str):
        name = spec.strip()
        if name in _FACTORIES:
            _check_plays(name, rules)
            return _FACTORIES[name](seed)
        for prefix, factory in _PREFIXES.items():
            if name.startswith(prefix):
                return factory(name[len(prefix):], seed, rules)
        raise ValueError(f"unknown agent spec {spec!r}; known: {', '.join(available())}")
    if isinstance(spec, Agent):
        return spec
    if callable(spec):
        return FunctionAgent(spec)
    raise TypeError(f"an agent spec must be a string, an agent or a callable, got {type(spec).__name__}")
