"""How confident is each round's student? A measurement behind docs/training.md ("Rounds nine to eleven").

On the labelled decisions of one shard of ``hearts distill collect``, for each policy: the mean
probability of its most probable card (card plays, then passes), how often it exceeds 0.95 and 0.99,
the mean entropy over card plays, and the median advantage (points) another card needs to be
preferred to the most probable one under ``pi_old * exp(-points / T)``: T times the log of their
odds' ratio.

    git show 1f98368:agents/policies/ppo_classic.pt > ppo.pt
    python scripts/student_confidence.py data/cfq/round8/shard_901_0000.npz ppo.pt data/cfq/round4.pt \\
        data/cfq/round6_e6.pt data/cfq/round8.pt
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from agents.checkpoint import load_net
from train.distill import policy_probs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shard", help="one shard_*.npz from `hearts distill collect`")
    parser.add_argument("policies", nargs="+", help="policy checkpoints to compare")
    parser.add_argument("--temperature", type=float, default=0.5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with np.load(args.shard) as data:
        obs = data["obs"]
        mask = np.unpackbits(data["mask"], axis=1, count=52).astype(bool)
        passes = data["is_pass"]
    plays = ~passes
    print(f"{len(obs)} decisions, {passes.mean():.1%} of them passes")
    for path in args.policies:
        net, _ = load_net(path)
        probs = policy_probs(net, obs, mask)
        top = probs.max(axis=1)
        entropy = -np.where(probs > 0, probs * np.log(np.maximum(probs, 1e-30)), 0).sum(axis=1)
        ranked = np.sort(probs, axis=1)
        overrule = args.temperature * np.log(ranked[:, -1] / np.maximum(ranked[:, -2], 1e-30))
        print(f"{path:28s} card plays: top card {top[plays].mean():.3f}, above 0.95 {np.mean(top[plays] > 0.95):.3f}, "
              f"above 0.99 {np.mean(top[plays] > 0.99):.3f}, entropy {entropy[plays].mean():.3f}, median advantage "
              f"to overrule at T = {args.temperature} {np.median(overrule[plays]):.2f} | passes: top card "
              f"{top[passes].mean():.3f}")


if __name__ == "__main__":
    main()
