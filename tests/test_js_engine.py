"""The JavaScript game engine (``clients/js/src/engine.js``) against Python's golden games.

* the committed ``clients/js/test/fixtures/golden_games.json`` is what ``export.golden_games`` writes
  now (so it cannot go stale when the engine, the bots or the generator change);
* ``clients/js/test/engine.test.js`` replays every hand of it in Node: the same seat to act and legal
  cards at every step, the same points, moons and scores after every hand, the same winner (it
  needs no npm package; skipped where node is missing);
* the golden games show what they are there for (each preset, each moon rule made and stopped,
  shooter's choice both ways, the options), read from the Python side.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from export import golden_games
from hearts_env.rules import PRESETS, Rules

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "js"
COMMITTED = CLIENT / "test" / "fixtures" / golden_games.GOLDEN_GAMES_FILE


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(COMMITTED.read_text(encoding="utf-8"))


def test_committed_golden_games_are_what_the_generator_writes(tmp_path):
    written = golden_games.write_golden_games(tmp_path)
    assert written.read_text(encoding="utf-8") == COMMITTED.read_text(encoding="utf-8"), (
        "clients/js/test/fixtures/golden_games.json is stale: run "
        "`python -m export.golden_games clients/js/test/fixtures` and commit it"
    )


def test_golden_games_are_small_enough_to_commit():
    assert COMMITTED.stat().st_size < 400_000


def test_golden_games_show_every_preset_moon_and_option(committed):
    games = committed["games"]
    rules = [Rules.from_dict(g["rules"]) for g in games]
    assert {r.name for r in rules} >= set(PRESETS)
    assert {r.moon for r in rules} == {"add_to_others", "subtract_from_self", "shooters_choice", "off"}
    for flag in ("queen_breaks_hearts", "queen_waits_for_hearts", "jack_of_diamonds_bonus"):
        assert any(getattr(r, flag) for r in rules), flag
    assert any(not r.hearts_must_be_broken for r in rules)
    assert any(not r.first_trick_protection for r in rules)
    assert any(r.num_players == 2 and r.pass_cycle != ("none",) for r in rules)
    assert any(r.trump_suit == "H" and r.num_players == 4 for r in rules)
    by_name = {g["name"]: g for g in games}
    moons = {name: [h for h in g["hands"] if any(h["moon"])] for name, g in by_name.items()}
    for name in ("moon_add_to_others", "moon_subtract_from_self", "two_player_moon", "jack_of_diamonds"):
        assert moons[name], f"{name}: a moon made"
    shooter = lambda hand: hand["moon"].index(True)  # noqa: E731
    assert any(h["points"][shooter(h)] == 0 for h in moons["moon_shooters_choice_add"])
    assert any(h["points"][shooter(h)] < 0 for h in moons["moon_shooters_choice_subtract"])
    assert not moons["moon_off"] and not moons["moon_stopped"]
    # moon off: some seat took all 26 points and kept them
    assert any(26 in h["points"] for h in by_name["moon_off"]["hands"])
    for g in games:
        assert len(g["hands"]) >= 2 and g["winner"] >= 0
        rules_of = Rules.from_dict(g["rules"])
        assert max(g["hands"][-1]["scores"]) >= rules_of.target_score


def test_javascript_engine_replays_the_golden_games():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the JavaScript engine's tests need Node 20+)")
    run = subprocess.run([node, "--test", "test/engine.test.js"], cwd=CLIENT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"^# fail 0$", run.stdout, re.M)
    passed = int(re.search(r"^# pass (\d+)$", run.stdout, re.M).group(1))
    games = len(json.loads(COMMITTED.read_text(encoding="utf-8"))["games"])
    assert passed >= games + 2, run.stdout[-2000:]
