"""The per-worker catalog copy behind planning: no ORM work per request, and every worker
answering from the new catalog after a write made anywhere: at once for a slug it did not
know, within cache.CHECK_INTERVAL_S for edits and deletions, at once in the writing worker.

Two apps over one SQLite file stand for two gunicorn workers: writes go through one
(`writer`), planning through the other (`reader`), whose copy and memo were warmed first.
The `clock` fixture moves lookup's monotonic clock instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event

from app import create_app
from app.api import lookup
from app.catalog import cache, queries, writes

TOKEN = "cache-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FIT_8B = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[tuple[Flask, Flask]]:
    url = f"sqlite:///{tmp_path / 'catalog.sqlite3'}"
    writer = create_app({"database_url": url, "api_tokens": (TOKEN,)})
    reader = create_app({"database_url": url, "api_tokens": (TOKEN,)})
    runner = writer.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        result = runner.invoke(args=command)
        assert result.exit_code == 0, result.output
    yield writer, reader
    for app in (writer, reader):
        app.extensions["fleet_sizer"]["engine"].dispose()


class Clock:
    """The fingerprint caches' view of time.monotonic, moved on by hand."""

    def __init__(self) -> None:
        self.offset = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.offset

    def pass_check_interval(self) -> None:
        self.offset += cache.CHECK_INTERVAL_S + 0.001


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(cache, "time", fake)
    return fake


@contextmanager
def statements(app: Flask) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    engine = app.extensions["fleet_sizer"]["engine"]
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def fit(client: FlaskClient, url: str = FIT_8B) -> dict[str, Any]:
    response = client.get(url)
    assert response.status_code == 200, response.get_data(as_text=True)
    body: dict[str, Any] = response.get_json()
    return body


def patch(client: FlaskClient, path: str, body: dict[str, Any]) -> None:
    etag = client.get(path).headers["ETag"]
    response = client.patch(path, json=body, headers={**AUTH, "If-Match": etag})
    assert response.status_code == 200, response.get_data(as_text=True)


def test_planning_loads_the_catalog_once_then_reads_no_rows(
    workers: tuple[Flask, Flask], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, reader = workers
    calls: list[str] = []
    for name in ("get_model", "get_gpu", "list_models", "list_gpus"):
        original = getattr(queries, name)
        monkeypatch.setattr(queries, name, lambda *a, _f=original, _n=name, **k: calls.append(_n) or _f(*a, **k))
    client = reader.test_client()
    for url in (
        FIT_8B,
        "/v1/throughput?model=llama-3.1-70b&gpu=a100-sxm-80gb",
        "/v1/fleet?model=llama-3.2-1b&requests_per_day=1e5",
    ):
        for nocache in range(5):
            assert client.get(f"{url}&_nocache={nocache}").status_code == 200
    assert sorted(calls) == ["list_gpus", "list_models"]


def test_within_the_interval_planning_touches_no_database(workers: tuple[Flask, Flask], clock: Clock) -> None:
    _, reader = workers
    client = reader.test_client()
    fit(client)
    with statements(reader) as seen:
        for nocache in range(5):
            fit(client, f"{FIT_8B}&_nocache={nocache}")
            fit(client, f"/v1/fleet?model=llama-3.2-1b&requests_per_day=1e5&_nocache={nocache}")
    assert seen == []
    clock.pass_check_interval()
    with statements(reader) as seen:
        fit(client)
    queries_run = [statement for statement in seen if statement != "BEGIN"]
    # The two fingerprints (catalog, calibrations), no reload.
    assert len(queries_run) == 2 and all("count(*)" in q for q in queries_run), queries_run
    assert "FROM engines" in queries_run[0] and "FROM calibrations" in queries_run[1]


def test_an_edit_through_one_worker_reaches_the_other_within_the_interval(
    workers: tuple[Flask, Flask], clock: Clock
) -> None:
    writer, reader = workers
    before = fit(reader.test_client())
    fit(reader.test_client())  # remembered by the reader's memo as well
    # 16 KV heads for 8: twice the cache per token, 3% more parameters (the k and v projections
    # grow by 32 x 2 x 4096 x 1024), inside the 5% its params_total may differ from its shape.
    patch(writer.test_client(), "/v1/models/llama-3.1-8b", {"kv_heads": 16})
    clock.pass_check_interval()
    after = fit(reader.test_client())
    assert after["kv_bytes_per_token"] == 2 * before["kv_bytes_per_token"]


def test_a_new_model_is_plannable_everywhere_at_once(workers: tuple[Flask, Flask], clock: Clock) -> None:
    """No clock movement: a slug the copy lacks makes the worker check before answering 404."""
    writer, reader = workers
    assert reader.test_client().get("/v1/fit?model=brand-new&gpu=h100-sxm").status_code == 404
    document = writer.test_client().get("/v1/models/llama-3.1-8b").get_json()
    document = {k: v for k, v in document.items() if k != "version"}
    response = writer.test_client().post("/v1/models", json={**document, "slug": "brand-new"}, headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert fit(reader.test_client(), "/v1/fit?model=brand-new&gpu=h100-sxm")["model"] == "brand-new"


def test_a_deleted_gpu_leaves_lookups_and_the_ranking(workers: tuple[Flask, Flask], clock: Clock) -> None:
    writer, reader = workers
    ranking = "/v1/fleet?model=llama-3.2-1b&requests_per_day=1e5&limit=500"
    assert "l4" in {row["gpu"] for row in reader.test_client().get(ranking).get_json()["options"]}
    etag = writer.test_client().get("/v1/gpus/l4").headers["ETag"]
    response = writer.test_client().delete("/v1/gpus/l4", headers={**AUTH, "If-Match": etag})
    assert response.status_code == 204
    assert writer.test_client().get("/v1/fit?model=llama-3.1-8b&gpu=l4").status_code == 404
    clock.pass_check_interval()
    assert reader.test_client().get("/v1/fit?model=llama-3.1-8b&gpu=l4").status_code == 404
    assert "l4" not in {row["gpu"] for row in reader.test_client().get(ranking).get_json()["options"]}


def test_a_mig_profile_edit_reaches_the_other_worker(workers: tuple[Flask, Flask], clock: Clock) -> None:
    writer, reader = workers
    url = "/v1/fit?model=llama-3.2-1b&gpu=a100-sxm-80gb&mig_profile=1g.10gb"
    assert fit(reader.test_client(), url)["memory_gb_per_gpu"] == 10
    profiles = writer.test_client().get("/v1/gpus/a100-sxm-80gb").get_json()["mig_profiles"]
    edited = [{**p, "memory_gb": 9.5} if p["name"] == "1g.10gb" else p for p in profiles]
    patch(writer.test_client(), "/v1/gpus/a100-sxm-80gb", {"mig_profiles": edited})
    clock.pass_check_interval()
    assert fit(reader.test_client(), url)["memory_gb_per_gpu"] == 9.5


def test_a_write_from_outside_the_service_is_seen(workers: tuple[Flask, Flask], clock: Clock) -> None:
    """The CLI, a migration or another replica writes straight to the database."""
    _, reader = workers
    before = fit(reader.test_client())
    sessions = reader.extensions["fleet_sizer"]["sessionmaker"]
    with sessions() as db, db.begin():
        row = queries.get_model(db, "llama-3.1-8b")
        assert row is not None
        writes.update_model(row, {"kv_heads": 4})
    clock.pass_check_interval()
    assert fit(reader.test_client())["kv_bytes_per_token"] == before["kv_bytes_per_token"] / 2


def test_the_writing_worker_drops_its_copy_on_commit(workers: tuple[Flask, Flask], clock: Clock) -> None:
    """No clock movement: the write view itself invalidates this worker's copy and memo."""
    writer, _ = workers
    client = writer.test_client()
    before = fit(client)
    with writer.app_context():
        serial = lookup.catalog_cache().get()[0].serial
    patch(client, "/v1/models/llama-3.1-8b", {"kv_heads": 4})  # half the cache, 2% fewer parameters
    with writer.app_context():
        assert lookup.catalog_cache().get()[0].serial == serial + 1
    assert fit(client)["kv_bytes_per_token"] == before["kv_bytes_per_token"] / 2


def test_an_old_copy_is_reloaded_even_if_the_fingerprint_stands_still(
    workers: tuple[Flask, Flask], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backstop for SQLite's one-second timestamps (see app.catalog.snapshots.MAX_SNAPSHOT_AGE_S)."""
    _, reader = workers
    with reader.app_context():
        first, _ = lookup.catalog_cache().get()
        assert lookup.catalog_cache().get(recheck=True)[0] is first
        monkeypatch.setattr(lookup.catalog_cache(), "max_age_s", 0.0)
        assert lookup.catalog_cache().get(recheck=True)[0].serial == first.serial + 1


def test_an_engine_edit_reaches_the_other_worker_within_the_interval(
    workers: tuple[Flask, Flask], clock: Clock
) -> None:
    """The engines table is part of the fingerprint: an edited profile reloads the copy."""
    writer, reader = workers
    with reader.app_context():
        before, _ = lookup.catalog_cache().get()
    step_ms = before.engines["vllm"].step_overhead_ms
    patch(writer.test_client(), "/v1/engines/vllm", {"step_overhead_ms": step_ms + 1})
    with reader.app_context():
        assert lookup.catalog_cache().get()[0] is before  # within the interval: the old copy
        clock.pass_check_interval()
        after, checked = lookup.catalog_cache().get()
    assert checked and after.serial == before.serial + 1
    assert after.engines["vllm"].step_overhead_ms == step_ms + 1


def test_a_new_engine_is_resolvable_everywhere_at_once(workers: tuple[Flask, Flask], clock: Clock) -> None:
    """No clock movement: a name the copy lacks makes the worker check before refusing it."""
    writer, reader = workers
    with reader.test_request_context():
        assert lookup.context().engine("vllm") is not None  # warms the reader's copy
    document = writer.test_client().get("/v1/engines/vllm").get_json()
    document = {k: v for k, v in document.items() if k != "version"}
    response = writer.test_client().post("/v1/engines", json={**document, "name": "vllm-next"}, headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    with reader.test_request_context():
        profile = lookup.context().engine("vllm-next")
    assert profile is not None and profile.name == "vllm-next"
