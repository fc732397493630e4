"""Nothing outside hearts_env writes State fields (DESIGN.md section 4): it asks worlds or the engine."""

import ast
from pathlib import Path

from hearts_env.state import FIELD_ROWS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agents", "train", "eval", "export", "hearts_app")


def written_fields(tree: ast.AST):
    """(line, field) of every assignment to ``x.field`` or ``x.field[...]`` (plain or augmented)
    where ``field`` is a State field (an object's own ``self.seed`` is not a state's)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            if (isinstance(target, ast.Attribute) and target.attr in FIELD_ROWS
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")):
                yield node.lineno, target.attr


def test_no_state_field_is_written_outside_hearts_env():
    found = [f"{path.relative_to(ROOT)}:{line}: .{field}"
             for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
             for line, field in written_fields(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, "State fields written outside hearts_env:\n" + "\n".join(found)


def test_the_check_finds_a_write():
    tree = ast.parse("state.hands[:, 0] = 1\nworld.scores[g] += 3\nstate.legal = x\nother.thing[0] = 1\n"
                     "self.seed = 3\n")
    assert sorted(field for _, field in written_fields(tree)) == ["hands", "legal", "scores"]
