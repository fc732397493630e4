"""Runs the ``hearts`` command line as a user would, in a child process, for the end-to-end tests."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def hearts(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m hearts_app.cli ARGS`` from the repository root; output captured as text."""
    return subprocess.run([sys.executable, "-m", "hearts_app.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)
