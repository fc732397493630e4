import json

import pytest

from hearts_env import bench, cli, Rules


def test_bench_json_reports_every_batch_size(capsys):
    assert cli.main(["bench", "--batch-sizes", "1,16", "--seconds", "0.1", "--json", "--no-open-spiel",
                     "--agents", "random,easy"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {(r["name"], r["batch_size"]): r for r in report["results"]}
    assert set(rows) == {("engine", 1), ("engine", 16), ("engine+obs", 1), ("engine+obs", 16),
                         ("aec_env", 1), ("vector_env", 16), ("agent:random", 16), ("agent:easy", 16)}
    for (name, _), row in rows.items():
        assert row["decisions_per_s"] > row["hands_per_s"] >= 0
        if name.startswith("agent:"):
            continue
        if name.startswith("engine"):
            assert row["hands_per_s"] > 0 and row["peak_memory_mb"] > 0


def test_bench_counts_whole_hands():
    result = bench.bench_engine(Rules.preset("classic"), 8, seconds=0.2)
    # A classic hand averages 61 decisions (52 plays, 12 picks on three hands in four).
    assert 45 < result.decisions_per_s / result.hands_per_s < 80
    # However short (or starved of CPU) the run, it plays on to the end of a hand: hands/s is never 0.
    first = bench.bench_engine(Rules.preset("classic"), 8, seconds=0.0)
    assert first.decisions_per_s / first.hands_per_s == pytest.approx(12 + 52)  # the first hand passes: 3 picks x 4, 52 plays


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
