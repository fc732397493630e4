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

One module per job: :mod:`~train.distill.teachers` (the collection and its teachers),
:mod:`~train.distill.shards` (the shard format, written and read), :mod:`~train.distill.losses`
(the three losses) and :mod:`~train.distill.fitting` (the fit and its training loop). Every public
name of them is importable from ``train.distill``.

Command line: ``hearts distill collect|fit ...`` (``hearts_app/commands/distill.py``).
"""

from .fitting import describe, fit, held_out_measures, train_policy
from .losses import (LOSSES, Objective, centered_regression_loss, fit_targets, imitation, improvement,
                     improvement_among_valued_loss, improvement_loss, regression, teacher_targets)
from .shards import (LABELLED, SHARD_ARRAYS, Labels, Shard, ShardError, join_labels, load_shards, policy_probs,
                     read_labels, shard_headers, shard_paths, take_labels)
from .teachers import (OTHERS, STUDENT, TEACHER_CANDIDATES, TEACHER_CONFIDENT, TEACHERS, branch, collect_shard,
                       label_by_expert, label_by_rollout, label_by_search, opponent_list, play_batch, rollout_values,
                       student_chooses, value_by_search)

__all__ = [
    "describe", "fit", "held_out_measures", "train_policy",
    "LOSSES", "Objective", "centered_regression_loss", "fit_targets", "imitation", "improvement",
    "improvement_among_valued_loss", "improvement_loss", "regression", "teacher_targets",
    "LABELLED", "SHARD_ARRAYS", "Labels", "Shard", "ShardError", "join_labels", "load_shards", "policy_probs",
    "read_labels", "shard_headers", "shard_paths", "take_labels",
    "OTHERS", "STUDENT", "TEACHER_CANDIDATES", "TEACHER_CONFIDENT", "TEACHERS", "branch", "collect_shard",
    "label_by_expert", "label_by_rollout", "label_by_search", "opponent_list", "play_batch", "rollout_values",
    "student_chooses", "value_by_search",
]
