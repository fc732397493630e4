"""The shard format: the examples of one batch of tables, written as one ``.npz`` file and read back.

:class:`Shard` gathers a batch's examples as they are collected and writes them whole
(:meth:`Shard.write`); :func:`shard_paths`, :func:`shard_headers` and :func:`load_shards` read a
folder of them back, refusing a file that is not one (shards come from strangers too: every array's
kind, shape and size is checked from its header before anything is allocated); :func:`read_labels`
turns them into the :class:`Labels` a fit learns from. Also :func:`policy_probs`, the student's own
odds, which the kept decisions store and the losses start from.
"""

from __future__ import annotations

import json
import zipfile
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from hearts_env import atomic_files, loop
from hearts_env.observe import OBS_DIM
from hearts_env.rules import Rules

from ..config import REWARD_SCALE


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
