"""The ladder of levels: opponents of every strength for game apps, each one exported policy.

``export_ladder("classic", out)`` writes, for each level of the ladder, easiest first,

* ``out/<level>/policy.onnx``, ``policy.json``, ``golden.json``: the level exported like any policy
  (:func:`export.model.export_policy`, so ``onnx:out/<level>/policy.onnx`` plays in the arena and a
  game app runs it with ``chooseCard`` unchanged);
* ``out/<level>/model_card.md``: the level's model card (how it was trained, the command, compute,
  agreement with its bot, evaluation, known weaknesses), copied from beside its weights;

and ``out/levels.json`` (:data:`LEVELS_FORMAT`), listing the levels easiest first with what each is
and its figures. A level that stands for a heuristic bot (``easy``, ``normal``, ``hard``) is a
network trained to play like it (``hearts train configs/levels/<ladder>_<level>.yaml``: imitation
only, see train/imitation.py); its weights ship in ``agents/policies/levels/``. ``strong`` is the
shipped ``ppo-classic``.

The figures come from the arena (:func:`measure`, ``hearts export --ladder classic --out DIR
--measure --deals N``): every level and every bot it imitates against the same table of the
reference opponent (three ``hard``; one in the two-player game) on the same deals; per level its points per hand with a 95%
interval, the paired difference to its bot, and the paired difference to the level below it
(``step``: the level minus the one below, negative when it is stronger; "in order" when every
step's interval lies below zero), and its panel score (the mean of its points per hand against three
``random``, three ``easy``, three ``normal`` and three ``hard``, each on the same deals; the interval
over deals of the four tables' mean). Without ``--measure`` the figures recorded for the ladder in
``agents/policies/levels/<ladder>_figures.json`` (a copy of a measured run's ``figures.json``) are
written into levels.json, with the command and deal count that made them.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents import LEVEL_DIR, STRONG_FIRST, level_file
from eval import stats
from eval.arena import head_to_head
from hearts_env.rule_space import FAMILIES, RuleSpace, space_of
from hearts_env.rules import Rules

from .model import MANIFEST_FILE, MODEL_FILE, ExportError, export_policy
from .golden import GOLDEN_FILE

ROOT = Path(__file__).resolve().parent.parent

LEVELS_FILE = "levels.json"
FIGURES_FILE = "figures.json"
MODEL_CARD_FILE = "model_card.md"
LEVELS_FORMAT = "hearts-lab-levels"
LEVELS_VERSION = 1
#: The panel score's tables: three of each (the lab's panel, as in train/recipe.py).
PANEL = ("random", "easy", "normal", "hard")


@dataclasses.dataclass(frozen=True)
class Level:
    """One rung: ``name`` (what an app shows), the weights it is exported from, and what it is."""

    name: str
    checkpoint: Path  # the shipped weights (a torch checkpoint)
    card: Path  # its model card
    kind: str  # "imitation" (a network that plays like ``imitates``) or "trained" (reinforcement learning)
    description: str
    imitates: str | None = None  # the bot spec an imitation level stands for
    config: str | None = None  # the training config (relative to the project)
    #: Networks tried before ``checkpoint`` (the family's network), each for the rules it covers:
    #: ``(weights, model card)``; exported into ``<level>/<weights' name>/``.
    exact: tuple[tuple[Path, Path], ...] = ()


@dataclasses.dataclass(frozen=True)
class Ladder:
    name: str
    rules: str  # the rules preset
    opponent: str  # the reference table's bot (every seat but the level's)
    levels: tuple[Level, ...]  # easiest first


def _imitation(ladder: str, bot: str, description: str) -> Level:
    weights = level_file(ladder, bot)
    return Level(bot, weights, weights.with_suffix(".md"), "imitation",
                 description, imitates=bot, config=f"configs/levels/{ladder}_{bot}.yaml")


LADDERS: dict[str, Ladder] = {
    "classic": Ladder("classic", "classic", "hard", (
        _imitation("classic", "easy", "plays like the easy bot: avoids taking points in the trick at hand"),
        _imitation("classic", "normal", "plays like the normal bot: sheds dangerous cards, plays low, drops the "
                                        "queen of spades at the right moment, watches hearts"),
        _imitation("classic", "hard", "plays like the hard bot: remembers voids, spots a moon attempt and defends"),
        Level("strong", level_file("classic", "strong"), LEVEL_DIR / "classic_strong.md", "trained",
              "the best networks: ppo-classic at the classic rules, with the moon off a network trained on at "
              "those rule sets, and at every other rule set ppo-classic's weights trained on by PPO across the "
              "rule family", config="configs/levels/classic_strong.yaml",
              exact=tuple((path, path.with_suffix(".md")) for path in STRONG_FIRST["classic"])),
    )),
    # The two-player game: the reference table is one hard (its easy and normal bots are close, about
    # 0.3 points per hand apart: a level may step past its bot there, but never out of order).
    "two_player": Ladder("two_player", "two_player", "hard", (
        _imitation("two_player", "easy", "plays like the two-player easy bot: avoids taking points in the trick at hand"),
        _imitation("two_player", "normal", "plays like the two-player normal bot: sheds dangerous cards, plays low, "
                                           "watches the hearts (trumps)"),
        _imitation("two_player", "hard", "plays like the two-player hard bot: remembers voids, spots a moon attempt and "
                                         "defends"),
        Level("strong", level_file("two_player", "strong"), LEVEL_DIR / "two_player_strong.md", "trained",
              "the best two-player networks: with the moon off a network trained on at those rule sets, and at "
              "every other rule set ppo-two-player's weights trained on by PPO across the family",
              config="configs/levels/two_player_strong.yaml",
              exact=tuple((path, path.with_suffix(".md")) for path in STRONG_FIRST["two_player"])),
    )),
}


def ladder(name: str) -> Ladder:
    try:
        return LADDERS[name]
    except KeyError:
        raise ExportError(f"no ladder {name!r}; ladders: {', '.join(LADDERS)}") from None


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def level_entry(level: Level) -> dict[str, Any]:
    """What levels.json says of a level before any measurement: what it is, its files, its training."""
    from agents.checkpoint import load  # torch (the export extra)

    meta = load(level.checkpoint)["meta"]
    config = meta.get("config") or {}
    entry: dict[str, Any] = {
        "name": level.name,
        "kind": level.kind,
        "imitates": level.imitates,
        "description": level.description,
        "model": f"{level.name}/{MODEL_FILE}",
        "manifest": f"{level.name}/{MANIFEST_FILE}",
        "golden": f"{level.name}/{GOLDEN_FILE}",
        "model_card": f"{level.name}/{MODEL_CARD_FILE}",
        "weights": _relative(level.checkpoint),
        "network": {"hidden": meta.get("hidden")},
        "training": {"command": f"hearts train {level.config}" if level.config else None,
                     "config": level.config},
    }
    if level.kind == "imitation":
        imitation = meta.get("imitation") or {}
        settings = config.get("imitation") or {}
        entry["training"].update({"teacher_decisions": _count(imitation.get("decisions")),
                                  "seconds": imitation.get("seconds"),
                                  "epochs": settings.get("epochs"), "learning_rate": settings.get("learning_rate")})
        entry["agreement"] = {
            "plays_with_choice": imitation.get("held_out_agreement"),
            "up_to_equivalent_cards": imitation.get("held_out_agreement_equivalent"),
            "held_out_plays": _count(imitation.get("held_out_plays_with_choice")),
            "all_decisions": imitation.get("held_out_agreement_all"),
            "meaning": f"share of the {level.imitates} bot's card plays with a choice (two or more legal cards), on "
                       "held-out hands, where the network's card (argmax) is the bot's; up_to_equivalent_cards also "
                       "counts a card of the bot's suit with every card ranked between them held or played (the same "
                       "tricks and points; train/imitation.py)",
        }
    else:
        entry["training"].update({"learner_decisions": meta.get("learner_decisions"),
                                  "seconds": meta.get("seconds")})
        entry["agreement"] = None
    return entry


def export_ladder(name: str | Ladder, out_dir: str | Path, *, golden: int = 40, measure_deals: int | None = None,
                  seed: int = 0, workers: int = 2, log: Callable[[str], None] = print) -> dict[str, Path]:
    """Write the ladder ``name`` into ``out_dir`` (see the module docstring); with ``measure_deals``
    also measure it in the arena on that many deals (else the shipped figures, when recorded).
    Returns the paths written: ``levels`` (levels.json), ``figures`` when measured, and per level its folder.
    ``name``: a ladder of :data:`LADDERS` by name, or a :class:`Ladder`."""
    spec = name if isinstance(name, Ladder) else ladder(name)
    name = spec.name
    missing = [str(level.checkpoint) for level in spec.levels if not level.checkpoint.is_file()]
    if missing:
        raise ExportError(f"the {name} ladder's weights are missing: {', '.join(missing)} (train them with "
                          f"hearts train configs/levels/{name}_<level>.yaml and copy runs/<run>/policy.pt there)")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out} is a file; name a folder for the ladder")
    if out.is_dir() and any(out.iterdir()) and not (out / LEVELS_FILE).is_file():
        raise ExportError(f"--out {out} is not empty and not an earlier ladder export (no {LEVELS_FILE}): name a "
                          "new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    entries = []
    for level in spec.levels:
        networks = []
        for weights, card in level.exact:  # the networks tried first, each in a folder of the level's
            log(f"exporting {level.name}'s network {weights.stem} from {_relative(weights)}")
            networks.append(_export_network(weights, card, out, f"{level.name}/{weights.stem}", golden))
        log(f"exporting {level.name} from {_relative(level.checkpoint)}")
        networks.append(_export_network(level.checkpoint, level.card, out, level.name, golden))
        entry = level_entry(level)
        entry["networks"] = networks
        entries.append(entry)
        written[level.name] = out / level.name
    if measure_deals is not None:
        _write_levels(out, spec, entries, None)  # measure() picks each level's network from it
        figures = measure(spec, out, measure_deals, seed=seed, workers=workers, log=log)
        written["figures"] = out / FIGURES_FILE
        written["figures"].write_text(json.dumps(figures, indent=2) + "\n")
    else:
        recorded = LEVEL_DIR / f"{name}_{FIGURES_FILE}"
        figures = json.loads(recorded.read_text()) if recorded.is_file() else None
    written["levels"] = _write_levels(out, spec, entries, figures)
    return written


def _write_levels(out: Path, spec: Ladder, entries: list[dict[str, Any]], figures: dict[str, Any] | None) -> Path:
    for entry in entries:
        entry["arena"] = figures["levels"].get(entry["name"]) if figures else None
    levels = {
        "format": LEVELS_FORMAT,
        "format_version": LEVELS_VERSION,
        "ladder": spec.name,
        "rules": Rules.preset(spec.rules).to_dict(),
        "rule_space": _ladder_space(spec).to_dict(),
        "order": "easiest first",
        "levels": entries,
        "arena": {key: value for key, value in figures.items() if key != "levels"} if figures else None,
    }
    (out / LEVELS_FILE).write_text(json.dumps(levels, indent=2) + "\n")
    return out / LEVELS_FILE


def _ladder_space(spec: Ladder) -> RuleSpace:
    """The rules the ladder's levels cover: its family when it has one, else its preset alone."""
    return FAMILIES.get(spec.name, RuleSpace.point(spec.rules))


def _export_network(weights: Path, card: Path, out: Path, folder: str, golden: int) -> dict[str, Any]:
    """Export one network of a level into ``out/folder``; its entry in the level's ``networks``."""
    export_policy(weights, out / folder, golden=golden)
    if card.is_file():
        shutil.copyfile(card, out / folder / MODEL_CARD_FILE)
    manifest = json.loads((out / folder / MANIFEST_FILE).read_text())
    return {"model": f"{folder}/{MODEL_FILE}", "manifest": f"{folder}/{MANIFEST_FILE}",
            "golden": f"{folder}/{GOLDEN_FILE}", "model_card": f"{folder}/{MODEL_CARD_FILE}",
            "weights": _relative(weights), "rules": manifest["rules"]["name"], "rule_space": manifest["rule_space"]}


def serving_model(out: Path, level: str, rules: Rules) -> Path:
    """The exported model of ``level`` (in the ladder folder ``out``) that plays ``rules``: the first
    of its ``networks`` whose rule space covers them, as the game apps pick it. ExportError when none does."""
    entry = next(e for e in json.loads((out / LEVELS_FILE).read_text())["levels"] if e["name"] == level)
    for network in entry.get("networks") or [entry]:
        manifest = json.loads((out / network["manifest"]).read_text())
        if space_of(manifest, Rules.from_dict(manifest["rules"])).covers(rules):
            return out / network["model"]
    raise ExportError(f"the level {level} has no network for the '{rules.name}' rules")


def measure(spec: Ladder, out: Path, deals: int, *, seed: int = 0, workers: int = 2,
            log: Callable[[str], None] = print) -> dict[str, Any]:
    """Every exported level of ``out`` (``onnx:out/<level>/policy.onnx``) and every bot a level
    imitates, each against the reference table (three ``spec.opponent``), on the same ``deals`` deals:
    ``{"levels": {name: figures}, "deals", "opponent", "command", "in_order", ...}``."""
    rules = Rules.preset(spec.rules)
    entrants = table_entrants(spec, out, rules)
    others = seats_against(rules)
    log(f"measuring the {spec.name} ladder: {len(entrants)} tables against {others} {spec.opponent} on {deals} deals")
    result = head_to_head(entrants, spec.opponent, rules, deals=deals, seed=seed, workers=workers)
    panel_results = {spec.opponent: result}
    for opponent in PANEL:
        if opponent not in panel_results:
            log(f"the panel: the levels against {others} {opponent}")
            panel_results[opponent] = head_to_head(entrants[:len(spec.levels)], opponent, rules, deals=deals,
                                                   seed=seed, workers=workers)
    figures = level_figures(spec, result)
    for level in spec.levels:
        row, entry = result.row(level.name), figures[level.name]
        entry.update(moons_made_per_hand=row["moons_made_per_hand"], moons_suffered_per_hand=row["moons_suffered_per_hand"])
        if level.imitates:
            entry["bot_points_per_hand"] = interval(result.row(f"{level.imitates} bot")["points_per_hand"])
        per_table = [_per_deal(panel_results[opponent], level.name, deals) for opponent in PANEL]
        entry["panel"] = {
            "score": interval(stats.t_interval(np.mean(per_table, axis=0)).to_dict()),
            "points_per_hand_vs": {opponent: interval(panel_results[opponent].row(level.name)["points_per_hand"])
                                   for opponent in PANEL},
        }
    steps = [entry["step"]["in_order"] for entry in figures.values() if "step" in entry]
    return {
        "levels": figures,
        "opponent": f"{others} {spec.opponent}",
        "panel": [f"{others} {opponent}" for opponent in PANEL],
        "deals": deals,
        "seed": seed,
        "confidence": 0.95,
        "in_order": all(steps),
        "command": f"hearts export --ladder {spec.name} --out DIR --measure --deals {deals} --seed {seed}",
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "meaning": {
            "points_per_hand": "the level's penalty points per hand against the table (lower is better), 95% interval",
            "minus_bot": "the level's points minus its bot's, paired over the same deals at the same table",
            "panel": "the mean of the level's points per hand against each panel table (every other seat one bot), on the "
                     "same deals; its interval over deals",
            "step": "the level's points minus the level below it, paired over the same deals; in_order when the "
                    "interval lies below zero (the level is stronger)",
        },
    }


def table_entrants(spec: Ladder, out: Path, rules: Rules) -> list[tuple[str, str]]:
    """The arena's entrants of a measure of the ladder exported in ``out`` at ``rules``: each level by
    name (its network for those rules, :func:`serving_model`), then each bot a level imitates as
    ``"<bot> bot"``."""
    entrants = [(level.name, f"onnx:{serving_model(out, level.name, rules)}") for level in spec.levels]
    return entrants + [(f"{level.imitates} bot", level.imitates) for level in spec.levels if level.imitates]


def seats_against(rules: Rules) -> str:
    """How many seats the reference table's bot takes, in words: ``three`` (``one`` with two players)."""
    return {1: "one", 2: "two", 3: "three"}.get(rules.num_players - 1, str(rules.num_players - 1))


def level_figures(spec: Ladder, result) -> dict[str, dict[str, Any]]:
    """Per level of an arena ``result`` of :func:`table_entrants`: its ``points_per_hand``, for an
    imitation level ``minus_bot`` (paired), and above the first level its ``step`` (the level minus the
    one below, paired; ``in_order`` when the interval lies below zero)."""
    figures: dict[str, dict[str, Any]] = {}
    previous = None
    for level in spec.levels:
        entry: dict[str, Any] = {"points_per_hand": interval(result.row(level.name)["points_per_hand"])}
        if level.imitates:
            entry["minus_bot"] = interval(result.pair(level.name, f"{level.imitates} bot")["difference"])
        if previous is not None:
            step = interval(result.pair(level.name, previous)["difference"])
            entry["step"] = {"below": previous, **step, "in_order": step["high"] < 0}
        figures[level.name] = entry
        previous = level.name
    return figures


def _count(value) -> int | None:
    """A count stored as a float (a checkpoint's imitation figures) as an int."""
    return None if value is None else int(value)


def _per_deal(result, label: str, deals: int):
    """Per-deal points per hand of the entrant ``label`` of an arena result (over its seatings)."""
    games = result.games
    entrant = [e.label for e in result.plan.entrants].index(label)
    where = games.entrant == entrant
    rows, _ = where.nonzero()
    means, present = stats.per_deal_means(games.deal[rows], (games.points / games.hands[:, None])[where], deals)
    if not present.all():
        raise ExportError(f"the arena played {label} on {int(present.sum())} of {deals} deals")
    return means


def interval(value: dict) -> dict[str, float]:
    """``mean``, ``low`` and ``high`` of an interval, rounded to 4 places (as the figures files hold them)."""
    return {key: round(float(value[key]), 4) for key in ("mean", "low", "high")}
