"""JSON logs and request ids: one JSON access line per request carrying its id, the
X-Request-ID header accepted when safe and replaced when not, echoed on every answer and in
every problem+json body; under gunicorn every stdout line is JSON."""

from __future__ import annotations

import json
import logging
import re
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app import create_app
from bench.server import Server, running_server

REPO = Path(__file__).resolve().parents[2]
GENERATED = re.compile(r"[0-9a-f]{32}")
FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def access_lines(text: str) -> list[dict[str, Any]]:
    return [r for r in json_lines(text) if r.get("logger") == "fleet_sizer.access"]


# --- request ids --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "offered",
    ["abc-123", "0f8fad5b-d9cb-469f-a165-70867728950e", "01HZX3Q8Z7.trace_42", "x" * 128],
)
def test_a_safe_request_id_is_echoed(client: FlaskClient, offered: str) -> None:
    response = client.get("/healthz", headers={"X-Request-ID": offered})
    assert response.headers["X-Request-ID"] == offered


@pytest.mark.parametrize(
    "offered",
    ["", "has space", "x" * 129, 'quote"d', "semi;colon", "<script>", "naïve", "a/b"],
)
def test_an_unsafe_request_id_is_replaced(client: FlaskClient, offered: str) -> None:
    response = client.get("/healthz", headers={"X-Request-ID": offered})
    assert GENERATED.fullmatch(response.headers["X-Request-ID"])


def test_every_answer_gets_its_own_id(client: FlaskClient) -> None:
    ids = {client.get(path).headers["X-Request-ID"] for path in ("/healthz", "/healthz", FIT, "/nope", "/metrics")}
    assert len(ids) == 5 and all(GENERATED.fullmatch(i) for i in ids)


@pytest.mark.parametrize(
    ("method", "url", "kwargs", "status"),
    [
        ("GET", "/v1/fit?model=no-such-model&gpu=h100-sxm", {}, 404),
        ("GET", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=0", {}, 422),
        ("POST", "/v1/fit", {"data": b"{not json", "content_type": "application/json"}, 400),
        ("POST", "/v1/fit", {"data": b"x" * (2 << 20), "content_type": "application/json"}, 413),
        ("POST", "/v1/fit", {"data": b"model=x", "content_type": "text/plain"}, 415),
        ("DELETE", "/healthz", {}, 405),
        ("GET", "/no/such/page", {}, 404),
    ],
)
def test_problem_bodies_carry_the_request_id(
    client: FlaskClient, method: str, url: str, kwargs: dict[str, Any], status: int
) -> None:
    response = client.open(url, method=method, headers={"X-Request-ID": "trace-7"}, **kwargs)
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["request_id"] == "trace-7" == response.headers["X-Request-ID"]


def test_a_generated_id_is_the_same_in_header_body_and_log(
    client: FlaskClient, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    response = client.get("/v1/fit?model=no-such-model&gpu=h100-sxm")
    rid = response.headers["X-Request-ID"]
    assert GENERATED.fullmatch(rid) and response.get_json()["request_id"] == rid
    (line,) = access_lines(capsys.readouterr().out)
    assert line["request_id"] == rid


# --- the app's JSON logs ------------------------------------------------------------------------


def test_one_json_access_line_per_request(client: FlaskClient, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    client.get("/v1/models/llama-3.1-8b", headers={"X-Request-ID": "line-1"})
    client.get("/no/such/page", headers={"X-Request-ID": "line-2"})
    lines = access_lines(capsys.readouterr().out)
    assert [line["request_id"] for line in lines] == ["line-1", "line-2"]
    first, second = lines
    assert first["method"] == "GET" and first["path"] == "/v1/models/llama-3.1-8b"
    assert first["route"] == "/v1/models/<slug>" and first["status"] == 200
    assert second["route"] == "unmatched" and second["status"] == 404
    for line in lines:
        assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
        assert {"time", "level", "logger", "pid", "message"} <= set(line)
        assert line["level"] == "INFO"


@pytest.fixture
def failing_app(tmp_path: Path) -> Iterator[Flask]:
    app = create_app({"database_url": f"sqlite:///{tmp_path / 'fleet.sqlite3'}"})

    @app.get("/boom")
    def boom() -> str:
        """Fails on purpose."""
        raise RuntimeError("kaboom")

    yield app
    app.extensions["fleet_sizer"]["engine"].dispose()


def test_an_unexpected_error_is_logged_as_json_with_the_request_id(
    failing_app: Flask, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    response = failing_app.test_client().get("/boom", headers={"X-Request-ID": "boom-1"})
    assert response.status_code == 500
    assert response.get_json()["request_id"] == "boom-1"
    records = json_lines(capsys.readouterr().out)
    (error,) = [r for r in records if r["level"] == "ERROR"]
    assert error["request_id"] == "boom-1"
    assert "RuntimeError: kaboom" in error["exc_info"]
    assert [r["status"] for r in records if r["logger"] == "fleet_sizer.access"] == [500]


def test_log_level_is_honoured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = root.level
    quiet = create_app({"database_url": f"sqlite:///{tmp_path / 'fleet.sqlite3'}", "log_level": "WARNING"})
    try:
        capsys.readouterr()
        quiet.test_client().get("/healthz")
        assert access_lines(capsys.readouterr().out) == []
    finally:
        root.setLevel(saved)
        quiet.extensions["fleet_sizer"]["engine"].dispose()


def test_logging_is_configured_once_however_many_apps(tmp_path: Path) -> None:
    for name in ("a", "b"):
        create_app({"database_url": f"sqlite:///{tmp_path / name}.sqlite3"}).extensions["fleet_sizer"][
            "engine"
        ].dispose()
    ours = [h for h in logging.getLogger().handlers if getattr(h, "_fleet_sizer", False)]
    assert len(ours) == 1


def test_gunicorn_writes_no_access_log_of_its_own() -> None:
    settings = runpy.run_path(str(REPO / "gunicorn.conf.py"))
    assert settings["accesslog"] is None  # the app's JSON line is the access log
    assert settings["errorlog"] == "-"


# --- under gunicorn -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gunicorn_output(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, list[str]]]:
    """A one-worker server that answers a few requests, then shuts down; all it printed."""
    with running_server(1, workdir=tmp_path_factory.mktemp("logging-server")) as server:
        server.get(FIT, headers={"X-Request-ID": "gunicorn-1"})
        server.get("/v1/fit?model=no-such-model&gpu=h100-sxm", headers={"X-Request-ID": "bad id"})
        server.get("/healthz")
    yield server, server.log_lines()


@pytest.mark.slow
def test_every_line_gunicorn_prints_is_json(gunicorn_output: tuple[Server, list[str]]) -> None:
    _, lines = gunicorn_output
    assert lines
    records = [json.loads(line) for line in lines]  # fails on any plain-text line
    loggers = {r["logger"] for r in records}
    assert {"gunicorn.error", "fleet_sizer.access"} <= loggers
    assert "gunicorn.access" not in loggers
    messages = " ".join(r["message"] for r in records if r["logger"] == "gunicorn.error")
    assert "Booting worker" in messages and "Shutting down" in messages


@pytest.mark.slow
def test_gunicorn_access_lines_carry_request_ids(gunicorn_output: tuple[Server, list[str]]) -> None:
    _, lines = gunicorn_output
    access = [r for r in (json.loads(line) for line in lines) if r["logger"] == "fleet_sizer.access"]
    by_route = [(r["route"], r["status"]) for r in access if r["route"] != "/readyz"]
    assert by_route == [("/v1/fit", 200), ("/v1/fit", 404), ("/healthz", 200)]
    fit_ok, fit_missing, _ = (r for r in access if r["route"] != "/readyz")
    assert fit_ok["request_id"] == "gunicorn-1"
    assert GENERATED.fullmatch(fit_missing["request_id"])
