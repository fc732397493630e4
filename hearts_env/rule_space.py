"""Rule spaces: the set of rule sets a trained network covers, field by field, and the families.

A network trained at one preset plays that preset only; a network trained across rule sets plays
every rule set of its space. A :class:`RuleSpace` names, for every option of :class:`~hearts_env.rules.Rules`
(its ``name`` label aside), the values allowed; a rule set is covered when each of its options is
one of its field's values. Checkpoints (``meta["rule_space"]``) and exported manifests
(``"rule_space"``) store the space as ``{"fields": {option: [values]}, "held_out": [...]}``, and
everything that loads a network refuses rules outside it in one line naming the field and the values
covered (:meth:`RuleSpace.refusal`; ``clients/js/src/rule_space.js`` words it the same way). A
network that stores no space covers exactly the rules it stores (:meth:`RuleSpace.point`).

The families (:data:`FAMILIES`) are every option the game's page offers:

* ``classic``: four players, the presets ``classic``, ``quick`` and ``long`` and every option on
  top (pass cycle, target 50/100/150, the four moon rules, first-trick protection, hearts must be
  broken, Q♠ breaks hearts, Q♠ waits for hearts, J♦ −10);
* ``two_player``: the 28-card game with the same options where they apply (no ``across`` pass,
  no J♦ in its deck).

``held_out`` lists option combinations that training never draws (:meth:`RuleSpace.sample`) while
the space still covers them: the rule sets reported as unseen. Observation v1 carries what these
options change in play (the rule flags, the moon rule, this hand's pass, scores over the target),
so one observation version serves every family.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .rules import PRESETS, MoonScoring, Rules, RulesError

#: The options a space names: every field of Rules but its ``name`` label.
FIELDS = tuple(field for field in Rules.model_fields if field != "name")
#: Draws before :meth:`RuleSpace.sample` gives up on a space whose combinations are nearly all invalid.
SAMPLE_TRIES = 1000


def value_text(value: Any) -> str:
    """A field's value as the refusals write it: compact JSON (``50``, ``"off"``, ``["left","right"]``)."""
    return json.dumps(value, separators=(",", ":"))


def _validated_alone(field: str, value: Any) -> Any:
    """``value`` as ``Rules.to_dict()`` writes that option, if some rule set can have it (tried on
    top of each preset, since some values are valid only in combination: the short deck, its dead
    cards); else a RulesError naming the option."""
    for preset in PRESETS.values():
        try:
            return preset.replace(**{field: value}).to_dict()[field]
        except RulesError:
            continue
    shown = value_text(value) if _jsonable(value) else repr(value)[:60]
    raise RulesError(f"rule space: {field}: {shown[:60]} is not a value of that option")


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class RuleSpace:
    """For every option of ``Rules``, the values allowed (a tuple, in order); and ``held_out``, option
    combinations (partial mappings) covered but never drawn for training."""

    def __init__(self, fields: Mapping[str, Sequence[Any]], held_out: Sequence[Mapping[str, Any]] = ()):
        if not isinstance(fields, Mapping):
            raise RulesError(f"rule space: fields must map each option to its values, got {type(fields).__name__}")
        unknown = [str(f)[:40] for f in fields if f not in FIELDS]
        if unknown:
            raise RulesError(f"rule space: unknown option(s) {', '.join(unknown)}; the options are: {', '.join(FIELDS)}")
        missing = [f for f in FIELDS if f not in fields]
        if missing:
            raise RulesError(f"rule space: no values for {', '.join(missing)} (a space names every option)")
        self.fields: dict[str, tuple[Any, ...]] = {}
        for field in FIELDS:
            values = fields[field]
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
                raise RulesError(f"rule space: {field} needs a non-empty list of values")
            canonical = [_validated_alone(field, v) for v in values]
            if len({value_text(v) for v in canonical}) != len(canonical):
                raise RulesError(f"rule space: {field} lists a value twice")
            self.fields[field] = tuple(canonical)
        self.held_out: tuple[dict[str, Any], ...] = ()
        combos = []
        for combo in held_out:
            if not isinstance(combo, Mapping) or not combo:
                raise RulesError("rule space: each held_out entry is a non-empty mapping of options to values")
            combo = {field: _validated_alone(field, value) if field in FIELDS else value
                     for field, value in combo.items()}
            for field, value in combo.items():
                if field not in self.fields or value_text(value) not in map(value_text, self.fields[field]):
                    raise RulesError(f"rule space: held_out names {field}={value_text(value)[:40]}, "
                                     f"which the space does not cover")
            combos.append(combo)
        self.held_out = tuple(combos)

    # ---- construction ----------------------------------------------------------------------

    @classmethod
    def point(cls, rules: Rules | str | Mapping[str, Any]) -> "RuleSpace":
        """The space of exactly one rule set (a network trained at one preset)."""
        data = Rules.resolve(rules).to_dict()
        return cls({field: [data[field]] for field in FIELDS})

    @classmethod
    def family(cls, name: str) -> "RuleSpace":
        """One of :data:`FAMILIES` by name."""
        if not isinstance(name, str) or name not in FAMILIES:
            raise RulesError(f"unknown rule family {name!r:.60}; families are: {', '.join(FAMILIES)}")
        return FAMILIES[name]

    @classmethod
    def from_dict(cls, data: Any) -> "RuleSpace":
        """A space from ``to_dict()``'s form (a checkpoint's or a manifest's), or ``{"family": NAME,
        "fields": {option: [values]}}``: a family with some options narrowed (its held-out combinations
        that the narrowed space still covers kept). RulesError when malformed."""
        if isinstance(data, Mapping) and "family" in data:
            family = cls.family(data["family"])
            narrowed = data.get("fields", {})
            if not isinstance(narrowed, Mapping) or set(data) - {"family", "fields"}:
                raise RulesError("rule space: a narrowed family is {\"family\": NAME, \"fields\": {option: [values]}}")
            space = cls({**family.fields, **narrowed})
            kept = [combo for combo in family.held_out
                    if all(value_text(v) in map(value_text, space.fields[k]) for k, v in combo.items())]
            return cls(space.fields, kept)
        if not isinstance(data, Mapping) or not isinstance(data.get("fields"), Mapping):
            raise RulesError("rule space: expected {\"fields\": {option: [values]}, \"held_out\": [...]}")
        held_out = data.get("held_out", [])
        if not isinstance(held_out, Sequence) or isinstance(held_out, (str, bytes)):
            raise RulesError("rule space: held_out must be a list of option mappings")
        return cls(data["fields"], held_out)

    @classmethod
    def resolve(cls, value: "RuleSpace | str | Mapping[str, Any]") -> "RuleSpace":
        """A space from a space, a family name or ``to_dict()``'s form."""
        if isinstance(value, RuleSpace):
            return value
        if isinstance(value, str):
            return cls.family(value)
        return cls.from_dict(value)

    def to_dict(self) -> dict[str, Any]:
        return {"fields": {field: list(values) for field, values in self.fields.items()},
                "held_out": [dict(combo) for combo in self.held_out]}

    # ---- questions -------------------------------------------------------------------------

    @property
    def base(self) -> Rules:
        """The rule set of every field's first value: the family's home preset (for a point space, its rules)."""
        return _named(Rules.create(**{field: values[0] for field, values in self.fields.items()}))

    def refusal(self, rules: Rules | str | Mapping[str, Any]) -> str | None:
        """None when the space covers ``rules``; else one line naming the first option outside it and
        the values the space covers, e.g. ``target_score 200 is not among the values it covers: 100, 50, 150``."""
        data = Rules.resolve(rules).to_dict()
        for field, values in self.fields.items():
            allowed = [value_text(v) for v in values]
            if value_text(data[field]) not in allowed:
                return f"{field} {value_text(data[field])} is not among the values it covers: {', '.join(allowed)}"
        return None

    def covers(self, rules: Rules | str | Mapping[str, Any]) -> bool:
        return self.refusal(rules) is None

    def outside(self, other: "RuleSpace") -> str | None:
        """None when every rule set of this space is one of ``other``'s (a narrowing of it); else one
        line naming the first option with a value ``other`` does not cover."""
        for field, values in self.fields.items():
            allowed = [value_text(v) for v in other.fields[field]]
            extra = [value_text(v) for v in values if value_text(v) not in allowed]
            if extra:
                return f"{field} {extra[0]} is not among the values it covers: {', '.join(allowed)}"
        return None

    def is_held_out(self, rules: Rules | str | Mapping[str, Any]) -> bool:
        """Whether ``rules`` matches one of the held-out combinations (never drawn for training)."""
        data = Rules.resolve(rules).to_dict()
        return any(all(value_text(data[f]) == value_text(v) for f, v in combo.items()) for combo in self.held_out)

    def is_point(self) -> bool:
        return all(len(values) == 1 for values in self.fields.values())

    def sample(self, rng: np.random.Generator, keep: float = 0.5) -> Rules:
        """A rule set for a training table: each option keeps the base value (the first) with
        probability ``keep``, else one of its other values, uniformly; combinations the rules refuse
        and held-out combinations are drawn again. So the home preset and each option on top of it
        come up often, and every combination can."""
        for _ in range(SAMPLE_TRIES):
            data = {}
            for field, values in self.fields.items():
                if len(values) == 1 or rng.random() < keep:
                    data[field] = values[0]
                else:
                    data[field] = values[1 + int(rng.integers(len(values) - 1))]
            try:
                rules = Rules.create(**data)
            except RulesError:
                continue
            if not self.is_held_out(rules):
                return _named(rules)
        raise RulesError("rule space: no valid rule set outside held_out found in "
                         f"{SAMPLE_TRIES} draws; the space's combinations are all invalid or held out")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleSpace) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def __repr__(self) -> str:
        wide = {f: len(v) for f, v in self.fields.items() if len(v) > 1}
        return f"RuleSpace(base={self.base.name!r}, varying={wide}, held_out={len(self.held_out)})"


def _named(rules: Rules) -> Rules:
    """The rules under their preset's name when they are one (``classic`` drawn stays ``classic``)."""
    for name, preset in PRESETS.items():
        if preset.same_game(rules):
            return preset
    return rules.model_copy(update={"name": "custom"})


def space_of(meta: Mapping[str, Any], rules: Rules) -> RuleSpace:
    """The space a checkpoint's or manifest's metadata declares (``rule_space``), else the point
    space of the ``rules`` it was made for. RulesError when the declared space is malformed."""
    declared = meta.get("rule_space")
    if declared is None:
        return RuleSpace.point(rules)
    space = RuleSpace.from_dict(declared)
    if not space.covers(rules):
        raise RulesError(f"rule space: it does not cover the network's own rules ({space.refusal(rules)})")
    return space


#: Every option the game's page offers, with its choices in the page's order (``hearts_app/serve/app.py``
#: serves these as its options): the families are these choices on top of their home presets.
OFFERED_CHOICES: dict[str, list[Any]] = {
    "pass_cycle": [["left", "right", "across", "none"], ["left", "right", "none"], ["left"], ["right"], ["across"],
                   ["none"]],
    "target_score": [50, 100, 150],
    "moon": list(typing.get_args(MoonScoring)),
    **{flag: [True, False] for flag in ("first_trick_protection", "hearts_must_be_broken", "queen_breaks_hearts",
                                        "queen_waits_for_hearts", "jack_of_diamonds_bonus")},
}


def _family(preset: str, **choices: Sequence[Any]) -> dict[str, list[Any]]:
    """The preset's value of every option, widened to ``choices`` where given, the preset's value first."""
    base = Rules.preset(preset).to_dict()
    fields = {field: [base[field]] for field in FIELDS}
    for field, values in choices.items():
        first = [v for v in values if value_text(v) == value_text(base[field])]
        fields[field] = first + [v for v in values if value_text(v) != value_text(base[field])]
    return fields


#: Held out of the four-player family's training: two combinations reported as unseen.
CLASSIC_HELD_OUT = (
    {"moon": "subtract_from_self", "jack_of_diamonds_bonus": True},
    {"queen_waits_for_hearts": True, "moon": "off"},
)

FAMILIES: dict[str, RuleSpace] = {
    "classic": RuleSpace(_family("classic", **OFFERED_CHOICES), held_out=CLASSIC_HELD_OUT),
    # Two players: no 'across' pass, and the 28-card deck has no J♦.
    "two_player": RuleSpace(_family(
        "two_player", **{**{k: v for k, v in OFFERED_CHOICES.items() if k != "jack_of_diamonds_bonus"},
                         "pass_cycle": [c for c in OFFERED_CHOICES["pass_cycle"] if "across" not in c]})),
}


def table_groups(space: RuleSpace, tables: int, groups: int, rng: np.random.Generator) -> list[tuple[Rules, int]]:
    """``tables`` split into ``groups`` runs of consecutive tables (sizes differing by at most one),
    each with a rule set drawn from ``space`` (:meth:`RuleSpace.sample`): ``[(rules, tables), ...]``.
    The engine steps one rule set per batch, so mixed tables are played group by group."""
    groups = max(1, min(groups, tables))
    sizes = np.full(groups, tables // groups)
    sizes[: tables % groups] += 1
    return [(space.sample(rng), int(size)) for size in sizes]


#: :meth:`RuleSpace.refusal`'s line, read back (a refusal travels as text inside agents' errors).
_REFUSAL = re.compile(r"(\w+) (\S+) is not among the values it covers: (.+)$")


def refusal_parts(line: str) -> dict[str, Any] | None:
    """The option a refusal of :meth:`RuleSpace.refusal` names, found at the end of ``line`` (an error
    that quotes it): ``{"field", "value", "covers": [values]}`` as text, for a page to word in its own
    language; None when ``line`` quotes none."""
    found = _REFUSAL.search(line)
    if found is None:
        return None
    return {"field": found[1], "value": found[2], "covers": found[3].split(", ")}
