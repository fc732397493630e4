"""A fuzz of every command-line entry point and file reader: hypothesis makes hostile arguments and
hostile files, and each example runs the ``hearts`` command in this process through
``hearts_app.cli.main(argv)``, in a fresh temporary folder as the current directory.

Not part of the default run (pytest collects ``test_*.py``; this file is collected when named)::

    HEARTS_FUZZ_SECONDS=600 .venv/bin/python -m pytest tests/fuzz_inputs.py -p no:cacheprovider

``HEARTS_FUZZ_SECONDS`` (default 600) is shared out over the entry points; ``HEARTS_FUZZ_REPORT=FILE``
also writes the figures as JSON; ``HEARTS_FUZZ_SEED=N`` fixes hypothesis's seed. Each example must:

* (a) end in an exit code 0, 1 or 2 (returned, or ``SystemExit``): any other exception escaping
  ``cli.main`` is a failure, and so is an example still running after ``EXAMPLE_SECONDS`` (a command
  that accepted absurd work);
* (b) on a refusal (exit code 2) leave its folder and the ``outside`` folder beside it as they were
  (caches such as ``__pycache__`` aside), and say why on its last line of stderr (``...error: ...``);
* (c) keep this process's peak resident memory, and that of every worker process it waited for,
  under 1 GiB (``ru_maxrss`` is a running maximum: the first example that pushes it over is named).

Hostile values: NaN, infinities, negative, zero and huge numbers, empty, long and unicode text,
values of the wrong type, nesting 100,000 deep, YAML alias bombs, truncated and bit-flipped copies of
real files (shipped policies, configs, files the commands wrote), zip bombs (2 GiB of zeros in a few
MB), files that are folders, missing files, devices, and paths outside the working folder. Numbers are
drawn out of range (zero, negative, a billion or more, not finite, not numbers) or small and valid, never
mid-sized, and the options whose defaults are real runs (``--hands``, ``--deals``, ``--seconds``, a
training config's sizes) are always given: most examples are refusals, and a valid one is short.

``hearts serve`` is fuzzed up to the point where it would start: the app's agents and games folder are
made (``serve.bots.describe``, ``serve.games.GameStore``) and the socket is bound, but no worker starts
and nothing is served. ``--backend ray`` is fuzzed in ``hearts serve`` only (there with Ray Serve's start
replaced by a stub): the arena's and collection's Ray backend would start a Ray cluster per example.
``hearts promote`` plays for minutes by design: its head-to-heads are replaced by a verdict, so what is
fuzzed is what comes before them (arguments, rules, the candidate's file) and the writing after.
Seat records (the bots API's input) are read by ``hearts_env.seat_record`` directly.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import multiprocessing
import os
import pickle
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
# (hypothesis warns that the examples' long texts make long reprs: they are meant to be long)
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

#: Seconds of fuzzing in all, shared out over the entry points by their weights.
TOTAL_SECONDS = float(os.environ.get("HEARTS_FUZZ_SECONDS", "600"))
#: An example still running after this many seconds is a failure (a command that accepted absurd work).
EXAMPLE_SECONDS = 30
#: Peak resident memory allowed to this process and to each worker process, in KiB (ru_maxrss's unit on Linux).
MEMORY_LIMIT_KIB = 1 << 20
#: A guard, not a check: the address space this process may take, so that a runaway allocation fails
#: here (as a MemoryError, a finding) instead of exhausting the machine.
ADDRESS_SPACE_GUARD = 8 << 30
REPORT_FILE = os.environ.get("HEARTS_FUZZ_REPORT")
FUZZ_SEED = os.environ.get("HEARTS_FUZZ_SEED")

#: The entry points, each a test below, with its share of the seconds (weights).
ENTRY_POINTS = {
    "bench": 1.0, "demo": 0.7, "arena": 1.3, "train": 1.3, "recipe": 1.0, "distill collect": 1.0,
    "distill fit": 1.0, "belief": 0.8, "value": 0.8, "promote": 0.8, "export": 1.2, "play": 1.0,
    "replay": 1.0, "serve": 1.0, "seat records": 0.6, "ladder levels": 0.6,
}


def share(entry: str) -> float:
    return TOTAL_SECONDS * ENTRY_POINTS[entry] / sum(ENTRY_POINTS.values())


# ---- figures ----------------------------------------------------------------------------------

class Figures:
    """What one entry point's examples did."""

    def __init__(self):
        self.examples = self.refusals = self.accepted = self.seconds = 0
        self.failures: list[dict[str, Any]] = []
        self.peak_mib = self.worker_peak_mib = None  # this process's and its workers' peaks once it was done
        self.largest_rise: tuple[float, str] = (0.0, "")  # the example that raised this process's peak most

    def as_dict(self) -> dict[str, Any]:
        distinct = {}
        for failure in self.failures:
            distinct.setdefault(failure["key"], failure)
        return {"examples": self.examples, "refusals": self.refusals, "accepted": self.accepted,
                "failures": len(self.failures), "distinct_failures": list(distinct.values()),
                "seconds": round(self.seconds, 1), "peak_rss_mib_so_far": self.peak_mib,
                "peak_worker_rss_mib_so_far": self.worker_peak_mib,
                "largest_peak_rise_mib": round(self.largest_rise[0], 1), "largest_peak_rise_by": self.largest_rise[1]}


FIGURES: dict[str, Figures] = {}
MEMORY = {"baseline_mib": None, "after_corpus_mib": None, "first_over": None}


def peak_mib(who: str) -> float:
    which = resource.RUSAGE_SELF if who == "self" else resource.RUSAGE_CHILDREN
    return round(resource.getrusage(which).ru_maxrss / 1024, 1)


def current_rss_mib() -> float:
    with open("/proc/self/statm") as stream:
        return round(int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


@pytest.fixture(scope="module", autouse=True)
def report(request):
    """Prints the figures at the end (and writes them to HEARTS_FUZZ_REPORT)."""
    from hearts_app import cli  # noqa: F401

    for module in ("torch", "onnxruntime"):  # what the commands import, in the baseline
        with contextlib.suppress(ImportError):
            __import__(module)

    MEMORY["baseline_mib"] = current_rss_mib()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > ADDRESS_SPACE_GUARD:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_GUARD, hard))
    yield
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    figures = {"seconds_asked": TOTAL_SECONDS, "example_seconds": EXAMPLE_SECONDS,
               "memory_limit_mib": MEMORY_LIMIT_KIB // 1024, **MEMORY,
               "entry_points": {name: f.as_dict() for name, f in FIGURES.items()}}
    if REPORT_FILE:
        Path(REPORT_FILE).write_text(json.dumps(figures, indent=1, default=str) + "\n")
    lines = [f"hearts fuzz: {TOTAL_SECONDS:g} s asked; resident {MEMORY['baseline_mib']} MiB with the project, "
             f"torch and onnxruntime imported, {MEMORY['after_corpus_mib']} MiB once the real files were made; peak "
             f"{peak_mib('self')} MiB, workers' peak {peak_mib('children')} MiB; limit "
             f"{MEMORY_LIMIT_KIB // 1024} MiB",
             f"{'entry point':<16} {'examples':>8} {'refused':>8} {'accepted':>8} {'failures':>8} {'seconds':>8} "
             f"{'peak MiB so far':>16} {'workers':>8}"]
    for name, f in FIGURES.items():
        lines.append(f"{name:<16} {f.examples:>8} {f.refusals:>8} {f.accepted:>8} {len(f.failures):>8} "
                     f"{f.seconds:>8.0f} {f.peak_mib!s:>16} {f.worker_peak_mib!s:>8}")
        for failure in f.as_dict()["distinct_failures"]:
            lines.append(f"    FAILURE {failure['key']}: {failure['what'][:300]}\n"
                         f"      example: {failure['example'][:400]}")
    if MEMORY["first_over"]:
        lines.append(f"first example over the memory limit: {MEMORY['first_over']}")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print("\n" + "\n".join(lines), file=sys.stderr, flush=True)


# ---- running one example ----------------------------------------------------------------------

class _Spent(BaseException):
    """The entry point's share of the seconds is spent: ends its hypothesis run (not a failure)."""


class _TooLong(BaseException):
    """The example ran past EXAMPLE_SECONDS (a BaseException, so no ``except Exception`` swallows it)."""


def _on_alarm(signum, frame):
    for child in multiprocessing.active_children():  # a pool the command waits on would wait on forever
        child.kill()
    raise _TooLong()


IGNORED = re.compile(r"(^|/)(__pycache__|\.hypothesis)(/|$)|\.nb[ic]$")


def snapshot(*folders: Path) -> dict[str, tuple]:
    """Every file and folder under ``folders``: kind, and a file's size and modification time (caches aside)."""
    seen = {}
    for top in folders:
        for folder, dirs, files in os.walk(top):
            for name in dirs + files:
                path = Path(folder, name)
                key = str(path)
                if IGNORED.search(key):
                    continue
                try:
                    info = path.lstat()
                except OSError:
                    continue
                # (a folder by its entries alone: making and removing a probe in it changes nothing)
                seen[key] = (info.st_mode >> 12, 0, 0) if path.is_dir() else (info.st_mode >> 12, info.st_size,
                                                                               info.st_mtime_ns)
    return seen


def _where(err: BaseException) -> str:
    """The innermost frame of the project's code (else the innermost) that raised ``err``."""
    frames = traceback.extract_tb(err.__traceback__)
    ours = [f for f in frames
            if str(ROOT) in f.filename and "/tests/" not in f.filename and ".venv" not in f.filename]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "?"
    name = Path(frame.filename).relative_to(ROOT) if str(ROOT) in frame.filename else frame.filename
    return f"{name}:{frame.lineno}"


class Case:
    """One example's folders: ``work`` (the current directory) and ``outside`` (beside it)."""

    def __init__(self, base: Path):
        self.base = Path(tempfile.mkdtemp(prefix="ex-", dir=base))
        self.work = self.base / "work"
        self.outside = self.base / "outside"
        self.work.mkdir()
        self.outside.mkdir()
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)


def run_example(entry: str, case: Case, call: Callable[[], Any], shown: str, stdin: str = "") -> None:
    """Run ``call`` (``cli.main(argv)`` or a reader) in ``case.work``; check (a), (b) and (c)."""
    figures = FIGURES.setdefault(entry, Figures())
    before = snapshot(case.base)
    out, err = io.StringIO(), io.StringIO()
    failure = None
    code: Any = None
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    here = os.getcwd()
    rss_before = current_rss_mib()
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.monotonic()
    try:
        os.chdir(case.work)
        signal.setitimer(signal.ITIMER_REAL, EXAMPLE_SECONDS, 5)  # then every 5 s, through clean-ups
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                _swap(sys, "stdin", io.StringIO(stdin)):
            code = call()
    except SystemExit as exit:
        code = exit.code
    except _TooLong:
        failure = ("too long", f"still running after {EXAMPLE_SECONDS} s (accepted absurd work?)")
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001  (any exception escaping the command is the finding)
        first = (str(error).splitlines() or [""])[0]
        failure = (f"{type(error).__name__} at {_where(error)}", f"{type(error).__name__}: {first[:300]}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(here)
        for child in multiprocessing.active_children():
            child.join(1)
    figures.seconds += time.monotonic() - began
    figures.examples += 1
    code = 0 if code is None else code
    if failure is None and code not in (0, 1, 2):
        failure = (f"exit code {code!r}", f"exit code {code!r}; stderr {err.getvalue()[-300:]!r}")
    if failure is None and code == 2:
        figures.refusals += 1
        after = snapshot(case.base)
        changed = sorted({k for k in set(before) | set(after) if before.get(k) != after.get(k)})
        lines = [line for line in err.getvalue().split("\n") if line.strip()]
        if changed:
            shown_changes = ", ".join(str(Path(c).relative_to(case.base)) for c in changed[:5])
            failure = ("output on a refusal", f"refused ({lines[-1][:200] if lines else ''!r}) after writing "
                                              f"{shown_changes}")
        elif not lines or "error:" not in lines[-1] or "Traceback" in err.getvalue():
            failure = ("refusal without a reason", f"refused with stderr {err.getvalue()[-300:]!r}")
    elif failure is None:
        figures.accepted += 1
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if (peak_self - peak_before) / 1024 > figures.largest_rise[0]:
        figures.largest_rise = ((peak_self - peak_before) / 1024, shown[:300])
    if max(peak_self, peak_children) > MEMORY_LIMIT_KIB and MEMORY["first_over"] is None:
        MEMORY["first_over"] = (f"{entry}: {shown} (peak {peak_self // 1024} MiB here, {peak_children // 1024} MiB "
                                f"in a worker; resident before it {rss_before} MiB, after {current_rss_mib()} MiB)")
        if failure is None:
            failure = ("over 1 GiB", f"peak resident memory {max(peak_self, peak_children) // 1024} MiB")
    if failure is not None:
        key, what = failure
        figures.failures.append({"key": key, "what": what, "example": shown + "".join(f"; {n}" for n in case.notes)})
    shutil.rmtree(case.base, ignore_errors=True)


@contextlib.contextmanager
def _swap(owner, name, value):
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def fuzz(entry: str, strategy: st.SearchStrategy, prepare: Callable[[Any, Case], tuple], base: Path) -> None:
    """Run examples of ``strategy`` for the entry point's share of the seconds. ``prepare(example,
    case)`` writes the example's files into the case's folders and returns ``(call, shown)`` or
    ``(call, shown, stdin)``; then the example runs (:func:`run_example`). Asserts no failure."""
    stop = time.monotonic() + share(entry)
    FIGURES.setdefault(entry, Figures())

    @settings(max_examples=10**7, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)
    @given(strategy)
    def examples(example):
        case = Case(base)
        try:
            prepared = prepare(example, case)  # (every draw first: hypothesis wants an example drawn whole)
            if time.monotonic() > stop:
                raise _Spent()
        except BaseException:
            shutil.rmtree(case.base, ignore_errors=True)
            raise
        run_example(entry, case, *prepared)

    if FUZZ_SEED:
        examples = hypothesis_seed(int(FUZZ_SEED))(examples)
    with contextlib.suppress(_Spent):
        examples()
    FIGURES[entry].peak_mib, FIGURES[entry].worker_peak_mib = peak_mib("self"), peak_mib("children")
    failures = FIGURES[entry].as_dict()["distinct_failures"]
    assert not failures, "\n".join(f"{f['key']}: {f['what']}\n  example: {f['example'][:600]}" for f in failures)


def cli_call(argv: list[str]) -> Callable[[], Any]:
    from hearts_app import cli

    return lambda: cli.main(list(argv))


def shown_argv(argv: list[str]) -> str:
    return "hearts " + " ".join(_short(a) for a in argv)


def _short(text: str, limit: int = 60) -> str:
    text = repr(text) if (not text or any(c.isspace() or not c.isprintable() for c in text)) else text
    return text if len(text) <= limit else f"{text[:limit]}...({len(text)} chars)"


# ---- hostile values ---------------------------------------------------------------------------

#: Numbers as command-line words: out of range, not finite, not numbers at all, or too long to convert
#: (and a few small ones written oddly: Unicode digits, a fraction, a sign).
NUMBER_WORDS = ["nan", "NaN", "inf", "-inf", "Infinity", "-1", "0", "-0", "0.0", "1e308", "-1e308", "1e-320",
                "1000000000000", "-1000000000000", str(2**63), str(2**64), str(10**30), "9" * 400, "9" * 5000,
                "0.5", "0x10", "1_000_000_000_000", "", " ", "1e12", "1e30", "\u0663", "\uff11", "\u00bd", "1 2", "--1",
                "+0", "true", "None"]
#: Text words: empty, control characters, long, unicode, paths outside, devices, option-like.
TEXT_WORDS = ["", " ", "\x00", "\t\n", "a" * 100_000, "\u2660\u2665\u2666\u2663", "\udcff", "\u202e", "../" * 40,
              "/etc/passwd", "/dev/zero", "/dev/null", "/proc/self/environ", "/", ".", "..", "-", "--", "%s%n",
              "{}", "[]", "${HOME}", "~", ",", ",,", "random,", "classic", "none"]
#: Agent specs: known, unknown, budgets out of range, files that are no models, code that is not there.
SPEC_WORDS = ["random", "easy", "normal", "hard", "ppo-classic", "ppo-two-player", "level:easy", "level:strong",
              "level:", "level:impossible", "expert:0", "expert:-1", "expert:4097", "expert:1e3", "expert:nan",
              "expert:" + "9" * 5000, "expert-value:0", "expert-value:99999", "search:3", "ckpt:", "onnx:",
              "ckpt:/dev/zero", "ckpt:/dev/null", "ckpt:/etc/passwd", "onnx:/dev/zero", "onnx:/etc/passwd",
              "ckpt:.", "onnx:.", "no_such_module_xyz:Bot", "missing_file.py:Bot", "ckpt:missing.pt", "human",
              "RANDOM",              " random ", "random\x00"]

JSON_SCALARS = [math.nan, math.inf, -math.inf, -1, 0, 1, 10**12, -10**12, 1e308, -1e308, 2**64, -2**63 - 1, 10**30,
                0.5, "", "x" * 10_000, "\u2660", "\u0000", None, True, False, [], {}, "classic",
                "2C", "QS", "left", "-1", "1e6", "nan"]


def number_words(valid: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[str]:
    """A number as a command-line word: out of range (zero, negative, a billion or more, not finite,
    not a number), else one of ``valid`` (small). Never a mid-sized valid size: it would only make a
    valid command run long, and every option's sizes are drawn from here."""
    hostile = st.one_of(st.sampled_from(NUMBER_WORDS), st.integers(-10**13, 0).map(str),
                        st.integers(10**9, 10**13).map(str),
                        st.floats(allow_nan=True, allow_infinity=True).filter(
                            lambda x: not 0 < x < 1e9).map(repr))
    return hostile if valid is None else st.one_of(hostile, valid)


def small(*values: int) -> st.SearchStrategy[str]:
    return st.sampled_from([str(v) for v in values])


def text_words() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(TEXT_WORDS), st.text(max_size=30).map(_defuse))


def _defuse(text: str) -> str:
    """A generated text never names user code (``MODULE:NAME`` runs that module's code by design)."""
    from agents import is_code_spec

    return "no_such_module_xyz:" + text.replace(":", "_") if is_code_spec(text) else text


def json_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.sampled_from(JSON_SCALARS), st.integers(-10**15, 10**15),
                       st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=8), inner, max_size=4), max_leaves=10)


DEPTH = 100_000


def deep_text(kind: str) -> str:
    if kind == "list":
        return "[" * DEPTH + "]" * DEPTH
    if kind == "map":
        return '{"a":' * DEPTH + "1" + "}" * DEPTH
    if kind == "yaml_block":
        return "".join(" " * i + "- \n" for i in range(2000))
    raise ValueError(kind)


def alias_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


#: Whole-text attacks on a settings file (YAML/JSON).
TEXT_ATTACKS = {
    "deep list": lambda: deep_text("list"),
    "deep map": lambda: deep_text("map"),
    "deep yaml block": lambda: deep_text("yaml_block"),
    "alias bomb": alias_bomb,
    "recursive alias": lambda: "a: &a [*a]\n",
    "nul byte": lambda: "rules: classic\x00\n",
    "latin-1": lambda: "name: caf\xe9\n".encode("latin-1"),
    "utf-16": lambda: "name: x\n".encode("utf-16"),
    "bom": lambda: "\ufeffname: x\n",
    "huge number": lambda: "seed: " + "9" * 5000 + "\n",
    "huge string": lambda: "name: " + "x" * 5_000_000 + "\n",
    "many keys": lambda: "".join(f"k{i}: {i}\n" for i in range(120_000)),
    "empty": lambda: "",
    "comment only": lambda: "# nothing\n",
    "tab indent": lambda: "a:\n\tb: 1\n",
    "duplicate keys": lambda: "seed: 1\nseed: 2\n",
    "scalar": lambda: "42\n",
    "list": lambda: "- 1\n- 2\n",
    "python tag": lambda: "!!python/object/apply:os.system ['true']\n",
    "json nan": lambda: '{"seed": NaN, "rules": Infinity}',
    "binary": lambda: bytes(range(256)) * 4,
}


def set_at(obj: Any, path: tuple, value: Any) -> Any:
    """``obj`` with the value at ``path`` replaced (the root itself for an empty path)."""
    if not path:
        return value
    node = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return obj


def delete_at(obj: Any, path: tuple) -> Any:
    if path:
        node = obj
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return obj


def paths_of(obj: Any, prefix: tuple = (), limit: int = 400) -> list[tuple]:
    found = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            found += paths_of(value, prefix + (key,), limit)
    elif isinstance(obj, list):
        for i, value in enumerate(obj[:4]):
            found += paths_of(value, prefix + (i,), limit)
    return found[:limit]


@st.composite
def edited(draw, base: Any, extra_keys: tuple[str, ...] = ()) -> tuple[Any, list[str]]:
    """``base`` (a JSON-like value) with one to three edits: a value replaced by a hostile one, a key
    deleted, or an unknown key added; and what was done."""
    obj = copy.deepcopy(base)
    done = []
    for _ in range(draw(st.integers(1, 3))):
        paths = paths_of(obj)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["set", "set", "set", "delete", "add"]))
        try:
            if action == "set":
                value = copy.deepcopy(draw(json_values()))  # (a drawn [] or {} is shared: never to be changed)
                obj = set_at(obj, path, value)
                done.append(f"{'.'.join(map(str, path)) or '<root>'}={_short(repr(value), 40)}")
            elif action == "delete" and path:
                obj = delete_at(obj, path)
                done.append(f"del {'.'.join(map(str, path))}")
            else:
                node = obj
                for key in path:
                    node = node[key]
                if isinstance(node, dict):
                    key = draw(st.sampled_from(extra_keys) if extra_keys else st.text(max_size=8))
                    node[key] = copy.deepcopy(draw(json_values()))
                    done.append(f"add {key!r}")
        except (KeyError, IndexError, TypeError):
            pass
    return obj, done


def dump(obj: Any, style: str) -> bytes:
    if style == "json":
        return json.dumps(obj, allow_nan=True, default=str).encode("utf-8", "surrogatepass")
    return yaml.safe_dump(obj, allow_unicode=True, sort_keys=False).encode("utf-8", "surrogatepass")


def settings_file(base: Any, extra_keys: tuple[str, ...] = ()) -> st.SearchStrategy[tuple[str, Any]]:
    """A settings file (YAML or JSON) drawn from ``base``: edited, then perhaps truncated or
    bit-flipped; or a whole-text attack; or a path that is not a readable file."""
    return st.one_of(
        st.tuples(st.just("edited"), edited(base, extra_keys), st.sampled_from(["yaml", "json"]),
                  st.sampled_from(["none", "none", "truncate", "bitflip"]), st.integers(0, 2**32)),
        st.tuples(st.just("same"), st.sampled_from(["yaml", "json"])),
        st.tuples(st.just("attack"), st.sampled_from(sorted(TEXT_ATTACKS))),
        st.tuples(st.just("bytes"), st.binary(max_size=300)),
        st.tuples(st.just("special"), st.sampled_from(SPECIALS)),
    )


#: Paths that are not readable files of ours.
SPECIALS = ["missing", "folder", "empty", "/dev/null", "/dev/zero", "/etc/passwd", "/proc/self/status",
            "outside missing", "dangling link", "link to /dev/zero", "long name"]


def special_path(kind: str, case: Case, name: str) -> str:
    path = case.work / name
    if kind == "missing":
        return name
    if kind == "folder":
        path.mkdir(parents=True, exist_ok=True)
        (path / "inner.txt").write_text("x")
        return name
    if kind == "empty":
        path.write_bytes(b"")
        return name
    if kind == "long name":  # longer than a file name may be (255 bytes)
        return "n" * 300
    if kind == "outside missing":
        return str(Path("..") / "outside" / "nothing" / name)
    if kind == "dangling link":
        path.symlink_to(case.base / "no-such-target")
        return name
    if kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
        return name
    return kind  # an absolute path outside the folder


def mutate_bytes(data: bytes, how: str, seed: int) -> bytes:
    rng = random.Random(seed)
    if how == "truncate" and data:
        return data[:rng.randrange(len(data))]
    if how == "bitflip" and data:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        return bytes(out)
    if how == "append":
        return data + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return data


def write_settings(spec: tuple, base: Any, case: Case, name: str) -> str:
    """Writes the settings file ``spec`` (from :func:`settings_file`) as ``name``; returns its path."""
    kind = spec[0]
    if kind == "special":
        case.note(f"{name}: {spec[1]}")
        return special_path(spec[1], case, name)
    if kind == "edited":
        (obj, done), style, how, seed = spec[1], spec[2], spec[3], spec[4]
        data = mutate_bytes(dump(obj, style), how, seed)
        case.note(f"{name}: {style} with {'; '.join(done) or 'no change'}{'' if how == 'none' else ', ' + how}")
    elif kind == "same":
        data = dump(base, spec[1])
        case.note(f"{name}: as shipped ({spec[1]})")
    elif kind == "attack":
        text = TEXT_ATTACKS[spec[1]]()
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        case.note(f"{name}: {spec[1]}")
    else:
        data = spec[1]
        case.note(f"{name}: {len(data)} random bytes")
    path = case.work / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return name


# ---- the real files the fuzz starts from ------------------------------------------------------

class Corpus:
    """Real files, made once: policies, configs, records, shards, deal sets, units, exports, bombs."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.base = folder.parent / "cases"
        self.base.mkdir()


def _zip_bomb(path: Path, member: str, header: bytes, size: int) -> Path:
    """A zip whose one deflated member is ``header`` then zeros, ``size`` bytes in all."""
    chunk = bytes(1 << 22)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open(zipfile.ZipInfo(member), "w", force_zip64=True) as stream:
            stream.write(header)
            left = size - len(header)
            while left > 0:
                stream.write(chunk[:min(left, len(chunk))])
                left -= len(chunk)
    return path


def _npy_header(shape: tuple[int, ...], dtype: str) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                                  "shape": shape})
    return buffer.getvalue()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from eval.deals import DealSet
    from export import fixtures
    from hearts_app import cli
    from hearts_env.rules import Rules

    folder = tmp_path_factory.mktemp("fuzz-corpus")
    c = Corpus(folder)
    c.small = fixtures.small_policy(folder / "small.pt")
    c.two = fixtures.small_policy(folder / "two.pt", rules=Rules.preset("two_player"))
    c.shipped = ROOT / "agents/policies/ppo_classic.pt"
    c.belief = ROOT / "agents/policies/belief_classic.pt"
    c.onnx_dir = ROOT / "agents/policies/ppo_classic"
    c.rules_files = {p.name: yaml.safe_load(p.read_text()) for p in sorted((ROOT / "configs/rules").glob("*.yaml"))}
    c.presets = {name: Rules.preset(name).to_dict() for name in ("classic", "two_player", "quick")}
    # A training config that trains in a second or two, and a recipe over it: the bases of their fuzz.
    c.config = {"run_name": "tiny", "rules": "classic", "seed": 0, "total_decisions": 256, "num_tables": 8,
                "hidden": [8], "minibatch_size": 64, "update_epochs": 1, "checkpoint_every": 1, "eval_every": 0,
                "eval_deals": 4, "eval_opponents": ["random"],
                "league": {"snapshot_every": 1, "bots": {"easy": 0.2}}, "imitation": {"teacher": None}}
    c.recipe = {"name": "tiny_recipe", "rules": "classic",
                "stages": [{"kind": "ppo", "name": "selfplay", "config": "../tiny.yaml", "budgets": [128, 256]},
                           {"kind": "improve", "name": "improve",
                            "rounds": [{"collections": [{"seed": 1, "hands": 4}], "tables": 4, "temperature": 0.5,
                                        "epochs": 1, "batch_size": 64}]}],
                "evaluation": {"opponents": ["random"], "deals": 4}}
    c.deal_file = {"hands": [["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"]],
                   "hand_number": 0, "scores": [0, 0, 0, 0]}
    here = os.getcwd()
    os.chdir(folder)
    try:
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet), \
                _swap(sys, "stdin", io.StringIO("")):
            DealSet.generate(Rules.preset("classic"), 6, 1).save(folder / "deals.npz")
            assert cli.main(["distill", "collect", str(c.small), "--out", "shards", "--hands", "8", "--tables", "8",
                             "--workers", "1", "--teacher", "rollout"]) == 0
            assert cli.main(["arena", "random", "--vs", "easy", "--deals", "3", "--workers", "1", "--no-progress",
                             "--records", "arena.jsonl", "--out", "results"]) == 0
            assert cli.main(UNITS_ARGV + ["--resume-dir", "units"]) == 0
            assert cli.main(["play", "--opponents", "random", "--seed", "5", "--save", "play.jsonl"]) == 1
            (folder / "tiny.yaml").write_bytes(dump(c.config, "yaml"))
            assert cli.main(["train", "tiny.yaml", "--no-progress", "--runs-dir", "runs"]) == 0
    finally:
        os.chdir(here)
    c.deals = folder / "deals.npz"
    c.shards = sorted((folder / "shards").glob("shard_*.npz"))
    c.records = {"arena": (folder / "arena.jsonl").read_text(), "play": (folder / "play.jsonl").read_text()}
    c.results = json.loads((folder / "results" / "results.json").read_text())
    c.units = folder / "units"
    c.run = folder / "runs" / "tiny"
    golden = json.loads((c.onnx_dir / "golden.json").read_text())
    c.seat_records = [case["record"] for case in golden["cases"][:6] + golden["encoder_cases"][:6]]
    c.manifest = json.loads((c.onnx_dir / "policy.json").read_text())
    c.levels = {"format": "hearts-lab-levels", "format_version": 1, "ladder": "classic",
                "rules": Rules.preset("classic").to_dict(),
                "levels": [{"name": "easy", "description": "the first", "model": "easy/policy.onnx",
                            "manifest": "easy/policy.json",
                            "networks": [{"model": "easy/policy.onnx", "manifest": "easy/policy.json"}]}]}
    # Zip bombs: 2 GiB of zeros in a few MB, as each zip format's member.
    bombs = folder / "bombs"
    bombs.mkdir()
    size = 2 << 30
    MEMORY["after_corpus_mib"] = current_rss_mib()
    c.bombs = {
        "checkpoint": _zip_bomb(bombs / "checkpoint.pt", "archive/data/0", b"", size),
        "npz obs": _zip_bomb(bombs / "obs.npz", "obs.npy", _npy_header((size // 1258, 629), "<f2"), size),
        "npz seeds": _zip_bomb(bombs / "seeds.npz", "seeds.npy", _npy_header((size // 8,), "<u8"), size),
    }
    return c


#: The arena run whose finished units (``--resume-dir``) the fuzz damages and resumes.
UNITS_ARGV = ["arena", "random", "easy", "--deals", "4", "--workers", "1", "--no-progress", "--seed", "3"]


def copy_real(source: Path, case: Case, name: str, how: str, seed: int) -> str:
    data = mutate_bytes(source.read_bytes(), how, seed)
    path = case.work / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    case.note(f"{name}: {source.name}{'' if how == 'none' else f' {how} (seed {seed})'}")
    return name


# ---- checkpoints (ckpt:PATH, the checkpoints commands read) --------------------------------------

CHECKPOINT_META_KEYS = ("rules", "obs_version", "obs_dim", "hidden", "card_scorer", "config", "learner_decisions",
                        "distilled", "kind")


#: A checkpoint that loads: drawn as often as each kind of damage, so that the other arguments are reached.
GOOD_CHECKPOINT = ("real", "small", "none", 0)


def checkpoints() -> st.SearchStrategy[tuple]:
    return st.one_of(
        st.just(GOOD_CHECKPOINT), st.just(GOOD_CHECKPOINT),
        st.tuples(st.just("real"), st.sampled_from(["small", "two", "shipped"]),
                  st.sampled_from(["none", "none", "truncate", "bitflip", "append"]), st.integers(0, 2**32)),
        st.tuples(st.just("meta"), st.sampled_from(CHECKPOINT_META_KEYS), json_values()),
        st.tuples(st.just("meta text"), st.sampled_from(["[" * DEPTH, "", "nan", '{"rules": ' * 2000, "[]", "{}",
                                                         "\udcff"])),
        st.tuples(st.just("tensor"), st.sampled_from(["nan", "inf", "shape", "dtype", "empty", "scalar", "int"])),
        st.tuples(st.just("payload"), st.sampled_from(["list", "no model", "no meta", "wrong format", "pickle code",
                                                       "model not dict", "huge key"])),
        st.tuples(st.just("bomb")),
        st.tuples(st.just("bytes"), st.binary(max_size=200)),
        st.tuples(st.just("special"), st.sampled_from(SPECIALS)),
    )


def write_checkpoint(spec: tuple, corpus: Corpus, case: Case, name: str = "policy.pt") -> str:
    import torch

    kind = spec[0]
    path = case.work / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "real":
        source = {"small": corpus.small, "two": corpus.two, "shipped": corpus.shipped}[spec[1]]
        return copy_real(source, case, name, spec[2], spec[3])
    if kind == "special":
        case.note(f"{name}: {spec[1]}")
        return special_path(spec[1], case, name)
    if kind == "bomb":
        shutil.copy(corpus.bombs["checkpoint"], path)
        case.note(f"{name}: zip bomb")
        return name
    if kind == "bytes":
        path.write_bytes(spec[1])
        case.note(f"{name}: {len(spec[1])} random bytes")
        return name
    payload = torch.load(corpus.small, weights_only=True)
    if kind == "meta":
        meta = json.loads(payload["meta"])
        meta[spec[1]] = spec[2]
        payload["meta"] = json.dumps(meta, allow_nan=True, default=str)
        case.note(f"{name}: meta {spec[1]}={_short(repr(spec[2]), 50)}")
    elif kind == "meta text":
        payload["meta"] = spec[1]
        case.note(f"{name}: meta text {_short(spec[1], 30)}")
    elif kind == "tensor":
        key = sorted(payload["model"])[0]
        tensor = payload["model"][key]
        payload["model"][key] = {
            "nan": torch.full_like(tensor, math.nan), "inf": torch.full_like(tensor, math.inf),
            "shape": torch.zeros(3, 3), "dtype": tensor.to(torch.float64), "empty": torch.zeros(0),
            "scalar": torch.tensor(1.0), "int": tensor.to(torch.int64)}[spec[1]]
        case.note(f"{name}: weight {key} {spec[1]}")
    else:
        what = spec[1]
        if what == "list":
            payload = [1, 2, 3]
        elif what == "no model":
            payload.pop("model")
        elif what == "no meta":
            payload.pop("meta")
        elif what == "wrong format":
            payload["format"] = "hearts-lab-checkpoint-999"
        elif what == "model not dict":
            payload["model"] = "weights"
        elif what == "huge key":
            payload["model"]["x" * 100_000] = torch.zeros(1)
        if what == "pickle code":
            path.write_bytes(pickle.dumps(_Marker(str(case.work / "code-ran"))))
        else:
            torch.save(payload, path)
        case.note(f"{name}: payload {what}")
        return name
    torch.save(payload, path)
    return name


class _Marker:
    """Pickled, it creates a file when unpickled: a loader must never run it."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


# ---- specs (agents named on the command line) -------------------------------------------------

def specs(corpus: Corpus) -> st.SearchStrategy[tuple]:
    """An agent spec: a word, a checkpoint file (``ckpt:``), an exported policy (``onnx:``) or text."""
    return st.one_of(
        st.tuples(st.just("word"), st.sampled_from(SPEC_WORDS)),
        st.tuples(st.just("ckpt"), checkpoints()),
        st.tuples(st.just("onnx"), onnx_files(corpus)),
        st.tuples(st.just("text"), text_words()),
    )


def write_spec(spec: tuple, corpus: Corpus, case: Case, index: int = 0) -> str:
    if spec[0] == "word":
        return spec[1]
    if spec[0] == "text":
        return spec[1]
    if spec[0] == "ckpt":
        return "ckpt:" + write_checkpoint(spec[1], corpus, case, f"spec{index}.pt")
    return "onnx:" + write_onnx(spec[1], corpus, case, f"onnx{index}")


def onnx_files(corpus: Corpus) -> st.SearchStrategy[tuple]:
    return st.one_of(
        st.tuples(st.just("model"), st.sampled_from(["none", "truncate", "bitflip", "append"]), st.integers(0, 2**32),
                  st.booleans()),
        st.tuples(st.just("manifest"), settings_file(corpus.manifest, ("format", "model"))),
        st.tuples(st.just("manifest edit"), st.sampled_from(["format", "format_version", "observation", "model",
                                                             "rules", "rule_space"]), json_values()),
        st.tuples(st.just("no manifest")),
        st.tuples(st.just("special"), st.sampled_from(SPECIALS)),
    )


def write_onnx(spec: tuple, corpus: Corpus, case: Case, folder: str) -> str:
    """An exported policy's folder (policy.onnx and policy.json) from ``spec``; returns the model's path."""
    import hashlib

    out = case.work / folder
    out.mkdir(parents=True, exist_ok=True)
    model = out / "policy.onnx"
    manifest = copy.deepcopy(corpus.manifest)
    kind = spec[0]
    data = (corpus.onnx_dir / "policy.onnx").read_bytes()
    if kind == "special":
        case.note(f"{folder}/policy.onnx: {spec[1]}")
        (out / "policy.json").write_text(json.dumps(manifest))
        return special_path(spec[1], case, f"{folder}/policy.onnx")
    if kind == "model":
        data = mutate_bytes(data, spec[1], spec[2])
        if spec[3]:  # the manifest follows the damaged model, so the model itself is read
            manifest["model"]["sha256"] = hashlib.sha256(data).hexdigest()
        case.note(f"{folder}/policy.onnx {spec[1]} (seed {spec[2]}){', manifest updated' if spec[3] else ''}")
    model.write_bytes(data)
    if kind == "manifest":
        write_settings(spec[1], manifest, case, f"{folder}/policy.json")
    elif kind == "manifest edit":
        manifest[spec[1]] = spec[2]
        (out / "policy.json").write_text(json.dumps(manifest, allow_nan=True, default=str))
        case.note(f"{folder}/policy.json: {spec[1]}={_short(repr(spec[2]), 40)}")
    elif kind != "no manifest":
        (out / "policy.json").write_text(json.dumps(manifest))
    return f"{folder}/policy.onnx"


# ---- .npz files: deal sets, shards, arena units -----------------------------------------------

HOSTILE_ARRAYS = {
    "nan": lambda a: np.full(a.shape, np.nan),
    "negative": lambda a: -np.ones(a.shape, np.int64),
    "huge": lambda a: np.full(a.shape, 2**62, np.int64),
    "scalar": lambda a: np.array(7),
    "empty": lambda a: np.zeros((0,) + a.shape[1:], a.dtype),
    "text": lambda a: np.array(["x" * 10] * max(1, a.size)),
    "bool": lambda a: np.ones(a.shape, bool),
    "wider": lambda a: np.zeros((a.shape[0] if a.ndim else 1, 1000), a.dtype),
    "3-d": lambda a: np.zeros((2, 2, 2), a.dtype),
    "objects": lambda a: np.array([{"x": 1}, None], dtype=object),
    "fortran": lambda a: np.asfortranarray(np.zeros((3, 4), a.dtype)),
    "json deep": lambda a: np.array("[" * DEPTH),
    "json junk": lambda a: np.array("{not json"),
}


def npz_files(bomb: str | None) -> st.SearchStrategy[tuple]:
    options = [
        st.just(("real", "none", 0)), st.just(("real", "none", 0)),
        st.tuples(st.just("real"), st.sampled_from(["none", "truncate", "bitflip", "append"]), st.integers(0, 2**32)),
        st.tuples(st.just("array"), st.integers(0, 20), st.sampled_from(sorted(HOSTILE_ARRAYS))),
        st.tuples(st.just("drop"), st.integers(0, 20)),
        st.tuples(st.just("compressed")),
        st.tuples(st.just("bytes"), st.binary(max_size=200)),
        st.tuples(st.just("special"), st.sampled_from(SPECIALS)),
    ]
    if bomb:
        options.append(st.tuples(st.just("bomb"), st.just(bomb)))
    return st.one_of(*options)


def write_npz(spec: tuple, source: Path, corpus: Corpus, case: Case, name: str) -> str:
    kind = spec[0]
    path = case.work / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "real":
        return copy_real(source, case, name, spec[1], spec[2])
    if kind == "special":
        case.note(f"{name}: {spec[1]}")
        return special_path(spec[1], case, name)
    if kind == "bytes":
        path.write_bytes(spec[1])
        case.note(f"{name}: {len(spec[1])} random bytes")
        return name
    if kind == "bomb":
        shutil.copy(corpus.bombs[spec[1]], path)
        case.note(f"{name}: zip bomb ({spec[1]})")
        return name
    with np.load(source, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    keys = sorted(arrays)
    if kind == "array":
        key = keys[spec[1] % len(keys)]
        arrays[key] = HOSTILE_ARRAYS[spec[2]](arrays[key])
        case.note(f"{name}: {key} {spec[2]}")
    elif kind == "drop":
        key = keys[spec[1] % len(keys)]
        del arrays[key]
        case.note(f"{name}: without {key}")
    with open(path, "wb") as stream:
        (np.savez_compressed if kind == "compressed" else np.savez)(stream, **arrays)
    if kind == "compressed":
        case.note(f"{name}: compressed")
    return name


# ---- game records -----------------------------------------------------------------------------

def records() -> st.SearchStrategy[tuple]:
    return st.one_of(
        st.tuples(st.just("line edit"), st.sampled_from(["arena", "play"]), st.integers(0, 3), st.data()),
        st.tuples(st.just("real"), st.sampled_from(["arena", "play"]),
                  st.sampled_from(["none", "truncate", "bitflip", "append"]), st.integers(0, 2**32)),
        st.tuples(st.just("lines"), st.lists(st.sampled_from(
            ['{"type": "header"}', '{"type": "game"}', "[" * DEPTH, "1" * 5000, "null", "[]", '"x"', "NaN",
             '{"type": "header", "format": "play", "rules": {"preset": "classic"}}', "{", "\x00"]), max_size=4)),
        st.tuples(st.just("attack"), st.sampled_from(["latin-1", "binary", "utf-16", "huge string"])),
        st.tuples(st.just("special"), st.sampled_from(SPECIALS)),
    )


def write_record(spec: tuple, corpus: Corpus, case: Case, name: str = "game.jsonl") -> str:
    kind = spec[0]
    path = case.work / name
    if kind == "special":
        case.note(f"{name}: {spec[1]}")
        return special_path(spec[1], case, name)
    if kind == "real":
        data = mutate_bytes(corpus.records[spec[1]].encode(), spec[2], spec[3])
        case.note(f"{name}: {spec[1]} record {spec[2]} (seed {spec[3]})")
    elif kind == "lines":
        data = "\n".join(spec[1]).encode("utf-8", "surrogatepass")
        case.note(f"{name}: lines {[_short(line, 20) for line in spec[1]]}")
    elif kind == "attack":
        text = TEXT_ATTACKS[spec[1]]()
        data = text if isinstance(text, bytes) else text.encode()
        case.note(f"{name}: {spec[1]}")
    else:
        lines = [json.loads(line) for line in corpus.records[spec[1]].splitlines() if line.strip()]
        index = spec[2] % len(lines)
        lines[index], done = spec[3].draw(edited(lines[index], ("type", "format", "hands", "seed", "rules")))
        data = "\n".join(json.dumps(line, allow_nan=True, default=str) for line in lines).encode("utf-8",
                                                                                               "surrogatepass")
        case.note(f"{name}: {spec[1]} record, line {index + 1}: {'; '.join(done)}")
    path.write_bytes(data)
    return name


# ---- common argument pieces -------------------------------------------------------------------

def rules_args() -> st.SearchStrategy[tuple]:
    """``--rules`` (a preset, a word, or a file) and ``--rule KEY=VALUE`` items, each possibly absent."""
    rule_keys = st.sampled_from(["moon", "target_score", "num_players", "pass_cycle", "pass_count", "deck",
                                 "dead_cards", "opening_lead", "moon_points", "jack_of_diamonds_points",
                                 "trump_suit", "name", "unknown", "a.b", "", " ", "moon.x"])
    rule_values = st.one_of(st.sampled_from(NUMBER_WORDS + ["[1, 2]", "{a: 1}", "off", "subtract_from_self",
                                                            "[left]", "*a", "&a x", "[" * 1000, "!!binary AAAA"]),
                            text_words())
    return st.tuples(
        st.one_of(st.none(), st.sampled_from(["classic", "quick", "long", "two_player", "CLASSIC", ""]),
                  st.tuples(st.just("file"), st.data())),
        st.lists(st.one_of(st.tuples(rule_keys, rule_values).map(lambda kv: f"{kv[0]}={kv[1]}"),
                           st.sampled_from(["moon=off", "target_score=50", "noequals", "=1", "moon="])),
                 max_size=3),
    )


def write_rules_args(spec: tuple, corpus: Corpus, case: Case) -> list[str]:
    rules, items = spec
    argv = []
    if isinstance(rules, str):
        argv += ["--rules", rules]
    elif rules is not None:
        base = rules[1].draw(st.sampled_from(list(corpus.rules_files.values()) + list(corpus.presets.values())))
        argv += ["--rules", write_settings(rules[1].draw(settings_file(base, ("preset", "moon", "unknown"))),
                                           base, case, "rules.yaml")]
    for item in items:
        argv += ["--rule", item]
    return argv


def out_path(kind: str, case: Case, name: str) -> str:
    """Where a command is told to write: a fresh name, an existing file or folder, a folder that is
    not empty, a path under a file, an outside folder, a device, or a folder that cannot be made."""
    if kind == "fresh":
        return name
    if kind == "nested":
        return f"new/deeper/{name}"
    if kind == "existing file":
        (case.work / name).write_text("keep me\n")
        return name
    if kind == "existing folder":
        (case.work / name).mkdir()
        (case.work / name / "keep.txt").write_text("keep me\n")
        return name
    if kind == "under a file":
        (case.work / "afile").write_text("x")
        return f"afile/{name}"
    if kind == "outside":
        return str(case.outside / name)
    if kind == "root":
        return "/proc/hearts-fuzz/" + name
    if kind == "empty":
        return ""
    if kind == "long name":
        return "o" * 300 + name
    return name


#: (Never a device such as /dev/null: a writer that writes a temporary file and renames it over the
#: target would replace the device, as root.)
OUT_KINDS = ["fresh", "fresh", "nested", "existing file", "existing folder", "under a file", "outside", "root",
             "empty", "long name"]


def optional(flag: str, values: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.one_of(st.just([]), values.map(lambda v: [flag, v]))


def flags(*names: str) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(names), max_size=len(names), unique=True)


# ---- the entry points -------------------------------------------------------------------------

BATCH_WORDS = number_words(st.sampled_from(["1", "1,8", "4"])) | st.sampled_from(
    [",", "1,,2", "1,-1", "1,1000000000000", "8,1e3", "1," * 500])


def _bench_args(corpus: Corpus):
    return st.tuples(
        rules_args(),
        optional("--batch-sizes", BATCH_WORDS),
        optional("--seconds", number_words(st.sampled_from(["0.01", "0.02", "1e-9"]))),
        st.one_of(st.just(["--agents", ""]), st.lists(specs(corpus), max_size=2).map(lambda s: ("specs", s))),
        flags("--no-open-spiel", "--no-envs", "--json"),
    )


def _bench_argv(example, corpus, case, command: str) -> list[str]:
    rules, batch, seconds, agents, extra = example
    argv = [command, *write_rules_args(rules, corpus, case), *batch, *seconds, *extra]
    if not seconds:  # the default (seconds per measurement) is for people, not for a fuzz
        argv += ["--seconds", "0.01"]
    if isinstance(agents, tuple):
        argv += ["--agents", ",".join(write_spec(s, corpus, case, i) for i, s in enumerate(agents[1]))]
    else:
        argv += agents
    return argv


def test_bench(corpus):
    def prepare(example, case):
        argv = _bench_argv(example, corpus, case, "bench")
        if "--no-open-spiel" not in argv:
            argv.append("--no-open-spiel")  # (OpenSpiel is not installed here; kept out for the same work everywhere)
        return cli_call(argv), shown_argv(argv)

    fuzz("bench", _bench_args(corpus), prepare, corpus.base)


def test_demo(corpus):
    def prepare(example, case):
        bench, seed, no_bench = example
        argv = _bench_argv(bench, corpus, case, "demo") + seed + no_bench
        return cli_call(argv), shown_argv(argv)

    fuzz("demo", st.tuples(_bench_args(corpus), optional("--seed", number_words(small(0, 7))),
                           st.sampled_from([["--no-bench"], ["--no-bench"], []])), prepare, corpus.base)


def test_arena(corpus):
    example = st.tuples(
        st.lists(specs(corpus), max_size=3), optional("--vs", specs(corpus).map(lambda s: ("spec", s))),
        optional("--format", st.sampled_from(["head2head", "table", "roundrobin", "swiss", ""])),
        rules_args(),
        st.one_of(st.just("2"), number_words(small(1, 3))).map(lambda v: ["--deals", v]),
        optional("--seed", number_words(small(0, 1))),
        st.one_of(st.just([]), st.tuples(st.just("--deal-set"), npz_files("npz seeds"))),
        optional("--save-deal-set", st.sampled_from(OUT_KINDS)),
        optional("--episode", st.sampled_from(["hand", "game", "Game"])),
        optional("--seating", st.sampled_from(["rotate", "permute", "shuffle"])),
        optional("--workers", number_words(small(1, 2))),
        st.one_of(st.just([]), st.tuples(st.just("--resume-dir"), st.sampled_from(OUT_KINDS + ["units"] * 4),
                                         npz_files(None), st.integers(0, 20), st.booleans())),
        optional("--half-width", number_words(small(1))),
        optional("--out", st.sampled_from(OUT_KINDS)),
        optional("--records", st.sampled_from(OUT_KINDS)),
        flags("--json"),
    )

    def prepare(ex, case):
        (agents, vs, fmt, rules, deals, seed, deal_set, save_deal_set, episode, seating, workers, resume, half,
         out, records_, json_flag) = ex
        argv = ["arena", *[write_spec(s, corpus, case, i) for i, s in enumerate(agents)]]
        if vs:
            argv += ["--vs", write_spec(vs[1][1], corpus, case, 9)]
        argv += fmt + write_rules_args(rules, corpus, case) + deals + seed + episode + seating + workers + half
        if deal_set:
            argv += ["--deal-set", write_npz(deal_set[1], corpus.deals, corpus, case, "deals.npz")]
        if save_deal_set:
            argv += ["--save-deal-set", out_path(save_deal_set[1], case, "saved.npz")]
        if resume:
            _, where, damage, which, same = resume
            if where == "units":
                if same:  # the run that wrote them, so the units are loaded (and damaged ones read)
                    argv = list(UNITS_ARGV)
                shutil.copytree(corpus.units, case.work / "units")
                units = sorted((case.work / "units").glob("unit_*.npz"))
                if units:
                    target = units[which % len(units)]
                    source = case.base / "unit-source.npz"
                    shutil.copy(target, source)
                    target.unlink()
                    write_npz(damage, source, corpus, case, str(target.relative_to(case.work)))
                    source.unlink()
                argv += ["--resume-dir", "units"]
            else:
                argv += ["--resume-dir", out_path(where, case, "units")]
        if out:
            argv += ["--out", out_path(out[1], case, "results")]
        if records_:
            argv += ["--records", out_path(records_[1], case, "records.jsonl")]
        argv += json_flag + ["--no-progress"]
        return cli_call(argv), shown_argv(argv)

    fuzz("arena", example, prepare, corpus.base)


CONFIG_KEYS = ("run_name", "rules", "rule_space", "rule_sets_per_round", "seed", "total_decisions", "num_tables",
               "hidden", "learning_rate", "anneal_lr", "gamma", "gae_lambda", "update_epochs", "minibatch_size",
               "clip_coef", "ent_coef", "vf_coef", "max_grad_norm", "target_kl", "reward", "league.current",
               "league.snapshots", "league.bots", "league.snapshot_every", "league.max_snapshots",
               "league.min_learners", "imitation.teacher", "imitation.decisions", "imitation.epochs",
               "imitation.batch_size", "imitation.learning_rate", "imitation.held_out_tables", "init_from",
               "eval_every", "eval_deals", "eval_opponents", "checkpoint_every", "device", "torch_threads", "nope")


#: The tiny config's sizes as overrides, ahead of the fuzzed ones: a config file that sets something
#: else (a valid one) would otherwise train for hours with the defaults, by design.
TINY_OVERRIDES = ["total_decisions=256", "num_tables=8", "hidden=[8]", "minibatch_size=64", "update_epochs=1",
                  "eval_every=0", "imitation.teacher=null"]


def _sizes_not_set(config: Any) -> list[str]:
    """The :data:`TINY_OVERRIDES` of the keys ``config`` (an edited tiny config; None: any other file)
    does not set: left to their defaults, they would make a real run."""
    missing = []
    for item in TINY_OVERRIDES:
        node = config
        for part in item.partition("=")[0].split("."):
            node = node.get(part, _Unset) if isinstance(node, dict) else _Unset
        if node is _Unset:
            missing.append(item)
    return missing


class _Unset:
    """A key a config does not set."""


def overrides() -> st.SearchStrategy[list[str]]:
    values = st.one_of(st.sampled_from(NUMBER_WORDS + ["[1, 2]", "[]", "{}", "[0]", "[100000000]", "[8, 8]",
                                                       "{easy: 1e308}", "{hard: -1}", "cuda", "meta", "../x",
                                                       "/etc", "[" * 1000, "*a"]), text_words())
    return st.lists(st.tuples(st.sampled_from(CONFIG_KEYS), values).map(lambda kv: f"{kv[0]}={kv[1]}"), max_size=3)


def test_train(corpus):
    example = st.tuples(
        st.one_of(st.just("tiny"), settings_file(corpus.config, ("unknown", "league", "imitation")), st.none()),
        overrides(),
        flags("--resume", "--extend"),
        optional("--device", st.sampled_from(["cpu", "auto", "cuda", "cuda:9", "meta", "mps", "", "xla", "cpu:0"])),
        optional("--runs-dir", st.sampled_from(OUT_KINDS)),
        started_runs(corpus),
    )

    def prepare(ex, case):
        config, items, resume, device, runs_dir, started = ex
        (case.work / "tiny.yaml").write_bytes(dump(corpus.config, "yaml"))
        argv = ["train"]
        if config == "tiny":
            argv.append("tiny.yaml")
        elif config is not None:
            argv.append(write_settings(config, corpus.config, case, "config.yaml"))
            argv += _sizes_not_set(config[1][0] if config[0] == "edited" else None)
        argv += items + resume + device
        if runs_dir:
            argv += ["--runs-dir", out_path(runs_dir[1], case, "runs")]
        elif started is not None:  # a run of the tiny config, started (and damaged) in runs/
            _started_run(started, case, corpus)
        return cli_call(argv + ["--no-progress"]), shown_argv(argv)

    fuzz("train", example, prepare, corpus.base)


RUN_META_KEYS = ("rules", "config", "iteration", "learner_decisions", "all_decisions", "seconds", "imitated",
                 "snapshots", "obs_dim", "hidden")


def started_runs(corpus: Corpus) -> st.SearchStrategy:
    """A started run of the tiny config (for --resume), as it is or with one file damaged."""
    return st.one_of(
        st.none(), st.just(("as is",)),
        st.tuples(st.just("latest"), st.sampled_from(["truncate", "bitflip", "append"]), st.integers(0, 2**32)),
        st.tuples(st.just("latest meta"), st.sampled_from(RUN_META_KEYS), json_values()),
        st.tuples(st.just("summary"), settings_file(json.loads((corpus.run / "summary.json").read_text()))),
        st.tuples(st.just("no snapshots")),
    )


def _started_run(spec: tuple, case: Case, corpus: Corpus) -> None:
    """``runs/tiny``: the corpus's started run of the tiny config, damaged as ``spec`` says."""
    import torch

    run = case.work / "runs" / "tiny"
    shutil.copytree(corpus.run, run)
    latest = "runs/tiny/checkpoints/latest.pt"
    if spec[0] == "latest":
        copy_real(corpus.run / "checkpoints" / "latest.pt", case, latest, spec[1], spec[2])
    elif spec[0] == "latest meta":
        payload = torch.load(run / "checkpoints" / "latest.pt", weights_only=True)
        meta = json.loads(payload["meta"])
        meta[spec[1]] = spec[2]
        payload["meta"] = json.dumps(meta, allow_nan=True, default=str)
        torch.save(payload, run / "checkpoints" / "latest.pt")
        case.note(f"{latest}: meta {spec[1]}={_short(repr(spec[2]), 50)}")
    elif spec[0] == "summary":
        (run / "summary.json").unlink()
        write_settings(spec[1], {}, case, "runs/tiny/summary.json")
    elif spec[0] == "no snapshots":
        shutil.rmtree(run / "snapshots")
        case.note("runs/tiny: snapshots removed")
    else:
        case.note("runs/tiny: as trained")


def test_recipe(corpus):
    example = st.tuples(
        st.one_of(st.just("tiny"), settings_file(corpus.recipe, ("stages", "start", "unknown"))),
        optional("--runs-dir", st.sampled_from(OUT_KINDS)),
        optional("--workers", number_words(small(1))),
    )

    def prepare(ex, case):
        recipe, runs_dir, workers = ex
        (case.work / "tiny.yaml").write_bytes(dump(corpus.config, "yaml"))
        (case.work / "recipes").mkdir()
        if recipe == "tiny":
            (case.work / "recipes" / "tiny.yaml").write_bytes(dump(corpus.recipe, "yaml"))
            path = "recipes/tiny.yaml"
        else:
            if recipe[0] == "edited":  # an evaluation left to its defaults plays 2,000 deals a step, by design
                (obj, done), *rest = recipe[1:]
                recipe = ("edited", (_small_evaluation(copy.deepcopy(obj)), done), *rest)
            path = write_settings(recipe, corpus.recipe, case, "recipes/recipe.yaml")
        argv = ["recipe", path] + workers
        if runs_dir:
            argv += ["--runs-dir", out_path(runs_dir[1], case, "runs")]
        return cli_call(argv + ["--no-progress"]), shown_argv(argv)

    fuzz("recipe", example, prepare, corpus.base)


def _small_evaluation(recipe: Any) -> Any:
    """``recipe`` (an edited tiny recipe) with the evaluation's deals and opponents set where the edits
    removed them: their defaults make every step's evaluation a real one."""
    if isinstance(recipe, dict):
        evaluation = recipe.setdefault("evaluation", {})
        if isinstance(evaluation, dict):
            evaluation.setdefault("deals", 4)
            evaluation.setdefault("opponents", ["random"])
    return recipe


def test_distill_collect(corpus):
    example = st.tuples(
        checkpoints(),
        st.one_of(st.just("fresh"), st.sampled_from(OUT_KINDS)),
        st.one_of(st.just("4"), number_words(small(2, 4))).map(lambda v: ["--hands", v]),
        st.one_of(st.just(["--workers", "1"]), optional("--workers", number_words(small(1, 2)))),
        st.one_of(st.just(["--tables", "4"]), optional("--tables", number_words(small(2, 4)))),
        optional("--teacher", st.sampled_from(["search", "expert", "expert-value", "rollout", "rollout", "oracle"])),
        flags("--no-pass-labels", "--no-card-labels", "--pass-labels"),
        st.one_of(st.just(["--determinizations", "2"]), optional("--determinizations", number_words(small(1, 2)))),
        optional("--opponent", st.one_of(st.sampled_from(["hard,easy", "random", ",", "hard,,easy", "expert",
                                                          "ppo-two-player"]), text_words())),
        optional("--seed", number_words(small(1))),
    )

    def prepare(ex, case):
        student, out, hands, workers, tables, teacher, labels, determinizations, opponent, seed = ex
        argv = ["distill", "collect", write_checkpoint(student, corpus, case, "student.pt"), "--out",
                out_path(out, case, "shards"), *hands, *workers, *tables, *teacher, *labels, *determinizations,
                *opponent, *seed]
        return cli_call(argv), shown_argv(argv)

    fuzz("distill collect", example, prepare, corpus.base)


def test_distill_fit(corpus):
    # Half the examples fuzz the files alone, with arguments that pass, so that the shards are read.
    example = st.tuples(
        checkpoints(),
        st.one_of(st.tuples(st.just("shards"), st.lists(npz_files("npz obs"), min_size=1, max_size=3)),
                  st.tuples(st.just("place"), st.sampled_from(SPECIALS + ["empty folder"]))),
        st.one_of(st.just("fresh"), st.sampled_from(OUT_KINDS)),
        st.one_of(st.just((["--epochs", "1"],)), _fit_options()),
    ).map(lambda t: (*t[:3], *t[3]))

    def prepare(ex, case):
        start, data, out, *rest = ex
        argv = ["distill", "fit", write_checkpoint(start, corpus, case, "start.pt")]
        if data[0] == "shards":
            (case.work / "data").mkdir()
            for i, shard in enumerate(data[1]):
                source = corpus.shards[i % len(corpus.shards)]
                write_npz(shard, source, corpus, case, f"data/shard_1_{i:04d}.npz")
            argv += ["--data", "data"]
        elif data[1] == "empty folder":
            (case.work / "data").mkdir()
            argv += ["--data", "data"]
        else:
            argv += ["--data", special_path(data[1], case, "data")]
        argv += ["--out", out_path(out, case, "fitted.pt")]
        for item in rest:
            argv += item
        return cli_call(argv), shown_argv(argv)

    fuzz("distill fit", example, prepare, corpus.base)


def _fit_options() -> st.SearchStrategy[tuple]:
    return st.tuples(
        st.one_of(st.just(["--epochs", "1"]), optional("--epochs", number_words(small(1, 2)))),
        optional("--temperature", number_words(small(1))),
        optional("--margin", number_words(small(0, 2))),
        optional("--loss", st.sampled_from(["imitation", "regression", "improvement", "hinge"])),
        optional("--learning-rate", number_words(st.sampled_from(["0.001"]))),
        optional("--batch-size", number_words(small(16, 64))),
        st.one_of(st.just([]), st.lists(number_words(small(8, 16, 32)), min_size=1, max_size=3).map(
            lambda ws: ["--hidden", *ws])),
        optional("--card-scorer", number_words(small(4, 8))),
        optional("--shards-in-memory", number_words(small(1, 2))),
        optional("--seed", number_words(small(0))),
    )


def _model_fit_args(players: st.SearchStrategy[tuple]):
    return st.tuples(
        st.sampled_from(OUT_KINDS),
        st.one_of(st.just("8"), number_words(small(4, 8))).map(lambda v: ["--hands", v]),
        st.one_of(st.just(["--workers", "1"]), optional("--workers", number_words(small(1, 2)))),
        st.one_of(st.just(["--hidden", "8"]), st.lists(number_words(small(4, 8)), min_size=1, max_size=3).map(
            lambda ws: ["--hidden", *ws])),
        st.one_of(st.just(["--epochs", "1"]), optional("--epochs", number_words(small(1)))),
        optional("--seed", number_words(small(1))),
        players,
    )


def _player(flag: str, words: list[str]) -> st.SearchStrategy:
    """``[]``, ``[flag, word]`` or ``(flag, checkpoint)`` (a ``ckpt:`` file as the player)."""
    return st.one_of(optional(flag, st.one_of(st.sampled_from(words), text_words())),
                     st.tuples(st.just(flag), checkpoints()))


def _model_fit_prepare(command: str, corpus: Corpus):
    def prepare(ex, case):
        out, *rest, players = ex
        argv = [command, out_path(out, case, f"{command}.pt")]
        for item in rest:
            argv += item
        for i, item in enumerate(players):
            if isinstance(item, tuple):
                argv += [item[0], "ckpt:" + write_checkpoint(item[1], corpus, case, f"player{i}.pt")]
            else:
                argv += item
        return cli_call(argv), shown_argv(argv)
    return prepare


PLAYER_WORDS = ["hard", "random", "ppo-classic", "expert", "ppo-two-player", "hard,easy", ",", "level:easy",
                "hard,ppo-classic,random", "easy,,easy"]


def test_belief(corpus):
    players = st.tuples(_player("--opponent", PLAYER_WORDS), _player("--viewer", PLAYER_WORDS))
    fuzz("belief", _model_fit_args(players), _model_fit_prepare("belief", corpus), corpus.base)


def test_value(corpus):
    players = st.tuples(_player("--players", PLAYER_WORDS))
    fuzz("value", _model_fit_args(players), _model_fit_prepare("value", corpus), corpus.base)


def test_promote(corpus, monkeypatch):
    # The promotion rule plays for minutes by design: its arena is replaced by a verdict, so what is
    # fuzzed is everything before it (arguments, rules, the candidate's file) and the writing after.
    from eval import promotion

    def judge(candidate, baseline, rules, checks, **_):
        import dataclasses

        points = {"mean": 5.0, "low": 4.9, "high": 5.1}
        rows = [{**dataclasses.asdict(check), "candidate": points, "baseline": points,
                 "difference": {"mean": 0.0, "low": -0.1, "high": 0.1}, "passed": True} for check in checks]
        return {"checks": rows, "promoted": True}

    monkeypatch.setattr(promotion, "judge", judge)
    example = st.tuples(specs(corpus), optional("--baseline", specs(corpus).map(lambda s: ("spec", s))), rules_args(),
                        optional("--workers", number_words(small(1, 2))),
                        optional("--out", st.sampled_from(OUT_KINDS)),
                        flags("--json"))

    def prepare(ex, case):
        candidate, baseline, rules, workers, out, json_flag = ex
        argv = ["promote", write_spec(candidate, corpus, case, 0)]
        if baseline:
            argv += ["--baseline", write_spec(baseline[1][1], corpus, case, 1)]
        argv += write_rules_args(rules, corpus, case) + workers + json_flag
        if out:
            argv += ["--out", out_path(out[1], case, "table.md")]
        return cli_call(argv + ["--no-progress"]), shown_argv(argv)

    fuzz("promote", example, prepare, corpus.base)


def test_export(corpus):
    example = st.one_of(
        st.tuples(st.just("checkpoint"), st.one_of(st.none(), checkpoints()),
                  optional("--out", st.sampled_from(OUT_KINDS)),
                  optional("--golden", number_words(small(0, 2))),
                  st.one_of(st.just([]), st.tuples(st.just("--arena-results"), settings_file(corpus.results))),
                  flags("--measure", "--panel")),
        st.tuples(st.just("ladder"), st.sampled_from(["classic", "two_player", "expert", ""]),
                  st.sampled_from(OUT_KINDS[1:] + ["none"]),
                  flags("--measure", "--panel"), number_words(small(1)).map(lambda v: ["--deals", v]),
                  number_words(small(1)).map(lambda v: ["--games", v]), optional("--workers", number_words()),
                  optional("--seed", number_words()), st.booleans()),
        st.tuples(st.just("web"), st.sampled_from(OUT_KINDS), st.lists(levels_dirs(corpus), max_size=2),
                  st.booleans()),
    )

    def prepare(ex, case):
        if ex[0] == "checkpoint":
            _, checkpoint, out, golden, results, extra = ex
            argv = ["export"]
            if checkpoint is not None:
                argv.append(write_checkpoint(checkpoint, corpus, case, "policy.pt"))
            if out:
                argv += ["--out", out_path(out[1], case, "exported")]
            argv += golden + extra
            if results:
                argv += ["--arena-results", write_settings(results[1], corpus.results, case, "results.json")]
        elif ex[0] == "ladder":
            _, name, out, extra, *numbers, with_checkpoint = ex
            argv = ["export", "--ladder", name]
            if out != "none":
                argv += ["--out", out_path(out, case, "levels")]
            argv += extra
            for item in numbers:
                argv += item
            if with_checkpoint:
                argv.append(write_checkpoint(("real", "small", "none", 0), corpus, case))
        else:
            _, out, levels, with_out = ex
            if not levels and out in ("fresh", "nested", "outside", "long name"):
                # (the default build exports both shipped ladders first, about 30 s by design: it is
                # fuzzed with the folders it must refuse before that)
                out = "existing folder"
            argv = ["export", "--web", out_path(out, case, "site")]
            for i, level in enumerate(levels):
                argv += ["--levels", write_levels(level, corpus, case, f"ladder{i}")]
            if with_out:
                argv += ["--out", "elsewhere"]
        return cli_call(argv), shown_argv(argv)

    fuzz("export", example, prepare, corpus.base)


def levels_dirs(corpus: Corpus) -> st.SearchStrategy[tuple]:
    return st.one_of(
        st.tuples(st.just("levels"), settings_file(corpus.levels, ("levels", "format"))),
        st.tuples(st.just("entry"), st.sampled_from(["name", "model", "manifest", "networks", "description"]),
                  st.one_of(json_values(), st.sampled_from(["../outside/x.onnx", "/etc/passwd", "easy/../../x",
                                                            "easy/policy.onnx", "Easy Level", "", "."]))),
        st.tuples(st.just("manifest"), onnx_files(corpus)),
        st.tuples(st.just("special"), st.sampled_from(SPECIALS)),
    )


def write_levels(spec: tuple, corpus: Corpus, case: Case, folder: str) -> str:
    """A ladder export's folder (levels.json and one level, easy) from ``spec``; returns its path."""
    if spec[0] == "special":
        case.note(f"{folder}: {spec[1]}")
        return special_path(spec[1], case, folder)
    levels = copy.deepcopy(corpus.levels)
    model = write_onnx(spec[1] if spec[0] == "manifest" else ("model", "none", 0, False), corpus, case,
                       f"{folder}/easy")
    del model
    if spec[0] == "levels":
        write_settings(spec[1], levels, case, f"{folder}/levels.json")
    elif spec[0] == "manifest":
        (case.work / folder / "levels.json").write_text(json.dumps(levels))
    else:
        entry = levels["levels"][0]
        entry[spec[1]] = spec[2]
        if spec[1] in ("model", "manifest"):
            entry["networks"][0][spec[1]] = spec[2]
        (case.work / folder / "levels.json").write_text(json.dumps(levels, allow_nan=True, default=str))
        case.note(f"{folder}/levels.json: level {spec[1]}={_short(repr(spec[2]), 40)}")
    return folder


def test_play(corpus):
    example = st.tuples(
        optional("--opponents", st.one_of(st.sampled_from(["random", "random,easy,hard", "random,random", ",", ""]),
                                          specs(corpus).map(lambda s: ("spec", s)))),
        st.one_of(st.just([]), rules_args().map(lambda r: ("rules", r))),
        optional("--seed", number_words(small(0, 7))),
        optional("--save", st.sampled_from(OUT_KINDS)),
        st.one_of(st.just([]), st.tuples(st.just("--resume"), records())),
        st.one_of(st.just([]), st.tuples(st.just("--deal"), settings_file(
            {"hands": [["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"]],
             "hand_number": 0, "scores": [0, 0, 0, 0]}, ("dealer", "hands")))),
        optional("--hands", number_words(small(1))),
        st.sampled_from(["", "", "q\ny\n", "1\n1\n1\n" * 30, "QS\n" * 50, "help\n", "\x04\n" * 5, "x" * 100_000]),
    )

    def prepare(ex, case):
        opponents, rules, seed, save, resume, deal, hands, stdin = ex
        argv = ["play", "--no-color"]
        if opponents:
            value = opponents[1]
            argv += ["--opponents", write_spec(value[1], corpus, case) if isinstance(value, tuple) else value]
        if rules:
            argv += write_rules_args(rules[1], corpus, case)
        argv += seed + hands
        if save:
            argv += ["--save", out_path(save[1], case, "game.jsonl")]
        if resume:
            argv += ["--resume", write_record(resume[1], corpus, case, "resumed.jsonl")]
        if deal:
            argv += ["--deal", write_settings(deal[1], corpus.deal_file, case, "deal.yaml")]
        return cli_call(argv), shown_argv(argv) + f" <<< {_short(stdin, 30)}", stdin

    fuzz("play", example, prepare, corpus.base)


def test_replay(corpus):
    example = st.tuples(records(), optional("--game", number_words(small(1, 2))), flags("--all", "--brief"))

    def prepare(ex, case):
        record, game, extra = ex
        argv = ["replay", write_record(record, corpus, case), *game, *extra, "--no-color"]
        return cli_call(argv), shown_argv(argv)

    fuzz("replay", example, prepare, corpus.base)


def test_serve(corpus, monkeypatch):
    # Everything up to serving: the arguments, the agents (made, as the app makes them), the games
    # folder and the socket. No worker starts and nothing is served; the Ray backend stops at its start.
    from hearts_app.commands import serve as serve_command
    from hearts_app.serve import app as serve_app
    from hearts_app.serve import bots, games

    def create_app(offered, games_dir, **_):
        offered = list(dict.fromkeys(offered))
        info = bots.describe(offered)
        games.GameStore(offered, games_dir)
        return info

    def run_app(app, listener, **_):
        listener.close()

    monkeypatch.setattr(serve_app, "create_app", create_app)
    monkeypatch.setattr(serve_command, "run_app", run_app)
    with contextlib.suppress(ImportError):
        from hearts_app.serve import replicas

        monkeypatch.setattr(replicas, "serve_forever", lambda *a, **k: 0)

    example = st.tuples(
        optional("--host", st.one_of(st.sampled_from(["127.0.0.1", "::1", "0.0.0.0", "localhost", "256.0.0.1", "",
                                                      "::", "fe80::1%999", "127.0.0.1:80", "[::1]", "1.2.3.4",
                                                      "a" * 300]), text_words())),
        st.one_of(st.just(["--port", "0"]), optional("--port", number_words(small(0)))),
        optional("--allowed-hosts", st.one_of(st.sampled_from(["*", "localhost,", ",", "*.example.org", "a" * 5000]),
                                              text_words())),
        optional("--agents", st.one_of(st.sampled_from(["random", "random,easy", ",", "random,,easy", ""]),
                                       specs(corpus).map(lambda s: ("spec", s)))),
        optional("--games-dir", st.one_of(st.sampled_from(OUT_KINDS), st.just("records"))),
        optional("--workers", number_words(small(0, 1))),
        optional("--max-pending", number_words(small(1, 8))),
        optional("--search-time-limit", number_words(small(1))),
        optional("--call-time-limit", number_words(small(1))),
        optional("--request-timeout", number_words(small(1))),
        optional("--idle-timeout", number_words(small(1))),
        optional("--max-connections", number_words(small(1, 64))),
        optional("--backend", st.sampled_from(["local", "local", "ray", "kubernetes"])),
        optional("--replicas", number_words(small(1))),
        optional("--address", st.one_of(st.sampled_from(["auto", "127.0.0.1:1", "ray://x:1", ""]), text_words())),
        records(),
    )

    def prepare(ex, case):
        host, port, allowed, agents, games_dir, *rest, record = ex
        argv = ["serve", *host, *port, *allowed]
        if agents:
            value = agents[1]
            argv += ["--agents", write_spec(value[1], corpus, case) if isinstance(value, tuple) else value]
        if games_dir:
            if games_dir[1] == "records":  # a games folder holding a hostile record
                (case.work / "games").mkdir()
                write_record(record, corpus, case, "games/abc.jsonl")
                argv += ["--games-dir", "games"]
            else:
                argv += ["--games-dir", out_path(games_dir[1], case, "games")]
        for item in rest:
            argv += item
        return cli_call(argv), shown_argv(argv)

    fuzz("serve", example, prepare, corpus.base)


def test_seat_records(corpus):
    # Seat records reach the bots API (hearts serve, /api/v1/act) and the exported policies' golden
    # files; their reader takes a JSON text, a path or a parsed object. Refusal: SeatRecordError.
    from hearts_env import seat_record

    example = st.tuples(
        st.sampled_from(range(len(corpus.seat_records))),
        st.one_of(st.tuples(st.just("edit"), st.data()),
                  st.tuples(st.just("text"), st.sampled_from(sorted(TEXT_ATTACKS))),
                  st.tuples(st.just("special"), st.sampled_from(SPECIALS))),
        st.sampled_from(["object", "text", "path"]),
    )

    def prepare(ex, case):
        index, damage, form = ex
        record = corpus.seat_records[index]
        if damage[0] == "edit":
            record, done = damage[1].draw(edited(record, ("passed", "received", "trick", "tricks", "format")))
            case.note(f"record {index}: {'; '.join(done)}")
            text = json.dumps(record, allow_nan=True, default=str)
        elif damage[0] == "text":
            raw = TEXT_ATTACKS[damage[1]]()
            text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
            case.note(f"record: {damage[1]}")
            form = "text" if form == "object" else form
        else:
            text = None
            form = "path"
        if form == "path":
            if text is None:
                arg = str(case.work / special_path(damage[1], case, "record.json"))
                case.note(f"record.json: {damage[1]}")
            else:
                (case.work / "record.json").write_text(text, encoding="utf-8", errors="surrogatepass")
                arg = Path(case.work / "record.json")
        else:
            arg = record if form == "object" else text

        def call():
            try:
                seat_record.observation(arg)
                seat_record.legal_mask(arg)
                seat_record.encode_batch([arg, arg])
            except seat_record.SeatRecordError as err:
                print(f"seat record: error: {err}", file=sys.stderr)
                return 2
            return 0

        return call, f"seat_record.observation({form} of case {index})"

    fuzz("seat records", example, prepare, corpus.base)


def test_ladder_levels(corpus):
    # A ladder export's levels.json and manifests, read by ``hearts export --web DIR --levels LADDER``.
    example = st.tuples(st.lists(levels_dirs(corpus), min_size=1, max_size=2), st.sampled_from(OUT_KINDS))

    def prepare(ex, case):
        levels, out = ex
        argv = ["export", "--web", out_path(out, case, "site")]
        for i, level in enumerate(levels):
            argv += ["--levels", write_levels(level, corpus, case, f"ladder{i}")]
        return cli_call(argv), shown_argv(argv)

    fuzz("ladder levels", example, prepare, corpus.base)
