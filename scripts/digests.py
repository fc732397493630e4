"""Digests of the lab's behaviour: run it on two trees and compare, to show a change kept behaviour.

Each item is a sha256 of what the code under test computes (numbers rounded to fixed precision
where they are floats; arrays by their bytes): every bot's decisions over fixed situation sets of
each preset, the default arena, ``hearts arena hard --vs normal --deals 2000``, the expert on 64
deals, every golden file (its bytes, and what the Python code computes from its records), the
bots service's answers to every golden record, and (``--slow``) the smoke recipe's weights.

The code digested is that of ``--tree`` (default: the tree holding this script), imported from
there and run from there in the subprocesses, so the script may digest a tree older than itself::

    git worktree add /tmp/base <commit>                 # the old tree (it may lack this script)
    .venv/bin/python scripts/digests.py --tree /tmp/base --out /tmp/digests_base.json
    .venv/bin/python scripts/digests.py --out /tmp/digests_new.json
    .venv/bin/python scripts/digests.py --compare /tmp/digests_base.json /tmp/digests_new.json

(``PYTHONPATH=/tmp/base .venv/bin/python scripts/digests.py --tree /tmp/base`` is the same.) The
compiled engine caches its code under each tree, so the first run on a fresh tree compiles (about a
minute). ``--quick`` uses smaller sets (a few minutes); ``--only PREFIX`` keeps the items whose name
starts with one of the prefixes. The figures compare only between runs with the same flags.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

#: What each group of items yields: ``(name, thunk)``, the thunk computing the digest when wanted.
Items = Iterator[tuple[str, Callable[[], str]]]

PRESETS = ("classic", "quick", "long", "two_player")
BOTS = ("random", "easy", "normal", "hard", "ppo-classic", "ppo-two-player",
        "level:easy", "level:normal", "level:hard", "level:strong")
SERVICE_BOTS = ("random", "easy", "normal", "hard", "ppo-classic")
GOLDEN_GLOBS = ("clients/js/test/fixtures/*.json", "agents/policies/*/golden.json")
# Arena figures that measure the machine, not the play.
VOLATILE = {"seconds", "deals_per_s", "hands_per_s", "games_per_s", "units_per_worker", "command",
            "workers", "hearts_lab_version"}


def canonical(value: Any) -> Any:
    """``value`` with floats rounded to 10 significant digits and numpy values made plain."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def digest(*parts: Any) -> str:
    """sha256 of arrays (dtype, shape, bytes), bytes, or anything else as canonical JSON."""
    h = hashlib.sha256()
    for part in parts:
        if hasattr(part, "dtype") and hasattr(part, "tobytes"):
            h.update(f"{part.dtype}{part.shape}".encode())
            h.update(part.tobytes())
        elif isinstance(part, bytes):
            h.update(part)
        else:
            h.update(json.dumps(canonical(part), sort_keys=True).encode())
    return h.hexdigest()


def hearts(tree: Path, *args: str) -> Any:
    """The JSON printed by ``python -m hearts_app ARGS`` run from ``tree`` with its code."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-m", "hearts_app", *args], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"hearts {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


# ---------------------------------------------------------------------------------------------
# The items: each a generator of (name, digest)
# ---------------------------------------------------------------------------------------------


@functools.cache
def situation_set(preset: str, quick: bool) -> tuple[Any, Any]:
    """``(observations, masks)`` of the states reached by seeded play of a preset."""
    import numpy as np

    from export.situations import sample_states
    from hearts_env import engine, observe
    from hearts_env.rules import Rules

    states = sample_states(Rules.preset(preset), games=3 if quick else 16, seed=0)
    return (np.concatenate([observe.observe(s, s.current_player) for s in states]),
            np.concatenate([engine.legal_mask(s) for s in states]))


def decisions(spec: str, preset: str, quick: bool) -> str:
    """The digest of a bot's actions over a preset's situations (or of its refusal of the rules)."""
    import numpy as np

    import agents
    from hearts_env.rules import Rules

    obs, mask = situation_set(preset, quick)
    try:
        return digest(np.asarray(agents.make(spec, seed=0, rules=Rules.preset(preset)).act(obs, mask)).astype(np.int64))
    except Exception as err:  # a bot made for other rules refuses them: that too is behaviour
        return digest(type(err).__name__, str(err))


def situations(quick: bool) -> Items:
    """Each preset's seeded situations (observations and masks), and every bot's decisions there."""
    for preset in PRESETS:
        yield f"situations:{preset}", lambda preset=preset: digest(*situation_set(preset, quick))
        for spec in BOTS:
            yield f"bot:{spec}:{preset}", lambda spec=spec, preset=preset: decisions(spec, preset, quick)


def arenas(tree: Path, quick: bool) -> Items:
    """The default leaderboard, hard against normal, and the expert, as ``hearts arena --json``."""
    common = ("--json", "--no-progress", "--workers", "1")
    small = ("--deals", "100") if quick else ()
    yield "arena:default", lambda: digest(hearts(tree, "arena", *common, *small))
    yield "arena:hard-vs-normal", lambda: digest(hearts(tree, "arena", "hard", "--vs", "normal", *common,
                                                        "--deals", "200" if quick else "2000"))
    if not quick:
        yield "arena:expert", lambda: digest(hearts(tree, "arena", "expert", "--vs", "normal", *common,
                                                    "--deals", "64"))


def golden_records(data: dict) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` of every seat record a golden file holds."""
    if "hand" in data and "rules" in data:
        yield "record", data
    for key in ("cases", "encoder_cases", "invalid"):
        for i, case in enumerate(data.get(key, [])):
            if isinstance(case, dict) and "record" in case:
                yield f"{key}[{i}]", case["record"]


def encoded(record: Any) -> Any:
    """What the Python code makes of a record: its observation and mask, or its error."""
    from hearts_env import seat_record

    try:
        obs, mask, errors = seat_record.encode_batch([record])
    except Exception as err:  # noqa: BLE001 (a parse failure outside the batch's errors)
        return ["raised", type(err).__name__, str(err)]
    if errors[0] is not None:
        return ["error", type(errors[0]).__name__, str(errors[0])]
    return [digest(obs[0]), digest(mask[0])]


def goldens(tree: Path) -> Items:
    """Every golden file's bytes, and its records (and games) recomputed by the Python code."""
    from export.golden_games import golden_games

    files = sorted({p for pattern in GOLDEN_GLOBS for p in tree.glob(pattern)})
    for path in files:
        name = path.relative_to(tree).as_posix()
        yield f"golden-file:{name}", lambda path=path: digest(path.read_bytes())
        data = json.loads(path.read_text(encoding="utf-8"))
        records = list(golden_records(data)) if isinstance(data, dict) else []
        if records:
            yield f"golden-records:{name}", lambda records=records: digest([[w, encoded(r)] for w, r in records])
    yield "golden-games:recomputed", lambda: digest(golden_games())


def mutated(record: dict, k: int) -> dict:
    """Record ``record`` changed in one of a few ways (by ``k``), most into impossible histories."""
    r = json.loads(json.dumps(record))
    played = [c for t in r["tricks"] for c in t["cards"]] + r["trick"]["cards"]
    if k % 4 == 0 and len(played) >= 2:  # two cards of the history swapped
        i, j = k % len(played), (3 * k + 1) % len(played)
        played[i], played[j] = played[j], played[i]
        for t in (*r["tricks"], r["trick"]):
            t["cards"], played = played[:len(t["cards"])], played[len(t["cards"]):]
    elif k % 4 == 1 and r["hand"]:  # a card of the hand dropped
        r["hand"] = r["hand"][1:]
    elif k % 4 == 2:  # the current trick said led by another seat
        r["trick"]["leader"] = (r["trick"].get("leader", 0) + 1) % len(r["scores"])
    elif r["tricks"]:  # a finished trick said led by another seat
        r["tricks"][-1]["leader"] = (r["tricks"][-1]["leader"] + 1) % len(r["scores"])
    return r


@functools.cache
def record_set(preset: str, quick: bool) -> tuple[list, list]:
    """``(good, bad)``: seeded seat records of a preset, and a changed copy of each."""
    from export.situations import sample_records
    from hearts_env.rules import Rules

    good = sample_records(Rules.preset(preset), 60 if quick else 400, seed=0, games=8)
    return good, [mutated(r, k) for k, r in enumerate(good)]


def batch_encoded(preset: str, quick: bool) -> str:
    from hearts_env import seat_record

    good, bad = record_set(preset, quick)
    obs, mask, errors = seat_record.encode_batch(good + bad)
    return digest([digest(o, m) if e is None else str(e) for o, m, e in zip(obs, mask, errors)])


def views(preset: str, quick: bool) -> str:
    from hearts_env import seat_record

    return digest([digest(v.taken, v.may_hold) for v in map(seat_record.view, record_set(preset, quick)[0])])


def records(quick: bool) -> Items:
    """Each preset's seeded seat records and changed copies of them: each record's observation and
    mask (or error) alone and in one batch, and its ``seat_record.view`` (cards taken, who may hold what)."""
    for preset in PRESETS:
        yield f"records:{preset}:batch", lambda preset=preset: batch_encoded(preset, quick)
        yield f"records:{preset}:alone", lambda preset=preset: digest([encoded(r) for part in record_set(preset, quick) for r in part])
        yield f"records:{preset}:view", lambda preset=preset: views(preset, quick)


def service(tree: Path) -> Items:
    """The bots API's answers (``Bots.act_batch``, the workers' function) to every golden record:
    each record alone, and all of one file in one batch."""
    from hearts_app.serve.bots import Bots

    bots = functools.cache(lambda: Bots(list(SERVICE_BOTS)))

    def plain(answers: list) -> list:
        return [a if isinstance(a, dict) else ["refused", a.status, a.detail] for a in answers]

    files = sorted({p for pattern in GOLDEN_GLOBS for p in tree.glob(pattern)})
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        records = [r for _, r in golden_records(data)] if isinstance(data, dict) else []
        if not records:
            continue
        name = path.relative_to(tree).as_posix()
        for spec in SERVICE_BOTS:
            yield f"service:{spec}:{name}", lambda spec=spec, records=records: digest(
                [plain(bots().act_batch([(spec, r)]))[0] for r in records],  # each alone
                plain(bots().act_batch([(spec, r) for r in records])))  # all at once


def smoke_recipe(tree: Path) -> Iterator[tuple[str, str]]:
    """The smoke recipe's weights: every checkpoint it leaves, tensor by tensor (computed at once)."""
    import torch

    with tempfile.TemporaryDirectory(prefix="digests-recipe-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run([sys.executable, "-m", "hearts_app", "recipe", "configs/recipes/smoke.yaml", "--runs-dir", tmp,
                        "--workers", "1", "--no-progress"], cwd=tree, env=env, check=True, capture_output=True)
        for path in sorted(Path(tmp).rglob("*.pt")):
            loaded = torch.load(path, map_location="cpu", weights_only=False)
            state = loaded.get("model", loaded.get("state_dict", loaded)) if isinstance(loaded, dict) else loaded
            tensors = {k: v for k, v in _flat(state)}
            parts = [x for k in sorted(tensors) for x in (k, tensors[k].detach().contiguous().numpy())]
            yield f"recipe:{path.relative_to(tmp).as_posix()}", lambda parts=parts: digest(*parts)


def _flat(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """The tensors of a nested checkpoint dict, by dotted key."""
    if hasattr(value, "detach"):
        yield prefix, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _flat(item, f"{prefix}.{key}" if prefix else str(key))


# ---------------------------------------------------------------------------------------------


def run(tree: Path, quick: bool, slow: bool, only: list[str] | None,
        say: Callable[[str], None] = print) -> dict[str, str]:
    """Every item's digest, by name (sorted)."""
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    groups = [(("situations", "bot"), lambda: situations(quick)), (("arena",), lambda: arenas(tree, quick)),
              (("golden",), lambda: goldens(tree)), (("records",), lambda: records(quick)), (("service",), lambda: service(tree)),
              (("recipe",), lambda: smoke_recipe(tree) if slow else iter(()))]
    out: dict[str, str] = {}
    for prefixes, items in groups:
        if only and not any(p.startswith(g) or g.startswith(p) for p in only for g in prefixes):
            continue
        for name, thunk in items():
            if only and not any(name.startswith(p) for p in only):
                continue
            out[name] = value = thunk()
            say(f"{value[:16]}  {name}")
    return dict(sorted(out.items()))


def compare(a: dict[str, str], b: dict[str, str]) -> list[str]:
    """The names whose digests differ or that only one side has, each with how."""
    return [f"{name}: {'differs' if name in a and name in b else 'only in ' + ('first' if name in a else 'second')}"
            for name in sorted(set(a) | set(b)) if a.get(name) != b.get(name)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/digests.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the tree whose code is digested (default: the one holding this script)")
    parser.add_argument("--out", type=Path, help="write the digests to this JSON file")
    parser.add_argument("--quick", action="store_true", help="smaller sets; no expert")
    parser.add_argument("--slow", action="store_true", help="also run the smoke recipe and digest its weights")
    parser.add_argument("--only", nargs="+", metavar="PREFIX", help="only the items whose name starts so")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"),
                        help="instead: compare two files of digests; exit status 1 if any differs")
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text())["digests"] for p in args.compare)
        diff = compare(a, b)
        print("\n".join(diff) if diff else f"all {len(a)} digests identical")
        return 1 if diff else 0
    tree = args.tree.resolve()
    digests = run(tree, args.quick, args.slow, args.only)
    if args.out:
        result = {"tree": str(tree), "quick": args.quick, "slow": args.slow, "only": args.only, "digests": digests}
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
