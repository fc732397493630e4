"""The belief model (``agents.belief``, ``train/belief.py``) and the worlds dealt by it: the odds
move the cards where the model says while every constraint still holds (over real games:
tests/test_search.py's rebuilt-worlds property test), the collected labels are
exactly the cards the seat has not seen, a fit learns more than the room shares, and belief
files load safely and only as what they are."""

from __future__ import annotations

import numpy as np
import pytest

import hearts_env as he
from hearts_env import cards, worlds
from hearts_env.observe import decode, observe
from tests.test_observe import card_plays, random_states
from tests.test_worlds import OWN, classic_hidden, problem

torch = pytest.importorskip("torch")

from agents.belief import Belief, BeliefNet, load_belief, save_belief  # noqa: E402
from agents.checkpoint import CheckpointError, load_policy  # noqa: E402
from agents.search import SearchAgent  # noqa: E402

CLASSIC = he.Rules.preset("classic")
POLICY_FILE = __import__("agents").POLICY_DIR / "ppo_classic.pt"


def test_a_card_goes_where_the_belief_puts_it():
    hidden, room, may = problem(classic_hidden(OWN), [13, 13, 13], k=600)
    queen = cards.QUEEN_OF_SPADES
    belief = np.full((600, 52, 3), 1 / 3)
    belief[:, queen] = [0.02, 0.96, 0.02]  # across holds Q♠, says the model
    hands = worlds.place(hidden, room, may, np.random.default_rng(1), belief=belief)
    share = ((hands & cards.BIT[queen]) != 0).mean(axis=0)
    assert share[1] > 0.9 and share[0] < 0.06 and share[2] < 0.06
    # A flat belief is the plain draw: Q♠ by the room shares.
    plain = worlds.place(hidden, room, may, np.random.default_rng(1), belief=np.full((600, 52, 3), 1 / 3))
    np.testing.assert_allclose(((plain & cards.BIT[queen]) != 0).mean(axis=0), 1 / 3, atol=0.07)


def test_the_belief_never_breaks_a_constraint():
    # A model sure that left holds every spade, while left showed a void in spades and the room
    # is unequal: the void and the sizes win, the belief only moves the odds within them.
    hidden, room, may = problem(classic_hidden(OWN), [10, 13, 16], k=200)
    voids = np.zeros((200, 3, 4), dtype=bool)
    voids[:, 0, cards.SPADES] = True
    belief = np.full((200, 52, 3), 1e-9)
    belief[:, 13 * cards.SPADES:13 * cards.SPADES + 13, 0] = 1.0
    hands = worlds.place(hidden, room, worlds.may_hold_from_voids(voids), np.random.default_rng(2), belief=belief)
    assert not (hands[:, 0] & cards.SUIT_BITS[cards.SPADES]).any()
    assert (cards.count(hands) == room).all()
    assert (np.bitwise_or.reduce(hands, axis=1) == hidden).all()


def test_a_belief_of_the_wrong_shape_is_refused():
    hidden, room, may = problem(classic_hidden(OWN), [13, 13, 13], k=2)
    with pytest.raises(ValueError, match=r"belief must be \[N, 52, H\]"):
        worlds.place(hidden, room, may, np.random.default_rng(0), belief=np.ones((2, 52, 4)))


def test_collected_labels_are_exactly_the_unseen_cards_by_holder():
    from train.belief import collect

    obs, holders, hand = collect(64, seed=3, tables=32)
    assert len(obs) > 1000 and holders.shape == (len(obs), 52)
    assert np.unique(hand).tolist() == list(range(64))  # every hand numbered, across the batches
    pieces = decode(obs.astype(np.float32))
    seen = (pieces["hand"] > 0) | (pieces["played_by"] > 0).any(axis=1)
    np.testing.assert_array_equal(holders >= 0, ~seen)
    # Each other seat holds 13 cards less those it played.
    for holder in range(3):
        played = (pieces["played_by"][:, holder + 1] > 0).sum(axis=1)
        np.testing.assert_array_equal((holders == holder).sum(axis=1), 13 - played)


def test_a_fit_knows_more_than_the_room_shares():
    from train.belief import collect, fit, room_baseline

    obs, holders, hand = collect(1024, seed=4, tables=512)
    net, stats = fit(obs, holders, hand, hidden=(128,), epochs=3, batch_size=256, holdout=0.1, log=lambda m: None)
    assert stats["held_out_hands"] == 102  # whole hands held out: none of their deals is trained on
    assert 0.9 < room_baseline(holders) < np.log(3)  # the shares know the sizes, not where the cards are
    assert stats["held_out_loss"] < stats["room_baseline"] - 0.02
    odds = Belief(net).holder_odds(obs[:10].astype(np.float32))
    np.testing.assert_allclose(odds.sum(axis=2), 1, rtol=1e-5)


def test_belief_files_load_safely_and_only_as_belief_models(tmp_path):
    net = BeliefNet((16,))
    path = save_belief(tmp_path / "belief.pt", net, {"rules": CLASSIC.to_dict()})
    loaded = load_belief(path, rules=CLASSIC)
    obs = observe(he.init(CLASSIC, 2, seed=0))
    np.testing.assert_allclose(loaded.holder_odds(obs), Belief(net).holder_odds(obs), rtol=1e-6)
    with pytest.raises(CheckpointError, match="is a 'belief' model, not a policy"):
        load_policy(path)
    with pytest.raises(CheckpointError, match="trained for the 'classic' rules and cannot play the 'two_player' rules: num_players 2 is not"):
        load_belief(path, rules=he.Rules.preset("two_player"))
    with pytest.raises(CheckpointError, match="not a belief model"):
        load_belief(POLICY_FILE)
    two = save_belief(tmp_path / "two.pt", net, {"rules": he.Rules.preset("two_player").to_dict()})
    with pytest.raises(CheckpointError, match="made for 2 players; a belief model is for four"):
        load_belief(two)
    forged = tmp_path / "forged.pt"  # metadata naming larger layers than the weights stored
    payload = torch.load(path, weights_only=True)
    payload["meta"] = payload["meta"].replace('"hidden": [16]', '"hidden": [4096]')
    torch.save(payload, forged)
    with pytest.raises(CheckpointError, match="needs"):
        load_belief(forged)




def test_the_belief_command_writes_a_file_the_search_player_deals_by(tmp_path):
    from tests.commands import hearts

    out = tmp_path / "belief.pt"
    result = hearts("belief", str(out), "--hands", "96", "--workers", "2", "--epochs", "1", "--hidden", "16")
    assert result.returncode == 0, result.stderr
    assert "room baseline" in result.stderr and "held_out_loss" in result.stdout
    agent = SearchAgent(CLASSIC, determinizations=2, seed=0, belief=str(out))
    obs, mask = card_plays(random_states(CLASSIC, 4, 30, 1))
    assert mask[np.arange(len(obs)), agent.act(obs, mask)].all()


@pytest.mark.parametrize("args, expected", [
    (["--hands", "0"], "argument --hands: must be 1 or more, got 0"),
    (["--opponent", "nobody"], "--opponent 'nobody'"),
    (["--viewer", "expert"], "slow searching player"),
])
def test_the_belief_command_refuses_bad_arguments(tmp_path, args, expected):
    from tests.commands import hearts

    result = hearts("belief", str(tmp_path / "b.pt"), *args)
    assert result.returncode == 2 and expected in result.stderr
    assert not (tmp_path / "b.pt").exists()


@pytest.mark.parametrize("kind", ["belief\nkind", "x" * 10000, 7])
def test_a_file_of_another_kind_is_refused_in_one_short_line(tmp_path, kind):
    path = save_belief(tmp_path / "belief.pt", BeliefNet((8,)), {"rules": CLASSIC.to_dict()})
    payload = torch.load(path, weights_only=True)
    payload["meta"] = payload["meta"].replace('"kind": "belief"', f'"kind": {__import__("json").dumps(kind)}')
    torch.save(payload, path)
    for load in (load_belief, load_policy):
        with pytest.raises(CheckpointError) as error:
            load(path)
        assert "\n" not in str(error.value) and len(str(error.value)) < 300


def test_the_expert_says_what_is_missing_without_its_belief_model(monkeypatch, tmp_path):
    import agents

    from agents import AgentSpecError, make

    monkeypatch.setattr(agents, "EXPERT_BELIEF", tmp_path / "gone.pt")
    with pytest.raises(AgentSpecError, match="belief model .*gone.pt, which is missing"):
        make("expert")
