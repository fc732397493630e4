"""Layers point one way: hearts_env <- agents <- train <- eval <- hearts_app (DESIGN.md section 4)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["hearts_env", "agents", "train", "eval", "hearts_app"]  # each may import only those before it
# The one import upward that the design allows: the Gym env resolves an opponent given as a spec
# string through agents.make, imported inside that function only.
ALLOWED = {("hearts_env/gym.py", "agents")}


def imports_of(path: Path) -> set[str]:
    """The top-level packages a file imports, anywhere in it (module level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", ORDER)
def test_a_package_imports_only_the_layers_below_it(package):
    above = set(ORDER[ORDER.index(package) + 1:])
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no Python files under {package}/"
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in sorted(imports_of(path) & above)
        if (path.relative_to(ROOT).as_posix(), name) not in ALLOWED
    ]
    assert not wrong, wrong


def test_importing_the_environments_loads_nothing_above_them():
    code = ("import sys, hearts_env, hearts_env.gym, hearts_env.aec, hearts_env.loop, hearts_env.worlds\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {ORDER[1:]!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
