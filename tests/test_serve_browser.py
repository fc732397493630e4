"""The browser page of ``hearts serve``, driven in headless Chromium by Playwright.

Headless Chromium plays whole games of the quick preset (to 50) against easy bots on the real app
(``create_app``, served by uvicorn on a free port), once on a phone (390x844, touch) and once on a
desktop (1280x800), at the fastest pace (``?fast=1``: the bots' cards are replayed without delay):

* passing: three cards chosen, one put back (undo, and by clicking it again), then "Pass left →";
* a refused card, refused by the page (no request) with the view's reason shown and nothing changed;
* the turn marker: every change of the marked seat is recorded (a MutationObserver), and it goes
  round the table seat by seat; the status never says "Your turn" while another seat is marked;
* the hand summary dialog ("Next hand"), the scores, the game over dialog, the record, "New game";
* a reload mid-game continues the game and keeps the log (localStorage);
* the desktop also plays and passes by keyboard, asks before leaving a game in progress, shows the pace (at
  "fast", West stays marked at least 250 ms before its card), reloads while the bots' cards are
  being shown (the log then holds each card once: what was not shown yet is added) and switches
  to the four-colour deck; the phone hides the keyboard help (touch screen);
* the layout: nothing overlaps (bounding boxes of the hand's cards, the trick's places, the seat
  labels and the status) at 390 and 1280 px, and at 320 and 820 px, with no horizontal scroll.

Screenshots of every size are taken mid-hand (and of the German start screen) into the test's tmp
folder; with ``HEARTS_SCREENSHOT=1`` they are copied to docs/: serve-screenshot.png (desktop),
serve-screenshot-phone.png, serve-320x568-de.png, serve-844x390-de.png and their -start.png.
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

from tests.page_setup import play_checked_game, start_game

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
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}

# Records every change of the marked seat with the status shown at that moment.
TURN_RECORDER = """
window.__turns = [];
document.addEventListener("DOMContentLoaded", () => {
  const note = () => window.__turns.push([document.body.dataset.turn,
                                          (document.getElementById("status") || {}).textContent || "",
                                          performance.now(),
                                          (document.querySelector(".seat.to-act") || {dataset: {}}).dataset.seat || "",
                                          [...document.querySelectorAll("#scores td.hand-points")].map(td => +td.textContent)]);
  new MutationObserver(note).observe(document.body, {attributes: true, attributeFilter: ["data-turn"]});
  new MutationObserver(note).observe(document.getElementById("status"), {childList: true, characterData: true, subtree: true});
});
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from hearts_app.serve.app import create_app

    app = create_app(["random", "easy", "normal", "hard"], tmp_path_factory.mktemp("web-games"), seed=46)
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


def wait_idle(page) -> str:
    """Until the page waits for the human (a card, or a dialog to close), or the game is over."""
    page.wait_for_function("['your-turn', 'over', 'dialog'].includes(document.body.dataset.state)", timeout=TIMEOUT_MS)
    return page.evaluate("document.body.dataset.state")


def body_data(page, name: str) -> str:
    return page.evaluate(f"document.body.dataset.{name}")


def hand_cards(page) -> list[str]:
    return page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")


def legal_cards(page) -> list[str]:
    return page.eval_on_selector_all("#hand button.card.legal", "bs => bs.map(b => b.dataset.card)")


def log_lines(page) -> list[str]:
    return page.eval_on_selector_all("#log li", "ls => ls.map(l => l.textContent)")


def touch_card(page, card: str, phone: bool, checked: bool = True) -> None:
    """A tap (phone) or click (desktop) on a card's index in its corner (rank and suit), the part of
    a fanned card its neighbour leaves visible. ``checked``: Playwright first waits until the card
    is still and makes sure it is the card under the pointer (a few tenths of a second a card; the
    whole games skip it after the first hand, to keep the test short)."""
    corner = page.locator(f'#hand button[data-card="{card}"] .corner')
    if phone:
        corner.tap(force=not checked)
    else:
        corner.click(force=not checked)


def typed_name(card: str) -> str:
    """What a person types for a card: "qs", "10h"."""
    rank = "10" if card[0] == "T" else card[0]
    return (rank + card[1]).lower()


def symbol(card: str) -> str:
    """How the page writes a card: "Q♠", "10♥"."""
    return ("10" if card[0] == "T" else card[0]) + "♣♦♥♠"["CDHS".index(card[1])]


TURN_NOW = """() => ({
  status: document.getElementById('status').textContent,
  marked: [...document.querySelectorAll('.seat.to-act')].map(s => s.dataset.pos),
  hand: [...document.querySelectorAll('#hand button.card')].map(b => b.dataset.card),
  legal: [...document.querySelectorAll('#hand button.card.legal')].map(b => b.dataset.card),
  on_table: document.querySelectorAll('#trick .card').length})"""


def focused_card(page) -> str | None:
    return page.evaluate("document.activeElement && document.activeElement.dataset.card || null")


def keyboard_focus(page, card: str) -> None:
    """Move the focus to ``card`` with Home and the arrow keys."""
    page.keyboard.press("Home")
    for _ in range(hand_cards(page).index(card)):
        page.keyboard.press("ArrowRight")
    assert focused_card(page) == card


BOXES = """() => {
  const box = (el, what) => { const r = el.getBoundingClientRect();
    return {what, l: r.left, t: r.top, r: r.right, b: r.bottom}; };
  const all = (sel, what) => [...document.querySelectorAll(sel)].filter(e => !e.closest('[hidden]')).map(e => box(e, what));
  return {hand: all('#hand .card', 'hand card'), slots: all('#trick .slot', 'trick place'),
          labels: all('.seat:not([hidden]) .seat-label', 'seat label').concat(all('.seat:not([hidden]) .backs', 'card backs')),
          status: all('#status', 'status'), pass: all('#pass-panel', 'pass panel'),
          width: Math.max(document.body.scrollWidth, document.documentElement.scrollWidth),
          viewport: window.innerWidth};
}"""


def check_layout(page) -> None:
    """Nothing on the felt overlaps: the hand's cards, the trick's four places, the seat labels
    and backs, the status (a hand's cards overlap each other as a fan, each with a visible strip),
    and nothing sticks out sideways."""
    b = page.evaluate(BOXES)
    width = b["viewport"]
    assert b["width"] <= width, f"horizontal scroll at {width} px: {b['width']}"

    def overlap(x, y, slack=0.5):
        return min(x["r"], y["r"]) - max(x["l"], y["l"]) > slack and min(x["b"], y["b"]) - max(x["t"], y["t"]) > slack

    groups = [b["hand"], b["slots"], b["labels"], b["status"], b["pass"]]
    items = [x for g in groups for x in g]
    for i, x in enumerate(items):
        assert x["l"] >= -0.5 and x["r"] <= width + 0.5, f"{x['what']} sticks out at {width} px: {x}"
        for y in items[i + 1:]:
            if x["what"] == y["what"] == "hand card":
                continue
            assert not overlap(x, y), f"at {width} px the {x['what']} {x} overlaps the {y['what']} {y}"
    lefts = [c["l"] for c in b["hand"]]
    assert all(q - p >= 12 for p, q in zip(lefts, lefts[1:])), f"a fanned card shows less than 12 px at {width} px: {lefts}"


def pass_with_undo(page, phone: bool) -> None:
    """Choose two, put one back with Undo and one by clicking it again, choose three, pass."""
    hand = hand_cards(page)
    direction = page.locator("#pass-confirm").inner_text()
    assert re.fullmatch(r"Pass (left|right|across) →", direction), direction
    expect(page.locator("#pass-confirm")).to_be_disabled()
    touch_card(page, hand[0], phone)
    touch_card(page, hand[1], phone)
    assert page.get_attribute("#pass-panel", "data-picks-left") == "1"
    page.click("#pass-undo")  # puts back the last chosen
    expect(page.locator(f'#hand button[data-card="{hand[1]}"]')).not_to_have_class(re.compile(r"\bchosen\b"))
    touch_card(page, hand[0], phone)  # clicking a chosen card puts it back
    expect(page.locator(f'#hand button[data-card="{hand[0]}"]')).to_have_attribute("aria-pressed", "false")
    assert page.get_attribute("#pass-panel", "data-picks-left") == "3"
    picks = [hand[2], hand[4], hand[7]]
    for card in picks:
        touch_card(page, card, phone)
    expect(page.locator("#pass-confirm")).to_be_enabled()
    assert hand_cards(page) == hand  # nothing is sent before the confirmation
    page.click("#pass-confirm")
    wait_idle(page)
    assert body_data(page, "phase") == "play"
    assert not set(picks) & set(hand_cards(page))
    expect(page.locator("#log")).to_contain_text("You passed " + " ".join(symbol(c) for c in sorted(picks, key=lambda c: ("CDHS".index(c[1]), "23456789TJQKA".index(c[0])))))


def refuse_a_card(page, phone: bool) -> None:
    """A card the rules refuse: refused by the page in the view's words, with no request sent."""
    hand, legal = hand_cards(page), legal_cards(page)
    illegal = next(c for c in hand if c not in legal)
    assert page.locator(f'#hand button[data-card="{illegal}"]').get_attribute("aria-disabled") == "true"
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/api/" in r.url else None)
    touch_card(page, illegal, phone, checked=False)  # (Playwright's own check waits for an enabled button)
    message = page.locator("#message")
    expect(message).to_contain_text("cannot be played now: ")  # and the reason, from the view
    reason = message.inner_text().split("cannot be played now: ")[1].strip()
    assert any(word in reason for word in ("follow", "first trick", "hearts", "Q♠", "lead")), reason
    assert hand_cards(page) == hand and legal_cards(page) == legal  # nothing changed
    assert wait_idle(page) == "your-turn"
    assert not requests, requests  # refused in the page: nothing asked of the server


def check_turns(page) -> None:
    """The marked seat went round the table, one seat after the other, and the status said
    "Your turn" only while South was marked."""
    turns = page.evaluate("window.__turns")
    seats = [t[0] for t in turns]
    assert {"0", "1", "2", "3"} <= set(seats), seats[:40]
    in_order = sum(1 for a, b in zip(seats, seats[1:]) if a in "0123" and b in "0123" and a and b
                   and int(b) == (int(a) + 1) % 4)
    assert in_order >= 10, seats[:60]
    wrong = [(t, s) for t, s, _, _, _ in turns if s.startswith("Your turn") and t != "0"]
    assert not wrong, wrong[:5]
    assert all(t == marked for t, _, _, marked, _ in turns), [x for x in turns if x[0] != x[3]][:5]  # the seat shown
    # The scores move trick by trick: when a trick is taken, its points are on the taker's line.
    taken = 0
    for before, now in zip(turns, turns[1:]):
        won = re.fullmatch(r"(You|West|North|East) takes? the trick(?: \((\d+) points?\))?\.", now[1])
        if won and won[0] != before[1]:
            seat = ["You", "West", "North", "East"].index(won[1])
            points = int(won[2] or 0)
            assert now[4][seat] - before[4][seat] == points and sum(now[4]) - sum(before[4]) == points, (before, now)
            taken += 1
    assert taken >= 10, taken
    page.evaluate("window.__turns = []")


# ---- the games ------------------------------------------------------------------------------------


def start_quick_game(page, server: str) -> str:
    page.goto(f"{server}/?fast=1")
    page.wait_for_selector("body[data-state=setup]")
    expect(page.locator("input[name=players]")).to_have_count(2)  # four players, or the two-player game
    start_game(page, players=4, target=50, opponents=["easy"] * 3)  # the quick game, against the easy bot
    assert wait_idle(page) == "your-turn"
    assert body_data(page, "phase") == "pass" and len(hand_cards(page)) == 13
    expect(page.locator("#seat-south")).to_have_class(re.compile(r"\bto-act\b"))
    expect(page.locator("#seat-west .count")).to_have_text("13 cards")
    assert page.locator("#seat-north .back").count() == 13
    return page.url.split("game=")[1].split("&")[0]


def play_whole_game(page, server: str, phone: bool, shots: Path) -> dict:
    """Plays a quick game to its end; returns what happened on the way."""
    game_id = start_quick_game(page, server)
    if phone:
        expect(page.locator("#help")).to_be_hidden()  # a touch screen: no keyboard help
    else:
        expect(page.locator("#help")).to_be_visible()
    seen = {"summaries": 0, "refused": False, "reloaded": False, "shot": False, "keys": 0, "paced": False,
            "asked": False, "narrow": False}
    plays = 0
    for _ in range(400):
        state = wait_idle(page)
        if state == "over":
            break
        if state == "dialog":  # the hand summary, between hands
            summary = page.locator("#summary")
            expect(summary).to_be_visible()
            expect(summary).to_contain_text(f"Hand {seen['summaries'] + 1} summary")
            expect(page.locator("#summary-next")).to_have_text("Next hand")
            totals = [int(x) for x in summary.locator("td:nth-child(3)").all_inner_texts()]
            page.click("#summary-next")
            seen["summaries"] += 1
            wait_idle(page)
            table = [int(x) for x in page.eval_on_selector_all("#scores tbody td.total", "ts => ts.map(t => t.textContent)")]
            assert table == totals
            continue
        if body_data(page, "phase") == "pass":
            if seen["summaries"] == 0:
                pass_with_undo(page, phone)
            elif not phone and not seen.get("keyboard_pass"):  # by keyboard: typed, arrows, then the button
                hand = hand_cards(page)
                page.keyboard.type(typed_name(hand[0]))
                page.keyboard.press("Enter")
                keyboard_focus(page, hand[1])
                page.keyboard.press("Enter")
                keyboard_focus(page, hand[2])
                page.keyboard.press("Space")
                expect(page.locator("#pass-confirm")).to_be_focused()  # the third card leads to the button
                page.keyboard.press("Enter")
                wait_idle(page)
                assert not set(hand[:3]) & set(hand_cards(page))
                seen["keyboard_pass"] = True
            else:
                for card in hand_cards(page)[:3]:
                    touch_card(page, card, phone)
                page.click("#pass-confirm")
            continue

        # Your turn to play: said, and South alone marked.
        now = page.evaluate(TURN_NOW)
        assert now["status"].startswith("Your turn") and now["marked"] == ["south"], now
        hand, legal = now["hand"], now["legal"]
        assert legal and set(legal) <= set(hand)
        if not seen["refused"] and len(legal) < len(hand):
            refuse_a_card(page, phone)
            seen["refused"] = True
        on_table = now["on_table"]
        if plays >= 2 and on_table >= 2 and not seen["shot"]:
            check_layout(page)
            page.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
            page.wait_for_timeout(250)  # the cards' arrival
            page.screenshot(path=str(shots / ("serve-screenshot-phone.png" if phone else "serve-screenshot.png")))
            seen["shot"] = True
            if not phone:  # a tablet in portrait (820 px): the scores go below the table
                page.set_viewport_size({"width": 820, "height": 1180})
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                check_layout(page)
                page.set_viewport_size(DESKTOP["viewport"])
            if not phone:  # the four-colour deck (kept for later visits): clubs green, diamonds blue
                colours = "() => Object.fromEntries([...document.querySelectorAll('#hand .card')].map(c =>"\
                          " [c.dataset.card[1], getComputedStyle(c).color]))"
                two = page.evaluate(colours)
                page.select_option("#deck", "4")
                four = page.evaluate(colours)
                page.evaluate("document.activeElement.blur()")
                assert four.get("H") == two.get("H") and four.get("S") == two.get("S")
                assert ("C" not in four or four["C"] not in (two["C"], four.get("S"))) and \
                       ("D" not in four or four["D"] not in (two["D"], four.get("H")))
            if phone:  # the smallest phones: 320 px wide
                page.set_viewport_size({"width": 320, "height": 640})
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                check_layout(page)
                page.set_viewport_size(PHONE["viewport"])
                seen["narrow"] = True
        if plays == 5 and not seen["reloaded"]:  # a reload continues the game and keeps the log
            before = log_lines(page)
            page.reload()
            assert wait_idle(page) == "your-turn"
            assert game_id in page.url and hand_cards(page) == hand and legal_cards(page) == legal
            after = log_lines(page)
            assert after[:len(before)] == before and len(after) == len(before) + 1, (before[-3:], after[-3:])
            assert after[-1].startswith("Game continued")
            if not phone and seen["shot"]:
                assert page.input_value("#deck") == "4" and page.evaluate("document.body.classList.contains('four-colour')")
            seen["reloaded"] = True
        if not phone and plays == 7 and not seen["asked"]:  # "New game" mid-game asks first
            page.click("#new-game-top")
            expect(page.locator("#leave")).to_be_visible()
            page.click("#leave-keep")
            expect(page.locator("#leave")).to_be_hidden()
            assert wait_idle(page) == "your-turn" and game_id in page.url
            seen["asked"] = True

        card = legal[plays % len(legal)]
        pace = not phone and plays >= 9 and not seen["paced"] and on_table == 0
        if pace:  # a bot's turn stays marked long enough to follow at the "fast" pace
            page.select_option("#speed", "300")
        if phone or plays % 3 == 0:
            touch_card(page, card, phone, checked=plays < 13)
        elif plays % 3 == 1:
            page.keyboard.type(typed_name(card))
            page.keyboard.press("Enter")
            seen["keys"] += 1
        else:
            keyboard_focus(page, card)
            page.keyboard.press("Space" if plays % 2 else "Enter")
            seen["keys"] += 1
        if pace:
            expect(page.locator("#trick .slot[data-pos=south] .card")).to_have_attribute("data-card", card)
            page.wait_for_function("document.body.dataset.turn === '2'")  # West has played, North is marked
            turns = page.evaluate("window.__turns")
            k = max(i for i, x in enumerate(turns) if x[0] != "2") + 1  # North marked from turns[k] on,
            assert turns[k - 1][0] == "1", turns[-6:]
            j = max(i for i, x in enumerate(turns[:k]) if x[0] != "1") + 1  # West from turns[j] until then
            start, end = turns[j][2], turns[k][2]
            assert end - start >= 250, (start, end)
            # A reload while the bots' cards are being shown: what was not shown yet is logged, once.
            before = log_lines(page)
            page.reload()
            wait_idle(page)
            after = log_lines(page)
            events = page.request.get(f"{server}/api/v1/games/{game_id}").json()["events"]
            west = next(e["card"] for e in events if e["type"] == "played" and e["seat"] == 1)
            assert after[:len(before)] == before and after[len(before)].startswith("Game continued")
            assert after.count(f"West plays {symbol(west)}") == 1 and f"West plays {symbol(west)}" in before
            assert any(line.startswith("North plays") for line in after[len(before):]), after[len(before):]
            page.select_option("#speed", "0")
            page.evaluate("document.activeElement.blur()")
            seen["paced"] = True
        page.wait_for_function(
            "card => document.body.dataset.state !== 'your-turn' ||"
            " ![...document.querySelectorAll('#hand button.card')].some(b => b.dataset.card === card)",
            arg=card, timeout=TIMEOUT_MS)
        plays += 1
    check_turns(page)  # since the last reload
    seen["plays"] = plays
    seen["id"] = game_id
    return seen


def check_game_over(page, server: str, game_id: str) -> None:
    over = page.locator("#gameover")
    expect(over).to_be_visible()
    expect(over).to_contain_text("Final scores")
    expect(over).to_contain_text("win")
    view = page.request.get(f"{server}/api/v1/games/{game_id}").json()
    assert view["phase"] == "over" and max(view["scores"]) >= 50
    shown = [int(x) for x in over.locator("table.points-table td:nth-child(3)").all_inner_texts()]
    assert shown == view["scores"]
    # The score sheet lists every hand, a moon at its shooter, and sums to the scores.
    sheet = over.locator("table.sheet-table")
    assert sheet.locator("tbody tr[data-hand]").count() == len(view["score_sheet"]) == view["hand_number"] + 1
    sums = [int(x) for x in sheet.locator("tr.sheet-total td").all_inner_texts()]
    assert sums == view["scores"] == [sum(h["points"][seat] for h in view["score_sheet"]) for seat in range(4)]
    href = page.get_attribute("#record-link-over", "href")
    assert game_id in href and page.is_visible("#record-link-over")
    response = page.request.get(f"{server}/{href}")
    assert response.status == 200 and '"type": "game"' in response.text().replace('":"', '": "')
    text = page.evaluate("document.body.innerText")
    assert not re.search("[\U0001F000-\U0001FAFF]", text), "an emoji on the page"
    page.click("#new-game")  # the game is over: no question
    page.wait_for_selector("body[data-state=setup]")
    assert "game=" not in page.url


def new_page(browser, options: dict):
    context = browser.new_context(**options)
    context.add_init_script(TURN_RECORDER)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_default_timeout(TIMEOUT_MS)
    return context, page, errors


def copy_screenshot(shot: Path) -> None:
    assert shot.is_file()
    if os.environ.get("HEARTS_SCREENSHOT") == "1":
        shutil.copyfile(shot, ROOT / "docs" / shot.name)


def test_a_whole_game_on_a_phone(server, browser, tmp_path):
    context, page, errors = new_page(browser, PHONE)
    seen = play_whole_game(page, server, phone=True, shots=tmp_path)
    assert seen["refused"] and seen["reloaded"] and seen["shot"] and seen["narrow"] and seen["summaries"] >= 1
    check_game_over(page, server, seen["id"])
    assert not errors, errors
    context.close()
    copy_screenshot(tmp_path / "serve-screenshot-phone.png")


def test_a_whole_game_on_a_desktop(server, browser, tmp_path):
    context, page, errors = new_page(browser, DESKTOP)
    seen = play_whole_game(page, server, phone=False, shots=tmp_path)
    assert seen["refused"] and seen["reloaded"] and seen["asked"] and seen["paced"] and seen["keys"] >= 4
    assert seen["keyboard_pass"]
    check_game_over(page, server, seen["id"])
    assert not errors, errors
    context.close()
    copy_screenshot(tmp_path / "serve-screenshot.png")


@pytest.mark.slow
@pytest.mark.parametrize("width, height, language", [(320, 568, "de"), (844, 390, "de")],
                         ids=["320x568-de", "844x390-de"])
def test_a_whole_game_at_every_size_and_in_german(server, browser, tmp_path, width, height, language):
    """A small phone upright and a phone sideways, in German: a whole game to 50 against the easy bot
    with the trick, the hand and the turn in view at every decision, a refused card with no request,
    the start screen's "Continue your game", and a score sheet of every hand."""
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=True, has_touch=True,
                                  locale=f"{language}-DE")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(f"{server}/?fast=1")
    page.wait_for_selector("body[data-state=setup]")
    assert page.inner_text("#start") == "Spielen" and page.evaluate("document.documentElement.lang") == "de"
    name = f"serve-{width}x{height}-{language}"
    page.screenshot(path=str(tmp_path / f"{name}-start.png"))
    start_game(page, players=4, target=50, opponents=["easy"] * 3)
    seen = play_checked_game(page, tmp_path, name)
    assert seen["refused"] and seen["continued"] and seen["decisions"] > 40 and seen["shot"]
    copy_screenshot(tmp_path / f"{name}.png")
    copy_screenshot(tmp_path / f"{name}-start.png")
    expect(page.locator("#gameover")).to_contain_text("Endstand")
    context.close()
    assert not errors, errors
