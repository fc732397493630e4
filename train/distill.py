"""Distilling card values into the policy network (rounds of expert iteration).

``collect``: tables of one *student* seat (a policy file, played greedily) and bots in the other
seats play one hand each, on the batched engine. At each of the student's decisions with a
choice, a *teacher* values every legal card (the penalty points of the hand after it, the student
playing its own later cards); the student's own card is then played, so the examples come from
the states the student reaches itself (DAgger). Decisions the teacher does not value are *kept*
with the student's own odds, so that a fit does not drift there. Two teachers:

* ``search``: the search player (``agents.search.SearchAgent``), a mean over sampled deals of the
  unseen cards, at card plays only (passes keep the student's own odds): tens of labels per second;
* ``expert``: the ``expert`` player's search over the student, narrowed (the student's three
  likeliest cards, worlds dealt by the belief model of ``hard``, ``hard`` in the rollouts):
  values for those cards only (the other legal cards are left unvalued), and the plays the
  student is sure of (90% or more) kept at its own odds, as the search plays them without
  searching: a few hundred labels a second, each a mean over worlds sampled from what the seat
  saw rather than the real deal;
* ``rollout``: every legal card played (or passed) and the hand played out once on the *real*
  deal (:func:`rollout_values`), at card plays, passes or both: one noisy but unbiased label per
  card, over a thousand labelled decisions per second.

The other seats are one bot per table batch; several (``opponent="hard,easy"``) take turns by
batch, so one collection mixes the tables a policy will meet. Shards of examples are written as
``.npz`` files; several worker processes collect in parallel, each from its own seeds.

``fit`` trains the student on them, by one of three losses: ``imitation`` (cross-entropy to the
teacher's preferences where they are clear, for the search's averaged values), ``regression``
(the logits learn minus the points) or ``improvement`` (the student's odds times
``exp(-points / T)``, learnt without bias from one-deal labels: :func:`improvement_loss`; among
the valued cards where the teacher values some only); the
kept decisions keep the student's own odds; plus a value fit. Held-out agreement with
the teacher's best card and regret (teacher points lost per decision; passes and card plays apart
where passes are labelled) are reported. The result is a normal policy checkpoint.

Command line: ``hearts distill collect|fit ...`` (``hearts_app/distill_cli.py``).
"""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import numpy as np

from hearts_env import deal, engine, loop
from hearts_env.observe import OBS_DIM
from hearts_env.rules import Rules
from hearts_env.state import PLAY, State

from .config import REWARD_SCALE


OTHERS, STUDENT = 0, 1  # the agents at a label-collection table, by index


def collect_shard(student_path: str, out: Path, hands: int, seed: int, tables: int = 256,
                  determinizations: int = 12, opponent: str = "hard", rules: str = "classic",
                  teacher: str = "search", pass_labels: bool = True, card_labels: bool = True, log=print,
                  skip: frozenset[str] | set[str] = frozenset(), student_name: str | None = None) -> int:
    """Play ``hands`` hands (``tables`` at a time) and write the student's labelled decisions to
    ``out/shard_<seed>_<k>.npz``; returns the number of examples.

    ``teacher="search"`` labels card plays with the search player (means over ``determinizations``
    sampled deals); ``teacher="rollout"`` plays every legal card on the real deal instead (see
    :func:`rollout_values`), at passes unless ``pass_labels`` is false and at card plays unless
    ``card_labels`` is false: a pass label is the hand played out after that card is picked, the
    student picking its remaining cards. Decisions with a choice that the teacher does not value
    (all passes for the search) are kept with the student's own odds (``kept_*`` arrays).

    A shard already in ``out`` (or named in ``skip``) is not collected again: an interrupted
    collection rerun with the same arguments goes on from where it stopped. Each batch's deals,
    pass directions and student seats are the same as in the first run; a bot or search that
    draws random numbers may draw others in the later batches. Shards are written whole (a temporary
    file, then renamed), so an interrupted run leaves no broken shard. ``student_name``: the
    student as recorded in the shards (a cluster worker reads its own copy of the file)."""
    import torch

    from agents import make
    from agents.checkpoint import load_policy
    from agents.search import SearchAgent

    torch.set_num_threads(1)
    rules_value = Rules.resolve(rules)
    student = load_policy(student_path, rules=rules_value)
    # The student plays its own later cards in the rollouts: the values are those of the student's
    # policy after one better card, so learning them is a policy-improvement step it can follow up.
    if teacher not in TEACHERS:
        raise ValueError(f"teacher must be one of {', '.join(TEACHERS)}, got {teacher!r}")
    if not (card_labels or (teacher == "rollout" and pass_labels)):
        raise ValueError("nothing to label: the search teacher labels card plays only, and the rollout teacher "
                         "needs card plays, passes or both")
    # A pass label plays a whole hand out for each of 11 to 13 cards: over half of the rollout
    # teacher's work goes into passes, whose labels are also the noisiest.
    label_passes = teacher == "rollout" and pass_labels
    label_plays = card_labels
    opponents = opponent_list(opponent)
    bots = {name: make(name, seed=seed, rules=rules_value) for name in opponents}
    if teacher == "expert":
        from agents import EXPERT_BELIEF

        expert = SearchAgent(rules_value, rollout="hard", own=student, base=student, determinizations=determinizations,
                             seed=seed, candidates=TEACHER_CANDIDATES, confident=TEACHER_CONFIDENT, belief=EXPERT_BELIEF)
        searches = dict.fromkeys(opponents, expert)
    elif teacher == "search":  # the rollouts are played by the table's own bot
        searches = {name: SearchAgent(rules_value, rollout=bots[name], own=student, determinizations=determinizations,
                                      seed=seed) for name in opponents}
    rng = np.random.default_rng([seed, 11])
    out.mkdir(parents=True, exist_ok=True)
    examples = 0
    for batch, start in enumerate(range(0, hands, tables)):
        n = min(tables, hands - start)
        others = bots[opponents[batch % len(opponents)]]
        search = searches[opponents[batch % len(opponents)]] if teacher != "rollout" else None
        meta = {"student": student_name or str(student_path), "opponent": opponents[batch % len(opponents)],
                "opponent_mix": opponents,
                "teacher": teacher, "determinizations": determinizations if teacher != "rollout" else 1,
                "pass_labels": label_passes, "card_labels": label_plays, "rules": rules_value.to_dict(), "seed": seed}
        began = time.perf_counter()
        state = engine.init_from_seeds(rules_value, deal.game_seeds(seed * 1_000_003 + batch, n),
                                       rng.integers(len(rules_value.pass_cycle), size=n), single_hand=True)
        learner = rng.integers(rules_value.num_players, size=n)
        path = out / f"shard_{seed}_{batch:04d}.npz"
        if path.name in skip or path.is_file():
            log(f"seed {seed} batch {batch}: {path.name} is already there, skipped")
            continue
        obs_rows, mask_rows, value_rows, kept_rows, is_pass_rows, branches = [], [], [], [], [], []

        def label(step: loop.Decisions) -> None:
            mine = step.agent == STUDENT
            chooses = mine & (step.mask.sum(axis=1) > 1)
            to_label = np.where(step.state.phase[step.rows] == PLAY, label_plays, label_passes)
            searched = None
            if teacher == "expert":  # the cards the expert would search; none where the student is sure
                searched = np.zeros_like(step.mask)
                rows = chooses.nonzero()[0]
                if rows.size:
                    actions, odds = student.policy(step.observation[rows], step.mask[rows])
                    searched[rows] = expert._candidates(step.mask[rows], odds, actions)
                to_label = to_label & (searched.sum(axis=1) > 1)
            kept = (chooses & ~to_label).nonzero()[0]
            if kept.size:  # kept as they are: the student's own odds
                obs, mask = step.observation[kept], step.mask[kept]
                kept_rows.append((obs.astype(np.float16), np.packbits(mask, axis=1),
                                  policy_probs(student.net, obs, mask)))
            ask = (chooses & to_label).nonzero()[0]
            if not ask.size:
                return
            obs, mask = step.observation[ask], step.mask[ask]
            candidates = None if searched is None else searched[ask]
            if teacher == "rollout":  # valued at the end of the batch, all together
                branches.append(branch(step.state, step.rows[ask], step.games[ask], mask))
                obs_rows.append(obs.astype(np.float16))
                mask_rows.append(np.packbits(mask, axis=1))
                is_pass_rows.append(step.state.phase[step.rows[ask]] != PLAY)
            else:
                for part in np.array_split(np.arange(ask.size), max(1, -(-ask.size // 128))):
                    if part.size:
                        values = search.card_values(obs[part], mask[part],
                                                    None if candidates is None else candidates[part])
                        value_rows.append(values.astype(np.float32))
                        obs_rows.append(obs[part].astype(np.float16))
                        mask_rows.append(np.packbits(mask[part], axis=1))

        seating = np.where(np.arange(rules_value.num_players)[None, :] == learner[:, None], STUDENT, OTHERS)
        loop.play(state, [others, student], seating, on_decision=label)
        if branches:  # all of this batch's branches finish together: one large batch is fastest
            value_rows.append(rollout_values(branches, learner, student, others))
        if obs_rows:
            labelled = sum(len(v) for v in value_rows)
            temporary = path.with_name(f".{path.name}.tmp")
            with open(temporary, "wb") as stream:
                np.savez(stream, meta=np.array(json.dumps(meta)), obs=np.concatenate(obs_rows), mask=np.concatenate(mask_rows),
                         values=np.concatenate(value_rows),
                         is_pass=np.concatenate(is_pass_rows) if is_pass_rows else np.zeros(labelled, dtype=bool),
                         kept_obs=np.concatenate([r[0] for r in kept_rows]) if kept_rows else np.zeros((0, OBS_DIM), np.float16),
                         kept_mask=np.concatenate([r[1] for r in kept_rows]) if kept_rows else np.zeros((0, 7), np.uint8),
                         kept_probs=np.concatenate([r[2] for r in kept_rows]) if kept_rows else np.zeros((0, 52), np.float32))
            temporary.replace(path)
            examples += labelled
            log(f"seed {seed} batch {batch}: {labelled} examples in {time.perf_counter() - began:.0f} s -> {path.name}")
    return examples


#: The teachers of :func:`collect_shard`.
TEACHERS = ("search", "expert", "rollout")
#: The expert teacher's search: the student's three likeliest cards, none where it gives its card
#: 90% or more. (The ``expert`` player searches wider; these are the settings the shipped
#: policy's expert round was collected with, kept so that its recipe reproduces.)
TEACHER_CANDIDATES = 3
TEACHER_CONFIDENT = 0.9


def opponent_list(text: str) -> list[str]:
    """The bots of a collection: one spec, or several separated by commas (they take turns by batch)."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise ValueError(f"opponents are agent specs separated by commas, got {text!r}")
    return names


def branch(state, rows: np.ndarray, games: np.ndarray, mask: np.ndarray):
    """For each decision (row ``rows[i]`` of ``state``, game ``games[i]``, its legal cards
    ``mask[i]``), a copy of the game per legal card with that card played:
    ``(states, games, decision index, card)``."""
    decision, card = np.nonzero(mask)
    states = state.take(rows[decision])
    engine.step_inplace(states, card)
    return states, games, decision, card


def rollout_values(branches: list, learner: np.ndarray, own, others) -> np.ndarray:
    """``[N, 52]`` penalty points of the learner's hand after each legal card (inf: illegal),
    from :func:`branch` outputs in order, each branch finished once on the *real* deal: ``own``
    plays the learner's later cards, ``others`` the other seats.

    One real deal per label, so a label is noisy; but it is an unbiased sample of the card's value
    given what the learner saw (the real deal is a draw from exactly the deals consistent with
    it), the cards are compared on the same deal, and it costs one rollout per card where the
    search's mean costs dozens. Learning from many such labels averages the noise out (the
    regression and improvement losses of :func:`fit`)."""
    from agents.search import finish_hands

    states = State.concatenate([b[0] for b in branches])
    seats = np.concatenate([learner[b[1][b[2]]] for b in branches])
    finish_hands(states, seats, own, others)
    points = states.last_hand_points[np.arange(states.batch_size), seats]
    values, start = [], 0
    for _, games, decision, card in branches:
        block = np.full((games.size, 52), np.inf, dtype=np.float32)
        block[decision, card] = points[start:start + card.size]
        values.append(block)
        start += card.size
    return np.concatenate(values)


def policy_probs(net, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The policy's probabilities ``[N, 52]`` (float32)."""
    import torch

    out = np.empty((len(obs), 52), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(obs), 65536):  # in pieces: the whole set may not fit as float32
            part = slice(start, start + 65536)
            logits, _ = net(torch.as_tensor(obs[part], dtype=torch.float32), torch.as_tensor(mask[part]))
            out[part] = torch.softmax(logits, dim=-1).numpy()
    return out


# The arrays of a shard that fitting reads (any others are left on disk).
SHARD_ARRAYS = ("obs", "mask", "values", "is_pass", "kept_obs", "kept_mask", "kept_probs")


def load_shards(folder: Path) -> dict[str, np.ndarray]:
    """All examples of a folder of shards: labelled decisions (``obs`` float16, ``mask`` bool,
    ``values``, ``is_pass``: which of them are passes) and the decisions the teacher left alone
    (``kept_obs``, ``kept_mask``, ``kept_probs``: the student's own odds).

    Each array is allocated once from the shards' headers and filled shard by shard: concatenating
    would hold every observation twice, and a round of 10 M decisions holds 12 GB of them."""
    paths = sorted(Path(folder).glob("shard_*.npz"))
    if not paths:
        raise FileNotFoundError(f"no shard_*.npz files in {folder}")
    headers = [_array_headers(path) for path in paths]
    for path, header in zip(paths, headers):
        missing = [name for name in (*SHARD_ARRAYS, "meta") if name not in header]
        if missing:
            raise ValueError(f"{path} is not a shard of `hearts distill collect`: it lacks {', '.join(missing)}")
    out = {name: np.zeros((sum(h[name][0][0] for h in headers), *headers[0][name][0][1:]), headers[0][name][1])
           for name in SHARD_ARRAYS}
    filled = dict.fromkeys(SHARD_ARRAYS, 0)
    rules, first_rules = set(), None
    for path, header in zip(paths, headers):
        try:
            with np.load(path, allow_pickle=False) as data:
                shard_rules = json.loads(str(data["meta"]))["rules"]
                first_rules = first_rules or shard_rules
                # The game, not its label, must match (a preset changed by options is named "custom").
                rules.add(json.dumps({k: v for k, v in shard_rules.items() if k != "name"}, sort_keys=True))
                for name in SHARD_ARRAYS:
                    rows = header[name][0][0]
                    out[name][filled[name]:filled[name] + rows] = data[name]
                    filled[name] += rows
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as err:
            raise ValueError(f"{path} is not a readable shard of `hearts distill collect` ({err!r:.120})") from None
    if len(rules) > 1:
        raise ValueError(f"the shards in {folder} were collected under different rules; keep one rule set per folder")
    out["rules"] = first_rules
    for name in ("obs", "kept_obs"):
        if out[name].shape[1] != OBS_DIM:
            raise ValueError(f"shards hold {out[name].shape[1]}-float observations, this version has {OBS_DIM}")
    for name in ("mask", "kept_mask"):
        out[name] = np.unpackbits(out[name], axis=1, count=52).astype(bool)
    return out


def _array_headers(path: Path) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Each array's shape and dtype in an ``.npz`` file, read from its header alone."""
    shapes = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                with archive.open(member) as stream:
                    major, _ = np.lib.format.read_magic(stream)
                    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                    shape, _, dtype = read(stream)
                shapes[member.removesuffix(".npy")] = (shape, dtype)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:  # truncated, not a zip, not .npy inside
        raise ValueError(f"{path} is not a readable shard of `hearts distill collect` ({err})") from None
    return shapes


def describe(measured: dict[str, float]) -> str:
    """One line of :func:`fit`'s held-out measures."""
    text = f"agreement with the teacher {measured['agreement']:.3f}, regret {measured['regret']:.3f} points/decision"
    if "pass_regret" in measured and "play_regret" in measured:
        text += f" (passes {measured['pass_regret']:.3f}, card plays {measured['play_regret']:.3f})"
    elif "pass_regret" in measured:
        text += " (passes only)"
    if "unvalued" in measured:
        text += f"; {measured['unvalued']:.1%} of its cards unvalued by the teacher (left out of the regret)"
    return text


def teacher_targets(values: np.ndarray, mask: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(-values / T)`` over the legal cards (zeros elsewhere)."""
    legal_values = np.where(mask, values, np.inf)
    best = legal_values.min(axis=1, keepdims=True)
    weight = np.where(mask, np.exp(-(legal_values - best) / temperature), 0.0)
    return (weight / weight.sum(axis=1, keepdims=True)).astype(np.float32)


def fit_targets(values: np.ndarray, mask: np.ndarray, own_probs: np.ndarray, temperature: float,
                margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The card-play targets and which decisions the teacher overrules.

    The teacher's values are means over a dozen sampled deals: small differences are noise. Where
    the student's own (most probable) card is within ``margin`` points of the teacher's best, the
    student keeps its own odds; elsewhere it learns ``softmax(-values / T)``.
    """
    legal_values = np.where(mask, values, np.inf)
    own_card = own_probs.argmax(axis=1)
    gap = legal_values[np.arange(len(values)), own_card] - legal_values.min(axis=1)
    overruled = gap > margin
    target = np.where(overruled[:, None], teacher_targets(values, mask, temperature), own_probs)
    return target.astype(np.float32), overruled


def centered_regression_loss(logits, values, mask):
    """Mean squared error between the logits and minus the points, both centred over each
    decision's legal cards, in units of 26 points: only the differences between one decision's
    cards are learnt, so the luck of the deal (shared by all its cards) drops out."""
    import torch

    count = mask.sum(dim=-1, keepdim=True)
    target = torch.where(mask, -values, torch.zeros_like(values))
    target = target - target.sum(dim=-1, keepdim=True) / count
    pred = torch.where(mask, logits, torch.zeros_like(logits))
    pred = pred - pred.sum(dim=-1, keepdim=True) / count
    error = torch.where(mask, (pred - target) * REWARD_SCALE, torch.zeros_like(pred))
    return (error ** 2).sum() / mask.sum()


def improvement_loss(logits, values, mask, old_log_probs, temperature: float, valued=None):
    """``sum_a pi(a) * (points(a) / T + log pi(a) - log pi_old(a))`` per decision, averaged: the
    expected points under the new policy plus T times its divergence KL(pi || pi_old) from the
    student's. Minimised exactly by ``pi ~ pi_old * exp(-points / T)``, the student improved by the
    card values and kept near itself where they are unclear; and, being linear in the points, its
    mean over noisy one-deal labels is its value for their expectation: the noise averages out.

    ``valued`` marks the cards with points where a teacher values some legal cards only (the expert
    teacher's candidates): see :func:`improvement_among_valued_loss`.
    """
    import torch

    if valued is not None:
        # Apart, rather than this with every legal card valued: a rollout fit keeps its exact
        # arithmetic, so a recipe's rounds still give the same weights bit for bit.
        return improvement_among_valued_loss(logits, values, mask, old_log_probs, temperature, valued)
    log_probs = torch.log_softmax(logits, dim=-1)
    probs = log_probs.exp()
    points = torch.where(mask, values, torch.zeros_like(values))
    old = torch.where(mask, old_log_probs, torch.zeros_like(old_log_probs))
    per_card = torch.where(mask, points / temperature + log_probs - old, torch.zeros_like(points))
    return (probs * per_card).sum(dim=-1).mean()


def improvement_among_valued_loss(logits, values, mask, old_log_probs, temperature: float, valued):
    """:func:`improvement_loss` where only the ``valued`` legal cards have points. The improvement
    acts among those: the odds of each valued card, given that one of them is played, learn the
    student's such odds times ``exp(-points / T)``; the odds of the unvalued cards, and the share of
    the valued ones as a whole, are held at the student's (by the divergence over that coarser
    split). With every legal card valued it equals :func:`improvement_loss`."""
    import torch

    valued = valued & mask
    zeros = torch.zeros_like(values)
    log_probs = torch.log_softmax(logits, dim=-1)
    old = torch.where(mask, old_log_probs, zeros)
    # The log of the valued cards' share, new and old (a decision with none valued adds nothing).
    none = torch.full_like(values, -1e30)  # finite, so that such a decision's gradients stay finite
    any_valued = valued.any(dim=-1, keepdim=True)
    share = torch.where(any_valued, torch.logsumexp(torch.where(valued, log_probs, none), dim=-1, keepdim=True), 0.0)
    old_share = torch.where(any_valued, torch.logsumexp(torch.where(valued, old, none), dim=-1, keepdim=True), 0.0)
    given = log_probs - share
    points = torch.where(valued, values, zeros)
    within = torch.where(valued, given.exp() * (points / temperature + given - (old - old_share)), zeros).sum(dim=-1)
    unvalued = mask & ~valued
    rest = torch.where(unvalued, log_probs.exp() * (log_probs - old), zeros).sum(dim=-1)
    rest = rest + (share.exp() * (share - old_share)).squeeze(-1)
    return (within + rest).mean()


def fit(start_path: str, data: Path, out_path: Path, epochs: int = 4, temperature: float = 1.0,
        margin: float = 2.0, learning_rate: float = 3e-4, batch_size: int = 2048, holdout: float = 0.05,
        seed: int = 0, loss: str = "imitation", hidden: list[int] | None = None, card_scorer: int | None = None,
        log=print) -> dict:
    """Train the policy of ``start_path`` on the teacher's values (card plays, and passes where the
    rollout teacher labelled them) and on its own odds (the decisions the teacher left alone);
    write a checkpoint to ``out_path``.

    ``loss="imitation"``: cross-entropy to the teacher's preferences where they beat the student's
    card by more than ``margin`` (for the search teacher's averaged values). ``loss="regression"``:
    the logits learn minus the points of each legal card, centred per decision
    (:func:`centered_regression_loss`), so the greedy card is the one expected to cost the fewest
    points and ``softmax(logits)`` weighs cards by e per point. ``loss="improvement"``: the
    student's odds times ``exp(-points / T)`` (:func:`improvement_loss`), which stays near the
    student where the values are unclear. Both suit the rollout teacher's noisy one-deal labels,
    whose noise they average out where a cross-entropy to each label's best card would learn it;
    in the measurements so far only the improvement loss beat its student.

    ``hidden`` grows the start's network to those layers first (``agents.policy.widened``: it plays
    exactly as before until the fit uses the new units), for more capacity to learn the values;
    ``card_scorer`` adds (or grows) the per-card scorer of ``agents.card_scorer`` the same way.

    Reported on held-out labelled decisions: agreement with the teacher (the student's card is one
    the teacher values best, equal values included), and *regret*,
    the teacher's points for the student's greedy card minus those of its best card (per decision;
    passes and card plays apart where passes are labelled).
    """
    import torch
    from torch import nn

    from agents.checkpoint import load_net, save
    from agents.base import sha256_file
    from agents.policy import widened

    if loss not in ("imitation", "regression", "improvement"):
        raise ValueError(f"loss must be 'imitation', 'regression' or 'improvement', got {loss!r}")
    torch.manual_seed(seed)
    net, meta = load_net(start_path)
    start_hidden = list(net.hidden)
    start_scorer = net.card_scorer_units
    if hidden is not None or card_scorer is not None:  # an exact copy when the sizes match; a ValueError naming both when they cannot grow
        net = widened(net, hidden if hidden is not None else net.hidden, card_scorer)
    shards = load_shards(data)
    if not Rules.from_dict(shards["rules"]).same_game(Rules.from_dict(meta["rules"])):
        raise ValueError(f"the shards in {data} were collected under other rules than {start_path} plays")
    obs_t, mask_t = torch.as_tensor(shards["obs"]), torch.as_tensor(shards["mask"])
    # Rounds of millions of decisions: the large arrays are changed in place rather than copied.
    values = shards.pop("values").astype(np.float32, copy=False)
    values[~shards["mask"]] = np.inf
    # Legal cards the teacher left unvalued (the expert teacher values its candidates only).
    valued = np.isfinite(values)
    partly_valued = not valued[shards["mask"]].all()
    if loss == "regression" and partly_valued:
        # It weighs every legal card by its points; an unvalued card would read as free.
        raise ValueError(f"the shards in {data} leave some legal cards unvalued (the expert teacher values the cards "
                         f"it searches only); fit them with loss 'imitation' or 'improvement', not {loss!r}")
    # The student's own odds before any update: the margin rule's fallback, or the improvement's anchor.
    own_probs = policy_probs(net, shards["obs"], shards["mask"]) if loss != "regression" else None
    if loss == "imitation":
        target_array, overruled = fit_targets(values, shards["mask"], own_probs, temperature, margin)
        target = torch.as_tensor(target_array)
    else:
        overruled = np.zeros(len(values), dtype=bool)
    if loss == "improvement":
        old_log_probs = torch.as_tensor(np.log(np.maximum(own_probs, 1e-30, out=own_probs), out=own_probs))
    value_target = torch.as_tensor(-values.min(axis=1) * REWARD_SCALE, dtype=torch.float32)
    best_t = torch.as_tensor(values.argmin(axis=1))
    valued_t = torch.as_tensor(valued)
    values[~valued] = 0.0  # the losses and the regret read the valued cards' points only
    values_t = torch.as_tensor(values)
    is_pass_t = torch.as_tensor(shards["is_pass"])
    has_kept = len(shards["kept_obs"]) > 0
    if has_kept:
        kept_obs, kept_mask = torch.as_tensor(shards["kept_obs"]), torch.as_tensor(shards["kept_mask"])
        kept_probs = torch.as_tensor(shards["kept_probs"])
    n = len(obs_t)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    held = torch.as_tensor(order[: max(1, int(n * holdout))]) if n > 1 else torch.as_tensor(order[:0])
    train = order[len(held):]

    def measure() -> dict[str, float]:
        if not len(held):
            return {"agreement": 0.0, "regret": 0.0}
        net.eval()
        with torch.no_grad():
            logits, _ = net(obs_t[held].float(), mask_t[held])
        net.train()
        chosen = logits.argmax(-1)
        regret = values_t[held].gather(1, chosen[:, None]).squeeze(1) - values_t[held].gather(1, best_t[held][:, None]).squeeze(1)
        valued = valued_t[held].gather(1, chosen[:, None]).squeeze(1)
        # Agreement: the student's card is one the teacher values best. Equal values are common
        # (neighbouring cards such as 2♥ and 3♥ often play out the same), so the student agrees
        # with any of them, not only with the first in card order.
        agrees = valued & (regret <= 1e-6)
        out = {"agreement": float(agrees.float().mean()), "regret": float(regret.mean())}
        if not valued.all():  # a card the teacher did not value has no regret to count: reported apart
            out["regret"] = float(regret[valued].mean()) if valued.any() else 0.0
            out["unvalued"] = float((~valued).float().mean())
        passes = is_pass_t[held]
        if passes.any():  # the rollout teacher labels passes: their regret apart from the card plays'
            out["pass_regret"] = float(regret[passes].mean())
            if not passes.all():
                out["play_regret"] = float(regret[~passes].mean())
        return out

    before = measure()
    stats: dict = {"examples": n, "kept_examples": len(shards["kept_obs"]), "loss": loss,
                   "overruled": float(overruled.mean()), "before": before}
    overrule_note = (f" ({overruled.mean():.1%} where the teacher overrules the student by more than {margin} points)"
                     if loss == "imitation" else "")
    log(f"{n:,} labelled decisions ({int(shards['is_pass'].sum()):,} of them passes){overrule_note}, "
        f"{stats['kept_examples']:,} decisions kept at the student's odds; held out: {describe(before)}")
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    steps_per_epoch = max(1, -(-len(train) // batch_size))
    for epoch in range(epochs):
        shuffled = torch.as_tensor(rng.permutation(train))
        kept_order = torch.as_tensor(rng.permutation(len(kept_obs))) if has_kept else None
        kept_batch = -(-len(kept_obs) // steps_per_epoch) if has_kept else 0
        losses = []
        for step, begin in enumerate(range(0, len(shuffled), batch_size)):
            for group in optimizer.param_groups:  # linear decay to zero
                group["lr"] = learning_rate * (1 - (epoch * steps_per_epoch + step) / (epochs * steps_per_epoch))
            idx = shuffled[begin:begin + batch_size]
            logits, value = net(obs_t[idx].float(), mask_t[idx])
            if loss == "imitation":
                policy_loss = -(target[idx] * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
            elif loss == "regression":
                policy_loss = centered_regression_loss(logits, values_t[idx], mask_t[idx])
            else:
                policy_loss = improvement_loss(logits, values_t[idx], mask_t[idx], old_log_probs[idx], temperature,
                                               valued_t[idx] if partly_valued else None)
            total = policy_loss + 0.5 * ((value - value_target[idx]) ** 2).mean()
            if has_kept:
                rows = kept_order[step * kept_batch:(step + 1) * kept_batch]
                if len(rows):
                    kept_logits, _ = net(kept_obs[rows].float(), kept_mask[rows])
                    total = total - (kept_probs[rows] * torch.log_softmax(kept_logits, dim=-1)).sum(dim=-1).mean()
            optimizer.zero_grad()
            total.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            optimizer.step()
            losses.append(policy_loss.item())
        stats[f"epoch_{epoch + 1}"] = measure()
        log(f"epoch {epoch + 1}: mean policy loss {np.mean(losses):.3f}; held out: {describe(stats[f'epoch_{epoch + 1}'])}")
    meta = dict(meta)
    # Each round records the one before it ("after"), so a policy's whole lineage stays in its file:
    # the start by name and content, not by a path of this machine (a shipped file would carry it).
    meta["distilled"] = {"start": Path(start_path).name, "start_sha256": sha256_file(start_path),
                         "data": Path(data).name, "examples": n, "epochs": epochs, "loss": loss,
                         "temperature": temperature, "margin": margin, "learning_rate": learning_rate,
                         "batch_size": batch_size, "seed": seed, "start_hidden": start_hidden,
                         "start_card_scorer": start_scorer,
                         "after": meta.get("distilled")}
    save(out_path, net, meta)
    return stats
