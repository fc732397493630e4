"""How noisy is one deal's card value? A measurement behind docs/training.md ("Why the rounds gain little").

For the first card plays with a choice in one shard of ``hearts distill collect`` (default: 400), the
search's machinery values every legal card on ``--deals`` sampled deals, one at a time (the
student finishing its own cards, ``hard`` bots the others). Printed: the student's regret against
the mean over those deals, and the spread over deals of a card's value minus the student's card's
value on the same deal: the noise that one real-deal label carries beside the signal.

    python scripts/label_noise.py data/cfq/round7/shard_801_0000.npz round6.pt   # the shard's student
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from agents.checkpoint import load_policy
from agents.search import SearchAgent
from hearts_env.rules import Rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shard", help="one shard_*.npz from `hearts distill collect`")
    parser.add_argument("student", help="the policy checkpoint that finishes its own cards")
    parser.add_argument("--decisions", type=int, default=400)
    parser.add_argument("--deals", type=int, default=48)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with np.load(args.shard) as data:
        rows = np.nonzero(~data["is_pass"])[0][: args.decisions]
        obs = data["obs"][rows].astype(np.float32)
        mask = np.unpackbits(data["mask"][rows], axis=1, count=52).astype(bool)
        rules = Rules.from_dict(json.loads(str(data["meta"]))["rules"])  # the shard's own rules
    student = load_policy(args.student, rules=rules)
    values = np.stack([SearchAgent(rules, rollout="hard", own=student, determinizations=1, seed=1000 + k)
                       .card_values(obs, mask) for k in range(args.deals)])  # [deals, N, 52]
    n = np.arange(len(rows))
    own = student.act(obs, mask)
    mean = np.where(mask, values.mean(axis=0), np.inf)
    best = mean.argmin(axis=1)
    gap = mean[n, own] - mean[n, best]
    spread = np.where(mask[None], values - values[:, n, own][:, :, None], np.nan).std(axis=0)  # [N, 52]
    others = mask.copy()
    others[n, own] = False
    better = gap > 0
    print(f"{len(rows)} card plays, {mask.sum(axis=1).mean():.2f} legal cards on average, {args.deals} deals each")
    print(f"student's regret against the {args.deals}-deal mean: {gap.mean():.3f} points per decision; "
          f"another card looks better in {better.mean():.0%}, by more than a point in {(gap > 1).mean():.0%}")
    print(f"one deal's value of a card minus the student's card's: spread (sd) {np.nanmean(spread[others]):.2f} points")
    print(f"where the best card beats the student's: by {gap[better].mean():.2f} points on the mean, one-deal sd "
          f"{spread[n, best][better].mean():.2f}, so the {args.deals}-deal mean is itself uncertain by about "
          f"{spread[n, best][better].mean() / np.sqrt(args.deals):.2f}")


if __name__ == "__main__":
    main()
