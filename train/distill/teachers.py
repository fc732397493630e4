"""The teachers: tables of the student and bots play, and a teacher values the student's cards.

:func:`collect_shard` plays one hand at each of a batch of tables (a *student* seat, a policy file
played greedily, and bots in the other seats, on the batched engine). At each of the student's
decisions with a choice, a *teacher* values the legal cards (the penalty points of the hand after
each, the student playing its own later cards); the student's own card is then played, so the
examples come from the states the student reaches itself (DAgger). Decisions the teacher does not
value are *kept* with the student's own odds. Each teacher is one function
(:func:`label_by_search`, :func:`label_by_expert`, :func:`label_by_rollout`); what they collect is
written as a shard (:mod:`train.distill.shards`).
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import numpy as np

from agents import EXPERT_VALUE, expert_player, make
from agents.search import SearchAgent, finish_hands
from hearts_env import deal, engine, loop
from hearts_env.rules import Rules
from hearts_env.state import PLAY, State

from .shards import Shard


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
