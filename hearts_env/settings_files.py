"""Reading settings from YAML/JSON files and ``KEY=VALUE`` overrides, for rules and configs alike.

Both raise the caller's error class with a one-line message that names the file or the override.

Values are read as YAML 1.2 reads them: only ``true``/``false`` (any case) are booleans. PyYAML
follows YAML 1.1, where ``on``/``off``/``yes``/``no`` are booleans too, so ``moon: off`` would
arrive as ``False`` and no option could be set to the word ``off``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

_BOOL_TAG = "tag:yaml.org,2002:bool"


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with YAML 1.2 booleans (see the module docstring)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def parse_value(text: str) -> Any:
    """One YAML value (a file's text or the VALUE of an override), YAML 1.2 booleans."""
    return yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader


def _yaml_problem(err: yaml.YAMLError) -> str:
    """PyYAML's message, which spans several lines, as one line with the line and column."""
    if isinstance(err, yaml.MarkedYAMLError) and err.problem:
        mark = err.problem_mark
        return f"{err.problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else err.problem
    if isinstance(err, yaml.reader.ReaderError):
        return f"character #x{err.character:04x} at position {err.position} is not allowed"
    return " ".join(str(err).split())


def read_mapping(path: str | Path, error: type[Exception], what: str) -> dict[str, Any]:
    """The mapping in a YAML (or JSON) file; ``error`` says what is wrong with it otherwise."""
    path = Path(path)
    if not path.exists():
        raise error(f"{what} file {path} does not exist")
    if not path.is_file():
        raise error(f"{what} file {path} is not a file")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise error(f"{what} file {path} cannot be read: {err.strerror or err}") from None
    # Decode here rather than let read_text raise a UnicodeDecodeError traceback.
    if b"\x00" in raw:
        raise error(f"{path}: not a text file (it holds binary data); expected a YAML or JSON {what} file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(f"{path}: not UTF-8 text (byte 0x{raw[err.start]:02x} at position {err.start}); "
                    f"save the {what} file as UTF-8") from None
    try:
        data = parse_value(text)
    except yaml.YAMLError as err:
        raise error(f"{path}: not valid YAML/JSON: {_yaml_problem(err)}") from None
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
        try:
            target[parts[-1]] = parse_value(value)
        except yaml.YAMLError as err:
            raise error(f"{label} {item!r}: the value is not valid YAML: {_yaml_problem(err)}") from None
    return data
