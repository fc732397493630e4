"""The static web build (``hearts export --web DIR``, export/web.py) and the page's API answered in
JavaScript (clients/js/src/local_api.js).

* the build: the page as it is, its config.json, the JavaScript client, onnxruntime-web and the shipped policies
  land in DIR, every module import resolves inside it, an earlier build is replaced and a foreign folder
  refused, a missing onnxruntime-web is named with what to run;
* the local API against the server: the Node test (clients/js/test/local_api.test.js) plays a whole quick
  game through LocalApi and writes its answers; the FastAPI app (TestClient) plays one too, and the
  JSON shapes of the answers (keys and types of options, views by phase, events by type, refusals)
  are the same, the options and the error answers equal;
* the local API against the server, field for field: the golden games (clients/js/test/fixtures) played
  as the server plays a web game on the Python engine (view.py's view after every request) and through
  LocalApi on the JavaScript engine with the same deals and opponents' cards give the same views;
* in headless Chromium (Playwright, the system's chromium), the build served by Python's http.server
  plays: a classic game against the exported ppo-classic (onnxruntime-web), passing, a few cards, a
  reload that continues the game; and (slow) a whole quick game against the random agent to the game
  over dialog on a phone and a desktop, its record downloaded from the page's link.

Each skips with a reason where node, chromium, Playwright or onnxruntime-web are missing.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from export.golden_games import variants
from export.web import CLIENT_DIR, PAGE_DIR, PAGE_FILES, POLICIES_DIR, WebBuildError, build_web, find_levels, find_policies
from hearts_app.serve import view as views
from hearts_app.serve.games import refusal
from hearts_app.session.match import Match, refusal_reason
from hearts_env import cards, deal, engine
from hearts_env.rules import Rules
from tests.page_setup import play_checked_game, start_game

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("web") / "site"
    written = build_web(out)
    return out, written


# ---- the build ----------------------------------------------------------------------------------


def test_the_page_preloads_every_module_it_imports():
    """index.html names each of the page's modules for the browser to fetch at once (modulepreload),
    instead of one import after another: a module added later, or removed, breaks this."""
    html = (PAGE_DIR / "index.html").read_text("utf-8")
    preloaded = set(re.findall(r'<link rel="modulepreload" href="static/([^"]+)">', html))
    modules = {path.name for path in (PAGE_DIR / "static").glob("*.js")} - {"main.js"}
    assert preloaded == modules


def test_build_holds_the_page_client_runtime_and_policies(site):
    out, written = site
    assert written["models"] == [spec for spec, _ in find_policies()] and "ppo-classic" in written["models"]
    # The page as it is (the one hearts serve serves), handed the browser's back end by config.json.
    for name in PAGE_FILES:
        assert (out / name).read_bytes() == (PAGE_DIR / name).read_bytes()
    for source in (PAGE_DIR / "static").iterdir():
        assert (out / "static" / source.name).read_bytes() == source.read_bytes()
    config = json.loads((out / "config.json").read_text())
    assert config == {"backend": "local", "models": "models/models.json"} and (out / config["models"]).is_file()
    for source in (CLIENT_DIR / "src").glob("*.js"):
        assert (out / "static" / "js" / source.name).read_bytes() == source.read_bytes()
    assert not (out / "static" / "ort").exists()  # the networks run in plain JavaScript: no WebAssembly
    offline = json.loads((out / "offline.json").read_text())  # what the service worker keeps
    assert all((out / name).exists() for name in offline["files"]) and "static/js/plain_runtime.js" in offline["files"]
    models = json.loads((out / "models" / "models.json").read_text())
    assert models["format"] == "hearts-lab-web-models" and models["version"] == 1
    entry = next(m for m in models["models"] if m["spec"] == "ppo-classic")
    assert entry["rules"] == "classic"
    shipped = POLICIES_DIR / "ppo_classic"
    assert (out / "models" / entry["model"]).read_bytes() == (shipped / "policy.onnx").read_bytes()
    assert (out / "models" / entry["manifest"]).read_bytes() == (shipped / "policy.json").read_bytes()
    # Every relative import of the build's own modules names a file of the build.
    for module in [*(out / "static").glob("*.js"), *(out / "static" / "js").glob("*.js")]:
        for target in re.findall(r"""(?:import|from)\s*\(?\s*['"](\.{1,2}/[^'"]+)['"]""", module.read_text()):
            assert (module.parent / target).resolve().is_file(), f"{module.name} imports {target}: not in the build"


def test_build_replaces_an_earlier_build_and_refuses_other_folders(site, tmp_path):
    out, _ = site
    (out / "static" / "stale.js").write_text("// from an earlier build")
    build_web(out)
    assert not (out / "static" / "stale.js").exists() and (out / "static" / "main.js").is_file()
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"jpeg")
    with pytest.raises(WebBuildError, match="not empty and not an earlier web build"):
        build_web(foreign)
    assert (foreign / "holiday.jpg").read_bytes() == b"jpeg"


def test_build_offers_a_ladders_levels_first(site, tmp_path):
    """A ladder export (hearts export --ladder: levels.json and a folder per level) gives the opponents
    easiest first; a shipped policy that is one of its levels is not offered twice."""
    shipped = POLICIES_DIR / "ppo_classic"
    ladder = tmp_path / "ladder"
    levels = []
    for name in ("easy", "strong"):
        (ladder / name).mkdir(parents=True)
        for file in ("policy.onnx", "policy.json"):
            shutil.copy2(shipped / file, ladder / name / file)
        levels.append({"name": name, "model": f"{name}/policy.onnx", "manifest": f"{name}/policy.json",
                       "description": f"the {name} level"})
    (ladder / "levels.json").write_text(json.dumps({"format": "hearts-lab-levels", "levels": levels}))
    out = tmp_path / "site"
    from hearts_app import cli

    assert cli.main(["export", "--web", str(out), "--levels", str(ladder)]) == 0
    assert json.loads((out / "models" / "models.json").read_text())["models"][0]["spec"] == "level:easy"
    written = build_web(out, levels=[ladder])
    assert written["models"] == ["level:easy", "level:strong"]
    models = json.loads((out / "models" / "models.json").read_text())["models"]
    assert [(m["spec"], m["model"], m["rules"], m["description"]) for m in models] == [
        ("level:easy", "level-easy-classic/policy.onnx", "classic", "the easy level"),
        ("level:strong", "level-strong-classic/policy.onnx", "classic", "the strong level")]
    assert (out / "models" / models[1]["model"]).read_bytes() == (shipped / "policy.onnx").read_bytes()
    with pytest.raises(WebBuildError, match="share a name for the same rules"):
        build_web(out, levels=[ladder, ladder])
    (ladder / "levels.json").write_text("{}")
    with pytest.raises(WebBuildError, match="not a ladder's levels.json"):
        build_web(out, levels=[ladder])


def test_hearts_export_web_command(ladder_site, tmp_path, capsys, monkeypatch):
    """``hearts export --web DIR`` alone exports both shipped ladders and offers their levels for
    every table of both games; it names what is missing when the export extra is not installed."""
    from hearts_app import cli
    from hearts_app.commands import export as export_command

    models = json.loads((ladder_site / "models" / "models.json").read_text())["models"]
    assert list(dict.fromkeys(m["spec"] for m in models)) == ["level:easy", "level:normal", "level:hard",
                                                             "level:strong"]
    for game in ("classic", "two_player"):
        assert {m["spec"] for m in models if m["rules"] == game} >= {"level:easy", "level:normal", "level:hard"}
    with pytest.raises(SystemExit):
        cli.main(["export", "--web", str(tmp_path / "site"), "some.pt"])
    assert "takes no checkpoint" in capsys.readouterr().err
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("keep")
    monkeypatch.setattr(export_command, "build_with_shipped_ladders", lambda site: pytest.fail("exported before refusing"))
    for site, says in ((tmp_path / "taken", "is not empty and not an earlier web build"), ("", "--web needs the folder")):
        with pytest.raises(SystemExit):
            cli.main(["export", "--web", str(site)])
        assert says in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setattr(export_command, "missing_export_modules", lambda: ["onnx"])
    with pytest.raises(SystemExit):
        cli.main(["export", "--web", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert "needs onnx" in err and "--levels" in err and not (tmp_path / "site").exists()


# ---- the local API against the server --------------------------------------------------------------


NULLABLE = {"pass", "received", "last_trick", "game_over", "events[hand_scored].moon", "events[hand_started].pass_to",
            "score_sheet[].moon"}


def _types(value, path: str, into: dict[str, set[str]]) -> None:
    """Each path's JSON types (events grouped by their type; list items under ``path[]``)."""
    kind = {type(None): "null", bool: "bool", int: "int", float: "float", str: "str", list: "list",
            dict: "object"}[type(value)]
    into.setdefault(path, set()).add(kind)
    if isinstance(value, dict):
        for key, item in value.items():
            key = "<card>" if path == "refused" else key  # (a map by card: its keys are the hand's)
            _types(item, f"{path}.{key}" if path else key, into)
    elif isinstance(value, list):
        for item in value:
            if path == "events":
                _types(item, f"events[{item['type']}]", into)
            else:
                _types(item, f"{path}[]", into)


def _shapes(views: list[dict]) -> dict[str, dict[str, set[str]]]:
    by_phase: dict[str, dict[str, set[str]]] = {}
    for view in views:
        _types(view, "", by_phase.setdefault(view["phase"], {}))
    return by_phase


def _same_shapes(python: dict[str, set[str]], js: dict[str, set[str]], what: str) -> None:
    for path in sorted(set(python) | set(js)):
        if path not in python or path not in js:
            # a kind of event one game happened not to have (a moon, hearts broken), or what lies under it;
            if re.fullmatch(r"refused\.<card>\.(?:card|suit)", path):
                continue  # a reason (naming a card or a suit) one game did not meet
            # a score sheet still empty in one game's phase
            event = re.match(r"(?:events\[\w+\]|score_sheet\[\])", path)
            assert event and (event.group(0) not in python or event.group(0) not in js), f"{what}: {path} only in one"
            continue
        p, j = python[path] - {"null"}, js[path] - {"null"}
        if p and j:
            assert p == j, f"{what}: {path} is {sorted(p)} from the server, {sorted(j)} from the page's module"
        if "null" in js[path]:
            assert "null" in python[path] or path.lstrip(".") in NULLABLE, f"{what}: {path} is null from the page's module"


def _server_game(games_dir: Path) -> dict:
    from fastapi.testclient import TestClient

    from hearts_app.serve.app import create_app

    client = TestClient(create_app(["random"], games_dir, seed=46))
    out = {"options": client.get("/api/v1/options").json()}
    r = client.post("/api/v1/games/AAAAAAAAAAAAAAAAAAAAAA/play", json={"card": "ZZ"})
    out["bad_card"] = [r.status_code, r.json()]
    r = client.get("/api/v1/games/AAAAAAAAAAAAAAAAAAAAAA")
    out["missing"] = [r.status_code, r.json()]
    r = client.post("/api/v1/games", json={"preset": "quick", "opponents": ["hard", "random", "random"]})
    out["not_offered"] = [r.status_code, r.json()["reason"]]
    r = client.post("/api/v1/games", json={"preset": "quick", "opponents": ["random"] * 3})
    assert r.status_code == 201
    view = r.json()
    views = [view]
    while view["phase"] != "over":
        if len(views) == 3:
            refused = next(c for c in ("2C", "3C", "AS", "KH", "QS", "AD") if c not in view["legal"])
            r = client.post(f"/api/v1/games/{view['id']}/play", json={"card": refused})
            out["refused"] = [r.status_code, r.json()]
        r = client.post(f"/api/v1/games/{view['id']}/play", json={"card": view["legal"][-1]})
        assert r.status_code == 200, r.text
        view = r.json()
        views.append(view)
    out["views"] = views
    r = client.post(f"/api/v1/games/{view['id']}/play", json={"card": "2C"})
    out["over_play"] = [r.status_code, r.json()]
    return out


def test_local_api_answers_as_the_server(tmp_path):
    pytest.importorskip("fastapi")
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the JavaScript client's tests need Node 20+)")
    if not (CLIENT_DIR / "node_modules" / "onnxruntime-node").is_dir():
        pytest.skip("onnxruntime-node is not installed in clients/js (scripts/setup_clients.sh installs it)")
    dump = tmp_path / "local-api.json"
    run = subprocess.run(["node", "--test", "test/local_api.test.js"], cwd=CLIENT_DIR, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "HEARTS_LOCAL_API_DUMP": str(dump)})
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    js = json.loads(dump.read_text())
    python = _server_game(tmp_path / "games")

    assert js["options"] == python["options"] | {"agents": ["random"], "agents_by_preset": js["options"]["agents_by_preset"],
                                                 "default_opponents": ["random"] * 3}
    assert set(js["options"]["agents_by_preset"]) == set(python["options"]["agents_by_preset"])
    for key in ("bad_card", "missing", "not_offered", "over_play"):
        assert js[key] == python[key], key
    assert js["refused"][0] == python["refused"][0] == 409
    assert list(js["refused"][1]) == list(python["refused"][1]) == ["detail", "legal", "reason"]

    py_shapes, js_shapes = _shapes(python["views"]), _shapes(js["views"])
    assert set(js_shapes) == set(py_shapes) == {"pass", "play", "over"}
    for phase in py_shapes:
        assert [k for k in js["views"][-1]] == [k for k in python["views"][-1]]
        _same_shapes(py_shapes[phase], js_shapes[phase], f"the {phase} view")
    events = {t for v in js["views"] for t in (e["type"] for e in v["events"])}
    assert {"exchanged", "played", "trick_won", "hand_scored", "hand_started", "game_over"} <= events


def _refusals(match: Match) -> list[dict]:
    """What the server answers seat 0 for cards it may not take now: each held card that is not legal
    (or already chosen to pass), and one card it does not hold (games.refusal, with the legal cards)."""
    legal = match.legal()
    held = match.hand(0)
    not_held = next(c for c in range(52) if c not in held)
    wrong = [c for c in held if c not in legal] + [not_held]
    out = []
    for c in wrong:
        answer = {"card": cards.card_text(c), "detail": refusal(match, c, legal), "legal": views.texts(legal)}
        reason = refusal_reason(match, c, legal)
        out.append(answer if reason is None else {**answer, "reason": reason})
    return out


def _parity_games(golden: dict) -> list[dict]:
    """The golden games that start from zero (the page starts no game with scores) played as the server
    plays a web game (GameStore: the agents up to seat 0's turn, seat 0's card, the agents again), on
    the Python engine from the golden game's seed: per request, seat 0's card and view.py's view, and
    the refusals of the cards seat 0 may not take before it."""
    batches = {v["name"]: v["batch"] for v in variants()}
    out = []
    for g in golden["games"]:
        if any(g["start_scores"]):
            continue
        rules = Rules.from_dict(g["rules"])
        seed = deal.game_seeds(g["seed"], batches[g["name"]])[g["game"]]
        match = Match(rules, engine.init_from_seeds(rules, np.array([seed], dtype=np.uint64), 0), None)
        opponents = ["scripted"] * (rules.num_players - 1)
        actions = [(h["hand_number"], seat, card) for h in g["hands"] for seat, card, _ in h["actions"]]
        at = 0

        def agents_play():
            nonlocal at
            events = []
            while not match.over and match.to_act != 0:
                _, seat, card = actions[at]
                assert seat == match.to_act
                events += match.step(card)
                at += 1
            return events

        steps = [{"card": None, "view": views.view("ID", match, opponents, views.public_events(agents_play(), match))}]
        while not match.over:
            _, seat, card = actions[at]
            assert seat == 0
            at += 1
            refused = _refusals(match)
            events = match.step(card) + agents_play()
            steps.append({"card": cards.card_text(card), "refused": refused,
                          "view": views.view("ID", match, opponents, views.public_events(events, match))})
        assert at == len(actions)
        out.append({"name": g["name"], "rules": g["rules"],
                    "hands": [{"hand_number": h["hand_number"], "deal": h["deal"],
                               "actions": [[s, c] for s, c, _ in h["actions"]]} for h in g["hands"]],
                    "steps": steps})
    return out


def test_local_api_gives_the_servers_views_of_the_golden_games(tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the JavaScript client's tests need Node 20+)")
    if not (CLIENT_DIR / "node_modules" / "onnxruntime-node").is_dir():
        pytest.skip("onnxruntime-node is not installed in clients/js (scripts/setup_clients.sh installs it)")
    golden = json.loads((CLIENT_DIR / "test" / "fixtures" / "golden_games.json").read_text())
    games = _parity_games(golden)
    assert len(games) >= 15 and {"classic", "quick", "two_player", "two_player_moon", "moon_shooters_choice_add"} <= {
        g["name"] for g in games}
    parity = tmp_path / "parity.json"
    parity.write_text(json.dumps({"games": games}))
    run = subprocess.run(["node", "--test", "test/local_api.test.js"], cwd=CLIENT_DIR, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "HEARTS_LOCAL_API_PARITY": str(parity)})
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"^ok \d+ - the local API gives the server's views of the golden games", run.stdout, re.M), run.stdout[-2000:]


# ---- in the browser --------------------------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


#: The page is waiting for the player (or shows a dialog, or the game is over).
IDLE = "['your-turn', 'over', 'dialog'].includes(document.body.dataset.state)"


def _serve(out: Path):
    """A build served by Python's http.server (as a user would serve it): yields the page's URL, fastest pace."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/setup_clients.sh installs it); the browser test needs it")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/?fast=1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def served_site(site):
    yield from _serve(site[0])


def test_static_build_plays_in_chromium(served_site, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    url = served_site
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                    "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.on("pageerror", lambda err: errors.append(str(err)))
        api_requests: list[str] = []
        page.on("request", lambda request: api_requests.append(request.url) if "/api/" in request.url else None)
        page.goto(url)
        page.wait_for_selector("body[data-state=setup]", timeout=30_000)
        # no ladder in this build: the opponents on offer are its policies, ppo-classic first for the classic game
        assert page.eval_on_selector("input[name=level]:checked", "i => i.value") == "ppo-classic"
        page.click("#start")
        page.wait_for_function(IDLE, timeout=30_000)
        game = page.url.split("game=")[1].split("&")[0]
        hand = page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")
        assert len(hand) == 13 and page.evaluate("document.body.dataset.phase") == "pass"
        for card in hand[:3]:
            type_card(page, card)
        page.click("#pass-confirm")
        played = []
        for _ in range(4):
            page.wait_for_function(IDLE, timeout=30_000)
            legal = page.eval_on_selector_all("#hand button.card.legal", "bs => bs.map(b => b.dataset.card)")
            assert legal and page.evaluate("document.body.dataset.phase") == "play"
            type_card(page, legal[0])
            page.wait_for_function(
                "card => document.body.dataset.state !== 'your-turn' ||"
                " ![...document.querySelectorAll('#hand button.card')].some(b => b.dataset.card === card)",
                arg=legal[0], timeout=30_000)
            played.append(legal[0])
        page.wait_for_function(IDLE, timeout=30_000)
        log = page.eval_on_selector_all("#log li", "ls => ls.map(l => l.textContent)")
        assert any(line.startswith(("West plays", "North plays", "East plays")) for line in log), log[-10:]
        left = page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")
        page.reload()  # the game is in the browser's storage: a reload continues it
        page.wait_for_function(IDLE, timeout=30_000)
        assert game in page.url
        assert page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)") == left
        stored = page.evaluate("JSON.parse(localStorage.getItem('hearts-lab-local-games'))")
        assert stored == [game]
        browser.close()
    assert not errors, errors
    assert not api_requests, f"requests to the API reached the network: {api_requests[:3]}"


def play_to_game_over(page) -> tuple[int, int]:
    """Play the game on the page to its end as a person would (three cards passed, the last legal card
    played, each hand's summary closed): ``(hand summaries closed, cards played)``."""
    summaries = plays = 0
    for _ in range(1200):
        page.wait_for_function(IDLE, timeout=60_000)
        state = page.evaluate("document.body.dataset.state")
        if state == "over":
            break
        if state == "dialog":
            page.click("#summary-next")
            summaries += 1
            continue
        hand = page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")
        if page.evaluate("document.body.dataset.phase") == "pass":
            for card in hand[:3]:
                type_card(page, card)
            page.click("#pass-confirm")
            page.wait_for_function("document.body.dataset.phase !== 'pass' || document.body.dataset.state !== 'your-turn'",
                                   timeout=60_000)
            continue
        legal = page.eval_on_selector_all("#hand button.card.legal", "bs => bs.map(b => b.dataset.card)")
        type_card(page, legal[-1])
        page.wait_for_function(
            "card => document.body.dataset.state !== 'your-turn' ||"
            " ![...document.querySelectorAll('#hand button.card')].some(b => b.dataset.card === card)",
            arg=legal[-1], timeout=60_000)
        plays += 1
    return summaries, plays


def stored_view(page, game: str) -> dict:
    """The view of a game kept in the page's storage, as the build's own LocalApi gives it (GET games/ID)."""
    return page.evaluate("""async (id) => {
      const { LocalApi, randomAgent } = await import('./static/js/local_api.js');
      return (await new LocalApi({ agents: [randomAgent()] }).fetch(`api/v1/games/${id}`)).json();
    }""", game)


def type_card(page, card: str) -> None:
    """Choose or play a card by the keyboard, as a person types it ("qs", "10h", Enter)."""
    page.keyboard.type((("10" if card[0] == "T" else card[0]) + card[1]).lower())
    page.keyboard.press("Enter")


@pytest.mark.slow
@pytest.mark.parametrize("screen", [
    {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
    {"viewport": {"width": 1280, "height": 800}},
], ids=["phone", "desktop"])
def test_static_build_plays_a_whole_quick_game_in_chromium(served_site, tmp_path, screen):
    """A whole quick game (to 50) against the random agent, at the fastest pace, on a phone and a
    desktop: the hand summaries, the game over dialog and the record, downloaded from the page's link
    with no server."""
    sync_api = pytest.importorskip("playwright.sync_api")
    url = served_site
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                    "--disable-dev-shm-usage"])
        page = browser.new_page(**screen, accept_downloads=True)
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(url)
        page.wait_for_selector("body[data-state=setup]", timeout=30_000)
        start_game(page, players=4, target=50, everyone="random")  # the quick game, against the random agent
        summaries, plays = play_to_game_over(page)
        assert page.evaluate("document.body.dataset.state") == "over"
        sync_api.expect(page.locator("#gameover")).to_be_visible()
        game = page.url.split("game=")[1].split("&")[0]
        view = stored_view(page, game)
        assert view["phase"] == "over" and max(view["scores"]) >= 50
        shown = [int(x) for x in page.locator("#gameover table.points-table td:nth-child(3)").all_inner_texts()]
        assert shown == view["scores"]
        with page.expect_download() as download:
            page.click("#record-link-over")
        record = json.loads(Path(download.value.path()).read_text())
        assert record["type"] == "game" and record["scores"] == view["scores"]
        assert len(record["hands"]) == summaries + 1 == view["hand_number"] + 1
        browser.close()
    assert not errors, errors
    assert plays >= 13 * (summaries + 1) - 1


@pytest.mark.slow
@pytest.mark.parametrize("width, height, language", [(320, 568, "de"), (844, 390, "de")],
                         ids=["320x568-de", "844x390-de"])
def test_static_build_plays_a_whole_game_at_every_size_in_german(served_site, width, height, language):
    """The static build on a small phone upright and a phone sideways, in German: a whole game to 50
    against the random agent with the trick, the hand and the turn in view at every decision, a
    refused card with no request, "Continue your game", and a score sheet of every hand."""
    sync_api = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                    "--disable-dev-shm-usage"])
        context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=True, has_touch=True,
                                      locale=f"{language}-DE")
        page = context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(served_site)
        page.wait_for_selector("body[data-state=setup]", timeout=30_000)
        assert page.inner_text("#start") == "Spielen"
        start_game(page, players=4, target=50, everyone="random")
        seen = play_checked_game(page)
        assert seen["refused"] and seen["continued"] and seen["decisions"] > 40
        browser.close()
    assert not errors, errors


@pytest.mark.slow
def test_the_installed_build_starts_and_plays_with_the_network_cut(served_site):
    """Once loaded (its service worker installed, a game played, so its model is kept), the static
    build starts again and plays a new game with the browser offline."""
    sync_api = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                    "--disable-dev-shm-usage"])
        context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        page = context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(served_site)
        page.wait_for_selector("body[data-state=setup]", timeout=30_000)
        page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=30_000)
        page.click("#start")  # ppo-classic at every seat: its model is fetched, and kept
        page.wait_for_function(IDLE, timeout=30_000)
        context.set_offline(True)
        page.goto(served_site.split("?")[0] + "?fast=1")
        page.wait_for_selector("body[data-state=setup]", timeout=30_000)
        page.click("#start")
        page.wait_for_function(IDLE, timeout=30_000)
        hand = page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")
        for card in hand[:3]:
            type_card(page, card)
        page.click("#pass-confirm")
        page.wait_for_function(IDLE, timeout=30_000)
        assert page.evaluate("document.body.dataset.phase") == "play"  # the opponents played offline
        assert page.locator("#trick .card").count() >= 1 or page.evaluate("document.body.dataset.turn") == "0"
        browser.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def ladder_site(tmp_path_factory):
    """The default static build, ``hearts export --web DIR``: the shipped ladders of both games exported
    and offered."""
    pytest.importorskip("onnxruntime")
    from hearts_app import cli

    site = tmp_path_factory.mktemp("ladders") / "site"
    assert cli.main(["export", "--web", str(site)]) == 0
    return site


@pytest.fixture
def served_ladder_site(ladder_site):
    yield from _serve(ladder_site)


@pytest.mark.slow
def test_static_build_plays_every_level_at_rules_other_than_the_presets_in_chromium(ladder_site, served_ladder_site):
    """At 390x844, whole games to game over: target 50 with the moon subtracted and J♦ −10 against
    level:easy, level:hard and level:strong (networks covering the four-player family), and a two-player
    game at target 50 with the moon off against level:strong; no page error."""
    sync_api = pytest.importorskip("playwright.sync_api")
    site = ladder_site
    models = json.loads((site / "models" / "models.json").read_text())["models"]
    strong = [m["model"] for m in models if m["spec"] == "level:strong"]
    assert strong[0].startswith("level-strong-classic/") and any("family" in m for m in strong)
    errors: list[str] = []
    tables = [({"players": 4, "target": 50, "moon": "subtract_from_self", "rules": {"jack_of_diamonds_bonus": True}},
               ["level:easy", "level:hard", "level:strong"]),
              ({"players": 2, "target": 50, "moon": "off"}, ["level:strong"])]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                    "--disable-dev-shm-usage"])
        for choices, opponents in tables:
            page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.goto(served_ladder_site)
            page.wait_for_selector("body[data-state=setup]", timeout=60_000)
            start_game(page, opponents=opponents, **choices)
            play_to_game_over(page)
            assert page.evaluate("document.body.dataset.state") == "over"
            game = page.url.split("game=")[1].split("&")[0]
            view = stored_view(page, game)
            assert view["phase"] == "over" and max(view["scores"]) >= 50
            assert [p["name"] for p in view["players"]][1:] == opponents
            rules = view["rules"]
            expected = {"target_score": choices["target"], "moon": choices["moon"], **choices.get("rules", {})}
            assert all(rules[k] == v for k, v in expected.items()), rules
            page.close()
        browser.close()
    assert not errors, errors


def test_the_page_refuses_rules_outside_an_opponents_space_in_one_line(served_site):
    """The classic preset with target 50 against ppo-classic (trained for classic alone): the setup
    says which option the network does not cover and the values it does, and no game starts."""
    sync_api = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                    "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(served_site)
        page.wait_for_selector("body[data-state=setup]", timeout=60_000)
        start_game(page, players=4, target=50, opponents=["ppo-classic"])
        page.wait_for_function("document.getElementById('setup-message').textContent !== ''", timeout=30_000)
        assert page.inner_text("#setup-message") == ("Could not start the game: ppo-classic cannot play Target score: "
                                                     "50 (it plays 100)")
        assert page.evaluate("document.body.dataset.state") != "your-turn" and "game=" not in page.url
        browser.close()
    assert not errors, errors


@pytest.mark.parametrize("where", ["/etc/hostname", "../secret.txt", "easy/../../secret.txt"])
def test_the_build_publishes_no_file_from_outside_the_ladder(tmp_path, where):
    ladder = tmp_path / "ladder"
    (ladder / "easy").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("secret")
    (ladder / "easy" / "policy.json").write_text("{}")
    (ladder / "levels.json").write_text(json.dumps({"format": "hearts-lab-levels", "levels": [
        {"name": "easy", "model": where, "manifest": "easy/policy.json"}]}))
    with pytest.raises(WebBuildError, match="outside the ladder's folder"):
        find_levels(ladder)
