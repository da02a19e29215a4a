"""The Dockerfile, read by Docker's own parser (no Docker engine runs here): a slim, pinned,
non-root image that starts gunicorn exactly as `make serve` does, with a healthcheck that
really answers, no build tools, and every file the app opens."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from flask import Flask
from werkzeug.serving import make_server

from .helpers import (
    DOCKERIGNORE,
    REPO,
    base_images,
    dockerfile_stages,
    final_stage,
    get_routes,
    gunicorn_settings,
    image_env,
    image_tag,
    instructions,
    make_serve_gunicorn_args,
)


def test_base_images_are_slim_and_pinned_to_this_python() -> None:
    images = base_images()
    assert images, "no FROM"
    for image in images:
        tag = image_tag(image)
        assert tag and tag != "latest", f"{image}: name a tag (never latest)"
    runtime = base_images()[-1]
    assert "slim" in runtime, f"{runtime}: the runtime stage starts from a slim image"
    assert f"python:{sys.version_info.major}.{sys.version_info.minor}-" in runtime, "the Python the tests run on"


def test_the_service_runs_as_a_numeric_unprivileged_user() -> None:
    stage = final_stage()
    users = instructions(stage, "USER")
    assert users, "no USER: the container would run as root"
    user = users[-1].value[0]
    uid, _, gid = user.partition(":")
    # Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
    assert uid.isdigit() and int(uid) != 0, user
    assert not gid or (gid.isdigit() and int(gid) != 0), user
    position = stage.index(users[-1])
    assert all(command.cmd not in {"CMD", "ENTRYPOINT"} for command in stage[:position]), "USER comes before CMD"


def test_cmd_is_exec_form_and_runs_gunicorn_as_make_serve_does() -> None:
    stage = final_stage()
    assert not instructions(stage, "ENTRYPOINT"), "CMD alone: gunicorn is PID 1"
    (cmd,) = instructions(stage, "CMD")
    assert cmd.json, "exec form (a JSON array): a shell form CMD would keep SIGTERM from gunicorn"
    executable, *args = cmd.value
    assert executable == "gunicorn"
    assert args == make_serve_gunicorn_args()


def test_exposed_port_is_where_gunicorn_binds() -> None:
    env = image_env()
    (expose,) = instructions(final_stage(), "EXPOSE")
    assert expose.value == (env["PORT"],)
    bind = gunicorn_settings({"BIND_HOST": env["BIND_HOST"], "PORT": env["PORT"]})["bind"]
    assert bind == f"0.0.0.0:{env['PORT']}", "reachable from outside the container"


def test_metrics_directory_exists_and_belongs_to_the_service_user() -> None:
    env = image_env()
    directory = env["PROMETHEUS_MULTIPROC_DIR"]
    uid = instructions(final_stage(), "USER")[-1].value[0].split(":")[0]
    runs = " ".join(command.value[0] for command in instructions(final_stage(), "RUN"))
    assert re.search(rf"mkdir -p [^&]*{re.escape(directory)}", runs), "created in the image"
    assert re.search(rf"chown {uid}(:\d+)? [^&]*{re.escape(directory)}", runs), "writable by the service user"


def test_no_build_tools_reach_the_final_image() -> None:
    *builders, final = dockerfile_stages()
    for command in instructions(final, "RUN"):
        assert not re.search(r"apt-get install|apk add|pip install|gcc|build-essential", command.value[0]), command
    copied_from = [c for c in instructions(final, "COPY") if any(f.startswith("--from=") for f in c.flags)]
    assert [c.value for c in copied_from] == [("/opt/venv", "/opt/venv")], "only the virtualenv crosses over"
    installs = [c.value[0] for stage in builders for c in instructions(stage, "RUN") if "pip install" in c.value[0]]
    assert installs and all("--only-binary=:all:" in line for line in installs), "wheels only: nothing compiles"
    assert any("-r /tmp/requirements.txt" in line for line in installs), "the pinned runtime requirements"


def copied_sources() -> set[str]:
    """Build-context paths the final stage copies."""
    sources: set[str] = set()
    for stage in dockerfile_stages():
        for command in instructions(stage, "COPY") + instructions(stage, "ADD"):
            if not any(flag.startswith("--from=") for flag in command.flags):
                sources.update(path.rstrip("/") for path in command.value[:-1])
    return sources


def test_every_copied_path_exists_and_the_dockerignore_admits_exactly_those() -> None:
    sources = copied_sources()
    for source in sources:
        assert (REPO / source).exists(), source
    lines = [line.strip() for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()]
    rules = [line for line in lines if line and not line.startswith("#")]
    assert rules[0] == "*", ".dockerignore is an allow-list: everything out, then what the image needs back in"
    admitted = {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")}
    assert admitted == sources
    assert {"**/__pycache__", "**/*.pyc"} <= set(rules)


# What the app opens by path from the repository root: `REPO_ROOT / "x"` and
# `Path(__file__).resolve().parents[k] / "x"`.
ROOT_PATH = re.compile(r'(?:REPO_ROOT|Path\(__file__\)\.resolve\(\)\.parents\[(\d)\])\s*/\s*"([^"]+)"')


def files_the_app_opens() -> Iterator[str]:
    for path in (REPO / "app").rglob("*.py"):
        for match in ROOT_PATH.finditer(path.read_text(encoding="utf-8")):
            level, name = match.groups()
            base = REPO if level is None else path.parents[int(level)]
            target = (base / name).relative_to(REPO)
            yield target.parts[0]


def test_the_image_holds_every_file_the_app_opens() -> None:
    needed = set(files_the_app_opens()) - {"app", "instance"}  # app/ is copied whole; instance/ is runtime
    assert needed, "found no file references: the pattern above needs updating"
    assert needed <= copied_sources(), f"not copied into the image: {sorted(needed - copied_sources())}"


# --- the healthcheck, run for real against the app ---------------------------------------------


@pytest.fixture(scope="module")
def live_port(app: Flask) -> Iterator[int]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_port
    server.shutdown()
    thread.join(timeout=5)


def healthcheck_command() -> list[str]:
    (healthcheck,) = instructions(final_stage(), "HEALTHCHECK")
    assert healthcheck.json, "exec form: no shell needed in the image to check health"
    kind, *command = healthcheck.value
    assert kind == "CMD"
    return command


def run_healthcheck(port: int) -> int:
    executable, *args = healthcheck_command()
    assert executable == "python"
    env = {**os.environ, "PORT": str(port)}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, timeout=30).returncode


def test_healthcheck_probes_healthz_with_timings(app: Flask) -> None:
    (healthcheck,) = instructions(final_stage(), "HEALTHCHECK")
    flags = dict(flag.lstrip("-").split("=", 1) for flag in healthcheck.flags)
    assert {"interval", "timeout", "retries"} <= set(flags)
    command = " ".join(healthcheck_command())
    assert "/healthz" in command and "/healthz" in get_routes(app)


def test_healthcheck_passes_on_a_live_app_and_fails_without_one(live_port: int) -> None:
    assert run_healthcheck(live_port) == 0
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        free = closed.getsockname()[1]
    assert run_healthcheck(free) != 0
