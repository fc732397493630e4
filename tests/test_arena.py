"""The evaluation arena: deal sets, seatings, statistics, reproducibility, outputs, CLI, speed."""

from __future__ import annotations

import collections
import io
import json

import numpy as np
import pytest

import hearts_env as he
from hearts_app import cli
from hearts_env import cards, engine, scoring
from hearts_env.observe import decode

from eval import arena, report, stats
from eval.deals import DealSet, DealSetError

CLASSIC = he.Rules.preset("classic")


IDS = np.arange(52)
RANKED = (IDS % 13) * 4 + IDS // 13  # by rank, then suit
POINT_CARDS = (IDS // 13 == cards.HEARTS) | (IDS == cards.QUEEN_OF_SPADES)


def taker(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    """A deliberately bad agent that goes for tricks: passes its lowest cards, leads and follows
    with its highest, and when void throws its lowest card that is no point card (keeping the
    points to win them). (Always-highest is not bad enough: it passes and discards its dangerous
    cards, and against random play beats random.)"""
    pieces, legal, n = decode(observation), action_mask.astype(bool), len(observation)
    high = np.where(legal, RANKED, -1).argmax(axis=1)
    low = np.where(legal, -RANKED, -999).argmax(axis=1)
    safe = legal & ~POINT_CARDS
    low_safe = np.where(safe.any(axis=1), np.where(safe, -RANKED, -999).argmax(axis=1), low)
    passing = pieces["phase"][:, 0] > 0
    in_trick = pieces["trick"].sum(axis=(1, 2)) > 0
    led_suit = pieces["trick"][np.arange(n), pieces["trick_leader"].argmax(axis=1)].argmax(axis=1) // 13
    follows = (legal & (IDS[None, :] // 13 == led_suit[:, None])).any(axis=1)
    return np.where(passing, low, np.where(~in_trick | follows, high, low_safe))


def lowest_card(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    return action_mask.astype(bool).argmax(axis=1)


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------

# Student's (1908) sleep data (R's `sleep`): extra hours of sleep of 10 patients under two drugs.
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_paired_interval_matches_the_textbook_sleep_data():
    # R: t.test(extra ~ group, data = sleep, paired = TRUE): t = -4.0621, df = 9,
    # p-value = 0.002833, 95 percent CI -2.4598858 -0.7001142, mean difference -1.58.
    diff = stats.paired_interval(SLEEP_1, SLEEP_2)
    assert diff.n == 10
    assert diff.mean == pytest.approx(-1.58)
    assert diff.low == pytest.approx(-2.4598858, abs=1e-6)
    assert diff.high == pytest.approx(-0.7001142, abs=1e-6)
    assert diff.p_value == pytest.approx(0.002833, abs=5e-6)
    assert not diff.contains(0)
    # One-sample interval of group 1 (R: t.test(sleep$extra[1:10])): 95% CI -0.5297804 2.0297804.
    one = stats.t_interval(SLEEP_1)
    assert (one.low, one.high) == (pytest.approx(-0.5297804, abs=1e-6), pytest.approx(2.0297804, abs=1e-6))
    assert stats.t_quantile(0.95, 9) == pytest.approx(2.262157, abs=1e-6)


def test_deals_needed_is_the_smallest_n_that_fits():
    for sd, h in [(1.0, 0.1), (3.2, 0.1), (4.0, 0.5), (0.3, 0.2)]:
        n = stats.deals_needed(sd, h)
        assert stats.t_quantile(0.95, n - 1) * sd / np.sqrt(n) <= h
        if n > 2:
            assert stats.t_quantile(0.95, n - 2) * sd / np.sqrt(n - 1) > h
    assert stats.deals_needed(1.0, 0.1) == 387  # (1.96 / 0.1)^2 = 384.1, a little more for t
    assert stats.deals_needed(float("nan"), 0.1) is None


def test_interval_edge_cases():
    assert stats.t_interval([3.0]).high == np.inf
    assert stats.t_interval([2.0, 2.0, 2.0]).half_width == 0
    means, present = stats.per_deal_means(np.array([0, 0, 2]), np.array([1.0, 3.0, 5.0]), 4)
    assert means.tolist() == [2.0, 0.0, 5.0, 0.0] and present.tolist() == [True, False, True, False]


# ---------------------------------------------------------------------------------------------
# Deal sets
# ---------------------------------------------------------------------------------------------


def test_deal_set_is_the_engine_deal_with_cycling_pass_directions():
    deals = DealSet.generate(CLASSIC, 9, seed=5)
    assert deals.hand_numbers.tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert np.array_equal(deals.seeds, he.deal.game_seeds(5, 9))
    state = engine.init_from_seeds(CLASSIC, deals.seeds, deals.hand_numbers, single_hand=True)
    hands, dead = deals.dealt()
    assert np.array_equal(state.dealt, hands) and np.array_equal(state.dead, dead)
    assert deals.hands_text(3) == [[cards.card_text(c) for c in cards.cards_of(h)] for h in hands[3]]
    assert [CLASSIC.pass_direction(h) for h in deals.hand_numbers[:4]] == ["left", "right", "across", "none"]


def test_deal_set_save_load_round_trip(tmp_path):
    rules = he.Rules.preset("two_player")
    deals = DealSet.generate(rules, 50, seed=11)
    path = deals.save(tmp_path / "deals")
    assert path.name == "deals.npz"
    loaded = DealSet.load(path, rules=rules)
    DealSet.load(path, rules=rules.replace(name="my copy"))  # the same game under another name is fine
    assert loaded.rules == rules and loaded.seed == 11
    assert np.array_equal(loaded.seeds, deals.seeds) and np.array_equal(loaded.hand_numbers, deals.hand_numbers)
    with np.load(path) as data:  # the cards are stored for inspection
        assert np.array_equal(data["dealt"], deals.dealt()[0]) and int(data["format_version"]) == 1
    # Same results from the loaded set as from the generated one.
    a = arena.head_to_head("random", "random", rules, deals=deals, seed=3, workers=1)
    b = arena.head_to_head("random", "random", rules, deals=loaded, seed=3, workers=1)
    assert a.summary == b.summary


def test_deal_set_for_other_rules_is_refused_naming_both(tmp_path):
    path = DealSet.generate(CLASSIC, 5).save(tmp_path / "classic.npz")
    with pytest.raises(DealSetError) as err:
        DealSet.load(path, rules=he.Rules.preset("quick"))
    message = str(err.value)
    assert "'classic'" in message and "'quick'" in message and "target_score" in message
    with pytest.raises(DealSetError, match="'classic'.*'quick'"):
        arena.run(arena.head_to_head_plan(he.Rules.preset("quick"), ["random"], "random"),
                  DealSet.generate(CLASSIC, 5), workers=1)


def test_corrupt_or_foreign_files_are_refused(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"this is not a zip file")
    with pytest.raises(DealSetError, match="junk.npz"):
        DealSet.load(junk)
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.zeros(3))
    with pytest.raises(DealSetError, match="not a deal set"):
        DealSet.load(other)
    with pytest.raises(DealSetError, match="no such file"):
        DealSet.load(tmp_path / "missing.npz")
    # Cards that are not what the seeds deal (a hand-edited file).
    path = DealSet.generate(CLASSIC, 4).save(tmp_path / "edited.npz")
    with np.load(path) as data:
        arrays = dict(data)
    arrays["seeds"] = arrays["seeds"][::-1].copy()
    np.savez(path, **arrays)
    with pytest.raises(DealSetError, match="differ"):
        DealSet.load(path)


# ---------------------------------------------------------------------------------------------
# Seatings and the batched loop
# ---------------------------------------------------------------------------------------------


def test_rotation_gives_the_candidate_every_seat_with_the_same_cards():
    """An instrumented candidate notes the 13 cards of its first decision of each hand: over the
    rotations of a deal it must get each seat's hand exactly once."""
    seen = collections.Counter()
    calls = []

    def spy(observation, action_mask):
        calls.append(len(observation))
        pieces = decode(observation)
        first = ((pieces["hand"].sum(axis=1) == 13) & (pieces["passed"].sum(axis=1) == 0)
                 & (pieces["received"].sum(axis=1) == 0) & (pieces["played_by"][:, 0].sum(axis=1) == 0))
        for row in np.flatnonzero(first):
            seen[cards.from_mask(pieces["hand"][row] > 0).item()] += 1
        return lowest_card(observation, action_mask)

    deals = DealSet.generate(CLASSIC, 40, seed=2)
    result = arena.head_to_head(spy, "random", deals=deals, seed=0, workers=1, chunk_deals=40)
    hands, _ = deals.dealt()
    assert seen == collections.Counter(hands.reshape(-1).tolist())  # every seat of every deal, once
    assert result.row("spy")["games"] == 160
    # Batched: one call per step for all games where the spy is to act, not one per game.
    assert len(calls) <= 70 and max(calls) <= 160


def test_records_show_each_agent_in_each_seat_on_each_deal(tmp_path):
    path = tmp_path / "games.jsonl"
    plan = arena.table_plan(CLASSIC, ["random", ("low", lowest_card), ("taker", taker), "random"])
    arena.run(plan, DealSet.generate(CLASSIC, 6, seed=4), seed=1, workers=1, records=path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, games = lines[0], lines[1:]
    assert header["type"] == "header" and header["agents"][1] == {"label": "low", "spec": "<lowest_card>"}
    assert len(games) == 6 * 4
    by_deal = collections.defaultdict(list)
    for game in games:
        by_deal[game["deal"]].append(game)
    for deal, group in by_deal.items():
        for label in ("random", "low", "taker", "random#2"):
            assert sorted(g["seats"].index(label) for g in group) == [0, 1, 2, 3]
        dealt = {json.dumps(g["hands"][0]["dealt"]) for g in group}
        assert len(dealt) == 1  # the same cards at the same seats in every seating
        assert {g["deal_seed"] for g in group} == {str(int(DealSet.generate(CLASSIC, 6, seed=4).seeds[deal]))}


def test_permute_seating_uses_every_permutation():
    plan = arena.table_plan(CLASSIC, ["random", "random", "random", "random"], seating="permute")
    assert plan.seat_of_slot().shape == (24, 4)
    result = arena.run(plan, 3, workers=1)
    assert len(result.games) == 3 * 24
    for deal in range(3):
        at = result.games.entrant[result.games.deal == deal]
        assert len({tuple(r) for r in at}) == 24


def test_two_players_sit_in_both_seats():
    rules = he.Rules.preset("two_player")
    result = arena.head_to_head("random", "random", rules, deals=30, workers=1)
    assert result.games.entrant.tolist()[:2] == [[0, 1], [1, 0]]
    assert result.row("random")["hands"] == 60


# ---------------------------------------------------------------------------------------------
# Reproducibility
# ---------------------------------------------------------------------------------------------


def test_same_seed_same_results_with_one_or_two_workers():
    kw = dict(deals=300, seed=9, chunk_deals=64)
    one = arena.head_to_head("random", "random", workers=1, **kw)
    two = arena.head_to_head("random", "random", workers=2, **kw)
    assert one.summary == two.summary
    for field in ("deal", "seating", "entrant", "points", "moons_made", "zero_hands"):
        assert np.array_equal(getattr(one.games, field), getattr(two.games, field))
    again = arena.head_to_head("random", "random", workers=2, **kw)
    assert again.summary == one.summary
    other = arena.head_to_head("random", "random", workers=1, **{**kw, "seed": 10})
    assert other.summary != one.summary


def test_results_record_how_to_reproduce_them():
    result = arena.head_to_head("random", "random", deals=20, seed=4, workers=1)
    meta = result.meta
    assert meta["rules"] == CLASSIC.to_dict() and meta["deals"] == 20 and meta["deal_set_seed"] == 4
    assert meta["arena_seed"] == 4 and meta["hearts_lab_version"] == he.__version__
    assert [a["spec"] for a in meta["agents"]] == ["random", "random"]
    assert meta["chunk_deals"] == arena.CHUNK_DEALS and meta["seatings_per_deal"] == 4


# ---------------------------------------------------------------------------------------------
# Duplicate fairness and power
# ---------------------------------------------------------------------------------------------


def test_random_against_random_shows_no_difference():
    result = arena.head_to_head("random", "random", deals=400, seed=21, workers=1)
    diff = result.pair("random", "random#2")["difference"]
    assert diff["low"] < 0 < diff["high"]
    assert diff["n"] == 400
    # Every hand hands out 26 points (or a moon): the mean over all seats is about 6.5.
    cand, opp = result.row("random"), result.row("random#2")
    assert 5.5 < (cand["points_per_hand"]["mean"] + 3 * opp["points_per_hand"]["mean"]) / 4 < 8


def test_a_bad_agent_is_measurably_worse_than_random():
    result = arena.head_to_head([("taker", taker), "random"], "random", deals=200, seed=5, workers=1)
    assert result.pair("taker", "random#2")["difference"]["low"] > 0  # worse than its opponents
    assert result.pair("taker", "random")["difference"]["low"] > 0  # worse than random on the same deals
    assert result.leaderboard[-1]["agent"] == "taker"


# ---------------------------------------------------------------------------------------------
# Moons, whole games
# ---------------------------------------------------------------------------------------------


def test_moons_counted_from_the_cards_taken():
    # With subtract_from_self a moon is the only way to score -26, so the counts can be checked
    # against the points; the taker takes many tricks and shoots now and then.
    rules = CLASSIC.replace(moon="subtract_from_self")
    result = arena.mixed_table([("taker", taker), "random", "random", "random"], rules,
                               deals=300, seed=1, workers=1)
    g = result.games
    assert g.moons_made.sum() > 0
    assert np.array_equal(g.moons_made == 1, g.points == -26)
    assert np.array_equal(g.moons_suffered.sum(axis=1), 3 * g.moons_made.sum(axis=1))
    assert np.array_equal(g.zero_hands == 1, g.points <= 0)


def test_whole_games_track_every_hand(tmp_path):
    rules = he.Rules.preset("quick")
    path = tmp_path / "games.jsonl"
    result = arena.mixed_table([("taker", taker), "random", "random", "random"], rules,
                               deals=12, seed=3, workers=1, episode="game", records=path)
    g = result.games
    assert (g.hands > 1).all() and (g.points.max(axis=1) >= rules.target_score).all()
    assert np.array_equal(g.winner, g.points.argmin(axis=1))
    assert sum(r["win_rate"]["mean"] for r in result.leaderboard) == pytest.approx(1.0)  # one winner a game
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    moons = 0
    for record, row in zip(records, range(len(g))):
        assert len(record["hands"]) == g.hands[row]
        assert np.array_equal(np.sum([h["points"] for h in record["hands"]], axis=0), g.points[row])
        # Replay every hand alone: its points and moon must be what the arena saw mid-game.
        seed = np.array([int(record["deal_seed"])], dtype=np.uint64)
        for hand in record["hands"]:
            state = engine.init_from_seeds(rules, seed, hand["hand_number"], single_hand=True)
            assert [[cards.card_text(c) for c in cards.cards_of(b)] for b in state.dealt[0]] == hand["dealt"]
            for seat, card in hand["actions"]:
                assert state.current_player[0] == seat
                engine.step_inplace(state, np.array([cards.parse_card(card)]))
            assert state.done[0]
            shooter = scoring.moon_shooter(rules, state.taken, state.dead)[0]
            expected_moon = int(shooter.argmax()) if shooter.any() else None
            assert hand["moon"] == expected_moon
            moons += expected_moon is not None
            # Scores differ from a lone hand only under shooter's choice; quick adds to others.
            assert state.last_hand_points[0].tolist() == hand["points"]
    assert moons == g.moons_made.sum() > 0


def test_round_robin_with_more_agents_than_seats_rates_them():
    pool = ["random", ("taker", taker), ("low", lowest_card), "random", "random"]
    result = arena.round_robin(pool, deals=20, seed=2, workers=1)
    assert len(result.plan.tables) == 5  # C(5, 4)
    # Ranked by the headline metric, points per hand; the rating is a column beside it.
    assert result.summary["ranked_by"] == "points_per_hand"
    points = [r["points_per_hand"]["mean"] for r in result.leaderboard]
    assert points == sorted(points)
    assert all(r["rating"] is not None for r in result.leaderboard)
    assert result.leaderboard[-1]["agent"] == "taker"
    assert len(result.summary["pairs"]) == 10


def test_round_robin_with_fewer_agents_than_seats_plays_pairs():
    result = arena.round_robin(["random", ("taker", taker)], deals=20, seed=2, workers=1)
    assert result.plan.tables == ((0, 1, 1, 1), (1, 0, 0, 0))
    assert result.summary["ranked_by"] == "points_per_hand"


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def test_bad_agent_specs_give_clear_errors(tmp_path):
    with pytest.raises(arena.AgentSpecError, match="'nonsense'"):
        arena.resolve_agent("nonsense")
    missing = tmp_path / "no_such.pt"
    with pytest.raises(arena.AgentSpecError, match=str(missing)):
        arena.resolve_agent(f"ckpt:{missing}")
    with pytest.raises(arena.AgentSpecError, match="no_such.onnx"):
        arena.resolve_agent(f"onnx:{tmp_path / 'no_such.onnx'}")
    with pytest.raises(arena.AgentSpecError, match="nonsense"):
        arena.head_to_head("random", "nonsense", deals=5, workers=1)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    with pytest.raises(arena.AgentSpecError, match="garbage.pt"):  # unsupported yet, or unreadable
        arena.resolve_agent(f"ckpt:{garbage}")


def test_an_illegal_action_names_the_agent():
    with pytest.raises(arena.ArenaError, match="'cheat'.*illegal"):
        arena.head_to_head(("cheat", lambda obs, mask: np.zeros(len(obs), dtype=np.int64)), "random",
                           deals=4, workers=1)


@pytest.mark.parametrize("argv, words", [
    (["arena", "nonsense"], ["nonsense"]),
    (["arena", "ckpt:/no/such/model.pt"], ["/no/such/model.pt", "not found"]),
    (["arena", "random", "--vs", "random", "--rules", "quick", "--deal-set", "{deals}"], ["'classic'", "'quick'"]),
    (["arena", "random", "--deal-set", "{missing}"], ["no such file"]),
    (["arena", "random", "random", "--format", "table"], ["seats 4 agents"]),
])
def test_cli_errors_are_one_line_with_exit_code_2(tmp_path, capsys, argv, words):
    deals = DealSet.generate(CLASSIC, 3).save(tmp_path / "classic.npz")
    argv = [a.format(deals=deals, missing=tmp_path / "missing.npz") for a in argv]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv + ["--no-progress", "--workers", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hearts: error:") and len(err.splitlines()) == 1
    for word in words:
        assert word in err


# ---------------------------------------------------------------------------------------------
# Outputs and the command line
# ---------------------------------------------------------------------------------------------


def test_every_output_format_is_written(tmp_path):
    result = arena.head_to_head(["random", ("taker", taker)], "random", deals=30, workers=1)
    paths = report.write_all(result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["meta"]["deals"] == 30
    assert {r["agent"] for r in data["leaderboard"]} == {"random", "taker", "random#2"}
    assert paths["csv"].read_text().splitlines()[0].startswith("rank,agent,spec,points_per_hand")
    assert len(paths["csv"].read_text().splitlines()) == 4
    assert "random#2" in paths["pairs_csv"].read_text()
    md = paths["markdown"].read_text()
    assert "| # | agent |" in md and "taker" in md and '"target_score": 100' in md
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_terminal_tables_read_at_80_columns():
    long_label = "ckpt:runs/a_rather_long_run_name/checkpoints/policy_000120.pt"
    pool = ["random", (long_label, taker), ("low", lowest_card), "random", "random"]
    result = arena.round_robin(pool, deals=20, seed=2, workers=1)
    out = io.StringIO()
    report.print_terminal(result, file=out, width=80)
    text = out.getvalue()
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text  # nothing cut short: labels fold onto the next line instead
    for row in result.leaderboard:  # every interval whole, on one line
        assert report._bounds(row["points_per_hand"]) in text
    assert "".join(line.strip() for line in lines).count(long_label) >= 1
    assert report.RATING_NOTE in " ".join(text.split())
    # The summary counts games in one unit: deals x seatings x tables.
    assert "20 deals" in text and "5 tables" in text and f"{20 * 4 * 5:,} games" in text


def test_cli_head_to_head_json_records_and_deal_set(tmp_path, capsys):
    deal_file = tmp_path / "d.npz"
    records = tmp_path / "r.jsonl"
    argv = ["arena", "random", "--vs", "random", "--deals", "40", "--seed", "7", "--json", "--no-progress",
            "--workers", "1", "--save-deal-set", str(deal_file), "--records", str(records),
            "--out", str(tmp_path / "o")]
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["format"] == "head2head" and data["meta"]["command"].startswith("hearts arena random")
    assert len(records.read_text().splitlines()) == 1 + 40 * 4
    assert (tmp_path / "o" / "points.png").is_file()
    # Replaying the saved deal set gives the same numbers.
    assert cli.main(["arena", "random", "--vs", "random", "--deal-set", str(deal_file), "--seed", "7", "--json",
                     "--no-progress", "--workers", "1"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["leaderboard"] == data["leaderboard"] and again["meta"]["deal_set_file"] == str(deal_file)


def test_cli_default_leaderboard_prints_a_table(capsys):
    assert cli.main(["arena", "--deals", "16", "--no-progress", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "Leaderboard" in out and "random" in out and "deals" in out


def test_cli_game_episodes_two_player(capsys):
    assert cli.main(["arena", "random", "--rules", "two_player", "--episode", "game", "--deals", "6",
                     "--json", "--no-progress", "--workers", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["episode"] == "game" and data["leaderboard"][0]["win_rate"] is not None


def test_a_standard_size_head_to_head_on_two_workers_plays_every_hand():
    """2,000 deals x 4 rotations split over two worker processes. Its speed is not asserted here (a
    busy machine would fail a timed test): the arena prints deals/s itself, see docs/arena.md."""
    result = arena.head_to_head("random", "random", deals=2000, seed=0, workers=2)
    assert result.meta["hands"] == 8000


@pytest.mark.parametrize("damage", ["wider", "other-deals", "text", "records", "empty"])
def test_a_damaged_unit_of_a_resumed_run_is_played_again(tmp_path, damage):
    # A unit file that reads but does not hold the unit's games (arrays of another shape, other deals,
    # records where none are kept) is played again, as an unreadable one is; never merged into the results.
    units = tmp_path / "units"
    small = {"deals": 8, "seed": 3, "chunk_deals": 4, "workers": 1}
    first = arena.head_to_head("easy", "random", units_dir=units, **small)
    path = sorted(units.glob("unit_*.npz"))[0]
    with np.load(path) as data:
        arrays = dict(data)
    if damage == "wider":
        arrays["moons_made"] = np.zeros((len(arrays["deal"]), 1000), np.int64)
    elif damage == "other-deals":
        arrays["deal"] = arrays["deal"] + 10**9
    elif damage == "text":
        arrays["points"] = np.array(["x"] * arrays["points"].size).reshape(arrays["points"].shape)
    elif damage == "records":
        arrays["records"] = np.array(json.dumps([{"type": "game"}]))
    if damage == "empty":
        path.write_bytes(b"")
    else:
        np.savez(path, **arrays)
    again = arena.head_to_head("easy", "random", units_dir=units, **small)
    assert (again.meta["units_played"], again.meta["units_loaded"]) == (1, first.meta["units_played"] - 1)
    assert again.summary == first.summary


def test_a_unit_that_is_a_folder_is_refused_before_the_run_plays(tmp_path):
    units = tmp_path / "units"
    small = {"deals": 8, "seed": 3, "chunk_deals": 4, "workers": 1}
    arena.head_to_head("easy", "random", units_dir=units, **small)
    path = sorted(units.glob("unit_*.npz"))[0]
    path.unlink()
    path.mkdir()
    before = sorted(p.name for p in units.iterdir())
    with pytest.raises(arena.ArenaError, match=f"{path.name} is not a file"):
        arena.head_to_head("easy", "random", units_dir=units, **small)
    assert sorted(p.name for p in units.iterdir()) == before
