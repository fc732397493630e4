"""Training recipes (``hearts recipe``): config validation, refusing a changed recipe by name, and
the smoke recipe end to end, killed in the middle and run again."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from agents import make
from tests.commands import ROOT, hearts
from train.config import ConfigError
from train.recipe import Recipe, load_recipe, recipe_changes

RECIPES = ROOT / "configs" / "recipes"
SMOKE = RECIPES / "smoke.yaml"
CLASSIC_POLICY = ROOT / "agents" / "policies" / "ppo_classic.pt"


def load_shipped(path: Path, tmp_path: Path):
    """A shipped recipe; one that starts from a policy outside the repository (runs/round16.pt)
    is loaded with the shipped classic policy in its place."""
    text = path.read_text()
    start = next((line.split(":", 1)[1].split("#")[0].strip() for line in text.splitlines() if line.startswith("start:")),
                 None)
    if start is None or (path.parent / start).is_file():  # none, or a shipped policy
        return load_recipe(path)
    copy = tmp_path / path.name
    copy.write_text("\n".join(f"start: {CLASSIC_POLICY}" if line.startswith("start:") else line
                               for line in text.splitlines()))
    return load_recipe(copy)


def test_shipped_recipes_validate(tmp_path):
    recipes = {path.name: load_shipped(path, tmp_path) for path in sorted(RECIPES.glob("*.yaml"))}
    steps = {name: [key for key, _, _ in Recipe(recipe, RECIPES, runs_dir="unused").steps()]
             for name, recipe in recipes.items()}
    assert steps["smoke.yaml"] == ["selfplay", "vs_hard", "value", "improve/round1", "improve/round2", "improve/round3",
                                   "improve/round4"]
    assert len(steps["classic.yaml"]) == 2 + 19  # two PPO stages, nineteen improvement rounds
    assert steps["two_player.yaml"] == ["selfplay"]
    # The last rounds' recipe reruns the classic recipe's rounds 17 to 19 as they are there.
    assert steps["classic_last_rounds.yaml"] == ["improve/round1", "improve/round2", "improve/round3"]
    assert recipes["classic_last_rounds.yaml"].stages[0].rounds == recipes["classic.yaml"].stages[2].rounds[16:]
    # The value search's rounds: two at its 16 deals, one at 48, each fit streamed.
    value_rounds = recipes["classic_value_rounds.yaml"].stages[0].rounds
    assert [(r.teacher, r.determinizations) for r in value_rounds] == [("expert-value", 16)] * 2 + [("expert-value", 48)]
    assert all(r.shards_in_memory == 64 for r in value_rounds)
    # The moon-off network's rounds start from the shipped PPO network and declare the moon-off rule
    # sets where J♦ scores nothing.
    moon_off = recipes["classic_strong_moon_off.yaml"]
    assert len(steps["classic_strong_moon_off.yaml"]) == 10
    assert moon_off.start.endswith("agents/policies/levels/classic_strong_moon_off_ppo.pt")
    assert moon_off.rule_space_value.fields["jack_of_diamonds_bonus"] == (False,)
    two_moon_off = recipes["two_player_strong_moon_off.yaml"]
    assert len(steps["two_player_strong_moon_off.yaml"]) == 10
    assert two_moon_off.start.endswith("agents/policies/levels/two_player_strong_moon_off_ppo.pt")


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text.replace("SMOKE_CONFIG", str(ROOT / "configs" / "smoke.yaml")))
    return path


GOOD = """
name: r
stages:
  - {kind: ppo, name: a, config: SMOKE_CONFIG, budgets: [100]}
  - {kind: improve, name: b, rounds: [{collections: [{seed: 1, hands: 4}], temperature: 0.5}]}
"""


@pytest.mark.parametrize("edit, words", [
    (("name: r", "name: ../r"), "name: must be a plain folder name"),
    (("budgets: [100]", "budgets: [100, 50]"), "budgets must be positive and increasing"),
    (("temperature: 0.5", "temperature: 0"), "temperature"),
    (("kind: improve", "kind: imitate"), "stages.1"),
    (("name: b", "name: a"), "used twice: a"),
    (("hands: 4", "hand: 4"), "hand: unknown setting"),
    (("budgets: [100]}", "budgets: [100], set: {learning_rat: 1}}"), "stage a .*learning_rat: unknown setting"),
    (("config: SMOKE_CONFIG", "config: missing.yaml"), "missing.yaml"),
    (("name: r", "name: r\nrules: two_player"), "stage a: its config .* plays other rules"),
    (("name: r", "name: r\nevaluation: {opponents: [easy], deals: 0}"), "evaluation.deals"),
    (("name: r", "name: r\nevaluation: {opponents: [nosuchbot]}"), "evaluation.opponents: .*nosuchbot"),
    (("name: r", "name: r\nrule_space: {family: classic, fields: {moon: [\"off\"]}}"),
     "rule_space does not cover the recipe's rules: moon \"add_to_others\" is not among"),
    (("name: r", "name: r\nrule_space: {family: hearts}"), "rule_space: .*unknown rule family"),
    (("temperature: 0.5", "temperature: 0.5, opponent: hardd"), "rounds.0.opponent: .*hardd"),
    (("budgets: [100]}", "budgets: [100], set: {eval_opponents: [hardd]}}"), "eval_opponents: .*hardd"),
    (("{seed: 1, hands: 4}", "{seed: 1, hands: 4}, {seed: 1, hands: 8}"), "its own seed"),
    (("name: b", "name: evaluation"), "the recipe's folder uses this name"),
    (("temperature: 0.5", "temperature: 0.5, opponent: search"), "a search player"),
    (("temperature: 0.5", "temperature: 0.5, opponent: 'hard,,easy'"), "separated by commas"),
    (("temperature: 0.5", "temperature: 0.5, opponent: 'hard,expert'"), "'expert' is a search player"),
    (("temperature: 0.5", "temperature: 0.5, teacher: search"), "teacher"),
    (("temperature: 0.5", "temperature: 0.5, teacher: expert, card_labels: false"), "expert teacher labels card plays only"),
    (("temperature: 0.5", "temperature: 0.5, teacher: expert, margin: -1"), "margin"),
    (("temperature: 0.5", "temperature: 0.5, shards_in_memory: 0"), "shards_in_memory"),
    (("  - {kind: improve", "  - {kind: value, name: v, players: 'hard,nobody'}\n  - {kind: improve"),
     "stages.v.players: .*nobody"),
    (("  - {kind: improve", "  - {kind: value, name: v, players: 'hard,expert'}\n  - {kind: improve"),
     "stages.v.players: 'expert' is a search player"),
    (("  - {kind: improve", "  - {kind: value, name: v, hands: 0}\n  - {kind: improve"), "hands"),
    (("  - {kind: improve", "  - {kind: value, name: v, players: 'hard,,easy'}\n  - {kind: improve"),
     "stages.v.players: .*separated by commas"),
])
def test_bad_recipes_are_refused_by_name(tmp_path, edit, words):
    load_recipe(write(tmp_path, GOOD))
    with pytest.raises(ConfigError, match=words):
        load_recipe(write(tmp_path, GOOD.replace(*edit)))


def test_an_improve_stage_first_is_refused(tmp_path):
    text = GOOD.replace("  - {kind: ppo, name: a, config: SMOKE_CONFIG, budgets: [100]}\n", "")
    with pytest.raises(ConfigError, match="first stage that makes a policy must be a ppo stage.*start: PATH"):
        load_recipe(write(tmp_path, text))


@pytest.mark.parametrize("start, words", [
    ("nope.pt", "start: policy file not found: .*nope.pt"),
    ("bad.pt", "start: .*bad.pt"),
    (str(ROOT / "agents" / "policies" / "ppo_two_player.pt"), "start: .*ppo_two_player.pt.*two_player"),
])
def test_a_bad_start_policy_is_refused_before_any_work(tmp_path, start, words):
    (tmp_path / "bad.pt").write_text("not a checkpoint")
    with pytest.raises(ConfigError, match=words):
        load_recipe(write(tmp_path, GOOD.replace("name: r", f"name: r\nstart: {start}")))


def test_a_recipe_with_a_start_policy_begins_from_it(tmp_path):
    """An improve stage may come first when the recipe names a start policy: its first round
    collects that policy's decisions and fits from its weights."""
    import torch

    shutil.copyfile(CLASSIC_POLICY, tmp_path / "start.pt")
    text = ("name: s\nstart: start.pt\nstages:\n"
            "  - {kind: improve, name: b, rounds: [{collections: [{seed: 1, hands: 4}], tables: 4, "
            "temperature: 0.5, epochs: 1, batch_size: 64}]}\n")
    recipe = Recipe(load_recipe(write(tmp_path, text)), tmp_path, tmp_path / "runs", workers=1, progress=False,
                    log=lambda message: None)
    summary = recipe.run()
    assert list(summary["steps"]) == ["b/round1"]
    folder = tmp_path / "runs" / "s" / "b" / "round1"
    assert json.loads((folder / "round.json").read_text())["student"] == str((tmp_path / "start.pt").resolve())
    before = torch.load(tmp_path / "start.pt", weights_only=True)["model"]
    after = torch.load(folder / "policy.pt", weights_only=True)["model"]
    moved = [float((after[k] - before[k]).norm() / before[k].norm()) for k in before if before[k].norm() > 0]
    assert 0 < max(moved) < 0.1  # fitted from the start policy's weights: changed, and not by much
    # Another start policy once a step has finished is another recipe: refused by name.
    shutil.copyfile(CLASSIC_POLICY, tmp_path / "other.pt")
    with pytest.raises(ConfigError, match="start: 'start.pt' -> 'other.pt'"):
        Recipe(load_recipe(write(tmp_path, text.replace("start.pt", "other.pt"))), tmp_path, tmp_path / "runs")


def test_a_started_recipe_keeps_its_finished_steps(tmp_path):
    started = load_recipe(write(tmp_path, GOOD)).model_dump()
    grown = GOOD + "  - {kind: ppo, name: c, config: SMOKE_CONFIG, budgets: [200]}\n"
    both = {"a", "b/round1"}
    assert recipe_changes(started, load_recipe(write(tmp_path, grown)).model_dump(), both) == []
    changed = load_recipe(write(tmp_path, GOOD.replace("temperature: 0.5", "temperature: 0.25"))).model_dump()
    assert any("b/round1" in change and "0.25" in change for change in recipe_changes(started, changed, both))
    assert recipe_changes(started, changed, {"a"}) == []  # a step not yet finished may change
    # A round saved before its later settings existed (here: the teacher's) reads as their defaults.
    older = json.loads(json.dumps(started))
    for setting in ("teacher", "determinizations", "margin"):
        del older["stages"][1]["rounds"][0][setting]
    assert recipe_changes(older, started, both) == []
    other_deals = {**started, "evaluation": {**started["evaluation"], "deals": 10}}
    assert recipe_changes(started, other_deals, set()) == [] and recipe_changes(started, other_deals, {"a"})
    # The folder of a started recipe refuses a config that changes a finished step, naming it.
    (tmp_path / "runs" / "r").mkdir(parents=True)
    (tmp_path / "runs" / "r" / "recipe.json").write_text(
        json.dumps({"config": started, "steps": {key: {} for key in both}}))
    with pytest.raises(ConfigError, match="another config: step 2 \\(b/round1\\)"):
        Recipe(load_recipe(write(tmp_path, GOOD.replace("hands: 4", "hands: 8"))), tmp_path, tmp_path / "runs")
    Recipe(load_recipe(write(tmp_path, grown)), tmp_path, tmp_path / "runs")  # growth is fine
    (tmp_path / "runs" / "r" / "recipe.json").write_text("{not json")
    with pytest.raises(ConfigError, match="is not a recipe's state"):
        Recipe(load_recipe(write(tmp_path, GOOD)), tmp_path, tmp_path / "runs")


def test_a_round_changed_after_a_kill_starts_afresh(tmp_path, monkeypatch):
    """A round interrupted after its collection and then changed does not fit the old shards."""
    import train.distill

    tiny = GOOD.replace("budgets: [100]}", "budgets: [100], set: {num_tables: 16, imitation: {teacher: null}, "
                                           "eval_every: 0}}").replace("temperature: 0.5", "temperature: 0.5, tables: 4")
    fit = train.distill.fit

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    logged = []
    recipe = lambda text: Recipe(load_recipe(write(tmp_path, text)), tmp_path, tmp_path / "runs",  # noqa: E731
                                 workers=1, progress=False, log=logged.append)
    monkeypatch.setattr(train.distill, "fit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        recipe(tiny).run()
    shards = tmp_path / "runs" / "r" / "b" / "round1" / "data"
    assert len(list(shards.glob("shard_1_*.npz"))) == 1
    monkeypatch.setattr(train.distill, "fit", fit)
    summary = recipe(tiny.replace("seed: 1, hands: 4", "seed: 7, hands: 4")).run()
    assert any("starting it afresh" in line for line in logged)
    assert list(summary["steps"]) == ["a", "b/round1"]
    assert '"seed": 7' in (tmp_path / "runs" / "r" / "b" / "round1" / "round.json").read_text()


def test_recipe_command_errors_are_one_line(tmp_path):
    result = hearts("recipe", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "recipe not found" in result.stderr
    result = hearts("recipe", str(write(tmp_path, GOOD.replace("hands: 4", "hand: 4"))))
    assert result.returncode == 2 and "hand: unknown setting" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_smoke_recipe_killed_in_the_middle_resumes_without_redoing_finished_steps(tmp_path):
    """The smoke recipe (every stage kind) killed during its second stage, then run again: it
    finishes every step, the first stage's policy untouched, and writes an evaluated policy."""
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "hearts_app.cli", "recipe", str(SMOKE), "--runs-dir", str(runs), "--workers", "1",
               "--no-progress"]
    log = runs / "recipe_smoke" / "recipe.log"
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (log.is_file() and "step 2/7" in log.read_text()):
            assert child.poll() is None and time.monotonic() < deadline, "the recipe did not reach its second step"
            time.sleep(0.2)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    first_policy = runs / "recipe_smoke" / "selfplay" / "policy.pt"
    stamp = first_policy.stat().st_mtime_ns
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    assert list(summary["steps"]) == ["selfplay", "vs_hard", "value", "improve/round1", "improve/round2",
                                      "improve/round3", "improve/round4"]
    assert first_policy.stat().st_mtime_ns == stamp
    assert log.read_text().count("step 1/7: selfplay") == 1  # not run again
    # The value stage trains a value model and leaves the policy (and its evaluation) as it was.
    assert (runs / "recipe_smoke" / "value" / "value.pt").is_file()
    assert summary["steps"]["value"]["evaluation"] == {}
    for key, step in summary["steps"].items():
        if key == "value":
            continue
        assert set(step["evaluation"]) == {"random", "easy", "normal", "hard"}
        means = [points["mean"] for points in step["evaluation"].values()]
        assert step["panel_score"] == pytest.approx(sum(means) / 4, abs=1e-3)
    assert not (runs / "recipe_smoke" / "improve" / "round1" / "data").exists()  # shards removed after the fit
    agent = make(f"ckpt:{summary['policy']}")
    assert agent is not None
    # Each round fitted by its loss: the expert-value teacher's labels by imitation (its default), the
    # expert's by the improvement, as its config says; the last round's labels valued by the stage's model.
    from agents.checkpoint import load_net

    _, meta = load_net(summary["policy"])
    lineage = meta["distilled"]
    assert [lineage["loss"], lineage["after"]["loss"], lineage["after"]["after"]["loss"],
            lineage["after"]["after"]["after"]["loss"]] == ["imitation", "improvement", "improvement", "improvement"]
    identity = json.loads((runs / "recipe_smoke" / "improve" / "round4" / "round.json").read_text())
    assert identity["value"] == str(runs / "recipe_smoke" / "value" / "value.pt")
    assert list((runs / "recipe_smoke" / "evaluation").glob("events.out.tfevents.*"))


def test_collections_run_elsewhere_write_the_shards_a_local_collection_writes(tmp_path):
    """With ``map_jobs`` (Ray's, on a cluster) each collection runs on another machine with its files
    shipped (here: copied to other paths) and its shards come back to the round's folder, the same
    bytes as collected here."""
    import tempfile

    shutil.copyfile(CLASSIC_POLICY, tmp_path / "start.pt")
    text = ("name: s\nstart: start.pt\nstages:\n"
            "  - {kind: improve, name: b, rounds: [{collections: [{seed: 1, hands: 4}, {seed: 2, hands: 4}], "
            "tables: 4, temperature: 0.5, epochs: 1, batch_size: 64, keep_data: true}]}\n")
    shipped = []

    def elsewhere(function, jobs, files):
        with tempfile.TemporaryDirectory() as node:  # the files at other paths, as on another node
            local = {path: shutil.copyfile(path, Path(node) / f"file{i}") for i, path in enumerate(files)}
            shipped.extend(files)
            for i, job in enumerate(jobs):
                yield i, function(job, {path: str(copy) for path, copy in local.items()}), "node"

    def shards(runs, **options):
        Recipe(load_recipe(write(tmp_path, text)), tmp_path, runs, workers=1, progress=False,
               log=lambda message: None, **options).run()
        data = runs / "s" / "b" / "round1" / "data"
        return {path.name: path.read_bytes() for path in sorted(data.glob("shard_*.npz"))}

    here, there = shards(tmp_path / "here"), shards(tmp_path / "there", map_jobs=elsewhere)
    assert shipped == [str((tmp_path / "start.pt").resolve())]
    assert list(here) == list(there) and len(here) >= 2
    assert here == there
