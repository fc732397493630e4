"""The compiler the rules run under: Numba, with its on-disk cache, and a fallback when that is read-only.

The rules are written once, as plain Python over one game's integers and card sets, and compiled
by Numba; the engine's kernels run them in a loop over the games of a batch. A batch of one game
and a batch of 8192 run the same compiled code, so a single game pays one call per step instead
of a hundred NumPy calls.

Compiled code is cached on disk (``cache=True``): the first use on a machine compiles the
engine's kernels (about 20 s on two cores; the bots' take as long again) and later runs load
them in well under a second. Numba keeps the cache in ``NUMBA_CACHE_DIR`` when set, else in the
package's ``__pycache__`` folders, else (a read-only package) in the user's cache folder. Where no writable cache folder exists at all, the
kernels are compiled in memory at every start instead: slower to start, the same results.

A kernel calls rules from other files (the step in ``engine`` calls ``play``, ``scoring``, ...;
a bot's compiled rules call helpers beside them), and Numba on its own checks only the
kernel's own file before reusing its cached code. So every function compiled here is cached under
a stamp that hashes its own file, the files of its own folder with compiled functions, and every
file of ``hearts_env`` with compiled functions (``ENGINE_FILES``): editing any of them recompiles
the kernels that may call it instead of running stale code. (A locator list set by the user in
``NUMBA_CACHE_LOCATOR_CLASSES`` is kept, and with it Numba's own per-file check.)
"""

from __future__ import annotations

import functools
import hashlib
import warnings
from pathlib import Path

import numba
from numba.core import caching

_HERE = Path(__file__).resolve().parent
#: Every file of ``hearts_env`` with compiled functions (``tests/test_compiled.py`` checks the list).
ENGINE_FILES = tuple(_HERE / name for name in (
    "cards.py", "compiled.py", "constants.py", "deal.py", "engine.py", "holding.py", "observe.py", "passing.py",
    "play.py", "scoring.py", "seat_record_replay.py", "seat_view.py", "state.py", "worlds.py",
))


def stamped_files(own_file: str) -> list[Path]:
    """The files whose changes recompile a kernel of ``own_file``: it, the files beside it with
    compiled functions, and every engine file with compiled functions."""
    own = Path(own_file).resolve()
    neighbours = {path.resolve() for path in own.parent.glob("*.py") if _compiles(path)}
    return sorted({own, *neighbours, *ENGINE_FILES})


def _compiles(path: Path) -> bool:
    text = path.read_text("utf-8")
    return "@jit" in text or "@inline" in text


@functools.lru_cache(maxsize=None)
def sources_stamp(own_file: str) -> str:
    """A hash of the files of ``stamped_files(own_file)``."""
    digest = hashlib.sha256()
    for path in stamped_files(own_file):
        digest.update(str(path.name).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class _AllSourcesStamp:
    # Numba compares this with the stamp saved beside the cached code, and compiles afresh when
    # they differ (its own stamp is the one file's modification time and size).
    def get_source_stamp(self):
        return sources_stamp(self._py_file)


class UserProvidedLocator(_AllSourcesStamp, caching.UserProvidedCacheLocator):
    """``NUMBA_CACHE_DIR``, stamped with all the compiled sources."""


class InTreeLocator(_AllSourcesStamp, caching.InTreeCacheLocator):
    """The package's ``__pycache__``, stamped with all the compiled sources."""


class UserWideLocator(_AllSourcesStamp, caching.UserWideCacheLocator):
    """The user's cache folder, stamped with all the compiled sources."""


_LOCATORS = ",".join(f"{__name__}.{cls.__name__}" for cls in (UserProvidedLocator, InTreeLocator, UserWideLocator))
_warned = False


def jit(function, inline: bool = False):
    """``function`` compiled in nopython mode, cached on disk where a cache folder is writable.
    ``inline``: compiled into each compiled caller instead of called (see :func:`inline`)."""
    global _warned
    chosen = numba.config.CACHE_LOCATOR_CLASSES
    options = {"inline": "always"} if inline else {}
    try:
        if chosen == "":  # (a locator list set by the user, as NUMBA_CACHE_LOCATOR_CLASSES, is kept)
            numba.config.CACHE_LOCATOR_CLASSES = _LOCATORS
        return numba.njit(cache=True, **options)(function)
    except RuntimeError as error:  # Numba found no writable cache folder for this file
        if not _warned:
            warnings.warn(f"hearts_env: compiling without an on-disk cache ({error}); set NUMBA_CACHE_DIR "
                          "to a writable folder to compile once", RuntimeWarning, stacklevel=2)
            _warned = True
        return numba.njit(**options)(function)
    finally:
        if chosen == "":
            numba.config.CACHE_LOCATOR_CLASSES = chosen


def inline(function):
    """``jit``, compiled into each compiled caller: for the many small functions a kernel calls
    once per game (the bots' rules), where a call, handing over the game's pieces, costs more than
    the function's own work. Called from Python it runs compiled as ``jit`` would."""
    return jit(function, inline=True)
