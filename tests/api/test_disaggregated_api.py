"""/v1/fleet with topology=disaggregated: a prefill pool sized on TTFT, a decode pool on
TPOT, the KV moved between them, and the aggregated plan beside them, with the arithmetic of each
pool's size written out here from the answer's own capacities and the catalog's price."""

from __future__ import annotations

import csv
import io
import math

import pytest

from .helpers import get_ok, post_ok

SECONDS_PER_DAY = 86_400
HOURS_PER_MONTH = 730
# Llama 3.1 8B: 32 layers x 8 KV heads x 128 dims x K and V x 2 bytes (bf16) per token.
LLAMA_8B_KV_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2
TRAFFIC = {"requests_per_day": 2_000_000, "peak_to_average": 2}
# Tight TPOT: chunked prefill of long prompts drags every decode step of an aggregated replica.
SLOS = {"ttft_slo_ms": 1000, "tpot_slo_ms": 20}
LONG_PROMPTS = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt_tokens": 8000, "output_tokens": 200}
CHAT = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt_tokens": 200, "output_tokens": 800}


def plan(client, **query):
    return get_ok(client, "/v1/fleet", topology="disaggregated", **TRAFFIC, **SLOS, **query)


def h100_price(client) -> float:
    return get_ok(client, "/v1/gpus/h100-sxm")["hourly_price_usd"]


def expected_gpus(max_request_rate: float, tensor_parallel: int, spares: int = 1) -> int:
    """Replicas for the peak at the replica's capacity, plus the spare, times its GPUs."""
    peak_per_s = TRAFFIC["requests_per_day"] / SECONDS_PER_DAY * TRAFFIC["peak_to_average"]
    return (math.ceil(peak_per_s / max_request_rate - 1e-9) + spares) * tensor_parallel


def check_pool(pool: dict, price: float) -> None:
    replica = pool["replica"]
    assert replica["meets_slo"]
    gpus = expected_gpus(replica["max_request_rate"], replica["tensor_parallel"])
    assert pool["gpus_total"] == gpus
    assert pool["monthly_cost_usd"] == pytest.approx(gpus * price * HOURS_PER_MONTH, abs=0.01)


def test_long_prompts_under_a_tight_tpot_cost_less_disaggregated(client):
    body = plan(client, **LONG_PROMPTS)
    price = h100_price(client)
    prefill, decode, aggregated = body["prefill_pool"], body["decode_pool"], body["aggregated"]
    assert body["meets_slo"] and body["topology"] == "disaggregated"
    check_pool(prefill, price)
    check_pool(decode, price)
    # The prefill replica decodes nothing; the decode replica's steps carry no prompt.
    assert prefill["replica"]["time_per_token_ms"] == 0
    assert decode["replica"]["time_per_token_ms"] <= SLOS["tpot_slo_ms"]
    assert body["gpus_total"] == prefill["gpus_total"] + decode["gpus_total"]
    assert body["monthly_cost_usd"] == pytest.approx(prefill["monthly_cost_usd"] + decode["monthly_cost_usd"])
    assert body["pd_ratio"] == f"{prefill['gpus_total']}:{decode['gpus_total']}"
    # The aggregated plan on the same GPU: its replica, bound by the TPOT, takes fewer requests
    # per GPU than the two pools together.
    agg_gpus = expected_gpus(aggregated["max_request_rate"], aggregated["tensor_parallel"])
    assert aggregated["gpus_total"] == agg_gpus and aggregated["bound_by"] == "tpot_slo"
    assert aggregated["monthly_cost_usd"] == pytest.approx(agg_gpus * price * HOURS_PER_MONTH, abs=0.01)
    assert body["monthly_cost_usd"] < aggregated["monthly_cost_usd"]
    assert body["cheaper"] == "disaggregated"
    saved = aggregated["monthly_cost_usd"] - body["monthly_cost_usd"]
    assert body["comparison"].startswith(f"{saved:.2f} USD a month less")
    # Both pools' month over the output tokens of the month: 2M x 200 a day over 730/24 days.
    tokens = TRAFFIC["requests_per_day"] * 200 * HOURS_PER_MONTH / 24
    assert body["cost_per_million_output_tokens_usd"] == pytest.approx(body["monthly_cost_usd"] / tokens * 1e6)


def test_short_prompt_chat_costs_less_aggregated(client):
    body = plan(client, **CHAT)
    price = h100_price(client)
    prefill, decode, aggregated = body["prefill_pool"], body["decode_pool"], body["aggregated"]
    check_pool(prefill, price)
    check_pool(decode, price)
    agg_gpus = expected_gpus(aggregated["max_request_rate"], aggregated["tensor_parallel"])
    assert aggregated["gpus_total"] == agg_gpus
    # 200-token prompts barely disturb a decode step: one pool with one spare beats two with two.
    assert aggregated["monthly_cost_usd"] < body["monthly_cost_usd"]
    assert body["cheaper"] == "aggregated"
    assert body["comparison"].endswith("two pools carry two sets of spares")


def test_the_kv_transfer_is_the_prompt_s_cache_over_the_link(client):
    body = plan(client, **LONG_PROMPTS)
    transfer = body["kv_transfer"]
    kv_bytes = LONG_PROMPTS["prompt_tokens"] * LLAMA_8B_KV_BYTES_PER_TOKEN
    assert transfer["bytes_per_request"] == kv_bytes
    gpu = get_ok(client, "/v1/gpus/h100-sxm")
    tps = (body["prefill_pool"]["replica"]["tensor_parallel"], body["decode_pool"]["replica"]["tensor_parallel"])
    assert sum(tps) <= gpu["gpus_per_node"]  # one prefill and one decode replica share an H100 node
    assert transfer["link"] == "nvlink"
    link = gpu["interconnect"]
    assert transfer["gb_per_s_per_gpu"] == link["bandwidth_gb_per_s"]
    assert transfer["parallel_gpus"] == min(tps)
    seconds = link["latency_us"] * 1e-6 + kv_bytes / (link["bandwidth_gb_per_s"] * 1e9 * min(tps))
    assert transfer["ms"] == pytest.approx(seconds * 1e3)
    # TTFT: the prefill replica's at the percentile, then the transfer; the prefill pool was held
    # to the SLO less the slowest transfer (the H100 node's 400 Gb/s NIC, one rank sending).
    assert body["ttft_ms"] == pytest.approx(body["prefill_pool"]["replica"]["ttft_ms"] + transfer["ms"])
    over_network_ms = (20e-6 + kv_bytes / (50e9 * 1)) * 1e3
    assert body["prefill_ttft_budget_ms"] == pytest.approx(SLOS["ttft_slo_ms"] - over_network_ms)
    assert body["ttft_ms"] <= SLOS["ttft_slo_ms"]


def test_a_slower_network_leaves_the_prefill_pool_less_ttft(client):
    body = plan(client, **LONG_PROMPTS, network_gb_per_s=5)
    kv_bytes = LONG_PROMPTS["prompt_tokens"] * LLAMA_8B_KV_BYTES_PER_TOKEN
    assert body["prefill_ttft_budget_ms"] == pytest.approx(SLOS["ttft_slo_ms"] - (20e-6 + kv_bytes / 5e9) * 1e3)
    faster = plan(client, **LONG_PROMPTS)
    assert body["prefill_pool"]["gpus_total"] >= faster["prefill_pool"]["gpus_total"]


def test_the_simulator_confirms_each_pool_at_its_planned_peak(client):
    """mode=simulate runs each pool's replica at its planned peak: the prefill replica's TTFT and
    the decode replica's TPOT agree with the analytic prediction within the open-loop grid
    tolerances (p50 25%, p99 35%)."""
    body = plan(client, **LONG_PROMPTS, mode="simulate", seed=1, requests=20_000)
    for pool, metric in (("prefill_pool", "ttft_ms"), ("decode_pool", "tpot_ms")):
        replica = body[pool]["replica"]
        simulated, predicted = replica["simulated"], replica["predicted"]
        assert simulated["stable"], pool
        assert simulated["request_rate"] == pytest.approx(predicted["request_rate"])
        assert simulated[metric]["p50"] == pytest.approx(predicted[metric]["p50"], rel=0.25), pool
        assert simulated[metric]["p99"] == pytest.approx(predicted[metric]["p99"], rel=0.35), pool


def test_a_forecast_sizes_both_pools_in_every_period(client):
    forecast = [{"period": f"2027-{m:02d}", "requests_per_day": 500_000 * m} for m in range(1, 5)]
    query = {**LONG_PROMPTS, **SLOS, "topology": "disaggregated", "peak_to_average": 2}
    body = post_ok(client, "/v1/fleet", {**query, "forecast": forecast})
    periods = body["periods"]
    assert [p["period"] for p in periods] == [f["period"] for f in forecast]
    prefill_rate = body["prefill_pool"]["replica"]["max_request_rate"]
    decode_rate = body["decode_pool"]["replica"]["max_request_rate"]
    tps = (body["prefill_pool"]["replica"]["tensor_parallel"], body["decode_pool"]["replica"]["tensor_parallel"])
    for row, asked in zip(periods, forecast, strict=True):
        peak = asked["requests_per_day"] / SECONDS_PER_DAY * 2
        expected = [
            (math.ceil(peak / rate - 1e-9) + 1) * tp for rate, tp in zip((prefill_rate, decode_rate), tps, strict=True)
        ]
        assert [row["prefill_gpus_total"], row["decode_gpus_total"]] == expected
        assert row["gpus_total"] == sum(expected)
        tokens = asked["requests_per_day"] * LONG_PROMPTS["output_tokens"] * HOURS_PER_MONTH / 24
        assert row["cost_per_million_output_tokens_usd"] == pytest.approx(row["monthly_cost_usd"] / tokens * 1e6)
    # the last period is the busiest: the answer's own pools are its
    assert periods[-1]["gpus_total"] == body["gpus_total"]


def test_the_csv_has_one_row_per_pool(client):
    query = {"topology": "disaggregated", **TRAFFIC, **SLOS, **LONG_PROMPTS, "format": "csv"}
    response = client.get("/v1/fleet", query_string=query)
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    body = plan(client, **LONG_PROMPTS)
    assert [r["pool"] for r in rows] == ["prefill", "decode"]
    assert [int(r["gpus_total"]) for r in rows] == [
        body["prefill_pool"]["gpus_total"],
        body["decode_pool"]["gpus_total"],
    ]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"engine": "ideal"}, "topology"),
        ({"network_gb_per_s": 0}, "network_gb_per_s"),
        ({"network_gb_per_s": -10}, "network_gb_per_s"),
        ({"per_replica_tokens_per_s": 3000}, "per_replica_tokens_per_s"),
        ({"e2e_slo_ms": 5000}, "e2e_slo_ms"),
        ({"topology": "bogus"}, "topology"),
    ],
)
def test_bad_disaggregated_requests_answer_422_naming_the_field(client, extra, field):
    query = {"topology": "disaggregated", **TRAFFIC, **SLOS, **LONG_PROMPTS, **extra}
    response = client.get("/v1/fleet", query_string=query)
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert field in response.get_json()["errors"]


def test_a_keda_policy_is_not_offered_for_two_pools(client):
    query = {"topology": "disaggregated", **TRAFFIC, **SLOS, **LONG_PROMPTS, "format": "keda"}
    response = client.get("/v1/fleet", query_string=query)
    assert response.status_code == 422
    assert "topology" in response.get_json()["errors"]


def test_the_aggregated_answer_says_its_topology(client):
    body = get_ok(client, "/v1/fleet", **TRAFFIC, **SLOS, **CHAT)
    assert body["topology"] == "aggregated" and "prefill_pool" not in body


def test_one_p_d_unit_s_ttft_is_its_prefill_replica_s_plus_the_transfer(client):
    """/v1/latency with topology=disaggregated: the prefill replica is the same queueing model as
    an aggregated replica whose requests leave after one token, so its TTFT plus the transfer is
    the unit's; TPOT is the decode replica's, free of the prompts' chunks."""
    shape = {k: v for k, v in LONG_PROMPTS.items()}
    rates = "0.5,1,2"
    unit = get_ok(client, "/v1/latency", topology="disaggregated", sweep_rates=rates, **SLOS, **shape)
    prompts_only = get_ok(client, "/v1/latency", sweep_rates=rates, **SLOS, **{**shape, "output_tokens": 1})
    aggregated = get_ok(client, "/v1/latency", sweep_rates=rates, **SLOS, **shape)
    transfer_ms = unit["kv_transfer"]["ms"]
    assert unit["topology"] == "disaggregated" and aggregated["topology"] == "aggregated"
    for row, alone, agg in zip(unit["rates"], prompts_only["rates"], aggregated["rates"], strict=True):
        for q in ("p50", "p95", "p99"):
            assert row["ttft_ms"][q] == pytest.approx(alone["ttft_ms"][q] + transfer_ms)
        if agg["stable"]:
            assert row["tpot_ms"]["p99"] < agg["tpot_ms"]["p99"]
    assert unit["prefill_saturation_rate"] == pytest.approx(prompts_only["saturation_rate"])
    assert unit["saturation_rate"] == min(unit["prefill_saturation_rate"], unit["decode_saturation_rate"])
    # The unit takes what its slower half takes; here the prefill replica, held to the TTFT SLO
    # less the transfer.
    assert unit["max_request_rate_pool"] == "prefill"
    budget = get_ok(
        client,
        "/v1/latency",
        request_rate=1,
        ttft_slo_ms=SLOS["ttft_slo_ms"] - transfer_ms,
        **{**shape, "output_tokens": 1},
    )
    assert unit["max_request_rate"] == pytest.approx(budget["max_request_rate"])
    assert unit["max_request_rate"] > aggregated["max_request_rate"]


def test_a_p_d_unit_is_analytic_only(client):
    query = {"topology": "disaggregated", "request_rate": 1, **LONG_PROMPTS, "mode": "simulate"}
    response = client.get("/v1/latency", query_string=query)
    assert response.status_code == 422 and "mode" in response.get_json()["errors"]


def test_a_ttft_no_prefill_replica_meets_answers_200_with_the_decode_pool_alone(client):
    query = {"topology": "disaggregated", **TRAFFIC, **LONG_PROMPTS, "ttft_slo_ms": 5, "tpot_slo_ms": 20}
    body = get_ok(client, "/v1/fleet", **query)
    assert body["meets_slo"] is False and body["status"] == "no option meets the SLO"
    assert body["prefill_pool"] is None and body["decode_pool"] is not None
    rows = list(
        csv.DictReader(
            io.StringIO(client.get("/v1/fleet", query_string={**query, "format": "csv"}).get_data(as_text=True))
        )
    )
    assert [r["pool"] for r in rows] == ["decode"]


def test_the_prefill_budget_is_the_slowest_network_the_pools_may_sit_behind(client):
    """Over H100s and L4s, the prefill replica may land behind an L4 server's 100 Gb/s link
    (12.5 GB/s, the README's default for PCIe servers): the budget takes that, and the transfer
    the plan then has is no slower."""
    query = {k: v for k, v in LONG_PROMPTS.items() if k != "gpu"}
    body = plan(client, **query, gpus="h100-sxm,l4")
    kv_bytes = LONG_PROMPTS["prompt_tokens"] * LLAMA_8B_KV_BYTES_PER_TOKEN
    slowest_ms = (20e-6 + kv_bytes / 12.5e9) * 1e3
    assert body["prefill_ttft_budget_ms"] == pytest.approx(SLOS["ttft_slo_ms"] - slowest_ms)
    assert body["kv_transfer"]["ms"] <= slowest_ms
    if body["meets_slo"]:
        assert body["ttft_ms"] <= SLOS["ttft_slo_ms"]
