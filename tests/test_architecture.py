"""The layout's rules (docs/architecture.md), read from the source: the import graph has no
circle and no arrow that runs back up a layer, no module imports another's private names,
one module decides the backend, and the old module paths still import, with a warning."""

from __future__ import annotations

import ast
import importlib
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Where each installed package lives in the repository (pyproject's package-dir).
PACKAGE_DIRS = {"startups_env": ROOT / "startups_env", "startups_env.agents": ROOT / "agents",
                "startups_env.train": ROOT / "train"}
# The layers, bottom first: a module may import its own layer and those below it.
LAYERS = (
    ("startups_env.checks", "startups_env.game"),
    ("startups_env.startups", "startups_env.startap"),
    ("startups_env.table",),
    ("startups_env.envs",),
    ("startups_env.tools",),
    ("startups_env.agents",),
    ("startups_env.train",),
)
# The package's front door re-exports from the layers (and serves the old paths).
FACADES = {"startups_env", "startups_env._moved"}


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts or (package == "startups_env" and path.parts[len(folder.parts)] in
                                               ("agents", "train")):
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts))
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (imports for type
    checkers only, which make no arrow at run time)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            continue
        yield node
        yield from _runtime_nodes(node)


def _imports(name: str, path: pathlib.Path) -> set[str]:
    """The package's modules that ``name`` imports at run time, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            # (a module's own packages are imported before it: no arrow to them)
            if candidate and not (name + ".").startswith(candidate + "."):
                targets.add(candidate)
    return targets


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    for depth, prefixes in enumerate(LAYERS):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return depth
    raise AssertionError(f"{name} is in no layer of LAYERS: place it in docs/architecture.md and here")


def test_every_module_has_a_layer():
    for name in MODULES:
        if name not in FACADES:
            _layer(name)


def test_no_import_runs_back_up_a_layer():
    upward = [f"{name} -> {target}" for name, targets in GRAPH.items() if name not in FACADES
              for target in targets if target not in FACADES and _layer(target) > _layer(name)]
    assert not upward, upward


def test_the_import_graph_has_no_circle():
    state: dict[str, int] = {}  # 1 on the path being explored, 2 done

    def visit(name, path):
        state[name] = 1
        for target in sorted(GRAPH.get(name, ())):
            if state.get(target) == 1:
                raise AssertionError("import circle: " + " -> ".join(path[path.index(target):] + [target]))
            if target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])


def test_no_module_imports_another_modules_private_names():
    private = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("startups_env"):
                private += [f"{name}: {alias.name} from {node.module}" for alias in node.names
                            if alias.name.startswith("_") and node.module + "." + alias.name not in FACADES]
    assert not private, private


def test_one_module_decides_the_backend():
    """Everything else is handed the backend object (``sim.engine``) or asks the simulator."""
    branch = re.compile(r"backend\s*[!=]=\s*['\"]|resolve_backend\(|\bbackend_class\(")
    places = {str(path.relative_to(ROOT)) for name, path in MODULES.items()
              for line in path.read_text().splitlines()
              if branch.search(line) and not line.lstrip().startswith(("def ", "#"))}
    assert places <= {"startups_env/startups/backend.py", "startups_env/startups/simulator.py",
                      "agents/search/backends.py", "startups_env/startap/backend.py"}, sorted(places)


@pytest.mark.parametrize("old, new, name", [("core", "startups_env.startups.state", "State"),
                                            ("core", "startups_env.checks", "is_int"),
                                            ("aec", "startups_env.envs.aec", "raw_env"),
                                            ("kernels", "startups_env.startups.numba_backend", "step_game")])
def test_an_old_module_path_still_imports_the_same_objects_with_a_warning(old, new, name):
    sys.modules.pop(f"startups_env.{old}", None)
    with pytest.warns(FutureWarning, match=f"startups_env.{old} has moved"):
        module = importlib.import_module(f"startups_env.{old}")
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


def test_an_old_command_path_still_runs():
    out = subprocess.run([sys.executable, "-W", "ignore", "-m", "startups_env.tools.replay", "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage" in out.stdout
