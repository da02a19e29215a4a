"""While the database cannot be reached, planning answers from the worker's copy and says so,
writes answer 503 with Retry-After, the copy is retried with backoff, and recovery is automatic.

In process, over SQLite: new connections are refused (as PostgreSQL refuses them for a
dropped or renamed database) and the pool is emptied. The same against real gunicorn and
PostgreSQL, renamed and frozen: tests/ops/test_database_faults.py.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from prometheus_client import REGISTRY
from sqlalchemy import event

from app import create_app
from app.catalog import cache

TOKEN = "outage-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"
FLEET = "/v1/fleet?model=llama-3.2-1b&requests_per_day=1e5"
STALE = "catalog served from memory: the database is unreachable since"


class Switch:
    def __init__(self) -> None:
        self.down = False
        self.attempts = 0


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[tuple[Flask, Switch]]:
    app = create_app({"database_url": f"sqlite:///{tmp_path / 'catalog.sqlite3'}", "api_tokens": (TOKEN,)})
    runner = app.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        assert runner.invoke(args=command).exit_code == 0
    engine = app.extensions["fleet_sizer"]["engine"]
    switch = Switch()

    @event.listens_for(engine, "do_connect")
    def _refuse(*_: Any) -> None:
        switch.attempts += 1
        if switch.down:
            raise sqlite3.OperationalError("unable to open database file")

    yield app, switch
    engine.dispose()


def _stale_answers() -> float:
    return REGISTRY.get_sample_value("fleet_sizer_catalog_stale_answers_total") or 0.0


def test_planning_answers_from_memory_and_writes_answer_503(
    worker: tuple[Flask, Switch], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, switch = worker
    client = app.test_client()
    for path in (FIT, FLEET):
        response = client.get(path)
        assert response.status_code == 200 and not any(STALE in w for w in response.get_json()["warnings"])

    offset = [0.0]
    monkeypatch.setattr(cache.time, "monotonic", lambda: time.perf_counter() + offset[0] + 1e6)
    switch.down = True
    app.extensions["fleet_sizer"]["engine"].dispose()
    before = _stale_answers()
    for path in (FIT, FLEET, f"{FIT}&concurrency=3"):
        response = client.get(path)
        assert response.status_code == 200, response.get_json()
        assert any(STALE in w for w in response.get_json()["warnings"]), response.get_json()["warnings"]
    assert _stale_answers() >= before + 3
    # One failed check, then backoff: the next requests do not try the database again.
    tried = switch.attempts
    for _ in range(5):
        assert client.get(FIT).status_code == 200
    assert switch.attempts == tried

    write = client.patch("/v1/models/llama-3.1-8b", json={"name": "x"}, headers={**AUTH, "If-Match": '"1"'})
    assert write.status_code == 503
    assert write.mimetype == "application/problem+json"
    assert int(write.headers["Retry-After"]) > 0
    assert client.get("/readyz").status_code == 503
    assert client.get("/livez").status_code == 200 and client.get("/healthz").status_code == 200

    switch.down = False
    offset[0] += cache.DEFAULT_RETRY_MAX_S + 1
    response = client.get(FIT)
    assert response.status_code == 200
    assert not any(STALE in w for w in response.get_json()["warnings"])
    assert client.get("/readyz").status_code == 200


def test_without_a_copy_planning_by_slug_answers_503(worker: tuple[Flask, Switch]) -> None:
    app, switch = worker
    switch.down = True
    app.extensions["fleet_sizer"]["engine"].dispose()
    response = app.test_client().get(FIT)
    assert response.status_code == 503
    assert response.headers["Retry-After"]
