"""Through HTTP: a request's work budget. A simulation whose size predicts more work than
WORK_BUDGET_UNITS is a 422 naming the fields that make it large, before anything runs; a
computation past TIME_BUDGET_S stops with a 503 and Retry-After."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.config import DEFAULT_WORK_BUDGET_UNITS, Config, ConfigError
from tests.support import seeded_app

REPLICA = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
# The issue's request: 1,000 requests of a million-token answer each, at a rate no replica keeps up with.
HOSTILE = {**REPLICA, "mode": "simulate", "requests": 1000, "output_tokens": 1_000_000, "request_rate": 1e6}


def test_the_issues_hostile_simulation_is_refused_before_it_runs(client: FlaskClient) -> None:
    start = time.perf_counter()
    response = client.get("/v1/latency", query_string=HOSTILE)
    seconds = time.perf_counter() - start
    body = response.get_json()
    assert response.status_code == 422, body
    assert response.mimetype == "application/problem+json"
    assert set(body["errors"]) == {"requests", "request_rate", "prompt_tokens", "output_tokens", "max_num_seqs"}
    assert f"over the limit of {DEFAULT_WORK_BUDGET_UNITS:,} (WORK_BUDGET_UNITS)" in body["detail"]
    # Refused on its prediction: nothing simulated (a run would take minutes).
    assert "predicted" in body["detail"] and seconds < 2.0


def test_a_sweep_is_refused_naming_its_rates(client: FlaskClient) -> None:
    sweep = {**HOSTILE, "request_rate": None, "sweep_rates": "1,2,3"}
    response = client.get("/v1/latency", query_string={k: v for k, v in sweep.items() if v is not None})
    assert response.status_code == 422
    assert "sweep_rates" in response.get_json()["errors"]


def test_a_fleet_simulated_at_peak_stops_at_the_work_budget(client: FlaskClient) -> None:
    # Answers of 120,000 tokens: the plan's replica (TP 8, 42 sequences the KV cache holds) does
    # not thrash; its 50,000 requests' long walked stretches spread over many ITL bins, past the
    # budget.
    fleet = {**REPLICA, "mode": "simulate", "requests": 50_000, "requests_per_day": 1e6, "output_tokens": 120_000}
    response = client.post("/v1/fleet", json=fleet)
    body = response.get_json()
    assert response.status_code == 422, body
    assert {"requests", "prompt_tokens", "output_tokens"} <= set(body["errors"])
    assert f"take more than {DEFAULT_WORK_BUDGET_UNITS:,} units of work" in body["detail"]


@pytest.fixture(scope="module")
def hurried(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """An app whose requests may compute for one second, with a work budget a thousand times the
    default: only the clock stops them."""
    with seeded_app(tmp_path_factory, "hurried", time_budget_s=1, work_budget_units=10**9) as flask_app:
        yield flask_app


def test_a_computation_past_its_time_stops_with_a_503_and_retry_after(hurried: Flask) -> None:
    # Twenty rates of 10,000 simulated requests (the most a request may ask) of 20,000-token
    # answers: within this app's work budget and about a minute of one core here (a 1,000-token
    # answer took 4.8 s, which a fast machine brings near the budget); stopped at one second.
    # The test must not depend on the simulator being slow.
    sweep = {**REPLICA, "mode": "simulate", "sweep_rates": list(range(1, 21)), "requests": 10_000}
    sweep["output_tokens"] = 20_000
    start = time.perf_counter()
    response = hurried.test_client().post("/v1/latency", json=sweep)
    seconds = time.perf_counter() - start
    body = response.get_json()
    assert response.status_code == 503, body
    assert response.headers["Retry-After"] == "5"
    assert response.mimetype == "application/problem+json"
    assert "time budget of 1 s (TIME_BUDGET_S)" in body["detail"]
    assert seconds < 3.0
    # The worker goes on answering.
    assert hurried.test_client().get("/v1/fit", query_string=REPLICA).status_code == 200


@pytest.mark.parametrize(("name", "value"), [("TIME_BUDGET_S", "0"), ("WORK_BUDGET_UNITS", "ten")])
def test_a_budget_setting_is_checked_at_start(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Config.from_env({name: value})
