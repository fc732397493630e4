"""The promotion rule (``eval/promotion.py``) and ``hearts promote``: which checks play which rules,
what each check asks of the paired difference, a stronger player passing and a weaker one failing
on small deals, and the command's table, exit status and refusals."""

from __future__ import annotations

import json

import pytest

import hearts_env as he
from eval import promotion
from hearts_app.cli import main

CLASSIC = he.Rules.preset("classic")
TINY = (promotion.Check("tiny: easy", "easy", 48, 3, promotion.FEWER),
        promotion.Check("tiny: random", "random", 48, 4, promotion.NO_MORE))


def test_the_rule_lists_the_standard_deals_the_panel_and_the_unseen_tables():
    classic = promotion.checks_for(CLASSIC)
    assert [(c.opponent, c.deals, c.seed, c.needs) for c in classic[:2]] == [
        ("hard", 2000, 0, promotion.FEWER), ("hard", 10_000, 2, promotion.FEWER)]
    assert {c.opponent for c in classic if c.needs == promotion.NO_MORE} == {
        "random", "easy", "normal", "ppo-classic", "search-normal", "expert"}
    # The unseen tables' players play classic Hearts only: the two-player rule is the bots' checks.
    two_player = promotion.checks_for(he.Rules.preset("two_player"))
    assert {c.opponent for c in two_player} == {"hard", "random", "easy", "normal"}


@pytest.mark.parametrize("needs, low, high, passed", [
    (promotion.FEWER, -0.3, -0.1, True), (promotion.FEWER, -0.3, 0.1, False), (promotion.FEWER, 0.1, 0.3, False),
    (promotion.NO_MORE, -0.3, -0.1, True), (promotion.NO_MORE, -0.1, 0.2, True), (promotion.NO_MORE, 0.1, 0.3, False),
])
def test_a_check_reads_the_paired_interval_by_what_it_needs(needs, low, high, passed):
    assert promotion.Check("c", "hard", 10, 0, needs).passes(low, high) is passed


def test_the_stronger_player_passes_and_the_weaker_fails():
    better = promotion.judge("hard", "random", CLASSIC, TINY, workers=1)
    assert better["promoted"] and all(row["passed"] for row in better["checks"])
    row = better["checks"][0]
    assert row["difference"]["high"] < 0 and row["candidate"]["mean"] < row["baseline"]["mean"]
    assert row["difference"]["mean"] == pytest.approx(row["candidate"]["mean"] - row["baseline"]["mean"])
    worse = promotion.judge("random", "hard", CLASSIC, TINY, workers=1)
    assert not worse["promoted"] and not any(row["passed"] for row in worse["checks"])
    assert "Promoted: no" in promotion.to_markdown(worse, "random", "hard")


def test_the_command_prints_the_table_and_exits_by_the_verdict(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(promotion, "CHECKS", TINY)
    out = tmp_path / "rule.md"
    assert main(["promote", "hard", "--baseline", "random", "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "| tiny: easy | easy | 48 (3) | fewer |" in printed.out and printed.out.endswith("Promoted: yes\n")
    assert out.read_text() == printed.out and "tiny: random: hard minus random" in printed.err
    assert main(["promote", "random", "--baseline", "hard", "--workers", "1", "--no-progress", "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["promoted"] is False and verdict["baseline"] == "hard" and len(verdict["checks"]) == 2


@pytest.mark.parametrize("argv, says", [
    (["promote", "expert"], "slow searching player"),
    (["promote", "hard", "--baseline", "nonsense"], "--baseline 'nonsense'"),
    (["promote", "ckpt:missing.pt"], "CANDIDATE 'ckpt:missing.pt'"),
    (["promote", "hard", "--rules", "two_player", "--baseline", "ppo-classic"], "--baseline 'ppo-classic'"),
])
def test_the_command_refuses_what_it_cannot_judge_before_playing(argv, says, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and says in capsys.readouterr().err


def test_the_default_baseline_is_the_rules_shipped_policy(monkeypatch, capsys):
    monkeypatch.setattr(promotion, "CHECKS", TINY)
    pytest.importorskip("torch")
    main(["promote", "hard", "--rules", "two_player", "--workers", "1", "--no-progress", "--json"])
    assert json.loads(capsys.readouterr().out)["baseline"] == "ppo-two-player"
