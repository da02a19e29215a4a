"""The shape of the house, held by reading the source: no import cycle anywhere in app/
(late imports inside functions count: they hide a cycle, they do not remove it), the sizing
core imports nothing but the standard library and itself, the planning layer never reads
Flask, and every view function fits on a screen."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"
# A view function longer than this does more than parse, call a service and render.
MAX_VIEW_LINES = 30
ROUTE_DECORATORS = frozenset({"route", "get", "post", "put", "patch", "delete"})


def module_name(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in APP.rglob("*.py")}


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imports(name: str) -> Iterator[str]:
    """The app modules `name` imports, at any depth of its code."""
    path = MODULES[name]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package(name, path).split(".")
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            # `from pkg import mod` imports the module pkg.mod; `from mod import name`, mod.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        yield from (target for target in targets if target in MODULES and target != name)


def cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    graph = {name: sorted(set(imports(name))) for name in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for child in graph[node]:
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in on_stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_the_module_map_is_read() -> None:
    assert {"app.api.lookup", "app.planning.replica", "app.sizing.plan", "app.catalog.cache"} <= set(MODULES)
    assert "app.planning.context" in set(imports("app.planning.replica"))
    assert "app.catalog.snapshots" in set(imports("app.api.lookup"))


def test_no_import_cycle_in_app() -> None:
    assert cycles() == []


def test_the_cycle_finder_finds_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: two modules importing each other (one of them late) are a cycle."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "one.py").write_text("from app import two\n")
    (tmp_path / "app" / "two.py").write_text("def f():\n    from .one import x\n")
    monkeypatch.setattr(sys.modules[__name__], "APP", tmp_path / "app")
    monkeypatch.setattr(sys.modules[__name__], "MODULES", {module_name(p): p for p in (tmp_path / "app").rglob("*.py")})
    assert cycles() == [["app.one", "app.two"]]


def _import_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            roots.add((node.module or "").split(".")[0])
    return roots


def test_the_sizing_core_imports_only_the_standard_library_and_itself() -> None:
    for name, path in MODULES.items():
        if name.startswith("app.sizing"):
            assert all(root in sys.stdlib_module_names or root == "app" for root in _import_roots(path)), name
            assert all(target.startswith("app.sizing") for target in imports(name)), name


def test_the_planning_layer_reads_no_http() -> None:
    """Services take typed requests and snapshots: no Flask, no request, no view."""
    for name, path in MODULES.items():
        if name.startswith("app.planning"):
            assert not _import_roots(path) & {"flask", "werkzeug"}, name
            assert not any(target.startswith("app.api.") and "schemas" not in target for target in imports(name)), name


def _views() -> Iterator[tuple[str, ast.FunctionDef]]:
    for name, path in MODULES.items():
        if not name.startswith("app.api"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in ROUTE_DECORATORS
                for d in node.decorator_list
            ):
                yield name, node


def test_every_view_function_fits_on_a_screen() -> None:
    views = list(_views())
    assert len(views) >= 12  # the finder sees the blueprints' views
    long = [
        f"{name}.{node.name}: {(node.end_lineno or node.lineno) - node.lineno + 1} lines"
        for name, node in views
        if (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_VIEW_LINES
    ]
    assert long == []
