"""The ladder at every table of its rule family: the panel of rule sets (``hearts export --ladder NAME --panel``).

For each rule set of the ladder's panel (:data:`PANELS`), every level (the network that serves those
rules, :func:`export.ladder.serving_model`) and every bot a level imitates play against the same
table of the reference opponent (three ``hard``; one in the two-player game) on the same deals. A
single hand from zero scores plays alike at any target, so the targets are measured as whole games
(``episode="game"``). Per rule set: each entrant's points per hand, each imitation level minus its
bot, each level minus the level below (in order when every such interval lies below zero), and
``strong`` minus the ``hard`` bot, all paired over the same deals with 95% intervals; and each imitation
level's agreement with its bot at those rules (card plays with a choice on 1,000 held-out hands the bot
plays alone, ``train.imitation.agent_agreement``).

The held-out combinations of the family (never drawn in training, ``hearts_env/rule_space.py``) are
in the panel, marked ``unseen``.
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Any, Callable

from agents import make
from eval.arena import head_to_head
from hearts_env.rule_space import FAMILIES
from hearts_env.rules import Rules

from .ladder import Ladder, interval, level_figures, seats_against, table_entrants


#: Held-out hands the bot plays at each rule set for an imitation level's agreement with it.
AGREEMENT_TABLES = 1000


@dataclasses.dataclass(frozen=True)
class PanelRules:
    label: str
    rules: Rules
    episode: str = "hand"  # "game": whole games to the target
    unseen: bool = False  # a combination held out of training


def _on(preset: str, label: str, episode: str = "hand", **changes) -> PanelRules:
    rules = Rules.preset(preset).replace(**changes) if changes else Rules.preset(preset)
    family = FAMILIES[rules.num_players == 2 and "two_player" or "classic"]
    return PanelRules(label, rules, episode, family.is_held_out(rules))


def _unseen(preset: str) -> list[PanelRules]:
    family = FAMILIES[preset]
    return [_on(preset, "unseen: " + ", ".join(f"{k}={v}" for k, v in combo.items()), **combo)
            for combo in family.held_out]


#: Each ladder's panel: the rule sets its levels are measured at.
PANELS: dict[str, list[PanelRules]] = {
    "classic": [
        _on("classic", "classic"),
        _on("classic", "moon subtracted", moon="subtract_from_self"),
        _on("classic", "moon shooter's choice", moon="shooters_choice"),
        _on("classic", "moon off", moon="off"),
        _on("classic", "Q♠ waits for hearts", queen_waits_for_hearts=True),
        _on("classic", "Q♠ breaks hearts", queen_breaks_hearts=True),
        _on("classic", "J♦ −10", jack_of_diamonds_bonus=True),
        _on("classic", "no passing", pass_cycle=["none"]),
        *_unseen("classic"),
        _on("quick", "target 50 (whole games)", episode="game"),
        _on("long", "target 150 (whole games)", episode="game"),
    ],
    "two_player": [
        _on("two_player", "two_player"),
        _on("two_player", "moon subtracted", moon="subtract_from_self"),
        _on("two_player", "moon shooter's choice", moon="shooters_choice"),
        _on("two_player", "moon off", moon="off"),
    ],
}


def measure_panel(spec: Ladder, out: Path, deals: int, games: int, *, seed: int = 0, workers: int = 2,
                  rule_sets: list[PanelRules] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """The ladder exported in ``out`` at every rule set of its panel (``rule_sets``, default
    ``PANELS[spec.name]``): ``deals`` deals a hand rule set, ``games`` games a whole-game one. Returns
    the figures (see the module docstring)."""
    from train.imitation import agent_agreement  # torch (the export extra), as exporting itself needs

    rows = []
    bots = [level.imitates for level in spec.levels if level.imitates]
    for entry in PANELS[spec.name] if rule_sets is None else rule_sets:
        entrants = table_entrants(spec, out, entry.rules)
        count = games if entry.episode == "game" else deals
        log(f"panel: {entry.label} ({count} {'games' if entry.episode == 'game' else 'deals'})")
        result = head_to_head(entrants, spec.opponent, entry.rules, deals=count, seed=seed, workers=workers,
                              episode=entry.episode)
        levels = level_figures(spec, result)
        if entry.episode == "hand":  # how closely each imitation level plays like its bot at these rules
            for level, (_, model) in zip(spec.levels, entrants):
                if level.imitates:
                    agreement = agent_agreement(make(model, rules=entry.rules), make(level.imitates), entry.rules,
                                                AGREEMENT_TABLES, seed=seed)
                    levels[level.name]["agreement"] = round(agreement["agreement"], 4)
        strong = spec.levels[-1].name
        rows.append({
            "label": entry.label, "rules": entry.rules.to_dict(), "episode": entry.episode, "unseen": entry.unseen,
            "deals" if entry.episode == "hand" else "games": count,
            "levels": levels,
            "bots": {bot: interval(result.row(f"{bot} bot")["points_per_hand"]) for bot in bots},
            "strong_minus_hard": interval(result.pair(strong, "hard bot")["difference"]) if "hard" in bots else None,
            "in_order": all(f["step"]["in_order"] for f in levels.values() if "step" in f),
        })
    return {
        "ladder": spec.name, "opponent": f"{seats_against(Rules.preset(spec.rules))} {spec.opponent}", "seed": seed, "confidence": 0.95,
        "command": f"hearts export --ladder {spec.name} --out DIR --panel --deals {deals} --games {games} --seed {seed}",
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "rule_sets": rows,
    }


def panel_table(panel: dict[str, Any]) -> str:
    """The panel as a Markdown table: each rule set's points per hand of every level and bot, whether the
    ladder is in order, and strong minus hard with its interval."""
    first = panel["rule_sets"][0]
    levels, bots = list(first["levels"]), list(first["bots"])
    imitating = [name for name in levels if "minus_bot" in first["levels"][name]]
    head = ["rule set", *levels, *(f"{bot} bot" for bot in bots), "in order", "strong − hard",
            *(f"{name} agreement" for name in imitating)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in panel["rule_sets"]:
        cells = [row["label"] + (" *(unseen)*" if row["unseen"] and "unseen" not in row["label"] else "")]
        cells += [f"{row['levels'][name]['points_per_hand']['mean']:.2f}" for name in levels]
        cells += [f"{row['bots'][bot]['mean']:.2f}" for bot in bots]
        cells.append("yes" if row["in_order"] else "**no**")
        diff = row["strong_minus_hard"]
        cells.append(f"{diff['mean']:+.2f} [{diff['low']:+.2f}, {diff['high']:+.2f}]" if diff else "")
        cells += [f"{row['levels'][name]['agreement']:.2%}" if "agreement" in row["levels"][name] else ""
                  for name in imitating]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
