"""Writing a file whole or not at all: the project's one write-to-a-temporary-file-then-rename.

A reader (another process, a resumed run, the next request) sees either the file as it was or the new
file complete, never half of one. The new contents are written to a temporary file in the same folder
(a rename is atomic only within one file system), flushed to the disk (``fsync``), and renamed over
the target. On any failure (a full disk, an exception in the caller's writer, an interrupt) the
temporary file is removed, the exception goes on to the caller, and the target stays as it was.

The temporary file is ``.<name>.<random>.tmp`` beside the target: hidden, unique per call (two
processes writing the same file never share one), and made with the permissions an ordinary
``open(path, "w")`` gives (``0o666`` less the umask) unless ``mode`` says otherwise.

* :func:`write_bytes` / :func:`write_text`: contents already in memory;
* :func:`write_stream`: a writer that takes an open binary stream (``np.savez``, ``json.dump``);
* :func:`write_with`: a writer that takes a path (``torch.save``, ``shutil.copyfile``).

It imports only the standard library, so every layer may use it (DESIGN.md section 4).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_with(path: str | Path, write: Callable[[Path], object], *, mode: int | None = None) -> Path:
    """Make ``path`` by ``write(temporary)`` (which writes the whole file at the path it is given),
    then fsync and rename it over ``path``; returns ``path``. ``mode``: the file's permission bits
    (default: those of an ordinary new file)."""
    path = Path(path)
    temporary = _new_temporary(path)
    try:
        write(temporary)
        _sync(temporary)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def write_stream(path: str | Path, write: Callable[[BinaryIO], object], *, mode: int | None = None) -> Path:
    """Make ``path`` by ``write(stream)`` (a binary stream open on the temporary file); atomic as
    :func:`write_with`."""
    def into(temporary: Path) -> None:
        with open(temporary, "wb") as stream:
            write(stream)

    return write_with(path, into, mode=mode)


def write_bytes(path: str | Path, data: bytes, *, mode: int | None = None) -> Path:
    """Make ``path`` hold ``data``; atomic as :func:`write_with`."""
    return write_with(path, lambda temporary: temporary.write_bytes(data), mode=mode)


def write_text(path: str | Path, text: str, *, encoding: str | None = None, mode: int | None = None) -> Path:
    """Make ``path`` hold ``text`` (``encoding`` as :meth:`pathlib.Path.write_text` takes it); atomic
    as :func:`write_with`."""
    return write_with(path, lambda temporary: temporary.write_text(text, encoding=encoding), mode=mode)


def _new_temporary(path: Path) -> Path:
    """An empty file of our own beside ``path`` (created exclusively: never one another call made)."""
    while True:
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return temporary


def _sync(path: Path) -> None:
    """Flush ``path``'s contents to the disk, so that the rename never names a file still in memory."""
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
