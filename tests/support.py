"""Shared test scaffolding."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
    runner = flask_app.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        result = runner.invoke(args=command)
        assert result.exit_code == 0, result.output
    try:
        yield flask_app
    finally:
        flask_app.extensions["fleet_sizer"]["engine"].dispose()
