"""What the browser tests share: a real gunicorn over a freshly migrated and seeded SQLite
catalog, Debian's Chromium driven by Playwright, and a page that fails its test on an uncaught
error or a load the Content-Security-Policy blocked. Each is module-scoped: one server and one
browser per test module.

Chromium comes from Debian (`make test` installs it); no browser is ever downloaded. Where it
is missing the tests skip, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    from playwright.sync_api import BrowserContext, Page, sync_playwright
except ImportError:  # reported by the fixtures: a skip here, a failure in CI
    sync_playwright = None

from tests.support import CHROMIUM, CHROMIUM_FLAGS, browser_unavailable

REPO = Path(__file__).resolve().parents[2]
VIEWPORT = {"width": 1280, "height": 800}
READY_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_ready(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"gunicorn exited with {process.returncode}:\n{log.read_text(errors='replace')[-4000:]}")
        try:
            with urllib.request.urlopen(f"{base_url}/readyz", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    pytest.fail(f"/readyz did not answer 200 in {READY_TIMEOUT_S}s:\n{log.read_text(errors='replace')[-4000:]}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn with two workers on a free loopback port, over a migrated and seeded SQLite."""
    home = tmp_path_factory.mktemp("browser-server")
    (home / "metrics").mkdir()
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{home / 'fleet.sqlite3'}",
        "PORT": str(port),
        "BIND_HOST": "127.0.0.1",
        "WEB_CONCURRENCY": "2",
        # As `make serve` starts it: metrics in multiprocess mode, in a directory of its own.
        "PROMETHEUS_MULTIPROC_DIR": str(home / "metrics"),
    }
    bin_dir = Path(sys.executable).parent  # the venv's bin/, beside this interpreter
    for command in ("migrate", "seed"):
        done = subprocess.run(
            [str(bin_dir / "flask"), "--app", "app", command],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"flask {command}:\n{done.stdout}\n{done.stderr}"
    log_path = home / "gunicorn.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(bin_dir / "gunicorn"), "--config", "gunicorn.conf.py", "app:create_app()"],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            base_url = f"http://127.0.0.1:{port}"
            wait_ready(base_url, process, log_path)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Debian's Chromium with a fresh profile, at 1280×800."""
    if sync_playwright is None:
        browser_unavailable("the playwright package is not installed (pip install -r requirements-dev.txt)")
    if not CHROMIUM.exists():
        browser_unavailable(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install -y chromium)")
    assert sync_playwright is not None
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport=VIEWPORT,  # type: ignore[arg-type]
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: BrowserContext, server: str) -> Iterator[Page]:
    page = browser.new_page()
    page.set_default_timeout(20_000)
    crashes: list[str] = []
    page.on("pageerror", lambda error: crashes.append(f"{error}\n{getattr(error, 'stack', '')}"))
    page.on(
        "console",
        lambda message: crashes.append(message.text) if "Content Security Policy" in message.text else None,
    )
    yield page
    page.close()
    assert crashes == [], f"uncaught errors or blocked loads in the page: {crashes}"
