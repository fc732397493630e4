"""The application's error for what the command was asked to do."""

from __future__ import annotations


class UsageError(ValueError):
    """A problem with what the command was asked to do: reported in one line, exit code 2."""
