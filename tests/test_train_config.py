"""What ``hearts train`` accepts before it does any work: the config file, strict setting types,
agent specs, the run's folder name, and what ``--resume`` may change."""

import json
import shutil
from pathlib import Path

import pytest

from hearts_app import cli
from train.config import ConfigError, TrainConfig, load_config

ROOT = Path(__file__).resolve().parent.parent
SMOKE = str(ROOT / "configs" / "smoke.yaml")
#: One PPO iteration of a tiny network, one small evaluation: a finished run in a few seconds.
TINY = ["total_decisions=200", "num_tables=16", "hidden=[8]", "minibatch_size=64", "imitation.teacher=null",
        "eval_every=1", "eval_deals=4", "eval_opponents=[easy]", "checkpoint_every=1", "league.snapshot_every=1"]


@pytest.fixture(autouse=True)
def no_training(request, monkeypatch):
    """A refused command must not train: fail at once if it does (rather than run a long default run).
    Tests that may train ask for ``allow_training``."""
    if "allow_training" not in request.fixturenames:
        from train.ppo import Run

        monkeypatch.setattr(Run, "train", lambda self: pytest.fail("training started"))


def train(capsys, *args: str) -> tuple[int, str, str]:
    """``hearts train ARGS`` in this process: (exit code, stdout, stderr)."""
    try:
        code = cli.main(["train", *args])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *args: str) -> str:
    """The one-line error of a ``hearts train`` the command refuses (exit code 2)."""
    code, _, err = train(capsys, *args)
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


# ---- 1. a config file is required, and must hold settings --------------------------------------

def test_train_without_a_config_is_refused_listing_the_shipped_configs(capsys, tmp_path):
    for args in ([], ["total_decisions=1000"]):
        err = refused(capsys, *args, "--runs-dir", str(tmp_path))
        assert "configs/smoke.yaml" in err and "configs/ppo_classic.yaml" in err, err
        assert "rules/" not in err, err  # rules files are not training configs
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("text", ["", "# only a comment\n", "{}\n"])
def test_an_empty_config_is_refused(capsys, tmp_path, text):
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    err = refused(capsys, str(path), "--runs-dir", str(tmp_path / "runs"))
    assert "empty.yaml" in err and "configs/smoke.yaml" in err, err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("content", [b"\x80\x81\xfe\xff not utf-8", b"\x00\x01\x02binary\x00", bytes(range(256))])
def test_a_binary_or_non_utf8_config_is_one_clear_line(capsys, tmp_path, content):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    err = refused(capsys, str(path), "--runs-dir", str(tmp_path / "runs"))
    assert "bad.yaml" in err, err


# ---- 2. strict types, with whole numbers however they are written ------------------------------

@pytest.mark.parametrize("value", ["1e6", "1_000_000", "1000000", "1.0e6", "1.e6", "1e+6", "1000000.0"])
def test_whole_numbers_are_accepted_for_int_settings(value):
    assert load_config(SMOKE, [f"total_decisions={value}"]).total_decisions == 1_000_000
    assert type(load_config(SMOKE, [f"total_decisions={value}"]).total_decisions) is int


def test_the_example_of_the_help_works_and_python_floats_too(capsys, tmp_path):
    code, out, _ = train(capsys, "--help")
    assert code == 0 and "total_decisions=1e6" in out
    assert load_config(SMOKE, ["total_decisions=1e6", "learning_rate=1e-4"]).learning_rate == 1e-4
    assert TrainConfig(total_decisions=1e6).total_decisions == 1_000_000
    path = tmp_path / "sci.yaml"  # a YAML file: PyYAML reads 1e6 and 3e-4 as strings
    path.write_text("total_decisions: 1e6\nlearning_rate: 3e-4\nhidden: [6.4e1]\nleague: {bots: {easy: 1e-1}}\n")
    config = load_config(path)
    assert (config.total_decisions, config.learning_rate, config.hidden) == (1_000_000, 3e-4, [64])
    assert config.league.bots == {"easy": 0.1}


@pytest.mark.parametrize("override, field", [
    ("total_decisions=1500000.5", "total_decisions"), ("total_decisions=1.5e0", "total_decisions"),
    ("seed=true", "seed"), ("seed='1'", "seed"), ("num_tables='64'", "num_tables"),
    ("anneal_lr='yes'", "anneal_lr"), ("anneal_lr=1", "anneal_lr"), ("learning_rate=true", "learning_rate"),
    ("learning_rate='0.001'", "learning_rate"), ("hidden=[32.5]", "hidden"), ("hidden=[true]", "hidden"),
    ("league.snapshot_every=2.5", "league.snapshot_every"), ("imitation.epochs=false", "imitation.epochs"),
    ("league.bots={easy: 'x'}", "league.bots"), ("run_name=7", "run_name"), ("total_decisions=inf", "total_decisions"),
    ("eval_opponents=easy", "eval_opponents"),
    ("learning_rate='1e-4'", "learning_rate"), ("total_decisions='1e6'", "total_decisions"),  # quoted: text
])
def test_wrong_types_are_refused_naming_the_setting(override, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        load_config(SMOKE, [override])


@pytest.mark.parametrize("override, option", [
    ("rules={target_score: '100'}", "target_score"), ("rules={first_trick_protection: 'yes'}", "first_trick_protection"),
])
def test_rules_options_are_strict_too(override, option):
    # The config hands a rules mapping to Rules unchanged; Rules itself refuses the wrong type.
    with pytest.raises(ConfigError, match=rf"rules: .*{option}"):
        load_config(SMOKE, [override])


def test_numpy_numbers_count_as_numbers():
    import numpy as np

    config = TrainConfig(seed=np.int64(3), total_decisions=np.float32(1e6), learning_rate=np.float32(0.5))
    assert (config.seed, config.total_decisions, config.learning_rate) == (3, 1_000_000, 0.5)
    with pytest.raises(ValueError, match="seed"):
        TrainConfig(seed=np.bool_(True))


# ---- 3. every agent spec is checked before any work --------------------------------------------

@pytest.mark.parametrize("override, field, spec", [
    ("eval_opponents=[easy, nosuch]", "eval_opponents", "nosuch"),
    ("imitation.teacher=nosuchbot", "imitation.teacher", "nosuchbot"),
    ("league.bots={easy: 0.1, nosuchleague: 0.2}", "league.bots", "nosuchleague"),
    ("eval_opponents=['ckpt:missing.pt']", "eval_opponents", "missing.pt"),
])
def test_bad_agent_specs_are_refused_before_the_run_folder_exists(capsys, tmp_path, override, field, spec):
    runs = tmp_path / "runs"
    err = refused(capsys, SMOKE, override, "--runs-dir", str(runs), "--no-progress")
    assert field in err and spec in err, err
    assert not runs.exists()


def test_agents_are_checked_against_the_runs_rules(capsys, tmp_path):
    err = refused(capsys, SMOKE, "rules=two_player", "eval_opponents=[ppo-classic]", "--runs-dir", str(tmp_path / "r"))
    assert "eval_opponents" in err and "ppo-classic" in err and "two_player" in err, err


# ---- 4. the run's folder stays inside the runs directory ---------------------------------------

@pytest.mark.parametrize("name", ["../../x", "a/b", "..", ".", "", "/tmp/x", "a\\b", ".hidden", "-x"])
def test_run_name_must_be_a_plain_folder_name(name):
    with pytest.raises(ConfigError, match="run_name"):
        load_config(SMOKE, [f"run_name='{name}'"])


def test_plain_run_names_are_accepted():
    for name in ("smoke", "ppo_classic-2", "run.v2", "A1"):
        assert load_config(SMOKE, [f"run_name={name}"]).run_name == name


# ---- 5 and 6. what --resume may change; a finished run stays untouched -------------------------

@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished tiny run (with an evaluation) made by ``hearts train``: its runs folder."""
    runs = tmp_path_factory.mktemp("made") / "runs"
    assert cli.main(["train", SMOKE, *TINY, "--runs-dir", str(runs), "--no-progress"]) == 0
    summary = json.loads((runs / "smoke" / "summary.json").read_text())
    assert summary["eval"] and "easy" in summary["eval"]
    return runs


@pytest.fixture
def runs(finished_run, tmp_path):
    """A copy of the finished run, for a test to resume."""
    copy = tmp_path / "runs"
    shutil.copytree(finished_run, copy)
    return copy


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("override, named", [
    ("learning_rate=1e-3", "learning_rate 0.0003 -> 0.001"),
    ("hidden=[16]", "hidden [8] -> [16]"),
    ("total_decisions=5000", "total_decisions 200 -> 5000"),
    ("league.snapshot_every=3", "league.snapshot_every 1 -> 3"),
    ("imitation.teacher=easy", "imitation.teacher None -> 'easy'"),
])
def test_resume_with_changed_settings_is_refused_naming_them(capsys, runs, override, named):
    before = files_of(runs)
    err = refused(capsys, SMOKE, *TINY, override, "--runs-dir", str(runs), "--resume", "--no-progress")
    assert named in err, err
    if override.startswith("total_decisions"):
        assert "--extend" in err, err
    assert files_of(runs) == before


@pytest.fixture
def allow_training():
    """Marks a test whose command may train (see ``no_training``)."""


def test_resume_may_change_device_and_threads_and_extend_the_budget(capsys, runs, allow_training):
    from train.ppo import Run

    config = load_config(SMOKE, [*TINY, "torch_threads=1", "device=cpu"])
    Run(config, runs_dir=runs, resume=True, progress=False, log=lambda message: None)
    longer = load_config(SMOKE, [*TINY, "total_decisions=400"])
    with pytest.raises(ValueError, match="total_decisions 200 -> 400"):
        Run(longer, runs_dir=runs, resume=True, progress=False, log=lambda message: None)
    code, out, err = train(capsys, SMOKE, *TINY, "total_decisions=400", "--runs-dir", str(runs), "--resume",
                           "--extend", "--no-progress")
    assert code == 0, err
    assert json.loads(out)["learner_decisions"] >= 400


def test_resuming_a_finished_run_leaves_it_untouched(capsys, runs, allow_training):
    before = files_of(runs)
    code, out, err = train(capsys, SMOKE, *TINY, "--runs-dir", str(runs), "--resume", "--no-progress")
    assert code == 0, err
    assert "finished" in err and "--extend" in err, err
    assert files_of(runs) == before  # no file rewritten, none added (not even a TensorBoard log)
    assert json.loads(out) == json.loads(before["smoke/summary.json"])
