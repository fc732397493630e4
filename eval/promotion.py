"""The promotion rule: whether a candidate policy is better than the one it would replace.

A new network replaces a shipped one (``docs/training.md``) when, paired deal by deal with the
shipped one in the same seats:

* it takes **fewer** points against three ``hard`` on the standard deals (2,000, seed 0) and on
  10,000 others (seed 2): the paired interval of candidate minus baseline lies below 0;
* it takes **no more** against the panel's other bots (``random``, ``easy``, ``normal``; 2,000
  deals) and at tables of players neither network trained with (three ``ppo-classic``, three
  ``search-normal``, three ``expert``; 500 deals): the paired interval does not lie above 0.

A check whose opponent does not play the rules (the unseen tables are classic players) is left out.
Each check is one head-to-head with the candidate and the baseline as two line-ups on the same
deals (:func:`eval.arena.head_to_head`), so the checks are ordinary arena runs that
``hearts arena CANDIDATE BASELINE --vs OPPONENT --deals N --seed S`` repeats.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from agents import builtin

from . import arena

#: What a check asks of the paired difference (candidate minus baseline, points per hand).
FEWER = "fewer"      # the interval lies below 0
NO_MORE = "no more"  # the interval does not lie above 0


@dataclasses.dataclass(frozen=True)
class Check:
    """One head-to-head of the rule: against three ``opponent``, ``deals`` deals from ``seed``."""

    name: str
    opponent: str
    deals: int
    seed: int
    needs: str  # FEWER or NO_MORE

    def passes(self, low: float, high: float) -> bool:
        return high < 0 if self.needs == FEWER else low <= 0

    def command(self, candidate: str, baseline: str) -> str:
        return f"hearts arena {candidate} {baseline} --vs {self.opponent} --deals {self.deals} --seed {self.seed}"


CHECKS: tuple[Check, ...] = (
    Check("hard, standard deals", "hard", 2000, 0, FEWER),
    Check("hard, 10,000 other deals", "hard", 10_000, 2, FEWER),
    Check("panel: random", "random", 2000, 0, NO_MORE),
    Check("panel: easy", "easy", 2000, 0, NO_MORE),
    Check("panel: normal", "normal", 2000, 0, NO_MORE),
    Check("unseen: ppo-classic", "ppo-classic", 500, 0, NO_MORE),
    Check("unseen: search-normal", "search-normal", 500, 0, NO_MORE),
    Check("unseen: expert", "expert", 500, 0, NO_MORE),
)


def checks_for(rules, checks: Sequence[Check] = CHECKS) -> list[Check]:
    """The checks whose opponent plays ``rules``."""
    playing = set(builtin(rules, slow=True))
    return [check for check in checks if check.opponent in playing]


def judge(candidate: Any, baseline: Any, rules, checks: Sequence[Check] | None = None, workers: int = 2,
          progress: bool = False, on_result: Callable[[dict], None] | None = None) -> dict:
    """Run every check (default: :func:`checks_for` ``rules``) and say whether ``candidate`` passes.

    ``candidate`` and ``baseline`` are agent specs (or ``(label, agent)`` pairs). Returns
    ``{"checks": [row, ...], "promoted": bool}``; each row holds the check's settings, both players'
    points per hand and the paired difference, and whether it passed. ``on_result(row)`` is called
    as each check finishes (a long rule reports as it goes)."""
    checks = checks_for(rules) if checks is None else list(checks)
    if not checks:
        raise ValueError("no check of the promotion rule plays these rules")
    rows = []
    for check in checks:
        result = arena.head_to_head([("candidate", candidate), ("baseline", baseline)], check.opponent, rules,
                                    deals=check.deals, seed=check.seed, workers=workers, progress=progress)
        difference = result.pair("candidate", "baseline")["difference"]
        row = {**dataclasses.asdict(check),
               "candidate": _points(result, "candidate"), "baseline": _points(result, "baseline"),
               "difference": {key: float(difference[key]) for key in ("mean", "low", "high")},
               "passed": check.passes(difference["low"], difference["high"])}
        rows.append(row)
        if on_result is not None:
            on_result(row)
    return {"checks": rows, "promoted": all(row["passed"] for row in rows)}


def _points(result: arena.ArenaResult, label: str) -> dict:
    points = result.row(label)["points_per_hand"]
    return {key: float(points[key]) for key in ("mean", "low", "high")}


def to_markdown(verdict: dict, candidate: str, baseline: str) -> str:
    """The rule's table: one row per check, then the verdict."""
    lines = [f"| check | against three | deals (seed) | needs | {candidate} | {baseline} | difference | passed |",
             "| --- | --- | ---: | --- | ---: | ---: | --- | --- |"]
    for row in verdict["checks"]:
        d = row["difference"]
        lines.append(f"| {row['name']} | {row['opponent']} | {row['deals']:,} ({row['seed']}) | {row['needs']} | "
                     f"{row['candidate']['mean']:.2f} | {row['baseline']['mean']:.2f} | "
                     f"{d['mean']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] | {'yes' if row['passed'] else 'no'} |")
    lines.append("")
    lines.append(f"Promoted: {'yes' if verdict['promoted'] else 'no'}")
    return "\n".join(lines) + "\n"


__all__ = ["CHECKS", "Check", "FEWER", "NO_MORE", "checks_for", "judge", "to_markdown"]
