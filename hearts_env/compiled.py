"""The compiler the rules run under: Numba, with its on-disk cache, and a fallback when that is read-only.

The rules are written once, as plain Python over one game's integers and card sets, and compiled
by Numba; the engine's kernels run them in a loop over the games of a batch. A batch of one game
and a batch of 8192 run the same compiled code, so a single game pays one call per step instead
of a hundred NumPy calls.

Compiled code is cached on disk (``cache=True``): the first import on a machine compiles the
kernels (about half a minute on two cores) and later imports load them in well under a second.
Numba keeps the cache in the package's ``__pycache__`` folders, or in ``NUMBA_CACHE_DIR`` when set,
or in the user's cache folder when the package's folder is read-only. Where no writable cache
folder exists at all, the kernels are compiled in memory on every import instead: slower to start,
the same results.
"""

from __future__ import annotations

import warnings

import numba

_warned = False


def jit(function):
    """``function`` compiled in nopython mode, cached on disk where a cache folder is writable."""
    global _warned
    try:
        return numba.njit(cache=True)(function)
    except RuntimeError as error:  # Numba found no writable cache folder for this file
        if not _warned:
            warnings.warn(f"hearts_env: compiling without an on-disk cache ({error}); set NUMBA_CACHE_DIR "
                          "to a writable folder to compile once", RuntimeWarning, stacklevel=2)
            _warned = True
        return numba.njit(function)
