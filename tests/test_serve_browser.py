"""The browser page of ``hearts serve``, driven in headless Chromium by Playwright.

One game against easy bots on the real app (``create_app``, served by uvicorn on a free port):
the three pass picks (one by click, one by the arrow keys and Enter, one typed), a whole hand
played by clicking and by the keyboard, an illegal card refused with its reason shown, the hand
summary and scores, a reload that continues the game, the phone layout (375x667 without horizontal
scroll), and the game's end (finished through the API): the winner, the record download, "New game".

The page is opened with ``?fast=1`` (no delay per bot card). A screenshot is taken mid-hand into
the test's tmp folder; with ``HEARTS_SCREENSHOT=1`` it is also copied to docs/serve-screenshot.png.
Chromium is the system's (``/usr/bin/chromium``, installed by scripts/setup_clients.sh); no browser
is downloaded.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("playwright")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("chromium is not installed (scripts/setup_clients.sh installs it); the browser tests need it",
                allow_module_level=True)

import uvicorn
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_MS = 15_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from hearts_app.serve.app import create_app

    app = create_app(["random", "easy", "normal", "hard"], tmp_path_factory.mktemp("web-games"))
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the test server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield b
        b.close()


# ---- helpers ------------------------------------------------------------------------------------


def wait_idle(page):
    """Until the page waits for the human (or the game is over); returns that state."""
    page.wait_for_function("['your-turn', 'over'].includes(document.body.dataset.state)", timeout=TIMEOUT_MS)
    return page.evaluate("document.body.dataset.state")


def hand_cards(page) -> list[str]:
    return page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")


def legal_cards(page) -> list[str]:
    return page.eval_on_selector_all("#hand button.card.legal", "bs => bs.map(b => b.dataset.card)")


def focused_card(page) -> str | None:
    return page.evaluate("document.activeElement && document.activeElement.dataset.card || null")


def typed_name(card: str) -> str:
    """What a person types for a card: "qs", "10h"."""
    rank = "10" if card[0] == "T" else card[0]
    return (rank + card[1]).lower()


def symbol(card: str) -> str:
    """How the page writes a card: "Q♠", "10♥"."""
    return ("10" if card[0] == "T" else card[0]) + "♣♦♥♠"["CDHS".index(card[1])]


def keyboard_focus(page, card: str) -> None:
    """Move the focus to ``card`` with Home and the arrow keys."""
    page.keyboard.press("Home")
    for _ in range(hand_cards(page).index(card)):
        page.keyboard.press("ArrowRight")
    assert focused_card(page) == card


def picks_left(page) -> int:
    return int(page.get_attribute("#pass-panel", "data-picks-left"))


# ---- the test -----------------------------------------------------------------------------------


def test_play_a_hand_in_the_browser(server, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_default_timeout(TIMEOUT_MS)

    # Start a classic game against three easy bots.
    page.goto(f"{server}/?fast=1")
    page.wait_for_selector("body[data-state=setup]")
    presets = page.eval_on_selector_all("#preset option", "os => os.map(o => o.value)")
    assert "classic" in presets and "two_player" in presets
    rule_selects = page.eval_on_selector_all("select[data-rule]", "ss => ss.map(s => s.dataset.rule)")
    assert {"target_score", "moon", "pass_cycle"} <= set(rule_selects), rule_selects
    page.select_option("#preset", "classic")
    opponents = page.locator("#opponents select")
    expect(opponents).to_have_count(3)
    for i in range(3):
        opponents.nth(i).select_option("easy")
    page.click("#start")
    assert wait_idle(page) == "your-turn"
    assert "game=" in page.url
    game_id = page.url.split("game=")[1].split("&")[0]
    assert page.evaluate("document.body.dataset.phase") == "pass"
    assert len(hand_cards(page)) == 13
    expect(page.locator("#pass-panel")).to_contain_text("left")
    expect(page.locator("#pass-panel")).to_contain_text("3 more to choose")
    expect(page.get_by_role("group", name="Your hand").get_by_role("button")).to_have_count(13)
    # Cards are buttons labelled in words, red or black.
    first = hand_cards(page)[0]
    button = page.locator(f'#hand button[data-card="{first}"]')
    assert button.get_attribute("aria-label").split(" of ")[1] in {"clubs", "diamonds", "hearts", "spades"}
    assert page.get_by_role("button", name=button.get_attribute("aria-label"), exact=True).count() == 1

    # Pass pick 1: a click.
    pick1 = hand_cards(page)[0]
    page.click(f'#hand button[data-card="{pick1}"]')
    wait_idle(page)
    assert picks_left(page) == 2
    expect(page.locator(f'#hand button[data-card="{pick1}"]')).to_have_class(re.compile(r"\bchosen\b"))
    # Pass pick 2: the arrow keys and Enter.
    pick2 = hand_cards(page)[1]
    keyboard_focus(page, pick2)
    page.keyboard.press("Enter")
    wait_idle(page)
    assert picks_left(page) == 1
    chosen = page.eval_on_selector_all("#pass-panel .card", "cs => cs.map(c => c.dataset.card)")
    assert chosen == [pick1, pick2] or sorted(chosen) == sorted([pick1, pick2])
    # Pass pick 3: typing the card's name and Enter.
    pick3 = hand_cards(page)[5]
    page.locator("body").click(position={"x": 5, "y": 5})  # focus off the hand: typing works anywhere
    page.keyboard.type(typed_name(pick3))
    expect(page.locator("#typed")).to_contain_text(typed_name(pick3))
    page.keyboard.press("Enter")
    wait_idle(page)
    assert page.evaluate("document.body.dataset.phase") == "play"
    hand = hand_cards(page)
    assert len(hand) == 13 and not {pick1, pick2, pick3} & set(hand)
    expect(page.locator("#log")).to_contain_text("You passed")

    # Play the hand: clicks and keys, one refused card, a screenshot and a reload on the way.
    refused = False
    turn = 0
    screenshot = tmp_path / "serve-screenshot.png"
    while page.evaluate("document.body.dataset.hand") == "0":
        state = wait_idle(page)
        if state == "over" or page.evaluate("document.body.dataset.hand") != "0":
            break
        hand, legal = hand_cards(page), legal_cards(page)
        assert legal and set(legal) <= set(hand)
        if not refused and len(legal) < len(hand):
            illegal = next(c for c in hand if c not in legal)
            page.click(f'#hand button[data-card="{illegal}"]')
            message = page.locator("#message")
            expect(message).to_contain_text("cannot be played now: ")  # and the reason, from the server
            reason = message.inner_text().split("cannot be played now: ")[1].strip()
            assert any(word in reason for word in ("follow", "first trick", "hearts", "Q♠")), reason
            assert hand_cards(page) == hand  # nothing changed
            refused = True
        on_table = page.locator("#trick .card").count()
        if not screenshot.exists() and (turn >= 4 and on_table >= 2 or turn == 10):  # mid-hand, cards on the table
            expect(page.locator("#status")).not_to_be_empty()
            page.screenshot(path=str(screenshot))
        if turn == 6:  # a reload continues the same hand
            page.reload()
            wait_idle(page)
            assert page.url.endswith(f"game={game_id}") or f"game={game_id}&" in page.url
            assert hand_cards(page) == hand and legal_cards(page) == legal
            assert page.evaluate("document.body.dataset.hand") == "0"
        card = legal[turn % len(legal)]
        method = turn % 3
        if method == 0:
            page.click(f'#hand button[data-card="{card}"]')
        elif method == 1:
            page.keyboard.type(typed_name(card))
            page.keyboard.press("Enter")
        else:
            keyboard_focus(page, card)
            page.keyboard.press("Space" if turn % 2 else "Enter")
        page.wait_for_function(
            "card => document.body.dataset.state !== 'your-turn' || document.body.dataset.hand !== '0' ||"
            " ![...document.querySelectorAll('#hand button.card')].some(b => b.dataset.card === card)",
            arg=card, timeout=TIMEOUT_MS)
        expect(page.locator("#log")).to_contain_text(f"You play {symbol(card)}")
        turn += 1
        assert turn <= 13
    assert turn == 13 and refused

    # The hand summary and the scores.
    wait_idle(page)
    summary = page.locator("#summary")
    expect(summary).to_be_visible()
    expect(summary).to_contain_text("Hand 1 summary")
    totals = [int(x) for x in page.eval_on_selector_all("#scores tbody td.total", "ts => ts.map(t => t.textContent)")]
    assert len(totals) == 4 and sum(totals) in (26, 78)  # 78: a moon, the others get 26 each
    moon = summary.locator(".moon")
    assert moon.count() == (1 if sum(totals) == 78 else 0)
    expect(page.locator("#last-trick")).to_contain_text("Last trick")
    assert page.evaluate("document.body.dataset.phase") == "pass"  # hand 2 passes right
    expect(page.locator("#pass-panel")).to_contain_text("right")

    # Reload after the hand: the same game, hand 2, the same cards.
    hand = hand_cards(page)
    page.reload()
    wait_idle(page)
    assert page.evaluate("document.body.dataset.hand") == "1" and hand_cards(page) == hand
    totals_again = [int(x) for x in page.eval_on_selector_all("#scores tbody td.total", "ts => ts.map(t => t.textContent)")]
    assert totals_again == totals

    # A phone: the same game, no horizontal scroll, every card reachable.
    phone = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True)
    mobile = phone.new_page()
    mobile.goto(page.url)
    wait_idle(mobile)
    assert hand_cards(mobile) == hand
    widths = mobile.evaluate("[document.body.scrollWidth, document.documentElement.scrollWidth]")
    assert max(widths) <= 375, widths
    right_edge = mobile.eval_on_selector_all("#hand button.card", "bs => Math.max(...bs.map(b => b.getBoundingClientRect().right))")
    assert right_edge <= 375
    mobile.click("#new-game-top")
    mobile.wait_for_selector("body[data-state=setup]")
    assert max(mobile.evaluate("[document.body.scrollWidth, document.documentElement.scrollWidth]")) <= 375
    phone.close()

    # Finish the game through the API (the first legal card each time), then the page shows the end.
    assert page.is_hidden("#record-link")  # the record (every hand as dealt) comes at the end
    api = f"{server}/api/v1/games/{game_id}"
    view = page.request.get(api).json()
    for _ in range(2000):
        if view["phase"] == "over":
            break
        response = page.request.post(f"{api}/play", data={"card": view["legal"][0]})
        assert response.status == 200, response.text()
        view = response.json()
    assert view["phase"] == "over"
    page.reload()
    assert wait_idle(page) == "over"
    over = page.locator("#gameover")
    expect(over).to_be_visible()
    expect(over).to_contain_text("Final scores")
    expect(over).to_contain_text("win")
    href = page.get_attribute("#record-link-over", "href")
    assert game_id in href and page.is_visible("#record-link-over")
    response = page.request.get(f"{server}/{href}")
    assert response.status == 200 and '"type": "game"' in response.text().replace('":"', '": "')
    page.click("#new-game")
    page.wait_for_selector("body[data-state=setup]")
    assert "game=" not in page.url

    assert not errors, errors
    context.close()

    assert screenshot.is_file()
    if os.environ.get("HEARTS_SCREENSHOT") == "1":
        shutil.copyfile(screenshot, ROOT / "docs" / "serve-screenshot.png")
