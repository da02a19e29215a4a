"""Calibration over HTTP: measurements in, fitted efficiencies and memory overhead out, and
planning answers that use them and say so.

These tests write, so they run on their own seeded SQLite file (one per module), and every
test starts with no calibration stored.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import create_engine, delete, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.pool import NullPool
from werkzeug.test import TestResponse

from app import create_app
from app.api import lookup
from app.catalog import cache, queries
from app.catalog.convert import gpu_to_spec, model_to_spec
from app.catalog.models import Calibration
from app.planning.calibration.startup_log import MAX_LOG_BYTES
from app.sizing.plan import PlanInputs, plan_fit, prepare_timing
from app.sizing.specs import GpuSpec, ModelSpec
from app.sizing.timing import continuous_batching
from tests.catalog.conftest import drop_everything, postgres_url_or_skip
from tests.support import seeded_app
from tests.test_openapi import SPEC_PATH, matching_operation, resolve, response_schema, undocumented

TOKEN = "calibration-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# Constructed in vLLM V1's format (0.10.x start-up lines), not captured from a run: Llama 3.1 8B
# bf16 on one H100 80GB HBM3 at gpu-memory-utilization 0.9. "Model loading took 14.9889 GiB";
# "Available KV cache memory: 54.49 GiB" is 27,898 paged blocks of 16 tokens at 131,072 B per
# token (2 x 32 layers x 8 KV heads x 128 x 2 B), so "GPU KV cache size: 446,368 tokens" and
# "Maximum concurrency for 131,072 tokens per request: 3.41x".
V1_LOG = (FIXTURES / "vllm_v1_llama-3.1-8b_h100.log").read_text(encoding="utf-8")
V1_LOG_KV_TOKENS = 446_368
# The same run as V0 (0.7.x) prints it, also constructed: "Loading model weights took 14.9888 GB"
# (GiB, mislabelled by vLLM), the memory-profiling lines, "# cuda blocks: 27909" of 16 tokens.
V0_LOG = (FIXTURES / "vllm_v0_llama-3.1-8b_h100.log").read_text(encoding="utf-8")
V0_LOG_KV_TOKENS = 27_909 * 16
PAIR = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
SHAPE = {"prompt_tokens": 1024, "output_tokens": 256}
CONCURRENCIES = (1, 8, 32, 64, 128)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with seeded_app(tmp_path_factory, "calibrations", api_tokens=(TOKEN,)) as flask_app:
        yield flask_app


@pytest.fixture(autouse=True)
def no_calibrations(app: Flask) -> Iterator[None]:
    yield
    with app.extensions["fleet_sizer"]["sessionmaker"]() as db:
        db.execute(delete(Calibration))
        db.commit()
    lookup.invalidate_calibration_cache(app)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def specs(app: Flask, model: str = "llama-3.1-8b", gpu: str = "h100-sxm") -> tuple[ModelSpec, GpuSpec]:
    """The catalog's own specs, as the service plans with them."""
    with app.extensions["fleet_sizer"]["sessionmaker"]() as db:
        model_row, gpu_row = queries.get_model(db, model), queries.get_gpu(db, gpu)
        assert model_row is not None and gpu_row is not None
        return model_to_spec(model_row), gpu_to_spec(gpu_row)


def tpot_points(app: Flask, memory_efficiency: float, concurrencies: tuple[int, ...] = CONCURRENCIES) -> list[Any]:
    """TPOT points the sizing core itself produces for Llama 3.1 8B on an H100 at this memory
    efficiency: the replica the planner builds, the continuous-batching steady state it reports."""
    model, gpu = specs(app)
    fitted = plan_fit(model, gpu, PlanInputs(**SHAPE, tensor_parallel=1))  # engine=ideal
    setup = prepare_timing(fitted)
    hardware = replace(setup.hardware, memory_efficiency=memory_efficiency)
    budget = fitted.inputs.max_batched_tokens
    assert budget is not None
    points = []
    for concurrency in concurrencies:
        steady = continuous_batching(setup.work, hardware, concurrency, budget)
        assert steady is not None
        points.append({"concurrency": concurrency, **SHAPE, "tpot_ms": steady.time_per_token_s * 1e3})
    return points


def post(client: FlaskClient, body: dict[str, Any], headers: dict[str, str] | None = None) -> TestResponse:
    """POST as a client would send it: UTF-8 JSON, non-ASCII text unescaped."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = AUTH if headers is None else headers
    return client.post("/v1/calibrations", data=data, content_type="application/json", headers=headers)


def calibrate(client: FlaskClient, **body: Any) -> dict[str, Any]:
    response = post(client, {**PAIR, "engine": {"name": "vllm", "version": "0.10.1.1"}, **body})
    assert response.status_code == 201, response.get_data(as_text=True)
    created: dict[str, Any] = response.get_json()
    return created


def get(client: FlaskClient, path: str, **params: Any) -> dict[str, Any]:
    response = client.get(path, query_string=params)
    assert response.status_code == 200, response.get_data(as_text=True)
    answer: dict[str, Any] = response.get_json()
    return answer


def field_errors(response: TestResponse, status: int = 422) -> dict[str, list[str]]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    errors: dict[str, list[str]] = response.get_json().get("errors", {})
    return errors


def stored(client: FlaskClient) -> int:
    total: int = get(client, "/v1/calibrations")["total"]
    return total


# --------------------------------------------------------------------------- done when


def test_five_tpot_points_generated_at_memory_efficiency_0_62_recover_0_62(app: Flask, client: FlaskClient) -> None:
    points = tpot_points(app, 0.62)
    response = post(client, {**PAIR, "tensor_parallel": 1, "engine": {"name": "vllm"}, "points": points})
    assert response.status_code == 201, response.get_data(as_text=True)
    created = response.get_json()
    assert created["memory_efficiency"] == pytest.approx(0.62, abs=0.01)
    assert created["point_count"] == 5
    assert created["mape_percent"] < 0.5
    assert [(r["point"], r["metric"]) for r in created["residuals"]] == [(i, "tpot_ms") for i in range(5)]
    assert all(abs(r["error_percent"]) < 1 for r in created["residuals"])
    assert created["undetermined"] == {"memory_overhead_gb": "no startup_log was given"}
    assert created["in_use"] is True
    assert response.headers["Location"] == f"/v1/calibrations/{created['id']}"


def test_a_vllm_v1_startup_log_makes_fit_reproduce_its_kv_capacity(client: FlaskClient) -> None:
    # The datasheet arithmetic (engine=ideal) leaves no room for the driver's extra GiB.
    before = get(client, "/v1/fit", **PAIR, engine="ideal")
    assert before["basis"] == "datasheet" and before["calibration"] is None
    created = calibrate(client, startup_log=V1_LOG, max_batched_tokens=8192)
    assert created["kv_capacity_tokens"] == V1_LOG_KV_TOKENS
    # The driver shows 79.19 GiB (85 GB) of the datasheet's 80 GB: the overhead comes out negative.
    assert -4 < created["memory_overhead_gb"] < 0
    summary = created["log_summary"]
    assert summary["engine_version"] == created["engine"]["version"] == "0.10.1.1"
    assert abs(summary["weights_difference_percent"]) < 5  # 14.99 GiB against the planner's 16.06 GB
    assert abs(summary["kv_bytes_per_token_difference_percent"]) < 1
    assert created["warnings"] == []

    fit = get(client, "/v1/fit", **PAIR)
    assert fit["kv_capacity_tokens"] == pytest.approx(V1_LOG_KV_TOKENS, rel=0.01)
    assert abs(fit["kv_capacity_tokens"] - V1_LOG_KV_TOKENS) <= 1
    assert fit["kv_capacity_tokens"] > before["kv_capacity_tokens"]
    assert fit["basis"] == "calibrated"
    assert fit["calibration"]["id"] == created["id"]
    assert fit["calibration"]["fields_used"] == ["memory_overhead_gb"]
    # vLLM's own "Maximum concurrency for 131,072 tokens per request: 3.41x".
    long = get(client, "/v1/fit", **PAIR, prompt_tokens=131_072 - 512)
    assert long["max_concurrency"] == 3


def test_a_vllm_v0_log_is_read_too_with_its_gib_labelled_gb(client: FlaskClient) -> None:
    created = calibrate(client, engine={"name": "vllm"}, startup_log=V0_LOG)
    summary = created["log_summary"]
    assert (created["engine"]["version"], created["tensor_parallel"], created["gpu_memory_utilization"]) == (
        "0.7.3",
        1,
        0.9,
    )
    assert summary["weights_bytes"] == pytest.approx(14.9888 * 2**30)
    assert summary["activation_peak_bytes"] == pytest.approx(1.23 * 2**30)
    assert summary["non_torch_bytes"] == pytest.approx(0.54 * 2**30)
    assert created["warnings"] == []
    fit = get(client, "/v1/fit", **PAIR)
    assert abs(fit["kv_capacity_tokens"] - V0_LOG_KV_TOKENS) <= 1


def test_a_request_s_own_reserved_gb_wins_over_the_log_s_overhead(client: FlaskClient) -> None:
    datasheet = get(client, "/v1/fit", **PAIR, engine="ideal")
    calibrate(client, startup_log=V1_LOG)
    own = get(client, "/v1/fit", **PAIR, engine="ideal", reserved_gb=0)
    assert own["basis"] == "datasheet" and own["calibration"] is None
    assert own["kv_capacity_tokens"] == datasheet["kv_capacity_tokens"]
    posted = client.post("/v1/fit", json={**PAIR, "engine": "ideal", "reserved_gb": 1}).get_json()
    assert posted["basis"] == "datasheet"
    assert posted["kv_capacity_tokens"] < datasheet["kv_capacity_tokens"]


def test_throughput_for_the_calibrated_pair_uses_the_fitted_values(app: Flask, client: FlaskClient) -> None:
    points = tpot_points(app, 0.62)
    created = calibrate(client, tensor_parallel=1, points=points)
    # The points come from the ideal arithmetic, which calibrations are fitted under.
    answer = get(client, "/v1/throughput", **PAIR, **SHAPE, concurrency=64, engine="ideal")
    assert answer["basis"] == "calibrated"
    assert answer["memory_efficiency"] == created["memory_efficiency"]
    assert answer["compute_efficiency"] == (created["compute_efficiency"] or 0.5)
    calibration = answer["calibration"]
    assert (calibration["id"], calibration["point_count"], calibration["match"]) == (created["id"], 5, "exact")
    assert calibration["mape_percent"] == created["mape_percent"]
    assert "memory_efficiency" in calibration["fields_used"]
    # The calibrated plan reproduces the measurement it was fitted to.
    assert answer["continuous_batching"]["time_per_token_ms"] == pytest.approx(points[3]["tpot_ms"], rel=0.01)


def test_the_calibrated_plan_reproduces_its_measurement_under_the_default_engine_too(
    app: Flask, client: FlaskClient
) -> None:
    points = tpot_points(app, 0.62)
    calibrate(client, tensor_parallel=1, points=points)
    answer = get(client, "/v1/throughput", **PAIR, **SHAPE, concurrency=64)
    assert answer["engine"] == "vllm" and answer["basis"] == "calibrated"
    # The engine's step overheads and checkpoint bytes give way to what the fit was made on.
    assert answer["max_batched_tokens"] == 2048
    assert answer["continuous_batching"]["time_per_token_ms"] == pytest.approx(points[3]["tpot_ms"], rel=0.01)
    low, high = answer["uncertainty"]["time_per_token_ms"]
    assert answer["uncertainty_basis"] == "calibration"
    assert low <= answer["continuous_batching"]["time_per_token_ms"] <= high


@pytest.mark.parametrize(
    "other",
    [
        {"model": "llama-3.1-8b", "gpu": "h200-sxm"},
        {"model": "qwen3-30b-a3b", "gpu": "h100-sxm"},
        {"model": "llama-3.1-8b", "gpu": "h100-sxm", "weight_precision": "fp8"},
        {"model": "llama-3.1-8b", "gpu": "h100-sxm", "mig_profile": "3g.40gb"},
        {
            "model": "llama-3.1-8b",
            "gpu.memory_gb": 80,
            "gpu.memory_bandwidth_tb_per_s": 3.35,
            "gpu.peak_tflops.bf16": 989,
        },
    ],
    ids=["other-gpu", "other-model", "other-precision", "mig-slice", "inline-gpu"],
)
def test_throughput_for_any_other_pair_is_datasheet(app: Flask, client: FlaskClient, other: dict[str, Any]) -> None:
    calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62), startup_log=V1_LOG)
    answer = get(client, "/v1/throughput", **other, engine="ideal")
    assert answer["basis"] == "datasheet"
    assert answer["calibration"] is None
    assert answer["memory_efficiency"] == 0.7


def test_a_request_s_own_efficiency_wins_field_by_field(app: Flask, client: FlaskClient) -> None:
    calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62), startup_log=V1_LOG)
    answer = client.post("/v1/throughput", json={**PAIR, "memory_efficiency": 0.8}).get_json()
    assert answer["memory_efficiency"] == 0.8
    assert answer["basis"] == "calibrated"
    assert "memory_efficiency" not in answer["calibration"]["fields_used"]
    assert "memory_overhead_gb" in answer["calibration"]["fields_used"]


def test_another_model_of_the_family_borrows_the_efficiencies_and_says_so(app: Flask, client: FlaskClient) -> None:
    created = calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62), startup_log=V1_LOG)
    answer = get(client, "/v1/throughput", model="llama-3.1-70b", gpu="h100-sxm")
    assert answer["basis"] == "calibrated-nearest"
    assert answer["memory_efficiency"] == created["memory_efficiency"]
    assert answer["calibration"]["match"] == "nearest"
    assert answer["calibration"]["model"] == "llama-3.1-8b"
    assert "memory_overhead_gb" not in answer["calibration"]["fields_used"]  # the overhead is the 8B's own
    assert any("llama-3.1-8b, the same family" in w for w in answer["warnings"])
    assert any("tensor_parallel 1, this plan uses 2" in w for w in answer["warnings"])
    # A fit uses no efficiency, so nothing of the 8B's calibration reaches the 70B's fit.
    assert get(client, "/v1/fit", model="llama-3.1-70b", gpu="h100-sxm")["basis"] == "datasheet"


def test_fleet_and_cost_say_what_they_rest_on(app: Flask, client: FlaskClient) -> None:
    calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62), startup_log=V1_LOG)
    fleet = get(client, "/v1/fleet", **PAIR, requests_per_day=1_000_000, tpot_slo_ms=50)
    assert fleet["basis"] == "calibrated"
    assert set(fleet["calibration"]["fields_used"]) >= {"memory_efficiency", "memory_overhead_gb"}
    measured = get(client, "/v1/fleet", **PAIR, requests_per_day=1_000_000, per_replica_tokens_per_s=3000)
    assert measured["basis"] == "measured"
    ranked = get(client, "/v1/fleet", model="llama-3.1-8b", requests_per_day=1_000_000, limit=2)
    assert (ranked["basis"], ranked["calibration"]) == ("datasheet", None)
    assert any("calibrations of this model exist for h100-sxm" in w for w in ranked["warnings"])
    cost = get(client, "/v1/cost", **PAIR)
    assert cost["basis"] == "calibrated" and cost["calibration"]["match"] == "exact"
    given = get(client, "/v1/cost", gpu="h100-sxm", tokens_per_s=1000)
    assert (given["basis"], given["calibration"]) == ("measured", None)


def test_a_remembered_answer_changes_with_the_calibrations(app: Flask, client: FlaskClient) -> None:
    url = "/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm"
    assert client.get(url).get_json()["basis"] == "datasheet"
    created = calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62))
    assert client.get(url).get_json()["basis"] == "calibrated"
    assert client.delete(f"/v1/calibrations/{created['id']}", headers=AUTH).status_code == 204
    assert client.get(url).get_json()["basis"] == "datasheet"


def test_another_worker_plans_with_a_new_calibration_within_the_check_interval(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = create_app({"database_url": str(app.extensions["fleet_sizer"]["engine"].url), "api_tokens": (TOKEN,)})
    real, offset = time.monotonic, [0.0]

    def monotonic() -> float:
        return real() + offset[0]

    try:
        # Both copies (catalog and calibrations) are fingerprint caches reading this clock.
        assert cache.time is time
        monkeypatch.setattr(time, "monotonic", monotonic)
        url = "/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm"
        reader = other.test_client()
        assert reader.get(url).get_json()["basis"] == "datasheet"
        calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62))
        offset[0] += cache.CHECK_INTERVAL_S + 0.001
        assert reader.get(url).get_json()["basis"] == "calibrated"
    finally:
        other.extensions["fleet_sizer"]["engine"].dispose()


# --------------------------------------------------------------------------- refusals


def test_writes_need_the_token(client: FlaskClient) -> None:
    body = {**PAIR, "engine": {"name": "vllm"}, "startup_log": V1_LOG}
    for headers in ({}, {"Authorization": "Bearer not-the-token-0123456789"}):
        response = post(client, body, headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    created = calibrate(client, startup_log=V1_LOG)
    assert client.delete(f"/v1/calibrations/{created['id']}").status_code == 401
    assert stored(client) == 1


def test_an_unparsable_log_is_refused_naming_the_lines_it_expected(client: FlaskClient) -> None:
    errors = field_errors(post(client, {**PAIR, "engine": {"name": "vllm"}, "startup_log": "hello\nworld\n"}))
    assert list(errors) == ["startup_log"]
    assert "GPU KV cache size: N tokens" in errors["startup_log"][0]
    assert "Available KV cache memory" in errors["startup_log"][0]


def test_a_log_with_weights_only_and_no_points_determines_nothing(client: FlaskClient) -> None:
    log = "INFO [gpu_model_runner.py:2007] Model loading took 14.9889 GiB and 4.47 seconds\n"
    errors = field_errors(post(client, {**PAIR, "engine": {"name": "vllm"}, "startup_log": log}))
    assert "nothing to calibrate" in errors["startup_log"][0]


def test_a_log_from_another_model_is_refused(client: FlaskClient) -> None:
    # 446,368 tokens at Llama 2 7B's 512 KiB per token would be 234 GB on an 80 GB card.
    body = {"model": "llama-2-7b", "gpu": "h100-sxm", "engine": {"name": "vllm"}, "startup_log": V1_LOG}
    errors = field_errors(post(client, body))
    assert "not from this model" in errors["startup_log"][0]


@pytest.mark.parametrize("metric", ["tpot_ms", "itl_ms"])
def test_a_point_faster_than_the_hardware_is_refused_by_name(app: Flask, client: FlaskClient, metric: str) -> None:
    points = tpot_points(app, 1.0, (1, 8))
    points[1][metric] = points[1].pop("tpot_ms") / 2
    errors = field_errors(post(client, {**PAIR, "engine": {"name": "vllm"}, "points": points}))
    assert list(errors) == [f"points.1.{metric}"]
    assert "beyond what the hardware allows" in errors[f"points.1.{metric}"][0]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "points"),
        ({"points": [{"concurrency": 1, "prompt_tokens": 10, "output_tokens": 10}]}, "points.0.tpot_ms"),
        (
            {"points": [{"concurrency": 4096, "prompt_tokens": 10, "output_tokens": 10, "tpot_ms": 9}]},
            "points.0.concurrency",
        ),
        ({"points": [{"concurrency": 1, "prompt_tokens": 10, "output_tokens": 10, "tpot_ms": 9}] * 17}, "points"),
        (
            {"points": [{"concurrency": 1, "prompt_tokens": 0, "output_tokens": 10, "tpot_ms": 9}]},
            "points.0.prompt_tokens",
        ),
        ({"startup_log": V1_LOG, "tensor_parallel": 3}, "tensor_parallel"),
        ({"startup_log": V1_LOG, "mig_profile": "9g.99gb"}, "mig_profile"),
        ({"startup_log": V1_LOG, "weight_precision": "fp7"}, "weight_precision"),
        ({"startup_log": V1_LOG, "engine": {"name": "vLLM"}}, "engine.name"),
        ({"startup_log": V1_LOG, "colour": "blue"}, "colour"),
        ({"startup_log": "GPU KV cache size: " + "9" * 400 + " tokens"}, "startup_log"),
        ({"startup_log": "GPU KV cache size: 0 tokens"}, "startup_log"),
        ({"startup_log": "x" * (MAX_LOG_BYTES + 1)}, "startup_log"),
        ({"startup_log": "é" * (MAX_LOG_BYTES // 2 + 1)}, "startup_log"),
    ],
    ids=[
        "nothing-measured",
        "point-without-figure",
        "concurrency-fills-the-budget",
        "too-many-points",
        "zero-prompt",
        "invalid-tp",
        "unknown-mig-profile",
        "unknown-precision",
        "engine-name-case",
        "unknown-field",
        "log-figure-out-of-range",
        "log-kv-cache-empty",
        "log-over-4-mib",
        "log-over-4-mib-of-utf-8",
    ],
)
def test_invalid_measurements_are_422_naming_the_field(client: FlaskClient, body: dict[str, Any], field: str) -> None:
    errors = field_errors(post(client, {**PAIR, "engine": {"name": "vllm"}, **body}))
    assert field in errors


@pytest.mark.parametrize("name", ["model", "gpu"])
def test_an_unknown_model_or_gpu_is_404_naming_it(client: FlaskClient, name: str) -> None:
    body = {**PAIR, name: "no-such-thing", "engine": {"name": "vllm"}, "startup_log": V1_LOG}
    assert list(field_errors(post(client, body), 404)) == [name]


def test_nothing_is_stored_when_a_calibration_is_refused(app: Flask, client: FlaskClient) -> None:
    fast = tpot_points(app, 1.0, (1, 8))
    fast[1]["tpot_ms"] /= 2
    for body in (
        {"startup_log": "no memory lines here"},
        {"points": fast, "startup_log": V1_LOG},
        {"model": "llama-2-7b", "startup_log": V1_LOG},
    ):
        assert post(client, {**PAIR, "engine": {"name": "vllm"}, **body}).status_code == 422
    assert stored(client) == 0


def test_a_body_that_is_not_json_is_400_and_not_json_typed_is_415(client: FlaskClient) -> None:
    assert client.post("/v1/calibrations", data="{", content_type="application/json", headers=AUTH).status_code == 400
    assert client.post("/v1/calibrations", data="x", content_type="text/plain", headers=AUTH).status_code == 415
    assert client.post("/v1/calibrations", json=[1], headers=AUTH).status_code == 400


def test_a_4_mib_adversarial_log_is_answered_quickly(client: FlaskClient) -> None:
    line = "Load weight end." * 1000
    log = "\n".join([line] * (MAX_LOG_BYTES // (len(line) + 1)))
    start = time.perf_counter()
    response = post(client, {**PAIR, "engine": {"name": "sglang"}, "startup_log": log})
    assert time.perf_counter() - start < 1.0
    assert field_errors(response)["startup_log"]


def test_sixteen_points_with_every_figure_fit_within_a_second(app: Flask, client: FlaskClient) -> None:
    model, gpu = specs(app)
    inputs = PlanInputs(**SHAPE, tensor_parallel=1)
    setup = prepare_timing(plan_fit(model, gpu, inputs))
    points = []
    for concurrency in range(1, 257, 16):
        steady = continuous_batching(setup.work, setup.hardware, concurrency, 2048)
        assert steady is not None
        points.append(
            {
                "concurrency": concurrency,
                **SHAPE,
                "tpot_ms": steady.time_per_token_s * 1e3,
                "ttft_ms": steady.ttft_s * 1e3,
                "output_tokens_per_s": steady.tokens_per_s,
            }
        )
    start = time.perf_counter()
    created = calibrate(client, tensor_parallel=1, points=points)
    assert time.perf_counter() - start < 1.0
    assert created["memory_efficiency"] == pytest.approx(0.7, abs=0.01)
    assert created["compute_efficiency"] == pytest.approx(0.5, abs=0.02)
    assert len(created["residuals"]) == 48


# --------------------------------------------------------------------------- manage


def test_list_filter_get_and_csv(app: Flask, client: FlaskClient) -> None:
    first = calibrate(client, startup_log=V1_LOG)
    second = calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62))
    other = calibrate(client, gpu="h200-sxm", tensor_parallel=1, points=tpot_points(app, 0.62)[:3])
    listed = get(client, "/v1/calibrations")
    assert [item["id"] for item in listed["items"]] == [other["id"], second["id"], first["id"]]
    # Planning uses the newest of each (model, GPU, MIG profile, weight precision).
    assert [item["in_use"] for item in listed["items"]] == [True, True, False]
    assert "points" not in listed["items"][0]
    assert get(client, "/v1/calibrations", gpu="h200-sxm")["total"] == 1
    assert (
        get(client, "/v1/calibrations", model="llama-3.1-8b", gpu="h100-sxm", limit=1)["items"][0]["id"] == second["id"]
    )
    assert get(client, "/v1/calibrations", model="qwen3-30b-a3b")["total"] == 0
    one = get(client, f"/v1/calibrations/{first['id']}")
    assert one == {**first, "in_use": False}
    csv = client.get("/v1/calibrations?format=csv")
    assert csv.mimetype == "text/csv"
    header, *rows = csv.get_data(as_text=True).splitlines()
    assert header.startswith("id,model,gpu,mig_profile,tensor_parallel,weight_precision,kv_precision,engine_name")
    assert len(rows) == 3
    assert client.get(f"/v1/calibrations/{first['id']}", headers={"Accept": "text/csv"}).mimetype == "text/csv"
    assert field_errors(client.get("/v1/calibrations?limit=0"))["limit"]


def test_delete_falls_back_to_the_previous_calibration_then_the_datasheet(app: Flask, client: FlaskClient) -> None:
    older = calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62))
    newer = calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.55))
    assert get(client, "/v1/throughput", **PAIR)["calibration"]["id"] == newer["id"]
    assert client.delete(f"/v1/calibrations/{newer['id']}", headers=AUTH).status_code == 204
    assert client.get(f"/v1/calibrations/{newer['id']}").status_code == 404
    assert client.delete(f"/v1/calibrations/{newer['id']}", headers=AUTH).status_code == 404
    assert get(client, "/v1/throughput", **PAIR)["calibration"]["id"] == older["id"]
    assert client.delete(f"/v1/calibrations/{older['id']}", headers=AUTH).status_code == 204
    assert get(client, "/v1/throughput", **PAIR)["basis"] == "datasheet"
    assert stored(client) == 0


@pytest.mark.parametrize("path", ["/v1/calibrations/0", "/v1/calibrations/99999999999999999999", "/v1/calibrations/x"])
def test_unknown_ids_are_404(client: FlaskClient, path: str) -> None:
    assert client.get(path).status_code == 404
    assert client.delete(path, headers=AUTH).status_code == 404


# --------------------------------------------------------------------------- the contract


def test_every_answer_is_documented(app: Flask, client: FlaskClient) -> None:
    """What test_openapi.py checks for the shared (uncalibrated) app, here with calibrations."""
    spec = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    created = calibrate(client, tensor_parallel=1, points=tpot_points(app, 0.62), startup_log=V1_LOG)
    cases: list[tuple[str, str, Any, int, str]] = [
        (
            "POST",
            "/v1/calibrations",
            {**PAIR, "engine": {"name": "vllm"}, "points": tpot_points(app, 0.6)},
            201,
            "Calibration",
        ),
        ("POST", "/v1/calibrations", {**PAIR, "engine": {"name": "vllm"}, "startup_log": "x"}, 422, "Problem"),
        ("GET", "/v1/calibrations?model=llama-3.1-8b", None, 200, "CalibrationList"),
        ("GET", f"/v1/calibrations/{created['id']}", None, 200, "Calibration"),
        ("GET", "/v1/calibrations/12345", None, 404, "Problem"),
        ("GET", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm", None, 200, "FitResponse"),
        ("GET", "/v1/throughput?model=llama-3.1-70b&gpu=h100-sxm", None, 200, "ThroughputResponse"),
        ("GET", "/v1/cost?model=llama-3.1-8b&gpu=h100-sxm", None, 200, "CostResponse"),
        ("GET", "/v1/fleet?model=llama-3.1-8b&gpu=h100-sxm&requests_per_day=1e6", None, 200, "FleetResponse"),
        ("GET", "/v1/fleet?model=llama-3.1-8b&requests_per_day=1e6&limit=2", None, 200, "FleetResponse"),
        ("DELETE", f"/v1/calibrations/{created['id']}", None, 204, ""),
    ]
    for method, url, body, status, component in cases:
        response = client.open(url, method=method, json=body, headers=AUTH)
        assert response.status_code == status, (url, response.get_data(as_text=True)[:300])
        documented = matching_operation(spec, app, method, url)["responses"]
        assert str(status) in documented, (method, url, status)
        if not component:
            continue
        content = resolve(spec, documented[str(status)])["content"]
        schema = resolve(spec, content[response.mimetype]["schema"])
        assert schema is spec["components"]["schemas"][component]
        data = response.get_json()
        assert undocumented(spec, data, schema) == [], url
        errors = list(response_schema(spec, component).iter_errors(data))
        assert not errors, (url, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]])
    accepted = cases[0][2]
    assert not list(response_schema(spec, "CalibrationRequest").iter_errors(accepted))


# --------------------------------------------------------------------------- PostgreSQL

RESTART_DATABASE = "fleet_sizer_calibrations"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A database of this test's own on the test server (the catalog suite owns the default one)."""
    server = postgres_url_or_skip()
    admin = create_engine(server, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            query = text("SELECT 1 FROM pg_database WHERE datname = :name")
            if connection.execute(query, {"name": RESTART_DATABASE}).scalar() is None:
                with contextlib.suppress(ProgrammingError):  # a concurrent run may create it meanwhile
                    connection.execute(text(f'CREATE DATABASE "{RESTART_DATABASE}"'))
    finally:
        admin.dispose()
    url = make_url(server).set(database=RESTART_DATABASE).render_as_string(hide_password=False)
    drop_everything(url)
    yield url
    drop_everything(url)


@pytest.mark.postgres
def test_a_calibration_survives_a_restart_on_postgresql(postgres_url: str) -> None:
    first = create_app({"database_url": postgres_url, "api_tokens": (TOKEN,)})
    try:
        for command in (["migrate"], ["seed"]):
            result = first.test_cli_runner().invoke(args=command)
            assert result.exit_code == 0, result.output
        created = calibrate(first.test_client(), tensor_parallel=1, points=tpot_points(first, 0.62), startup_log=V1_LOG)
    finally:
        first.extensions["fleet_sizer"]["engine"].dispose()

    second = create_app({"database_url": postgres_url, "api_tokens": (TOKEN,)})
    try:
        client = second.test_client()
        assert get(client, f"/v1/calibrations/{created['id']}") == created
        fit = get(client, "/v1/fit", **PAIR)
        assert (fit["basis"], fit["calibration"]["id"]) == ("calibrated", created["id"])
        assert abs(fit["kv_capacity_tokens"] - V1_LOG_KV_TOKENS) <= 1
        throughput = get(client, "/v1/throughput", **PAIR)
        assert throughput["memory_efficiency"] == pytest.approx(0.62, abs=0.01)
    finally:
        second.extensions["fleet_sizer"]["engine"].dispose()
