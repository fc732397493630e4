"""PPO's rollouts in shards and in workers (train/rollouts.py, train/rollout_workers.py, the Ray pool of
eval/cluster.py): the weights depend on the config's shards, not on the number of workers or the
backend; a worker that dies stops the run with its checkpoint written, and --resume trains on to the
weights the uninterrupted run reaches."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hearts_app import cli  # noqa: E402
from train.config import load_config  # noqa: E402
from train.opponents import League  # noqa: E402
from train.ppo import Run  # noqa: E402
from train.rollout_workers import LocalRolloutPool, RolloutWorkerError, in_shard_order, shares  # noqa: E402
from train.rollouts import plan_tables, shards  # noqa: E402

SMOKE = Path(__file__).resolve().parents[1] / "configs" / "smoke.yaml"
# A run of a few seconds: 4 iterations of 16 tables; one torch thread, as a worker has (another number
# of threads sums floats in another order, which can flip a sampled card).
TINY = ["total_decisions=1200", "num_tables=16", "hidden=[8]", "minibatch_size=128", "eval_every=0",
        "imitation.teacher=null", "torch_threads=1", "checkpoint_every=1", "league.snapshot_every=1",
        "league.bots={random: 0.3, easy: 0.2}"]


def train(tmp_path, name, workers, *extra, pool=None, resume=False):
    config = load_config(SMOKE, [f"run_name={name}", *TINY, *extra])
    run = Run(config, runs_dir=tmp_path, progress=False, log=lambda message: None, rollout_workers=workers,
              rollout_pool=pool, resume=resume)
    run.train()
    return run


def same_weights(a: Run, b: Run) -> bool:
    one, two = a.net.state_dict(), b.net.state_dict()
    return all(torch.equal(one[k], two[k]) for k in one)


def test_shards_split_the_tables_in_order_and_only_the_first_keeps_the_plans_seeds():
    config = load_config(SMOKE, ["num_tables=10", "rule_space=classic", "rule_sets_per_round=3"])
    league = League(config.league, config.rules_value)
    plan = plan_tables(league, config.rules_value, config, iteration=4)
    parts = shards(plan, 3)
    assert [p.tables for p in parts] == [3, 4, 3]
    assert np.array_equal(np.concatenate([p.seeds for p in parts]), plan.seeds)
    assert np.array_equal(np.concatenate([p.seats for p in parts]), plan.seats)
    assert [size for p in parts for _, size in p.groups] and sum(s for p in parts for _, s in p.groups) == 10
    assert [r for p in parts for r, _ in p.groups if True][0] == plan.groups[0][0]
    assert (parts[0].league_seed, parts[0].learner_seed) == (plan.league_seed, plan.learner_seed)
    assert len({(p.league_seed, p.learner_seed) for p in parts}) == 3
    assert shards(plan, 1)[0].groups == plan.groups
    assert shares(5, 2) == [[0, 2, 4], [1, 3]]
    assert in_shard_order([["a", "c", "e"], ["b", "d"]], 5) == ["a", "b", "c", "d", "e"]


def test_local_workers_train_the_weights_of_the_same_shards_in_this_process(tmp_path):
    here = train(tmp_path, "here", 0, "rollout_shards=2")
    one = train(tmp_path, "one", 1, "rollout_shards=2")
    two = train(tmp_path, "two", 2)  # a new run without rollout_shards takes one shard per worker
    assert two.config.rollout_shards == 2
    assert same_weights(here, one) and same_weights(one, two)
    assert not same_weights(here, train(tmp_path, "single", 0))  # one shard is another split of the tables


def test_a_killed_worker_stops_the_run_with_its_checkpoint_and_resume_reaches_the_same_weights(tmp_path):
    calls = {"n": 0}

    class KilledAtTheThirdRollout(LocalRolloutPool):
        def play(self, *args):
            calls["n"] += 1
            if calls["n"] == 3:
                os.kill(self.processes[1].pid, signal.SIGKILL)
                self.processes[1].join(timeout=10)
            return super().play(*args)

    with pytest.raises(RolloutWorkerError, match=r"rollout worker 1 \(pid \d+\) died .*after iteration 2.*--resume"):
        train(tmp_path, "killed", 2, pool=KilledAtTheThirdRollout)
    resumed = train(tmp_path, "killed", 2, resume=True)
    assert resumed.iteration > 2
    assert same_weights(resumed, train(tmp_path, "whole", 2))


def test_the_command_line_checks_the_workers_before_any_run(tmp_path, capsys):
    runs = ["--runs-dir", str(tmp_path / "runs")]
    for argv, says in [
        (["--backend", "ray"], "give their number with --rollout-workers N"),
        (["--address", "auto"], "--address goes with --backend ray"),
        (["rollout_shards=2", "--rollout-workers", "3"], "work for at most 2 worker(s)"),
        (["rollout_shards=64", "num_tables=8"], "rollout_shards 64 is more than num_tables 8"),
    ]:
        with pytest.raises(SystemExit):
            cli.main(["train", str(SMOKE), *TINY, *argv, *runs])
        assert says in capsys.readouterr().err
    assert not (tmp_path / "runs" / "smoke").exists()


@pytest.mark.slow
def test_ray_actors_train_the_weights_of_local_workers(tmp_path):
    pytest.importorskip("ray")
    from eval.cluster import RayRolloutPool

    local = train(tmp_path, "local", 2)
    on_ray = train(tmp_path, "ray", 2, pool=RayRolloutPool)
    assert same_weights(local, on_ray)


# ---- the full-information critic ------------------------------------------------------------------


def test_hidden_hands_name_the_holder_of_every_card_the_seat_cannot_see():
    import hearts_env as he
    from hearts_env import cards
    from train.critic import HIDDEN_WIDTH, hidden_hands

    state = he.init(he.Rules.preset("classic"), 2, seed=5)
    seat = np.array([0, 2])
    out = hidden_hands(state, np.array([0, 1]), seat)
    assert out.shape == (2, HIDDEN_WIDTH) and out.sum(axis=1).tolist() == [39, 39]
    for row in range(2):
        for relative in (1, 2, 3):
            held = cards.to_mask(state.hands[row, (seat[row] + relative) % 4])
            assert np.array_equal(out[row, 52 * (relative - 1):52 * relative], held)
        assert not (out[row].reshape(3, 52) & cards.to_mask(state.hands[row, seat[row]])).any()  # not its own
    two = he.init(he.Rules.preset("two_player"), 1, seed=5)
    assert hidden_hands(two, np.array([0]), np.array([1]))[0, 52:].sum() == 0  # one other seat


def test_a_run_with_the_full_information_critic_trains_resumes_and_exports_the_policy_alone(tmp_path):
    from agents.checkpoint import load, load_net

    critic = ["critic=full_information", "critic_hidden=[16]", "critic_warmup_iterations=1"]
    whole = train(tmp_path, "critic", 0, *critic)
    payload = load(tmp_path / "critic" / "checkpoints" / "latest.pt")
    assert set(payload["extra"]) == {"critic", "critic_optimizer"}
    net, meta = load_net(tmp_path / "critic" / "policy.pt")  # the exported file: the policy network alone
    assert meta["hidden"] == [8] and "critic" not in (load(tmp_path / "critic" / "policy.pt").get("extra") or {})
    assert whole.learner_decisions >= 1200

    # killed in its third iteration (the checkpoint of the second is on disk), then resumed: the same weights
    class Killed(Run):
        def _rollout(self, pool):
            if self.iteration == 2:
                raise KeyboardInterrupt
            return super()._rollout(pool)

    config = load_config(SMOKE, ["run_name=halves", *TINY, *critic])
    with pytest.raises(KeyboardInterrupt):
        Killed(config, runs_dir=tmp_path, progress=False, log=lambda m: None).train()
    resumed = train(tmp_path, "halves", 0, *critic, resume=True)
    assert resumed.iteration == whole.iteration
    assert same_weights(resumed, whole)
    assert all(torch.equal(a, b) for a, b in zip(resumed.critic.state_dict().values(),
                                                 whole.critic.state_dict().values()))
    assert same_weights(whole, train(tmp_path, "critic-worker", 1, *critic))  # (one torch thread: see TINY)


def test_the_critic_s_warm_up_leaves_the_policy_as_it_was(tmp_path):
    config = load_config(SMOKE, ["run_name=warm", *TINY, "critic=full_information", "critic_hidden=[16]",
                                 "critic_warmup_iterations=100", "total_decisions=1"])
    run = Run(config, runs_dir=tmp_path, progress=False, log=lambda m: None)
    before = {k: v.clone() for k, v in run.net.state_dict().items()}
    critic_before = {k: v.clone() for k, v in run.critic.state_dict().items()}
    run.iteration = 0
    batch, _ = run._rollout(None)
    from train.ppo import update
    update(run.net, run.optimizer, batch, run.config, np.random.default_rng(0), run.device, run.critic,
           run.critic_optimizer, policy=False)
    assert all(torch.equal(before[k], v) for k, v in run.net.state_dict().items())
    assert not all(torch.equal(critic_before[k], v) for k, v in run.critic.state_dict().items())


@pytest.mark.slow
def test_a_killed_ray_actor_stops_the_run_with_its_checkpoint_and_resume_reaches_the_same_weights(tmp_path):
    pytest.importorskip("ray")
    from eval.cluster import RayRolloutPool

    calls = {"n": 0}

    class KilledAtTheThirdRollout(RayRolloutPool):
        def play(self, *args):
            calls["n"] += 1
            if calls["n"] == 3:
                self.ray.kill(self.actors[1], no_restart=True)
            return super().play(*args)

    with pytest.raises(RolloutWorkerError, match=r"rollout worker 1 \(a Ray actor\) died.*after iteration 2.*--resume"):
        train(tmp_path, "killed", 2, pool=KilledAtTheThirdRollout)
    resumed = train(tmp_path, "killed", 2, pool=RayRolloutPool, resume=True)
    assert same_weights(resumed, train(tmp_path, "whole", 2))
