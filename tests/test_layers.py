"""The package's layering, read from the source with `ast` (every import,
including those inside functions): no two of deeplink_gen's subpackages or
top-level modules import each other, directly or around a cycle; the stages
import only stages before them (load, validate, plan, render, output), so
validate imports neither plan nor render and load imports no later stage;
and what sits below the stages (model/, interfaces/, translate/,
output_paths.py, ...) imports no stage."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import REPO

PACKAGE = "deeplink_gen"
STAGES = ("load", "validate", "plan", "render", "output")
# What runs the stages; everything else is below them.
DRIVERS = ("pipeline", "commands", "cli", "__main__")


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(root: Path, module: str) -> str | None:
    """The subpackage or top-level module of *root* that *module* is in; None for the package itself."""
    parts = module.split(".")
    if parts[0] != root.name or len(parts) < 2:
        return None
    return parts[1]


def _imported(root: Path, module: str, is_package: bool, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = module.split(".")
        anchor = anchor if is_package else anchor[:-1]
        anchor = anchor[:len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    if base == root.name:
        # `from deeplink_gen import x`: a module when x is one, else a name of the package itself.
        return [f"{base}.{a.name}" for a in node.names
                if (root / f"{a.name}.py").is_file() or (root / a.name / "__init__.py").is_file()]
    return [base]


def import_graph(root: Path) -> dict[str, set[str]]:
    """For each subpackage or top-level module of the package at *root*, the others it imports."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = _module_name(root, path)
        source = _unit(root, module)
        if source is None:
            continue
        targets = graph.setdefault(source, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            for name in _imported(root, module, path.name == "__init__.py", node):
                target = _unit(root, name)
                if target is not None and target != source:
                    targets.add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One path around each strongly connected group of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(_path_around(graph, set(group)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _path_around(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A cycle inside *group*, as the units it passes through, first repeated at the end."""
    start = min(group)
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in group)
        back = next((w for w in nxt if w in seen), None)
        if back is not None:
            return path[path.index(back):] + [back]
        path.append(nxt[0])
        seen.add(nxt[0])


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import that goes the wrong way between layers."""
    out = []
    for unit, targets in sorted(graph.items()):
        if unit in STAGES:
            later = set(STAGES[STAGES.index(unit):]) | set(DRIVERS)
            out += [f"{unit} imports {t}, which comes after it" for t in sorted(targets & later)]
        elif unit not in DRIVERS:
            out += [f"{unit} sits below the stages but imports {t}" for t in sorted(targets & set(STAGES + DRIVERS))]
    return out


def test_no_cycles_between_subpackages():
    graph = import_graph(REPO / PACKAGE)
    assert set(STAGES) <= set(graph), sorted(graph)
    assert cycles(graph) == []


def test_stages_import_only_earlier_stages():
    graph = import_graph(REPO / PACKAGE)
    assert violations(graph) == []
    assert not graph["validate"] & {"plan", "render"}
    assert not graph["load"] & {"validate", "plan", "render", "output"}


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / PACKAGE
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_see_a_wrong_import(tmp_path):
    """Each kind of import the layering forbids is found, including one inside a function and a relative one."""
    root = _package(tmp_path, {
        "model/__init__.py": "",
        "load/__init__.py": "def f():\n    from deeplink_gen.render import x\n",
        "validate/__init__.py": "from ..plan import signature\n",
        "plan/__init__.py": "from deeplink_gen import model\n",
        "plan/signature.py": "import deeplink_gen.validate.names\n",
        "render/__init__.py": "",
        "output/__init__.py": "",
        "translate.py": "from deeplink_gen import plan\n",
    })
    graph = import_graph(root)
    assert cycles(graph) == [["plan", "validate", "plan"]]
    assert violations(graph) == [
        "load imports render, which comes after it",
        "translate sits below the stages but imports plan",
        "validate imports plan, which comes after it",
    ]
