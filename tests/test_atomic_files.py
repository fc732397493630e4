"""hearts_env.atomic_files: a file is written whole or not at all, and no temporary file is left."""

from __future__ import annotations

import errno
import os
import stat

import numpy as np
import pytest

from hearts_env import atomic_files


def test_each_writer_makes_the_whole_file_and_leaves_nothing_beside_it(tmp_path):
    assert atomic_files.write_bytes(tmp_path / "a.bin", b"\x00\x01") == tmp_path / "a.bin"
    atomic_files.write_text(tmp_path / "b.txt", "é\n", encoding="utf-8")
    atomic_files.write_stream(tmp_path / "c.npz", lambda stream: np.savez(stream, x=np.arange(3)))
    atomic_files.write_with(tmp_path / "d.txt", lambda path: path.write_text("by path"))
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "é\n"
    assert np.load(tmp_path / "c.npz")["x"].tolist() == [0, 1, 2]
    assert (tmp_path / "d.txt").read_text() == "by path"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "b.txt", "c.npz", "d.txt"]


def test_an_existing_file_is_replaced(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("old")
    atomic_files.write_text(path, "new")
    assert path.read_text() == "new" and list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("fails_in", ["writer", "rename"])
def test_a_failure_leaves_the_old_file_untouched_and_no_temporary_file(tmp_path, monkeypatch, fails_in):
    """A full disk while writing, or at the rename: the error reaches the caller, the file is as it was."""
    path = tmp_path / "record.jsonl"
    path.write_text("the old record\n")

    def full_disk(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    def half_then_full(stream):
        stream.write(b"half of the new record")
        full_disk()

    if fails_in == "rename":
        monkeypatch.setattr(atomic_files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left on device"):
        atomic_files.write_stream(path, half_then_full if fails_in == "writer" else lambda s: s.write(b"new"))
    assert path.read_text() == "the old record\n"
    assert list(tmp_path.iterdir()) == [path]


def test_an_interrupt_in_the_writer_leaves_no_temporary_file_and_no_new_file(tmp_path):
    def interrupted(path):
        path.write_bytes(b"part of a checkpoint")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_files.write_with(tmp_path / "p.pt", interrupted)
    assert not list(tmp_path.iterdir())


def test_mode_sets_the_permissions_and_the_default_is_an_ordinary_file(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_files.write_bytes(tmp_path / "plain", b"")
        atomic_files.write_bytes(tmp_path / "set", b"", mode=0o600)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "set").stat().st_mode) == 0o600
