"""Distilling card values into the policy network (rounds of expert iteration).

:func:`collect_shard`: tables of one *student* seat (a policy file, played greedily) and bots in
the other seats play one hand each, on the batched engine. At each of the student's decisions
with a choice, a *teacher* values the legal cards (the penalty points of the hand after each, the
student playing its own later cards); the student's own card is then played, so the examples come
from the states the student reaches itself (DAgger). Decisions the teacher does not value are
*kept* with the student's own odds, so that a fit does not drift there. Three teachers, one
function each:

* ``search`` (:func:`label_by_search`): the search player (``agents.search.SearchAgent``), a mean
  over sampled deals of the unseen cards, at card plays only (passes keep the student's own
  odds): tens of labels per second;
* ``expert`` (:func:`label_by_expert`): the expert's search over the student
  (``agents.expert_player``), narrowed (the student's three likeliest cards, worlds dealt by the
  belief model of ``hard``, ``hard`` in the rollouts): values for those cards only (the other
  legal cards are left unvalued), and the plays the student is sure of (90% or more) kept at its
  own odds, as the search plays them without searching: a few hundred labels a second, each a
  mean over worlds sampled from what the seat saw rather than the real deal;
* ``rollout`` (:func:`label_by_rollout`): every legal card played (or passed) and the hand played
  out once on the *real* deal (:func:`rollout_values`), at card plays, passes or both: one noisy
  but unbiased label per card, over a thousand labelled decisions per second.

The other seats are one bot per table batch; several (``opponent="hard,easy"``) take turns by
batch, so one collection mixes the tables a policy will meet. Shards of examples are written as
``.npz`` files; several worker processes collect in parallel, each from its own seeds.

:func:`fit` trains the student on them, by one of three losses, one function each:
:func:`imitation` (cross-entropy to the teacher's preferences where they are clear, for the
search's averaged values), :func:`regression` (the logits learn minus the points) or
:func:`improvement` (the student's odds times ``exp(-points / T)``, learnt without bias from
one-deal labels: :func:`improvement_loss`; among the valued cards where the teacher values some
only); the kept decisions keep the student's own odds; plus a value fit (:func:`train_policy`).
Held-out agreement with the teacher's best card and regret (teacher points lost per decision;
passes and card plays apart where passes are labelled) are reported. The result is a normal
policy checkpoint.

Command line: ``hearts distill collect|fit ...`` (``hearts_app/distill_cli.py``).
"""

from __future__ import annotations

import copy
import json
import time
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from agents import EXPERT_VALUE, expert_player, make
from agents.base import sha256_file
from agents.search import SearchAgent, finish_hands
from hearts_env import atomic_files, deal, engine, loop
from hearts_env.observe import OBS_DIM
from hearts_env.rules import Rules
from hearts_env.state import PLAY, State

from .config import REWARD_SCALE


OTHERS, STUDENT = 0, 1  # the agents at a label-collection table, by index

#: The teachers of :func:`collect_shard`.
TEACHERS = ("search", "expert", "expert-value", "rollout")
#: The expert teacher's search: the student's three likeliest cards, none where it gives its card
#: 90% or more. (The ``expert`` player searches wider; these are the settings the shipped
#: policy's expert round was collected with, kept so that its recipe reproduces.)
TEACHER_CANDIDATES = 3
TEACHER_CONFIDENT = 0.9


def collect_shard(student_path: str, out: Path, hands: int, seed: int, tables: int = 256,
                  determinizations: int = 12, opponent: str = "hard", rules: str = "classic",
                  teacher: str = "search", pass_labels: bool = True, card_labels: bool = True, log=print,
                  skip: frozenset[str] | set[str] = frozenset(), student_name: str | None = None,
                  value: str | None = None) -> int:
    """Play ``hands`` hands (``tables`` at a time) and write the student's labelled decisions to
    ``out/shard_<seed>_<k>.npz``; returns the number of examples.

    ``teacher="search"`` labels card plays with the search player (means over ``determinizations``
    sampled deals: :func:`label_by_search`); ``teacher="expert"`` with the expert's search over the
    student, narrowed (:func:`label_by_expert`), and ``teacher="expert-value"`` with the same search
    finishing its deals by the value model (``value``, a value file; default ``agents.EXPERT_VALUE``),
    several times cheaper; ``teacher="rollout"`` plays every legal card on the
    real deal instead (:func:`label_by_rollout`), at passes unless ``pass_labels`` is false and at
    card plays unless ``card_labels`` is false: a pass label is the hand played out after that card
    is picked, the student picking its remaining cards. Decisions with a choice that the teacher
    does not value (all passes for the search) are kept with the student's own odds (``kept_*``
    arrays).

    A shard already in ``out`` (or named in ``skip``) is not collected again: an interrupted
    collection rerun with the same arguments goes on from where it stopped. Each batch's deals,
    pass directions and student seats are the same as in the first run; a bot or search that
    draws random numbers may draw others in the later batches. Shards are written whole (a temporary
    file, then renamed), so an interrupted run leaves no broken shard. ``student_name``: the
    student as recorded in the shards (a cluster worker reads its own copy of the file)."""
    import torch

    from agents.checkpoint import load_policy  # (torch: the train extra)

    torch.set_num_threads(1)
    rules_value = Rules.resolve(rules)
    # The student plays its own later cards in the rollouts: the values are those of the student's
    # policy after one better card, so learning them is a policy-improvement step it can follow up.
    student = load_policy(student_path, rules=rules_value)
    if teacher not in TEACHERS:
        raise ValueError(f"teacher must be one of {', '.join(TEACHERS)}, got {teacher!r}")
    if not (card_labels or (teacher == "rollout" and pass_labels)):
        raise ValueError("nothing to label: the search teacher labels card plays only, and the rollout teacher "
                         "needs card plays, passes or both")
    # A pass label plays a whole hand out for each of 11 to 13 cards: over half of the rollout
    # teacher's work goes into passes, whose labels are also the noisiest.
    label_passes = teacher == "rollout" and pass_labels
    opponents = opponent_list(opponent)
    bots = {name: make(name, seed=seed, rules=rules_value) for name in opponents}
    # Each table's labelling, by its bot: label(step of decisions, shard).
    if teacher == "search":  # the rollouts are played by the table's own bot
        label = {name: partial(label_by_search, student=student,
                               search=SearchAgent(rules_value, rollout=bots[name], own=student,
                                                  determinizations=determinizations, seed=seed))
                 for name in opponents}
    elif teacher in ("expert", "expert-value"):  # expert-value: the deals finished by the value model
        expert = expert_player(student, rules_value, seed=seed, determinizations=determinizations,
                               candidates=TEACHER_CANDIDATES, confident=TEACHER_CONFIDENT,
                               value=(value or EXPERT_VALUE) if teacher == "expert-value" else None)
        label = dict.fromkeys(opponents, partial(label_by_expert, student=student, expert=expert))
    else:
        label = dict.fromkeys(opponents, partial(label_by_rollout, student=student, plays=card_labels,
                                                 passes=label_passes))
    rng = np.random.default_rng([seed, 11])
    out.mkdir(parents=True, exist_ok=True)
    examples = 0
    for batch, start in enumerate(range(0, hands, tables)):
        n = min(tables, hands - start)
        name = opponents[batch % len(opponents)]
        began = time.perf_counter()
        state = engine.init_from_seeds(rules_value, deal.game_seeds(seed * 1_000_003 + batch, n),
                                       rng.integers(len(rules_value.pass_cycle), size=n), single_hand=True)
        learner = rng.integers(rules_value.num_players, size=n)
        path = out / f"shard_{seed}_{batch:04d}.npz"
        if path.name in skip or path.is_file():
            log(f"seed {seed} batch {batch}: {path.name} is already there, skipped")
            continue
        shard = play_batch(state, learner, student, bots[name], label[name])
        if shard.obs:
            meta = {"student": student_name or str(student_path), "opponent": name, "opponent_mix": opponents,
                    "teacher": teacher, "determinizations": determinizations if teacher != "rollout" else 1,
                    "pass_labels": label_passes, "card_labels": card_labels, "rules": rules_value.to_dict(),
                    "seed": seed}
            labelled = shard.write(path, meta)
            examples += labelled
            log(f"seed {seed} batch {batch}: {labelled} examples in {time.perf_counter() - began:.0f} s -> {path.name}")
    return examples


def play_batch(state: State, learner: np.ndarray, student, others, label) -> Shard:
    """Play a batch of tables to the end of their hand, the ``student`` at seat ``learner[g]`` of
    table ``g`` and ``others`` in the other seats, ``label(step, shard)`` at each step of
    decisions; returns the batch's examples (the rollout teacher's labels valued at the end, all
    together: one large batch is fastest)."""
    shard = Shard()
    seating = np.where(np.arange(state.num_players)[None, :] == learner[:, None], STUDENT, OTHERS)
    loop.play(state, [others, student], seating, on_decision=lambda step: label(step, shard))
    if shard.branches:
        shard.values.append(rollout_values(shard.branches, learner, student, others))
    return shard


class Shard:
    """The examples of one batch of tables as they are collected (lists of arrays, one entry per
    step of decisions or search call): the labelled decisions (``obs``, ``mask`` packed, the
    teacher's ``values``, ``is_pass`` where the teacher labels passes), the rollout teacher's
    ``branches`` still to value, and the decisions ``kept`` at the student's own odds."""

    def __init__(self):
        self.obs, self.mask, self.values, self.is_pass, self.branches, self.kept = [], [], [], [], [], []

    def add(self, obs: np.ndarray, mask: np.ndarray) -> None:
        """Labelled decisions (their values are added apart)."""
        self.obs.append(obs.astype(np.float16))
        self.mask.append(np.packbits(mask, axis=1))

    def keep(self, student, step: loop.Decisions, rows: np.ndarray) -> None:
        """The decisions ``rows`` (bool per row of ``step``) kept with the student's own odds."""
        kept = rows.nonzero()[0]
        if kept.size:
            obs, mask = step.observation[kept], step.mask[kept]
            self.kept.append((obs.astype(np.float16), np.packbits(mask, axis=1), policy_probs(student.net, obs, mask)))

    def write(self, path: Path, meta: dict) -> int:
        """Write the shard to ``path`` whole (a temporary file, then renamed); returns its labelled decisions."""
        labelled = sum(len(v) for v in self.values)
        kept = self.kept
        atomic_files.write_stream(path, partial(
            np.savez, meta=np.array(json.dumps(meta)), obs=np.concatenate(self.obs),
            mask=np.concatenate(self.mask), values=np.concatenate(self.values),
            is_pass=np.concatenate(self.is_pass) if self.is_pass else np.zeros(labelled, dtype=bool),
            kept_obs=np.concatenate([r[0] for r in kept]) if kept else np.zeros((0, OBS_DIM), np.float16),
            kept_mask=np.concatenate([r[1] for r in kept]) if kept else np.zeros((0, 7), np.uint8),
            kept_probs=np.concatenate([r[2] for r in kept]) if kept else np.zeros((0, 52), np.float32)))
        return labelled


def student_chooses(step: loop.Decisions) -> np.ndarray:
    """Which rows of a step of decisions are the student's with more than one legal card."""
    return (step.agent == STUDENT) & (step.mask.sum(axis=1) > 1)


def label_by_search(step: loop.Decisions, shard: Shard, student, search) -> None:
    """The search teacher: the student's card plays valued by ``search`` (the search player over
    the table's bot, a mean over sampled deals of the unseen cards; every legal card valued), its
    passes kept at its own odds."""
    chooses = student_chooses(step)
    plays = step.state.phase[step.rows] == PLAY
    shard.keep(student, step, chooses & ~plays)
    value_by_search(step, shard, search, (chooses & plays).nonzero()[0])


def label_by_expert(step: loop.Decisions, shard: Shard, student, expert) -> None:
    """The expert teacher: the cards the ``expert`` (``agents.expert_player`` over the student)
    would search, valued (the other legal cards left unvalued); the card plays where it would play
    the student's card without searching, and the passes, kept at the student's own odds."""
    chooses = student_chooses(step)
    searched = np.zeros_like(step.mask)  # none where the student is sure of its card
    rows = chooses.nonzero()[0]
    if rows.size:
        actions, odds = student.policy(step.observation[rows], step.mask[rows])
        searched[rows] = expert.searched_cards(step.mask[rows], odds, actions)
    to_label = (step.state.phase[step.rows] == PLAY) & (searched.sum(axis=1) > 1)
    shard.keep(student, step, chooses & ~to_label)
    ask = (chooses & to_label).nonzero()[0]
    value_by_search(step, shard, expert, ask, searched[ask])


def value_by_search(step: loop.Decisions, shard: Shard, search, ask: np.ndarray,
                    candidates: np.ndarray | None = None) -> None:
    """The decisions ``ask`` (rows of ``step``) valued by ``search`` (at most 128 at a time), its
    ``candidates`` cards only where given."""
    obs, mask = step.observation[ask], step.mask[ask]
    for part in np.array_split(np.arange(ask.size), max(1, -(-ask.size // 128))):
        if part.size:
            values = search.card_values(obs[part], mask[part], None if candidates is None else candidates[part])
            shard.values.append(values.astype(np.float32))
            shard.add(obs[part], mask[part])


def label_by_rollout(step: loop.Decisions, shard: Shard, student, plays: bool, passes: bool) -> None:
    """The rollout teacher: each of the student's card ``plays`` and ``passes`` (either may be off)
    branched into one game per legal card (:func:`branch`), valued when the batch ends
    (:func:`rollout_values`); the decisions not labelled kept at the student's own odds."""
    chooses = student_chooses(step)
    to_label = np.where(step.state.phase[step.rows] == PLAY, plays, passes)
    shard.keep(student, step, chooses & ~to_label)
    ask = (chooses & to_label).nonzero()[0]
    if not ask.size:
        return
    mask = step.mask[ask]
    shard.branches.append(branch(step.state, step.rows[ask], step.games[ask], mask))
    shard.add(step.observation[ask], mask)
    shard.is_pass.append(step.state.phase[step.rows[ask]] != PLAY)


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
# Each one's kind of numbers (floats, packed bits, flags) and shape after its rows (None: the
# observation's size, checked apart with its own message), and which share rows: the labelled
# decisions and the kept ones.
_SHARD_COLUMNS = {"obs": ("f", (None,)), "mask": ("u1", (7,)), "values": ("f", (52,)), "is_pass": ("b1", ()),
                  "kept_obs": ("f", (None,)), "kept_mask": ("u1", (7,)), "kept_probs": ("f", (52,))}
_SHARD_ROWS = (("obs", "mask", "values", "is_pass"), ("kept_obs", "kept_mask", "kept_probs"))


def shard_paths(folder: Path) -> list[Path]:
    """The shards of a folder, in name order."""
    paths = sorted(Path(folder).glob("shard_*.npz"))
    if not paths:
        raise FileNotFoundError(f"no shard_*.npz files in {folder}")
    return paths


def shard_headers(paths: list[Path]) -> list[dict[str, tuple[tuple[int, ...], np.dtype]]]:
    """Each shard's arrays' shapes and dtypes, read from the headers alone; refuses a file that is
    not a shard."""
    headers = [_array_headers(path) for path in paths]
    for path, header in zip(paths, headers):
        missing = [name for name in (*SHARD_ARRAYS, "meta") if name not in header]
        if missing:
            raise ValueError(f"{path} is not a shard of `hearts distill collect`: it lacks {', '.join(missing)}")
        for name, (kind, columns) in _SHARD_COLUMNS.items():
            shape, dtype = header[name]
            if (len(shape) != 1 + len(columns) or any(c not in (None, s) for c, s in zip(columns, shape[1:]))
                    or (dtype.kind if len(kind) == 1 else f"{dtype.kind}{dtype.itemsize}") != kind):
                wanted = "".join(f", {OBS_DIM if c is None else c}" for c in columns)
                numbers = {"f": "floats", "u1": "uint8", "b1": "bool"}[kind]
                raise ValueError(f"{path} is not a shard of `hearts distill collect`: its {name} is "
                                 f"{dtype}{list(shape)}, where a shard has {numbers}[rows{wanted}]")
        for group in _SHARD_ROWS:
            if len({header[name][0][0] for name in group}) > 1:
                raise ValueError(f"{path} is not a shard of `hearts distill collect`: {', '.join(group)} have "
                                 f"{', '.join(str(header[name][0][0]) for name in group)} rows, not one count")
    return headers


def load_shards(folder: Path, paths: list[Path] | None = None) -> dict[str, np.ndarray]:
    """All examples of a folder of shards (or of its shards ``paths``): labelled decisions (``obs``
    float16, ``mask`` bool, ``values``, ``is_pass``: which of them are passes) and the decisions the
    teacher left alone (``kept_obs``, ``kept_mask``, ``kept_probs``: the student's own odds).

    Each array is allocated once from the shards' headers and filled shard by shard: concatenating
    would hold every observation twice, and a round of 10 M decisions holds 12 GB of them."""
    paths = shard_paths(folder) if paths is None else paths
    headers = shard_headers(paths)
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
        except (OSError, ValueError, KeyError, TypeError, RecursionError, zipfile.BadZipFile) as err:
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
    """Each array's shape and dtype in an ``.npz`` file, read from its header alone. Shards come from
    strangers too, and the arrays are allocated from these headers: each member must be stored
    uncompressed (as ``np.savez`` writes them; a compressed member could inflate a small file to
    gigabytes) and hold exactly the bytes its header declares, so no header claims more than the
    file holds."""
    shapes = {}

    def refuse(why: str) -> ShardError:
        return ShardError(f"{path} is not a readable shard of `hearts distill collect` ({why})")

    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.compress_type != zipfile.ZIP_STORED:
                    raise refuse(f"{info.filename} is compressed; shards store their arrays uncompressed")
                with archive.open(info) as stream:
                    major, _ = np.lib.format.read_magic(stream)
                    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                    shape, _, dtype = read(stream)
                    offset = stream.tell()
                declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if dtype.hasobject or offset + declared != info.file_size:
                    raise refuse(f"{info.filename} declares {declared:,} bytes ({dtype}{list(shape)}) but holds "
                                 f"{info.file_size - offset:,}")
                shapes[info.filename.removesuffix(".npy")] = (shape, dtype)
    except ShardError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:  # truncated, not a zip, not .npy inside
        raise refuse(str(err)) from None
    return shapes


class ShardError(ValueError):
    """A file that is not a readable shard; the message names it and says why."""


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


class Labels(NamedTuple):
    """A folder of shards, read for :func:`fit` (``N`` labelled decisions, ``K`` kept ones)."""

    folder: Path
    obs: np.ndarray  # [N, OBS_DIM] float16
    mask: np.ndarray  # [N, 52] bool: the legal cards
    values: np.ndarray  # [N, 52] float32: the teacher's points for each valued card, 0 elsewhere
    valued: np.ndarray  # [N, 52] bool: the cards the teacher valued (all legal ones, or its candidates)
    partly_valued: bool  # whether some legal cards are unvalued (the expert teacher's labels)
    value_target: np.ndarray  # [N] float32: minus the points of the teacher's best card, in reward units
    best: np.ndarray  # [N] int64: the teacher's best card
    is_pass: np.ndarray  # [N] bool
    kept_obs: np.ndarray  # [K, OBS_DIM] float16: the decisions kept at the student's own odds
    kept_mask: np.ndarray  # [K, 52] bool
    kept_probs: np.ndarray  # [K, 52] float32: the student's odds there


def read_labels(folder: Path, rules: dict, start_path: str, paths: list[Path] | None = None) -> Labels:
    """The shards of ``folder`` (or its shards ``paths``: :func:`load_shards`), refused unless
    collected under ``rules`` (those of the policy ``start_path``)."""
    shards = load_shards(folder, paths)
    if not Rules.from_dict(shards["rules"]).same_game(Rules.from_dict(rules)):
        raise ValueError(f"the shards in {folder} were collected under other rules than {start_path} plays")
    # Rounds of millions of decisions: the large arrays are changed in place rather than copied.
    values = shards.pop("values").astype(np.float32, copy=False)
    values[~shards["mask"]] = np.inf
    # Legal cards the teacher left unvalued (the expert teacher values its candidates only).
    valued = np.isfinite(values)
    partly_valued = not valued[shards["mask"]].all()
    value_target = -values.min(axis=1) * REWARD_SCALE
    best = values.argmin(axis=1)
    values[~valued] = 0.0  # the losses and the regret read the valued cards' points only
    return Labels(folder, shards["obs"], shards["mask"], values, valued, partly_valued, value_target, best,
                  shards["is_pass"], shards["kept_obs"], shards["kept_mask"], shards["kept_probs"])


def _no_kept(labels: Labels) -> dict[str, np.ndarray]:
    """Empty kept arrays of ``labels``' shapes (new arrays: a slice would keep the whole arrays alive)."""
    return {name: np.empty((0, *getattr(labels, name).shape[1:]), getattr(labels, name).dtype)
            for name in ("kept_obs", "kept_mask", "kept_probs")}


#: The arrays of :class:`Labels` with one row per labelled decision.
LABELLED = ("obs", "mask", "values", "valued", "value_target", "best", "is_pass")


def take_labels(labels: Labels, rows: np.ndarray) -> Labels:
    """The labelled decisions ``rows`` of ``labels`` (none of the kept ones), copied."""
    return labels._replace(**{name: getattr(labels, name)[rows] for name in LABELLED}, **_no_kept(labels))


def join_labels(parts: list[Labels]) -> Labels:
    """The labelled decisions of ``parts``, one after another (none of the kept ones)."""
    return parts[0]._replace(**{name: np.concatenate([getattr(part, name) for part in parts]) for name in LABELLED},
                             partly_valued=any(part.partly_valued for part in parts), **_no_kept(parts[0]))


class Objective(NamedTuple):
    """A loss of :func:`fit`, made ready for one set of labels."""

    policy_loss: Callable  # (logits [B, 52], rows [B] of the labels) -> the policy loss of those rows
    overruled: np.ndarray  # [N] bool: the decisions where the teacher's card replaces the student's
    note: str = ""  # what the fit's first line says of it


def imitation(net, labels: Labels, temperature: float, margin: float) -> Objective:
    """``loss="imitation"``: cross-entropy to the teacher's preferences ``softmax(-points / T)``
    (among the cards it valued) where its best card beats the student's by more than ``margin``
    points, to the student's own odds elsewhere (:func:`fit_targets`): for the search teachers'
    averaged values."""
    import torch

    own_probs = policy_probs(net, labels.obs, labels.mask)
    # The valued cards as the legal ones: the unvalued weigh nothing, and a student's card the
    # teacher left unvalued is overruled.
    target, overruled = fit_targets(labels.values, labels.valued, own_probs, temperature, margin)
    target = torch.as_tensor(target)

    def policy_loss(logits, rows):
        return -(target[rows] * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()

    return Objective(policy_loss, overruled,
                     f" ({overruled.mean():.1%} where the teacher overrules the student by more than {margin} points)")


def improvement(net, labels: Labels, temperature: float, margin: float) -> Objective:
    """``loss="improvement"``: the student's odds times ``exp(-points / T)`` (:func:`improvement_loss`;
    among the valued cards where the teacher values some only), which stays near the student where
    the values are unclear."""
    import torch

    own_probs = policy_probs(net, labels.obs, labels.mask)
    old_log_probs = torch.as_tensor(np.log(np.maximum(own_probs, 1e-30, out=own_probs), out=own_probs))
    values, mask, valued = (torch.as_tensor(a) for a in (labels.values, labels.mask, labels.valued))

    def policy_loss(logits, rows):
        return improvement_loss(logits, values[rows], mask[rows], old_log_probs[rows], temperature,
                                valued[rows] if labels.partly_valued else None)

    return Objective(policy_loss, np.zeros(len(labels.values), dtype=bool))


def regression(net, labels: Labels, temperature: float, margin: float) -> Objective:
    """``loss="regression"``: the logits learn minus the points of each legal card, centred per
    decision (:func:`centered_regression_loss`). Every legal card must be valued."""
    import torch

    if labels.partly_valued:  # it weighs every legal card by its points; an unvalued card would read as free
        raise ValueError(f"the shards in {labels.folder} leave some legal cards unvalued (the expert teacher values "
                         f"the cards it searches only); fit them with loss 'imitation' or 'improvement', not "
                         f"'regression'")
    values, mask = torch.as_tensor(labels.values), torch.as_tensor(labels.mask)

    def policy_loss(logits, rows):
        return centered_regression_loss(logits, values[rows], mask[rows])

    return Objective(policy_loss, np.zeros(len(labels.values), dtype=bool))


#: The losses of :func:`fit`, by name.
LOSSES = {"imitation": imitation, "regression": regression, "improvement": improvement}


def fit(start_path: str, data: Path, out_path: Path, epochs: int = 4, temperature: float = 1.0,
        margin: float = 2.0, learning_rate: float = 3e-4, batch_size: int = 2048, holdout: float = 0.05,
        seed: int = 0, loss: str = "imitation", hidden: list[int] | None = None, card_scorer: int | None = None,
        shards_in_memory: int | None = None, log=print) -> dict:
    """Train the policy of ``start_path`` on the teacher's values (card plays, and passes where the
    rollout teacher labelled them) and on its own odds (the decisions the teacher left alone);
    write a checkpoint to ``out_path``.

    ``loss``: one of :data:`LOSSES`. :func:`imitation` (cross-entropy to the teacher's preferences
    where they beat the student's card by more than ``margin``) suits the search teachers' averaged
    values; :func:`regression` (the logits learn minus the points, so the greedy card is the one
    expected to cost the fewest points and ``softmax(logits)`` weighs cards by e per point) and
    :func:`improvement` (the student's odds times ``exp(-points / T)``) suit the rollout teacher's
    noisy one-deal labels, whose noise they average out where a cross-entropy to each label's best
    card would learn it; in the measurements so far only the improvement loss beat its student.
    The training itself, with a value fit beside the policy loss: :func:`train_policy`.

    ``hidden`` grows the start's network to those layers first (``agents.policy.widened``: it plays
    exactly as before until the fit uses the new units), for more capacity to learn the values;
    ``card_scorer`` adds (or grows) the per-card scorer of ``agents.card_scorer`` the same way.

    ``shards_in_memory``: hold at most this many shards at once, streaming the rest from disk
    (each epoch visits the groups of shards in a random order, shuffled within each); the default
    holds them all, as one group. One group and several fit alike except for the order of the
    examples; the held-out decisions are the same either way.

    Reported on held-out labelled decisions: agreement with the teacher (the student's card is one
    the teacher values best, equal values included), and *regret*,
    the teacher's points for the student's greedy card minus those of its best card (per decision;
    passes and card plays apart where passes are labelled).
    """
    import torch

    from agents.checkpoint import load_net, save  # (torch: the train extra)
    from agents.policy import widened

    if loss not in LOSSES:
        raise ValueError(f"loss must be 'imitation', 'regression' or 'improvement', got {loss!r}")
    if shards_in_memory is not None and shards_in_memory < 1:
        raise ValueError(f"shards_in_memory must be 1 or more, got {shards_in_memory}")
    torch.manual_seed(seed)
    net, meta = load_net(start_path)
    start_hidden = list(net.hidden)
    start_scorer = net.card_scorer_units
    if hidden is not None or card_scorer is not None:  # an exact copy when the sizes match; a ValueError naming both when they cannot grow
        net = widened(net, hidden if hidden is not None else net.hidden, card_scorer)
    paths = shard_paths(data)
    per_group = len(paths) if shards_in_memory is None else shards_in_memory
    groups = [paths[i:i + per_group] for i in range(0, len(paths), per_group)]
    start = copy.deepcopy(net)  # the student's odds in the objectives stay the start's

    def read(group: list[Path]) -> Labels:
        return read_labels(data, meta["rules"], start_path, group)

    def objective_for(labels: Labels) -> Objective:
        return LOSSES[loss](start, labels, temperature, margin)

    stats = train_policy(net, groups, read, objective_for, loss, epochs, learning_rate, batch_size, holdout, seed,
                         log)
    meta = dict(meta)
    # Each round records the one before it ("after"), so a policy's whole lineage stays in its file:
    # the start by name and content, not by a path of this machine (a shipped file would carry it).
    meta["distilled"] = {"start": Path(start_path).name, "start_sha256": sha256_file(start_path),
                         "data": Path(data).name, "examples": stats["examples"], "epochs": epochs, "loss": loss,
                         "temperature": temperature, "margin": margin, "learning_rate": learning_rate,
                         "batch_size": batch_size, "seed": seed, "start_hidden": start_hidden,
                         "start_card_scorer": start_scorer,
                         "after": meta.get("distilled")}
    save(out_path, net, meta)
    return stats


def train_policy(net, groups: list[list[Path]], read: Callable[[list[Path]], Labels],
                 objective_for: Callable[[Labels], Objective], loss: str, epochs: int, learning_rate: float,
                 batch_size: int, holdout: float, seed: int, log) -> dict:
    """Fit ``net`` in place on the shards of ``groups``, each group read whole (``read``) when its
    turn comes: ``objective_for(labels)``'s policy loss on the labelled decisions, plus a value fit
    (to minus the points of the teacher's best card) and cross-entropy to the student's own odds on
    the kept decisions (spread over the group's steps); Adam, its step size decaying linearly to
    zero, gradients clipped to norm 0.5. A ``holdout`` share of the labelled decisions is held out
    and measured (:func:`held_out_measures`) before the fit and after each epoch: the returned stats.
    With one group it is read once and stays in memory; with several, each epoch reads them in a
    random order and only the held-out decisions stay."""
    import torch
    from torch import nn

    headers = [shard_headers(group) for group in groups]
    sizes = [sum(h["obs"][0][0] for h in group) for group in headers]
    kept_total = sum(h["kept_obs"][0][0] for group in headers for h in group)
    bounds = np.cumsum([0, *sizes])  # group g's labelled decisions are rows bounds[g] .. bounds[g+1]-1
    n = int(bounds[-1])
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    held = order[: max(1, int(n * holdout))] if n > 1 else order[:0]
    train = order[len(held):]
    if len(groups) == 1:
        resident = read(groups[0])
        resident_objective = objective_for(resident)
        held_labels, held_rows = resident, torch.as_tensor(held)
        overruled = float(resident_objective.overruled.mean())
        passes, note = int(resident.is_pass.sum()), resident_objective.note
    else:  # one pass over the groups gathers the held-out decisions, in held order
        per_read = len(groups[0])
        resident, parts, passes, note = None, [], 0, f", read {per_read} shard{'s' * (per_read > 1)} at a time"
        for g, group in enumerate(groups):
            labels = read(group)
            if loss == "regression" and labels.partly_valued:
                objective_for(labels)  # (refuses such labels, before any training)
            mine = held[(held >= bounds[g]) & (held < bounds[g + 1])]
            parts.append((mine, take_labels(labels, mine - bounds[g])))
            passes += int(labels.is_pass.sum())
            del labels
        rows = np.concatenate([mine for mine, _ in parts])
        position = np.argsort(rows)[np.searchsorted(np.sort(rows), held)]  # where each held row is in `rows`
        held_labels = take_labels(join_labels([part for _, part in parts]), position)
        held_rows = torch.arange(len(held))
        overruled = 0.0
    before = held_out_measures(net, held_labels, held_rows)
    stats: dict = {"examples": n, "kept_examples": kept_total, "loss": loss, "overruled": overruled, "before": before}
    log(f"{n:,} labelled decisions ({passes:,} of them passes){note}, {kept_total:,} decisions kept at the "
        f"student's odds; held out: {describe(before)}")
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    train_of = [train[(train >= bounds[g]) & (train < bounds[g + 1])] - bounds[g] for g in range(len(groups))]
    steps_of = [-(-len(rows) // batch_size) for rows in train_of]
    steps_per_epoch = max(1, sum(steps_of))
    for epoch in range(epochs):
        losses, step, overruled_sum = [], 0, 0.0
        for g in (range(1) if len(groups) == 1 else rng.permutation(len(groups))):
            labels, objective = (resident, resident_objective) if resident is not None else (
                read(groups[g]), None)
            if objective is None:
                objective = objective_for(labels)
                overruled_sum += float(objective.overruled.sum())
            obs_t, mask_t = torch.as_tensor(labels.obs), torch.as_tensor(labels.mask)
            value_target = torch.as_tensor(labels.value_target, dtype=torch.float32)
            has_kept = len(labels.kept_obs) > 0
            if has_kept:
                kept_obs, kept_mask = torch.as_tensor(labels.kept_obs), torch.as_tensor(labels.kept_mask)
                kept_probs = torch.as_tensor(labels.kept_probs)
            shuffled = torch.as_tensor(rng.permutation(train_of[g]))
            kept_order = torch.as_tensor(rng.permutation(len(kept_obs))) if has_kept else None
            kept_batch = -(-len(kept_obs) // max(1, steps_of[g])) if has_kept else 0
            for group_step, begin in enumerate(range(0, len(shuffled), batch_size)):
                for param_group in optimizer.param_groups:  # linear decay to zero
                    done = (epoch * steps_per_epoch + step) / (epochs * steps_per_epoch)
                    param_group["lr"] = learning_rate * (1 - done)
                idx = shuffled[begin:begin + batch_size]
                logits, value = net(obs_t[idx].float(), mask_t[idx])
                policy_loss = objective.policy_loss(logits, idx)
                total = policy_loss + 0.5 * ((value - value_target[idx]) ** 2).mean()
                if has_kept:
                    rows = kept_order[group_step * kept_batch:(group_step + 1) * kept_batch]
                    if len(rows):
                        kept_logits, _ = net(kept_obs[rows].float(), kept_mask[rows])
                        total = total - (kept_probs[rows] * torch.log_softmax(kept_logits, dim=-1)).sum(dim=-1).mean()
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                optimizer.step()
                losses.append(policy_loss.item())
                step += 1
            # The group's arrays go before the next group is read (only one group is held at a time).
            del labels, objective, obs_t, mask_t, value_target, shuffled
            if has_kept:
                del kept_obs, kept_mask, kept_probs, kept_order
        if resident is None and epoch == 0:
            stats["overruled"] = overruled_sum / max(1, n)
        stats[f"epoch_{epoch + 1}"] = held_out_measures(net, held_labels, held_rows)
        log(f"epoch {epoch + 1}: mean policy loss {np.mean(losses):.3f}; held out: {describe(stats[f'epoch_{epoch + 1}'])}")
    return stats


def held_out_measures(net, labels: Labels, held) -> dict[str, float]:
    """Agreement with the teacher and regret on the labelled decisions ``held`` (see :func:`fit`)."""
    import torch

    if not len(held):
        return {"agreement": 0.0, "regret": 0.0}
    values = torch.as_tensor(labels.values)[held]
    best = torch.as_tensor(labels.best)[held]
    net.eval()
    with torch.no_grad():
        logits, _ = net(torch.as_tensor(labels.obs)[held].float(), torch.as_tensor(labels.mask)[held])
    net.train()
    chosen = logits.argmax(-1)
    regret = values.gather(1, chosen[:, None]).squeeze(1) - values.gather(1, best[:, None]).squeeze(1)
    valued = torch.as_tensor(labels.valued)[held].gather(1, chosen[:, None]).squeeze(1)
    # Agreement: the student's card is one the teacher values best. Equal values are common
    # (neighbouring cards such as 2♥ and 3♥ often play out the same), so the student agrees
    # with any of them, not only with the first in card order.
    agrees = valued & (regret <= 1e-6)
    out = {"agreement": float(agrees.float().mean()), "regret": float(regret.mean())}
    if not valued.all():  # a card the teacher did not value has no regret to count: reported apart
        out["regret"] = float(regret[valued].mean()) if valued.any() else 0.0
        out["unvalued"] = float((~valued).float().mean())
    passes = torch.as_tensor(labels.is_pass)[held]
    if passes.any():  # the rollout teacher labels passes: their regret apart from the card plays'
        out["pass_regret"] = float(regret[passes].mean())
        if not passes.all():
            out["play_regret"] = float(regret[~passes].mean())
    return out
