"""An app over a freshly migrated and seeded SQLite catalog, shared by the HTTP tests.

Planning calls never write, so one database serves the whole session.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.support import seeded_app


@pytest.fixture(scope="session")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with seeded_app(tmp_path_factory, "app") as flask_app:
        yield flask_app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
