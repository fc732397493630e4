"""Bad values given to the ``hearts`` subcommands are refused in one line (exit 2) before any work
starts, where a late failure would throw away the work (an arena's games, a fit's weights) or
leave a half-made folder behind."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from hearts_app import cli

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "smoke.yaml"
POLICY = ROOT / "agents" / "policies" / "ppo_classic.pt"


def refused(argv, capsys) -> str:
    """The one-line error of a command that exits 2 (argparse's exit or the command's own)."""
    try:
        code = cli.main(argv)
    except SystemExit as exit_info:
        code = exit_info.code
    assert code == 2, argv
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err.splitlines()[-1]


@pytest.mark.parametrize("options, message", [
    (["--deals", "0"], "--deals: must be 1 or more, got 0"),
    (["--workers", "0"], "--workers: must be 1 or more, got 0"),
    (["--seed", "-1"], "--seed: a seed is 0 to 2**63 - 1, got -1"),
    (["--seed", str(2**70)], "a seed is 0 to 2**63 - 1"),
    (["--half-width", "0"], "--half-width: must be a number above 0"),
    (["--half-width", "nan"], "--half-width: must be a number above 0"),
    (["--deals", "1000000000"], "--deals: must be at most 1,000,000, got 1000000000"),
])
def test_arena_refuses_bad_numbers_before_playing(options, message, capsys):
    assert message in refused(["arena", "hard", "--no-progress"] + options, capsys)


def test_arena_refuses_places_it_cannot_write_before_playing(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert "--out" in refused(["arena", "hard", "--deals", "2", "--out", str(afile)], capsys)
    assert "--resume-dir" in refused(["arena", "hard", "--deals", "2", "--resume-dir", str(afile)], capsys)
    assert "is a folder" in refused(["arena", "hard", "--deals", "2", "--records", str(tmp_path)], capsys)


def test_arena_saves_no_deal_set_when_it_refuses_the_agents(tmp_path, capsys):
    saved = tmp_path / "deals.npz"
    assert "unknown agent spec" in refused(["arena", "random", "nobody", "--deals", "2", "--workers", "1",
                                            "--save-deal-set", str(saved), "--no-progress"], capsys)
    assert not saved.exists()
    (tmp_path / "folder.npz").mkdir()
    assert "is a folder" in refused(["arena", "random", "--deals", "2", "--save-deal-set",
                                     str(tmp_path / "folder.npz")], capsys)


def test_arena_refuses_zero_deals_of_a_deal_set(tmp_path, capsys):
    deal_set = tmp_path / "d4.npz"
    assert cli.main(["arena", "random", "--vs", "random", "--deals", "4", "--save-deal-set", str(deal_set),
                     "--no-progress", "--workers", "1"]) == 0
    capsys.readouterr()
    for deals in ("0", "-1"):  # -1 would slice one deal off the end
        assert "--deals: must be 1 or more" in refused(["arena", "hard", "--deal-set", str(deal_set),
                                                        "--deals", deals], capsys)


@pytest.mark.parametrize("options, message", [
    (["--batch-sizes", "4,x"], "--batch-sizes: must be a whole number, got 'x'"),
    (["--batch-sizes", ""], "--batch-sizes: give whole numbers separated by commas"),
    (["--batch-sizes", "0"], "--batch-sizes: must be 1 or more, got 0"),
    (["--seconds", "nan"], "--seconds: must be a number above 0"),
    (["--seconds", "0"], "--seconds: must be a number above 0"),
    (["--agents", "bogus"], "--agents: "),
    (["--batch-sizes", "1,100000000000"], "--batch-sizes: must be at most 16,384, got 1,100000000000"),
    (["--seconds", "1e308"], "--seconds: must be at most 3,600 s, got 1e308"),
])
def test_bench_refuses_bad_options(options, message, capsys):
    assert message in refused(["bench", "--no-open-spiel", "--no-envs"] + options, capsys)


def test_demo_refuses_a_negative_seed(capsys):
    assert "--seed: a seed is 0" in refused(["demo", "--no-bench", "--seed", "-1"], capsys)


@pytest.mark.parametrize("argv, message", [
    (["play", "--hands", "0"], "hearts play: error: argument --hands: must be 1 or more, got 0"),
    (["play", "--hands", "x"], "hearts play: error: argument --hands: must be a whole number, got 'x'"),
    (["play", "--seed", "-1"], "hearts play: error: argument --seed: a seed is 0 to 2**63 - 1, got -1"),
    (["export", "c.pt", "--out", "exported", "--golden", "-1"],
     "hearts export: error: argument --golden: must be 0 or more, got -1"),
    (["export", "--ladder", "classic", "--out", "exported", "--measure", "--seed", str(2**63)],
     f"hearts export: error: argument --seed: a seed is 0 to 2**63 - 1, got {2**63}"),
])
def test_play_and_export_refuse_bad_numbers_before_any_work(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert refused(argv, capsys) == message
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("override, message", [
    ("hidden=[0]", "hidden.0"),
    ("seed=-1", "seed"),
    ("seed=1e30", "seed"),
    ("league.bots={easy: -1}", "league.bots.easy"),
    ("league.min_learners=9", "league.min_learners is 9"),
    ("num_tables=1e12", "num_tables: Input should be less than or equal to 16384"),
    ("hidden=[100000000]", "hidden.0: Input should be less than or equal to 8192"),
    ("total_decisions=1e30", "total_decisions: Input should be less than or equal to 10000000000"),
    ("update_epochs=1e12", "update_epochs: Input should be less than or equal to 1000"),
    ("imitation.decisions=1e30", "imitation.decisions: Input should be less than or equal to 10000000000"),
    ("learning_rate=1e308", "learning_rate: Input should be less than or equal to 1"),
])
def test_train_refuses_bad_settings_before_making_the_run_folder(override, message, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert message in refused(["train", str(SMOKE), override, "--runs-dir", str(runs), "--no-progress"], capsys)
    assert not runs.exists()


@pytest.mark.parametrize("where", ["--device", "device="])
@pytest.mark.parametrize("device", ["cuda", "cuda:9", "gpu", "CPU:x"])
def test_train_refuses_a_device_this_machine_lacks_in_one_line_naming_those_it_has(device, where, tmp_path, capsys):
    import torch

    from train.ppo import available_devices

    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    runs = tmp_path / "runs"
    given = ["--device", device] if where == "--device" else [f"device={device}"]
    line = refused(["train", str(SMOKE), *given, "--runs-dir", str(runs), "--no-progress"], capsys)
    assert f"device '{device}' is not on this machine" in line
    assert f"the devices here are auto, {', '.join(available_devices())}" in line
    assert not runs.exists()


def test_a_training_that_diverges_stops_in_one_line(tmp_path, monkeypatch, capsys):
    # Weights gone NaN are refused by the checkpoint writer (agents/checkpoint.py): said in one line.
    from agents.checkpoint import CheckpointError
    from train import ppo

    def diverge(run):
        raise CheckpointError(f"refusing to write {run.dir}/checkpoints/latest.pt: trunk.0.weight holds NaN")

    monkeypatch.setattr(ppo.Run, "train", diverge)
    code = cli.main(["train", str(SMOKE), "--runs-dir", str(tmp_path / "runs"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("hearts train: refusing to write "), err[-500:]


@pytest.mark.parametrize("key, value, says", [
    ("learner_decisions", {"a": 1}, "its learner_decisions is {'a': 1}, not a count"),
    ("iteration", -3, "its iteration is -3, not a count"),
    ("snapshots", ["../../../etc/passwd"], "not names of snapshot files of its folder"),
    ("config", [1], "it holds no config"),
], ids=["counter-object", "negative", "snapshot-outside", "config-list"])
def test_train_resume_refuses_a_checkpoint_whose_run_state_is_none(tmp_path, capsys, key, value, says):
    import torch

    runs = tmp_path / "runs"
    tiny = ["total_decisions=256", "num_tables=8", "hidden=[8]", "minibatch_size=64", "eval_every=0",
            "imitation.teacher=null", "run_name=tiny", "--runs-dir", str(runs), "--no-progress"]
    assert cli.main(["train", str(SMOKE), *tiny]) == 0
    latest = runs / "tiny" / "checkpoints" / "latest.pt"
    payload = torch.load(latest, weights_only=True)
    payload["meta"] = json.dumps({**json.loads(payload["meta"]), key: value})
    torch.save(payload, latest)
    capsys.readouterr()
    line = refused(["train", str(SMOKE), *tiny, "--resume"], capsys)
    assert "is not a checkpoint of a run" in line and says in line, line


def test_train_refuses_league_weights_that_seat_nobody(tmp_path, capsys):
    line = refused(["train", str(SMOKE), "league.current=0", "league.bots={}", "--runs-dir", str(tmp_path / "r")],
                   capsys)
    assert "nobody can fill" in line


def test_train_and_recipe_refuse_a_runs_dir_that_is_a_file(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert "--runs-dir" in refused(["train", str(SMOKE), "--runs-dir", str(afile)], capsys)
    recipe = ROOT / "configs" / "recipes" / "smoke.yaml"
    assert "--runs-dir" in refused(["recipe", str(recipe), "--runs-dir", str(afile)], capsys)


@pytest.mark.parametrize("path, value, says", [
    (("stages", 3, "rounds", 0, "collections", 0, "hands"), 10**12, "hands: Input should be less than or equal to"),
    (("stages", 3, "rounds", 0, "tables"), 10**12, "tables: Input should be less than or equal to 16384"),
    (("stages", 2, "hidden"), [10**9], "hidden.0: Input should be less than or equal to 8192"),
    (("evaluation", "deals"), 10**12, "deals: Input should be less than or equal to 1000000"),
], ids=["hands", "tables", "hidden", "deals"])
def test_recipe_refuses_sizes_that_would_not_end_before_its_first_step(tmp_path, capsys, path, value, says):
    import yaml

    recipe = yaml.safe_load((ROOT / "configs" / "recipes" / "smoke.yaml").read_text())
    node = recipe
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (tmp_path / "smoke.yaml").write_text((ROOT / "configs" / "smoke.yaml").read_text())
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "r.yaml").write_text(yaml.safe_dump(recipe))
    assert says in refused(["recipe", str(tmp_path / "recipes" / "r.yaml"), "--runs-dir", str(tmp_path / "runs")],
                           capsys)
    assert not (tmp_path / "runs").exists()


def test_settings_named_by_numbers_are_refused(tmp_path, capsys):
    config = tmp_path / "intkey.yaml"
    config.write_text("1: 2\nrun_name: x\n")
    assert "named by text, got [1]" in refused(["train", str(config)], capsys)
    assert "named by text, got [1]" in refused(["recipe", str(config)], capsys)


def test_recipe_refuses_a_round_that_labels_nothing():
    from pydantic import ValidationError

    from train.recipe_config import Round

    fields = {"collections": [{"seed": 1, "hands": 16}], "temperature": 0.5}
    assert Round(**fields, pass_labels=False).card_labels  # either alone is a round
    with pytest.raises(ValidationError, match="would label nothing"):
        Round(**fields, pass_labels=False, card_labels=False)


def test_distill_fit_refuses_an_out_it_cannot_write_before_fitting(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    for out, message in ((tmp_path, "is a folder"), (afile / "x.pt", "cannot write")):
        assert message in refused(["distill", "fit", str(POLICY), "--data", str(tmp_path / "none"),
                                   "--out", str(out)], capsys)


@pytest.mark.parametrize("command", ["belief", "value"])
@pytest.mark.parametrize("options, message", [
    (["--hands", "1000000000000"], "argument --hands: must be at most 100,000,000, got 1000000000000"),
    (["--epochs", "1000000000"], "argument --epochs: must be at most 1,000, got 1000000000"),
    (["--epochs", "0"], "argument --epochs: must be 1 or more, got 0"),
    (["--hidden", "8", "0"], "argument --hidden: must be 1 or more, got 0"),
    (["--hidden", "100000000"], "argument --hidden: must be at most 8,192 units, got 100000000"),
    (["--hidden", *["8"] * 17], "--hidden takes at most 16 layers, got 17"),
])
def test_model_fits_refuse_sizes_that_would_not_end_before_playing(command, options, message, tmp_path, capsys):
    out = tmp_path / "model.pt"
    assert message in refused([command, str(out), "--hands", "8", *options], capsys)
    assert not out.exists()


@pytest.mark.parametrize("options, message", [
    (["--hands", "1000000000000"], "argument --hands: must be at most 100,000,000"),
    (["--hands", "9" * 400], "argument --hands: must be at most 100,000,000, got 99999999999999999999... "
                             "(400 characters)"),
    (["--hands", "0"], "argument --hands: must be 1 or more, got 0"),
    (["--tables", "4272608121459"], "argument --tables: must be at most 16,384"),
    (["--determinizations", "1000000000"], "argument --determinizations: must be at most 4,096"),
    (["--determinizations", "-2"], "argument --determinizations: must be 1 or more, got -2"),
])
def test_distill_collect_refuses_sizes_beyond_its_bounds_before_collecting(options, message, tmp_path, capsys):
    assert message in refused(["distill", "collect", str(POLICY), "--out", str(tmp_path / "shards"), *options],
                              capsys)
    assert not (tmp_path / "shards").exists()


@pytest.mark.parametrize("options, message", [
    (["--epochs", "1000000000"], "argument --epochs: must be at most 1,000"),
    (["--hidden", "100000000"], "argument --hidden: must be at most 8,192 units, got 100000000"),
    (["--hidden", *["8"] * 17], "--hidden takes at most 16 layers, got 17"),
    (["--hidden", "0"], "argument --hidden: must be 1 or more, got 0"),
    (["--card-scorer", "1000000000000"], "argument --card-scorer: must be at most 8,192 units"),
    (["--learning-rate", "1e308"], "argument --learning-rate: must be at most 1, got 1e308"),
    (["--batch-size", "0"], "argument --batch-size: must be 1 or more, got 0"),
    (["--shards-in-memory", "0"], "argument --shards-in-memory: must be 1 or more, got 0"),
    (["--margin", "-0.5"], "argument --margin: must be a number, 0 or more, got '-0.5'"),
])
def test_distill_fit_refuses_sizes_beyond_its_bounds_before_fitting(options, message, tmp_path, capsys):
    assert message in refused(["distill", "fit", str(POLICY), "--data", str(tmp_path), "--out",
                               str(tmp_path / "f.pt"), *options], capsys)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_folder_where_nothing_can_be_made_is_refused_before_the_work(tmp_path, capsys):
    # /proc holds no files: as root os.access says it may be written, so the check makes (and removes) a folder.
    assert "cannot write" in refused(["belief", "/proc/hearts-test/b.pt", "--hands", "8"], capsys)
    assert "--runs-dir" in refused(["train", str(SMOKE), "--runs-dir", "/proc/hearts-test/runs"], capsys)
    assert "--out" in refused(["distill", "collect", str(POLICY), "--out", "/proc/hearts-test/shards",
                               "--hands", "4"], capsys)
    assert not Path("/proc/hearts-test").exists() and not list(tmp_path.iterdir())


def test_export_refuses_a_measure_of_one_deal_before_exporting(tmp_path, capsys):
    # One deal has no spread: its interval would be undefined (found after the whole ladder was exported).
    out = tmp_path / "levels"
    assert "--deals must be 2 or more" in refused(["export", "--ladder", "classic", "--out", str(out), "--measure",
                                                    "--deals", "1"], capsys)
    assert "--games must be 2 or more" in refused(["export", "--ladder", "classic", "--out", str(out), "--panel",
                                                    "--deals", "2", "--games", "1"], capsys)
    assert not out.exists()


def test_play_refuses_a_save_file_it_cannot_write_before_the_game(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # (a game that started would end at once)
    folder = tmp_path / "games"
    folder.mkdir()
    assert cli.main(["play", "--no-color", "--opponents", "random", "--save", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hearts play: error: ") and "is a folder" in err and "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games"] and not list(folder.iterdir())


@pytest.mark.parametrize("argv", [
    ["replay", "{long}"], ["arena", "random", "--rules", "{long}"], ["arena", "ckpt:{long}"], ["train", "{long}"],
    ["recipe", "{long}"], ["belief", "{long}", "--hands", "8"], ["play", "--save", "{long}"],
    ["arena", "random", "--deals", "1", "--out", "{long}"],
], ids=lambda argv: " ".join(argv[:2]))
def test_a_file_name_longer_than_the_system_takes_is_refused_in_one_line(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    long = "x" * 300  # a file name has at most 255 bytes: the system refuses even to look for it
    line = refused([word.replace("{long}", long) for word in argv], capsys)
    assert line == f"hearts: error: {long[:40]}... (300 characters): File name too long", line
    assert not list(tmp_path.iterdir())


def test_distill_fit_names_a_damaged_shard(tmp_path, capsys):
    from train.distill import SHARD_ARRAYS

    data = tmp_path / "data"
    data.mkdir()
    (data / "shard_1_0000.npz").write_bytes(b"PK\x03\x04 not a whole zip")
    assert "is not a readable shard" in refused(["distill", "fit", str(POLICY), "--data", str(data),
                                                 "--out", str(tmp_path / "f.pt")], capsys)
    arrays = {name: np.zeros((1, 1)) for name in SHARD_ARRAYS}  # every array but the meta
    np.savez(data / "shard_1_0000.npz", **arrays)
    assert "it lacks meta" in refused(["distill", "fit", str(POLICY), "--data", str(data),
                                       "--out", str(tmp_path / "f.pt")], capsys)


def test_replay_refuses_a_deal_seed_that_is_no_seed(tmp_path, capsys):
    from eval import arena
    from eval.deals import DealSet
    from hearts_env import Rules

    rules = Rules.preset("classic")
    path = tmp_path / "arena.jsonl"
    arena.run(arena.head_to_head_plan(rules, ["easy"], "random"), DealSet.generate(rules, 1, seed=3), seed=1,
              workers=1, records=path)
    header, game = path.read_text().splitlines()[:2]
    for seed in ("-1", str(2**64)):
        record = json.loads(game)
        record["deal_seed"] = seed
        path.write_text(header + "\n" + json.dumps(record) + "\n")
        assert cli.main(["replay", str(path)]) == 2
        assert "is not a seed" in capsys.readouterr().err


@pytest.mark.parametrize("game, says", [
    ("0", "must be 1 or more, got 0"), ("x", "must be a whole number, got 'x'"),
    ("9" * 5000, "must be a whole number, got '99999999999999999999'... (5000 characters)"),
])
def test_replay_refuses_a_game_number_that_is_none_in_one_short_line(tmp_path, capsys, game, says):
    line = refused(["replay", str(tmp_path / "any.jsonl"), "--game", game], capsys)
    assert f"argument --game: {says}" in line and len(line) < 200 and "set_int_max_str_digits" not in line


def test_files_may_go_into_folders_the_command_makes(tmp_path, capsys):
    records = tmp_path / "new" / "sub" / "games.jsonl"
    assert cli.main(["arena", "random", "--vs", "random", "--deals", "1", "--workers", "1", "--no-progress",
                     "--records", str(records), "--out", str(tmp_path / "other" / "results")]) == 0
    assert records.is_file() and (tmp_path / "other" / "results" / "results.json").is_file()
    # distill fit's --out too (the check passes; here the missing shards stop it)
    assert "no shard_" in refused(["distill", "fit", str(POLICY), "--data", str(tmp_path / "none"),
                                   "--out", str(tmp_path / "newdir" / "round1.pt")], capsys)
