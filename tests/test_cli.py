import json

import pytest

from hearts_app import bench, cli
from hearts_env import Rules


def test_bench_json_reports_every_batch_size(capsys):
    assert cli.main(["bench", "--batch-sizes", "1,16", "--seconds", "0.1", "--json", "--no-open-spiel",
                     "--agents", "random,easy"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {(r["name"], r["batch_size"]): r for r in report["results"]}
    assert set(rows) == {("engine", 1), ("engine", 16), ("engine+obs", 1), ("engine+obs", 16),
                         ("aec_env", 1), ("gym_env", 1), ("vector_env", 16), ("agent:random", 16),
                         ("agent:easy", 16)}
    assert report["ratios_to_open_spiel"] == {}  # OpenSpiel left out
    for (name, _), row in rows.items():
        assert row["decisions_per_s"] > row["hands_per_s"] >= 0
        if name.startswith("agent:"):
            continue
        if name.startswith("engine"):
            assert row["hands_per_s"] > 0 and row["peak_memory_mb"] > 0


def test_bench_counts_whole_hands():
    # Counts, not timing, so a loaded machine cannot fail it: decisions/s x seconds and hands/s x
    # seconds give back the whole numbers the bench counted. The 8 games play in step, so each finished
    # the same hands; the decisions are those hands' (12 pass picks and 52 plays on three hands in four,
    # 52 plays on the fourth) plus less than one more hand, as the run stops where the clock says.
    batch = 8

    def per_hand(hand):
        return 52 if hand % 4 == 3 else 12 + 52

    for seconds in (0.0, 0.2):
        result = bench.bench_engine(Rules.preset("classic"), batch, seconds=seconds)
        hands, decisions = result.hands_per_s * result.seconds, result.decisions_per_s * result.seconds
        assert hands == pytest.approx(round(hands), abs=1e-6)
        assert decisions == pytest.approx(round(decisions), abs=1e-6)
        hands, decisions = round(hands), round(decisions)
        # However short (or starved of CPU) the run, it plays on to the end of a hand: hands/s is never 0.
        assert hands >= batch and hands % batch == 0 and decisions % batch == 0
        finished = hands // batch
        whole = sum(per_hand(h) for h in range(finished))
        assert whole <= decisions // batch < whole + per_hand(finished), (seconds, hands, decisions)
        if seconds == 0.0:  # it stops as soon as the first hand (a passing one) is over
            assert (hands, decisions) == (batch, batch * (12 + 52))
            assert result.decisions_per_s / result.hands_per_s == pytest.approx(12 + 52)


def test_open_spiel_reference_when_installed():
    pytest.importorskip("pyspiel")
    for with_obs in (False, True):
        result = bench.bench_open_spiel(0.2, with_obs=with_obs)
        assert result.hands_per_s > 0 and 50 < result.decisions_per_s / result.hands_per_s < 70


def test_demo_plays_a_whole_game(capsys):
    assert cli.main(["demo", "--no-bench", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "game over: player_" in out and "♠" in out


def test_demo_two_player(capsys):
    assert cli.main(["demo", "--no-bench", "--rules", "two_player"]) == 0
    assert "game over" in capsys.readouterr().out


def test_bad_rules_option_exits_with_message(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "--rule", "moon=sometimes"])
    assert exit_info.value.code == 2
    assert "moon" in capsys.readouterr().err


def test_bench_ratios_compare_each_measure_with_its_open_spiel_row():
    def row(name, batch, rate):
        return bench.BenchResult(name, batch, rate / 60, rate, 1.0)

    results = [row("engine", 1, 200.0), row("engine", 64, 800.0), row("engine+obs", 1, 50.0),
               row("aec_env", 1, 30.0), row("gym_env", 1, 5.0), row("vector_env", 64, 99.0),
               row("open_spiel", 1, 100.0), row("open_spiel+obs", 1, 10.0)]
    assert bench.ratios(results) == {
        "engine batch 1 / open_spiel": 2.0, "engine batch 64 / open_spiel": 8.0,
        "engine+obs batch 1 / open_spiel+obs": 5.0, "aec_env batch 1 / open_spiel+obs": 3.0,
        "gym_env batch 1 / open_spiel+obs": 0.5,
    }
    table = bench.format_table(results, Rules.preset("classic"))
    assert "per decision, against OpenSpiel in this run:" in table and "aec_env batch 1 / open_spiel+obs" in table
