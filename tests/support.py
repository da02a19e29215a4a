"""Shared test scaffolding."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app import create_app


@contextmanager
def seeded_app(tmp_path_factory: pytest.TempPathFactory, name: str, **config: Any) -> Iterator[Flask]:
    """An app on its own SQLite file, migrated with the real Alembic revisions and seeded
    from catalog_seed/ through the CLI commands `make serve` runs."""
    url = f"sqlite:///{tmp_path_factory.mktemp(name) / 'fleet.sqlite3'}"
    flask_app = create_app({"database_url": url, **config})
    flask_app.config["TESTING"] = True
    if os.environ.get("GOLDEN_RECORD"):
        from bench.golden import install_recorder

        install_recorder(flask_app, os.environ["GOLDEN_RECORD"])
    runner = flask_app.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        result = runner.invoke(args=command)
        assert result.exit_code == 0, result.output
    try:
        yield flask_app
    finally:
        flask_app.extensions["fleet_sizer"]["engine"].dispose()


# Debian's Chromium, started as the machine's probe ran it: without the background-networking
# flags it keeps calling hosts that the closed network refuses.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_unavailable(reason: str) -> None:
    """Skip on a developer's machine; fail in CI, where the browser tests must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the browser tests (`make test` installs Debian's chromium)")
    pytest.skip(reason)
