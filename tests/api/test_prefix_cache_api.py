"""Prefix caching through the HTTP client: /v1/fit and /v1/throughput take a hit rate and a
shared prefix and say what they save; bad values are 422s naming the field."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "ideal"}


def test_a_shared_system_prompt_is_held_once_and_said_so(client: FlaskClient) -> None:
    plain = client.get("/v1/fit", query_string={**L8_H100, "prompt_tokens": 2048}).get_json()
    shared = client.get("/v1/fit", query_string={**L8_H100, "prompt_tokens": 2048, "shared_prefix_tokens": 2000})
    assert shared.status_code == 200
    body = shared.get_json()
    per_token = body["kv_bytes_per_token"]
    assert body["shared_prefix_kv_bytes"] == 2000 * per_token
    assert body["kv_bytes_per_sequence"] == plain["kv_bytes_per_sequence"] - 2000 * per_token
    assert body["max_concurrency"] > 4 * plain["max_concurrency"]
    assert body["kv_bytes_saved"] == 2000 * per_token * (body["max_concurrency"] - 1)
    assert plain["shared_prefix_kv_bytes"] == plain["kv_bytes_saved"] == 0


def test_throughput_says_the_prefill_tokens_it_computes(client: FlaskClient) -> None:
    query = {**L8_H100, "prompt_tokens": 8000, "output_tokens": 200}
    plain = client.get("/v1/throughput", query_string=query).get_json()
    cached = client.post("/v1/throughput", json={**query, "prefix_cache_hit_rate": 0.75}).get_json()
    assert (plain["prefill_tokens_computed"], cached["prefill_tokens_computed"]) == (8000, 2000)
    assert 0.25 < cached["ttft_ms"] / plain["ttft_ms"] < 0.28
    assert cached["time_per_token_ms"] == plain["time_per_token_ms"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"prefix_cache_hit_rate": 1.5}, "prefix_cache_hit_rate"),
        ({"prefix_cache_hit_rate": -0.1}, "prefix_cache_hit_rate"),
        ({"prompt_tokens": 1000, "shared_prefix_tokens": 1001}, "shared_prefix_tokens"),
    ],
)
def test_bad_prefix_values_are_422_naming_the_field(client: FlaskClient, extra: dict[str, float], field: str) -> None:
    response = client.post("/v1/throughput", json={**L8_H100, **extra})
    assert response.status_code == 422
    assert field in response.get_json()["errors"]


def test_a_chat_fleet_with_a_prefix_cache_needs_fewer_gpus(client: FlaskClient) -> None:
    traffic = {
        **L8_H100,
        "engine": "vllm",
        "requests_per_day": 5e6,
        "prompt_tokens": 8000,
        "output_tokens": 200,
        "ttft_slo_ms": 2000,
        "tpot_slo_ms": 50,
    }
    plain = client.post("/v1/fleet", json=traffic)
    cached = client.post("/v1/fleet", json={**traffic, "prefix_cache_hit_rate": 0.75})
    shared = client.post("/v1/fleet", json={**traffic, "shared_prefix_tokens": 6000})
    assert plain.status_code == cached.status_code == shared.status_code == 200, cached.get_data(as_text=True)[:300]
    gpus = [r.get_json()["gpus_total"] for r in (plain, cached, shared)]
    assert gpus[1] <= 0.6 * gpus[0] and gpus[2] <= 0.6 * gpus[0], gpus
    analytic = client.post("/v1/latency", json={**L8_H100, "request_rate": 1, "shared_prefix_tokens": 100})
    assert analytic.status_code == 200


def test_simulated_latency_and_batches_take_prefix_caching(client: FlaskClient) -> None:
    query = {**L8_H100, "prompt_tokens": 8000, "output_tokens": 100, "mode": "simulate", "requests": 1000}
    plain = client.post("/v1/latency", json={**query, "request_rate": 2})
    cached = client.post("/v1/latency", json={**query, "request_rate": 2, "prefix_cache_hit_rate": 0.75})
    assert plain.status_code == cached.status_code == 200, cached.get_data(as_text=True)[:300]
    assert cached.get_json()["rates"][0]["ttft_ms"]["p50"] < plain.get_json()["rates"][0]["ttft_ms"]["p50"] / 2
    batch = {**L8_H100, "prompt_tokens": 2048, "output_tokens": 512, "requests": 500}
    one = client.post("/v1/batch", json=batch).get_json()
    shared = client.post("/v1/batch", json={**batch, "shared_prefix_tokens": 2000}).get_json()
    assert shared["makespan_s"] < one["makespan_s"]
    assert shared["max_concurrency"] > 4 * one["max_concurrency"]


@pytest.mark.parametrize(
    "layout",
    [{"gpu": "h100-sxm", "topology": "disaggregated"}, {"mix": "true", "gpus": "h100-sxm,a100-sxm-80gb"}],
    ids=["disaggregated", "mixed"],
)
def test_pools_are_sized_on_the_prompt_a_prefix_cache_leaves_to_compute(
    client: FlaskClient, layout: dict[str, str]
) -> None:
    """Each pool's replicas compute only the uncached prompt (and hold the shared prefix once),
    so a cache hit rate shrinks the fleet; what the plan does not model is the routing that
    earns the hit rate, and the answer says so."""
    query = {
        "model": "llama-3.1-8b",
        "requests_per_day": 2_000_000,
        "prompt_tokens": 4000,
        "output_tokens": 200,
        "ttft_slo_ms": 1000,
        "tpot_slo_ms": 40,
        **layout,
    }
    plain = client.get("/v1/fleet", query_string=query).get_json()
    cached = client.get(
        "/v1/fleet", query_string={**query, "prefix_cache_hit_rate": 0.8, "shared_prefix_tokens": 3000}
    ).get_json()
    assert cached["meets_slo"] and plain["meets_slo"]
    assert cached["gpus_total"] < plain["gpus_total"]
    assert cached["monthly_cost_usd"] < plain["monthly_cost_usd"]
    assert "prefix_cache_hit_rate assumes" in cached["leaves_out"]
