"""Bring your own agent: ``FILE.py:NAME`` and ``MODULE:NAME`` specs, their one-line errors, arena
labels of user agents and callables, and the README's example run as a user would run it."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import agents
import hearts_env as he
from agents import AgentSpecError
from eval import arena
from hearts_env import seat_view
from hearts_env.observe import observe
from hearts_env.rules import Rules

ROOT = Path(__file__).resolve().parent.parent
CLASSIC = Rules.preset("classic")

BOTS = textwrap.dedent("""
    import numpy as np

    class LowestCard:
        name = "lowest"

        def act(self, observation, action_mask):
            return np.argmax(np.asarray(action_mask) > 0, axis=1)

    def lowest(observation, action_mask):
        return np.argmax(np.asarray(action_mask) > 0, axis=1)

    class Seeded:
        def __init__(self, rules=None, seed=None):
            self.rules, self.seed = rules, seed

        def act(self, observation, action_mask):
            return np.argmax(np.asarray(action_mask) > 0, axis=1)

    def seed_only(seed):
        agent = Seeded()
        agent.seed = seed
        return agent

    def with_kwargs(**options):
        agent = Seeded()
        agent.options = options
        return agent

    INSTANCE = LowestCard()
    NUMBER = 3

    def returns_text():
        return "hard"

    class OneArgument:
        def act(self, observation):
            return np.zeros(len(observation), dtype=np.int64)

    class NeedsDepth:
        def __init__(self, depth):
            self.depth = depth

        def act(self, observation, action_mask):
            return np.argmax(np.asarray(action_mask) > 0, axis=1)

    def three(a, b, c):
        return a

    def broken_factory():
        raise RuntimeError("out of coffee")
""")


@pytest.fixture
def bots(tmp_path, monkeypatch):
    """``my_bots.py`` in a fresh current directory."""
    (tmp_path / "my_bots.py").write_text(BOTS)
    monkeypatch.chdir(tmp_path)
    yield tmp_path / "my_bots.py"
    for name in [m for m in sys.modules if m.split(".")[0] in ("my_bots", "lab_pkg")]:
        del sys.modules[name]  # MODULE:NAME specs import for good; the next test has its own folder


def _mask(n=3):
    mask = np.zeros((n, 52), dtype=np.int8)
    mask[:, [5, 17, 40]] = 1
    return mask


def _plays_lowest(agent):
    mask = _mask()
    actions = agent.act(np.zeros((3, 10), dtype=np.float32), mask)
    assert np.asarray(actions).tolist() == [5, 5, 5]


# ---------------------------------------------------------------------------------------------
# FILE.py:NAME and MODULE:NAME
# ---------------------------------------------------------------------------------------------


def test_a_class_in_a_file_relative_or_absolute(bots):
    relative = agents.make("my_bots.py:LowestCard")
    assert type(relative).__name__ == "LowestCard"
    _plays_lowest(relative)
    _plays_lowest(agents.make(f"{bots}:LowestCard", seed=3, rules=CLASSIC))
    _plays_lowest(agents.make("./my_bots.py:LowestCard"))


def test_a_play_function_is_wrapped_and_an_agent_object_is_used_as_it_is(bots):
    function = agents.make("my_bots.py:lowest")
    assert isinstance(function, agents.FunctionAgent) and function.name == "lowest"
    _plays_lowest(function)
    instance = agents.make("my_bots.py:INSTANCE")
    assert type(instance).__name__ == "LowestCard"
    _plays_lowest(instance)


def test_a_factory_gets_rules_and_seed_only_if_it_takes_them(bots):
    seeded = agents.make("my_bots.py:Seeded", seed=7, rules=CLASSIC)
    assert seeded.seed == 7 and seeded.rules is CLASSIC
    assert agents.make("my_bots.py:seed_only", seed=9, rules=CLASSIC).seed == 9
    options = agents.make("my_bots.py:with_kwargs", seed=4, rules=CLASSIC).options
    assert options == {"rules": CLASSIC, "seed": 4}
    _plays_lowest(agents.make("my_bots.py:LowestCard", seed=1, rules=CLASSIC))  # takes neither


def test_a_module_spec_imports_an_installed_or_local_module(bots, tmp_path, monkeypatch):
    package = tmp_path / "lab_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "players.py").write_text(BOTS)
    # Local: the current directory counts, as with ``python -m`` (the ``hearts`` script's own
    # sys.path does not hold it).
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", os.getcwd(), str(tmp_path))])
    _plays_lowest(agents.make("lab_pkg.players:LowestCard"))
    assert agents.make("lab_pkg.players:Seeded", seed=5).seed == 5
    _plays_lowest(agents.make("my_bots:lowest"))


def test_the_file_prefixes_keep_their_meaning(bots, tmp_path):
    (tmp_path / "onnx_bots.py").write_text(BOTS)
    _plays_lowest(agents.make("onnx_bots.py:LowestCard"))  # a file whose name starts like a prefix
    with pytest.raises(AgentSpecError, match="checkpoint file not found"):
        agents.make("ckpt:my_bots.py:LowestCard")  # ckpt: wins: a checkpoint named "my_bots.py:LowestCard"
    with pytest.raises(AgentSpecError, match="ONNX model file not found"):
        agents.make("onnx:model")


def test_a_file_is_run_once_not_once_per_agent(bots):
    bots.write_text(BOTS + "\nimport builtins\nbuiltins.__dict__.setdefault('_lab_loads', []).append(1)\n")
    import builtins

    builtins.__dict__.pop("_lab_loads", None)
    try:
        for seed in range(3):
            agents.make("my_bots.py:LowestCard", seed=seed)
        assert builtins._lab_loads == [1]
        bots.write_text(BOTS + "\nimport builtins\nbuiltins._lab_loads.append(2)\n")
        os.utime(bots, ns=(bots.stat().st_atime_ns, bots.stat().st_mtime_ns + 10**9))
        agents.make("my_bots.py:LowestCard")  # an edited file is read again
        assert builtins._lab_loads == [1, 2]
    finally:
        builtins.__dict__.pop("_lab_loads", None)


@pytest.mark.parametrize("spec, words", [
    ("no_such_file.py:LowestCard", ["'no_such_file.py:LowestCard'", "file not found", "no_such_file.py"]),
    ("my_bots.py:Missing", ["'my_bots.py:Missing'", "no 'Missing'", "LowestCard"]),
    ("no_such_module_xyz:bot", ["'no_such_module_xyz:bot'", "cannot import", "no_such_module_xyz"]),
    ("my_bots:Missing", ["no 'Missing'"]),
    ("my_bots.py:NUMBER", ["'NUMBER'", "int", "neither an agent nor"]),
    ("my_bots.py:returns_text", ["returns_text()", "returned a str", "act(observation, action_mask)"]),
    ("my_bots.py:OneArgument", ["OneArgument", "act(observation)", "act(observation, action_mask)"]),
    ("my_bots.py:NeedsDepth", ["NeedsDepth", "depth", "rules", "seed"]),
    ("my_bots.py:three", ["three(a, b, c)", "neither"]),
    ("my_bots.py:broken_factory", ["broken_factory()", "RuntimeError", "out of coffee"]),
    ("broken.py:LowestCard", ["broken.py", "ZeroDivisionError"]),
    ("syntax.py:LowestCard", ["syntax.py", "SyntaxError"]),
])
def test_a_bad_user_spec_says_what_is_wrong_in_one_line(bots, tmp_path, spec, words):
    (tmp_path / "broken.py").write_text("import numpy\n\nRATIO = 1 / 0\n")
    (tmp_path / "syntax.py").write_text("def oops(:\n    pass\n")
    with pytest.raises(AgentSpecError) as info:
        agents.make(spec, seed=0, rules=CLASSIC)
    message = str(info.value)
    assert len(message.splitlines()) == 1, message
    for word in words:
        assert word in message, message


def test_an_unknown_spec_lists_the_user_forms():
    with pytest.raises(AgentSpecError, match=r"FILE\.py:NAME.*MODULE:NAME"):
        agents.make("nonsense")


# ---------------------------------------------------------------------------------------------
# Everywhere a spec goes: the arena (label = the spec), hearts play --opponents
# ---------------------------------------------------------------------------------------------


def test_the_arena_labels_a_user_agent_by_its_spec(bots):
    result = arena.head_to_head("my_bots.py:LowestCard", "random", deals=8, seed=0, workers=2, chunk_deals=4,
                                progress=False)
    assert result.row("my_bots.py:LowestCard")["games"] == 32


def test_hearts_play_opponents_take_user_specs(bots):
    from hearts_app.commands import play as play_command

    specs = play_command._opponent_specs("my_bots.py:LowestCard,easy,lab_missing.py:X", 4)
    assert specs == ["my_bots.py:LowestCard", "easy", "lab_missing.py:X"]
    _plays_lowest(play_command._make_agent(specs[0], seed=1, rules=CLASSIC))
    with pytest.raises(play_command.PlayError, match="lab_missing.py"):
        play_command._make_agent(specs[2], seed=1, rules=CLASSIC)


def test_a_callable_or_agent_object_is_labelled_by_its_name():
    def lowest_card(observation, action_mask):
        return np.argmax(action_mask > 0, axis=1)

    class Quiet:
        def act(self, observation, action_mask):
            return np.argmax(action_mask > 0, axis=1)

    result = arena.head_to_head(lowest_card, "random", deals=4, seed=0, workers=1, progress=False)
    assert result.row("lowest_card")["games"] == 16
    named = agents.FunctionAgent(lowest_card, name="low")
    assert arena.head_to_head(named, "random", deals=4, workers=1, progress=False).row("low")["games"] == 16
    quiet = arena.head_to_head(Quiet(), "random", deals=4, workers=1, progress=False)
    assert quiet.row("Quiet")["games"] == 16


# ---------------------------------------------------------------------------------------------
# The README's example, run as a user would
# ---------------------------------------------------------------------------------------------


def _readme_example() -> tuple[str, list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Bring your own agent", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    command = next(line for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", section, re.DOTALL)
                   for line in block.splitlines() if line.strip().startswith("hearts arena"))
    return code, command.split("#")[0].split()


def test_the_readme_example_runs(tmp_path):
    code, command = _readme_example()
    assert command[:2] == ["hearts", "arena"]
    spec = command[2]
    filename = spec.split(":")[0]
    (tmp_path / filename).write_text(code)
    script = Path(sys.executable).with_name("hearts")
    program = [str(script)] if script.is_file() else [sys.executable, "-m", "hearts_app"]
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(program + command[1:] + ["--no-progress"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert spec in done.stdout, done.stdout


def test_the_readme_seat_view_example_plays(tmp_path):
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("### Bring your own agent", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)[1]
    assert "seat_view.read" in code
    (tmp_path / "ducking.py").write_text(code)
    duck = agents.make(f"{tmp_path / 'ducking.py'}:DuckUnder")
    result = arena.head_to_head(duck, "random", deals=8, workers=1, progress=False)
    assert result.row("DuckUnder")["games"] == 32
    # It ducks: following, it never beats the trick when a card of its own would not.
    state = he.init(he.Rules.preset("classic"), 64, seed=3)
    for _ in range(12 + 2):  # the passes, then two cards of the first trick
        state = he.step(state, he.legal_mask(state).argmax(axis=1))
    obs, mask = observe(state), he.legal_mask(state)
    view = seat_view.read(obs, mask)
    chosen = duck.act(obs, mask)
    ducking = ~view.leading & ((view.legal & ~view.beats) != 0)
    assert ducking.any()
    assert not (((view.beats >> chosen.astype(np.uint64)) & np.uint64(1)).astype(bool) & ducking).any()


def test_play_builds_opponents_for_the_game_s_rules(capsys):
    """hearts play hands its rules to agents.make: a policy of another game is refused up front
    (and a user's factory receives the rules)."""
    from hearts_app import cli

    assert cli.main(["play", "--no-color", "--opponents", "ppo-two-player", "--seed", "1"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "two_player" in lines[0] and "classic" in lines[0], lines


# ---------------------------------------------------------------------------------------------
# Which specs run code; objects from Python; what a user file may raise
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, runs_code", [
    ("my_bots.py:LowestCard", True), (" ./my_bots.py:lowest ", True), ("/abs/path/bots.py:X", True),
    ("lab_pkg.players:LowestCard", True), ("my_bots:lowest", True),
    ("hard", False), ("random", False), (" easy ", False), ("ckpt:my_bots.py:LowestCard", False),
    ("ckpt:runs/x/latest.pt", False), ("onnx:model.onnx", False), ("nonsense", False), ("", False),
])
def test_is_code_spec_tells_the_specs_that_run_code(spec, runs_code):
    """The specs that would import user code (so a spec read from a file must not be one)."""
    assert agents.is_code_spec(spec) is runs_code


def test_is_code_spec_never_loads_anything(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trap.py").write_text("raise SystemExit('ran')\n")
    assert agents.is_code_spec("trap.py:X") and agents.is_code_spec("trap:X")
    assert "trap" not in sys.modules and not any(name.startswith("_hearts_user_trap") for name in sys.modules)


def test_a_class_or_factory_object_is_built_as_its_file_spec_would_be(bots):
    sys.path.insert(0, str(bots.parent))
    try:
        import my_bots
    finally:
        sys.path.remove(str(bots.parent))
    seeded = agents.make(my_bots.Seeded, seed=7, rules=CLASSIC)
    assert type(seeded).__name__ == "Seeded" and seeded.seed == 7 and seeded.rules is CLASSIC
    from_file = agents.make("my_bots.py:Seeded", seed=7, rules=CLASSIC)
    assert (type(from_file).__name__, from_file.seed) == (type(seeded).__name__, seeded.seed)
    assert type(agents.make(my_bots.LowestCard)).__name__ == "LowestCard"
    _plays_lowest(agents.make(my_bots.LowestCard))
    assert agents.make(my_bots.seed_only, seed=9).seed == 9  # a factory, as my_bots.py:seed_only
    function = agents.make(my_bots.lowest)  # a play function stays a FunctionAgent
    assert isinstance(function, agents.FunctionAgent) and function.name == "lowest"
    _plays_lowest(function)
    with pytest.raises(AgentSpecError, match="NeedsDepth.*depth.*rules.*seed"):
        agents.make(my_bots.NeedsDepth)
    with pytest.raises(AgentSpecError, match="broken_factory.*out of coffee"):
        agents.make(my_bots.broken_factory)


def test_a_function_agent_leaves_the_actions_type_alone():
    agent = agents.FunctionAgent(lambda observation, action_mask: np.full(len(observation), 0.7))
    assert agent.act(np.zeros((2, 5)), _mask(2)).dtype.kind == "f"  # the play loop refuses it, naming the agent


@pytest.mark.parametrize("spec", ["interrupt.py:X", "interrupt:X"])
def test_ctrl_c_while_a_user_file_loads_is_not_swallowed(bots, tmp_path, spec):
    (tmp_path / "interrupt.py").write_text("raise KeyboardInterrupt\n")
    try:
        with pytest.raises(KeyboardInterrupt):
            agents.make(spec)
        assert not [name for name in sys.modules if "interrupt" in name]
    finally:
        sys.modules.pop("interrupt", None)


def test_a_user_file_or_factory_that_exits_is_one_line(bots, tmp_path):
    (tmp_path / "quits.py").write_text(
        "import sys\n\ndef factory():\n    sys.exit('no agents today')\n\nclass Exits:\n"
        "    def __init__(self, seed=None):\n        raise SystemExit(3)\n")
    (tmp_path / "quits_on_load.py").write_text("import sys\nsys.exit('bye')\n")
    for spec, words in [("quits.py:factory", ["factory()", "SystemExit", "no agents today"]),
                        ("quits.py:Exits", ["Exits()", "SystemExit", "3"]),
                        ("quits_on_load.py:X", ["quits_on_load.py", "SystemExit", "bye"])]:
        with pytest.raises(AgentSpecError) as info:
            agents.make(spec, seed=0)
        message = str(info.value)
        assert len(message.splitlines()) == 1 and all(word in message for word in words), message


def test_the_readme_says_the_file_is_imported_and_its_main_block_does_not_run(bots, tmp_path):
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("### Bring your own agent", 1)[1]
    section = " ".join(section.split("\n## ", 1)[0].split())
    assert "imports your file" in section and "as `python` would" not in section
    assert '`if __name__ == "__main__":`' in section and "does not run" in section
    (tmp_path / "scripted.py").write_text(BOTS + "\nif __name__ == '__main__':\n    raise SystemExit('ran as a script')\n")
    _plays_lowest(agents.make("scripted.py:LowestCard"))
