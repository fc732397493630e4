"""The search player: the worlds it rebuilds show the seat exactly what it saw, hidden cards do not
change its choice, and it avoids a card that plainly loses. (Distillation: tests/test_distill.py.)"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hearts_env as he
from agents import builtin, is_slow, make
import agents.search as search_module
from agents.search import SearchAgent
from hearts_env import cards, loop
from hearts_env.observe import decode, observe
from tests.scripted import game, play
from tests.test_observe import random_states, relabel_hidden

CLASSIC = he.Rules.preset("classic")


class FixedOdds:
    """A belief model giving the same odds for every observation."""

    def __init__(self, odds: np.ndarray):
        self.odds = odds

    def holder_odds(self, observation):
        return np.broadcast_to(self.odds, (len(observation), 52, 3)).copy()


@pytest.mark.parametrize("sharp_belief", [False, True], ids=["uniform", "dealt-by-a-belief"])
@settings(max_examples=8, deadline=None)
@given(steps=st.integers(12, 60), seed=st.integers(0, 2**32))
def test_rebuilt_worlds_show_the_seat_exactly_what_it_saw(sharp_belief, steps, seed):
    state = random_states(CLASSIC, 8, steps, seed)
    rows = (state.phase == he.PLAY).nonzero()[0]
    if not rows.size:
        return
    obs, mask = observe(state)[rows], he.legal_mask(state)[rows]
    k = 3
    # Sharp, arbitrary odds: the belief moves the cards, never past what the seat saw.
    belief = FixedOdds(np.random.default_rng(seed).dirichlet([0.3] * 3, size=52)) if sharp_belief else None
    worlds = SearchAgent(CLASSIC, determinizations=k, seed=seed, belief=belief).determinize(obs, mask, k)
    np.testing.assert_array_equal(observe(worlds), np.repeat(obs, k, axis=0))
    np.testing.assert_array_equal(he.legal_mask(worlds), np.repeat(mask, k, axis=0))
    for i, g in enumerate(np.repeat(rows, k)):
        me = state.current_player[g]
        hands = worlds.hands[i]
        # The cards in hand and the cards played make up the deck, each once.
        assert int(cards.count(np.bitwise_or.reduce(np.append(hands, worlds.played[i])))) == 52
        assert int(cards.count(hands).sum() + cards.count(worlds.played[i]).sum()) == 52
        for r in range(4):
            real = (me + r) % 4
            assert cards.count(hands[r]) == cards.count(state.hands[g, real])  # hand sizes
            for suit in range(4):
                if state.voids[g, real, suit]:
                    assert not any(c // 13 == suit for c in cards.cards_of(hands[r]))
        # The cards this seat passed and that are still unplayed are with the seat it passed to.
        offset = int(he.passing.pass_offset(state, np.array([g]))[0])
        if offset:
            unplayed = state.passed[g, me] & ~np.bitwise_or.reduce(state.played[g])
            assert hands[offset] & unplayed == unplayed


def test_hidden_cards_do_not_change_the_choice():
    rng = np.random.default_rng(3)
    state = random_states(CLASSIC, 16, 40, 3)
    compared = 0
    for g in range(state.batch_size):
        seat = state.current_player[g]
        if state.phase[g] != he.PLAY or he.legal_mask(state)[g].sum() < 2:
            continue
        other = relabel_hidden(state, g, seat, rng)
        if other is None:
            continue
        mine = state.take([g])
        a = SearchAgent(CLASSIC, determinizations=4, seed=7).act(observe(mine), he.legal_mask(mine))
        b = SearchAgent(CLASSIC, determinizations=4, seed=7).act(observe(other), he.legal_mask(other))
        assert a.tolist() == b.tolist()
        compared += 1
    assert compared >= 3


@settings(max_examples=5, deadline=None)
@given(steps=st.integers(0, 200), seed=st.integers(0, 2**32 - 1))
def test_the_expert_plays_legal_cards_and_hidden_cards_do_not_change_them(steps, seed):
    """Every phase (passes, forced and searched plays): a legal card, the same for a state whose
    hidden cards were re-dealt."""
    pytest.importorskip("torch")
    state = random_states(CLASSIC, 12, steps, seed)
    live = ~state.done
    obs, mask = observe(state)[live], he.legal_mask(state)[live]
    actions = make("expert:4", seed=1).act(obs, mask)
    assert mask[np.arange(len(actions)), actions].all()
    rng = np.random.default_rng(seed)
    for g in np.flatnonzero(live)[:3]:
        other = relabel_hidden(state, g, state.current_player[g], rng)
        if other is not None:
            mine = state.take([g])
            a = make("expert:4", seed=2).act(observe(mine), he.legal_mask(mine))
            assert a.tolist() == make("expert:4", seed=2).act(observe(other), he.legal_mask(other)).tolist()


def queen_position():
    """Seat 0 to play last on a spade trick with Q♠ on it, holding K♠ and 2♠."""
    state = game(CLASSIC, {0: "2C KS 2S 3D 4D 5D 6D 3H 4H 5H 6H 7H 8H",
                           1: "AC 5S 5C 6C 7C 8C 9C TC 7D 8D 9D TD JD",
                           2: "3C QS JC QC KC QD KD AD 9H TH JH 4S 6S",
                           3: "4C 3S 7S 8S 9S TS JS AS 2D QH KH AH 2H"})
    return play(state, "2C AC 3C 4C 5S QS 3S")


def test_it_ducks_the_queen_of_spades_it_could_win():
    # Seat 1 wins the first trick with A♣ and leads 5♠; Q♠ and 3♠ follow. Seat 0, last to play,
    # holds K♠ and 2♠ and no hand to shoot the moon with: K♠ takes the queen (13 points), 2♠
    # leaves it with seat 2.
    state = queen_position()
    assert state.current_player[0] == 0 and legal_texts(state) >= {"KS", "2S"}
    agent = SearchAgent(CLASSIC, determinizations=8, seed=0)
    obs, mask = observe(state), he.legal_mask(state)
    values = agent.card_values(obs, mask)[0]
    king, two = cards.parse_card("KS"), cards.parse_card("2S")
    assert values[king] > values[two] + 8
    assert np.isinf(values[~mask[0]]).all()
    assert agent.act(obs, mask).tolist() == [two]


def test_the_searching_seat_can_follow_its_own_policy_in_the_rollouts(monkeypatch):
    # In the position above, after seat 0's card each world holds 11 more of its decisions: the
    # ``own`` agent plays exactly those (8 worlds x 2 legal cards x 11), the rollout bot the rest;
    # once the rollouts are made to ask about every decision, forced ones included.
    state = queen_position()
    hard = make("hard", seed=0)
    seen = []

    def own(obs, mask):
        seen.append(mask.sum(axis=1))
        return hard.act(obs, mask)

    agent = SearchAgent(CLASSIC, own=own, determinizations=8, seed=0)
    play = search_module.loop.play
    with monkeypatch.context() as patch:
        patch.setattr(search_module.loop, "play", lambda *a, **k: play(*a, **dict(k, forced_without_asking=False)))
        asking_everything = agent.card_values(observe(state), he.legal_mask(state))
    assert sum(len(rows) for rows in seen) == 8 * 2 * 11
    forced = sum(int((rows == 1).sum()) for rows in seen)
    assert forced >= 8 * 2  # at least the last trick of every world

    # As it runs (a fresh agent with the same seed, so the same worlds): a single legal card is
    # played without asking, and the values are the same.
    seen.clear()
    agent = SearchAgent(CLASSIC, own=own, determinizations=8, seed=0)
    assert np.array_equal(agent.card_values(observe(state), he.legal_mask(state)), asking_everything)
    assert sum(len(rows) for rows in seen) == 8 * 2 * 11 - forced
    assert all((rows > 1).all() for rows in seen)


def test_the_policy_search_player_searches_over_the_shipped_policy():
    pytest.importorskip("torch")
    from agents import POLICY_SEARCH_DETERMINIZATIONS

    agent = make("ppo-classic-search", seed=0)
    assert agent.determinizations == POLICY_SEARCH_DETERMINIZATIONS
    assert type(agent.rollout) is type(make("hard")) and agent.own is agent.base
    states = random_states(CLASSIC, 64, 30, 5)  # its own later cards and passes are the policy's
    obs, mask = observe(states), he.legal_mask(states)
    policy = make("ppo-classic").act(obs, mask).tolist()
    assert agent.own.act(obs, mask).tolist() == policy
    state = queen_position()
    assert agent.act(observe(state), he.legal_mask(state)).tolist() == [cards.parse_card("2S")]
    with pytest.raises(ValueError, match="classic"):
        make("ppo-classic-search", rules="two_player")
    assert "ppo-classic-search" not in builtin("classic") and "ppo-classic-search" in builtin("classic", slow=True)


def legal_texts(state):
    return {cards.card_text(c) for c in cards.cards_of(state.legal[0])}


def test_two_player_rules_are_refused_and_default_line_ups_leave_it_out():
    with pytest.raises(ValueError, match="four-player"):
        SearchAgent("two_player")
    with pytest.raises(ValueError, match="classic"):
        make("search", rules="two_player")
    assert "search" not in builtin("classic") and "search" in builtin("classic", slow=True)


def test_search_normal_finishes_its_deals_with_the_normal_bot():
    agent = make("search-normal", seed=0)
    assert type(agent.rollout).__name__ == type(make("normal")).__name__ != type(make("hard")).__name__
    assert is_slow("search-normal") and "search-normal" in builtin("classic", slow=True)
    assert "search-normal" not in builtin("two_player", slow=True)


# ---- pinned decisions: what the search players play on fixed real positions, card for card.
# Speed work on the search (its rollouts, the hard bot, the loop) must keep these lists; a change
# that alters them changes the player and needs its own reasons (and new figures in docs).

def hard_decisions(games=4, seed=11, every=4):
    """Real card plays with a choice, from four hard bots playing ``games`` hands."""
    state = he.init(CLASSIC, games, seed)
    seen = []
    loop.play(state, [make("hard")], [0, 0, 0, 0], until="hand",
              on_decision=lambda d: seen.append((d.observation.copy(), d.mask.copy())))
    obs = np.concatenate([o for o, _ in seen])
    mask = np.concatenate([m for _, m in seen])
    choice = (decode(obs)["phase"][:, 1] > 0) & (mask.sum(axis=1) > 1)
    rows = choice.nonzero()[0][::every]
    return obs[rows], mask[rows]


PINNED_SEARCH = [5, 6, 48, 2, 47, 41, 39, 48, 4, 42, 21, 2, 23, 19, 19, 24, 48, 49, 18, 32, 49, 2, 41, 19,
                 15, 2, 35, 24, 18, 49, 16, 3, 14, 8, 50, 25, 23, 2, 6, 48, 4, 32]
PINNED_CHUNKED = [5, 12, 18, 2, 47, 41, 44, 13, 7, 45, 14, 2, 23, 25, 39, 24, 50, 49, 18, 30, 49, 20, 34, 19,
                  15, 2, 35, 24, 13, 49, 16, 3, 31, 8, 50, 25, 23, 2, 6, 48, 4, 32]
PINNED_VALUES = [[3.25, 3.25], [13.875, 13.875, 13.875, 13.875, 12.0],
                 [1.875, 1.875, 1.5, 1.5, 2.5, 2.5, 2.5, 1.625, 1.625, 1.625],
                 [12.625, 12.625, 12.625, 13.5, 18.125, 16.25, 16.25, 16.25, 17.375, 18.625, 18.625]]
PINNED_POLICY_SEARCH = [1, 8, 18, 4, 48, 46, 44, 21, 7, 45, 1, 2, 24, 23, 43, 6]
PINNED_EXPERT = [5, 12, 48, 2, 47, 46, 44, 3, 7, 45, 1, 2, 19, 23, 43, 38]  # worlds dealt by belief_classic.pt


@pytest.fixture(scope="module")
def pinned_decisions():
    obs, mask = hard_decisions()
    assert len(obs) == 42
    return obs, mask


def test_the_search_plays_the_pinned_cards(pinned_decisions):
    obs, mask = pinned_decisions
    assert make("search", seed=0).act(obs, mask).tolist() == PINNED_SEARCH
    # Several chunks of decisions in one call (the worlds are sampled chunk by chunk).
    assert SearchAgent(CLASSIC, determinizations=4, chunk=5, seed=1).act(obs, mask).tolist() == PINNED_CHUNKED
    values = SearchAgent(CLASSIC, determinizations=8, seed=2).card_values(obs[:4], mask[:4])
    assert [row[np.isfinite(row)].tolist() for row in values] == PINNED_VALUES


def test_rollouts_in_pieces_play_the_same(pinned_decisions, monkeypatch):
    import agents.search

    obs, mask = pinned_decisions
    monkeypatch.setattr(agents.search, "ROLLOUT_GAMES", 333)  # pieces of 256 to 333 games
    assert make("search", seed=0).act(obs, mask).tolist() == PINNED_SEARCH
    values = SearchAgent(CLASSIC, determinizations=8, seed=2).card_values(obs[:4], mask[:4])
    assert [row[np.isfinite(row)].tolist() for row in values] == PINNED_VALUES


def test_the_policy_search_plays_the_pinned_cards(pinned_decisions):
    pytest.importorskip("torch")
    obs, mask = pinned_decisions
    assert make("ppo-classic-search", seed=0).act(obs[:16], mask[:16]).tolist() == PINNED_POLICY_SEARCH


def test_the_expert_plays_the_pinned_cards(pinned_decisions):
    pytest.importorskip("torch")
    obs, mask = pinned_decisions
    assert make("expert", seed=0).act(obs[:16], mask[:16]).tolist() == PINNED_EXPERT


def test_the_expert_searches_only_the_cards_its_policy_rates_highest(pinned_decisions):
    pytest.importorskip("torch")
    from agents import EXPERT_CANDIDATES, EXPERT_CONFIDENT, EXPERT_DETERMINIZATIONS

    obs, mask = pinned_decisions
    expert = make("expert", seed=0)
    assert (expert.determinizations, expert.candidates, expert.confident) == (
        EXPERT_DETERMINIZATIONS, EXPERT_CANDIDATES, EXPERT_CONFIDENT)
    policy_cards, odds = expert.base.policy(obs, mask)
    searched = expert.searched_cards(mask, odds, policy_cards)
    rows = np.arange(len(obs))
    legal_odds = np.where(mask, odds, -1.0)
    top = np.zeros_like(mask)
    np.put_along_axis(top, np.argsort(-legal_odds, axis=1)[:, :EXPERT_CANDIDATES], True, axis=1)
    sure = legal_odds.max(axis=1) >= EXPERT_CONFIDENT
    assert sure.any() and (~sure).any()
    assert (searched[sure].sum(axis=1) == 1).all() and searched[rows, policy_cards].all()
    assert np.array_equal(searched[~sure], (top & mask)[~sure])
    actions = make("expert", seed=0).act(obs, mask)
    assert searched[rows, actions].all() and np.array_equal(actions[sure], policy_cards[sure])
    assert make("expert:8", seed=0).determinizations == 8
    for spec in ("expert:0", "expert:x", "expert:1e3"):
        with pytest.raises(ValueError, match="expert:N takes a whole number"):
            make(spec)
    with pytest.raises(ValueError, match="classic"):
        make("expert:8", rules="two_player")
    with pytest.raises(ValueError, match="odds"):
        SearchAgent(CLASSIC, base="hard", candidates=2)


def test_hearts_bench_measures_the_search_player_on_real_card_plays():
    from hearts_app import bench

    obs, mask = bench.search_decisions(CLASSIC)
    assert len(obs) == bench.SEARCH_DECISIONS
    assert ((decode(obs)["phase"][:, 1] > 0) & (mask.sum(axis=1) > 1)).all()
    assert len({o.tobytes() for o in obs}) == len(obs)
    result = bench.bench_search(CLASSIC, "search", seconds=0)
    assert (result.name, result.batch_size) == ("agent:search", bench.SEARCH_DECISIONS)
    assert result.decisions_per_s > 0
    assert bench.is_search_agent("search") and bench.is_search_agent("expert:8") and not bench.is_search_agent("hard")
    for spec in ("expert", "ppo-classic-search"):
        assert (spec in bench.default_agents()) == (spec in builtin(slow=True))
    # Rules it does not play: skipped with a word, not a crash.
    said = []
    results = bench.run(he.Rules.preset("two_player"), batch_sizes=(2,), seconds=0, with_open_spiel=False,
                        with_envs=False, agent_specs=("search",), progress=said.append)
    assert not [r for r in results if r.name.startswith("agent:")]
    assert any("search skipped" in line for line in said)
