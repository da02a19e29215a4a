"""/v1/autoscaling/simulate through HTTP: a small day under the default policy and the static
plan, a recommendation, and every refusal naming its field."""

import pytest

from app.planning.simulated_day import MAX_SIMULATED_REQUESTS

from .helpers import post_ok

# Four hours of Llama 3.1 8B on H100 answering 4,000 tokens at a 15 ms TPOT (0.7 requests/s a
# replica), the busiest hour 3x the quietest: one replica to three.
HOURS = (1800, 3600, 5400, 3600)
DAY = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "prompt_tokens": 1000,
    "output_tokens": 4000,
    "ttft_slo_ms": 1000,
    "tpot_slo_ms": 15,
    "forecast": [{"hour": f"{h:02d}:00", "requests": r} for h, r in enumerate(HOURS)],
    "policy": {"min_replicas": 1},
}


def refused(client, body, field):
    response = client.post("/v1/autoscaling/simulate", json=body)
    assert response.status_code == 422, response.get_data(as_text=True)
    problem = response.get_json()
    assert field in problem["errors"], problem
    return problem


def test_a_day_under_the_default_policy_beside_the_static_plan(client):
    body = post_ok(client, "/v1/autoscaling/simulate", DAY)
    policy = body["policy"]
    # The triggers format=keda emits for vLLM, a cold start's delay, the KEDA policy's window.
    assert [t["signal"] for t in policy["triggers"]] == ["in_flight", "waiting", "kv_usage"]
    assert all(m.startswith("vllm:") for t in policy["triggers"] for m in t["metrics"])
    assert policy["scale_up_delay_s"] == pytest.approx(body["cold_start_s"])
    assert body["cold_start_s"] > 180  # node provisioning, then the weights and the engine's start-up
    assert policy["scale_down_delay_s"] >= 300 and policy["min_replicas"] == 1
    day, static = body["autoscaled"], body["static"]
    assert len(day["per_hour"]) == 4 and day["requests"] == sum(h["requests"] for h in day["per_hour"])
    assert day["requests"] == pytest.approx(sum(HOURS), rel=0.03)
    assert day["finished"] == day["requests"] and static["finished"] == static["requests"]
    # The static plan holds its peak fleet all day; the policy follows the traffic for fewer GPU-hours.
    assert static["gpu_hours"] >= static["replicas"] * 4
    assert day["gpu_hours"] < static["gpu_hours"]
    assert day["timeline"][0]["t_s"] == 0 and max(h["replicas_max"] for h in day["per_hour"]) > 1
    assert day["cost_usd"] == pytest.approx(day["gpu_hours"] * body["price_per_gpu_hour_usd"], abs=0.01)
    assert body["recommendation"] is None


def test_a_trigger_the_engine_does_not_export_is_refused(client):
    policy = {"trigger": "sglang:num_queue_reqs", "threshold": 10}
    problem = refused(client, {**DAY, "policy": policy}, "policy.trigger")
    assert "vllm:num_requests_waiting" in problem["detail"]
    # Named as SGLang exports it, under SGLang, it is a trigger.
    body = post_ok(client, "/v1/autoscaling/simulate", {**DAY, "engine": "sglang", "policy": policy})
    assert [t["metrics"] for t in body["policy"]["triggers"]] == [["sglang:num_queue_reqs"]]


@pytest.mark.parametrize(
    ("policy", "field"),
    [
        ({"scale_up_delay_s": -1}, "policy.scale_up_delay_s"),
        ({"scale_down_delay_s": -5}, "policy.scale_down_delay_s"),
        ({"min_replicas": 5, "max_replicas": 2}, "policy.min_replicas"),
        ({"threshold": 3}, "policy.threshold"),
        ({"warm_pool": -1}, "policy.warm_pool"),
    ],
)
def test_bad_policies_name_their_field(client, policy, field):
    refused(client, {**DAY, "policy": policy}, field)


def test_a_forecast_with_no_rows_or_no_requests_is_refused(client):
    refused(client, {**DAY, "forecast": []}, "forecast")
    refused(client, {**DAY, "forecast": [{"requests": 0}]}, "forecast")
    response = client.get("/v1/autoscaling/simulate", query_string={"model": "llama-3.1-8b", "gpu": "h100-sxm"})
    assert response.status_code == 422 and "forecast" in response.get_json()["errors"]


def test_a_day_over_the_request_limit_is_refused_before_it_runs_saying_the_limit(client):
    per_hour = MAX_SIMULATED_REQUESTS / 24 / 2 + 1000  # the policy's day and the static plan's: over the limit
    problem = refused(client, {**DAY, "forecast": [{"requests": per_hour}] * 24}, "forecast")
    assert f"{MAX_SIMULATED_REQUESTS:,}" in problem["detail"]
    small = {**DAY, "forecast": [{"requests": MAX_SIMULATED_REQUESTS / 2 / 6 - 1000}] * 6, "recommend": True}
    problem = refused(client, small, "recommend")
    assert f"{MAX_SIMULATED_REQUESTS:,}" in problem["detail"]


def test_a_recommendation_meets_the_violation_target_cheaper_than_the_static_plan(client):
    body = post_ok(client, "/v1/autoscaling/simulate", {**DAY, "recommend": True, "max_violation_rate": 0.02})
    found = body["recommendation"]
    assert found["status"] == "ok" and found["day"]["violation_rate"] <= 0.02
    assert found["day"]["gpu_hours"] < body["static"]["gpu_hours"]
    assert {"min_replicas", "warm_pool", "threshold_scale"} <= set(found["grid"][0])
    assert found["policy"]["threshold_scale"] in (1.0, 0.7)


def test_a_request_logs_hourly_periods_are_a_day_as_they_come(client):
    # Four hours logged at 0.5, 1, 1.5 and 1 requests a second, the last half covered.
    rows, t = ["timestamp,prompt_tokens,output_tokens"], 0.0
    for hour, gap in enumerate((2.0, 1.0, 2 / 3, 1.0)):
        end = (hour + 1) * 3600 - (1800 if hour == 3 else 0)
        while t < end:
            rows.append(f"{1_780_000_000 + t:.3f},1000,4000")
            t += gap
        t = (hour + 1) * 3600
    log = client.post("/v1/traces?model=llama-3.1-8b", data="\n".join(rows), content_type="text/csv")
    assert log.status_code == 200, log.get_data(as_text=True)
    periods = log.get_json()["periods"]
    body = post_ok(client, "/v1/autoscaling/simulate", {**DAY, "forecast": periods})
    # Each hour brings its rate over the part the log covers: a 24th of its requests_per_day.
    expected = [p["requests_per_day"] / 24 for p in periods]
    assert len(body["autoscaled"]["per_hour"]) == len(periods)
    assert body["requests"] == pytest.approx(sum(expected), rel=0.05)
    refused(client, {**DAY, "forecast": [{"hour": "00:00"}]}, "forecast.0.requests")


def test_a_day_over_the_requests_work_budget_is_refused_before_it_runs(client):
    # 1,000/300-token requests are predicted at about 1.1 units each: two days of 480,000 are over 1,000,000.
    body = {**DAY, "output_tokens": 300, "forecast": [{"requests": 20_000}] * 24}
    problem = refused(client, body, "forecast")
    assert "WORK_BUDGET_UNITS" in problem["detail"] and "1,000,000" in problem["detail"]
