"""The real server on loopback, started the way `make serve` starts it: a migrated and
seeded catalog, PROMETHEUS_MULTIPROC_DIR set by the starter, then gunicorn with
gunicorn.conf.py. Used by `make bench` and by the tests that need real workers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 35.0  # gunicorn's graceful_timeout is 30 s


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Server:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    multiproc_dir: Path
    database_url: str

    def log_lines(self) -> list[str]:
        return self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()

    def log_records(self) -> list[dict[str, Any]]:
        """Every stdout line as JSON (raises on a line that is not)."""
        return [json.loads(line) for line in self.log_lines() if line.strip()]

    def get(self, path: str, headers: Mapping[str, str] | None = None, timeout: float = 10.0) -> tuple[int, Any, bytes]:
        """One request on its own connection: (status, headers, body)."""
        request = urllib.request.Request(self.base_url + path, headers={"Connection": "close", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.headers, error.read()


def _run(args: list[str], env: Mapping[str, str]) -> None:
    result = subprocess.run(args, cwd=REPO_ROOT, env=dict(env), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")


def _wait_ready(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError("gunicorn exited during start-up:\n" + "\n".join(server.log_lines()[-30:]))
        try:
            status, _, _ = server.get("/readyz", timeout=2.0)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("gunicorn did not become ready:\n" + "\n".join(server.log_lines()[-30:]))


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (gunicorn's graceful shutdown), then SIGKILL to its process group if it hangs."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the group start_new_session made: ours alone
        process.wait(timeout=5)


@contextmanager
def running_server(
    workers: int,
    *,
    workdir: Path | None = None,
    env: Mapping[str, str] | None = None,
    prepare_multiproc_dir: Any = None,
    app_spec: str = "app:create_app()",
) -> Iterator[Server]:
    """gunicorn with `workers` workers (gunicorn.conf.py) on a free loopback port, over a fresh SQLite
    catalog in `workdir` (a temporary directory by default), or the `DATABASE_URL` of `env`
    (migrated and seeded first); stopped on exit. `app_spec` is the WSGI app gunicorn loads."""
    with tempfile.TemporaryDirectory(prefix="fleet-sizer-server-") as scratch:
        base = Path(workdir or scratch)
        base.mkdir(parents=True, exist_ok=True)
        multiproc_dir = base / "prometheus"
        multiproc_dir.mkdir(exist_ok=True)
        if prepare_multiproc_dir is not None:
            prepare_multiproc_dir(multiproc_dir)
        port = free_port()
        database_url = (env or {}).get("DATABASE_URL") or f"sqlite:///{base / 'fleet.sqlite3'}"
        full_env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "BIND_HOST": "127.0.0.1",
            "PORT": str(port),
            "WEB_CONCURRENCY": str(workers),
            "PROMETHEUS_MULTIPROC_DIR": str(multiproc_dir),
            **(env or {}),
        }
        flask = [sys.executable, "-m", "flask", "--app", "app"]
        _run([*flask, "migrate"], full_env)
        _run([*flask, "seed"], full_env)
        log_path = base / "gunicorn.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py", app_spec],
                cwd=REPO_ROOT,
                env=full_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server = Server(f"http://127.0.0.1:{port}", process, log_path, multiproc_dir, database_url)
        try:
            _wait_ready(server)
            yield server
        finally:
            stop(process)
