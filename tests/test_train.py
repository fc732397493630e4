"""Training: config validation, GAE, checkpoints (safe, atomic, checked), the CLI end to end with
TensorBoard logs, and a kill-and-resume that ends where an uninterrupted run ends."""

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import hearts_env as he  # noqa: E402
from agents import make  # noqa: E402
from agents.checkpoint import CheckpointError, load_net, load_policy, save  # noqa: E402
from agents.policy import MASKED_LOGIT, PolicyNet, widened  # noqa: E402
from hearts_env.observe import OBS_DIM, observe  # noqa: E402
from tests.commands import hearts  # noqa: E402
from train.config import ConfigError, load_config  # noqa: E402
from train.ppo import gae  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SMOKE = str(ROOT / "configs" / "smoke.yaml")
TINY = ["total_decisions=1500", "num_tables=16", "imitation.decisions=300", "eval_every=1", "eval_deals=8",
        "league.snapshot_every=1"]


# ---- config ------------------------------------------------------------------------------------

def test_shipped_configs_validate():
    paths = [p for p in sorted((ROOT / "configs").glob("*.yaml")) if p.name.startswith(("ppo_", "smoke"))]
    assert paths and any(p.name == "smoke.yaml" for p in paths), "no configs/ppo_*.yaml or smoke.yaml found"
    for path in paths:
        load_config(path)


@pytest.mark.parametrize("override, word", [
    ("learning_rat=1", "learning_rat"), ("learning_rate=-1", "learning_rate"), ("reward=money", "reward"),
    ("rules=speedy", "rules"), ("league.bogus=1", "league.bogus"), ("num_tables=0", "num_tables"),
])
def test_bad_config_values_are_named(override, word):
    with pytest.raises(ConfigError, match=word.replace(".", r"\.")):
        load_config(SMOKE, [override])


def test_config_overrides_and_missing_file():
    config = load_config(SMOKE, ["learning_rate=1e-4", "league.snapshot_every=3", "hidden=[8, 8]"])
    assert config.learning_rate == 1e-4 and config.league.snapshot_every == 3 and config.hidden == [8, 8]
    with pytest.raises(ConfigError, match="does not exist"):
        load_config("nope.yaml")
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        load_config(SMOKE, ["learning_rate"])


# ---- network and GAE ---------------------------------------------------------------------------

def test_policy_masks_illegal_actions_with_a_finite_value():
    net = PolicyNet(hidden=[16])
    state = he.init(he.Rules.preset("classic"), 8, seed=0)
    obs, mask = torch.as_tensor(observe(state)), torch.as_tensor(he.legal_mask(state))
    logits, value = net(obs, mask)
    assert torch.isfinite(logits).all() and value.shape == (8,)
    assert (logits[~mask] == MASKED_LOGIT).all()
    assert net.trunk[0].in_features == OBS_DIM


def test_gae_with_a_final_reward():
    values = np.array([[[0.5, 0.25, 0.0]]], dtype=np.float32)
    count = np.array([[2]])
    reward = np.array([[1.0]])
    adv = gae(values, count, reward, gamma=1.0, lam=1.0)
    # lambda = 1: advantage = final reward - value at each step; past the end, zero.
    np.testing.assert_allclose(adv[0, 0], [0.5, 0.75, 0.0])
    adv0 = gae(values, count, reward, gamma=1.0, lam=0.0)
    np.testing.assert_allclose(adv0[0, 0], [0.25 - 0.5, 1.0 - 0.25, 0.0])


def test_an_update_whose_last_minibatch_holds_one_decision_stays_finite():
    # 65 decisions in minibatches of 64: the last holds one, whose advantage has no spread (its std
    # is NaN); the weights must stay finite (a NaN there once made a tiny run diverge, then refuse to save).
    from train.ppo import Rollout, update

    rng = np.random.default_rng(0)
    state = he.init(he.Rules.preset("classic"), 65, seed=0)
    obs, mask = observe(state), he.legal_mask(state)
    action = np.array([np.flatnonzero(row)[0] for row in mask])
    n = len(action)
    batch = Rollout(obs=obs, mask=mask, action=action, logp=np.full(n, -1.0, np.float32),
                    advantage=rng.normal(size=n).astype(np.float32), returns=rng.normal(size=n).astype(np.float32),
                    value=np.zeros(n, np.float32), decisions=n, learner_points=np.zeros(n), moons_made=0.0,
                    moons_suffered=0.0)
    net = PolicyNet(hidden=[8])
    config = load_config(SMOKE, ["minibatch_size=64", "update_epochs=1"])
    stats = update(net, torch.optim.Adam(net.parameters(), lr=1e-3), batch, config, rng, torch.device("cpu"))
    assert all(np.isfinite(value) for value in stats.values()), stats
    assert all(torch.isfinite(p).all() for p in net.parameters())


# ---- checkpoints -------------------------------------------------------------------------------

def rules_meta(rules="classic"):
    return {"rules": he.Rules.preset(rules).to_dict(), "iteration": 0}


def test_checkpoint_round_trip_and_agent_spec(tmp_path):
    net = PolicyNet(hidden=[16])
    path = save(tmp_path / "p.pt", net, rules_meta())
    loaded, meta = load_net(path, he.Rules.preset("classic"))
    for a, b in zip(net.parameters(), loaded.parameters()):
        assert torch.equal(a, b)
    agent = make(f"ckpt:{path}")
    state = he.init(he.Rules.preset("classic"), 4, seed=1)
    actions = agent.act(observe(state), he.legal_mask(state))
    assert he.legal_mask(state)[np.arange(4), actions].all()
    assert list(tmp_path.glob("*.pt")) == [path]  # written atomically, nothing left behind
    assert not list(tmp_path.glob("*.tmp"))


def test_checkpoint_for_other_rules_or_observation_is_refused(tmp_path):
    path = save(tmp_path / "two.pt", PolicyNet(hidden=[8]), rules_meta("two_player"))
    with pytest.raises(CheckpointError, match="two_player"):
        load_policy(path, rules=he.Rules.preset("classic"))
    payload = torch.load(path, weights_only=True)
    meta = json.loads(payload["meta"])
    meta["obs_version"] = 0
    payload["meta"] = json.dumps(meta)
    torch.save(payload, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="observation v0"):
        load_policy(tmp_path / "old.pt")


def test_non_finite_weights_are_never_written_nor_loaded(tmp_path):
    """A diverged network (NaN or infinite weights) is refused by save, writing nothing, and a file
    holding one (written by other code) is refused when loaded, naming the tensor."""
    net = PolicyNet(hidden=[8])
    with torch.no_grad():
        net.policy_head.weight[0, 0] = float("nan")
    with pytest.raises(CheckpointError, match=r"refusing to write .*policy_head.weight holds NaN or infinite"):
        save(tmp_path / "nan.pt", net, rules_meta("classic"))
    assert not list(tmp_path.iterdir())  # no file, no temporary file
    good = save(tmp_path / "good.pt", PolicyNet(hidden=[8]), rules_meta("classic"))
    payload = torch.load(good, weights_only=True)
    payload["model"]["policy_head.bias"][3] = float("inf")
    torch.save(payload, tmp_path / "inf.pt")
    with pytest.raises(CheckpointError, match=r"weights hold NaN or infinite numbers \(policy_head.bias\)"):
        load_policy(tmp_path / "inf.pt")


class Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/hearts_pwned",))


def test_loading_never_runs_code(tmp_path):
    evil = tmp_path / "evil.pt"
    torch.save({"format": "x", "payload": Boom()}, evil)
    with pytest.raises(CheckpointError, match="not a readable"):
        load_policy(evil)
    assert not Path("/tmp/hearts_pwned").exists()
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError):
        load_policy(tmp_path / "junk.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_policy(tmp_path / "missing.pt")
    pickled = tmp_path / "plain.pkl"
    pickled.write_bytes(pickle.dumps({"format": "hearts-lab-checkpoint-1"}))
    with pytest.raises(CheckpointError):
        load_policy(pickled)


# ---- the CLI end to end ------------------------------------------------------------------------

@pytest.mark.slow
def test_train_smoke_end_to_end(tmp_path):
    done = hearts("train", SMOKE, *TINY, "--runs-dir", str(tmp_path), "--no-progress", timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["learner_decisions"] >= 1500 and summary["iterations"] >= 1
    run = tmp_path / "smoke"
    assert (run / "checkpoints" / "latest.pt").is_file() and (run / "policy.pt").is_file()
    load_policy(run / "policy.pt", rules=he.Rules.preset("classic"))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    for tag in ("charts/points_per_hand", "charts/decisions_per_s", "losses/policy", "losses/value",
                "losses/entropy", "losses/approx_kl", "losses/clip_fraction", "losses/explained_variance",
                "eval/points_vs_easy", "imitation/accuracy"):
        assert tag in tags, tag
    assert "hyperparameters/text_summary" in events.Tags()["tensors"]
    # Starting the same run again without --resume is refused; a bad config key is named.
    again = hearts("train", SMOKE, *TINY, "--runs-dir", str(tmp_path), "--no-progress")
    assert again.returncode == 2 and "--resume" in again.stderr
    bad = hearts("train", SMOKE, "learning_rat=1", "--runs-dir", str(tmp_path))
    assert bad.returncode == 2 and "learning_rat" in bad.stderr
    late = hearts("train", SMOKE, "--runs-dir", str(tmp_path), "learning_rat=1")  # overrides after an option
    assert late.returncode == 2 and "learning_rat" in late.stderr and "unrecognized" not in late.stderr
    stray = hearts("train", SMOKE, "--runs-dir", str(tmp_path), "stray")
    assert stray.returncode == 2 and "unrecognized arguments: stray" in stray.stderr


def test_a_summary_of_an_earlier_budget_does_not_finish_an_extended_run(tmp_path):
    """Killed after an extended run's last checkpoint but before its new summary and policy: the
    old budget's summary is still there, and resuming must write this budget's policy, not stop."""
    from train.ppo import Run

    config = load_config(SMOKE, ["total_decisions=600", "num_tables=16", "imitation.teacher=null", "eval_every=0",
                                 "checkpoint_every=1"])
    quiet = {"progress": False, "log": lambda message: None}
    Run(config, runs_dir=tmp_path, **quiet).train()
    run = tmp_path / "smoke"
    old_summary, old_policy = (run / "summary.json").read_text(), (run / "policy.pt").read_bytes()
    extended = config.model_copy(update={"total_decisions": 1200})
    Run(extended, runs_dir=tmp_path, resume=True, extend=True, **quiet).train()
    (run / "summary.json").write_text(old_summary)  # as a kill before the new summary would leave it
    (run / "policy.pt").write_bytes(old_policy)
    again = Run(extended, runs_dir=tmp_path, resume=True, extend=True, **quiet)
    assert not again.finished
    summary = again.train()
    assert summary["learner_decisions"] == again.learner_decisions >= 1200
    assert json.loads((run / "summary.json").read_text())["learner_decisions"] == summary["learner_decisions"]
    assert (run / "policy.pt").read_bytes() != old_policy
    assert Run(extended, runs_dir=tmp_path, resume=True, extend=True, **quiet).finished


@pytest.mark.slow
def test_kill_and_resume_ends_like_an_uninterrupted_run(tmp_path):
    settings = ["total_decisions=4000", "num_tables=16", "imitation.teacher=null", "eval_every=0",
                "checkpoint_every=1", "league.snapshot_every=2"]
    straight = hearts("train", SMOKE, *settings, "--runs-dir", str(tmp_path / "a"), "--no-progress", timeout=300)
    assert straight.returncode == 0, straight.stderr
    expected = json.loads(straight.stdout)

    runs = tmp_path / "b"
    process = subprocess.Popen([sys.executable, "-m", "hearts_app.cli", "train", SMOKE, *settings,
                                "--runs-dir", str(runs), "--no-progress"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    latest = runs / "smoke" / "checkpoints" / "latest.pt"
    deadline = time.time() + 240
    while time.time() < deadline:
        if latest.is_file():
            from agents.checkpoint import load

            if load(latest)["meta"]["iteration"] >= 2:
                break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = load(latest)["meta"]["iteration"]
    assert killed_at < expected["iterations"], "the run finished before it could be killed"
    resumed = hearts("train", SMOKE, *settings, "--runs-dir", str(runs), "--resume", "--no-progress", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["iterations"] == expected["iterations"]
    assert summary["learner_decisions"] == expected["learner_decisions"]
    assert summary["all_decisions"] == expected["all_decisions"]
    # The resumed run continued from the checkpoint: same final weights as the uninterrupted one.
    a, _ = load_net(tmp_path / "a" / "smoke" / "policy.pt")
    b, _ = load_net(runs / "smoke" / "policy.pt")
    for x, y in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(x, y)


@pytest.mark.parametrize("hidden", [[16, 8], [40, 8], [16, 24], [40, 24, 8, 64]])
def test_a_widened_network_computes_what_the_original_computes(hidden):
    torch.manual_seed(1)
    small = PolicyNet(hidden=[16, 8])
    for parameter in small.parameters():  # non-zero everywhere, so a misplaced weight shows
        parameter.data.normal_()
    big = widened(small, hidden)
    assert big.hidden == tuple(hidden)
    observation = torch.rand(64, OBS_DIM) * 2 - 0.5
    mask = torch.rand(64, 52) > 0.3
    for got, want in zip(big(observation, mask), small(observation, mask)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)
    if hidden[0] > 16:  # new units start alive (fresh incoming weights), or training could never use them
        assert big.trunk[0].weight[16:].abs().sum() > 0


@pytest.mark.parametrize("hidden", [[8, 8], [16], [16, 8, 4]])
def test_widening_refuses_to_shrink(hidden):
    with pytest.raises(ValueError, match="cannot grow"):
        widened(PolicyNet(hidden=[16, 8]), hidden)


def test_init_from_starts_from_a_saved_policy_and_refuses_what_does_not_fit(tmp_path):
    from train.ppo import Run

    source = PolicyNet(hidden=[16, 16])
    path = save(tmp_path / "start.pt", source, rules_meta())
    config = load_config(SMOKE, ["hidden=[16, 16]", "imitation.teacher=null", f"init_from={path}"])
    run = Run(config, runs_dir=tmp_path / "runs", progress=False, log=lambda message: None)
    for x, y in zip(run.net.parameters(), source.parameters()):
        torch.testing.assert_close(x, y)
    with pytest.raises(CheckpointError, match=r"hidden"):
        Run(config.model_copy(update={"hidden": [8, 8]}), runs_dir=tmp_path / "other", log=lambda message: None)
    grown = Run(config.model_copy(update={"hidden": [24, 16, 16]}), runs_dir=tmp_path / "grown",
                log=lambda message: None)
    observation = torch.rand(32, OBS_DIM)
    mask = torch.ones(32, 52, dtype=torch.bool)
    torch.testing.assert_close(grown.net(observation, mask), source(observation, mask))
    two_player = load_config(SMOKE, ["hidden=[16, 16]", "imitation.teacher=null", f"init_from={path}",
                                     "rules=two_player"])
    with pytest.raises(CheckpointError, match="rules"):
        Run(two_player, runs_dir=tmp_path / "third", log=lambda message: None)
    with pytest.raises(ConfigError, match="init_from and imitation.teacher"):
        load_config(SMOKE, [f"init_from={path}", "imitation.teacher=hard"])
    scored = save(tmp_path / "scored.pt", widened(source, [16, 16], card_scorer=4), rules_meta())
    with pytest.raises(CheckpointError, match="per-card scorer"):
        Run(config.model_copy(update={"init_from": str(scored)}), runs_dir=tmp_path / "fourth", log=lambda message: None)


def test_an_arena_in_the_callers_process_keeps_its_torch_threads(tmp_path):
    """Training evaluates with ``workers=1``; that must not leave the training run on one thread."""
    from eval import arena

    path = save(tmp_path / "p.pt", PolicyNet(hidden=[8]), rules_meta())
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        arena.head_to_head(f"ckpt:{path}", "easy", deals=4, workers=1, seed=0, progress=False)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_arena_with_a_checkpoint_and_two_workers_does_not_hang(tmp_path):
    """Worker processes are forked after the parent loaded a checkpoint (and started torch's
    thread pool); they must not wait forever on the pool's copied locks."""
    # Tensors this large are copied by torch's thread pool when the checkpoint loads.
    path = save(tmp_path / "p.pt", PolicyNet(hidden=[128, 128]), rules_meta())
    script = (
        "import torch; torch.set_num_threads(2)\n"
        "from eval import arena\n"
        f"r = arena.head_to_head('ckpt:{path}', 'easy', deals=300, workers=2, seed=0)\n"
        f"print(r.row('ckpt:{path}')['points_per_hand']['mean'])\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the arena's worker processes hung after the parent loaded a checkpoint")
    assert done.returncode == 0, done.stderr
