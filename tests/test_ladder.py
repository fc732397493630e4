"""The ladder of levels (export/ladder.py, ``hearts export --ladder``) and the imitation levels'
agreement measure (train/imitation.py), on tiny networks and a few deals."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from agents import AgentSpecError, make  # noqa: E402
from agents.checkpoint import save  # noqa: E402
from agents.onnx_policy import OnnxPolicyAgent  # noqa: E402
from agents.policy import PolicyNet  # noqa: E402
from eval.arena import head_to_head  # noqa: E402
from export import ladder as ladder_module  # noqa: E402
from export.ladder import LADDERS, LEVELS_FORMAT, Ladder, Level, export_ladder  # noqa: E402
from hearts_env import seat_record  # noqa: E402
from hearts_env.rules import Rules  # noqa: E402
from train.imitation import agreement, agreement_of, teacher_round  # noqa: E402

CLASSIC = Rules.preset("classic")


def tiny_level(folder, name, kind="imitation", imitates=None, seed=0) -> Level:
    torch.manual_seed(seed)
    net = PolicyNet(hidden=[8])
    meta = {"rules": CLASSIC.to_dict(), "config": {"imitation": {"epochs": 1, "learning_rate": 1e-3}},
            "imitation": {"decisions": 100.0, "seconds": 1.0, "held_out_agreement": 0.5,
                          "held_out_plays_with_choice": 10.0, "held_out_agreement_all": 0.6}}
    path = save(folder / f"{name}.pt", net, meta)
    card = folder / f"{name}.md"
    card.write_text(f"# {name}\n")
    return Level(name, path, card, kind, f"the tiny {name}", imitates=imitates, config=f"configs/levels/x_{name}.yaml")


@pytest.fixture(scope="module")
def tiny_ladder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("weights")
    return Ladder("tiny", "classic", "hard", (tiny_level(folder, "easy", imitates="easy", seed=1),
                                              tiny_level(folder, "strong", kind="trained", seed=2)))


@pytest.fixture(scope="module")
def exported_ladder(tiny_ladder, tmp_path_factory):
    out = tmp_path_factory.mktemp("ladder")
    written = export_ladder(tiny_ladder, out, golden=4, measure_deals=4, workers=1, log=lambda line: None)
    return out, written


def test_the_ladder_export_writes_every_level_and_levels_json_in_order(exported_ladder):
    out, written = exported_ladder
    levels = json.loads((out / "levels.json").read_text())
    assert levels["format"] == LEVELS_FORMAT and levels["format_version"] == 1
    assert levels["ladder"] == "tiny" and Rules.from_dict(levels["rules"]) == CLASSIC
    assert [entry["name"] for entry in levels["levels"]] == ["easy", "strong"]  # easiest first
    for entry in levels["levels"]:
        for key in ("model", "manifest", "golden", "model_card"):
            assert (out / entry[key]).is_file(), entry[key]
        assert entry["training"]["command"].startswith("hearts train configs/levels/")
        assert set(entry["arena"]) >= {"points_per_hand", "moons_made_per_hand"}
    easy, strong = levels["levels"]
    assert easy["kind"] == "imitation" and easy["imitates"] == "easy"
    assert easy["agreement"]["plays_with_choice"] == 0.5 and easy["agreement"]["held_out_plays"] == 10
    assert strong["agreement"] is None and "step" in strong["arena"] and "minus_bot" in easy["arena"]
    step = strong["arena"]["step"]
    assert step["below"] == "easy" and step["in_order"] == (step["high"] < 0)
    for entry in levels["levels"]:
        panel = entry["arena"]["panel"]
        assert set(panel["points_per_hand_vs"]) == {"random", "easy", "normal", "hard"}
        assert panel["points_per_hand_vs"]["hard"] == entry["arena"]["points_per_hand"]
        assert panel["score"]["mean"] == pytest.approx(
            np.mean([v["mean"] for v in panel["points_per_hand_vs"].values()]), abs=1e-3)
    assert levels["arena"]["deals"] == 4 and levels["arena"]["opponent"] == "three hard"
    assert "--measure --deals 4" in levels["arena"]["command"]
    assert json.loads(written["figures"].read_text())["levels"]["easy"] == easy["arena"]


def test_each_levels_golden_picks_are_its_models(exported_ladder):
    out, _ = exported_ladder
    for name in ("easy", "strong"):
        golden = json.loads((out / name / "golden.json").read_text())
        manifest = json.loads((out / name / "policy.json").read_text())
        assert golden["model_sha256"] == manifest["model"]["sha256"]
        cases = golden["cases"]
        obs, mask = seat_record.encode([case["record"] for case in cases])
        actions, _ = OnnxPolicyAgent(out / name / "policy.onnx").policy(obs, mask)
        assert actions.tolist() == [case["action"] for case in cases]


def test_a_level_plays_in_the_arena_as_an_onnx_spec(exported_ladder):
    out, _ = exported_ladder
    result = head_to_head(f"onnx:{out / 'easy' / 'policy.onnx'}", "hard", CLASSIC, deals=4, workers=1)
    assert np.isfinite(result.leaderboard[0]["points_per_hand"]["mean"])


def test_without_measure_levels_json_takes_the_recorded_figures(tiny_ladder, tmp_path, monkeypatch):
    recorded = {"levels": {"easy": {"points_per_hand": {"mean": 9.0, "low": 8.0, "high": 10.0}}},
                "deals": 7, "command": "hearts export --ladder tiny --out DIR --measure --deals 7"}
    monkeypatch.setattr(ladder_module, "LEVEL_DIR", tmp_path / "shipped")
    (tmp_path / "shipped").mkdir()
    (tmp_path / "shipped" / "tiny_figures.json").write_text(json.dumps(recorded))
    export_ladder(tiny_ladder, tmp_path / "out", golden=0, log=lambda line: None)
    levels = json.loads((tmp_path / "out" / "levels.json").read_text())
    assert levels["arena"]["deals"] == 7 and levels["levels"][0]["arena"]["points_per_hand"]["mean"] == 9.0
    assert levels["levels"][1]["arena"] is None  # no figures recorded for it
    assert not (tmp_path / "out" / "easy" / "golden.json").exists()


def test_the_command_exports_a_ladder(tiny_ladder, tmp_path, monkeypatch, capsys):
    from hearts_app import cli

    monkeypatch.setitem(LADDERS, "classic", tiny_ladder)
    assert cli.main(["export", "--ladder", "classic", "--out", str(tmp_path), "--golden", "0"]) == 0
    assert json.loads((tmp_path / "levels.json").read_text())["levels"][0]["name"] == "easy"
    assert (tmp_path / "strong" / "policy.onnx").is_file()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["export", "--ladder", "classic"])
    assert exit_.value.code == 2 and "needs --out DIR" in capsys.readouterr().err
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    for args, words in ((["--out", str(tmp_path / "other")], "is not empty and not an earlier ladder export"),
                        (["--out", str(tmp_path / "x"), "--measure", "--workers", "0"], "--workers: must be 1 or more"),
                        (["--out", str(tmp_path / "x"), "--panel", "--games", "0"], "--games: must be 1 or more"),
                        (["--out", str(tmp_path / "x"), "--measure", "--deals", "-3"], "--deals: must be 1 or more")):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["export", "--ladder", "classic", *args])
        assert exit_.value.code == 2 and words in capsys.readouterr().err, args
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == ["notes.txt"] and not (tmp_path / "x").exists()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["export", "agents/policies/ppo_classic.pt", "--out", str(tmp_path / "y"), "--panel"])
    assert exit_.value.code == 2 and "--panel goes with --ladder NAME" in capsys.readouterr().err


def test_the_shipped_ladders_are_easiest_first():
    classic = LADDERS["classic"]
    assert [level.name for level in classic.levels] == ["easy", "normal", "hard", "strong"]
    assert [level.imitates for level in classic.levels] == ["easy", "normal", "hard", None]
    two = LADDERS["two_player"]
    assert (two.rules, [level.name for level in two.levels]) == ("two_player", ["easy", "normal", "hard", "strong"])


# ---------------------------------------------------------------------------------------------
# The agreement measure
# ---------------------------------------------------------------------------------------------


def test_agreement_counts_only_card_plays_with_a_choice():
    chosen = np.array([1, 2, 3, 4, 5])
    teacher = np.array([1, 0, 3, 0, 9])
    choice = np.array([True, True, True, False, False])
    measured = agreement_of(chosen, teacher, choice)
    assert measured["agreement"] == pytest.approx(2 / 3) and measured["plays_with_choice"] == 3
    assert measured["agreement_all"] == pytest.approx(2 / 5) and measured["decisions"] == 5


def test_a_teacher_round_marks_the_plays_with_a_choice():
    teacher = make("easy", rules=CLASSIC)
    obs, mask, action, target, choice = teacher_round(teacher, CLASSIC, 8, 5, np.random.default_rng(0))
    assert len(obs) == len(mask) == len(action) == len(target) == len(choice)
    assert (mask.sum(axis=1)[choice] > 1).all()
    passes = 8 * 4 * 3 - 0  # every hand of a 4-hand cycle but the hold hand passes three cards a seat
    plays = 8 * 52
    assert len(action) in range(plays, plays + passes + 1)
    assert 0 < choice.sum() < plays  # the last trick and followed suits with one card are forced


class TeacherNet(torch.nn.Module):
    """A 'network' whose logits pick a fixed agent's card: agreement with that agent is 1."""

    def __init__(self, agent):
        super().__init__()
        self.agent = agent

    def forward(self, obs, mask):
        cards = self.agent.act(obs.numpy(), mask.numpy())
        logits = torch.full(mask.shape, -1e9)
        logits[torch.arange(len(cards)), torch.as_tensor(cards)] = 0.0
        return logits, torch.zeros(len(cards))


def test_agreement_of_a_bot_with_itself_is_one_and_with_another_less():
    same = agreement(TeacherNet(make("easy", rules=CLASSIC)), make("easy", rules=CLASSIC), CLASSIC, tables=16)
    assert same["agreement"] == 1.0 and same["agreement_all"] == 1.0 and same["plays_with_choice"] > 100
    other = agreement(TeacherNet(make("random", seed=0, rules=CLASSIC)), make("easy", rules=CLASSIC), CLASSIC,
                      tables=16)
    assert 0.1 < other["agreement"] < 0.8


def test_an_imitation_only_run_records_its_held_out_agreement(tmp_path):
    from agents.checkpoint import load
    from train.config import load_config
    from train.ppo import Run

    config = load_config("configs/levels/classic_easy.yaml",
                         ["run_name=tiny_level", "num_tables=16", "hidden=[8]", "imitation.decisions=1000",
                          "imitation.held_out_tables=8", "imitation.batch_size=256"])
    assert config.total_decisions == 0  # imitation only: no PPO
    summary = Run(config, runs_dir=tmp_path, progress=False, log=lambda *line: None).train()
    assert summary["learner_decisions"] == 0 and summary["imitation"]["decisions"] >= 1000
    assert 0 < summary["imitation"]["held_out_agreement"] <= 1 and summary["imitation"]["held_out_plays_with_choice"] > 50
    meta = load(tmp_path / "tiny_level" / "policy.pt")["meta"]
    assert meta["imitation"] == summary["imitation"] and meta["hidden"] == [8]


def test_the_javascript_client_plays_every_level(exported_ladder):
    client = Path(__file__).resolve().parent.parent / "clients" / "js"
    if shutil.which("node") is None or not (client / "node_modules" / "onnxruntime-node").is_dir():
        pytest.skip("node and the JavaScript client's packages are not installed (scripts/setup_clients.sh)")
    out, _ = exported_ladder
    run = subprocess.run(["node", "--test", "test/levels.test.js"], cwd=client, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "HEARTS_LEVELS_DIR": str(out)})
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "# pass 3" in run.stdout and "# skipped 0" in run.stdout


def test_equivalent_cards_are_one_suit_with_nothing_outstanding_between():
    from hearts_env.cards import parse_card
    from hearts_env.observe import OBS_DIM, OBSERVATION_LAYOUT
    from train.imitation import equivalent_cards

    def view(hand, played=()):
        row = np.zeros(OBS_DIM, dtype=np.float32)
        where, _ = OBSERVATION_LAYOUT["hand"]
        row[where.start + np.array([parse_card(c) for c in hand])] = 1
        where, _ = OBSERVATION_LAYOUT["played_by"]  # (seat, card): played by the left seat
        for card in played:
            row[where.start + 52 + parse_card(card)] = 1
        return row

    cases = [(view(["2H", "3H"]), "2H", "3H", True),  # neighbours
             (view(["2H", "4H"]), "2H", "4H", False),  # 3H still out
             (view(["2H", "4H"], ["3H"]), "4H", "2H", True),  # 3H played
             (view(["JS", "KS"]), "JS", "KS", False),  # QS out
             (view(["QS", "KS"]), "QS", "KS", False),  # the queen scores alone
             (view(["2C", "2D"]), "2C", "2D", False),  # two suits
             (view(["5D"]), "5D", "5D", True)]
    obs = np.stack([case[0] for case in cases])
    a = np.array([parse_card(case[1]) for case in cases])
    b = np.array([parse_card(case[2]) for case in cases])
    assert equivalent_cards(obs, a, b).tolist() == [case[3] for case in cases]
    measured = agreement_of(a, b, np.ones(len(cases), bool), obs)
    assert measured["agreement"] == pytest.approx(1 / 7) and measured["agreement_equivalent"] == pytest.approx(3 / 7)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LADDERS))
def test_the_shipped_ladder_exports_with_its_recorded_figures_and_plays_in_javascript(name, tmp_path):
    """The shipped weights of every level: exported, levels.json with the recorded figures in order, every
    level's golden picks equal in onnxruntime (Python) and, when Node is installed, in the JavaScript client."""
    spec = LADDERS[name]
    export_ladder(name, tmp_path, golden=8, log=lambda line: None)
    levels = json.loads((tmp_path / "levels.json").read_text())
    assert [entry["name"] for entry in levels["levels"]] == [level.name for level in spec.levels]
    assert levels["arena"]["in_order"] and all(entry["arena"] for entry in levels["levels"])
    for entry in levels["levels"]:
        golden = json.loads((tmp_path / entry["golden"]).read_text())
        obs, mask = seat_record.encode([case["record"] for case in golden["cases"]])
        actions, _ = OnnxPolicyAgent(tmp_path / entry["model"]).policy(obs, mask)
        assert actions.tolist() == [case["action"] for case in golden["cases"]]
        if entry["kind"] == "imitation":
            assert entry["agreement"]["plays_with_choice"] >= 0.9
    client = Path(__file__).resolve().parent.parent / "clients" / "js"
    if shutil.which("node") and (client / "node_modules" / "onnxruntime-node").is_dir():
        run = subprocess.run(["node", "--test", "test/levels.test.js"], cwd=client, capture_output=True, text=True,
                             timeout=300, env={**os.environ, "HEARTS_LEVELS_DIR": str(tmp_path)})
        assert run.returncode == 0 and "# pass 3" in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]


def test_agreement_at_another_table_asks_the_teacher_in_the_agents_situations():
    from train.imitation import agreement_at_table

    easy, hard = make("easy", rules=CLASSIC), make("hard", rules=CLASSIC)
    itself = agreement_at_table(easy, easy, CLASSIC, hard, tables=16)
    assert itself["agreement"] == 1.0 and itself["plays_with_choice"] > 50
    assert itself["decisions"] < 16 * 20  # only seat 0's decisions: 13 plays and 3 passes a hand at most
    assert agreement_at_table(make("random", seed=1, rules=CLASSIC), easy, CLASSIC, hard, tables=16)["agreement"] < 0.8


# ---------------------------------------------------------------------------------------------
# The levels as agent specs, and offered by hearts serve
# ---------------------------------------------------------------------------------------------


#: Rule sets of both families, and the network of each level expected to play them: the shipped
#: policy plays its own preset as the strong level; the family's network every other rule set.
LEVEL_TABLES = [("classic", {}, "ppo_classic.pt"), ("quick", {"moon": "off"}, "classic_strong_moon_off.pt"),
                ("classic", {"moon": "off", "jack_of_diamonds_bonus": True}, "classic_strong_moon_off_ppo.pt"),
                ("classic", {"moon": "subtract_from_self"}, "classic_strong.pt"),
                ("long", {"jack_of_diamonds_bonus": True, "pass_cycle": ["none"]}, "classic_strong.pt"),
                ("two_player", {}, "two_player_strong.pt"),
                ("two_player", {"moon": "subtract_from_self", "target_score": 50}, "two_player_strong.pt"),
                ("two_player", {"moon": "off"}, "two_player_strong_moon_off.pt")]


@pytest.mark.parametrize("preset, changes, strong", LEVEL_TABLES)
def test_level_specs_play_their_ladders_networks_at_every_rule_set_of_the_family(preset, changes, strong):
    from agents import level_files
    from agents.checkpoint import load_policy
    from export.situations import sample_records

    rules = Rules.preset(preset).replace(**changes)
    ladder = "two_player" if rules.num_players == 2 else "classic"
    obs, mask = seat_record.encode(sample_records(rules, 40, seed=2))
    for name in ("easy", "normal", "hard", "strong"):
        agent = make(f"level:{name}", rules=rules)
        files = level_files(ladder, name)  # the family's network last
        path = next(f for f in files if f.name == strong) if name == "strong" else files[-1]
        expected = load_policy(path, rules=rules).act(obs, mask)
        assert np.array_equal(agent.act(obs, mask), expected), name
        assert agent.name == f"level:{name}"


def test_level_specs_refuse_unknown_levels_and_rules_outside_every_family_naming_the_option():
    with pytest.raises(AgentSpecError, match="level:NAME takes one of easy, normal, hard, strong"):
        make("level:expert")
    with pytest.raises(AgentSpecError, match=r"^level:easy has no network for these rules: target_score 200 is not "
                                             r"among the values it covers: 100, 50, 150$"):
        make("level:easy", rules=Rules.preset("quick").replace(target_score=200))
    with pytest.raises(AgentSpecError, match=r"^level:strong has no network for these rules: pass_count 2 is not "
                                             r"among the values it covers: 3$"):
        make("level:strong", rules=Rules.preset("two_player").replace(pass_count=2, pass_cycle=["left"]))


def test_hearts_serve_offers_the_levels(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from export.situations import sample_records
    from hearts_app.serve.app import create_app
    from hearts_app.commands.serve import default_agents

    levels = [spec for spec in default_agents() if spec.startswith("level:")]
    assert levels == ["level:easy", "level:normal", "level:hard", "level:strong"]
    record = sample_records(Rules.preset("two_player"), 1, seed=3)[0]
    with TestClient(create_app(levels, tmp_path)) as client:
        listed = {a["spec"]: a for a in client.get("/api/v1/agents").json()["agents"]}
        assert set(listed["level:easy"]["presets"]) == {"classic", "quick", "long", "two_player"}
        for preset, rules in (("quick", {"moon": "subtract_from_self", "jack_of_diamonds_bonus": True}),
                              ("two_player", {"moon": "off", "queen_breaks_hearts": True})):
            players = 4 if preset == "quick" else 2
            opponents = ["level:easy", "level:hard", "level:strong"][:players - 1]
            made = client.post("/api/v1/games", json={"preset": preset, "rules": rules, "opponents": opponents})
            assert made.status_code == 201, made.text
            assert all(made.json()["rules"][key] == value for key, value in rules.items())
        refused = client.post("/api/v1/games", json={"preset": "classic", "rules": {"pass_count": 2},
                                                     "opponents": ["level:easy"] * 3})
        assert refused.status_code == 422
        assert refused.json()["detail"] == ("opponents: level:easy has no network for these rules: pass_count 2 is "
                                            "not among the values it covers: 3")
        answer = client.post("/api/v1/act", json={"agent": "level:hard", "record": record}).json()
        obs, mask = seat_record.encode([record])
        assert answer["action"] == int(make("level:hard", rules=Rules.preset("two_player")).act(obs, mask)[0])


def test_the_panel_measures_every_level_and_bot_at_each_rule_set(tiny_ladder, exported_ladder):
    from export.panel import PANELS, PanelRules, measure_panel, panel_table

    out, _ = exported_ladder
    rule_sets = [PanelRules("classic", CLASSIC), PanelRules("classic games", CLASSIC, episode="game")]
    panel = measure_panel(tiny_ladder, out, deals=4, games=2, rule_sets=rule_sets, log=lambda line: None)
    hand, games = panel["rule_sets"]
    assert hand["deals"] == 4 and games["games"] == 2 and games["episode"] == "game"
    easy = hand["levels"]["easy"]
    assert set(easy) == {"points_per_hand", "minus_bot", "agreement"} and 0 <= easy["agreement"] <= 1
    assert "agreement" not in games["levels"]["easy"]  # measured on hands only
    assert hand["levels"]["strong"]["step"]["below"] == "easy" and hand["strong_minus_hard"] is None
    table = panel_table(panel)
    assert table.count("\n") == 4 and "easy agreement" in table.splitlines()[0]
    # The shipped panels: every option of the family one at a time, the unseen combinations, both targets.
    labels = [entry.label for entry in PANELS["classic"]]
    assert [entry.unseen for entry in PANELS["classic"]].count(True) == 2 and labels[0] == "classic"
    assert {e.rules.target_score for e in PANELS["classic"] if e.episode == "game"} == {50, 150}
