"""Property tests: the engine against an independent reference, and invariants over many random games.

* (a) ``test_engine_matches_reference*``: engine and ``tests/reference.py`` stepped side by side
  from the same deals; legal sets, seats, hands and points compared at every decision.
* (b)+(c) ``test_random_batches_*``: thousands of random games per preset, invariants checked
  vectorised after every step (card conservation, hand points sums, finished games frozen).
* (d) ``test_batched_equals_alone``, (e) ``test_illegal_action_*``, (f) ``test_finished_games_*``,
  (g) ``test_deal_*``.

Random choices come from seeded NumPy generators whose seeds Hypothesis draws, so every failure
replays exactly.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import hearts_env as he
from hearts_env import cards
from hearts_env.state import OVER, PASS, PLAY

from .reference import (
    HEARTS,
    JACK_OF_DIAMONDS,
    QUEEN_OF_SPADES,
    ReferenceGame,
    deck_of,
    point_cards_of,
    suit,
)

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)

CLASSIC = he.Rules.preset("classic")
TWO = he.Rules.preset("two_player")

#: Every preset and the option variants the rule texts name.
VARIANTS: dict[str, he.Rules] = {
    "classic": CLASSIC,
    "quick": he.Rules.preset("quick"),
    "long": he.Rules.preset("long"),
    "two_player": TWO,
    "queen_waits": CLASSIC.replace(queen_waits_for_hearts=True),
    "queen_breaks": CLASSIC.replace(queen_breaks_hearts=True),
    "queen_waits_and_breaks": CLASSIC.replace(queen_waits_for_hearts=True, queen_breaks_hearts=True),
    "no_first_trick_protection": CLASSIC.replace(first_trick_protection=False),
    "hearts_need_not_break": CLASSIC.replace(hearts_must_be_broken=False),
    "unbroken_queen_only": CLASSIC.replace(hearts_must_be_broken=False, queen_waits_for_hearts=True),
    "jack_of_diamonds": CLASSIC.replace(jack_of_diamonds_bonus=True),
    "moon_subtract": CLASSIC.replace(moon="subtract_from_self"),
    "moon_choice": CLASSIC.replace(moon="shooters_choice", target_score=50),
    "moon_off": CLASSIC.replace(moon="off"),
    "choice_jack_quick": he.Rules.preset("quick").replace(
        moon="shooters_choice", jack_of_diamonds_bonus=True, queen_waits_for_hearts=True
    ),
    "pass_one_across": CLASSIC.replace(pass_count=1, pass_cycle=("across", "left")),
    "pass_all_right": CLASSIC.replace(pass_count=13, pass_cycle=("right",), target_score=60),
    "two_player_moon_subtract": TWO.replace(moon="subtract_from_self"),
    "two_player_moon_choice": TWO.replace(moon="shooters_choice"),
    "two_player_moon_off": TWO.replace(moon="off", target_score=60),
    "two_player_queen_rules": TWO.replace(queen_waits_for_hearts=True, queen_breaks_hearts=True),
    "two_player_protected_passing": TWO.replace(
        first_trick_protection=True, pass_cycle=("left", "right", "none"), target_score=60
    ),
    "two_player_no_trump": TWO.replace(trump_suit=None, hearts_must_be_broken=False),
    "four_dead_cards": he.Rules.preset("quick").replace(
        dead_cards=4, opening_lead=("3C", "2C", "4C", "5C", "6C"), moon="shooters_choice"
    ),
    "spades_trump": he.Rules.preset("quick").replace(trump_suit="S", moon="subtract_from_self"),
}
PRESETS = ["classic", "quick", "long", "two_player"]
ARRAY_FIELDS = list(he.init(CLASSIC, 1).arrays())


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def bits(card_set) -> int:
    return sum(1 << int(c) for c in card_set)


def text(card_set) -> str:
    return " ".join(cards.card_text(c) for c in sorted(card_set))


def describe(ref: ReferenceGame) -> str:
    """The deal and the actions so far, enough to replay a failure by hand."""
    hands = "; ".join(f"seat {s}: {text(h)}" for s, h in enumerate(ref.dealt))
    return (
        f"hand_number={ref.hand_number} scores={ref.scores} dead=[{text(ref.dead)}] dealt=[{hands}] "
        f"actions=[{' '.join(cards.card_text(a) for a in ref.history)}]"
    )


def ref_from_state(state: he.State, i: int) -> ReferenceGame:
    """A reference hand built from the cards the engine dealt to game ``i``."""
    p = state.num_players
    return ReferenceGame(
        state.rules,
        [cards.cards_of(state.dealt[i, s]) for s in range(p)],
        cards.cards_of(state.dead[i]),
        int(state.hand_number[i]),
        [int(x) for x in state.scores[i]],
    )


def random_owners(rules: he.Rules, rng: np.random.Generator, count: int, skew: float = 0.0) -> np.ndarray:
    """``count`` random deals as ``owners[count, 52]`` made by the test itself (not the engine).

    ``skew > 0`` clusters suits: the cards are sorted by suit plus noise of that size and dealt
    in blocks, so long suits, voids, all-heart hands and forced point discards are common."""
    deck = np.array(sorted(deck_of(rules)))
    owners = np.full((count, 52), -1, dtype=np.int64)
    p, h = rules.num_players, rules.hand_size
    for g in range(count):
        order = rng.permutation(deck)
        live = order[rules.dead_cards :]
        if skew > 0:
            live = live[np.argsort(live // 13 + rng.normal(0.0, skew, live.size))]
            owners[g, live] = rng.permutation(p)[np.arange(live.size) // h]
        else:
            owners[g, live] = np.arange(live.size) % p
    return owners


def random_scores(rules: he.Rules, rng: np.random.Generator, count: int, mode: str) -> np.ndarray:
    p, target = rules.num_players, rules.target_score
    if mode == "zero":
        return np.zeros((count, p), dtype=np.int64)
    if mode == "ties":  # few distinct values: ties for lowest are common
        return rng.choice([target - 30, target - 12, target - 1, 0], size=(count, p))
    return rng.integers(max(0, target - 40), target, size=(count, p))  # near the target


def check_row(state: he.State, i: int, ref: ReferenceGame, mask_row: np.ndarray, where: str) -> None:
    """Engine game ``i`` and the reference agree on everything the rules define."""
    p = ref.num_players
    ref_legal = ref.legal_actions()
    engine = {
        "phase": int(state.phase[i]),
        "current_player": int(state.current_player[i]),
        "legal": bits(np.flatnonzero(mask_row).tolist()),
        "hand_number": int(state.hand_number[i]),
        "scores": state.scores[i].tolist(),
        "dead": int(state.dead[i]),
        "hearts_broken": bool(state.hearts_broken[i]),
        "trick_number": int(state.trick_number[i]),
        "num_in_trick": int(state.num_in_trick[i]),
        "hands": [int(x) for x in state.hands[i]],
        "played": [int(x) for x in state.played[i]],
        "voids": state.voids[i].tolist(),
    }
    reference = {
        "phase": {"pass": PASS, "play": PLAY}[ref.phase],
        "current_player": ref.current_player,
        "legal": bits(ref_legal),
        "hand_number": ref.hand_number,
        "scores": ref.scores,
        "dead": bits(ref.dead),
        "hearts_broken": ref.hearts_broken,
        "trick_number": ref.tricks_done,
        "num_in_trick": len(ref.trick),
        "hands": [bits(h) for h in ref.hands],
        "played": [bits(h) for h in ref.played],
        "voids": [[su in shown for su in range(4)] for shown in ref.shown_void],
    }
    if not ref.trick:  # taken cards change only when a trick ends
        engine["taken"] = [int(x) for x in state.taken[i]]
        reference["taken"] = [bits(h) for h in ref.taken]
    if ref.phase == "pass":
        engine["passed"] = [int(x) for x in state.passed[i]]
        reference["passed"] = [bits(x) for x in ref.picks]
    if engine != reference:
        diffs = [k for k in engine if engine[k] != reference[k]]
        extra = ""
        if "legal" in diffs:
            extra = (f" legal cards: engine [{text(cards.cards_of(engine['legal']))}] "
                     f"reference [{text(ref_legal)}] (seat {ref.current_player} holds [{text(ref.hands[ref.current_player])}]);")
        shown = {k: (engine[k], reference[k]) for k in diffs}
        raise AssertionError(f"{where} game {i}: engine/reference differ in {diffs}:{extra} "
                             f"(engine, reference) = {shown}; {describe(ref)} (p={p})")


def choose(rng: np.random.Generator, legal) -> int:
    legal = sorted(legal)
    return int(legal[rng.integers(len(legal))])


def play_side_by_side(state: he.State, rng: np.random.Generator, where: str, max_hands: int = 10_000) -> dict:
    """Step engine games and reference hands together until every game is over (or ``max_hands``
    hands were compared in a game); compare at every decision and at every hand end."""
    rules = state.rules
    n = state.batch_size
    refs = [ref_from_state(state, i) for i in range(n)]
    followed = np.ones(n, dtype=bool)  # games still compared against the reference
    hands_done = np.zeros(n, dtype=int)
    stats = {"hands": 0, "decisions": 0, "moons": 0, "games_over": 0}
    for s in range(n):
        assert state.dealt[s].tolist() == state.hands[s].tolist(), "a fresh hand must equal the deal"
    while followed.any():
        mask = he.legal_mask(state)
        actions = np.zeros(n, dtype=np.int64)
        for i in range(n):
            if state.phase[i] == OVER:
                continue
            if followed[i]:
                check_row(state, i, refs[i], mask[i], where)
                actions[i] = choose(rng, refs[i].legal_actions())
                stats["decisions"] += 1
            else:
                actions[i] = choose(rng, np.flatnonzero(mask[i]))
        before_hand = state.hand_number.copy()
        if rng.random() < 0.5:
            state = he.step(state, actions)
        else:
            he.step_inplace(state, actions)
        for i in np.flatnonzero(followed):
            ref = refs[i]
            ref.apply(actions[i])
            info = lambda: f"{where} game {i}: {describe(ref)}"  # noqa: E731 (built only on failure)
            if ref.phase != "done":
                assert state.hand_number[i] == before_hand[i] and state.phase[i] != OVER, (
                    f"engine ended the hand early; {info()}"
                )
                continue
            points = ref.hand_points()
            totals = ref.totals()
            stats["hands"] += 1
            stats["moons"] += ref.shooter() is not None
            assert state.last_hand_points[i].tolist() == points, (
                f"hand points engine {state.last_hand_points[i].tolist()} reference {points} "
                f"(taken: {[text(t) for t in ref.taken]}); {info()}"
            )
            assert state.scores[i].tolist() == totals, info()
            shooter = ref.shooter() if rules.moon != "off" else None
            assert state.last_hand_moon[i].tolist() == [s == shooter for s in range(rules.num_players)], (
                f"moon engine {state.last_hand_moon[i].tolist()} reference shooter {shooter}; {info()}"
            )
            over = ref.game_over(totals)
            assert (state.phase[i] == OVER) == over, f"game over engine {state.phase[i] == OVER} ref {over}; {info()}"
            hands_done[i] += 1
            if over:
                stats["games_over"] += 1
                assert state.winner[i] == ref.winner(totals), info()
                assert state.current_player[i] == -1, info()
                assert not mask_any(state, i), info()
                followed[i] = False
            else:
                assert state.winner[i] == -1, info()
                assert state.hand_number[i] == ref.hand_number + 1, info()
                assert state.dealt[i].tolist() == state.hands[i].tolist(), info()
                if hands_done[i] >= max_hands:
                    followed[i] = False
                else:
                    refs[i] = ref_from_state(state, i)
    return stats


def mask_any(state: he.State, i: int) -> bool:
    return bool(he.legal_mask(state)[i].any())


def random_legal_actions(state: he.State, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal card per live game; a random card id for finished games."""
    done = state.phase == OVER
    actions = rng.integers(0, 52, size=state.batch_size)
    live = np.flatnonzero(~done)
    mask = he.legal_mask(state)[live]
    pick = (rng.random(live.size) * mask.sum(axis=1)).astype(np.int8)  # the k-th legal card
    actions[live] = (mask.cumsum(axis=1, dtype=np.int8) > pick[:, None]).argmax(axis=1)
    return actions


# ---------------------------------------------------------------------------------------------
# (a) engine == reference at every decision
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
@settings(max_examples=2, **SETTINGS)
@given(seed=st.integers(0, 2**63 - 1))
def test_engine_matches_reference_whole_games(variant, seed):
    """Whole games dealt by the engine (he.init), compared decision by decision."""
    rules = VARIANTS[variant]
    rng = np.random.default_rng(seed)
    state = he.init(rules, 2, seed=int(rng.integers(2**62)))
    stats = play_side_by_side(state, rng, variant)
    assert stats["games_over"] == 2


@pytest.mark.parametrize("variant", list(VARIANTS))
@settings(max_examples=5, **SETTINGS)
@given(
    seed=st.integers(0, 2**63 - 1),
    score_mode=st.sampled_from(["zero", "near", "ties"]),
    skew=st.sampled_from([0.0, 0.3, 0.8]),
)
def test_engine_matches_reference_random_deals(variant, seed, score_mode, skew):
    """Deals made by the test (he.from_deals), uniform or with clustered suits, at random hand
    numbers and scores near the target; up to three hands per game."""
    rules = VARIANTS[variant]
    rng = np.random.default_rng(seed)
    n = 3
    owners = random_owners(rules, rng, n, skew)
    hand_numbers = rng.integers(0, 8, size=n)
    scores = random_scores(rules, rng, n, score_mode)
    state = he.from_deals(rules, owners, hand_numbers, scores, rng.integers(0, 2**62, size=n))
    for i in range(n):  # the engine laid out exactly the given deal
        for s in range(rules.num_players):
            assert int(state.dealt[i, s]) == bits(np.flatnonzero(owners[i] == s))
    play_side_by_side(state, rng, f"{variant}/{score_mode}/skew={skew}", max_hands=3)


def moon_deal(rules: he.Rules, rng: np.random.Generator, shooter: int, dead_heart: bool) -> np.ndarray:
    """A deal in which ``shooter`` wins every trick whatever anyone plays (so takes every point
    card in play): it holds the top cards of every suit (four players), or every heart in play
    and the top two cards of the other suits (two players, hearts trump, so nobody can ruff)."""
    deck = sorted(deck_of(rules))
    rank = {c: c % 13 for c in deck}
    owners = np.full(52, -1, dtype=np.int64)
    if rules.num_players == 4:
        strong = [c for c in deck if rank[c] >= 10] + [13 * 3 + 9]  # A K Q of each suit, J♠
        dead = []
    else:
        hearts = [c for c in deck if suit(c) == HEARTS]
        tops = [c for c in deck if suit(c) != HEARTS and rank[c] >= 10]  # A Q of C D S
        if dead_heart:  # 2♥ set aside: the moon needs only the hearts in play
            strong = hearts[1:] + tops + [13 * 3 + 8]  # ... and T♠
            dead = [hearts[0]]
        else:
            strong = hearts + tops
            dead = []
    assert len(strong) == rules.hand_size
    rest = [int(c) for c in rng.permutation([c for c in deck if c not in strong and c not in dead])]
    need = rules.dead_cards - len(dead)
    dead += rest[:need]
    rest = rest[need:]
    owners[strong] = shooter
    others = [s for s in range(rules.num_players) if s != shooter]
    for k, c in enumerate(rest):
        owners[c] = others[k % len(others)]
    return owners


MOON_VARIANTS = [
    "classic", "jack_of_diamonds", "moon_subtract", "moon_choice", "moon_off", "choice_jack_quick",
    "queen_waits_and_breaks", "two_player", "two_player_moon_subtract", "two_player_moon_choice",
    "two_player_moon_off",
]


@settings(max_examples=60, **SETTINGS)
@given(
    variant=st.sampled_from(MOON_VARIANTS),
    seed=st.integers(0, 2**63 - 1),
    shooter=st.integers(0, 3),
    dead_heart=st.booleans(),
    scores=st.lists(st.integers(0, 120), min_size=4, max_size=4),
)
@example(variant="moon_choice", seed=1, shooter=0, dead_heart=False, scores=[40, 30, 30, 30])  # add ends: subtract
@example(variant="moon_choice", seed=2, shooter=1, dead_heart=False, scores=[0, 10, 5, 5])  # far: add
@example(variant="moon_choice", seed=3, shooter=2, dead_heart=False, scores=[30, 30, 0, 20])  # add, shooter wins
@example(variant="two_player_moon_choice", seed=4, shooter=0, dead_heart=True, scores=[85, 70, 0, 0])
def test_moon_hands_match_reference(variant, seed, shooter, dead_heart, scores):
    """Deals that are certain moons: every moon mode, with J♦, dead hearts (two players) and
    totals that make shooters_choice go either way; points checked against explicit values."""
    rules = VARIANTS[variant]
    p = rules.num_players
    shooter %= p
    scores = scores[:p]
    rng = np.random.default_rng(seed)
    owners = moon_deal(rules, rng, shooter, dead_heart)
    no_pass = [h for h, d in enumerate(rules.pass_cycle) if d == "none"][0]
    state = he.from_deals(rules, owners[None], [no_pass], [scores], [seed])
    ref = ref_from_state(state, 0)
    while ref.phase != "done":
        mask = he.legal_mask(state)
        check_row(state, 0, ref, mask[0], variant)
        action = choose(rng, ref.legal_actions())
        state = he.step(state, [action])
        ref.apply(action)
    assert ref.shooter() == shooter, f"the deal was built to be a moon; {describe(ref)}"
    got = state.last_hand_points[0].tolist()
    assert got == ref.hand_points(), f"engine {got} reference {ref.hand_points()}; {describe(ref)}"
    # explicit values, independent of the reference's scoring code
    moon = rules.moon_points
    jack = [rules.jack_of_diamonds_points if (rules.jack_of_diamonds_bonus and s == shooter) else 0 for s in range(p)]
    in_play = point_cards_of(deck_of(rules)) - ref.dead
    raw = sum(1 for c in in_play if suit(c) == HEARTS) + (13 if QUEEN_OF_SPADES in in_play else 0)
    add = [(0 if s == shooter else moon) + jack[s] for s in range(p)]
    sub = [(-moon if s == shooter else 0) + jack[s] for s in range(p)]
    kept = [(raw if s == shooter else 0) + jack[s] for s in range(p)]
    if rules.moon == "add_to_others":
        assert got == add
    elif rules.moon == "subtract_from_self":
        assert got == sub
    elif rules.moon == "off":
        assert got == kept
    else:
        with_add = [a + b for a, b in zip(scores, add)]
        shooter_wins = with_add[shooter] == min(with_add) and with_add.count(min(with_add)) == 1
        assert got == (sub if max(with_add) >= rules.target_score and not shooter_wins else add)
    totals = [a + b for a, b in zip(scores, got)]
    assert state.scores[0].tolist() == totals
    assert (state.phase[0] == OVER) == (max(totals) >= rules.target_score and totals.count(min(totals)) == 1)


# ---------------------------------------------------------------------------------------------
# (b) + (c) thousands of random games per preset, invariants after every step
# ---------------------------------------------------------------------------------------------


def or_seats(x: np.ndarray) -> np.ndarray:
    return np.bitwise_or.reduce(x, axis=1)


def count_seats(x: np.ndarray) -> np.ndarray:
    return cards.count(x).sum(axis=1)


def check_invariants(state: he.State) -> None:
    """Card conservation and bookkeeping, vectorised over the whole batch."""
    rules = state.rules
    deck = np.uint64(rules.deck_bits)
    p, h = rules.num_players, rules.hand_size
    hands, played, taken, dead = state.hands, state.played, state.taken, state.dead
    # hands, played cards and dead cards partition the deck
    union = or_seats(hands) | or_seats(played) | dead
    assert (union == deck).all(), "a card is missing or outside the deck"
    assert (count_seats(hands) + count_seats(played) + cards.count(dead) == rules.deck_size).all(), (
        "a card is in two places"
    )
    assert (cards.count(dead) == rules.dead_cards).all()
    # every seat holds or has played exactly a hand
    assert ((cards.count(hands) + cards.count(played)) == h).all()
    # taken cards are played cards, each taken once; all but the current trick are taken
    all_taken = or_seats(taken)
    assert (all_taken & ~or_seats(played) == 0).all(), "taken card never played"
    assert (count_seats(taken) == cards.count(all_taken)).all(), "a card taken twice"
    assert (cards.count(all_taken) == p * state.trick_number).all()
    in_trick = state.trick >= 0
    assert (in_trick.sum(axis=1) == state.num_in_trick).all()
    trick_bits = np.bitwise_or.reduce(np.where(in_trick, cards.BIT[np.where(in_trick, state.trick, 0)], 0), axis=1)
    assert (or_seats(played) & ~all_taken == trick_bits).all(), "played, not taken and not in the trick"
    assert (cards.count(played) == state.trick_number[:, None] + in_trick).all(), "a seat played twice"
    live = state.phase != OVER
    playing = state.phase == PLAY
    passing = state.phase == PASS
    assert ((state.num_in_trick < p) & (state.trick_number <= h)).all()
    assert (state.trick_number[live] < h).all()
    # the pass phase: nothing played, picks are held cards, no more than pass_count
    assert (played[passing] == 0).all()
    assert ((state.passed[passing] & ~hands[passing]) == 0).all()
    assert (cards.count(state.passed[passing]) <= rules.pass_count).all()
    # the legal cards are held by the seat to act, and there is always one
    seat = np.where(live, state.current_player, 0)
    assert ((state.current_player[live] >= 0) & (state.current_player[live] < p)).all()
    own = hands[np.arange(state.batch_size), seat]
    assert ((state.legal & ~own)[live] == 0).all()
    assert (state.legal[live] != 0).all(), "a live game with no legal action"
    assert (state.legal[~live] == 0).all() and (state.current_player[~live] == -1).all()
    assert (state.winner[live] == -1).all()
    # the seat to act in play is the next after the cards already in the trick
    lead_next = (state.leader + state.num_in_trick) % p
    assert (state.current_player[playing] == lead_next[playing]).all()


def check_hand_points(rules: he.Rules, points: np.ndarray, dead: np.ndarray) -> None:
    """(c): the points of finished hands add up as the rules say (no J♦ bonus): the point cards
    in play (26 with a full deck and nothing dead), or a moon pattern of the moon mode."""
    if len(points) == 0:
        return
    p, moon, mode = rules.num_players, rules.moon_points, rules.moon
    deck_points = point_cards_of(deck_of(rules))
    in_play = np.array(
        [sum(1 if suit(c) == HEARTS else 13 for c in deck_points - set(cards.cards_of(d))) for d in dead]
    )
    if p == 4 and rules.dead_cards == 0:
        assert (in_play == 26).all()
    srt = np.sort(points, axis=1)
    normal = (points.sum(axis=1) == in_play) & (points.min(axis=1) >= 0)
    if mode != "off":
        normal &= points.max(axis=1) < in_play  # a seat with every point card shot the moon
    add = (srt == np.array([0] + [moon] * (p - 1))).all(axis=1)  # 0 and 3 x 26 = 78 in all
    sub = (srt == np.array([-moon] + [0] * (p - 1))).all(axis=1)  # -26 in all
    ok = normal.copy()
    if mode in ("add_to_others", "shooters_choice"):
        ok |= add
    if mode in ("subtract_from_self", "shooters_choice"):
        ok |= sub
    assert ok.all(), (points[~ok], in_play[~ok])


BATCH_RUNS = {"classic": 2048, "quick": 2048, "long": 2048, "two_player": 2048,
              "moon_subtract": 512, "moon_off": 256, "two_player_moon_subtract": 512, "four_dead_cards": 256}


@pytest.mark.parametrize("variant", list(BATCH_RUNS))
def test_random_batches_keep_invariants(variant):
    """2048 random games of each preset (and a few hundred of some variants), played to the end
    in one batch (over ten thousand hands per preset), with the invariants checked after every
    step, hand points checked at every hand end, and finished games checked to stay unchanged."""
    rules = VARIANTS[variant]
    size = BATCH_RUNS[variant]
    index = list(BATCH_RUNS).index(variant)
    rng = np.random.default_rng(1000 + index)
    state = he.init(rules, size, seed=index)
    check_invariants(state)
    hands_seen = 0
    for _ in range(20_000):
        if state.done.all():
            break
        actions = random_legal_actions(state, rng)
        after = he.step(state, actions)
        check_invariants(after)
        # hand ends: scores add up, points follow (c)
        ended = (after.hand_number != state.hand_number) | (after.done & ~state.done)
        pts = after.last_hand_points[ended]
        assert (after.scores[ended] == state.scores[ended] + pts).all()
        assert (after.scores[~ended] == state.scores[~ended]).all()
        if rules.moon != "subtract_from_self":
            assert (after.scores >= 0).all()  # no negative points without subtracting moons
        check_hand_points(rules, pts, state.dead[ended])
        hands_seen += int(ended.sum())
        # games over before the step did not change
        frozen = state.done
        for name in ARRAY_FIELDS if frozen.any() else ():
            assert np.array_equal(getattr(after, name)[frozen], getattr(state, name)[frozen]), name
        # a game ends exactly when the totals say so
        newly = after.done & ~state.done
        t = after.scores[ended]
        over = (t.max(axis=1) >= rules.target_score) & ((t == t.min(axis=1, keepdims=True)).sum(axis=1) == 1)
        assert np.array_equal(over, after.done[ended])
        assert (after.winner[newly] == after.scores[newly].argmin(axis=1)).all()
        state = after
    assert state.done.all(), "games did not finish"
    assert hands_seen >= 3 * size


# ---------------------------------------------------------------------------------------------
# (d) a batch plays exactly like its games played alone
# ---------------------------------------------------------------------------------------------


@settings(max_examples=20, **SETTINGS)
@given(variant=st.sampled_from(list(VARIANTS)), seed=st.integers(0, 2**63 - 1), n=st.integers(2, 5))
def test_batched_equals_alone(variant, seed, n):
    """Games of a batch stepped together (step_inplace) end in exactly the state each reaches
    stepped alone (step, which must not change its input) with the same per-game choices:
    up to 260 decisions, several hands."""
    MAX_STEPS = 260  # noqa: N806
    rules = VARIANTS[variant]
    batch = he.init(rules, n, seed=seed % 2**32)
    alone = [batch.take(i) for i in range(n)]
    for i in range(n):
        assert alone[i].batch_size == 1 and alone[i].equals(batch.take([i]))
    batch_rngs = [np.random.default_rng([seed, i]) for i in range(n)]
    alone_rngs = [np.random.default_rng([seed, i]) for i in range(n)]
    steps = 0
    while not batch.done.all() and steps < MAX_STEPS:
        mask = he.legal_mask(batch)
        actions = np.zeros(n, dtype=np.int64)
        for i in range(n):
            if not batch.done[i]:
                actions[i] = choose(batch_rngs[i], np.flatnonzero(mask[i]))
        he.step_inplace(batch, actions)
        steps += 1
    for i in range(n):
        game = alone[i]
        for _ in range(steps):
            if game.done[0]:
                break
            action = choose(alone_rngs[i], np.flatnonzero(he.legal_mask(game)[0]))
            before = game.copy()
            after = he.step(game, [action])
            assert game.equals(before), "he.step changed its input"
            game = after
        assert batch.take(i).equals(game), f"game {i} of the batch differs from the same game alone"


# ---------------------------------------------------------------------------------------------
# (e) illegal actions
# ---------------------------------------------------------------------------------------------


@settings(max_examples=50, **SETTINGS)
@given(
    variant=st.sampled_from(list(VARIANTS)),
    seed=st.integers(0, 2**63 - 1),
    steps=st.integers(0, 120),
    inplace=st.booleans(),
)
def test_illegal_action_raises_and_changes_nothing(variant, seed, steps, inplace):
    rules = VARIANTS[variant]
    rng = np.random.default_rng(seed)
    n = 3
    state = he.init(rules, n, seed=int(rng.integers(2**32)))
    for _ in range(steps):
        he.step_inplace(state, random_legal_actions(state, rng))
    game = int(rng.integers(n))
    if state.done[game]:
        return
    mask = he.legal_mask(state)
    illegal = np.flatnonzero(~mask[game])
    assert illegal.size >= 52 - rules.hand_size
    card = int(rng.choice(illegal))
    actions = random_legal_actions(state, rng)
    actions[game] = card
    before = state.copy()
    with pytest.raises(he.IllegalActionError) as err:
        if inplace:
            he.step_inplace(state, actions)
        else:
            he.step(state, actions)
    assert state.equals(before), "a refused step changed the state"
    message = str(err.value)
    assert re.search(rf"\b{cards.card_text(card)}\b", message), message
    # the legal cards are named too, and the offending card is not among them
    legal_part = message.split("legal:")[-1]
    assert cards.card_text(card) not in legal_part.split()
    assert set(legal_part.split()) == {cards.card_text(c) for c in np.flatnonzero(mask[game])}
    # the state still steps normally afterwards
    actions[game] = int(np.flatnonzero(mask[game])[0])
    he.step(state, actions)


@pytest.mark.parametrize("bad", [-1, 52, 1000])
def test_illegal_action_out_of_range(bad):
    state = he.init(CLASSIC, 2, seed=5)
    before = state.copy()
    actions = he.legal_mask(state).argmax(axis=1)
    actions[1] = bad
    with pytest.raises(he.IllegalActionError):
        he.step(state, actions)
    with pytest.raises(he.IllegalActionError):
        he.step_inplace(state, actions)
    with pytest.raises(he.IllegalActionError):
        he.step(state, actions[:1])  # one action short
    assert state.equals(before)


# ---------------------------------------------------------------------------------------------
# (f) finished games stay finished
# ---------------------------------------------------------------------------------------------


@settings(max_examples=30, **SETTINGS)
@given(variant=st.sampled_from(list(VARIANTS)), seed=st.integers(0, 2**63 - 1))
def test_finished_games_stay_finished(variant, seed):
    """Half the games start with totals that end them after this hand; after they end, any
    action (even a nonsense card id) leaves their arrays untouched while the rest play on."""
    rules = VARIANTS[variant]
    p = rules.num_players
    rng = np.random.default_rng(seed)
    n = 6
    owners = random_owners(rules, rng, n)
    ending = np.arange(n) % 2 == 0
    high = [3 * rules.target_score, 0] + [rules.target_score] * (p - 2)  # seat 1 surely lowest
    scores = np.where(ending[:, None], np.array(high), 0)
    state = he.from_deals(rules, owners, rng.integers(0, 4, size=n), scores, rng.integers(0, 2**62, size=n))
    snapshot: dict[int, dict[str, np.ndarray]] = {}
    extra = 0
    while extra < 40:
        for g in np.flatnonzero(state.done):
            snapshot.setdefault(int(g), {k: v[g].copy() for k, v in state.arrays().items()})
        if len(snapshot) >= ending.sum():
            extra += 1
        actions = random_legal_actions(state, rng)
        done = state.done
        actions[done] = rng.choice([-7, 0, 51, 52, 999], size=int(done.sum()))  # ignored
        state = he.step(state, actions) if extra % 2 else (he.step_inplace(state, actions) or state)
        if state.done.all():
            break
    assert set(np.flatnonzero(ending)) <= set(snapshot), "games with scores past the target did not end"
    for g in np.flatnonzero(ending):
        assert state.winner[g] == 1
    for g, rows in snapshot.items():
        for name, row in rows.items():
            assert np.array_equal(getattr(state, name)[g], row), f"finished game {g} changed {name}"
        assert state.phase[g] == OVER and state.current_player[g] == -1 and state.legal[g] == 0


# ---------------------------------------------------------------------------------------------
# (g) deals
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_deal_shapes_and_seeds(preset):
    rules = he.Rules.preset(preset)
    state = he.init(rules, 500, seed=11)
    deck = np.uint64(rules.deck_bits)
    assert (cards.count(state.hands) == rules.hand_size).all()
    assert (cards.count(state.dead) == rules.dead_cards).all()
    assert (or_seats(state.hands) | state.dead == deck).all()
    assert (count_seats(state.hands) + cards.count(state.dead) == rules.deck_size).all()
    assert (state.dealt == state.hands).all()
    assert (state.played == 0).all() and (state.taken == 0).all() and (state.scores == 0).all()
    first = rules.pass_cycle[0]
    if first == "none":
        opening = [c for c in (cards.parse_card(t) for t in rules.opening_lead)]
        for g in range(50):
            lead = next(c for c in opening if not int(state.dead[g]) >> c & 1)
            assert state.hands[g, state.current_player[g]] >> np.uint64(lead) & np.uint64(1)
        assert (state.phase == PLAY).all()
    else:
        assert (state.phase == PASS).all() and (state.current_player == 0).all()
    # same seed: same games; another seed: other deals; a game dealt alone gets the same cards
    assert he.init(rules, 500, seed=11).equals(state)
    other = he.init(rules, 500, seed=12)
    assert (other.dealt != state.dealt).any(axis=1).all()
    alone = he.engine.init_from_seeds(rules, state.seed[[7, 300]])
    assert alone.equals(state.take([7, 300]))
    # different games of one batch get different deals
    assert len({tuple(row) for row in state.dealt.tolist()}) == 500
    # dead cards are never held, played or taken while the games are played
    rng = np.random.default_rng(3)
    for _ in range(80):
        he.step_inplace(state, random_legal_actions(state, rng))
        seen = or_seats(state.hands) | or_seats(state.played) | or_seats(state.taken) | or_seats(state.passed)
        assert (seen & state.dead == 0).all()


@pytest.mark.parametrize("preset", ["classic", "two_player"])
def test_deal_is_uniform(preset):
    """20000 deals from a fixed seed: each card lands in each seat (and among the dead cards)
    with its probability, and each pair of cards shares a seat with its probability, within
    5 sigma. Deterministic (fixed seed), so not flaky; a biased shuffle or dealer fails it."""
    rules = he.Rules.preset(preset)
    n = 20_000
    p, h, d = rules.num_players, rules.hand_size, rules.deck_size
    state = he.init(rules, n, seed=2024)
    in_deck = np.array(sorted(deck_of(rules)))
    masks = cards.to_mask(state.dealt)[:, :, in_deck].astype(np.float64)  # [n, p, d]
    freq = masks.mean(axis=0)
    prob = h / d
    sigma = np.sqrt(prob * (1 - prob) / n)
    assert (np.abs(freq - prob) < 5 * sigma).all(), np.abs(freq - prob).max() / sigma
    if rules.dead_cards:
        dead = cards.to_mask(state.dead)[:, in_deck].mean(axis=0)
        q = rules.dead_cards / d
        assert (np.abs(dead - q) < 5 * np.sqrt(q * (1 - q) / n)).all()
    outside = np.setdiff1d(np.arange(52), in_deck)
    assert not cards.to_mask(state.dealt)[:, :, outside].any()
    # pairs of cards in the same hand
    together = np.einsum("npa,npb->ab", masks, masks) / n
    pair = p * h * (h - 1) / (d * (d - 1))
    pair_sigma = np.sqrt(pair * (1 - pair) / n)
    off = ~np.eye(d, dtype=bool)
    assert (np.abs(together[off] - pair) < 5 * pair_sigma).all(), np.abs(together[off] - pair).max() / pair_sigma
    # the next hand's deal is just as uniform (hand number 1 of the same seeds)
    nxt = he.engine.init_from_seeds(rules, state.seed[:5000], hand_number=1)
    f1 = cards.to_mask(nxt.dealt)[:, :, in_deck].mean(axis=0)
    s1 = np.sqrt(prob * (1 - prob) / 5000)
    assert (np.abs(f1 - prob) < 5 * s1).all()
    assert (nxt.dealt != state.dealt[:5000]).any(axis=1).all()


# ---------------------------------------------------------------------------------------------
# the reference itself: a few hand-made positions, so it is not just trusted
# ---------------------------------------------------------------------------------------------


def test_reference_hand_made_positions():
    # two-player: a heart ruff wins the trick and breaks hearts; the highest trump wins
    hands = [cards.parse_cards("2C 4C 6C 8C TC QC AC 2D 4D 6D 8D TD QD"),
             cards.parse_cards("AD 2S 4S 6S 8S TS QS AS 2H 4H 6H 8H TH")]
    dead = cards.parse_cards("QH AH")
    ref = ReferenceGame(TWO, hands, dead, 0, [0, 0])
    assert ref.phase == "play" and ref.current_player == 0 and ref.legal_actions() == {0}
    ref.apply(0)  # 2C; seat 1 has no clubs
    assert ref.legal_actions() == set(hands[1])
    ref.apply(cards.parse_card("2H"))  # ruff
    assert ref.taken[1] == {0, cards.parse_card("2H")} and ref.hearts_broken
    assert ref.current_player == 1
    # four-player: first-trick protection with only points left allows them
    rules = CLASSIC
    seat0 = cards.parse_cards("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC")
    seat1 = cards.parse_cards("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH QS")
    rest = [c for c in range(52) if c not in seat0 + seat1]
    g = ReferenceGame(rules, [seat0, seat1, rest[:13], rest[13:]], [], 3, [0] * 4)
    g.apply(0)
    assert g.legal_actions() == set(seat1)  # nothing else to play
    g.apply(QUEEN_OF_SPADES)
    assert not g.hearts_broken  # classic: Q♠ does not break hearts
    rules_qb = CLASSIC.replace(queen_breaks_hearts=True)
    g = ReferenceGame(rules_qb, [seat0, seat1, rest[:13], rest[13:]], [], 3, [0] * 4)
    g.apply(0)
    g.apply(QUEEN_OF_SPADES)
    assert g.hearts_broken
    assert JACK_OF_DIAMONDS == cards.parse_card("JD")


# ---------------------------------------------------------------------------------------------
# engine findings
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["classic", "two_player"])
def test_pass_count_zero_does_not_hang(preset):
    """Regression (found by this file): ``pass_count=0`` with a pass direction used to be accepted
    by ``Rules`` and then hang the game: seat 0 could pick cards forever (``passing.choose`` tests
    ``count == pass_count``, never true once a card is picked) until it had no legal action. Now
    the option must either be refused by ``Rules`` or the hand must go straight to play."""
    base = he.Rules.preset(preset)
    try:
        rules = base.replace(pass_count=0, pass_cycle=("left",))
    except he.RulesError:
        return  # refusing the option is an acceptable fix
    state = he.init(rules, 1, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(rules.hand_size + 1):
        assert state.phase[0] == PLAY, (
            f"pass_count=0: phase {state.phase[0]}, seat {state.current_player[0]} has picked "
            f"{cards.count(state.passed[0, 0])} cards, legal: {cards.count(state.legal[0])} cards"
        )
        mask = he.legal_mask(state)
        assert mask[0].any()
        state = he.step(state, [choose(rng, np.flatnonzero(mask[0]))])
