"""Reading settings from YAML/JSON files and ``KEY=VALUE`` overrides, for rules and configs alike.

Both raise the caller's error class with a message that names the file or the override.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def read_mapping(path: str | Path, error: type[Exception], what: str) -> dict[str, Any]:
    """The mapping in a YAML (or JSON) file; ``error`` says what is wrong with it otherwise."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{what} file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise error(f"{path}: not valid YAML/JSON: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise error(f"{path}: expected a mapping of {what} settings, got {type(data).__name__}")
    return data


def apply_overrides(data: dict[str, Any], items: list[str] | None, error: type[Exception], example: str,
                    label: str = "override") -> dict[str, Any]:
    """Set ``KEY=VALUE`` items into ``data`` (values parsed as YAML; dots reach nested sections)."""
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise error(f"{label} {item!r}: write KEY=VALUE, e.g. {example}")
        target = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise error(f"{label} {item!r}: {part} is not a section")
        target[parts[-1]] = yaml.safe_load(value)
    return data
