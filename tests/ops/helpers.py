"""What the deployment files are checked against: the app's routes, gunicorn's settings as
gunicorn.conf.py computes them, the Dockerfile as Docker's own parser reads it, and what
`make serve` runs."""

from __future__ import annotations

import os
import re
import runpy
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dockerfile
from flask import Flask

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
COMPOSE_FILE = REPO / "docker-compose.yml"
KUBERNETES_DIR = REPO / "deploy" / "kubernetes"
MAKEFILE = REPO / "Makefile"


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def gunicorn_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """gunicorn.conf.py's module globals, evaluated under `env` (as gunicorn itself reads it)."""
    with environment(env):
        return runpy.run_path(str(REPO / "gunicorn.conf.py"))


def get_routes(app: Flask) -> set[str]:
    """Paths the app answers GET on."""
    return {rule.rule for rule in app.url_map.iter_rules() if "GET" in (rule.methods or set())}


def make_serve_gunicorn_args() -> list[str]:
    """The arguments `make serve` gives gunicorn (after the executable)."""
    recipe = re.search(r"^serve:.*\n((?:\t.*\n)+)", MAKEFILE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert recipe, "Makefile has no serve recipe"
    for line in recipe.group(1).splitlines():
        if "gunicorn" in line and "--config" in line:
            words = shlex.split(line.strip().rstrip("\\"))
            start = next(i for i, word in enumerate(words) if word.rsplit("/", 1)[-1] == "gunicorn")
            return words[start + 1 :]
    raise AssertionError("`make serve` runs no gunicorn --config")


# --- the Dockerfile ---------------------------------------------------------------------------


def dockerfile_stages() -> list[list[dockerfile.Command]]:
    """The Dockerfile's instructions split into build stages (each starting with FROM)."""
    stages: list[list[dockerfile.Command]] = []
    for command in dockerfile.parse_file(str(DOCKERFILE)):
        if command.cmd == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(command)
    return stages


def final_stage() -> list[dockerfile.Command]:
    return dockerfile_stages()[-1]


def instructions(stage: list[dockerfile.Command], name: str) -> list[dockerfile.Command]:
    return [command for command in stage if command.cmd == name]


def image_env() -> dict[str, str]:
    """ENV of the final stage (`ENV A=1 B=2` and `ENV A 1` alike, as the parser splits them)."""
    env: dict[str, str] = {}
    for command in instructions(final_stage(), "ENV"):
        pairs = command.value
        env.update(zip(pairs[::2], pairs[1::2], strict=True))
    return env


def build_args() -> dict[str, str]:
    """Global ARG defaults (before the first FROM)."""
    args: dict[str, str] = {}
    for command in dockerfile.parse_file(str(DOCKERFILE)):
        if command.cmd == "FROM":
            break
        if command.cmd == "ARG":
            name, _, default = command.value[0].partition("=")
            args[name] = default
    return args


def base_images() -> list[str]:
    """Every FROM image with global ARGs substituted; stage names are not images."""
    args = build_args()
    stage_names: set[str] = set()
    images = []
    for stage in dockerfile_stages():
        source, *rest = stage[0].value
        for name, value in args.items():
            source = source.replace(f"${{{name}}}", value).replace(f"${name}", value)
        if source not in stage_names:
            images.append(source)
        if len(rest) == 2 and rest[0].upper() == "AS":
            stage_names.add(rest[1])
    return images


def image_tag(image: str) -> str | None:
    """`postgres:15-bookworm` -> `15-bookworm`; None when the image names no tag or digest."""
    if "@" in image:
        return image.split("@", 1)[1]
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None
