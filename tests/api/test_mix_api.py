"""/v1/fleet with mix=true: replica kinds chosen per length bucket by an integer
program, each kind with its N+1, beside the best single kind; the sizes worked out here from the
answer's own capacities and the catalog's prices."""

from __future__ import annotations

import csv
import io
import math

import pytest

from .helpers import post_ok

SECONDS_PER_DAY = 86_400
HOURS_PER_MONTH = 730
THREE = ["l4", "a100-sxm-80gb", "h100-sxm"]
# Mostly short chat turns, a few 120,000-token documents: only a big TP group holds the long
# ones, and its replicas are eight GPUs each.
SHORT_AND_LONG = [
    {"prompt_tokens": 100, "output_tokens": 100, "share": 0.95},
    {"prompt_tokens": 120_000, "output_tokens": 200, "share": 0.05},
]
REQUEST = {
    "model": "llama-3.1-8b",
    "mix": True,
    "gpus": THREE,
    "requests_per_day": 5_000_000,
    "ttft_slo_ms": 20_000,
    "tpot_slo_ms": 60,
    "length_buckets": SHORT_AND_LONG,
}


def prices(client) -> dict[str, float]:
    return {slug: client.get(f"/v1/gpus/{slug}").get_json()["hourly_price_usd"] for slug in THREE}


def pool_gpus(load: float, tensor_parallel: int, spares: int = 1) -> int:
    """fleet.size_fleet's rule for whole cards: replicas for the load, plus the spare, times TP."""
    return (max(1, math.ceil(load - 1e-6)) + spares) * tensor_parallel


def test_a_mix_over_l4_a100_and_h100_is_cheaper_than_any_single_kind(client):
    body = post_ok(client, "/v1/fleet", REQUEST)
    mix, price = body["mix"], prices(client)
    assert body["meets_slo"] and mix["solver_status"] == "optimal"
    peak = [REQUEST["requests_per_day"] / SECONDS_PER_DAY * b["share"] for b in SHORT_AND_LONG]
    assert [b["peak_requests_per_s"] for b in mix["buckets"]] == pytest.approx(peak)
    total = 0.0
    for pool in mix["pools"]:
        load = sum(part["requests_per_s"] / part["capacity_per_replica"] for part in pool["buckets"])
        gpus = pool_gpus(load, pool["tensor_parallel"])
        assert pool["gpus_total"] == gpus
        assert pool["monthly_cost_usd"] == pytest.approx(gpus * price[pool["gpu"]] * HOURS_PER_MONTH, abs=0.01)
        total += pool["monthly_cost_usd"]
    assert mix["monthly_cost_usd"] == pytest.approx(total) == body["monthly_cost_usd"]
    # The best single kind, sized by the same rule on its own capacities, costs strictly more.
    single = mix["single_kind"]
    load = sum(rate / capacity for rate, capacity in zip(peak, single["capacity_per_replica"], strict=True))
    gpus = pool_gpus(load, single["tensor_parallel"])
    assert single["gpus_total"] == gpus
    assert single["monthly_cost_usd"] == pytest.approx(gpus * price[single["gpu"]] * HOURS_PER_MONTH, abs=0.01)
    assert mix["monthly_cost_usd"] < single["monthly_cost_usd"]
    assert mix["savings_usd"] == pytest.approx(single["monthly_cost_usd"] - mix["monthly_cost_usd"])
    # Each bucket is served in full, and the long one by a kind that holds it.
    served = {}
    for pool in mix["pools"]:
        for part in pool["buckets"]:
            served[part["bucket"]] = served.get(part["bucket"], 0.0) + part["share"]
    assert served == pytest.approx({0: 1.0, 1: 1.0})
    assert len({p["gpu"] for p in mix["pools"]}) == 2, "the short turns go to a kind of their own"
    # Each pool deploys with its own line: its TP, and the longest context it serves.
    for pool in mix["pools"]:
        longest = max(part["prompt_tokens"] + part["output_tokens"] for part in pool["buckets"])
        assert f"--tensor-parallel-size {pool['tensor_parallel']} " in pool["vllm_command"]
        assert f"--max-model-len {longest} " in pool["vllm_command"]


def test_with_one_workload_the_mix_is_the_single_kind(client):
    one = {**REQUEST, "length_buckets": [{"prompt_tokens": 2000, "output_tokens": 400, "share": 1.0}]}
    mix = post_ok(client, "/v1/fleet", one)["mix"]
    assert mix["savings_usd"] == 0
    assert len(mix["pools"]) == 1 and mix["monthly_cost_usd"] == mix["single_kind"]["monthly_cost_usd"]


def test_buckets_are_drawn_from_the_spread_when_not_given(client):
    request = {k: v for k, v in REQUEST.items() if k != "length_buckets"}
    body = post_ok(
        client, "/v1/fleet", {**request, "prompt_tokens": 1000, "output_tokens": 300, "prompt_tokens_cv": 1.0}
    )
    buckets = body["mix"]["buckets"]
    assert len(buckets) == 2 and sum(b["share"] for b in buckets) == pytest.approx(1.0)
    # two strata of the prompt around its mean, the output fixed
    assert buckets[0]["prompt_tokens"] < 1000 < buckets[1]["prompt_tokens"]
    assert {b["output_tokens"] for b in buckets} == {300}


def test_a_bucket_no_kind_can_serve_is_a_best_effort(client):
    impossible = {**REQUEST, "ttft_slo_ms": 50, "gpus": ["l4"]}
    body = post_ok(client, "/v1/fleet", impossible)
    assert body["status"] == "no option meets the SLO" and body["meets_slo"] is False
    mix = body["mix"]
    assert mix["unserved_buckets"] or mix["dropped_buckets"]


def test_a_forecast_resizes_each_pool_of_the_mix(client):
    forecast = [{"period": f"2027-{m:02d}", "requests_per_day": 1_000_000 * m} for m in range(1, 6)]
    body = post_ok(client, "/v1/fleet", {**REQUEST, "forecast": forecast})
    mix = body["mix"]
    periods = mix["periods"]
    assert [p["period"] for p in periods] == [f["period"] for f in forecast]
    for row, asked in zip(periods, forecast, strict=True):
        scale = asked["requests_per_day"] / REQUEST["requests_per_day"]
        expected = []
        for pool in mix["pools"]:
            load = sum(part["requests_per_s"] / part["capacity_per_replica"] for part in pool["buckets"])
            expected.append(pool_gpus(load * scale, pool["tensor_parallel"]))
        assert row["pool_gpus_total"] == expected
        assert row["gpus_total"] == sum(expected)
        # The period's month over its output tokens: 95% of requests bring 100, 5% bring 200.
        tokens = asked["requests_per_day"] * (0.95 * 100 + 0.05 * 200) * 730 / 24
        assert row["cost_per_million_output_tokens_usd"] == pytest.approx(row["monthly_cost_usd"] / tokens * 1e6)
    assert periods[-1]["gpus_total"] == mix["gpus_total"]  # the fifth period is the request's traffic


def test_the_csv_has_one_row_per_pool(client):
    response = client.post("/v1/fleet?format=csv", json=REQUEST)
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    mix = post_ok(client, "/v1/fleet", REQUEST)["mix"]
    assert [r["gpu"] for r in rows] == [p["gpu"] for p in mix["pools"]]
    assert [int(r["gpus_total"]) for r in rows] == [p["gpus_total"] for p in mix["pools"]]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"length_buckets": [{"prompt_tokens": 100, "output_tokens": 100, "share": 0.5}]}, "length_buckets"),
        ({"gpus": []}, "gpus"),
        ({"gpu": "h100-sxm"}, "gpus"),
        ({"topology": "disaggregated"}, "topology"),
        ({"mix": False}, "length_buckets"),
        ({"tensor_parallel": 2}, "tensor_parallel"),
    ],
)
def test_bad_mixes_answer_422_naming_the_field(client, change, field):
    response = client.post("/v1/fleet", json={**REQUEST, **change})
    assert response.status_code == 422, response.get_data(as_text=True)
    assert field in response.get_json()["errors"]


def test_length_buckets_are_post_only_and_keda_is_not_offered(client):
    query = {"model": "llama-3.1-8b", "mix": "true", "requests_per_day": 1000, "length_buckets": "x"}
    assert client.get("/v1/fleet", query_string=query).status_code == 422
    response = client.post("/v1/fleet?format=keda", json=REQUEST)
    assert response.status_code == 422 and "mix" in response.get_json()["errors"]


def test_gpus_may_be_one_string_and_any_is_the_whole_catalog(client):
    listed = post_ok(client, "/v1/fleet", REQUEST)["mix"]
    joined = post_ok(client, "/v1/fleet", {**REQUEST, "gpus": ",".join(THREE)})["mix"]
    assert joined["pools"] == listed["pools"]
    anywhere = post_ok(client, "/v1/fleet", {**REQUEST, "gpus": "any"})["mix"]
    everything = post_ok(client, "/v1/fleet", {k: v for k, v in REQUEST.items() if k != "gpus"})["mix"]
    assert anywhere["kinds_considered"] == everything["kinds_considered"] > listed["kinds_considered"]
    assert anywhere["monthly_cost_usd"] <= listed["monthly_cost_usd"]


def test_an_unknown_gpu_in_the_list_is_a_404_naming_gpus(client):
    response = client.post("/v1/fleet", json={**REQUEST, "gpus": ["l4", "no-such-gpu"]})
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
    assert "no-such-gpu" in response.get_json()["errors"]["gpus"][0]
