"""Setting up a game on the page's start screen, as a player does (the browser tests' shared steps)."""

from __future__ import annotations

import json


def open_more_rules(page) -> None:
    if not page.evaluate("document.getElementById('more-rules').open"):
        page.click("#more-rules summary")


def start_game(page, players: int = 4, target: int | None = None, moon: str | None = None,
               opponents: list[str] | None = None, rules: dict | None = None, everyone: str | None = None) -> None:
    """Choose on the start screen and press Play: the players (4 or 2), the target, the moon rule, the
    opponent for every seat (``everyone``, a spec) or seat by seat (``opponents``), and more rules."""
    page.check(f"input[name=players][value='{players}']")
    if target is not None:
        page.check(f"input[name=target][value='{target}']")
    if moon is not None:
        page.select_option("#moon", moon)
    if everyone is not None:
        page.check(f"input[name=level][value='{everyone}']")
    if opponents or rules:
        open_more_rules(page)
    for key, value in (rules or {}).items():
        page.select_option(f"select[name=rule-{key}]", json.dumps(value))
    for seat, spec in enumerate(opponents or [], 1):
        page.select_option(f"select[name=opponent-{seat}]", spec)
    page.click("#start")
