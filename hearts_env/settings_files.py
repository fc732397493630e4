"""Reading settings from YAML/JSON files and ``KEY=VALUE`` overrides, for rules and configs alike.

Both raise the caller's error class with a one-line message that names the file or the override.

Values are read as YAML 1.2 reads them. Only ``true``/``false`` (any case) are booleans: PyYAML
follows YAML 1.1, where ``on``/``off``/``yes``/``no`` are booleans too, so ``moon: off`` would
arrive as ``False`` and no option could be set to the word ``off``. And a number in exponent
notation is a float however it is written (``1e6``, ``1e-4``, ``1.0e6``): YAML 1.1 wants a dot and
a signed exponent (``1.0e+6``), so PyYAML reads ``1e6`` as the string ``"1e6"``.

A whole-number setting (:func:`whole_number`) takes an int or a float that is a whole number, so
``target_score: 1e2`` and ``total_decisions=1e6`` mean 100 and 1,000,000, in rules and training
configs alike.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

_BOOL_TAG = "tag:yaml.org,2002:bool"
_FLOAT_TAG = "tag:yaml.org,2002:float"


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with YAML 1.2 booleans and floats (see the module docstring)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
# YAML 1.2's exponent forms that YAML 1.1's float pattern misses (no dot, or an unsigned exponent);
# added after PyYAML's own resolvers, none of which matches a text with an exponent.
_Loader.add_implicit_resolver(_FLOAT_TAG, re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$"),
                              list("-+0123456789."))

#: Words of a library's advice to load a refused file unsafely (torch's ``weights_only=False``,
#: NumPy's ``allow_pickle=True``): a message carrying them is never passed on.
_UNSAFE_ADVICE = ("weights_only", "weights only", "allow_pickle", "unsafe", "trust", "can still be loaded", "pickle")


def first_line_without_advice(err: BaseException) -> str:
    """The first line of a library's error about a file from a stranger (its type's name when it
    has no message), or ``"refused by safe loading"`` when that line advises loading the file
    unsafely: such advice is never passed on."""
    text = str(err)
    line = text.splitlines()[0] if text.strip() else type(err).__name__
    if any(words in line.lower() for words in _UNSAFE_ADVICE):
        return "refused by safe loading"
    return line


def whole_number(value: Any) -> int:
    """A whole-number setting as an int: an int (NumPy's too) or a float that is a whole number
    (``1e6`` is 1,000,000). Raises ``ValueError("must be a whole number")`` for anything else: a
    bool, a string (``"100"``), a fraction, infinity or NaN (the caller names the setting)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():  # not inf or nan
        return int(value)
    raise ValueError("must be a whole number")


#: Bounds on one YAML value (a settings file, an override): nesting depth, and values once every alias
#: is expanded (settings are a few hundred; a 400-byte "billion laughs" of aliases expands to 10**9).
MAX_DEPTH = 50
MAX_EXPANDED_VALUES = 100_000


def parse_value(text: str) -> Any:
    """One YAML value (a file's text or the VALUE of an override), YAML 1.2 booleans. Nested deeper
    than :data:`MAX_DEPTH`, or more than :data:`MAX_EXPANDED_VALUES` values with its aliases expanded
    (a YAML alias bomb), or an alias of a value that holds itself, is a ``yaml.YAMLError`` saying so,
    before anything is built from it."""
    loader = _Loader(text)  # _Loader is a SafeLoader
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # the parser recurses per level, before any bound of ours could count
            raise yaml.YAMLError(f"nested too deeply (at most {MAX_DEPTH} levels)") from None
        if node is None:
            return None
        _check_bounds(node)
        try:
            return loader.construct_document(node)
        except (ValueError, TypeError, AttributeError, OverflowError) as err:
            # PyYAML's constructors convert with Python's own: an int of more digits than Python
            # converts, a date such as 2001-13-01, or a text tagged !!int or !!timestamp fail there.
            raise yaml.YAMLError(_unreadable_value(err)) from None
    finally:
        loader.dispose()


def _unreadable_value(err: Exception) -> str:
    """One line for a value PyYAML parsed but could not build (``err`` from its constructor)."""
    text = (str(err).splitlines() or [type(err).__name__])[0]
    if "integer string conversion" in text:  # Python's limit, with advice to lift it: not passed on
        return f"a number of more than {sys.get_int_max_str_digits():,} digits"
    return f"a value cannot be read ({text[:200]})"


def _check_bounds(root: yaml.Node) -> None:
    """Refuse a node tree nested deeper than :data:`MAX_DEPTH` or expanding (aliases counted at every
    use) to more than :data:`MAX_EXPANDED_VALUES` values. Sizes are memoised per node, so shared
    (aliased) nodes are measured once however often they are used."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise yaml.YAMLError(f"nested too deeply (at most {MAX_DEPTH} levels)")
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in on_path:
            raise yaml.YAMLError("an alias refers to a value that contains it (a recursive structure)")
        on_path.add(key)
        if isinstance(node, yaml.MappingNode):
            total = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size(item, depth + 1) for item in node.value)
        else:
            total = 1
        on_path.discard(key)
        if total > MAX_EXPANDED_VALUES:
            raise yaml.YAMLError(f"too large: more than {MAX_EXPANDED_VALUES:,} values once its aliases are "
                                 "expanded (an alias bomb?)")
        sizes[key] = total
        return total

    size(root, 0)


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
    named_otherwise = [key for key in data if not isinstance(key, str)]
    if named_otherwise:  # (YAML reads `1: 2` as a number key)
        raise error(f"{path}: {what} settings are named by text, got {named_otherwise[:5]!r}")
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
