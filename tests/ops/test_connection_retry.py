"""On PostgreSQL: a single connection cut under a catalog check (its backend terminated after
the pool's ping passed, before the query ran) is retried once on a new connection, so the
answer carries no outage warning; only a second failure in a row is an
outage, served from memory and said so."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from app import create_app
from app.api import lookup
from app.catalog import cache
from tests.catalog.conftest import drop_everything, postgres_url_or_skip

pytestmark = pytest.mark.postgres
FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"
FROM_MEMORY = "served from memory"


@pytest.fixture(scope="module")
def app() -> Iterator[Flask]:
    url = postgres_url_or_skip()
    drop_everything(url)
    flask_app = create_app({"database_url": url})
    runner = flask_app.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        result = runner.invoke(args=command)
        assert result.exit_code == 0, result.output
    yield flask_app
    flask_app.extensions["fleet_sizer"]["engine"].dispose()


def terminate_before_fingerprints(flask_app: Flask, times: int) -> list[int]:
    """Terminate the backend of the next `times` fingerprint queries just before each runs: the
    pool has pinged the connection, then the server ends it (pg_terminate_backend)."""
    engine = flask_app.extensions["fleet_sizer"]["engine"]
    admin_url = make_url(str(engine.url.render_as_string(hide_password=False)))
    admin = create_engine(admin_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    killed: list[int] = []

    def cut(connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if len(killed) >= times or "count(" not in statement.lower():
            return
        pid = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with admin.connect() as other:
            other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        killed.append(pid)

    event.listen(engine, "before_cursor_execute", cut)
    return killed


CHECKS = itertools.count(1)


def fit_warnings(flask_app: Flask, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    # Past the check interval (and past any earlier test's clock): this request compares the
    # copy with the database.
    later = cache.time.monotonic() + 1000 * next(CHECKS) * cache.CHECK_INTERVAL_S
    monkeypatch.setattr(cache.time, "monotonic", lambda: later)
    response = flask_app.test_client().get(FIT)
    assert response.status_code == 200
    warnings: list[str] = response.get_json()["warnings"]
    return warnings


def test_one_terminated_connection_is_retried_and_answers_carry_no_outage(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert app.test_client().get(FIT).status_code == 200  # the copy is loaded
    killed = terminate_before_fingerprints(app, times=1)
    warnings = fit_warnings(app, monkeypatch)
    assert len(killed) == 1  # the check's connection was cut under it
    assert not [w for w in warnings if FROM_MEMORY in w], warnings
    with app.app_context():
        assert lookup._caches(app)[lookup.CATALOG].outage.since is None


def test_two_cut_in_a_row_are_an_outage_served_from_memory(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    assert app.test_client().get(FIT).status_code == 200
    killed = terminate_before_fingerprints(app, times=2)
    warnings = fit_warnings(app, monkeypatch)
    assert len(killed) == 2
    assert [w for w in warnings if FROM_MEMORY in w], warnings
