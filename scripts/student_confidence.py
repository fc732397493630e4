"""How confident is each round's student? (docs/training.md, "Rounds nine to eleven").

On the card plays and passes of one round-eight shard: the mean probability of each policy's most probable
card, how often it exceeds 0.95 and 0.99, the entropy, and the median advantage (points) another card needs to
be preferred under pi_old * exp(-points / T) at T = 0.5.

    git show 1f98368:agents/policies/ppo_classic.pt > /tmp/ppo_policy.pt; python scripts/student_confidence.py
"""
import numpy as np
import torch

torch.set_num_threads(1)
from agents.checkpoint import load_net
from train.distill import policy_probs
d = np.load("data/cfq/round8/shard_901_0000.npz")
obs = d["obs"]; mask = np.unpackbits(d["mask"], axis=1, count=52).astype(bool); isp = d["is_pass"]
vals = np.where(mask, d["values"], np.inf)
print(len(obs), "decisions, passes", isp.mean())
for p in ["/tmp/ppo_policy.pt", "data/cfq/round4.pt", "data/cfq/round6_e6.pt", "data/cfq/round8.pt"]:
    net, _ = load_net(p)
    pr = policy_probs(net, obs, mask)
    pl = ~isp
    mx = pr.max(1)
    ent = -(np.where(pr > 0, pr * np.log(np.maximum(pr, 1e-30)), 0)).sum(1)
    # gap needed to flip greedy to second best at T=0.5
    srt = np.sort(pr, 1)
    need = 0.5 * np.log(srt[:, -1] / np.maximum(srt[:, -2], 1e-30))
    print(f"{p:28s} plays: maxp {mx[pl].mean():.3f} >0.95 {np.mean(mx[pl]>0.95):.3f} >0.99 {np.mean(mx[pl]>0.99):.3f} ent {ent[pl].mean():.3f} median flip-gap {np.median(need[pl]):.2f} | passes maxp {mx[isp].mean():.3f}")
