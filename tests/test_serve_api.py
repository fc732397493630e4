"""``hearts serve``: the game API, the bots API, persistence and what the page may see.

Skipped where the serve extra (FastAPI; httpx for its test client) is not installed.
"""

from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from export.golden import invalid_records
from hearts_app.serve.app import create_app
from hearts_app.session import records
from hearts_app.session.match import Match
from hearts_env import atomic_files, cards, seat_record
from hearts_env.rules import PRESETS, Rules

FAST = ["random", "easy", "normal", "hard"]
VIEW_KEYS = {"id", "rules", "hand_size", "players", "phase", "hand_number", "to_act", "your_turn", "hand", "legal", "pass",
             "received", "trick", "last_trick", "hearts_broken", "scores", "hand_points", "events", "game_over"}


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("games")


@pytest.fixture(scope="module")
def app(games_dir):
    return create_app(FAST, games_dir, seed=1)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as c:
        yield c


def new_game(client, **body):
    r = client.post("/api/v1/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def server_match(app, game_id) -> Match:
    with app.state.store.locked(game_id) as game:
        return game.match


def play_first_legal(client, view, until=None, check=None, limit=2000):
    """Send the first legal card until the game is over (or ``until(view)``); ``check(response)`` sees
    every response."""
    for _ in range(limit):
        if view["game_over"] or (until is not None and until(view)):
            return view
        assert view["your_turn"] and view["legal"], view
        r = client.post(f"/api/v1/games/{view['id']}/play", json={"card": view["legal"][0]})
        assert r.status_code == 200, r.text
        if check is not None:
            check(r)
        view = r.json()
    raise AssertionError("the game did not end")


# ---------------------------------------------------------------------------------------------
# Games
# ---------------------------------------------------------------------------------------------


def test_options_name_the_real_rules_fields_and_the_offered_agents(client):
    body = client.get("/api/v1/options").json()
    assert body["presets"] == list(PRESETS)
    assert set(body["options"]) <= set(Rules.model_fields)
    for field, choices in body["options"].items():
        for value in choices:  # every choice is a value Rules takes
            Rules.preset("classic").replace(**{field: value})
    assert body["agents"] == FAST
    assert body["default_opponents"] == ["easy", "normal", "hard"]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_game_of_each_preset_starts_at_your_first_decision(client, app, preset):
    view = new_game(client, preset=preset)
    rules = Rules.preset(preset)
    assert VIEW_KEYS <= set(view)
    assert view["rules"] == rules.to_dict()
    assert [p["seat"] for p in view["players"]] == list(range(rules.num_players))
    assert view["your_turn"] and view["to_act"] == 0 and view["game_over"] is None
    assert set(view["legal"]) <= set(view["hand"]) and view["legal"]
    match = server_match(app, view["id"])
    assert view["hand"] == [cards.card_text(c) for c in match.hand(0)]
    if match.passing:
        assert view["phase"] == "pass" and view["pass"]["picks_left"] == rules.pass_count
    else:  # two-player: no pass; a bot may have led already
        assert view["phase"] == "play" and view["pass"] is None
        assert [t["card"] for t in view["trick"]] == [cards.card_text(c) for _, c in match.trick()]


def test_opponents_are_only_offered_specs_in_the_right_number(client):
    assert new_game(client, opponents=["random", "easy", "hard"])["players"][3]["name"] == "hard"
    for body, word in [
        ({"opponents": ["easy", "easy"]}, "opponents"),
        ({"opponents": ["easy", "easy", "ckpt:/etc/passwd"]}, "not offered"),
        ({"opponents": ["easy", "easy", "my_bots.py:Lowest"]}, "not offered"),
        ({"opponents": ["easy", "easy", 3]}, "opponents"),
        ({"preset": "huge"}, "preset"),
        ({"rules": {"moon": "sideways"}}, "moon"),
        ({"rules": {"target_score": "100"}}, "target_score"),
        ({"rules": {"target_score": 10**30}}, "target_score"),
        ({"rules": {"colour": "red"}}, "colour"),
        ({"rules": {"num_players": 2}}, "pass_cycle"),  # classic passes across: four players only
        ({"seed": -1}, "seed"),
        ({"seed": "7"}, "seed"),
        ({"unknown": 1}, "unknown"),
    ]:
        r = client.post("/api/v1/games", json=body)
        assert r.status_code == 422, (body, r.text)
        detail = r.json()["detail"]
        assert isinstance(detail, str) and "\n" not in detail and word in detail, (body, detail)


def test_options_override_the_preset(client):
    view = new_game(client, preset="classic", rules={"moon": "subtract_from_self", "target_score": 50})
    assert view["rules"]["moon"] == "subtract_from_self" and view["rules"]["target_score"] == 50
    assert view["rules"]["name"] == "custom"


@pytest.mark.parametrize("preset, opponents", [("quick", ["random", "easy", "random"]), ("two_player", ["easy"])])
def test_a_whole_game_to_the_end_and_its_record_replays(client, app, preset, opponents, tmp_path):
    view = new_game(client, preset=preset, opponents=opponents, seed=11)
    view = play_first_legal(client, view)
    assert view["phase"] == "over" and view["legal"] == [] and not view["your_turn"]
    scores = view["game_over"]["scores"]
    assert max(scores) >= Rules.preset(preset).target_score
    assert view["events"][-1]["type"] == "game_over" and view["events"][-1]["scores"] == scores
    again = client.post(f"/api/v1/games/{view['id']}/play", json={"card": "2C"})
    assert again.status_code == 409 and "over" in again.json()["detail"]
    # The record: an attachment that the play mode's loader opens and the engine replays.
    r = client.get(f"/api/v1/games/{view['id']}/record")
    assert r.status_code == 200
    assert f"hearts-game-{view['id']}.jsonl" in r.headers["content-disposition"]
    path = tmp_path / "game.jsonl"
    path.write_text(r.text)
    record = records.load(path)
    assert record.is_play and record.game()["specs"] == ["human", *opponents]
    replayed = Match.from_record(record.rules, record.game())
    assert replayed.over and replayed.scores == scores
    for hand in replayed.hands:  # no move lost: every card of every hand was played
        plays = len(hand["actions"]) - (record.rules.pass_count * record.rules.num_players
                                        if hand["pass"] != "none" else 0)
        assert plays == record.rules.hand_size * record.rules.num_players


def test_the_record_waits_for_the_end_of_the_game(client):
    view = new_game(client)
    r = client.get(f"/api/v1/games/{view['id']}/record")
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_an_illegal_card_is_refused_with_the_reason_and_the_legal_cards(client, app):
    view = new_game(client, opponents=["easy", "normal", "hard"], seed=3)
    game_id = view["id"]
    url = f"/api/v1/games/{game_id}/play"
    # Passing: a card not held, then a card chosen twice.
    match = server_match(app, game_id)
    other = next(cards.card_text(c) for c in range(52) if c not in match.hand(0))
    r = client.post(url, json={"card": other})
    assert r.status_code == 409 and r.json()["detail"].startswith("you do not hold")
    assert r.json()["legal"] == view["legal"]
    first = view["legal"][0]
    view = client.post(url, json={"card": first}).json()
    assert view["pass"]["chosen"] == [first]
    r = client.post(url, json={"card": first})
    assert r.status_code == 409 and "already chose" in r.json()["detail"]

    def must_follow(v):  # a trick is led and you hold the suit and another one
        if v["phase"] != "play" or not v["trick"]:
            return False
        led = v["trick"][0]["card"][-1]
        return any(c[-1] == led for c in v["hand"]) and any(c[-1] != led for c in v["hand"])

    view = play_first_legal(client, view, until=must_follow)
    led = view["trick"][0]["card"][-1]
    off_suit = next(c for c in view["hand"] if c[-1] != led)
    before = client.get(f"/api/v1/games/{game_id}").json()
    r = client.post(url, json={"card": off_suit})
    assert r.status_code == 409
    assert "must follow suit" in r.json()["detail"]
    assert r.json()["legal"] == view["legal"]
    after = client.get(f"/api/v1/games/{game_id}").json()
    assert after == before  # a refused card changes nothing


def test_unknown_games_and_path_tricks_are_404(client):
    for game_id in ["A" * 22, "nope", "..%2F..%2Fetc%2Fpasswd", "%2E%2E", "a" * 200, "A" * 21 + "."]:
        r = client.get(f"/api/v1/games/{game_id}")
        assert r.status_code == 404, (game_id, r.status_code)
        assert client.post(f"/api/v1/games/{game_id}/play", json={"card": "2C"}).status_code == 404
        assert client.get(f"/api/v1/games/{game_id}/record").status_code == 404


def test_a_malformed_card_is_422(client):
    view = new_game(client)
    url = f"/api/v1/games/{view['id']}/play"
    for body in [{"card": "ZZ"}, {"card": "11H"}, {"card": 5}, {"card": None}, {}, {"card": "QS", "x": 1},
                 {"card": "Q" * 100}, [], "QS"]:
        r = client.post(url, json=body)
        assert r.status_code == 422, (body, r.text)
        assert isinstance(r.json()["detail"], str)
    r = client.post(url, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "JSON" in r.json()["detail"]


def test_concurrent_requests_on_one_game_do_not_interleave(client, app):
    view = new_game(client, opponents=["hard", "hard", "hard"])
    results = []

    def send():
        results.append(client.post(f"/api/v1/games/{view['id']}/play", json={"card": view["legal"][0]}).status_code)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [200] + [409] * 7  # the card is picked once; then it is no longer yours to pick
    assert client.get(f"/api/v1/games/{view['id']}").json()["pass"]["chosen"] == [view["legal"][0]]


# ---------------------------------------------------------------------------------------------
# Persistence
# ---------------------------------------------------------------------------------------------


def _without(view, *keys):
    return {k: v for k, v in view.items() if k not in keys}


def test_a_restarted_server_continues_the_game_identically(tmp_path):
    opponents = ["easy", "normal", "hard"]
    with TestClient(create_app(FAST, tmp_path / "a")) as first, \
            TestClient(create_app(FAST, tmp_path / "b")) as twin:  # twin: the same game, never interrupted
        view = new_game(first, preset="quick", opponents=opponents, seed=5)
        twin_view = new_game(twin, preset="quick", opponents=opponents, seed=5)
        assert _without(view, "id") == _without(twin_view, "id")
        for _ in range(20):
            card = view["legal"][0]
            view = first.post(f"/api/v1/games/{view['id']}/play", json={"card": card}).json()
            twin_view = twin.post(f"/api/v1/games/{twin_view['id']}/play", json={"card": card}).json()
        unfinished = new_game(first, opponents=opponents)
    assert (tmp_path / "a" / f"{view['id']}.jsonl").is_file()
    with TestClient(create_app(FAST, tmp_path / "a")) as restarted, twin:  # a new server over the same folder
        resumed = restarted.get(f"/api/v1/games/{view['id']}").json()
        assert _without(resumed, "events") == _without(view, "events") and resumed["events"] == []
        while not view["game_over"]:
            card = view["legal"][0]
            view = restarted.post(f"/api/v1/games/{view['id']}/play", json={"card": card}).json()
            twin_view = twin.post(f"/api/v1/games/{twin_view['id']}/play", json={"card": card}).json()
            assert _without(view, "id") == _without(twin_view, "id")
    assert view["game_over"] == twin_view["game_over"]
    # A server that does not offer the game's opponents refuses to continue it, saying why.
    with TestClient(create_app(["random"], tmp_path / "a")) as other:
        r = other.get(f"/api/v1/games/{unfinished['id']}")
    assert r.status_code == 409 and "not offered" in r.json()["detail"] and str(tmp_path) not in r.json()["detail"]


def test_idle_games_are_let_go_and_come_back_from_their_record(tmp_path):
    app = create_app(FAST, tmp_path)
    app.state.store.max_in_memory = 1
    with TestClient(app) as client:
        a, b = new_game(client), new_game(client)
        assert list(app.state.store._games) == [b["id"]]
        back = client.get(f"/api/v1/games/{a['id']}").json()
        assert _without(back, "events") == _without(a, "events")
        play_first_legal(client, back, until=lambda v: v["hand_number"] > 0)


# ---------------------------------------------------------------------------------------------
# Hidden information
# ---------------------------------------------------------------------------------------------


def hidden_cards(match: Match) -> set[int]:
    """The cards in other seats' hands that seat 0 did not pass them, and the dead cards."""
    if match.over:
        return set()
    hidden = {c for seat in range(1, match.num_players) for c in match.hand(seat)}
    if not match.passing:  # after the exchange what you passed sits in the receiver's hand: you know it
        hidden -= set(match.chosen_to_pass(0))
    return hidden | set(cards.parse_cards(match.hands[-1]["dead"]))


@pytest.mark.parametrize("preset, opponents", [("quick", ["random", "easy", "hard"]), ("two_player", ["hard"])])
def test_no_response_shows_a_card_you_may_not_see(client, app, preset, opponents):
    checked = []

    def check(response):
        body = response.json()
        match = server_match(app, body["id"])
        assert body.pop("rules") == match.rules.to_dict()  # the rules (opening lead cards) are public
        # Events of hands that ended in this response: every card named was played in them (a finished
        # hand's cards are all public); the rest of the response is about the current hand.
        events = body.pop("events")
        cut = max((i for i, e in enumerate(events) if e["type"] == "hand_started"), default=-1)
        finished_plays = {(seat, text) for hand in match.finished_hands for seat, text in hand["actions"]}
        for event in events[: cut + 1]:
            plays = event.get("plays", [event] if event["type"] in ("played", "hearts_broken") else [])
            assert all((p["seat"], p["card"]) in finished_plays for p in plays), event
            assert event["type"] != "exchanged"
        body["events"] = events[cut + 1:]
        text = json.dumps(body)
        hidden = hidden_cards(match)
        leaked = sorted(cards.card_text(c) for c in hidden if f'"{cards.card_text(c)}"' in text)
        assert not leaked, f"{leaked} leak in {text}"
        checked.append(len(hidden))  # (empty at the last trick when the others have played)

    view = new_game(client, preset=preset, opponents=opponents, seed=21)
    play_first_legal(client, view, check=check)
    # The refusals and the plain view too.
    view = new_game(client, preset=preset, opponents=opponents, seed=22)
    view = play_first_legal(client, view, until=lambda v: v["phase"] == "play" and len(v["hand"]) < 10)
    check(client.get(f"/api/v1/games/{view['id']}"))
    match = server_match(app, view["id"])
    for c in sorted(hidden_cards(match)):
        r = client.post(f"/api/v1/games/{view['id']}/play", json={"card": cards.card_text(c)})
        assert r.status_code == 409
        assert not any(f'"{cards.card_text(h)}"' in r.text for h in hidden_cards(match))
    assert sum(n > 0 for n in checked) > 20  # not vacuous


# ---------------------------------------------------------------------------------------------
# Bots as a service
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_records():
    from export.situations import sample_records as samples

    return samples(Rules.preset("classic"), 12, seed=0) + samples(Rules.preset("two_player"), 4, seed=0)


def test_agents_lists_the_offered_specs(client):
    listed = client.get("/api/v1/agents").json()["agents"]
    assert [a["spec"] for a in listed] == FAST
    assert all(a["rules"] is None and a["probabilities"] is False for a in listed)


def test_act_plays_a_legal_card_of_the_record(client, sample_records):
    for record in sample_records:
        for spec in ("hard", "random"):
            r = client.post("/api/v1/act", json={"agent": spec, "record": record})
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["agent"] == spec and body["probabilities"] is None
            assert cards.parse_card(body["card"]) == body["action"]
            assert seat_record.legal_mask(record)[body["action"]]


def test_act_refuses_agents_that_are_not_offered(client, sample_records):
    for spec in ["search", "ckpt:/etc/passwd", "onnx:agents/policies/ppo_classic/policy.onnx", "my.py:Bot",
                 "", "x" * 1000]:
        r = client.post("/api/v1/act", json={"agent": spec, "record": sample_records[0]})
        assert r.status_code == 422, (spec, r.text)
        assert "offered" in r.json()["detail"] or "agent" in r.json()["detail"]


def test_act_refuses_each_impossible_record_with_the_validators_message(client):
    cases = invalid_records()
    assert len(cases) >= 10
    for case in cases:
        r = client.post("/api/v1/act", json={"agent": "hard", "record": case["record"]})
        assert r.status_code == 422, (case["name"], r.text)
        assert r.json()["detail"] == case["message"], case["name"]


def test_a_body_over_64_kib_is_413_before_it_is_parsed(client, sample_records):
    big = {"agent": "hard", "record": dict(sample_records[0], note="x" * 70_000)}
    r = client.post("/api/v1/act", json=big)
    assert r.status_code == 413 and "64" in r.json()["detail"] or "65,536" in r.json()["detail"]

    def chunks():  # no Content-Length: the bytes received are counted
        for _ in range(100):
            yield b"[" * 1000

    r = client.post("/api/v1/act", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    r = client.post("/api/v1/games", content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_malformed_bodies_are_4xx_never_500(client, sample_records):
    good = sample_records[3]
    assert good["phase"] == "play" or good["phase"] == "pass"

    def record(**changes):
        return {**good, **changes}

    bodies = [
        b"", b"not json", b"{", b"[]", b"null", b'"hard"', b"42", b"[" * 30_000 + b"]" * 30_000,
        b'{"agent": "hard", "record": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
        b'{"agent": "hard", "record": {"seat": 1' + b"0" * 5000 + b"}}",
        b'{"agent": "hard", "record": {"seat": 1e999}}', b"\xff\xfe\x00",
    ]
    objects = [
        {}, {"agent": "hard"}, {"record": good}, {"agent": 5, "record": good}, {"agent": None, "record": good},
        {"agent": ["hard"], "record": good}, {"agent": "hard", "record": [good]}, {"agent": "hard", "record": "QS"},
        {"agent": "hard", "record": None}, {"agent": "hard", "record": good, "extra": 1},
        {"agent": "hard", "record": {}},
        {"agent": "hard", "record": record(seat=10**30)}, {"agent": "hard", "record": record(seat=-1)},
        {"agent": "hard", "record": record(seat=True)}, {"agent": "hard", "record": record(seat=1.5)},
        {"agent": "hard", "record": record(hand_number=10**30)}, {"agent": "hard", "record": record(hand_number=2**63)},
        {"agent": "hard", "record": record(scores=[10**30] * 4)}, {"agent": "hard", "record": record(scores=[1e308] * 4)},
        {"agent": "hard", "record": record(scores=[2**63] * 4)}, {"agent": "hard", "record": record(scores="0")},
        {"agent": "hard", "record": record(version=10**30)}, {"agent": "hard", "record": record(version="1")},
        {"agent": "hard", "record": record(rules="classic")}, {"agent": "hard", "record": record(rules={"preset": "x"})},
        {"agent": "hard", "record": record(rules={"target_score": 10**40})},
        {"agent": "hard", "record": record(rules={"preset": "classic", "num_players": 3})},
        {"agent": "hard", "record": record(phase="bid")}, {"agent": "hard", "record": record(phase=None)},
        {"agent": "hard", "record": record(hand="QS")}, {"agent": "hard", "record": record(hand=[None])},
        {"agent": "hard", "record": record(hand=[{"card": "QS"}])}, {"agent": "hard", "record": record(hand=[99])},
        {"agent": "hard", "record": record(hand=["☃"])}, {"agent": "hard", "record": record(hand=[10**30])},
        {"agent": "hard", "record": record(tricks="none")}, {"agent": "hard", "record": record(tricks=[[1, 2]])},
        {"agent": "hard", "record": record(tricks=[{"leader": 10**30, "cards": []}])},
        {"agent": "hard", "record": record(trick={"leader": True, "cards": ["2C"]})},
        {"agent": "hard", "record": record(trick=[])}, {"agent": "hard", "record": record(passed={"a": 1})},
        {"agent": "hard", "record": record(received=["QS"] * 200)},
        {"agent": "hard", "record": record(format="other")}, {"agent": "hard", "record": record(unknown=1)},
    ]
    for body in bodies + [json.dumps(o).encode() for o in objects]:
        r = client.post("/api/v1/act", content=body, headers={"content-type": "application/json"})
        assert 400 <= r.status_code < 500, (body[:120], r.status_code, r.text[:300])
        detail = r.json()["detail"]
        assert isinstance(detail, str) and "\n" not in detail, (body[:120], detail)


def test_a_policy_reports_probabilities_and_refuses_other_rules(tmp_path, sample_records):
    pytest.importorskip("torch")
    from agents import builtin

    if "ppo-classic" not in builtin("classic"):
        pytest.skip("the shipped ppo-classic policy is not installed")
    with TestClient(create_app(["hard", "ppo-classic"], tmp_path)) as client:
        listed = {a["spec"]: a for a in client.get("/api/v1/agents").json()["agents"]}
        assert listed["ppo-classic"] == {"spec": "ppo-classic", "rules": "classic", "presets": ["classic"],
                                         "probabilities": True}
        classic = [r for r in sample_records if r["rules"].get("num_players", 4) == 4
                   and Rules.from_dict(r["rules"]).same_game("classic")]
        for record in classic[:4]:
            body = client.post("/api/v1/act", json={"agent": "ppo-classic", "record": record}).json()
            probs = body["probabilities"]
            legal = {cards.card_text(c) for c in range(52) if seat_record.legal_mask(record)[c]}
            assert set(probs) == legal and abs(sum(probs.values()) - 1) < 1e-4
            assert max(probs, key=probs.get) == body["card"]
        two = next(r for r in sample_records if r["rules"].get("num_players") == 2)
        r = client.post("/api/v1/act", json={"agent": "ppo-classic", "record": two})
        assert r.status_code == 422 and "trained for" in r.json()["detail"]
        # A game of other rules with the policy as an opponent is refused the same way.
        r = client.post("/api/v1/games", json={"preset": "quick", "opponents": ["ppo-classic", "hard", "hard"]})
        assert r.status_code == 422 and "ppo-classic" in r.json()["detail"]


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


def test_hearts_serve_prints_its_url_and_runs_uvicorn(monkeypatch, tmp_path, capsys):
    from hearts_app import cli
    from hearts_app.commands import serve as serve_command

    ran = {}

    def run(app, listener, **_):  # the socket was bound before the address was printed
        ran.update(address=listener.getsockname()[:2])
        listener.close()

    monkeypatch.setattr(serve_command, "run_app", run)
    code = cli.main(["serve", "--port", "0", "--agents", "easy,hard", "--workers", "0",
                     "--games-dir", str(tmp_path / "g")])
    host, port = ran["address"]
    assert code == 0 and host == "127.0.0.1" and port > 0
    assert f"Hearts Lab is serving at http://127.0.0.1:{port}/ (Ctrl-C stops)" in capsys.readouterr().out
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:  # a port in use: said in one line, nothing served
        with pytest.raises(SystemExit) as exit:
            cli.main(["serve", "--port", str(taken.getsockname()[1]), "--agents", "easy", "--workers", "0",
                      "--games-dir", str(tmp_path / "g")])
        captured = capsys.readouterr()
        assert exit.value.code == 2 and "cannot listen on 127.0.0.1:" in captured.err
        assert "serving at" not in captured.out
    with pytest.raises(SystemExit) as exit:
        cli.main(["serve", "--agents", "easy,nope", "--games-dir", str(tmp_path / "g")])
    assert exit.value.code == 2 and "nope" in capsys.readouterr().err


@pytest.mark.parametrize("host", ["256.0.0.1", "no-such-host.invalid", "a\x00b", "Vx\x8c~\x88"],
                         ids=["no-such-address", "no-such-name", "nul", "not-encodable"])
def test_hearts_serve_refuses_an_address_it_cannot_listen_on_before_making_its_games_folder(tmp_path, capsys,
                                                                                            host):
    from hearts_app import cli

    games = tmp_path / "games"
    with pytest.raises(SystemExit) as exit:
        cli.main(["serve", "--host", host, "--port", "0", "--agents", "easy", "--workers", "0",
                  "--games-dir", str(games)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "cannot listen on" in err and "Traceback" not in err
    assert not games.exists()


class FakeListener:
    """Stands for the bound socket of ``hearts serve`` where the test's address is not this machine's."""

    def __init__(self, port: int):
        self.port = port

    def getsockname(self):
        return ("0.0.0.0", self.port)


def test_hearts_serve_without_the_extra_says_what_to_install(monkeypatch, capsys, tmp_path):
    import sys

    from hearts_app import cli

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now raises ImportError
    with pytest.raises(SystemExit) as exit:
        cli.main(["serve", "--games-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "scripts/setup.sh serve" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# Hosts, the API docs offline, deep nesting
# ---------------------------------------------------------------------------------------------


def test_a_host_header_the_server_does_not_answer_to_is_400_before_the_app_sees_it(tmp_path):
    app = create_app(FAST, tmp_path / "games", allowed_hosts=["127.0.0.1", "localhost", "*.hearts.test"])
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        for host in ("127.0.0.1", "127.0.0.1:8000", "localhost:9", "LOCALHOST.", "play.hearts.test:8000"):
            assert client.get("/api/v1/options", headers={"host": host}).status_code == 200, host
        # A rebinding page is sent with its own site's name; names that only contain an allowed one
        # and other addresses are refused too.
        for host in ("evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.evil.example",
                     "hearts.test.evil.example", "[::1]:8000", "10.0.0.7", ""):
            r = client.post("/api/v1/games", json={}, headers={"host": host})
            assert r.status_code == 400, host
            assert r.json()["detail"].startswith(f"this server does not answer to the Host {host!r}; it answers to "
                                                 "127.0.0.1, localhost, *.hearts.test")
    assert not (tmp_path / "games").exists() or not list((tmp_path / "games").iterdir())  # no game was made


def test_a_request_naming_two_hosts_is_400_whichever_comes_last(tmp_path):
    """Two Host headers (an allowed name and a foreign one, in either order) are refused, never read as the last."""
    import asyncio

    from hearts_app.serve.app import AllowedHosts

    reached = []

    async def app(scope, receive, send):
        reached.append(scope["path"])

    async def call(headers):
        sent = []

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": "/api/v1/options", "headers": headers, "query_string": b""}
        await AllowedHosts(app, ["127.0.0.1"])(scope, receive, send)
        return sent

    for headers in ([(b"host", b"127.0.0.1"), (b"host", b"evil.example")],
                    [(b"host", b"evil.example"), (b"host", b"127.0.0.1")]):
        sent = asyncio.run(call(headers))
        assert sent[0]["status"] == 400 and b"names its Host once; this one names 2" in sent[1]["body"]
    assert not reached
    asyncio.run(call([(b"host", b"127.0.0.1")]))
    assert reached == ["/api/v1/options"]


@pytest.mark.parametrize("host, allowed, refused", [
    ("127.0.0.1", ["127.0.0.1:8123", "localhost:8123"], ["evil.example", "192.168.1.20", "[::1]"]),
    ("localhost", ["localhost", "127.0.0.1"], ["evil.example"]),
    ("::1", ["[::1]:8123", "localhost"], ["evil.example", "127.0.0.2"]),
    ("0.0.0.0", ["localhost", "192.168.1.20:8123", "10.0.0.7"], ["evil.example:8123", "[fe80::1]"]),
    ("::", ["192.168.1.20", "[fe80::1]:8123", "localhost"], ["evil.example"]),
    ("192.168.1.20", ["192.168.1.20:8123"], ["localhost", "evil.example"]),
])
def test_hearts_serve_answers_to_the_names_of_the_address_it_listens_on(monkeypatch, tmp_path, capsys, host,
                                                                        allowed, refused):
    from hearts_app import cli
    from hearts_app.commands import serve as serve_command

    ran = {}
    monkeypatch.setattr(serve_command, "listen", lambda host, port: FakeListener(port))  # any address, bound or not
    monkeypatch.setattr(serve_command, "run_app", lambda app, listener, **_: ran.update(app=app))
    assert cli.main(["serve", "--host", host, "--port", "8123", "--agents", "easy", "--workers", "0",
                     "--games-dir", str(tmp_path / "g")]) == 0
    assert "answers to the Host names" in capsys.readouterr().out
    with TestClient(ran["app"]) as client:
        for name in allowed:
            assert client.get("/api/v1/agents", headers={"host": name}).status_code == 200, name
        for name in refused:
            assert client.get("/api/v1/agents", headers={"host": name}).status_code == 400, name


def test_hearts_serve_allowed_hosts_replaces_the_default(monkeypatch, tmp_path, capsys):
    import socket

    from hearts_app import cli

    from hearts_app.commands import serve as serve_command
    from hearts_app.commands.serve import default_allowed_hosts

    assert default_allowed_hosts("127.0.0.1") == ["127.0.0.1", "localhost"]
    assert default_allowed_hosts("0.0.0.0")[:1] == ["localhost"] and "0.0.0.0" in default_allowed_hosts("0.0.0.0")
    assert socket.gethostname().lower() in default_allowed_hosts("0.0.0.0") + ["localhost"]
    ran = {}
    monkeypatch.setattr(serve_command, "listen", lambda host, port: FakeListener(port))
    monkeypatch.setattr(serve_command, "run_app", lambda app, listener, **_: ran.update(app=app))
    assert cli.main(["serve", "--allowed-hosts", "hearts.example.org, *.lan", "--agents", "easy", "--workers", "0",
                     "--games-dir", str(tmp_path / "g")]) == 0
    assert "answers to the Host names hearts.example.org, *.lan" in capsys.readouterr().out
    with TestClient(ran["app"]) as client:
        assert client.get("/api/v1/agents", headers={"host": "hearts.example.org"}).status_code == 200
        assert client.get("/api/v1/agents", headers={"host": "pi.lan:8000"}).status_code == 200
        assert client.get("/api/v1/agents", headers={"host": "127.0.0.1"}).status_code == 400
    assert cli.main(["serve", "--allowed-hosts", "*", "--agents", "easy", "--workers", "0",
                     "--games-dir", str(tmp_path / "g")]) == 0
    with TestClient(ran["app"]) as client:
        assert client.get("/api/v1/agents", headers={"host": "anything.example"}).status_code == 200
    with pytest.raises(SystemExit) as exit:
        cli.main(["serve", "--allowed-hosts", "localhost,,x", "--games-dir", str(tmp_path / "g")])
    assert exit.value.code == 2 and "--allowed-hosts 'localhost,,x': an empty name" in capsys.readouterr().err


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_api_docs_load_everything_from_the_server_itself(client, page):
    import re

    r = client.get(page)
    assert r.status_code == 200
    # Nothing from a CDN (FastAPI's default), nor Swagger UI's validator badge from validator.swagger.io.
    assert "http://" not in r.text and "https://" not in r.text and "//cdn" not in r.text
    assets = re.findall(r'(?:src|href)="([^"]+)"', r.text)
    assert any(a.endswith(".js") for a in assets), r.text
    for asset in assets:
        assert asset.startswith("/") and not asset.startswith("//"), asset
        fetched = client.get(asset)
        assert fetched.status_code == 200 and len(fetched.content) > 1000, asset
    if page == "/docs":
        assert '"validatorUrl": null' in r.text
        assert client.get("/openapi.json").json()["info"]["title"] == "Hearts Lab"


@pytest.mark.parametrize("path", ["/api/v1/act", "/api/v1/games", "/api/v1/games/x/play"])
@pytest.mark.parametrize("body", [b"[" * 65, b"[" * 1_000 + b"]" * 1_000, b"[" * 60_000,
                                  b'{"agent": "hard", "record": ' + b'{"a": ' * 2_000 + b"1" + b"}" * 2_001,
                                  b'{"rules": {"moon": ' + b"[" * 30_000 + b"]" * 30_000 + b"}}"],
                         ids=["65", "1000-closed", "60000", "objects-2000", "in-a-field-30000"])
def test_a_deeply_nested_body_is_the_documented_422(client, path, body):
    # Python's JSON reader fails at about a thousand levels (a RecursionError, answered 400 with
    # "There was an error parsing the body"); the API's bodies nest a few levels.
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, (path, r.status_code, r.text[:200])
    assert r.json() == {"detail": "the body is not JSON this API reads: arrays and objects nested more than "
                                  "64 levels deep"}


def test_brackets_inside_strings_and_ordinary_nesting_are_not_refused(client):
    r = client.post("/api/v1/games", json={"preset": "[" * 200, "rules": {"pass_cycle": [["left"]]}})
    assert r.status_code == 422 and "nested" not in r.json()["detail"]  # an unknown preset, not the nesting
    assert client.post("/api/v1/games", json={"rules": {"moon": "off"}}).status_code == 201


def test_a_body_over_64_kib_is_413_however_deeply_nested(client):
    r = client.post("/api/v1/act", content=b"[" * 100_000, headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_a_move_whose_save_fails_is_not_made_and_leaves_no_temporary_file(client, games_dir, monkeypatch):
    """A full disk: the move is answered 500 and not applied; the record on disk is the one before it, no
    .tmp file is left, and the same move tried again (with room on the disk) is played as the first try."""
    view = new_game(client, preset="classic", opponents=["easy", "easy", "easy"], seed=11)
    game_id = view["id"]
    record = (games_dir / f"{game_id}.jsonl").read_bytes()
    real_replace = atomic_files.os.replace

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "replace", full_disk)
    card = view["legal"][0]
    failed = client.post(f"/api/v1/games/{game_id}/play", json={"card": card})
    assert failed.status_code == 500
    assert failed.json()["detail"] == ("cannot save the game: No space left on device; the card was not played, "
                                       "try it again")
    assert (games_dir / f"{game_id}.jsonl").read_bytes() == record
    assert not list(games_dir.glob("*.tmp"))
    assert view["phase"] == "pass" and view["pass"]["chosen"] == []
    assert client.get(f"/api/v1/games/{game_id}").json()["pass"]["chosen"] == []  # the pick was not made
    monkeypatch.setattr(atomic_files.os, "replace", real_replace)
    again = client.post(f"/api/v1/games/{game_id}/play", json={"card": card})
    assert again.status_code == 200, again.text
    assert again.json()["pass"]["chosen"] == [card]


def test_every_refusal_of_the_game_api_carries_a_reason_code_the_page_words(client, app, games_dir, tmp_path,
                                                                          monkeypatch):
    """Each way a game request fails answers a ``reason`` whose code is in games.REASON_CODES, with the
    parts it names, and each code has an entry in the page's catalogue: the page words it in its
    player's language (the English ``detail`` stays for developers)."""
    import re
    from pathlib import Path

    from hearts_app.serve.games import REASON_CODES

    def reason(r, status):
        assert r.status_code == status, r.text
        body = r.json()
        assert set(body["reason"]) <= {"code", *REASON_CODES[body["reason"]["code"]]}, body
        return body["reason"]

    assert reason(client.get("/api/v1/games/AAAAAAAAAAAAAAAAAAAAAA"), 404) == {"code": "no_such_game"}
    assert reason(client.get("/api/v1/games/x"), 404) == {"code": "no_such_game"}
    assert reason(client.post("/api/v1/games", json={"preset": "nope"}), 422) == {"code": "invalid_setup"}
    assert reason(client.post("/api/v1/games", json={"preset": "classic", "rules": {"target_score": -5}}),
                  422) == {"code": "invalid_setup"}
    assert reason(client.post("/api/v1/games", json={"opponents": ["easy"]}), 422) == {"code": "invalid_setup"}
    assert reason(client.post("/api/v1/games", json={"opponents": ["ppo-classic"] * 3}), 422) == {
        "code": "opponent_not_offered", "spec": "ppo-classic"}
    view = new_game(client, opponents=["easy"] * 3, seed=3)
    assert reason(client.get(f"/api/v1/games/{view['id']}/record"), 409) == {"code": "record_not_ready"}

    with TestClient(create_app(["random", "ppo-classic"], tmp_path / "games", seed=1)) as other:
        refused = reason(other.post("/api/v1/games", json={"preset": "quick", "opponents": ["ppo-classic"] * 3}), 422)
    assert refused == {"code": "opponent_cannot_play", "spec": "ppo-classic", "field": "target_score", "value": "50",
                       "covers": ["100"]}

    game = new_game(client, opponents=["easy"] * 3, seed=5)
    (games_dir / f"{game['id']}.jsonl").write_text("not a record\n")
    app.state.store._games.pop(game["id"], None)  # (as after a restart: read from its record)
    assert reason(client.get(f"/api/v1/games/{game['id']}"), 409) == {"code": "game_unreadable"}

    game = new_game(client, opponents=["easy"] * 3, seed=7)
    monkeypatch.setattr(atomic_files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left")))
    assert reason(client.post(f"/api/v1/games/{game['id']}/play", json={"card": game["legal"][0]}), 500) == {
        "code": "save_failed"}
    monkeypatch.undo()

    game = new_game(client, opponents=["easy"] * 3, seed=9)
    with app.state.store.locked(game["id"]) as held:
        for agent in held.agents:
            monkeypatch.setattr(agent, "act", lambda *args, **kwargs: 1 / 0)
    failed = None
    for _ in range(20):  # pick cards until an opponent is asked
        view = client.get(f"/api/v1/games/{game['id']}").json()
        r = client.post(f"/api/v1/games/{game['id']}/play", json={"card": view["legal"][0]})
        if r.status_code != 200:
            failed = reason(r, 500)
            break
    assert failed is not None and failed["code"] == "opponent_failed" and failed["seat"] in (1, 2, 3)

    catalogue = (Path(__file__).resolve().parents[1] / "clients" / "web" / "static" / "i18n.js").read_text()
    worded = set(re.findall(r'"reason\.(\w+)"', catalogue))
    assert set(REASON_CODES) <= worded, set(REASON_CODES) - worded
