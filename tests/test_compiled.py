"""The compiled engine: where no cache folder can be written, it still imports and plays the same games."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import hearts_env as he
from hearts_env import engine
from hearts_env.observe import observe

ROOT = Path(__file__).resolve().parents[1]

# Plays two games of random legal cards and prints a digest of every state array and observation.
GAME = """
import hashlib, numpy as np
from hearts_env import engine
from hearts_env.observe import observe
state, rng, digest = engine.init("classic", 2, 5), np.random.default_rng(5), hashlib.sha256()
while not state.done.all():
    legal = engine.legal_mask(state)
    engine.step_inplace(state, np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in legal]))
    digest.update(state.buffer.tobytes()); digest.update(observe(state).tobytes())
print(digest.hexdigest())
"""


def _digest_here() -> str:
    lines = []
    exec(GAME.replace("print(", "lines.append("), {"lines": lines})
    return lines[0]


def test_the_engine_alone_plays_the_same_where_no_cache_folder_is_writable(tmp_path):
    # /proc refuses new folders even to root, and the only cache locator left is the one that
    # reads NUMBA_CACHE_DIR: Numba finds no writable cache folder for any kernel. The game runs
    # from a copy of hearts_env alone: the bottom layer needs nothing above it, compiled or not.
    shutil.copytree(ROOT / "hearts_env", tmp_path / "hearts_env", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, NUMBA_CACHE_DIR="/proc/hearts-lab-no-cache",
               NUMBA_CACHE_LOCATOR_CLASSES="UserProvidedCacheLocator", PYTHONPATH=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", GAME], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    assert "compiling without an on-disk cache" in run.stderr  # said once, as a warning
    assert run.stderr.count("RuntimeWarning") == 1
    assert run.stdout.strip() == _digest_here()


def test_kernels_give_the_same_state_at_every_batch_size():
    # The same compiled rules run for a batch of one and inside a batch: game g of a batch of 9 is
    # step for step the game played alone from the same seed.
    seeds = he.deal.game_seeds(3, 9)
    batch = engine.init_from_seeds("classic", seeds)
    alone = [engine.init_from_seeds("classic", seeds[g:g + 1]) for g in range(9)]
    rng = np.random.default_rng(3)
    while not batch.done.all():
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in engine.legal_mask(batch)])
        engine.step_inplace(batch, actions)
        for g, single in enumerate(alone):
            if not single.done[0]:
                engine.step_inplace(single, actions[g:g + 1])
            assert single.equals(batch.take([g]))
            assert np.array_equal(observe(single), observe(batch)[g:g + 1])


def test_python_and_compiled_code_cut_the_state_buffer_alike():
    from hearts_env.constants import constants, state_views

    for rules in ("classic", "two_player"):
        state = engine.init(rules, 3, 1)
        compiled = state_views(constants(state.rules).params, state.buffer)
        for name, array in zip(state.groups, compiled):
            ours = state.groups[name]
            assert (ours.shape, ours.dtype, ours.strides) == (array.shape, array.dtype, array.strides), name
            assert ours.__array_interface__["data"][0] == array.__array_interface__["data"][0], name


def test_every_engine_file_with_compiled_functions_is_in_the_cache_stamp():
    from hearts_env import compiled

    with_jit = {path.resolve() for path in (ROOT / "hearts_env").glob("*.py") if compiled._compiles(path)}
    assert with_jit, "no compiled functions found"
    # compiled.py defines the decorator: its own changes recompile everything too.
    assert with_jit | {ROOT / "hearts_env" / "compiled.py"} == set(compiled.ENGINE_FILES)


def test_cached_kernels_are_stamped_with_their_own_file_and_the_engine_files():
    from agents.heuristic import easy
    from hearts_env import compiled, seat_view

    for kernel, own in ((engine._step, ROOT / "hearts_env" / "engine.py"),
                        (seat_view._read, ROOT / "hearts_env" / "seat_view.py"),
                        (easy._decide, ROOT / "agents" / "heuristic" / "easy.py")):
        locator = kernel._cache._impl.locator  # (Numba's own attributes: what this test is about)
        assert isinstance(locator, (compiled.UserProvidedLocator, compiled.InTreeLocator, compiled.UserWideLocator))
        assert locator.get_source_stamp() == compiled.sources_stamp(str(own))
    assert compiled.sources_stamp(str(ROOT / "hearts_env" / "engine.py")) != \
        compiled.sources_stamp(str(ROOT / "agents" / "heuristic" / "easy.py"))


def test_a_bot_kernel_is_stamped_with_the_rules_it_calls_beside_it():
    # hard's compiled rules call normal's, easy's and the table's: a change to any of them must
    # recompile hard's kernel, not reuse it from the cache.
    from agents.heuristic import hard
    from hearts_env import compiled

    bots = ROOT / "agents" / "heuristic"
    files = compiled.stamped_files(str(bots / "hard.py"))
    assert {bots / name for name in ("hard.py", "normal.py", "easy.py", "table.py", "base.py")} <= set(files)
    assert set(compiled.ENGINE_FILES) <= set(files)
    assert hard._decide._cache._impl.locator.get_source_stamp() == compiled.sources_stamp(str(bots / "hard.py"))
