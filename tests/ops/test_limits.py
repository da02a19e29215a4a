"""No request can keep a worker busy: the body cap, the caps on list lengths, and the time the
heaviest allowed requests take (well under gunicorn's 30 s timeout, and under a second)."""

from __future__ import annotations

import runpy
import time
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from app import create_app
from app.api.catalog_schemas import MAX_MIG_PROFILES
from app.api.schemas import MAX_CONCURRENCY, MAX_PROMPT_TOKENS, MAX_SWEEP
from app.sizing.fleet_plan import MAX_FORECAST_PERIODS

ONE_MIB = 1024 * 1024
# A budget in CPU seconds for the heaviest request, far below gunicorn's timeout (30 s).
BUDGET_S = 1.0
_unique = count()


def timed(client: FlaskClient, method: str, url: str, body: Any = None) -> tuple[TestResponse, float]:
    """One request, computed rather than served from the worker's memo (a fresh cache-buster:
    query parameters starting with _ are ignored)."""
    separator = "&" if "?" in url else "?"
    url = f"{url}{separator}_nocache={next(_unique)}" if method == "GET" else url
    # CPU seconds of this process (the test client computes in it): what the request costs a
    # worker, not how long a loaded CI box took to schedule it (a wall clock saw 1.2 s there).
    start = time.process_time()
    response = client.open(url, method=method, json=body)
    return response, time.process_time() - start


def errors(response: TestResponse) -> dict[str, list[str]]:
    assert response.mimetype == "application/problem+json"
    found: dict[str, list[str]] = response.get_json()["errors"]
    return found


# --- the body cap -------------------------------------------------------------------------------


def test_the_default_body_cap_is_one_mib(app: Flask) -> None:
    assert app.config["MAX_CONTENT_LENGTH"] == ONE_MIB


def test_a_body_over_the_cap_is_413_problem_json(client: FlaskClient) -> None:
    padding = "x" * ONE_MIB
    response = client.post("/v1/fit", data=f'{{"model": "{padding}"}}', content_type="application/json")
    assert response.status_code == 413
    assert response.get_json()["type"] == "/problems/body-too-large"


def test_a_body_just_under_the_cap_is_read(client: FlaskClient) -> None:
    body = '{"model": "llama-3.1-8b", "gpu": "h100-sxm"}'
    body += " " * (ONE_MIB - len(body))
    response = client.post("/v1/fit", data=body, content_type="application/json")
    assert response.status_code == 200


def test_the_cap_follows_max_body_bytes(tmp_path: Path) -> None:
    small = create_app({"database_url": f"sqlite:///{tmp_path / 'fleet.sqlite3'}", "max_body_bytes": 2048})
    try:
        response = small.test_client().post("/v1/fit", data="{" + " " * 4096 + "}", content_type="application/json")
        assert response.status_code == 413
    finally:
        small.extensions["fleet_sizer"]["engine"].dispose()


# --- caps on list lengths -----------------------------------------------------------------------


def test_a_sweep_is_capped(client: FlaskClient) -> None:
    body = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "sweep": list(range(1, MAX_SWEEP + 2))}
    response = client.post("/v1/throughput", json=body)
    assert response.status_code == 422
    assert "sweep" in errors(response)
    query = ",".join(str(n) for n in range(1, MAX_SWEEP + 2))
    assert client.get(f"/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&sweep={query}").status_code == 422


def test_a_forecast_is_capped(client: FlaskClient) -> None:
    periods = [{"period": f"p{i}", "requests_per_day": 1e5} for i in range(MAX_FORECAST_PERIODS + 1)]
    response = client.post("/v1/fleet", json={"model": "llama-3.1-8b", "gpu": "h100-sxm", "forecast": periods})
    assert response.status_code == 422
    assert "forecast" in errors(response)


def test_inline_mig_profiles_are_capped(client: FlaskClient) -> None:
    profile = {"compute_slices": 1, "memory_slices": 1, "memory_gb": 10, "max_instances": 7}
    gpu = {"memory_gb": 80, "mig_profiles": [{"name": f"p{i}", **profile} for i in range(MAX_MIG_PROFILES + 1)]}
    response = client.post("/v1/fit", json={"model": "llama-3.1-8b", "gpu": gpu})
    assert response.status_code == 422
    assert any(field.startswith("gpu") for field in errors(response))


def test_the_fleet_option_list_is_capped(client: FlaskClient) -> None:
    response = client.get("/v1/fleet?model=llama-3.1-8b&requests_per_day=1e5&limit=501")
    assert response.status_code == 422
    assert "limit" in errors(response)


# --- bounded computation ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog_models(app: Flask) -> list[str]:
    response = app.test_client().get("/v1/models?limit=500")
    return [item["slug"] for item in response.get_json()["items"]]


def test_every_whole_catalog_ranking_takes_well_under_a_second(client: FlaskClient, catalog_models: list[str]) -> None:
    assert len(catalog_models) >= 20
    slowest = 0.0
    for slug in catalog_models:
        response, seconds = timed(client, "GET", f"/v1/fleet?model={slug}&requests_per_day=100000&limit=500")
        assert response.status_code == 200, slug
        slowest = max(slowest, seconds)
    assert slowest < BUDGET_S


MONSTER_MODEL = {
    "params_total": 10**14 - 1,
    "layers": 10_000,
    "hidden_size": 1_000_000,
    "attention_heads": 55_440,  # 120 divisors: as many tensor-parallel sizes as any model can have
    "kv_heads": 1,
    "head_dim": 100_000,
    "experts": 100_000,
    "experts_per_token": 100_000,
    "expert_params": 10**14 - 2,
}
MONSTER_GPU = {
    "memory_gb": 1e5,
    "memory_bandwidth_tb_per_s": 1e3,
    "peak_tflops": {"bf16": 1e7},
    "gpus_per_node": 1024,
    "interconnect": {"kind": "x", "bandwidth_gb_per_s": 1e4, "latency_us": 1},
    "mig_profiles": [
        {"name": f"p{i}", "compute_slices": 1, "memory_slices": 1, "memory_gb": 1000, "max_instances": 7}
        for i in range(MAX_MIG_PROFILES)
    ],
}
HEAVIEST: dict[str, tuple[str, dict[str, Any]]] = {
    "throughput: the longest sweep, longest prompts, smallest chunks": (
        "/v1/throughput",
        {
            "model": "llama-3.1-405b",
            "gpu": "h100-sxm",
            "sweep": list(range(1, MAX_SWEEP + 1)),
            "max_batched_tokens": 1,
            "prompt_tokens": MAX_PROMPT_TOKENS,
        },
    ),
    "throughput: the largest concurrencies": (
        "/v1/throughput",
        {"model": "deepseek-v3", "gpu": "h100-sxm", "sweep": [MAX_CONCURRENCY - i for i in range(MAX_SWEEP)]},
    ),
    "throughput: the largest inline model and GPU": (
        "/v1/throughput",
        {"model": MONSTER_MODEL, "gpu": MONSTER_GPU, "sweep": list(range(1, MAX_SWEEP + 1))},
    ),
    "fleet: the longest forecast on the largest inline model and GPU": (
        "/v1/fleet",
        {
            "model": MONSTER_MODEL,
            "gpu": MONSTER_GPU,
            # An engine's activation reserve (per routed expert per token: 100,000 of them here)
            # would leave no room for a replica: the datasheet arithmetic plans one.
            "engine": "ideal",
            "requests_per_second": 1e8,
            "forecast": [{"period": f"p{i}", "requests_per_day": 1e13} for i in range(MAX_FORECAST_PERIODS)],
        },
    ),
    "fleet: whole catalog, every option listed, the longest forecast": (
        "/v1/fleet",
        {
            "model": "llama-3.2-1b",
            "requests_per_day": 1e5,
            "limit": 500,
            "forecast": [
                {"period": f"p{i}", "requests_per_day": 1e13, "peak_to_average": 1000}
                for i in range(MAX_FORECAST_PERIODS)
            ],
        },
    ),
    "fleet: whole catalog for the largest inline model": (
        "/v1/fleet",
        {"model": MONSTER_MODEL, "requests_per_day": 1e13, "limit": 500},
    ),
}


@pytest.mark.parametrize("case", list(HEAVIEST))
def test_the_heaviest_allowed_requests_take_well_under_a_second(client: FlaskClient, case: str) -> None:
    path, body = HEAVIEST[case]
    response, seconds = timed(client, "POST", path, body)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    assert seconds < BUDGET_S, f"{case}: {seconds:.2f} s"


def test_gunicorn_replaces_a_worker_stuck_past_thirty_seconds() -> None:
    settings = runpy.run_path(str(Path(__file__).resolve().parents[2] / "gunicorn.conf.py"))
    assert settings["timeout"] == 30 and settings["graceful_timeout"] == 30
