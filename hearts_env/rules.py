"""Rules: one frozen, validated value naming every option of the rule texts, and the presets.

Every option of the rule texts (``docs/rules.md``) is a named field here; the engine
reads nothing else. A ``Rules`` value is immutable and hashable, so it can key caches and be stored
in checkpoints, deal sets and game records (``to_dict`` / ``from_dict`` round-trip exactly).

Presets (``Rules.preset(name)``):

=============  ===========================================================================
``classic``    four players, 52 cards, pass left/right/across/none, target 100 (000, 001, 002)
``quick``      classic to 50 points (000, 001)
``long``       classic to 150 points (001)
``two_player`` 28-card deck, two dead cards, hearts trump, lead 2C/4C/6C, moon 20 (003)
=============  ===========================================================================

Invalid values and combinations raise :class:`RulesError` (a ``ValueError``) naming the field,
however the value is built (``Rules(...)``, ``create``, ``from_dict``, ``resolve``, ``replace``), and
so does anything given as rules that is not a mapping of options. Types are strict: ``"100"`` is not
a score and ``"yes"`` not a flag (YAML files and ``--rule KEY=VALUE`` overrides already give numbers
and ``true``/``false`` as such); a whole number may be written as a float (``target_score: 1e2``),
as in training configs (:func:`~hearts_env.settings_files.whole_number`). Written the way ``docs/rules.md``
writes them, ``trump_suit: none`` means no trump and a list may be given as ``left, right``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Optional, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from . import cards
from .settings_files import whole_number

PassDirection = Literal["left", "right", "across", "none"]
MoonScoring = Literal["add_to_others", "subtract_from_self", "shooters_choice", "off"]

#: Seat offset of each pass direction: left = seat+1, across = seat+2, right = seat-1.
PASS_OFFSETS = {"left": 1, "across": 2, "right": -1, "none": 0}

#: Ranks kept in the 28-card two-player deck (003): 2 4 6 8 10 Q A of every suit.
SHORT_DECK_RANKS = "2468TQA"
DECKS = ("full52", "short28")
#: Bound on the numeric options (points, target score, counts): scores add up over a game in 64-bit
#: integers, so a target of 10**30 would overflow them; a billion (allowed: the benchmark's endless
#: games play to it) is more than any game needs.
RULES_NUMBER_LIMIT = 10**9


class RulesError(ValueError):
    """A rules value or combination is invalid; the message names the field and what is allowed."""


class Rules(BaseModel):
    """The complete, immutable rule set of one game of Hearts."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    name: str = "custom"
    #: Players at the table, seated 0..N-1 clockwise.
    num_players: Literal[2, 4] = 4
    #: ``full52`` or ``short28`` (2 4 6 8 10 Q A of each suit, the two-player deck).
    deck: Literal["full52", "short28"] = "full52"
    #: Cards set aside face down before the deal and seen by nobody (two-player: 2).
    dead_cards: int = 0
    #: Pass directions by hand number, repeating (``hand % len``).
    pass_cycle: tuple[PassDirection, ...] = ("left", "right", "across", "none")
    #: Cards each player passes when the hand has a pass.
    pass_count: int = 3
    #: Cards that must open the first trick, in order of fallback when a card is dead.
    opening_lead: tuple[str, ...] = ("2C",)
    #: No hearts and no Q♠ on the first trick unless the player has nothing else.
    first_trick_protection: bool = True
    #: Hearts may not be led until hearts are broken (unless the leader holds only hearts).
    hearts_must_be_broken: bool = True
    #: Playing Q♠ also breaks hearts (classic decision: off, only a heart breaks hearts).
    queen_breaks_hearts: bool = False
    #: Q♠ may not be led until hearts are broken (unless the leader has nothing else).
    queen_waits_for_hearts: bool = False
    #: What taking every point card in play does.
    moon: MoonScoring = "add_to_others"
    #: Points the moon is worth (26 classic, 20 two-player).
    moon_points: int = 26
    #: The taker of J♦ scores ``jack_of_diamonds_points`` (002 names it "Karo-Bube −10").
    jack_of_diamonds_bonus: bool = False
    jack_of_diamonds_points: int = -10
    #: The game ends after a hand in which someone reached this total (lowest unique total wins).
    target_score: int = 100
    #: ``None`` for no trump, else the trump suit letter (two-player: ``"H"``).
    trump_suit: Optional[Literal["C", "D", "H", "S"]] = None

    def __init__(self, **fields: Any) -> None:
        # Every construction reports RulesError naming the field, never pydantic's own error.
        try:
            super().__init__(**fields)
        except ValidationError as err:
            raise RulesError(_explain(err)) from None

    # ---- types: strict, so a wrong type is refused rather than silently converted ---------------

    @field_validator(
        "num_players", "dead_cards", "pass_count", "moon_points", "jack_of_diamonds_points", "target_score",
        mode="before",
    )
    @classmethod
    def _whole_number(cls, value: Any) -> Any:
        # pydantic would take "100" and True as 100 and 1; 100.0 (1e2 in a file) and NumPy integers are fine.
        number = whole_number(value)
        if abs(number) > RULES_NUMBER_LIMIT:  # the engine keeps these in 64-bit arrays, with room to add
            raise ValueError(f"must be between -{RULES_NUMBER_LIMIT:,} and {RULES_NUMBER_LIMIT:,}")  # noqa: TRY004
        return number

    @field_validator(
        "first_trick_protection", "hearts_must_be_broken", "queen_breaks_hearts", "queen_waits_for_hearts",
        "jack_of_diamonds_bonus",
        mode="before",
    )
    @classmethod
    def _flag(cls, value: Any) -> Any:
        # pydantic would take "yes", "off", 1 and 0 as flags.
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError("must be true or false")  # noqa: TRY004 (pydantic reports ValueErrors only)
        return bool(value)

    @field_validator("pass_cycle", "opening_lead", mode="before")
    @classmethod
    def _list_from_text(cls, value: Any) -> Any:
        # docs/rules.md writes these lists as "left, right, across, none" and "2C, 4C, 6C".
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        if isinstance(value, (set, frozenset)):  # no order: the same options would play another game per run
            raise ValueError("must be in order: a list or a comma-separated text, not a set")  # noqa: TRY004
        return value

    @field_validator("trump_suit", mode="before")
    @classmethod
    def _none_means_no_trump(cls, value: Any) -> Any:
        # docs/rules.md writes "none" (YAML's null is "null" or "~").
        return None if value == "none" else value

    # ---- single-field checks -----------------------------------------------------------------

    @field_validator("pass_cycle")
    @classmethod
    def _cycle_not_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("pass_cycle needs at least one direction (use ('none',) for no passing)")
        return value

    @field_validator("opening_lead")
    @classmethod
    def _opening_cards(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("opening_lead needs at least one card, e.g. ('2C',)")
        ids = [cards.parse_card(text) for text in value]
        if len(set(ids)) != len(ids):
            raise ValueError(f"opening_lead lists a card twice: {value}")
        return tuple(cards.card_text(c) for c in ids)

    @field_validator("dead_cards")
    @classmethod
    def _not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must be 0 or more")
        return value

    @field_validator("pass_count")
    @classmethod
    def _at_least_one(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1 (for no passing use pass_cycle: ['none'])")
        return value

    @field_validator("target_score", "moon_points")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("must be a positive number of points")
        return value

    # ---- combinations --------------------------------------------------------------------------

    @model_validator(mode="after")
    def _combinations(self) -> "Rules":
        in_play = self.deck_size - self.dead_cards
        if in_play <= 0 or in_play % self.num_players:
            raise ValueError(
                f"dead_cards={self.dead_cards}: the {self.deck_size}-card deck less the dead cards "
                f"must deal evenly to {self.num_players} players"
            )
        if self.pass_count > self.hand_size:
            raise ValueError(f"pass_count={self.pass_count} is more than a hand of {self.hand_size} cards")
        if self.num_players == 2 and "across" in self.pass_cycle:
            raise ValueError("pass_cycle: 'across' needs four players (allowed with two: left, right, none)")
        deck_ids = set(cards.cards_of(self.deck_bits))
        for text in self.opening_lead:
            if cards.parse_card(text) not in deck_ids:
                raise ValueError(f"opening_lead: {text} is not in the {self.deck} deck")
        if len(self.opening_lead) <= self.dead_cards:
            raise ValueError(
                f"opening_lead: with {self.dead_cards} dead cards it needs at least "
                f"{self.dead_cards + 1} fallback cards so one is always dealt"
            )
        if self.jack_of_diamonds_bonus and cards.JACK_OF_DIAMONDS not in deck_ids:
            raise ValueError(f"jack_of_diamonds_bonus: the {self.deck} deck has no J♦")
        return self

    # ---- derived values ------------------------------------------------------------------------

    @property
    def deck_bits(self) -> np.uint64:
        """The cards of this deck as a card set."""
        if self.deck == "full52":
            return cards.ALL_BITS
        ranks = [cards.RANK_CHARS.index(r) for r in SHORT_DECK_RANKS]
        return cards.bits_of(cards.card_id(s, r) for s in range(cards.NUM_SUITS) for r in ranks)

    @property
    def deck_size(self) -> int:
        return 52 if self.deck == "full52" else 28

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player, which is also the number of tricks in a hand."""
        return (self.deck_size - self.dead_cards) // self.num_players

    @property
    def trump(self) -> int:
        """Trump suit index, or -1 for no trump."""
        return -1 if self.trump_suit is None else cards.SUIT_CHARS.index(self.trump_suit)

    @property
    def pass_offsets(self) -> np.ndarray:
        """Seat offset of the pass of each entry of ``pass_cycle`` (0 = no pass)."""
        return np.array([PASS_OFFSETS[d] % self.num_players for d in self.pass_cycle], dtype=np.int64)

    @property
    def opening_ids(self) -> tuple[int, ...]:
        return tuple(cards.parse_card(t) for t in self.opening_lead)

    @property
    def point_bits(self) -> np.uint64:
        """Cards worth penalty points: the hearts and Q♠ (J♦ is a bonus, not a point card)."""
        return (cards.SUIT_BITS[cards.HEARTS] | cards.BIT[cards.QUEEN_OF_SPADES]) & self.deck_bits

    def pass_direction(self, hand_number: int) -> str:
        return self.pass_cycle[hand_number % len(self.pass_cycle)]

    # ---- comparison ----------------------------------------------------------------------------

    def same_game(self, other: "Rules | str | dict[str, Any]") -> bool:
        """Whether ``other`` (a Rules, preset name or mapping) plays the same game: every option
        equal, the ``name`` label aside. The one way rules are compared (checkpoints, exported
        policies, deal sets, trained bots)."""
        other = Rules.resolve(other)
        return self.model_dump(exclude={"name"}) == other.model_dump(exclude={"name"})

    def differences(self, other: "Rules | str | dict[str, Any]") -> str:
        """The options that differ, as ``option: mine vs theirs`` joined by ``; ``
        (``same options`` when :meth:`same_game`)."""
        mine, theirs = self.to_dict(), Rules.resolve(other).to_dict()
        diffs = [f"{k}: {mine[k]!r} vs {theirs[k]!r}" for k in mine if k != "name" and mine[k] != theirs[k]]
        return "; ".join(diffs) if diffs else "same options"

    # ---- construction --------------------------------------------------------------------------

    @classmethod
    def preset(cls, name: str) -> "Rules":
        """One of the named presets: classic, quick, long, two_player."""
        if not isinstance(name, str) or name not in PRESETS:
            raise RulesError(f"unknown rules preset {name!r:.60}; presets are: {', '.join(PRESETS)}")
        return PRESETS[name]

    @classmethod
    def resolve(cls, value: "Rules | str | dict[str, Any]") -> "Rules":
        """A ``Rules`` from a ``Rules``, a preset name or a mapping of options (``preset`` may name the base)."""
        if isinstance(value, Rules):
            return value
        if isinstance(value, str):
            return cls.preset(value)
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        raise RulesError(f"rules must be a preset name, a mapping of options or a Rules, got {type(value).__name__}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Rules":
        """Rules from a mapping (a config file or a record); ``preset`` may name the base. Anything
        else (text, a list, a number: a record from a stranger) is a :class:`RulesError`."""
        if not isinstance(data, Mapping):
            raise RulesError(f"rules must be a mapping of options, got {type(data).__name__} {data!r:.60}")
        if not all(isinstance(key, str) for key in data):
            raise RulesError(f"rules options are named by text, got {[k for k in data if not isinstance(k, str)]!r:.60}")
        data = dict(data)
        base = data.pop("preset", None)
        if base is None:
            return cls.create(**data)
        return cls.preset(base).replace(**data)

    @classmethod
    def create(cls, **fields: Any) -> "Rules":
        """Validated construction that raises :class:`RulesError` with every problem named
        (the same as ``Rules(**fields)``)."""
        return cls(**fields)

    def replace(self, **changes: Any) -> "Rules":
        """A copy with some fields changed, validated again. Changed options make another game, so
        the copy is named ``custom`` unless ``name`` is among the changes (``classic`` with the moon
        off is not ``classic``: tables, records and error messages show the name)."""
        data = self.to_dict()
        data.update(changes)
        result = Rules.create(**data)
        if "name" not in changes and result.name != "custom" and not result.same_game(self):
            result = result.model_copy(update={"name": "custom"})
        return result

    def to_dict(self) -> dict[str, Any]:
        data = self.model_dump()
        data["pass_cycle"] = list(data["pass_cycle"])
        data["opening_lead"] = list(data["opening_lead"])
        return data


def _explain(err: ValidationError) -> str:
    lines = []
    for problem in err.errors():
        field = shown_field(problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            allowed = ", ".join(Rules.model_fields)
            message = f"unknown rules option; the options are: {allowed}"
        if problem["loc"]:
            message += f" (got {shown_value(problem.get('input'))})"
        lines.append(f"{field}: {message}" if field else message)
    return "invalid rules: " + "; ".join(lines)


def shown_field(loc: Sequence[Any]) -> str:
    """Where a value is (pydantic's ``loc``: keys and list positions), for a one-line message: a key that
    is not short printable text (one from a file may hold a line break) shown as its repr, cut short."""
    return ".".join(str(p) if isinstance(p, int) or (str(p).isprintable() and len(str(p)) <= 60)
                    else shown_value(p, 60) for p in loc)


def shown_value(value: Any, limit: int = 200) -> str:
    """A value given by the user (a rule, an engine argument), for a one-line message: its repr cut
    short; a number (or a list holding one) of more digits than Python prints said in words instead."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond sys.get_int_max_str_digits (a hexadecimal YAML number converts)
        return "a number of more than 4,300 digits"
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


PRESETS: dict[str, Rules] = {
    "classic": Rules(name="classic"),
    "quick": Rules(name="quick", target_score=50),
    "long": Rules(name="long", target_score=150),
    "two_player": Rules(
        name="two_player",
        num_players=2,
        deck="short28",
        dead_cards=2,
        pass_cycle=("none",),
        opening_lead=("2C", "4C", "6C"),
        first_trick_protection=False,
        hearts_must_be_broken=True,
        moon="add_to_others",
        moon_points=20,
        trump_suit="H",
    ),
}
