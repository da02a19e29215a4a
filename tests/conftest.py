"""An app over a freshly migrated and seeded SQLite catalog, shared by the HTTP tests.

Planning calls never write, so one database serves the whole session.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app import create_app


@pytest.fixture(scope="session")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    url = f"sqlite:///{tmp_path_factory.mktemp('app') / 'fleet.sqlite3'}"
    flask_app = create_app({"database_url": url})
    flask_app.config["TESTING"] = True
    runner = flask_app.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        result = runner.invoke(args=command)
        assert result.exit_code == 0, result.output
    yield flask_app
    flask_app.extensions["fleet_sizer"]["engine"].dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
