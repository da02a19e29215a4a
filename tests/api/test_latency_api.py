"""/v1/latency through HTTP: one replica under random arrivals, percentiles against rate."""

from __future__ import annotations

import csv
import io
import itertools
from typing import Any

import pytest
from flask.testing import FlaskClient

from .helpers import get_ok, post_ok

# Llama 3.1 8B on one H100 under vLLM: 2,000-token prompts, 400-token answers, lengths spread.
CHAT = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "prompt_tokens": 2000,
    "output_tokens": 400,
    "prompt_tokens_cv": 0.5,
    "output_tokens_cv": 0.5,
}
PERCENTILES = ("mean", "p50", "p90", "p95", "p99")


def latency(client: FlaskClient, **fields: Any) -> dict[str, Any]:
    return post_ok(client, "/v1/latency", {**CHAT, **fields})


def test_p99_ttft_rises_with_the_rate_and_past_capacity_there_is_no_steady_state(client: FlaskClient) -> None:
    body = latency(client, sweep_rates=[0.5, 2, 4, 6, 8, 30])
    saturation = body["saturation_rate"]
    rows = body["rates"]
    assert [r["request_rate"] for r in rows] == [0.5, 2, 4, 6, 8, 30]
    assert all(r["utilization"] == pytest.approx(r["request_rate"] / saturation) for r in rows)
    steady = [r for r in rows if r["stable"]]
    p99 = [r["ttft_ms"]["p99"] for r in steady]
    assert len(steady) >= 4 and p99 == sorted(p99) and p99[-1] > p99[0]
    for row in steady:  # each percentile block is ordered
        for metric in ("queue_wait_ms", "ttft_ms", "tpot_ms", "e2e_ms"):
            values = [row[metric][p] for p in PERCENTILES[1:]]
            assert values == sorted(values), (metric, values)
    past = rows[-1]
    assert saturation < 30 and not past["stable"]
    assert past["ttft_ms"] == dict.fromkeys(PERCENTILES) and past["in_flight_mean"] is None
    assert any("past capacity" in w for w in body["warnings"])


def test_bursty_arrivals_raise_p99_ttft_over_poisson_at_the_same_rate(client: FlaskClient) -> None:
    poisson = latency(client, request_rate=4)["rates"][0]
    bursty = latency(client, request_rate=4, arrival="gamma", burstiness=0.25)["rates"][0]
    assert bursty["ttft_ms"]["p99"] > poisson["ttft_ms"]["p99"]


@pytest.mark.parametrize("mode", ["analytic", "simulate"])
def test_the_max_request_rate_meets_the_slos_and_a_little_more_does_not(client: FlaskClient, mode: str) -> None:
    slos = {"ttft_slo_ms": 1500, "tpot_slo_ms": 40, "slo_percentile": 95, "mode": mode}
    found = latency(client, request_rate=1, **slos)
    rate = found["max_request_rate"]
    assert 0 < rate < found["saturation_rate"] and found["max_request_rate_meets_slo"] is True
    assert found["max_request_rate_bound_by"] in ("ttft_slo", "tpot_slo", "kv_capacity", "saturation")
    at, above = latency(client, sweep_rates=[rate, rate * 1.05], **slos)["rates"]
    assert at["meets_slo"] is True and above["meets_slo"] is False
    if found["max_request_rate_bound_by"] == "tpot_slo" and above["stable"]:
        assert above["tpot_ms"]["p95"] > slos["tpot_slo_ms"] >= at["tpot_ms"]["p95"]


def test_simulate_is_deterministic_for_a_seed_and_gives_confidence_half_widths(client: FlaskClient) -> None:
    first = latency(client, request_rate=4, mode="simulate", seed=7, requests=2000)
    again = latency(client, request_rate=4, mode="simulate", seed=7, requests=2000)  # POST: never remembered
    other = latency(client, request_rate=4, mode="simulate", seed=8, requests=2000)
    assert first["rates"] == again["rates"]
    assert first["rates"] != other["rates"]
    row = first["rates"][0]
    # 10% of the requests are warm-up: simulated, not measured.
    assert row["measured_requests"] == 1800
    assert all(row["confidence_95_ms"]["ttft_ms"][p] >= 0 for p in PERCENTILES)


def test_get_form_and_csv_give_one_row_per_rate(client: FlaskClient) -> None:
    body = get_ok(client, "/v1/latency", **CHAT, sweep_rates=[1, 2, 3])
    assert len(body["rates"]) == 3
    response = client.get("/v1/latency", query_string={**CHAT, "sweep_rates": "1,2,3", "format": "csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [float(r["request_rate"]) for r in rows] == [1, 2, 3]
    assert {"ttft_ms_p99", "tpot_ms_p50", "queue_wait_ms_mean", "utilization", "stable"} <= set(rows[0])


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"request_rate": 0}, "request_rate"),
        ({"request_rate": -1}, "request_rate"),
        ({"sweep_rates": [1, 0]}, "sweep_rates.1"),
        ({"request_rate": 1, "sweep_rates": [1]}, "request_rate"),
        ({}, "request_rate"),
        ({"request_rate": 1, "arrival": "gamma", "burstiness": 0}, "burstiness"),
        ({"request_rate": 1, "burstiness": 0.5}, "burstiness"),  # Poisson arrivals have burstiness 1
        ({"request_rate": 1, "prompt_tokens_cv": -0.1}, "prompt_tokens_cv"),
        ({"request_rate": 1, "slo_percentile": 97}, "slo_percentile"),
        ({"request_rate": 1, "mode": "simulate", "requests": 60_000}, "requests"),
        ({"request_rate": 1, "mode": "exact"}, "mode"),
        # 5 rates x 50,000 requests is over the 200,000 one answer may simulate.
        ({"sweep_rates": [1, 2, 3, 4, 5], "mode": "simulate", "requests": 50_000}, "requests"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client: FlaskClient, fields: dict[str, Any], named: str) -> None:
    response = client.post("/v1/latency", json={**CHAT, **fields})
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert named in response.get_json()["errors"]


@pytest.mark.parametrize(("model", "tensor_parallel"), [("llama-3.1-70b", 8), ("llama-3.1-8b", 1)])
def test_a_lower_max_num_seqs_never_raises_the_capacity(client: FlaskClient, model: str, tensor_parallel: int) -> None:
    """Why a fleet's shape search tries tensor-parallel sizes but not running-batch caps: in this
    model a cap below the engine's only moves waiting from TPOT into the seat queue (TTFT), so
    the highest rate meeting both SLOs can only fall with it."""
    shape = {**CHAT, "model": model, "tensor_parallel": tensor_parallel, "request_rate": 1}
    slos = {"tpot_slo_ms": 40, "ttft_slo_ms": 1500}
    rates = [latency(client, **shape, **slos)["max_request_rate"]]
    rates += [latency(client, **shape, **slos, max_num_seqs=cap)["max_request_rate"] for cap in (128, 64, 32, 16)]
    assert all(lower <= higher * 1.005 for higher, lower in itertools.pairwise(rates)), rates
    assert rates[-1] < rates[0]
