"""Checkpoints: a safe file format with metadata, written atomically, checked when loaded.

A checkpoint is one file written by ``torch.save`` holding only tensors, numbers, strings, lists
and dicts: ``{"format", "model", "optimizer" (optional), "meta" (a JSON string)}``. It is read with
``torch.load(weights_only=True)``, which refuses anything else, so loading a file from a stranger
never runs code. It is written to a temporary file and renamed, so a crash never leaves half a file.

``meta`` records the observation version and size, the rules, the network sizes (``hidden``, and
``card_scorer``: the per-card scorer's units, 0 for none), the training
config and the counters. :func:`load_net` always checks the rules (a checkpoint without usable
rules is refused, and ``meta["rules"]`` comes back as the validated ``Rules.to_dict()``);
:func:`load_policy` refuses a checkpoint made for other rules or another observation version, with
a message naming both.

Checkpoints come from strangers too, so loading trusts nothing the file says until it is checked
against what the file holds, before a network is built from it: the zip members may not unpack to
more than the file's size (torch.save never compresses; torch.load would inflate a zip bomb in full);
the stored weights may not claim more bytes (elements times element size) than the file holds, since
torch.save stores every tensor's data uncompressed (a tensor can claim a shape its storage does not
back: ``torch.zeros(1).expand(H, 629)`` keeps one element, and weights may share one storage); and
the sizes in ``meta`` must be those of the stored weights (``hidden: [20000000]`` in a small file
would otherwise take 50 GB). Every refusal is one line; torch's own messages for refused files
advise loading them unsafely, so they are never passed on.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from functools import partial
from pathlib import Path
from typing import Any

import torch

from agents.base import AgentSpecError
from agents.policy import PolicyAgent, PolicyNet
from hearts_env import atomic_files
from hearts_env.observe import OBS_DIM, OBS_VERSION
from hearts_env.rule_space import RuleSpace, space_of
from hearts_env.rules import Rules, RulesError
from hearts_env.settings_files import first_line_without_advice

FORMAT = "hearts-lab-checkpoint-1"


class CheckpointError(AgentSpecError):
    """A checkpoint file that cannot be used; the message says why and what was expected. An
    :class:`~agents.base.AgentSpecError`, so ``make("ckpt:PATH")`` reports it as it is."""


def save(path: str | Path, model: torch.nn.Module, meta: dict[str, Any], optimizer: torch.optim.Optimizer | None = None,
         extra: dict[str, Any] | None = None) -> Path:
    """Write a checkpoint atomically (temporary file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        **meta,
        "obs_version": OBS_VERSION,
        "obs_dim": OBS_DIM,
        "hidden": list(model.hidden),
        "card_scorer": getattr(model, "card_scorer_units", 0),  # a belief model (agents.belief) has none
    }
    state = model.state_dict()
    poisoned = _non_finite(state)
    if poisoned:  # a diverged fit (a NaN loss, learning rate or label): refused before anything is written
        raise CheckpointError(f"refusing to write {path}: {poisoned} holds NaN or infinite numbers (the training "
                              f"diverged: a non-finite loss, step size or label); nothing was written")
    payload: dict[str, Any] = {"format": FORMAT, "model": state, "meta": json.dumps(meta)}
    if optimizer is not None:
        payload["optimizer"] = optimizer.state_dict()
    if extra:
        payload["extra"] = extra
    return atomic_files.write_with(path, partial(torch.save, payload), mode=0o644)


def _non_finite(state: dict[str, Any]) -> str | None:
    """The name of the first floating-point tensor holding a NaN or an infinity, else None."""
    return next((name for name, tensor in state.items() if isinstance(tensor, torch.Tensor)
                 and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())), None)


def _invalid(path: str | Path, why: str) -> CheckpointError:
    return CheckpointError(f"{path} is not a valid Hearts Lab checkpoint: {why}")


def _check_archive(path: Path) -> None:
    """Refuse, before torch reads it, a file that is not the zip archive of uncompressed members that
    torch.save writes: torch.load inflates compressed members in full, however small the file."""
    size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive:
            declared = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise CheckpointError(f"{path} is not a readable Hearts Lab checkpoint: not the zip archive torch.save "
                              "writes") from None
    if declared > size:  # stored members always add up to less than the archive holding them
        raise _invalid(path, f"its members unpack to {declared} bytes from a file of {size} bytes "
                             "(compressed, which torch.save never does)")


def load(path: str | Path) -> dict[str, Any]:
    """The checkpoint's contents with ``meta`` decoded; never unpickles code."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    _check_archive(path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        # torch's message here advises re-running torch.load unsafely: never passed on.
        raise CheckpointError(f"{path} is not a readable Hearts Lab checkpoint: it holds Python objects other than "
                              "tensors, numbers, strings, lists and dicts") from None
    except Exception as err:  # torch raises several types for corrupt files (a damaged zip member, ...)
        raise CheckpointError(f"{path} is not a readable Hearts Lab checkpoint ({type(err).__name__}: "
                              f"{first_line_without_advice(err)})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a Hearts Lab checkpoint (expected format {FORMAT!r})")
    try:
        payload["meta"] = json.loads(payload["meta"])
    except (KeyError, TypeError, json.JSONDecodeError, RecursionError):  # RecursionError: absurdly nested
        raise _invalid(path, "its metadata is not readable JSON") from None
    if not isinstance(payload["meta"], dict):
        raise _invalid(path, "its metadata is not a JSON object")
    return payload


def _check_weights(meta: dict[str, Any], state: Any, path: str | Path, build) -> None:
    """Refuse stored weights ``state`` that claim more bytes than the file holds, and metadata whose
    network sizes are not those of the weights, before any network is built: the network is
    allocated from the metadata, and the weights' claimed bytes are bounded by the file's size.
    ``build(hidden, card_scorer)`` makes the network the metadata describes; it is built on the
    meta device, shapes without memory."""
    hidden, scorer = meta.get("hidden"), meta.get("card_scorer", 0)  # files before card_scorer: none
    if not isinstance(hidden, list) or not all(type(h) is int and h > 0 for h in hidden):
        raise _invalid(path, f"'hidden' must be a list of layer sizes (whole numbers above 0), not {hidden!r:.60}")
    if type(scorer) is not int or scorer < 0:
        raise _invalid(path, f"'card_scorer' must be a whole number of units (0 for none), not {scorer!r:.60}")
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise _invalid(path, "its weights are not a table of tensors")
    # torch.save writes each storage once, uncompressed (and the archive was checked to be so), so
    # weights that are really stored take no more bytes than the file. A tensor's shape alone proves
    # nothing: a stride-0 view or views sharing one storage claim the full shape over less data.
    claimed = sum(t.numel() * t.element_size() for t in state.values())
    size = Path(path).stat().st_size
    if claimed > size:
        raise _invalid(path, f"its weights claim {claimed} bytes in a file of {size} bytes (tensors not backed "
                             "by stored data of their own, e.g. stride-0 views)")
    if 2 * len(hidden) > len(state):  # each layer stores two tensors: refuse before even a shape-only net
        raise _invalid(path, f"the metadata names {len(hidden)} layers; the file stores {len(state)} tensors")
    with torch.device("meta"):  # shapes without memory
        net = build(hidden, scorer)
        expected = {k: tuple(t.shape) for k, t in net.state_dict().items()}
    stored = {k: tuple(t.shape) for k, t in state.items()}
    for name in [*expected, *(k for k in stored if k not in expected)]:  # the first difference, input side first
        if expected.get(name) != stored.get(name):
            raise _invalid(
                path, f"its metadata (hidden {hidden!s:.60}, card_scorer {scorer}) needs {name} of shape "
                      f"{expected.get(name, 'none')}; the file stores {stored.get(name, 'none')}")


def check_compatible(meta: dict[str, Any], rules: Rules | None, path: str | Path) -> Rules:
    """The rules the checkpoint was made for, checked (usable, and the same game as ``rules`` when
    given), after its observation version and size."""
    if meta.get("obs_version") != OBS_VERSION or meta.get("obs_dim") != OBS_DIM:
        raise CheckpointError(
            f"{path} was made for observation v{meta.get('obs_version')} ({meta.get('obs_dim')} floats); "
            f"this version reads observation v{OBS_VERSION} ({OBS_DIM} floats)"
        )
    if "rules" not in meta:
        raise _invalid(path, "its metadata names no rules")
    try:
        made_for = Rules.from_dict(meta["rules"])
    except RulesError as err:
        raise _invalid(path, f"its metadata has no usable rules ({err!s:.200})") from None
    try:
        space = space_of(meta, made_for)
    except RulesError as err:
        raise _invalid(path, f"its metadata has no usable rule space ({err!s:.200})") from None
    refusal = None if rules is None else space.refusal(rules)
    if refusal is not None:
        trained = (f"the '{made_for.name}' rules" if space.is_point() else
                   f"a space of rule sets around '{space.base.name}'")
        raise CheckpointError(f"{path} was trained for {trained} and cannot play the '{Rules.resolve(rules).name}' rules: {refusal}")
    return made_for


def load_network(path: str | Path, rules: Rules | None, kind: str, what: str, build) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The network and metadata of a checkpoint of ``kind`` (metadata ``kind``; files without one
    are policies), every check made in order: the kind (else "... not a ``what``"), the rules
    (against ``rules`` when given; ``meta["rules"]`` comes back as the validated
    ``Rules.to_dict()``), the stored weights' sizes, then the weights themselves.
    ``build(hidden, card_scorer)`` makes the network the metadata describes."""
    payload = load(path)
    meta = payload["meta"]
    found = meta.get("kind", "policy")
    if found != kind:
        raise CheckpointError(f"{path} is a {found!r:.40} model, not a {what}")
    meta["rules"] = check_compatible(meta, rules, path).to_dict()
    _check_weights(meta, payload.get("model"), path, build)
    poisoned = _non_finite(payload["model"])
    if poisoned:
        raise _invalid(path, f"its weights hold NaN or infinite numbers ({poisoned}): a network that diverged")
    net = build(meta["hidden"], meta.get("card_scorer", 0))
    try:
        net.load_state_dict(payload["model"], strict=True)
    except (RuntimeError, KeyError) as err:  # shapes were checked; e.g. a tensor of another type
        raise _invalid(path, f"the weights do not fit the network it describes ({str(err).splitlines()[0]})") from None
    return net, meta


def load_net(path: str | Path, rules: Rules | None = None) -> tuple[PolicyNet, dict[str, Any]]:
    """The policy network and metadata of a checkpoint, checked against ``rules`` when given. The
    rules are checked either way: ``meta["rules"]`` is the validated ``Rules.to_dict()``."""
    return load_network(path, rules, "policy", "policy",
                        lambda hidden, scorer: PolicyNet(hidden=hidden, card_scorer=scorer))


def save_narrowed(source: str | Path, out: str | Path, space: RuleSpace) -> Path:
    """A copy of the policy checkpoint ``source`` at ``out``, the same weights, that declares ``space``
    (``rule_space``) as the rule sets it plays: a narrowing of its own space that covers its own rules,
    else :class:`CheckpointError` naming the first option outside. For a policy trained on at some rule
    sets of its space, which may have cost it the others."""
    net, meta = load_net(source)
    rules = Rules.from_dict(meta["rules"])
    problem = space.outside(space_of(meta, rules)) or space.refusal(rules)
    if problem:
        raise CheckpointError(f"{source}: a narrowed rule space lies within the policy's own and covers its "
                              f"rules: {problem}")
    return save(out, net, {**meta, "rule_space": space.to_dict()})


def load_policy(path: str | Path, rules: Rules | None = None, sample: bool = False, seed: int | None = None) -> PolicyAgent:
    """An agent playing the checkpoint's policy (greedy unless ``sample``)."""
    net, meta = load_net(path, rules)
    return PolicyAgent(net, name=f"ckpt:{Path(path).name}", sample=sample, seed=seed)
