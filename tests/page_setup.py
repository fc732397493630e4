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


#: The page waits for the player (a card, or a dialog to close), or the game is over.
IDLE = "['your-turn', 'over', 'dialog'].includes(document.body.dataset.state)"
#: Whether the trick, the hand and the turn marker lie inside the window with the page at its top.
IN_VIEW = """() => {
  window.scrollTo(0, 0);
  const inside = (el) => {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.top >= -1 && r.bottom <= innerHeight + 1 && r.left >= -1 && r.right <= innerWidth + 1;
  };
  return { trick: inside(document.getElementById('trick')), hand: inside(document.getElementById('hand')),
           turn: inside(document.querySelector('.seat.to-act .seat-label')) };
}"""


def idle(page, timeout: int = 60_000) -> str:
    page.wait_for_function(IDLE, timeout=timeout)
    return page.evaluate("document.body.dataset.state")


def play_checked_game(page, shots=None, name: str = "") -> dict:
    """Play the game on the page to its end as a person would, checking at every decision that the
    trick, the hand and the turn marker are in view without scrolling; once, that a card the rules
    refuse is refused with no request; once, that leaving for the start screen and "Continue your
    game" bring the game back as it was. ``shots``: a folder for a screenshot mid-hand (``name``)."""
    seen = {"decisions": 0, "refused": False, "continued": False, "summaries": 0, "shot": False}
    for _ in range(1500):
        state = idle(page)
        if state == "over":
            break
        if state == "dialog":
            page.click("#summary-next")
            seen["summaries"] += 1
            continue
        view = page.evaluate(IN_VIEW)
        assert all(view.values()), (view, page.viewport_size, seen)
        seen["decisions"] += 1
        hand = page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")
        legal = page.eval_on_selector_all("#hand button.card.legal", "bs => bs.map(b => b.dataset.card)")
        if page.evaluate("document.body.dataset.phase") == "pass":
            for card in hand[:3]:
                page.click(f'#hand button[data-card="{card}"] .corner', force=True)
            page.click("#pass-confirm")
            continue
        if not seen["refused"] and len(legal) < len(hand):
            illegal = next(c for c in hand if c not in legal)
            requests: list[str] = []
            listen = lambda r: requests.append(r.url) if "/api/" in r.url else None  # noqa: E731
            page.on("request", listen)
            page.click(f'#hand button[data-card="{illegal}"] .corner', force=True)
            page.wait_for_function("document.getElementById('message').textContent !== ''")
            page.remove_listener("request", listen)
            assert not requests, requests
            seen["refused"] = True
        if shots is not None and not seen["shot"] and page.locator("#trick .card").count() >= 2:
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(250)  # (the cards' arrival)
            page.screenshot(path=str(shots / f"{name}.png"))
            seen["shot"] = True
        if not seen["continued"] and seen["summaries"] >= 1:
            before = hand
            page.goto(page.url.split("?")[0] + "?fast=1")  # the site's address: the start screen
            page.wait_for_selector("#continue-box:not([hidden])")
            page.click("#continue")
            assert idle(page) == "your-turn"
            assert page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)") == before
            seen["continued"] = True
            legal = page.eval_on_selector_all("#hand button.card.legal", "bs => bs.map(b => b.dataset.card)")
        page.click(f'#hand button[data-card="{legal[-1]}"] .corner', force=True)
    assert page.evaluate("document.body.dataset.state") == "over"
    sheet = page.locator("#gameover table.sheet-table tbody tr[data-hand]")
    seen["hands"] = sheet.count()
    assert seen["hands"] == seen["summaries"] + 1  # the score sheet lists every hand
    return seen
