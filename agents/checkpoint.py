"""Checkpoints: a safe file format with metadata, written atomically, checked when loaded.

A checkpoint is one file written by ``torch.save`` holding only tensors, numbers, strings, lists
and dicts: ``{"format", "model", "optimizer" (optional), "meta" (a JSON string)}``. It is read with
``torch.load(weights_only=True)``, which refuses anything else, so loading a file from a stranger
never runs code. It is written to a temporary file and renamed, so a crash never leaves half a file.

``meta`` records the observation version and size, the rules, the network sizes (``hidden``, and
``card_scorer``: the per-card scorer's units, 0 for none), the training
config and the counters. :func:`load_policy` refuses a checkpoint made for other rules or another
observation version, with a message naming both.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import torch

from agents.base import AgentSpecError
from agents.policy import PolicyAgent, PolicyNet
from hearts_env.observe import OBS_DIM, OBS_VERSION
from hearts_env.rules import Rules

FORMAT = "hearts-lab-checkpoint-1"


class CheckpointError(AgentSpecError):
    """A checkpoint file that cannot be used; the message says why and what was expected. An
    :class:`~agents.base.AgentSpecError`, so ``make("ckpt:PATH")`` reports it as it is."""


def save(path: str | Path, model: PolicyNet, meta: dict[str, Any], optimizer: torch.optim.Optimizer | None = None,
         extra: dict[str, Any] | None = None) -> Path:
    """Write a checkpoint atomically (temporary file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        **meta,
        "obs_version": OBS_VERSION,
        "obs_dim": OBS_DIM,
        "hidden": list(model.hidden),
        "card_scorer": model.card_scorer_units,
    }
    payload: dict[str, Any] = {"format": FORMAT, "model": model.state_dict(), "meta": json.dumps(meta)}
    if optimizer is not None:
        payload["optimizer"] = optimizer.state_dict()
    if extra:
        payload["extra"] = extra
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(handle)
    try:
        torch.save(payload, temporary)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; a checkpoint is an ordinary file
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def load(path: str | Path) -> dict[str, Any]:
    """The checkpoint's contents with ``meta`` decoded; never unpickles code."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for corrupt or unsafe files
        first_line = str(err).splitlines()[0] if str(err) else ""
        raise CheckpointError(f"{path} is not a readable Hearts Lab checkpoint ({type(err).__name__}: {first_line})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a Hearts Lab checkpoint (expected format {FORMAT!r})")
    try:
        payload["meta"] = json.loads(payload["meta"])
    except (KeyError, TypeError, json.JSONDecodeError):
        raise CheckpointError(f"{path} has no readable metadata") from None
    return payload


def check_compatible(meta: dict[str, Any], rules: Rules | None, path: str | Path) -> None:
    if meta.get("obs_version") != OBS_VERSION or meta.get("obs_dim") != OBS_DIM:
        raise CheckpointError(
            f"{path} was made for observation v{meta.get('obs_version')} ({meta.get('obs_dim')} floats); "
            f"this version reads observation v{OBS_VERSION} ({OBS_DIM} floats)"
        )
    if rules is not None:
        made_for = Rules.from_dict(meta["rules"])
        if not made_for.same_game(rules):
            raise CheckpointError(
                f"{path} was trained for rules '{made_for.name}' (trained vs here: {made_for.differences(rules)}); "
                f"the game here uses rules '{rules.name}'"
            )


def load_net(path: str | Path, rules: Rules | None = None) -> tuple[PolicyNet, dict[str, Any]]:
    """The network and metadata of a checkpoint, checked against ``rules`` when given."""
    payload = load(path)
    meta = payload["meta"]
    check_compatible(meta, rules, path)
    net = PolicyNet(hidden=meta["hidden"], card_scorer=int(meta.get("card_scorer", 0)))  # files before it: none
    try:
        net.load_state_dict(payload["model"], strict=True)
    except (RuntimeError, KeyError) as err:
        raise CheckpointError(f"{path}: the weights do not fit the network it describes ({err})") from None
    return net, meta


def load_policy(path: str | Path, rules: Rules | None = None, sample: bool = False, seed: int | None = None) -> PolicyAgent:
    """An agent playing the checkpoint's policy (greedy unless ``sample``)."""
    net, meta = load_net(path, rules)
    return PolicyAgent(net, name=f"ckpt:{Path(path).name}", sample=sample, seed=seed)
