"""Distillation (``hearts distill collect`` / ``fit``, ``train.distill``): the commands run end to end,
shards hold the labels they should and load old and new alike, rollout labels are each card played out
on the real deal, and the fitting losses have their minimum where they should."""

import hashlib
import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import hearts_env as he
from agents import make
from hearts_env import cards
from tests.commands import hearts
from tests.test_observe import random_states
from tests.test_search import queen_position

CLASSIC = he.Rules.preset("classic")


@pytest.mark.slow
def test_distill_collect_and_fit_end_to_end(tmp_path):
    torch = pytest.importorskip("torch")
    from agents.checkpoint import load_net, load_policy, save
    from agents.policy import PolicyNet

    torch.manual_seed(0)
    student = save(tmp_path / "student.pt", PolicyNet(hidden=[16]), {"rules": CLASSIC.to_dict(), "iteration": 0})
    shards = tmp_path / "shards"
    done = hearts("distill", "collect", str(student), "--out", str(shards), "--hands", "8", "--tables", "8",
                  "--workers", "1", "--determinizations", "2")
    assert done.returncode == 0, done.stderr
    examples = json.loads(done.stdout)["examples"]
    assert examples > 8 * 4  # a dozen card plays with a choice per hand, less the forced ones
    with np.load(next(shards.glob("shard_*.npz"))) as data:
        mask = np.unpackbits(data["mask"], axis=1, count=52).astype(bool)
        values = data["values"]
        passes = data["kept_probs"]
    assert np.isfinite(values[mask]).all() and np.isinf(values[~mask]).all()
    assert (mask.sum(axis=1) > 1).all()  # forced plays are not labelled
    assert len(passes) > 0 and np.allclose(passes.sum(axis=1), 1)  # the student's own odds at its passes
    out = tmp_path / "distilled.pt"
    fitted = hearts("distill", "fit", str(student), "--data", str(shards), "--out", str(out), "--epochs", "1")
    assert fitted.returncode == 0, fitted.stderr
    assert json.loads(fitted.stdout)["examples"] == examples
    load_policy(out, rules=CLASSIC)
    # The rollout teacher (each legal card played out on the real deal), then a fit by improvement.
    rolled = tmp_path / "rolled"
    done = hearts("distill", "collect", str(student), "--out", str(rolled), "--hands", "8", "--tables", "8",
                  "--workers", "1", "--teacher", "rollout")
    assert done.returncode == 0, done.stderr
    with np.load(next(rolled.glob("shard_*.npz"))) as data:
        mask = np.unpackbits(data["mask"], axis=1, count=52).astype(bool)
        values, is_pass = data["values"], data["is_pass"]
        assert json.loads(str(data["meta"]))["teacher"] == "rollout" and len(data["kept_obs"]) == 0
    assert np.isfinite(values[mask]).all() and np.isinf(values[~mask]).all() and (mask.sum(axis=1) > 1).all()
    # Passes are labelled too (the hands of seed 1 include passing ones): 13, 12 and 11 cards to choose from.
    assert is_pass.any() and set(mask[is_pass].sum(axis=1)) <= {11, 12, 13}
    assert set(np.unique(values[mask])) <= set(range(27))  # one real deal: whole points of one hand
    second = tmp_path / "second.pt"  # a second round, from the first round's policy, grown to 32 units and scored
    fitted = hearts("distill", "fit", str(out), "--data", str(rolled), "--out", str(second), "--epochs", "1",
                    "--loss", "improvement", "--temperature", "0.5", "--hidden", "32", "--card-scorer", "4")
    assert fitted.returncode == 0, fitted.stderr
    stats = json.loads(fitted.stdout)
    assert stats["loss"] == "improvement" and {"pass_regret", "play_regret"} <= set(stats["before"])
    grown, meta = load_net(second, rules=CLASSIC)
    lineage = meta["distilled"]
    # The start by name and content, the data by folder name: no path of this machine in the file.
    assert (lineage["start"], lineage["data"]) == (out.name, rolled.name)
    assert lineage["start_sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert str(tmp_path) not in json.dumps(lineage)
    assert list(grown.hidden) == [32] and lineage["start_hidden"] == [16]
    assert grown.card_scorer.width == 4 and meta["card_scorer"] == 4 and lineage["start_card_scorer"] == 0
    assert (lineage["loss"], lineage["after"]["loss"], lineage["after"]["after"]) == ("improvement", "imitation", None)
    # Bad input: named, exit code 2.
    empty = hearts("distill", "fit", str(student), "--data", str(tmp_path / "none"), "--out", str(out))
    assert empty.returncode == 2 and "no shard" in empty.stderr
    missing = hearts("distill", "collect", str(tmp_path / "nope.pt"), "--out", str(shards))
    assert missing.returncode == 2 and "not found" in missing.stderr
    bad = hearts("distill", "fit", str(student), "--data", str(shards), "--out", str(out), "--temperature", "0")
    assert bad.returncode == 2 and "--temperature" in bad.stderr
    before = out.read_bytes()
    for flag, value, says in (("--temperature", "nan", "must be a number above 0, got 'nan'"),
                              ("--learning-rate", "inf", "must be a number above 0, got 'inf'"),
                              ("--margin", "nan", "must be a number, 0 or more, got 'nan'")):
        poisoned = hearts("distill", "fit", str(student), "--data", str(shards), "--out", str(out), flag, value)
        assert poisoned.returncode == 2 and f"argument {flag}: {says}" in poisoned.stderr, poisoned.stderr
    assert out.read_bytes() == before  # nothing written on a refusal
    narrower = hearts("distill", "fit", str(student), "--data", str(shards), "--out", str(out), "--hidden", "8")
    assert narrower.returncode == 2 and "cannot grow layers [16] into [8]" in narrower.stderr
    no_units = hearts("distill", "fit", str(student), "--data", str(shards), "--out", str(out), "--card-scorer", "0")
    assert no_units.returncode == 2 and "argument --card-scorer: must be 1 or more, got 0" in no_units.stderr
    shrunk = hearts("distill", "fit", str(second), "--data", str(shards), "--out", str(out), "--card-scorer", "2")
    assert shrunk.returncode == 2 and "cannot shrink the card scorer from 4 units to 2" in shrunk.stderr
    for args, word in ((["--seed", "-1"], "seed"), (["--opponent", "hardest"], "hardest"),
                       (["--opponent", "search"], "slow"), (["--opponent", "easy,search"], "slow"),
                       (["--opponent", "hard,,easy"], "separated by commas"), (["--out", str(student)], "is a file")):
        refused = hearts("distill", "collect", str(student), "--out", str(tmp_path / "x"), *args)
        assert refused.returncode == 2 and word in refused.stderr, (args, refused.stderr)
    two_player = save(tmp_path / "two.pt", PolicyNet(hidden=[16]),
                      {"rules": he.Rules.preset("two_player").to_dict(), "iteration": 0})
    other_rules = hearts("distill", "fit", str(two_player), "--data", str(shards), "--out", str(out))
    assert other_rules.returncode == 2 and "other rules" in other_rules.stderr


@pytest.mark.slow
def test_rollout_collection_labels_card_plays_passes_or_both_on_the_same_hands(tmp_path):
    # --no-pass-labels / --no-card-labels: the same hands and the same labels for what is labelled;
    # the rest kept at the student's own odds instead of played out.
    torch = pytest.importorskip("torch")
    from agents.checkpoint import save
    from agents.policy import PolicyNet
    from train.distill import load_shards

    torch.manual_seed(0)
    student = save(tmp_path / "student.pt", PolicyNet(hidden=[16]), {"rules": CLASSIC.to_dict(), "iteration": 0})
    folders = {}
    for flag in ("--pass-labels", "--no-pass-labels", "--no-card-labels"):
        folders[flag] = tmp_path / flag.strip("-")
        done = hearts("distill", "collect", str(student), "--out", str(folders[flag]), "--hands", "8", "--tables", "8",
                      "--workers", "1", "--teacher", "rollout", flag)
        assert done.returncode == 0, done.stderr
    both, plays = load_shards(folders["--pass-labels"]), load_shards(folders["--no-pass-labels"])
    passes = load_shards(folders["--no-card-labels"])
    assert both["is_pass"].any() and not plays["is_pass"].any() and passes["is_pass"].all()
    assert len(both["kept_obs"]) == 0
    for only, labelled in ((plays, ~both["is_pass"]), (passes, both["is_pass"])):
        for name in ("obs", "mask", "values"):
            np.testing.assert_array_equal(only[name], both[name][labelled])
        # what the other mode labels is kept, in the order it was met
        np.testing.assert_array_equal(only["kept_obs"], both["obs"][~labelled])
        np.testing.assert_array_equal(only["kept_mask"], both["mask"][~labelled])
        assert np.allclose(only["kept_probs"].sum(axis=1), 1) and not only["kept_probs"][~only["kept_mask"]].any()
    with np.load(next(folders["--no-pass-labels"].glob("shard_*.npz"))) as data:
        meta = json.loads(str(data["meta"]))
        assert meta["pass_labels"] is False and meta["card_labels"] is True
    with np.load(next(folders["--no-card-labels"].glob("shard_*.npz"))) as data:
        meta = json.loads(str(data["meta"]))
        assert meta["pass_labels"] is True and meta["card_labels"] is False
    # A fit of the passes alone: their regret is reported, there is no card-play regret to report.
    out = tmp_path / "passes.pt"
    fitted = hearts("distill", "fit", str(student), "--data", str(folders["--no-card-labels"]), "--out", str(out),
                    "--epochs", "1", "--loss", "improvement", "--temperature", "0.25")
    assert fitted.returncode == 0, fitted.stderr
    stats = json.loads(fitted.stdout)
    assert "pass_regret" in stats["before"] and "play_regret" not in stats["before"]
    assert stats["kept_examples"] == len(passes["kept_obs"])
    # Nothing left to label: refused by name, exit code 2.
    for extra in (["--teacher", "rollout", "--no-pass-labels"], ["--teacher", "search"]):
        refused = hearts("distill", "collect", str(student), "--out", str(tmp_path / "x"), "--no-card-labels", *extra)
        assert refused.returncode == 2 and "--no-card-labels leaves nothing to label" in refused.stderr, refused.stderr


def test_the_expert_teacher_values_the_cards_the_expert_searches_at_tables_that_take_turns(tmp_path):
    # teacher="expert": the student's likeliest cards valued (its own card among them), the other
    # legal cards unvalued, the plays it is sure of kept at its odds; the bots take turns by batch.
    torch = pytest.importorskip("torch")
    from agents import POLICY_DIR
    from agents.checkpoint import load_policy, save
    from agents.policy import PolicyNet
    from hearts_env.observe import decode
    from train.distill import TEACHER_CANDIDATES, TEACHER_CONFIDENT, collect_shard, fit, load_shards

    torch.manual_seed(0)
    student_path = POLICY_DIR / "ppo_classic.pt"  # sure of about half its card plays
    student = load_policy(student_path, rules=CLASSIC)
    shards = tmp_path / "shards"
    examples = collect_shard(str(student_path), shards, hands=16, seed=3, tables=8, determinizations=2,
                             opponent="easy,random", teacher="expert", log=lambda message: None)
    opponents, mixes = [], []
    for path in sorted(shards.glob("shard_*.npz")):
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
        opponents.append(meta["opponent"])
        mixes.append(meta["opponent_mix"])
    assert opponents == ["easy", "random"]  # each shard's own bot, and the mix it came from
    assert mixes == [["easy", "random"]] * 2
    data = load_shards(shards)
    assert len(data["obs"]) == examples > 0
    obs, mask, values = data["obs"].astype(np.float32), data["mask"], data["values"]
    valued = np.isfinite(values)
    assert not (valued & ~mask).any() and (mask.sum(axis=1) > 1).all()
    assert ((valued.sum(axis=1) >= 2) & (valued.sum(axis=1) <= TEACHER_CANDIDATES)).all()
    own, odds = student.policy(obs, mask)
    assert valued[np.arange(len(own)), own].all()  # the student's own card is always searched
    # (The odds are recomputed from the shards' float16 observations: a hair of tolerance.)
    assert (np.where(mask, odds, 0).max(axis=1) < TEACHER_CONFIDENT + 1e-3).all()
    kept_obs, kept_mask = data["kept_obs"].astype(np.float32), data["kept_mask"]
    plays = decode(kept_obs)["phase"][:, 1] > 0
    _, kept_odds = student.policy(kept_obs[plays], kept_mask[plays])
    assert plays.sum() > 10  # sure of its card: played without searching
    assert (np.where(kept_mask[plays], kept_odds, 0).max(axis=1) >= TEACHER_CONFIDENT - 1e-3).all()
    # A fit from another network: its cards outside the valued ones are reported apart, not as free.
    other = save(tmp_path / "other.pt", PolicyNet(hidden=[8]), {"rules": CLASSIC.to_dict(), "iteration": 0})
    stats = fit(str(other), shards, tmp_path / "out.pt", epochs=1, holdout=0.5, log=lambda message: None)
    assert 0 < stats["before"]["unvalued"] < 1 and np.isfinite(stats["before"]["regret"])
    assert stats["before"]["regret"] >= 0
    with pytest.raises(ValueError, match="unvalued.*imitation"):  # it would read an unvalued card as free
        fit(str(other), shards, tmp_path / "out.pt", epochs=1, loss="regression", log=lambda message: None)
    # The improvement loss improves among the valued cards and holds the others.
    stats = fit(str(other), shards, tmp_path / "out.pt", epochs=1, loss="improvement", log=lambda message: None)
    assert np.isfinite(stats["epoch_1"]["regret"])


def test_shards_load_into_one_array_each(tmp_path):
    # Two shards (one with an array fitting does not read) load as the concatenation of their
    # examples; a file lacking a shard array is refused by name.
    from train.distill import load_shards

    rng = np.random.default_rng(0)
    meta = np.array(json.dumps({"rules": CLASSIC.to_dict()}))

    def shard(rows, kept, **extra):
        mask = rng.random((rows, 52)) < 0.2
        return {"meta": meta, "obs": rng.random((rows, 629)).astype(np.float16), "mask": np.packbits(mask, axis=1),
                "values": np.where(mask, rng.integers(0, 27, (rows, 52)), np.inf).astype(np.float32),
                "is_pass": rng.random(rows) < 0.5,
                "kept_obs": rng.random((kept, 629)).astype(np.float16),
                "kept_mask": np.packbits(rng.random((kept, 52)) < 0.25, axis=1),
                "kept_probs": rng.random((kept, 52)).astype(np.float32), **extra}

    first, second = shard(5, 2), shard(3, 4, worlds=np.zeros((3, 4)))
    np.savez(tmp_path / "shard_1_0000.npz", **first)
    np.savez(tmp_path / "shard_1_0001.npz", **second)
    loaded = load_shards(tmp_path)
    assert loaded["rules"] == CLASSIC.to_dict() and "worlds" not in loaded
    for name in ("obs", "values", "is_pass", "kept_obs", "kept_probs"):
        np.testing.assert_array_equal(loaded[name], np.concatenate([first[name], second[name]]))
        assert loaded[name].dtype == second[name].dtype
    for name in ("mask", "kept_mask"):
        unpacked = [np.unpackbits(s[name], axis=1, count=52).astype(bool) for s in (first, second)]
        np.testing.assert_array_equal(loaded[name], np.concatenate(unpacked))
    broken = dict(first)
    del broken["is_pass"]
    np.savez(tmp_path / "shard_1_0002.npz", **broken)
    with pytest.raises(ValueError, match="lacks is_pass"):
        load_shards(tmp_path)


def test_a_fit_streams_its_shards_a_group_at_a_time_on_the_same_held_out_decisions(tmp_path, monkeypatch):
    # Four shards of rollout labels fitted whole and one shard at a time: the same held-out
    # decisions (the same measures before the fit), each read holding one shard only, a policy
    # that loads; a loss that refuses the labels does so before any training.
    torch = pytest.importorskip("torch")
    import train.distill as distill
    from agents.checkpoint import load_policy, save
    from agents.policy import PolicyNet

    torch.manual_seed(0)
    student = save(tmp_path / "student.pt", PolicyNet(hidden=[16]), {"rules": CLASSIC.to_dict(), "iteration": 0})
    distill.collect_shard(str(student), tmp_path / "shards", hands=16, seed=3, tables=4, teacher="rollout",
                          log=lambda _: None)
    assert len(list((tmp_path / "shards").glob("shard_*.npz"))) == 4
    whole = distill.fit(str(student), tmp_path / "shards", tmp_path / "whole.pt", epochs=1, batch_size=64,
                        loss="improvement", log=lambda _: None)
    read = []
    loading = distill.load_shards
    monkeypatch.setattr(distill.shards, "load_shards",  # (where read_labels looks it up)
                        lambda folder, paths=None: read.append(len(paths)) or loading(folder, paths))
    streamed = distill.fit(str(student), tmp_path / "shards", tmp_path / "streamed.pt", epochs=2, batch_size=64,
                           loss="improvement", shards_in_memory=1, log=lambda _: None)
    assert streamed["before"] == whole["before"] and streamed["examples"] == whole["examples"]
    assert set(read) == {1} and len(read) == 4 * 3  # the held-out pass, then each epoch
    load_policy(tmp_path / "streamed.pt", rules=CLASSIC)
    with pytest.raises(ValueError, match="must be 1 or more"):
        distill.fit(str(student), tmp_path / "shards", tmp_path / "x.pt", shards_in_memory=0)


def test_the_teacher_overrules_the_student_only_by_more_than_the_margin():
    from train.distill import fit_targets

    mask = np.zeros((2, 52), dtype=bool)
    mask[:, :3] = True
    values = np.full((2, 52), np.inf)
    values[0, :3] = [5.0, 4.0, 9.0]  # the student's card 0 is 1 point worse than the best: kept
    values[1, :3] = [9.0, 4.0, 4.5]  # 5 points worse: the teacher's odds, best card first
    own = np.zeros((2, 52), dtype=np.float32)
    own[:, 0], own[:, 2] = 0.9, 0.1
    target, overruled = fit_targets(values, mask, own, temperature=1.0, margin=2.0)
    assert overruled.tolist() == [False, True]
    np.testing.assert_array_equal(target[0], own[0])
    assert target[1].argmax() == 1 and target[1, 1] > target[1, 2] > target[1, 0] and target[1, 3:].sum() == 0
    np.testing.assert_allclose(target.sum(axis=1), 1, rtol=1e-6)


def test_held_out_agreement_counts_any_card_the_teacher_values_best(tmp_path):
    # Every legal card valued the same (neighbouring cards often play out alike): whatever card the
    # student plays is one of the teacher's best, so it agrees everywhere and regrets nothing. The
    # student's card 2 points worse than the others: no agreement, and 2 points of regret.
    from agents import POLICY_DIR
    from hearts_env.observe import observe
    from train.distill import fit

    state = random_states(CLASSIC, 256, 30, seed=3)
    obs, mask = observe(state).astype(np.float16), he.legal_mask(state)
    obs, mask = obs[mask.sum(axis=1) > 1], mask[mask.sum(axis=1) > 1]
    values = np.where(mask, 5.0, np.inf).astype(np.float32)
    shard = {"meta": np.array(json.dumps({"rules": CLASSIC.to_dict()})), "obs": obs,
             "mask": np.packbits(mask, axis=1), "values": values, "is_pass": np.zeros(len(obs), dtype=bool),
             "kept_obs": np.zeros((0, 629), np.float16), "kept_mask": np.zeros((0, 7), np.uint8),
             "kept_probs": np.zeros((0, 52), np.float32)}
    student = str(POLICY_DIR / "ppo_classic.pt")

    def held_out(values):
        np.savez(tmp_path / "shard_1_0000.npz", **{**shard, "values": values})
        return fit(student, tmp_path, tmp_path / "out.pt", epochs=1, loss="regression", holdout=0.5,
                   log=lambda message: None)["before"]

    assert held_out(values) == {"agreement": 1.0, "regret": 0.0}
    chosen = make(f"ckpt:{student}").act(obs.astype(np.float32), mask)
    values[np.arange(len(obs)), chosen] = 7.0
    measured = held_out(values)
    assert measured["agreement"] == 0.0 and measured["regret"] == pytest.approx(2.0)


def one_hand(state):
    """The same games, stopping when the current hand is scored (as the collected tables do)."""
    state = state.copy()
    state.final_hand[:] = state.hand_number
    return state


def test_rollout_labels_play_each_card_out_on_the_real_deal():
    # The queen position: K♠ takes Q♠ on the real deal, 2♠ leaves it with seat 2.
    from train.distill import branch, rollout_values

    state = one_hand(queen_position())
    mask = he.legal_mask(state)
    hard = make("hard", seed=0)
    values = rollout_values([branch(state, np.array([0]), np.array([0]), mask)], np.array([0]), own=hard, others=hard)[0]
    king, two = cards.parse_card("KS"), cards.parse_card("2S")
    assert values[king] >= values[two] + 13
    assert np.isfinite(values[mask[0]]).all() and np.isinf(values[~mask[0]]).all()


@pytest.mark.slow
@settings(max_examples=4, deadline=None)
@given(steps=st.integers(0, 45), seed=st.integers(0, 2**32))
@example(steps=4, seed=1)  # every game mid-pass (seat 1's second pick): the pass labels
@example(steps=20, seed=2)  # card plays
def test_batched_rollout_labels_equal_each_card_played_out_alone(steps, seed):
    # Two batches of decisions finished together give, card by card, the points of playing (or
    # passing) that card and playing the hand out alone: the bookkeeping of branches, seats and
    # cards is exact. ``own`` and ``others`` differ, so a seat mix-up would change the points.
    from agents.search import finish_hands
    from train.distill import branch, rollout_values

    state = one_hand(random_states(CLASSIC, 12, steps, seed))
    mask = he.legal_mask(state)
    rows = (mask.sum(axis=1) > 1).nonzero()[0]
    if rows.size < 2:
        return
    own, others = make("easy", seed=0), make("hard", seed=0)
    learner = state.current_player.copy()
    parts = [rows[: rows.size // 2], rows[rows.size // 2:]]
    values = rollout_values([branch(state, part, part, mask[part]) for part in parts], learner, own, others)
    assert values.shape == (rows.size, 52)
    for i, g in enumerate(np.concatenate(parts)):
        for card in mask[g].nonzero()[0]:
            alone = state.take([g])
            he.step_inplace(alone, np.array([card]))
            finish_hands(alone, learner[[g]], own, others)
            assert values[i, card] == alone.last_hand_points[0, learner[g]]
        assert np.isinf(values[i, ~mask[g]]).all()


def test_the_regression_loss_learns_only_differences_between_legal_cards():
    torch = pytest.importorskip("torch")
    from train.distill import centered_regression_loss

    mask = torch.zeros((2, 52), dtype=torch.bool)
    mask[:, :3] = True
    values = torch.zeros((2, 52))
    values[0, :3] = torch.tensor([5.0, 4.0, 9.0])
    values[1, :3] = torch.tensor([13.0, 0.0, 26.0])
    exact = torch.randn(2, 52)
    exact[:, :3] = -values[:, :3] + torch.tensor([[3.0], [-7.0]])  # minus the points plus a shift per decision
    assert centered_regression_loss(exact, values, mask).item() == pytest.approx(0, abs=1e-10)
    illegal = exact.clone()
    illegal[:, 3:] = 1e3  # illegal cards count for nothing
    assert centered_regression_loss(illegal, values, mask).item() == pytest.approx(0, abs=1e-10)
    wrong = exact.clone()
    wrong[0, 0] += 2.6  # 0.1 in units of 26 points, on one card of six: centred, 2/3 of it on that card
    expected = ((0.1 * 2 / 3) ** 2 + 2 * (0.1 / 3) ** 2) / 6
    assert centered_regression_loss(wrong, values, mask).item() == pytest.approx(expected, rel=1e-4)


def test_with_some_cards_unvalued_the_improvement_acts_among_the_valued_and_holds_the_rest():
    torch = pytest.importorskip("torch")
    from train.distill import improvement_loss

    mask = torch.zeros((2, 52), dtype=torch.bool)
    mask[:, :4] = True
    valued = mask.clone()
    valued[0, 3] = False  # decision 0: three cards valued, one not; decision 1: all four valued
    old_probs = torch.tensor([[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]])
    old = torch.log(torch.cat([old_probs, torch.full((2, 48), 1e-9)], dim=1))
    values = torch.zeros((2, 52))
    values[:, :4] = torch.tensor([[6.0, 4.0, 13.0, 0.0], [2.0, 9.0, 0.0, 5.0]])
    t = 2.0
    # The minimum: the valued cards improved among themselves, their share (0.9) and the unvalued
    # card's odds (0.1) kept; decision 1 as the all-valued loss has it.
    improved = old_probs[:, :4] * torch.exp(-values[:, :4] / t)
    target = improved.clone()
    target[0, :3] = 0.9 * improved[0, :3] / improved[0, :3].sum()
    target[0, 3] = 0.1
    target[1] = improved[1] / improved[1].sum()
    best = torch.cat([torch.log(target), torch.full((2, 48), -1e9)], dim=1).requires_grad_()
    improvement_loss(best, values, mask, old, t, valued).backward()
    assert best.grad.abs().max().item() < 1e-6
    at_best = improvement_loss(best.detach(), values, mask, old, t, valued).item()
    for nudge in ([0.3, -0.2, 0.0, 0.0], [0.0, 0.0, 0.0, 0.5]):  # within the valued cards; the unvalued card's odds
        moved = best.detach().clone()
        moved[0, :4] += torch.tensor(nudge)
        assert improvement_loss(moved, values, mask, old, t, valued).item() > at_best + 1e-5
    # The unvalued card's points count for nothing; all valued, it is the loss without ``valued``.
    scrambled = values.clone()
    scrambled[0, 3] = 26.0
    assert improvement_loss(best.detach(), scrambled, mask, old, t, valued).item() == pytest.approx(at_best, rel=1e-6)
    everything = improvement_loss(best.detach()[1:], values[1:], mask[1:], old[1:], t, valued[1:])
    assert everything.item() == pytest.approx(improvement_loss(best.detach()[1:], values[1:], mask[1:], old[1:], t).item(), rel=1e-6)


def test_the_improvement_loss_is_least_at_the_old_odds_times_exp_minus_points_over_t():
    torch = pytest.importorskip("torch")
    from train.distill import improvement_loss

    mask = torch.zeros((1, 52), dtype=torch.bool)
    mask[0, :3] = True
    old = torch.log(torch.tensor([[0.7, 0.2, 0.1] + [1e-9] * 49]))
    values = torch.zeros((1, 52))
    values[0, :3] = torch.tensor([6.0, 4.0, 13.0])
    t = 2.0
    best = torch.where(mask, old - values / t, torch.full_like(old, -1e9)).requires_grad_()
    improvement_loss(best, values, mask, old, t).backward()
    assert best.grad.abs().max().item() < 1e-6  # the minimum: no gradient
    at_best = improvement_loss(best.detach(), values, mask, old, t).item()
    for logits in (old.clone(), best.detach() + torch.tensor([0.3, -0.2, 0.0] + [0.0] * 49)):
        assert improvement_loss(logits, values, mask, old, t).item() > at_best + 1e-4
    # Linear in the points: the loss of the mean of two labels is the mean of their losses.
    other = values.clone()
    other[0, :3] = torch.tensor([0.0, 26.0, 1.0])
    mean = improvement_loss(best.detach(), (values + other) / 2, mask, old, t)
    halves = (improvement_loss(best.detach(), values, mask, old, t) + improvement_loss(best.detach(), other, mask, old, t)) / 2
    assert mean.item() == pytest.approx(halves.item(), rel=1e-6)


@pytest.mark.parametrize("name, array, says", [
    ("values", np.array(7.0), "its values is float64[], where a shard has floats[rows, 52]"),
    ("is_pass", np.zeros((2, 2, 2), bool), "its is_pass is bool[2, 2, 2], where a shard has bool[rows]"),
    ("mask", np.zeros((3, 9), np.uint8), "its mask is uint8[3, 9], where a shard has uint8[rows, 7]"),
    ("mask", np.zeros((3, 7), bool), "its mask is bool[3, 7], where a shard has uint8[rows, 7]"),
    ("values", np.zeros((5, 52), np.float32), "obs, mask, values, is_pass have"),
], ids=["scalar", "3-d", "mask-columns", "mask-bool", "rows"])
def test_a_shard_whose_arrays_are_not_a_shard_s_shapes_is_refused_in_one_line(tmp_path, name, array, says):
    from train.distill import load_shards

    shard = {"meta": np.array(json.dumps({"rules": CLASSIC.to_dict()})), "obs": np.zeros((3, 629), np.float16),
             "mask": np.zeros((3, 7), np.uint8), "values": np.zeros((3, 52), np.float32),
             "is_pass": np.zeros(3, bool), "kept_obs": np.zeros((0, 629), np.float16),
             "kept_mask": np.zeros((0, 7), np.uint8), "kept_probs": np.zeros((0, 52), np.float32)}
    np.savez(tmp_path / "shard_1_0000.npz", **{**shard, name: array})
    with pytest.raises(ValueError) as refused:
        load_shards(tmp_path)
    assert says in str(refused.value) and "\n" not in str(refused.value)
