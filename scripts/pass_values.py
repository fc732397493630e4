"""How much is a better pass pick worth to a policy against three hard bots?

``python scripts/pass_values.py STUDENT.pt HANDS K [--seed S]`` (docs/training.md, "A round for
the passes"; the fourteen-round ppo-classic: HANDS 120, K 64, seeds 11 and 12, 5 min each).

At a pass pick nothing has been played, so the other hands are uniformly distributed over the
39 unseen cards: sampled deals are exact (no sampler bias). For each pass decision of the student
(vs three hard), value every candidate card on two independent sets of K sampled deals (A, B), the
student picking its remaining cards and playing the hand, hard the others. Gain of picking by A,
measured on B: unbiased estimate of what a pass search would win per pick.
"""
import argparse
import time

import numpy as np

from agents import make
from agents.checkpoint import load_policy
from agents.search import finish_hands
from hearts_env import deal, engine
from hearts_env.observe import decode, observe
from hearts_env.rules import Rules
from hearts_env.state import PLAY

rules = Rules.preset("classic")
OFFSETS = list(rules.pass_offsets)
HAND_OF_OFFSET = {int(o): OFFSETS.index(o) for o in set(OFFSETS)}


def worlds(obs, k, rng):
    """K engine states per pass observation, the student as seat 0, other hands at random."""
    pieces = decode(obs)
    hand = pieces["hand"] > 0
    passed = pieces["passed"] > 0
    offset = pieces["pass_direction"].argmax(axis=1)
    b = obs.shape[0]
    hand_k = np.repeat(hand, k, axis=0)
    keys = rng.random(hand_k.shape) + hand_k * 2.0
    order = np.argsort(keys, axis=1)[:, :39]
    owners = np.zeros(hand_k.shape, dtype=np.int64)
    rows = np.arange(b * k)[:, None]
    for s in range(3):
        owners[rows, order[:, 13 * s:13 * s + 13]] = s + 1
    hand_numbers = np.repeat([HAND_OF_OFFSET[int(o)] for o in offset], k)
    state = engine.from_deals(rules, owners, hand_numbers, single_hand=True)
    # The picks already made, replayed in card order (seat 0 picks first, so they are its next actions).
    passed_k = np.repeat(passed, k, axis=0)
    picks = np.sort(np.where(passed_k, np.arange(52)[None, :], 99), axis=1)
    for j in range(int(passed_k.sum(axis=1).max(initial=0))):
        has = passed_k.sum(axis=1) > j
        engine.step_inplace(state, np.where(has, picks[:, j], 0), has.nonzero()[0])
    return state


def pass_values(obs, mask, k, rng, own, others):
    b = obs.shape[0]
    w = worlds(obs, k, rng)
    decision, card = np.nonzero(mask)
    idx = (decision[:, None] * k + np.arange(k)[None, :]).reshape(-1)
    st = w.take(idx)
    engine.step_inplace(st, np.repeat(card, k))
    finish_hands(st, np.zeros(st.batch_size, dtype=np.int64), own, others)
    values = np.full((b, 52), np.inf)
    pts = st.last_hand_points[:, 0].reshape(-1, k)
    values[decision, card] = pts.mean(axis=1)
    return values


def collect_decisions(student, hard, n_hands, seed):
    rng = np.random.default_rng(seed)
    hand_numbers = rng.choice([0, 1, 2], size=n_hands)  # hands with a pass
    state = engine.init_from_seeds(rules, deal.game_seeds(seed, n_hands), hand_numbers, single_hand=True)
    learner = rng.integers(4, size=n_hands)
    got_obs, got_mask, got_act = [], [], []
    while (state.phase[~state.done] != PLAY).any():
        live = ~state.done & (state.phase != PLAY)
        obs, mask = observe(state), engine.legal_mask(state)
        acts = np.zeros(n_hands, dtype=np.int64)
        mine = live & (state.current_player == learner)
        theirs = live & ~mine
        if theirs.any():
            acts[theirs] = hard.act(obs[theirs], mask[theirs])
        if mine.any():
            acts[mine] = student.act(obs[mine], mask[mine])
            got_obs.append(obs[mine])
            got_mask.append(mask[mine])
            got_act.append(acts[mine])
        engine.step_inplace(state, acts, live)
    return np.concatenate(got_obs), np.concatenate(got_mask), np.concatenate(got_act)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("student", help="policy checkpoint")
    parser.add_argument("hands", type=int, help="hands played to collect the student's pass picks (about 3 each)")
    parser.add_argument("k", type=int, help="sampled deals per set (two sets per pick)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    student_path, n_hands, k, seed = args.student, args.hands, args.k, args.seed
    student = load_policy(student_path, rules=rules)
    hard = make("hard", seed=seed, rules=rules)
    obs, mask, act = collect_decisions(student, hard, n_hands, seed)
    print(f"{len(obs)} pass decisions", flush=True)
    rng = np.random.default_rng([seed, 7])
    gains, regA, t0 = [], [], time.time()
    chunk = 8
    for s in range(0, len(obs), chunk):
        o, m, a = obs[s:s + chunk], mask[s:s + chunk], act[s:s + chunk]
        va = pass_values(o, m, k, rng, student, hard)
        vb = pass_values(o, m, k, rng, student, hard)
        best_a = va.argmin(axis=1)
        r = np.arange(len(o))
        gains.append(vb[r, a] - vb[r, best_a])
        regA.append(va[r, a] - va[r, best_a])
        g = np.concatenate(gains)
        print(f"{len(g)} decisions, {time.time() - t0:.0f} s: gain on B {g.mean():.3f} +- {1.96 * g.std() / np.sqrt(len(g)):.3f}; "
              f"A-regret {np.concatenate(regA).mean():.3f}; changed {np.mean(g != 0):.2f}", flush=True)
