"""The application's error for what the command was asked to do, and the checks of where a command
will write, made before its work starts (not after minutes of it)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class UsageError(ValueError):
    """A problem with what the command was asked to do: reported in one line, exit code 2."""


def writable_file(path: str | Path, what: str) -> Path:
    """``path`` as a file the command can write (``what`` names it, e.g. "the belief file"): not a
    folder, and its folder one that exists or can be made (the writers make missing folders), in
    the nearest existing folder, which can be written to; else :class:`UsageError`."""
    out = Path(path)
    if out.is_dir():
        raise UsageError(f"{out} is a folder; name {what} to write")
    existing = _nearest_existing(out.parent)
    if not _can_write_in(existing):
        raise UsageError(f"cannot write {out}: {existing} is not a folder that can be written to")
    return out


def writable_folder(path: str | Path, option: str) -> Path:
    """``path`` as a folder the command can make or write into (``option`` names the argument, e.g.
    "--out"): not a file, and its nearest existing folder writable; else :class:`UsageError`."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out} is a file; name a folder")
    existing = _nearest_existing(out)
    if not _can_write_in(existing):
        raise UsageError(f"{option} {out}: {existing} is not a folder that can be written to")
    return out


def _can_write_in(folder: Path) -> bool:
    """Whether files and folders can be made in ``folder``: the system is asked (``os.access``), then a
    folder is made there and removed at once, because ``os.access`` says yes to root everywhere, in
    /proc and /sys too, where nothing can be made."""
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return False
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".hearts-check-", dir=folder))
    except OSError:
        return False
    return True


def _nearest_existing(path: Path) -> Path:
    """``path`` or the nearest of its parents that exists (``.`` for a bare relative name)."""
    path = path if str(path) else Path(".")
    while not path.exists() and path.parent != path:
        path = path.parent
    return path
