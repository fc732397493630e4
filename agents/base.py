"""The agent protocol and ``make(spec)``: agents are named by short spec strings.

An agent is stateless and batched: ``act(observation[N, OBS_DIM], action_mask[N, 52]) -> actions[N]``.
Everything it may use is in its arguments (observation v1 and the legal mask), so no agent can
peek at hidden cards. Randomised agents take a seed and draw from their own generator. An agent is
asked only where its seat has a legal card; the built-in ones refuse a mask row without one, or
arguments whose rows do not match, by :func:`checked_inputs`.

Specs: ``random``, ``easy``, ``normal``, ``hard``, the shipped policies, ``ckpt:PATH``, ``onnx:PATH``,
whatever user code adds with :func:`register` / :func:`register_prefix`, and user code named on the
spot: ``FILE.py:NAME`` (a Python file, relative to the current directory or absolute) and
``MODULE:NAME`` (an importable module, e.g. ``my_pkg.bots:make_bot``); see :func:`load_user_agent`.
An agent object, an agent class or factory, or a plain callable ``f(observation, action_mask) ->
actions`` is accepted wherever a spec is. :func:`make` is the one place a spec becomes an agent (the
arena, the envs, training and the terminal game all call it); its errors are :class:`AgentSpecError`.
:func:`is_code_spec` tells the specs that run code, which a spec read from someone's file must not be.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from hearts_env.cards import NUM_CARDS, first_empty_row
from hearts_env.observe import OBS_DIM
from hearts_env.rule_space import RuleSpace
from hearts_env.rules import Rules, RulesError
from hearts_env.state import as_array


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
        # No cast: a float is never a card id (0.7 is not card 0), and the play loop refuses it by name.
        # A torch tensor is read by value; a ragged list is refused by name.
        return as_array(self.function(observation, action_mask), f"{self.name}: actions")


def checked_inputs(observation, action_mask, empty_rows: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``act``'s arguments as arrays, checked: observation v1 ``[N, OBS_DIM]``, a mask ``[N, 52]``
    with a legal card in every row. A ``ValueError`` names what is wrong (a mask of the wrong shape
    would otherwise broadcast, an empty row give a card that is no card at all). ``empty_rows=False``
    leaves the last check to a caller that finds empty rows more cheaply (the bots, on card sets).
    Torch tensors and arrays of any byte order are read by value (as native arrays); a ragged list
    or an array of text or objects is refused by name."""
    observation, action_mask = _numbers(observation, "observation"), _numbers(action_mask, "action_mask")
    if observation.ndim != 2 or observation.shape[1] != OBS_DIM:
        raise ValueError(f"observation v1 vectors have {OBS_DIM} floats, one row per game; got shape "
                         f"{observation.shape}")
    if action_mask.shape != (len(observation), NUM_CARDS):
        raise ValueError(f"action_mask must have shape {(len(observation), NUM_CARDS)}, one row per "
                         f"observation; got {action_mask.shape}")
    if empty_rows:
        refuse_empty_row(first_empty_row(action_mask))
    return observation, action_mask


def _numbers(value, argument: str) -> np.ndarray:
    array = as_array(value, argument)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{argument} must be numbers (float or integer, a mask also bool), got dtype {array.dtype}")
    if not array.dtype.isnative:  # (compiled code reads the bytes)
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def refuse_empty_row(row: int) -> None:
    """The error of :func:`checked_inputs` for mask row ``row`` without a legal card (-1: none)."""
    if row >= 0:
        raise ValueError(f"action_mask row {row} has no legal card: an agent is asked only where its seat "
                         f"has a card to play")


class AgentSpecError(ValueError):
    """An agent spec that cannot be turned into an agent: an empty or unknown spec, a missing or
    unreadable ``ckpt:``/``onnx:`` file (named with its path), a model or bot made for other rules,
    user code (``FILE.py:NAME``, ``MODULE:NAME``) that is missing, fails to load or names no agent.
    The message is one line, for the user."""


_FACTORIES: dict[str, Callable[[int | None], Agent]] = {}
_RULES_ONLY: dict[str, str] = {}  # spec -> the rules preset it plays (trained policies)
_PREFIXES: dict[str, Callable[[str, int | None, object], Agent]] = {}
_PREFIX_FILES: dict[str, str] = {}  # prefix -> what its PATH names ("checkpoint"), checked before loading
_PREFIX_ARGUMENTS: dict[str, str] = {}  # prefix -> the word for what follows it in lists of specs
_SLOW: set[str] = set()  # agents too slow for default line-ups (the search players)
_SLOW_PREFIXES: set[str] = set()  # prefixes whose agents are (expert:N)


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
                    file: str | None = None, argument: str = "PATH", slow: bool = False,
                    rules: str | None = None) -> None:
    """Make ``make(prefix + PATH)`` build ``factory(PATH, seed, rules)`` (e.g. ``ckpt:``). ``file``
    says what PATH names (``"checkpoint"``): a missing file is then reported by its path first.
    ``argument``: how lists of specs name what follows the prefix (``expert:N``); ``slow``: its
    agents are search players (:func:`is_slow`); ``rules``: the only preset its agents play, as
    for :func:`register`."""
    _PREFIXES[prefix] = factory
    _PREFIX_ARGUMENTS[prefix] = argument
    if rules is not None:
        _RULES_ONLY[prefix] = rules
    if file is not None:
        _PREFIX_FILES[prefix] = file
    if slow:
        _SLOW_PREFIXES.add(prefix)


def is_slow(spec) -> bool:
    """Whether a spec names a search player (registered slow, by name or prefix): too slow to play
    inside other searches or rollouts, and measured apart by ``hearts bench``."""
    if not isinstance(spec, str):
        return False
    text = spec.strip()
    return text in _SLOW or _prefix_of(text) in _SLOW_PREFIXES


class SlowPlayerError(AgentSpecError):
    """A search player (:func:`is_slow`) given where a table player is wanted (:func:`make_table_player`)."""


def make_table_player(spec: str, rules=None, seed: int | None = None) -> Agent:
    """An agent for a seat at the tables of a collection, a value fit or the promotion rule: a bot
    or a policy. A search player is refused (:class:`SlowPlayerError`: too slow to play in every
    rollout), before :func:`make` builds the agent (whose own error, an :class:`AgentSpecError` or
    another ``ValueError``, goes on to the caller). The one check of a table player: each caller words
    its refusals for its own users (a command's flag, a recipe's field)."""
    if is_slow(spec):
        raise SlowPlayerError(f"{spec!r} is a search player, too slow to play at every table")
    return make(spec, seed=seed, rules=rules)


def available() -> list[str]:
    return sorted(_FACTORIES) + [f"{p}{_PREFIX_ARGUMENTS[p]}" for p in sorted(_PREFIXES)]


def builtin(rules=None, slow: bool = False) -> list[str]:
    """The named agents (no file prefixes) that play ``rules`` (a Rules or preset name; None: all);
    the slow ones only when ``slow``."""
    return [spec for spec in sorted(_FACTORIES)
            if (rules is None or _plays(spec, rules)) and (slow or spec not in _SLOW)]


def _plays(spec: str, rules) -> bool:
    required = _RULES_ONLY.get(spec)
    if required is None:
        return True
    return RuleSpace.point(required).covers(rules)


def _check_plays(name: str, rules, label: str | None = None) -> None:
    """Refuse an agent registered (by ``name`` or prefix) for one preset, e.g. a trained policy, for
    other rules; ``label``: the spec as the user wrote it (default ``name``)."""
    required = _RULES_ONLY.get(name)
    if required is None or rules is None:
        return
    refusal = RuleSpace.point(required).refusal(rules)
    if refusal is not None:
        raise AgentSpecError(f"{label or name} was trained for the '{required}' rules and cannot play the "
                             f"'{Rules.resolve(rules).name}' rules: {refusal}")


def _prefix_of(text: str) -> str | None:
    """The registered prefix (``ckpt:``, ``onnx:``, ...) that ``text`` starts with, if any."""
    return next((p for p in _PREFIXES if text.startswith(p)), None)


def is_code_spec(spec) -> bool:
    """Whether ``make(spec)`` would run user code: a ``FILE.py:NAME`` or ``MODULE:NAME`` string.

    Decided from the text alone (nothing is loaded), exactly as :func:`make` decides: a registered
    name or prefix wins (``ckpt:x.py:Bot`` names a checkpoint), and ``ckpt:``/``onnx:`` files are
    only ever read as data. Specs read from a file that may come from anyone (a saved game) must
    not be code: running it is for specs the user names on their own command line or in their
    own code. False for anything that is not a string.
    """
    if not isinstance(spec, str):
        return False
    text = spec.strip()
    return text not in _FACTORIES and _prefix_of(text) is None and _USER_SPEC.match(text) is not None


def spec_files(spec) -> list[str]:
    """The files a spec string reads: a ``ckpt:``/``onnx:`` model (and an ONNX model's manifest
    beside it) or a user ``FILE.py``; none for named agents and ``MODULE:NAME``. The arena hashes
    them into its plan and the Ray backend ships them to its workers."""
    if not isinstance(spec, str):
        return []
    text = spec.strip()
    if is_code_spec(text):
        target = _USER_SPEC.match(text).group("target")
        return [target] if target.endswith(".py") else []
    prefix = _prefix_of(text)
    if prefix is None or prefix not in _PREFIX_FILES:
        return []
    path = text[len(prefix):]
    files = [path]
    if prefix == "onnx:" and Path(path).with_suffix(".json").is_file():
        files.append(str(Path(path).with_suffix(".json")))
    return files


def sha256_file(path: str | Path) -> str:
    """The sha256 of a file's bytes (hex), read in blocks: how a model file is named by content."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _from_text(spec: str, seed: int | None, rules) -> Agent:
    text = spec.strip()
    if not text:
        raise AgentSpecError("empty agent spec")
    if text in _FACTORIES:
        _check_plays(text, rules)
        build = lambda: _FACTORIES[text](seed)  # noqa: E731
    else:
        if is_code_spec(text):  # (registered prefixes such as ckpt:, onnx: win over user code)
            return load_user_agent(text, seed=seed, rules=rules)
        prefix = _prefix_of(text)
        if prefix is None:
            raise AgentSpecError(
                f"unknown agent spec {spec!r}; known: {', '.join(available())}, FILE.py:NAME, MODULE:NAME"
            )
        path = text[len(prefix):]
        if prefix in _PREFIX_FILES and not Path(path).is_file():
            raise AgentSpecError(f"agent {spec!r}: {_PREFIX_FILES[prefix]} file not found: {path}")
        _check_plays(prefix, rules, label=text)
        if isinstance(rules, str):  # a preset name: the factories (checkpoint checks) take Rules
            try:
                rules = Rules.resolve(rules)
            except RulesError as err:
                raise AgentSpecError(f"agent {spec!r}: {err}") from None
        build = lambda: _PREFIXES[prefix](path, seed, rules)  # noqa: E731
    try:
        return build()
    except AgentSpecError:  # already one line for the user (CheckpointError, PolicyManifestError, ...)
        raise
    except Exception as err:  # any other failure to build the agent is the spec's problem, in one line
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise AgentSpecError(f"agent {spec!r}: {message}") from err


# ---------------------------------------------------------------------------------------------
# User code: FILE.py:NAME and MODULE:NAME
# ---------------------------------------------------------------------------------------------

_IDENTIFIERS = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
#: ``FILE.py:NAME`` or ``MODULE:NAME`` (registered prefixes such as ``ckpt:`` are tried first).
_USER_SPEC = re.compile(rf"(?P<target>.+\.py|{_IDENTIFIERS}):(?P<name>{_IDENTIFIERS})\Z")
#: Resolved path -> (mtime_ns, module): each file runs once per process (again when it changes).
_USER_FILES: dict[Path, tuple[int, ModuleType]] = {}
#: What user code may raise while it loads or builds an agent that becomes one AgentSpecError line:
#: errors, and SystemExit (a script's sys.exit()), but not KeyboardInterrupt (Ctrl-C stops the program).
_LOAD_ERRORS = (Exception, SystemExit)


def load_user_agent(spec: str, seed: int | None = None, rules=None) -> Agent:
    """The agent named by a user-code spec: ``FILE.py:NAME`` or ``MODULE:NAME``.

    ``FILE.py`` is a path relative to the current directory (or absolute); ``MODULE`` is imported
    as by ``import MODULE`` (the current directory counts, as with ``python -m``). Loading runs that
    code: that is intended, since it is the user's own code named on the user's own command line
    (model files named by ``ckpt:``/``onnx:`` are only ever read as data); a spec read from a file
    that may come from anyone (a saved game) is refused before it gets here (:func:`is_code_spec`).
    A file is imported once per process (again if it changed) under a module name of its own, so
    its ``if __name__ == "__main__"`` block does not run; its own folder is importable meanwhile.

    ``NAME`` (dots reach inside: ``bots.Lowest``) is, decided in this order:

    * an agent, an object with ``act(observation, action_mask)``: used as it is;
    * a class or factory whose required parameters are among ``rules`` and ``seed``: called with
      the keyword arguments ``rules`` (a Rules, or None) and ``seed`` (an int, or None) that its
      signature accepts (named, or ``**kwargs``), and nothing else; it must return an agent;
    * a play function ``f(observation, action_mask) -> actions``: wrapped as a :class:`FunctionAgent`.

    Anything else is an :class:`AgentSpecError` with one line saying what is wrong.
    """
    match = _USER_SPEC.match(spec.strip())
    if match is None:
        raise AgentSpecError(f"agent {spec!r}: not FILE.py:NAME or MODULE:NAME")
    target, name = match.group("target"), match.group("name")
    if target.endswith(".py"):
        module, where = _load_file(spec, target), target
    else:
        module, where = _import_module(spec, target), f"module {target}"
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            defined = _defined_names(module) if obj is module else []
            hint = f"; it defines: {', '.join(defined)}" if defined else ""
            raise AgentSpecError(f"agent {spec!r}: {where} has no {name!r}{hint}")
        obj = getattr(obj, part)
    return _agent_from_object(obj, name, spec, seed, rules)


def _load_file(spec: str, target: str) -> ModuleType:
    path = Path(target).expanduser()
    if not path.is_file():
        raise AgentSpecError(f"agent {spec!r}: file not found: {target}")
    resolved = path.resolve()
    stamp = resolved.stat().st_mtime_ns
    cached = _USER_FILES.get(resolved)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    module_name = "_hearts_user_" + re.sub(r"\W", "_", resolved.stem) + "_" + digest
    loader_spec = importlib.util.spec_from_file_location(module_name, resolved)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module  # dataclasses, pickling and the like look their module up here
    folder = str(resolved.parent)
    sys.path.insert(0, folder)  # as `python FILE.py` would: helpers beside it import
    try:
        loader_spec.loader.exec_module(module)
    except BaseException as err:
        sys.modules.pop(module_name, None)
        if not isinstance(err, _LOAD_ERRORS):  # Ctrl-C (KeyboardInterrupt) and the like go on up
            raise
        raise AgentSpecError(f"agent {spec!r}: {target} failed to load: {_one_line(err)}") from err
    finally:
        with contextlib.suppress(ValueError):  # unless the file took it off itself
            sys.path.remove(folder)
    _USER_FILES[resolved] = (stamp, module)
    return module


def _import_module(spec: str, target: str) -> ModuleType:
    cwd = os.getcwd()
    add = "" not in sys.path and cwd not in sys.path  # the `hearts` script's path lacks the current directory
    if add:
        sys.path.append(cwd)  # last: installed modules keep precedence
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as err:
        if err.name and (target == err.name or target.startswith(err.name + ".")):
            raise AgentSpecError(f"agent {spec!r}: cannot import module {target!r} ({err})") from err
        raise AgentSpecError(f"agent {spec!r}: module {target} failed to import: {_one_line(err)}") from err
    except _LOAD_ERRORS as err:  # whatever else the import raised, one line (Ctrl-C goes on up)
        raise AgentSpecError(f"agent {spec!r}: module {target} failed to import: {_one_line(err)}") from err
    finally:
        if add:
            with contextlib.suppress(ValueError):
                sys.path.remove(cwd)


def _defined_names(module: ModuleType, limit: int = 12) -> list[str]:
    """Public agents, classes and functions defined in ``module`` itself (for a "no such name" hint)."""
    names = [key for key, value in vars(module).items()
             if not key.startswith("_") and not isinstance(value, ModuleType)
             and (callable(value) or callable(getattr(value, "act", None)))
             and getattr(value, "__module__", module.__name__) == module.__name__]
    return names[:limit] + (["..."] if len(names) > limit else [])


def _agent_from_object(obj, what: str, spec: str, seed: int | None, rules) -> Agent:
    """An agent, a class or factory called with the ``rules``/``seed`` it takes, or a play function."""
    if not isinstance(obj, type) and callable(getattr(obj, "act", None)):
        return obj
    if not callable(obj):
        raise AgentSpecError(
            f"agent {spec!r}: {what!r} is {_a(type(obj).__name__)}, neither an agent nor an agent class or "
            f"factory nor a play function f(observation, action_mask)"
        )
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # no signature to read (some builtins): try it as a factory
        signature = None
    params = signature.parameters if signature is not None else {}
    shown = f"{what}{signature}" if signature is not None else f"{what}(...)"
    required = [p for p in params.values()
                if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    is_factory = all(p.name in ("rules", "seed") and p.kind is not p.POSITIONAL_ONLY for p in required)
    if not is_factory:
        if not isinstance(obj, type) and _binds(signature, 2):
            return FunctionAgent(obj, name=getattr(obj, "__name__", None) or what)
        if isinstance(obj, type):
            raise AgentSpecError(f"agent {spec!r}: {shown} needs arguments other than rules and seed; "
                                 f"an agent class may take only rules= and seed=")
        raise AgentSpecError(f"agent {spec!r}: {shown} is neither a play function "
                             f"f(observation, action_mask) nor a factory taking only rules= and seed=")
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in params.values())
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    kwargs = {key: value for key, value in (("rules", rules), ("seed", seed))
              if any_keyword or (key in params and params[key].kind in by_name)}
    try:
        agent = obj(**kwargs)
    except _LOAD_ERRORS as err:
        raise AgentSpecError(f"agent {spec!r}: {what}() raised {_one_line(err)}") from err
    if isinstance(agent, type) or not callable(getattr(agent, "act", None)):
        raise AgentSpecError(f"agent {spec!r}: {what}() returned {_a(type(agent).__name__)}, "
                             f"which has no act(observation, action_mask) method")
    return agent


def _binds(signature: inspect.Signature | None, count: int) -> bool:
    """Whether a callable with ``signature`` takes ``count`` positional arguments (unknown: yes)."""
    if signature is None:
        return True
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _check_act(agent, spec) -> None:
    """Refuse an agent whose ``act`` cannot be called as ``act(observation, action_mask)``."""
    act = agent.function if isinstance(agent, FunctionAgent) else agent.act
    try:
        signature = inspect.signature(act)
    except (TypeError, ValueError):
        return
    if not _binds(signature, 2):
        wrapped = isinstance(agent, FunctionAgent)
        owner = getattr(act, "__name__", "f") if wrapped else f"{type(agent).__name__}.act"
        raise AgentSpecError(
            f"agent {spec!r}: {owner}{signature} cannot be called as act(observation, action_mask)"
        )


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def make(spec: str | Agent | Callable, seed: int | None = None, rules=None) -> Agent:
    """An agent from a spec string (built with ``seed``), an agent object or a callable.

    Every spec goes through here: built-in names, ``ckpt:PATH``, ``onnx:PATH``, names added with
    :func:`register` / :func:`register_prefix`, user code as ``FILE.py:NAME`` or ``MODULE:NAME``
    (:func:`load_user_agent`; it runs that code; :func:`is_code_spec` tells these specs apart),
    agent objects (anything with ``act``), and other callables, taken as ``NAME`` of a user-code
    spec is: an agent class or factory (called with the ``rules=``/``seed=`` it takes) or a play
    function ``f(observation, action_mask)``. ``rules``, when given, lets trained policies and
    file-backed agents refuse a model made for other rules (user factories receive it). Any
    failure is an :class:`AgentSpecError` (a ``ValueError``) with a one-line message.
    """
    if isinstance(spec, str):
        agent, label = _from_text(spec, seed, rules), spec
    elif not isinstance(spec, type) and callable(getattr(spec, "act", None)):
        agent, label = spec, _label(spec)
    elif callable(spec):  # a class, a factory or a play function: as load_user_agent takes its NAME
        label = _label(spec)
        agent = _agent_from_object(spec, label, label, seed, rules)
    else:
        raise AgentSpecError(
            f"an agent spec must be a string, an agent or a callable, got {type(spec).__name__}"
        )
    if not callable(getattr(agent, "act", None)):
        raise AgentSpecError(f"agent {label!r}: no act(observation, action_mask) method")
    _check_act(agent, label)
    return agent


def _label(obj) -> str:
    """What messages call an agent object, class or callable: its ``name``, ``__name__`` or type."""
    name = None if isinstance(obj, type) else getattr(obj, "name", None)
    return str(name or getattr(obj, "__name__", None) or type(obj).__name__)
