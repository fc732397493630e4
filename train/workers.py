"""Worker processes that end with their parent: the pool every collecting command uses.

``hearts value``, ``hearts belief``, ``hearts distill collect`` and the recipe's collections spread
their hands over worker processes. A worker must not outlive a ``kill -9`` of the command: it would
go on holding gigabytes and CPU, or write shards into a folder the rerun collects into. Each worker
asks the kernel to kill it when its parent dies (Linux ``PR_SET_PDEATHSIG``) and exits at once if the
parent died before it could ask. Elsewhere the workers finish their job first.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor

#: prctl's option that sets the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a worker: end with the process ``parent`` (see the module docstring)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before that call
        os._exit(1)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes that end with this one. They are forked, so they are this
    process's children (``die_with_parent`` checks it), whatever the platform's default start method."""
    return ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),),
                               mp_context=multiprocessing.get_context("fork"))
