"""The agent protocol and ``make(spec)``: agents are named by short spec strings.

An agent is stateless and batched: ``act(observation[N, OBS_DIM], action_mask[N, 52]) -> actions[N]``.
Everything it may use is in its arguments (observation v1 and the legal mask), so no agent can
peek at hidden cards. Randomised agents take a seed and draw from their own generator.

Specs: ``random``, ``easy``, ``normal``, ``hard``, the shipped policies, ``ckpt:PATH``, ``onnx:PATH``
and whatever user code adds with :func:`register` / :func:`register_prefix`. An agent object or a
plain callable ``f(observation, action_mask) -> actions`` is accepted wherever a spec is.
:func:`make` is the one place a spec becomes an agent (the arena, the envs, training and the
terminal game all call it); its errors are :class:`AgentSpecError`.
"""

from __future__ import annotations

from pathlib import Path
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


class AgentSpecError(ValueError):
    """An agent spec that cannot be turned into an agent: an empty or unknown spec, a missing or
    unreadable ``ckpt:``/``onnx:`` file (named with its path), a model or bot made for other rules.
    The message is one line, for the user."""


_FACTORIES: dict[str, Callable[[int | None], Agent]] = {}
_RULES_ONLY: dict[str, str] = {}  # spec -> the rules preset it plays (trained policies)
_PREFIXES: dict[str, Callable[[str, int | None, object], Agent]] = {}
_PREFIX_FILES: dict[str, str] = {}  # prefix -> what its PATH names ("checkpoint"), checked before loading
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


def register_prefix(prefix: str, factory: Callable[[str, int | None, object], Agent],
                    file: str | None = None) -> None:
    """Make ``make(prefix + PATH)`` build ``factory(PATH, seed, rules)`` (e.g. ``ckpt:``). ``file``
    says what PATH names (``"checkpoint"``): a missing file is then reported by its path first."""
    _PREFIXES[prefix] = factory
    if file is not None:
        _PREFIX_FILES[prefix] = file


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

    if not Rules.preset(required).same_game(rules):
        raise AgentSpecError(
            f"{name} was trained for the '{required}' rules and cannot play '{getattr(rules, 'name', rules)}'"
        )


def _from_text(spec: str, seed: int | None, rules) -> Agent:
    text = spec.strip()
    if not text:
        raise AgentSpecError("empty agent spec")
    if text in _FACTORIES:
        _check_plays(text, rules)
        build = lambda: _FACTORIES[text](seed)  # noqa: E731
    else:
        prefix = next((p for p in _PREFIXES if text.startswith(p)), None)
        if prefix is None:
            raise AgentSpecError(f"unknown agent spec {spec!r}; known: {', '.join(available())}")
        path = text[len(prefix):]
        if prefix in _PREFIX_FILES and not Path(path).is_file():
            raise AgentSpecError(f"agent {spec!r}: {_PREFIX_FILES[prefix]} file not found: {path}")
        build = lambda: _PREFIXES[prefix](path, seed, rules)  # noqa: E731
    try:
        return build()
    except AgentSpecError:  # already one line for the user (CheckpointError, PolicyManifestError, ...)
        raise
    except Exception as err:  # any other failure to build the agent is the spec's problem, in one line
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise AgentSpecError(f"agent {spec!r}: {message}") from err


def make(spec: str | Agent | Callable, seed: int | None = None, rules=None) -> Agent:
    """An agent from a spec string (built with ``seed``), an agent object or a callable.

    Every spec goes through here: built-in names, ``ckpt:PATH``, ``onnx:PATH``, names added with
    :func:`register` / :func:`register_prefix`, agent objects and plain callables. ``rules``, when
    given, lets trained policies and file-backed agents refuse a model made for other rules. Any
    failure is an :class:`AgentSpecError` (a ``ValueError``) with a one-line message.
    """
    if isinstance(spec, str):
        agent = _from_text(spec, seed, rules)
    elif isinstance(spec, Agent):
        agent = spec
    elif callable(spec):
        agent = FunctionAgent(spec)
    else:
        raise AgentSpecError(
            f"an agent spec must be a string, an agent or a callable, got {type(spec).__name__}"
        )
    if not callable(getattr(agent, "act", None)):
        raise AgentSpecError(f"agent {spec!r}: no act(observation, action_mask) method")
    return agent
