"""Fixtures shared by test files: ``exported`` (tests/test_export.py and tests/test_seat_record.py)."""

from __future__ import annotations

import json
import os
import shutil

import pytest


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``hearts export`` of a small policy, plus golden vectors, in one folder (made once and shared
    by the pytest-xdist workers: the export is the slow part)."""
    from filelock import FileLock  # comes with torch

    from export import fixtures
    from hearts_app import cli

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    out = shared / "hearts-export"
    with FileLock(str(shared / "hearts-export.lock")):
        if not (out / "done").is_file():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            checkpoint = fixtures.small_policy(out / "policy.pt")
            assert cli.main(["export", str(checkpoint), "--out", str(out), "--golden", "6"]) == 0
            (out / "cli_golden.json").write_text((out / "golden.json").read_text())
            fixtures.write_vectors(out, model_records=60)  # more records, other rules, invalid records
            (out / "done").write_text("ok")
    return {"dir": out, "checkpoint": out / "policy.pt", "model": out / "policy.onnx", "manifest": out / "policy.json",
            "cli_golden": json.loads((out / "cli_golden.json").read_text()),
            "golden": json.loads((out / "golden.json").read_text()),
            "sample": json.loads((out / "sample_record.json").read_text())}
