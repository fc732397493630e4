"""The value model (``agents.value``, ``train/value.py``) and the search that finishes its deals with
it: the whole-deal encoding of a concrete deal by card name, the seats turned back from the leader's,
the labels of collected hands, value files that load safely and only as what they are, the value
search (the rollout search when it looks to the hand's end; legal cards that hidden cards do not
change) and the ``hearts value`` command."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hearts_env as he
from hearts_env import cards
from tests.scripted import game, legal, play
from tests.test_observe import card_plays, random_states
from tests.test_search import relabel_hidden

torch = pytest.importorskip("torch")

from agents.belief import BeliefNet, save_belief  # noqa: E402
from agents.checkpoint import CheckpointError  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from agents.value import CODE_WIDTH, Value, ValueNet, encode, features, load_value, save_value  # noqa: E402

CLASSIC = he.Rules.preset("classic")
CLUBS_TRICK = "2C 3C AC 2S"  # seat 2 wins with the ace and leads the second trick
SEAT_3 = "QS AS KS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"  # all spades: void in clubs


def after_first_trick() -> he.State:
    return play(game(CLASSIC, {0: "2C KH", 1: "3C", 2: "AC", 3: SEAT_3}), CLUBS_TRICK)


def test_the_deal_is_encoded_from_the_leaders_seat():
    state = after_first_trick()
    assert state.current_player[0] == 2
    codes, leader = encode(state)
    assert codes.shape == (1, CODE_WIDTH) and leader.tolist() == [2]
    holder = codes[0, :52]
    # Relative to seat 2: seat 2 is 0, seat 3 is 1, seat 0 is 2, seat 1 is 3.
    assert holder[cards.parse_card("QS")] == 1 and holder[cards.parse_card("KH")] == 2
    assert [holder[cards.parse_card(c)] for c in CLUBS_TRICK.split()] == [-1] * 4
    assert (holder >= 0).sum() == 48 and codes[0, 52:].tolist() == [0, 0, 0, 0, 0]


def test_points_and_hearts_broken_are_encoded_per_relative_seat():
    # Seat 0 holds the 2♣ and twelve hearts: no diamonds, so it sloughs K♥ on seat 2's A♦, which wins.
    hearts = " ".join(f"{rank}H" for rank in "23456789TJQK")
    state = play(game(CLASSIC, {0: "2C " + hearts, 1: "3C 2D", 2: "AC AD", 3: SEAT_3}), CLUBS_TRICK)
    state = play(state, "AD 3S KH 2D")
    codes, leader = encode(state)
    assert leader.tolist() == [2]  # A♦ won: seat 2 leads again, and took the heart
    assert codes[0, 52:56].tolist() == [1, 0, 0, 0] and codes[0, 56] == 1


def test_a_state_mid_trick_is_refused():
    with pytest.raises(ValueError, match="start of a trick"):
        state = after_first_trick()
        encode(play(state, sorted(legal(state))[0]))


def test_features_are_one_hot_holders_points_and_hearts():
    codes, _ = encode(after_first_trick())
    x = features(torch.as_tensor(codes))
    assert x.shape == (1, 52 * 4 + 5)
    holders = x[0, :208].view(52, 4)
    assert holders.sum().item() == 48 and holders[cards.parse_card("QS")].tolist() == [0, 1, 0, 0]


def test_features_equal_a_plain_one_hot_of_random_codes():
    codes = torch.randint(-1, 4, (300, CODE_WIDTH), dtype=torch.int8)
    codes[:, 52:56] = torch.randint(0, 27, (300, 4), dtype=torch.int8)
    codes[:, 56] = torch.randint(0, 2, (300,), dtype=torch.int8)
    holders = torch.nn.functional.one_hot(codes[:, :52].long() + 1, 5)[..., 1:].reshape(300, -1).float()
    expected = torch.cat([holders, codes[:, 52:56].float() / 26, codes[:, 56:].float()], dim=1)
    assert torch.equal(features(codes), expected)


def test_predicted_points_come_back_in_absolute_seats():
    net = ValueNet((8,))
    with torch.no_grad():
        for layer in (net.points, net.moon):
            layer.weight.zero_()
            layer.bias.zero_()
        net.points.bias.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]) / 26)  # relative seats 0..3
    points = Value(net).hand_points(after_first_trick())  # leader: seat 2
    np.testing.assert_allclose(points, [[3.0, 4.0, 1.0, 2.0]], rtol=1e-6)


def test_collected_labels_are_the_hands_points_from_the_leaders_seat():
    from train.value import collect

    examples = collect(64, seed=3, players=("hard", "random"), tables=32)
    points, moon, codes = examples["points"].astype(int), examples["moon"], examples["codes"]
    assert len(points) == 64 * 13 and np.bincount(examples["hand"]).tolist() == [13] * 64
    assert set(np.unique(points.sum(axis=1))) <= {26, 78}
    shot = moon < 4
    assert (points.sum(axis=1)[shot] == 78).all() and (points[shot.nonzero()[0], moon[shot]] == 0).all()
    held = (codes[:, :52] >= 0).sum(axis=1)
    assert (held == 4 * examples["tricks_left"]).all()
    # Points taken so far never exceed what the hand gives (moons aside).
    assert (codes[~shot, 52:56] <= points[~shot]).all()


def test_a_fit_learns_more_than_the_mean():
    from train.value import collect, fit

    examples = collect(600, seed=4, players=("hard",), tables=600)
    net, report = fit(examples, hidden=(64,), epochs=4, batch_size=128, learning_rate=3e-3, holdout=0.1,
                      log=lambda _: None)
    # 600 hands are few, but with one trick left the whole deal says nearly all (a wrong encoding would not).
    last, first = report["by_tricks_left"][1], report["by_tricks_left"][13]
    assert last["rmse"] < 0.8 * last["spread"] and last["rmse"] < first["rmse"] and report["rmse"] < report["spread"]
    assert sum(row["examples"] for row in report["moon_calibration"]) == report["held_out"]


def test_value_files_load_safely_and_only_as_value_models(tmp_path):
    net = ValueNet((16,))
    path = save_value(tmp_path / "value.pt", net, {"rules": CLASSIC.to_dict()})
    state = after_first_trick()
    np.testing.assert_allclose(load_value(path, rules=CLASSIC).hand_points(state), Value(net).hand_points(state),
                               rtol=1e-6)
    with pytest.raises(CheckpointError, match="trained for the 'classic' rules and cannot play the 'two_player' rules: num_players 2"):
        load_value(path, rules=he.Rules.preset("two_player"))
    belief = save_belief(tmp_path / "belief.pt", BeliefNet((8,)), {"rules": CLASSIC.to_dict()})
    with pytest.raises(CheckpointError, match="is a 'belief' model, not a value model"):
        load_value(belief)
    two = save_value(tmp_path / "two.pt", net, {"rules": he.Rules.preset("two_player").to_dict()})
    with pytest.raises(CheckpointError, match="four-player games"):
        load_value(two)
    payload = torch.load(path, weights_only=True)
    payload["meta"] = payload["meta"].replace('"encoding_version": 1', '"encoding_version": 9')
    torch.save(payload, tmp_path / "future.pt")
    with pytest.raises(CheckpointError, match="encoding v9; this version reads v1"):
        load_value(tmp_path / "future.pt")


def test_the_value_search_plays_legal_cards_that_hidden_cards_do_not_change(tmp_path):
    path = save_value(tmp_path / "value.pt", ValueNet((16,)), {"rules": CLASSIC.to_dict()})
    state = random_states(CLASSIC, 24, 30, 5)
    obs, mask = card_plays(state)
    chosen = SearchAgent(CLASSIC, determinizations=4, seed=0, value=str(path), lookahead=2).act(obs, mask)
    assert mask[np.arange(len(obs)), chosen].all()
    # The same game with the cards this seat has not seen dealt otherwise: the same card (it sees
    # only its observation, though the value model reads whole deals: of its own sampled worlds).
    rng, compared = np.random.default_rng(5), 0
    for g in np.flatnonzero(state.phase == he.PLAY)[:6]:
        other = relabel_hidden(state, g, state.current_player[g], rng)
        if other is None:
            continue
        mine = state.take([g])
        a = SearchAgent(CLASSIC, determinizations=4, seed=2, value=str(path), lookahead=2).act(*card_plays(mine))
        b = SearchAgent(CLASSIC, determinizations=4, seed=2, value=str(path), lookahead=2).act(*card_plays(other))
        assert a.tolist() == b.tolist()
        compared += 1
    assert compared >= 2
    with pytest.raises(ValueError, match="value must be a value model"):
        SearchAgent(CLASSIC, value=3)


def test_a_lookahead_to_the_end_of_the_hand_is_the_rollout_search(tmp_path):
    # Played thirteen tricks on, every deal ends before the value model is asked: the same cards as
    # the search that plays its deals to the end (the same deals, from the same seed).
    path = save_value(tmp_path / "value.pt", ValueNet((16,)), {"rules": CLASSIC.to_dict()})
    obs, mask = card_plays(random_states(CLASSIC, 24, 20, 7))
    rollout = SearchAgent(CLASSIC, determinizations=3, seed=1)
    valued = SearchAgent(CLASSIC, determinizations=3, seed=1, value=str(path), lookahead=13)
    np.testing.assert_array_equal(valued.card_values(obs, mask), rollout.card_values(obs, mask))
    # One trick on, the untrained model's guesses decide instead.
    short = SearchAgent(CLASSIC, determinizations=3, seed=1, value=str(path), lookahead=1)
    assert not np.array_equal(short.card_values(obs, mask), rollout.card_values(obs, mask))
    with pytest.raises(ValueError, match="lookahead must be 1 trick or more"):
        SearchAgent(CLASSIC, value=str(path), lookahead=0)


def test_expert_value_says_what_is_missing_without_its_value_model(monkeypatch, tmp_path):
    import agents
    from agents import AgentSpecError, make

    monkeypatch.setattr(agents, "EXPERT_VALUE", tmp_path / "gone.pt")
    with pytest.raises(AgentSpecError, match="value model .*gone.pt, which is missing"):
        make("expert-value")
    with pytest.raises(AgentSpecError, match="expert-value:N takes a whole number"):
        make("expert-value:0")


def test_the_value_command_writes_a_file_the_search_player_finishes_its_deals_with(tmp_path):
    from tests.commands import hearts

    out = tmp_path / "value.pt"
    result = hearts("value", str(out), "--hands", "96", "--workers", "2", "--epochs", "1", "--hidden", "16",
                    "--players", "hard,random")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["players"] == ["hard", "random"] and stats["examples"] == 96 * 13 and "moon_calibration" in stats
    assert "held-out error" in result.stderr
    agent = SearchAgent(CLASSIC, determinizations=2, seed=0, value=str(out), lookahead=2)
    obs, mask = card_plays(random_states(CLASSIC, 4, 30, 1))
    assert mask[np.arange(len(obs)), agent.act(obs, mask)].all()


@pytest.mark.parametrize("args, expected", [
    (["--hands", "0"], "argument --hands: must be 1 or more, got 0"),
    (["--players", "hard,nobody"], "--players 'nobody'"),
    (["--players", "expert"], "slow searching player"),
    (["--players", " , "], "has an empty name"),
    (["--players", "hard,,easy"], "--players 'hard,,easy' has an empty name"),
    (["--hidden", "0"], "argument --hidden: must be 1 or more, got 0"),
    (["--hidden", "100000000"], "argument --hidden: must be at most 8,192 units"),
    (["--workers", "100000"], "must be at most 64 worker processes"),
])
def test_the_value_command_refuses_bad_arguments(tmp_path, args, expected):
    from tests.commands import hearts

    result = hearts("value", str(tmp_path / "v.pt"), *args)
    assert result.returncode == 2 and expected in result.stderr, result.stderr
    assert not (tmp_path / "v.pt").exists()


def test_killing_the_value_command_ends_its_workers(tmp_path):
    """SIGKILL of ``hearts value`` while its workers collect: the workers end with it (train.workers)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.commands import ROOT

    command = subprocess.Popen([sys.executable, "-m", "hearts_app.cli", "value", str(tmp_path / "v.pt"),
                                "--hands", "2000000", "--workers", "2"], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)

    def children() -> list[int]:
        found = subprocess.run(["pgrep", "-P", str(command.pid)], capture_output=True, text=True).stdout.split()
        return [int(pid) for pid in found]

    deadline = time.monotonic() + 120
    while len(children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    workers = children()
    assert len(workers) >= 2, "the workers never started"
    os.kill(command.pid, signal.SIGKILL)
    command.wait()
    deadline = time.monotonic() + 20
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in workers if os.path.exists(f"/proc/{pid}") and
                 open(f"/proc/{pid}/stat").read().split()[2] != "Z"]
    assert not alive, f"workers {alive} outlived the command"
