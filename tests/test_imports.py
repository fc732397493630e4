"""How the project's files import each other (DESIGN.md section 4), read from their source (ast):

* no circle between files through module-level imports (a package's ``__init__.py`` is a file of
  its own; ``from package import module`` is an import of that module);
* layers point one way: hearts_env < agents < train < eval < export < hearts_app; a file imports its
  own layer and the layers below it, at module level and inside functions alike, except
  :data:`UPWARD`;
* no file takes a name that starts with ``_`` from another module (``from x import _name``,
  ``module._name``);
* imports stay at module level, except :data:`LAZY` (each with its reason) and imports of what
  needs an optional extra (:data:`EXTRAS`, and the project modules that import one at module level)
  that the importing module does not already need at module level.
"""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The layers, lowest first: each may import only its own and those before it.
LAYERS = ["hearts_env", "agents", "train", "eval", "export", "hearts_app"]

#: Third-party modules of the optional extras (pyproject's optional-dependencies), by dotted prefix:
#: a function may import them late, so that what does not need them runs without them.
EXTRAS = {
    "torch": "train/export extras (policies, checkpoints, training)",
    "torch.utils.tensorboard": "tensorboard (train extra), for a training run's logs only",
    "onnx": "export extra",
    "onnxscript": "export extra (torch's ONNX exporter)",
    "onnxruntime": "export extra (onnx: agents)",
    "ray": "cluster extra (the Ray backend)",
    "fastapi": "serve extra",
    "fastapi_offline": "serve extra (the API docs' scripts, served without a CDN)",
    "uvicorn": "serve extra",
    "httptools": "serve extra (uvicorn's HTTP parser, which the connection bounds build on)",
    "playwright": "test extra (the static build's timing in Chromium, export/web_timing.py)",
    "aiohttp": "serve's load test client (serve and test extras)",
    "pyspiel": "bench extra (OpenSpiel)",
}

#: Imports inside a function other than extras: (file, imported module) -> why it is there.
LAZY = {
    ("hearts_env/gym.py", "agents"): "an opponent given as a spec string is built by agents.make, "
                                     "which sits above the environments (DESIGN.md section 4)",
}

#: Upward imports the design allows (inside a function only): (file, layer) -> why.
UPWARD = {
    ("hearts_env/gym.py", "agents"): LAZY[("hearts_env/gym.py", "agents")],
}


@dataclasses.dataclass(frozen=True)
class Import:
    file: str  # path relative to ROOT
    line: int
    target: str  # the imported module: a project module (dotted) or a third-party/stdlib name
    names: tuple[str, ...]  # the names taken from it that are not modules (``from target import a, b``)
    in_function: bool
    type_only: bool  # under ``if TYPE_CHECKING:``: never run

    @property
    def at_module_level(self) -> bool:
        return not self.in_function and not self.type_only


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def project_files() -> dict[str, Path]:
    """Module name -> file, for every .py file of the layers."""
    files = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            files[module_name(path)] = path
    return files


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


class _Imports(ast.NodeVisitor):
    """Every import of one file, resolved to project modules where it names one."""

    def __init__(self, path: Path, modules: dict[str, Path]):
        self.path, self.modules = path, modules
        self.name = module_name(path)
        self.package = self.name if path.name == "__init__.py" else self.name.rpartition(".")[0]
        self.found: list[Import] = []
        self.depth = 0
        self.type_only = 0
        self.aliases: dict[str, str] = {}  # local name -> project module it is bound to

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node):
        test = node.test
        checking = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        self.type_only += checking
        for child in node.body:
            self.visit(child)
        self.type_only -= checking
        for child in node.orelse:
            self.visit(child)

    def add(self, node, target: str, names=()):
        self.found.append(Import(rel(self.path), node.lineno, target, tuple(names), self.depth > 0, self.type_only > 0))

    def visit_Import(self, node):
        for alias in node.names:
            self.add(node, alias.name)
            if alias.name in self.modules:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:  # ``import a.b.c`` binds ``a``, and ``a.b.c`` reads through it
                    top = alias.name.split(".")[0]
                    self.aliases.setdefault(top, top)

    def visit_ImportFrom(self, node):
        if node.level:
            base = self.package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = f"{base}.{node.module}" if node.module else base
        else:
            base = node.module or ""
        names = []
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if sub in self.modules:
                self.add(node, sub)
                self.aliases[alias.asname or alias.name] = sub
            else:
                names.append(alias.name)
        if names or not node.names:
            self.add(node, base, names)


@cache
def imports_of(module: str) -> tuple[list[Import], dict[str, str], ast.Module]:
    modules = project_files()
    path = modules[module]
    tree = ast.parse(path.read_text(), filename=str(path))
    visitor = _Imports(path, modules)
    visitor.visit(tree)
    return visitor.found, visitor.aliases, tree


def extra_of(target: str) -> str | None:
    """The :data:`EXTRAS` entry a third-party import belongs to (the longest dotted prefix), or None."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in EXTRAS:
            return ".".join(parts[:i])
    return None


def module_of(file: str) -> str:
    return module_name(ROOT / file)


def project_target(target: str) -> str | None:
    """The project module an import names (``a.b.c`` is a project module, or ``a.b`` when ``c`` is not)."""
    modules = project_files()
    return target if target in modules else None


def layer_of(module: str) -> str:
    return module.split(".")[0]


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports at module level."""
    graph = {}
    for module in project_files():
        found, _, _ = imports_of(module)
        graph[module] = {imp.target for imp in found
                         if imp.at_module_level and project_target(imp.target) and imp.target != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def describe_circle(component: list[str], graph: dict[str, set[str]]) -> str:
    """The component's modules and, per module, the lines that import the others."""
    lines = []
    for module in component:
        found, _, _ = imports_of(module)
        for imp in found:
            if imp.at_module_level and imp.target in component and imp.target != module:
                lines.append(f"{imp.file}:{imp.line} imports {imp.target}")
    return " <-> ".join(component) + "\n    " + "\n    ".join(sorted(set(lines)))


def test_no_circle_through_module_level_imports():
    graph = module_graph()
    found = [describe_circle(c, graph) for c in circles(graph)]
    assert not found, "files that import each other (directly or round a circle):\n" + "\n".join(found)


def test_no_two_files_import_each_other_anywhere():
    """Not even through an import inside a function (DESIGN.md: no two files import each other)."""
    imports = {}
    for module in project_files():
        found, _, _ = imports_of(module)
        imports[module] = {imp.target: imp for imp in found if project_target(imp.target) and imp.target != module}
    wrong = sorted(f"{imports[a][b].file}:{imports[a][b].line} imports {b} and "
                   f"{imports[b][a].file}:{imports[b][a].line} imports {a}"
                   for a in imports for b in imports[a] if a < b and a in imports.get(b, {}))
    assert not wrong, "\n".join(wrong)


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_its_own_and_lower_layers(layer):
    """Anywhere in a file (module level or inside a function), except :data:`UPWARD`."""
    above = set(LAYERS[LAYERS.index(layer) + 1:])
    wrong = []
    for module in project_files():
        if layer_of(module) != layer:
            continue
        found, _, _ = imports_of(module)
        for imp in found:
            target = imp.target.split(".")[0]
            if target in above and (imp.file, target) not in UPWARD:
                wrong.append(f"{imp.file}:{imp.line} imports {imp.target} ({target} is above {layer})")
            elif target in above and not imp.in_function:
                wrong.append(f"{imp.file}:{imp.line} imports {imp.target} at module level ({target} is above {layer})")
    assert not wrong, "\n".join(wrong)


def private_uses(module: str) -> list[str]:
    """``from x import _name`` of another module's private name, and ``module._name``."""
    modules = project_files()
    found, aliases, tree = imports_of(module)
    out = []
    for imp in found:
        if project_target(imp.target) and imp.target != module:
            for name in imp.names:
                if is_private(name):
                    out.append(f"{imp.file}:{imp.line} imports {name} from {imp.target}")
        # A private module of a package is its package's own.
        if imp.target in modules and is_private(imp.target.rpartition(".")[2]):
            home = imp.target.rpartition(".")[0]
            if not (module == home or module.startswith(home + ".")):
                out.append(f"{imp.file}:{imp.line} imports the private module {imp.target}")

    def dotted(node) -> str | None:
        if isinstance(node, ast.Name):
            return aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = dotted(node.value)
            if base is not None and f"{base}.{node.attr}" in modules:
                return f"{base}.{node.attr}"
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = dotted(node.value)
            if owner is not None and owner != module:
                out.append(f"{rel(modules[module])}:{node.lineno} uses {owner}.{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and is_private(node.args[1].value)):
            owner = dotted(node.args[0])
            if owner is not None and owner != module:
                out.append(f"{rel(modules[module])}:{node.lineno} uses {owner}.{node.args[1].value} via {node.func.id}")
    return out


def test_no_file_takes_another_modules_private_names():
    wrong = [line for module in project_files() for line in private_uses(module)]
    assert not wrong, "\n".join(wrong)


@cache
def extras_needed(module: str) -> frozenset[str]:
    """The extras (:data:`EXTRAS`) a project module imports at module level, itself or through the
    project modules it imports."""
    seen, todo, need = set(), [module], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        found, _, _ = imports_of(current)
        for imp in found:
            if not imp.at_module_level:
                continue
            if project_target(imp.target):
                todo.append(imp.target)
                # ``from a.b import c`` also runs a/__init__.py and a/b/__init__.py
                parts = imp.target.split(".")
                todo.extend(".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in project_files())
            elif extra_of(imp.target):
                need.add(extra_of(imp.target))
    return frozenset(need)


def lazy_reason(imp: Import) -> str | None:
    """Why an import inside a function may stay there, or None: an extra (or a project module that
    needs one) that the importing module does not already need at module level, or :data:`LAZY`."""
    top = imp.target.split(".")[0]
    if (imp.file, top) in LAZY:
        return LAZY[(imp.file, top)]
    if (imp.file, imp.target) in LAZY:
        return LAZY[(imp.file, imp.target)]
    has = extras_needed(module_of(imp.file))
    extra = extra_of(imp.target)
    if extra and extra not in has:
        return EXTRAS[extra]
    if project_target(imp.target) and extras_needed(imp.target) - has:
        return "needs " + ", ".join(sorted(extras_needed(imp.target) - has))
    return None


def test_imports_inside_functions_only_where_allowed():
    wrong = []
    for module in project_files():
        found, _, _ = imports_of(module)
        for imp in found:
            if imp.in_function and lazy_reason(imp) is None:
                wrong.append(f"{imp.file}:{imp.line} imports {imp.target} inside a function")
    assert not wrong, "imports to move to module level (or to add to LAZY with a reason):\n" + "\n".join(wrong)


def test_every_layer_has_files():
    for layer in LAYERS:
        assert any(layer_of(m) == layer for m in project_files()), f"no Python files under {layer}/"


def test_importing_the_environments_loads_nothing_above_them():
    code = ("import sys, hearts_env, hearts_env.gym, hearts_env.aec, hearts_env.loop, hearts_env.worlds\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {LAYERS[1:]!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
