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

Deal sets are shared, so a file is checked against that layout before any array is read: each
member's header (type, number of dimensions, declared size, which must be what the member holds)
and the total the members declare, which may not exceed ``MAX_INFLATION`` times the file's size (a
real set compresses about 2x: its seeds are random). NumPy allocates an array by its header before
reading the data, so a small zip bomb would otherwise take gigabytes before it was refused. Arrays
of Python objects are refused, never unpickled, and NumPy's advice to load them unsafely is never
passed on.
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from hearts_env import cards, deal
from hearts_env.rules import Rules, RulesError
from hearts_env.settings_files import first_line_without_advice

DEAL_SET_VERSION = 1
# Each member: (dtype kind, number of dimensions); numbers are 8 bytes, text is NumPy's unicode.
_LAYOUT = {"format_version": ("i", 0), "seed": ("u", 0), "seeds": ("u", 1), "hand_numbers": ("i", 1),
           "rules_json": ("U", 0), "dealt": ("u", 2), "dead": ("u", 1)}
_KEYS = tuple(_LAYOUT)
_KINDS = {"i": "8-byte integers", "u": "8-byte unsigned integers", "U": "text"}
MAX_INFLATION = 8  # the members may declare at most this many times the file's size
#: The most deals a set holds: 1,000 times the arena's default, 100 times the promotion rule's largest
#: check; beyond, the games of one arena run would not fit in memory.
MAX_DEALS = 1_000_000
_MAX_RULES_CHARS = 1 << 16


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
        if n > MAX_DEALS:
            raise DealSetError(f"a deal set holds at most {MAX_DEALS:,} deals, got {n:,}")
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

    @staticmethod
    def file_for(path: str | Path) -> Path:
        """The file :meth:`save` writes for ``path``: the ``.npz`` suffix is added when missing."""
        path = Path(path)
        return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")

    def save(self, path: str | Path) -> Path:
        """Write the set as ``.npz`` (the suffix is added when missing); returns the path written."""
        path = self.file_for(path)
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
            arrays = _read_arrays(path)
        except DealSetError:
            raise
        except (OSError, ValueError, EOFError, NotImplementedError, zipfile.BadZipFile, zlib.error) as err:
            raise DealSetError(f"deal set {path}: not a readable deal set (.npz) file: "
                               f"{first_line_without_advice(err)}") from None
        version = int(arrays["format_version"])
        if version != DEAL_SET_VERSION:
            raise DealSetError(
                f"deal set {path}: format version {version}, this version reads {DEAL_SET_VERSION}"
            )
        try:
            rules_data = json.loads(str(arrays["rules_json"]))
        except (ValueError, RecursionError) as err:  # not JSON, a number too long to convert, nested too deeply
            raise DealSetError(f"deal set {path}: its rules cannot be read: not JSON ({err})") from None
        try:
            stored = Rules.from_dict(rules_data)
        except RulesError as err:
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


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    """The deal set's arrays, each member's header checked against :data:`_LAYOUT` and the file's
    size before anything is inflated or allocated."""
    def invalid(why: str) -> DealSetError:
        return DealSetError(f"deal set {path}: not a valid deal set: {why}")

    size = path.stat().st_size
    with zipfile.ZipFile(path) as archive:
        members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
        missing = [k for k in _KEYS if k not in members]
        if missing:
            raise DealSetError(f"deal set {path}: not a deal set file (missing {', '.join(missing)})")
        declared: dict[str, int] = {}
        shapes: dict[str, tuple[int, ...]] = {}
        for key, (kind, ndim) in _LAYOUT.items():
            with archive.open(members[key]) as member:  # inflates only the header
                version = np.lib.format.read_magic(member)
                if version not in ((1, 0), (2, 0)):
                    raise invalid(f"{key} has NumPy format version {version}")
                read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                    np.lib.format.read_array_header_2_0
                shape, _, dtype = read_header(member)
                offset = member.tell()
            if dtype.hasobject:
                raise invalid(f"{key} holds Python objects; a deal set holds numbers and text")
            if dtype.kind != kind or len(shape) != ndim or (kind != "U" and dtype.itemsize != 8):
                raise invalid(f"{key} is {dtype}{list(shape)}; a deal set stores {_KINDS[kind]} there, "
                              f"with {ndim} dimension(s)")
            if kind == "U" and dtype.itemsize // 4 > _MAX_RULES_CHARS:
                raise invalid(f"{key} is {dtype.itemsize // 4} characters long; rules take at most {_MAX_RULES_CHARS}")
            declared[key] = int(np.prod(shape, dtype=object)) * dtype.itemsize
            shapes[key] = tuple(shape)
            if offset + declared[key] != members[key].file_size:  # NumPy allocates what the header says
                raise invalid(f"{key} declares {declared[key]} bytes ({dtype}{list(shape)}) but holds "
                              f"{members[key].file_size - offset}")
        largest = max(declared, key=declared.get)
        if sum(declared.values()) > MAX_INFLATION * size:  # a zip bomb: refused before inflating it
            raise invalid(f"its arrays declare {sum(declared.values())} bytes ({largest}: {declared[largest]}) "
                          f"in a file of {size} bytes, more than {MAX_INFLATION} times its size")
        n = shapes["seeds"][0]
        if shapes["hand_numbers"] != (n,) or shapes["dead"] != (n,) or shapes["dealt"][:1] != (n,):
            raise invalid(f"its arrays disagree on the number of deals "
                          f"({', '.join(f'{k} {list(shapes[k])}' for k in ('seeds', 'hand_numbers', 'dealt', 'dead'))})")
        arrays = {}
        for key in _KEYS:
            with archive.open(members[key]) as member:
                arrays[key] = np.lib.format.read_array(member, allow_pickle=False)
    return arrays


def describe_rules(rules: Rules) -> str:
    return repr(rules.name)
