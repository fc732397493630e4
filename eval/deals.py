"""Deal sets: a fixed list of deals, generated once from a seed and replayed for every line-up.

A deal is a per-game seed plus the number of the hand to deal: the engine deals hand ``h`` of a
game as a pure function of ``(seed, h)``, so the same deal gives the same cards to the same seats
in every batch, every process and every run. Deal ``i`` of a set uses hand number
``i % len(rules.pass_cycle)``, so the pass directions cycle as in real play (classic: left,
right, across, none, left, ...).

In whole-game episodes a deal is the game's seed; the first hand is the deal set's hand and the
following hands come from the same seed, so each game is also fixed.

A deal set is saved as ``.npz`` (NumPy's zip of arrays, no pickles)::

    format_version  int64        DEAL_SET_VERSION
    seed            uint64       the seed the set was generated from
    seeds           uint64[n]    per-deal game seeds (``hearts_env.deal.game_seeds(seed, n)``)
    hand_numbers    int64[n]     the hand each deal deals
    rules_json      str          the rules (``Rules.to_dict()`` as JSON)
    dealt           uint64[n,P]  each seat's cards as dealt, for inspection (recomputed and checked on load)
    dead            uint64[n]    cards set aside (two-player game)
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path

import numpy as np

from hearts_env import cards, deal
from hearts_env.rules import Rules, RulesError

DEAL_SET_VERSION = 1
_KEYS = ("format_version", "seed", "seeds", "hand_numbers", "rules_json", "dealt", "dead")


class DealSetError(ValueError):
    """A deal set file that cannot be used: unreadable, not a deal set, or made for other rules."""


@dataclasses.dataclass(frozen=True, eq=False)
class DealSet:
    """``n`` deals under one ``Rules``: per-deal game seeds and hand numbers."""

    rules: Rules
    seed: int
    seeds: np.ndarray  # uint64[n]
    hand_numbers: np.ndarray  # int64[n]

    @classmethod
    def generate(cls, rules: Rules, n: int, seed: int = 0) -> "DealSet":
        """``n`` deals derived from ``seed``; deal ``i`` deals hand ``i % len(rules.pass_cycle)``."""
        if n < 1:
            raise ValueError(f"a deal set needs at least one deal, got {n}")
        seeds = deal.game_seeds(int(seed), int(n))
        hand_numbers = np.arange(n, dtype=np.int64) % len(rules.pass_cycle)
        return cls(rules=rules, seed=int(seed), seeds=seeds, hand_numbers=hand_numbers)

    def __len__(self) -> int:
        return int(self.seeds.shape[0])

    def dealt(self) -> tuple[np.ndarray, np.ndarray]:
        """``(hands [n, P], dead [n])`` card sets of each deal (its first hand)."""
        return deal.deal(self.rules, self.seeds, self.hand_numbers)

    def hands_text(self, i: int) -> list[list[str]]:
        """Deal ``i`` as card texts, one list per seat."""
        hands, _ = deal.deal(self.rules, self.seeds[i : i + 1], self.hand_numbers[i : i + 1])
        return [[cards.card_text(c) for c in cards.cards_of(h)] for h in hands[0]]

    def subset(self, start: int, stop: int) -> "DealSet":
        return DealSet(self.rules, self.seed, self.seeds[start:stop], self.hand_numbers[start:stop])

    # ---- files ----------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the set as ``.npz`` (the suffix is added when missing); returns the path written."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        hands, dead = self.dealt()
        np.savez_compressed(
            path,
            format_version=np.int64(DEAL_SET_VERSION),
            seed=np.uint64(self.seed % (1 << 64)),
            seeds=self.seeds.astype(np.uint64),
            hand_numbers=self.hand_numbers.astype(np.int64),
            rules_json=np.array(json.dumps(self.rules.to_dict(), sort_keys=True)),
            dealt=hands,
            dead=dead,
        )
        return path

    @classmethod
    def load(cls, path: str | Path, rules: Rules | None = None) -> "DealSet":
        """Read a set written by :meth:`save`; with ``rules``, refuse a set made for other rules."""
        path = Path(path)
        if not path.is_file():
            raise DealSetError(f"deal set {path}: no such file")
        try:
            with np.load(path, allow_pickle=False) as data:
                missing = [k for k in _KEYS if k not in data.files]
                if missing:
                    raise DealSetError(f"deal set {path}: not a deal set file (missing {', '.join(missing)})")
                arrays = {k: data[k] for k in _KEYS}
        except DealSetError:
            raise
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
            raise DealSetError(f"deal set {path}: not a readable deal set (.npz) file: {err}") from None
        version = int(arrays["format_version"])
        if version != DEAL_SET_VERSION:
            raise DealSetError(
                f"deal set {path}: format version {version}, this version reads {DEAL_SET_VERSION}"
            )
        try:
            stored = Rules.from_dict(json.loads(str(arrays["rules_json"])))
        except (json.JSONDecodeError, RulesError, TypeError) as err:
            raise DealSetError(f"deal set {path}: its rules cannot be read: {err}") from None
        if rules is not None and not stored.same_game(rules):
            raise DealSetError(
                f"deal set {path} was made for rules {describe_rules(stored)}, "
                f"but the arena runs rules {describe_rules(rules)} ({stored.differences(rules)})"
            )
        seeds = np.asarray(arrays["seeds"], dtype=np.uint64).reshape(-1)
        hand_numbers = np.asarray(arrays["hand_numbers"], dtype=np.int64).reshape(-1)
        if seeds.size == 0 or seeds.shape != hand_numbers.shape or (hand_numbers < 0).any():
            raise DealSetError(f"deal set {path}: seeds and hand numbers do not match up")
        result = cls(rules=stored, seed=int(arrays["seed"]), seeds=seeds, hand_numbers=hand_numbers)
        # The stored cards are for inspection, but they must be what the seeds deal: a file edited
        # by hand or written by another engine version would silently give other games.
        hands, dead = result.dealt()
        if not (np.array_equal(arrays["dealt"], hands) and np.array_equal(arrays["dead"], dead)):
            raise DealSetError(
                f"deal set {path}: the stored cards differ from what its seeds deal "
                "(edited file, or made by an engine version that deals differently)"
            )
        return result


def describe_rules(rules: Rules) -> str:
    return repr(rules.name)
