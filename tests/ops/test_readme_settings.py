"""Every environment variable the service reads is documented in the README's settings table.

The names are found in the code itself (app/, migrations/, gunicorn.conf.py): the first
argument of `os.environ.get`, `os.environ[...]`, `os.getenv`, `env.get` and the config
module's `_int(env, ...)`/`_bool(env, ...)`, as a string or a module-level constant.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from .helpers import REPO

SOURCES = [
    *sorted((REPO / "app").rglob("*.py")),
    *sorted((REPO / "migrations").rglob("*.py")),
    REPO / "gunicorn.conf.py",
]
ENV_NAMES = {"environ", "env"}
CONFIG_READERS = {"_int", "_bool", "_float", "_str"}


def _constants(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _is_env(node: ast.expr) -> bool:
    """`os.environ`, `environ` or a parameter called `env`."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id in ENV_NAMES
    )


def _name_argument(node: ast.AST) -> ast.expr | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and _is_env(func.value) and node.args:
            return node.args[0]
        if isinstance(func, ast.Attribute) and func.attr == "getenv" and node.args:
            return node.args[0]
        if isinstance(func, ast.Name) and func.id in CONFIG_READERS and len(node.args) >= 2:
            return node.args[1]
    if isinstance(node, ast.Subscript) and _is_env(node.value):
        return node.slice
    return None


def variables_read(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = _constants(tree)
    for node in ast.walk(tree):
        argument = _name_argument(node)
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            yield argument.value
        elif isinstance(argument, ast.Name) and argument.id in constants:
            yield constants[argument.id]


def documented_settings() -> set[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", section, flags=re.MULTILINE))


def test_the_scan_finds_the_known_settings() -> None:
    read = {name for path in SOURCES for name in variables_read(path)}
    assert {"DATABASE_URL", "PORT", "WEB_CONCURRENCY", "API_TOKENS"} <= read


def test_every_setting_the_service_reads_is_in_the_readme() -> None:
    read = {name: path.relative_to(REPO) for path in SOURCES for name in variables_read(path)}
    missing = {name: str(path) for name, path in read.items() if name not in documented_settings()}
    assert missing == {}, "add these to the README's settings table"
