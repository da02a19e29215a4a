"""On PostgreSQL: what the API writes outlives the process, and concurrent writers lose
nothing silently.

These tests run the real app (create_app, the `migrate` command, HTTP writes) against a
database of their own, `fleet_sizer_restart` on the same server as TEST_DATABASE_URL: the
session-wide catalog fixture of conftest.py owns (and drops) the tables of the default one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from flask import Flask
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.pool import NullPool

from app import create_app
from app.catalog import writes
from app.catalog.db import make_engine

from .conftest import drop_everything, postgres_url_or_skip

pytestmark = pytest.mark.postgres

DATABASE = "fleet_sizer_restart"
TOKEN = "restart-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

MODEL = {
    "slug": "survivor-8b",
    "name": "Survivor 8B",
    "family": "llama",
    "params_total": 8_030_261_248,
    "layers": 32,
    "hidden_size": 4096,
    "attention_heads": 32,
    "kv_heads": 8,
    "vocab_size": 128256,
    "intermediate_size": 14336,
    "native_precision": "bf16",
    "max_context": 131072,
    "source": "restart test",
}


def _own_database(server_url: str) -> str:
    """The URL of DATABASE on the test server, created (outside a transaction) if missing."""
    admin = create_engine(server_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            exists = connection.execute(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": DATABASE})
            if exists.scalar() is None:
                # A concurrent run may create it meanwhile.
                with contextlib.suppress(ProgrammingError):
                    connection.execute(text(f'CREATE DATABASE "{DATABASE}"'))
    finally:
        admin.dispose()
    return make_url(server_url).set(database=DATABASE).render_as_string(hide_password=False)


@pytest.fixture
def database_url() -> Iterator[str]:
    url = _own_database(postgres_url_or_skip())
    drop_everything(url)
    yield url
    drop_everything(url)


def _start(url: str) -> Flask:
    app = create_app({"database_url": url, "api_tokens": (TOKEN,)})
    app.config["TESTING"] = True
    return app


def _stop(app: Flask) -> None:
    app.extensions["fleet_sizer"]["engine"].dispose()


def test_a_created_model_survives_an_app_restart(database_url: str) -> None:
    first = _start(database_url)
    try:
        migrated = first.test_cli_runner().invoke(args=["migrate"])
        assert migrated.exit_code == 0, migrated.output
        created = first.test_client().post("/v1/models", json=MODEL, headers=AUTH)
        assert created.status_code == 201, created.get_data(as_text=True)
    finally:
        _stop(first)

    second = _start(database_url)
    try:
        response = second.test_client().get("/v1/models/survivor-8b")
        assert response.status_code == 200
        assert response.get_json() == created.get_json()
        assert response.headers["ETag"] == created.headers["ETag"] == '"1"'
        assert second.test_client().get("/v1/models", query_string={"family": "llama"}).get_json()["total"] == 1
    finally:
        _stop(second)


def test_a_writer_overtaken_by_another_connection_gets_412(database_url: str) -> None:
    """Another connection commits between this request's read and its UPDATE; READ COMMITTED
    lets the UPDATE see the new version, match no row, and the request stores nothing."""
    app = _start(database_url)
    rival = make_engine(database_url)
    try:
        assert app.test_cli_runner().invoke(args=["migrate"]).exit_code == 0
        client = app.test_client()
        assert client.post("/v1/models", json=MODEL, headers=AUTH).status_code == 201
        real = writes.update_model

        def overtaken(row: Any, values: dict[str, Any]) -> None:
            with rival.begin() as connection:
                connection.execute(
                    text("UPDATE models SET name = 'rival', version = version + 1 WHERE slug = 'survivor-8b'")
                )
            real(row, values)

        with mock.patch.object(writes, "update_model", overtaken):
            response = client.patch(
                "/v1/models/survivor-8b", json={"name": "loser"}, headers={**AUTH, "If-Match": '"1"'}
            )
        assert response.status_code == 412
        after = client.get("/v1/models/survivor-8b")
        assert (after.get_json()["name"], after.headers["ETag"]) == ("rival", '"2"')
    finally:
        rival.dispose()
        _stop(app)
