"""``hearts promote``: run the promotion rule (``eval/promotion.py``) on a candidate policy."""

from __future__ import annotations

import argparse
import json
import sys

from agents import AgentSpecError, SHIPPED_POLICIES
from eval import arena, promotion
from hearts_env.rules import Rules

from .. import arguments
from ..errors import UsageError, writable_file


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "promote",
        help="whether a candidate policy is better than the shipped one, by the promotion rule",
        description="Play CANDIDATE and BASELINE in the same seats on the same deals in each head-to-head of the "
                    "promotion rule (docs/training.md): fewer points against three hard on the standard deals and "
                    "on 10,000 others, no more against random, easy and normal and at tables of players neither "
                    "trained with (three ppo-classic, three search-normal, three expert). Prints a table of the "
                    "checks; exit status 0 when every check passes, 1 when one fails. About 11 min on two cores "
                    "for a classic policy, most of it the search players' tables.",
    )
    parser.add_argument("candidate", metavar="CANDIDATE", help="the policy to judge, e.g. ckpt:runs/x/policy.pt")
    parser.add_argument("--baseline", metavar="SPEC",
                        help="the policy it would replace (default: the rules' shipped policy, e.g. ppo-classic)")
    arguments.add_rules_arguments(parser)
    parser.add_argument("--workers", type=arguments.positive_int, default=2,
                        help="processes (one per core); results do not depend on it")
    parser.add_argument("--out", metavar="FILE.md", help="also write the table of the checks as Markdown")
    parser.add_argument("--json", action="store_true", help="print the checks as one JSON object instead")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = arguments.load_rules(args.rules, args.rule)
    baseline = args.baseline or next((spec for spec, (_, preset) in SHIPPED_POLICIES.items()
                                      if Rules.preset(preset).same_game(rules)), None)
    if baseline is None:
        raise UsageError(f"no shipped policy plays the rules {rules.name!r}; name one with --baseline")
    out = writable_file(args.out, "the table (--out)") if args.out else None
    for flag, spec in (("CANDIDATE", args.candidate), ("--baseline", baseline)):
        arguments.check_table_player(flag, spec, rules)  # (the rule judges policies, not search players)
    checks = promotion.checks_for(rules, promotion.CHECKS)
    if not checks:
        raise UsageError(f"no check of the promotion rule plays the rules {rules.name!r}")

    def report(row: dict) -> None:
        d = row["difference"]
        print(f"{row['name']}: {args.candidate} minus {baseline} {d['mean']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] "
              f"(needs {row['needs']}): {'passed' if row['passed'] else 'FAILED'}", file=sys.stderr, flush=True)

    try:
        verdict = promotion.judge(args.candidate, baseline, rules, checks, workers=args.workers,
                                  progress=not args.no_progress, on_result=report)
    except (arena.ArenaError, AgentSpecError) as err:
        raise UsageError(str(err)) from None
    table = promotion.to_markdown(verdict, args.candidate, baseline)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(table)
    print(json.dumps({"candidate": args.candidate, "baseline": baseline, **verdict}, indent=2) if args.json else table,
          end="\n" if args.json else "")
    return 0 if verdict["promoted"] else 1
