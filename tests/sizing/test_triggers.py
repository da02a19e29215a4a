"""Autoscaling triggers (app/sizing/triggers.py): every threshold reproduced from the replica's
queueing model at its capacity rate, and each engine's names as its collector's source
defines them (tests/fixtures/engine_metrics.json)."""

import json
import math
from pathlib import Path

import pytest

from app.sizing import triggers
from app.sizing.fleet_plan import Arrivals, FleetInputs, plan_fleet
from app.sizing.plan import PlanInputs

from .specs import H100_SXM, LLAMA_31_8B

SOURCES = json.loads((Path(__file__).parents[1] / "fixtures" / "engine_metrics.json").read_text(encoding="utf-8"))
TTFT_SLO_S = 0.5
SHAPE = PlanInputs(prompt_tokens=1000, output_tokens=300)


@pytest.fixture(scope="module")
def plan():
    inputs = FleetInputs(
        requests_per_s=2_000_000 / 86_400, peak_to_average=3, ttft_slo_ms=500, tpot_slo_ms=50, arrivals=Arrivals()
    )
    return plan_fleet(LLAMA_31_8B, H100_SXM, "h100-sxm", SHAPE, inputs)


def test_each_engine_names_only_gauges_its_own_collector_defines():
    for engine, source in SOURCES.items():
        if engine.startswith("_"):
            continue
        names = triggers.engine_metrics(engine).names
        assert set(names) <= set(source["gauges"]), engine
        others = {g for e, s in SOURCES.items() if e not in (engine, "_about") for g in s["gauges"]}
        assert not set(names) & others, engine
        assert source["label"] == triggers.MODEL_LABEL
    # engine=ideal is served by the plan's `vllm serve` line.
    assert triggers.engine_metrics("ideal") == triggers.engine_metrics("vllm")


def test_the_waiting_threshold_is_the_queue_at_which_ttft_reaches_the_slo(plan):
    model, rate = plan.queueing, plan.capacity.request_rate_per_s
    core = model.mean_core(rate)
    per_prompt_s = core.prefill_utilization / rate  # ρ = λ E[S]
    room_s = TTFT_SLO_S - model.steps.hw.request_overhead_s - core.prefill_s
    expected = math.floor(room_s / per_prompt_s)
    found = triggers.triggers("vllm", plan.capacity, model, TTFT_SLO_S, 95.0)
    waiting = next(t for t in found if t.signal == triggers.WAITING)
    assert waiting.threshold == expected > 1
    assert waiting.metrics == ("vllm:num_requests_waiting",)
    # One more waiting request and a newcomer's TTFT is past the SLO; at the threshold it is not.
    ttft_s = model.steps.hw.request_overhead_s + core.prefill_s
    assert ttft_s + expected * per_prompt_s <= TTFT_SLO_S < ttft_s + (expected + 1) * per_prompt_s
    assert "500 ms" in waiting.derived_from


def test_the_in_flight_threshold_is_littles_law_at_the_capacity_rate(plan):
    estimate = plan.queueing.latency(plan.capacity.request_rate_per_s)
    found = triggers.triggers("sglang", plan.capacity, plan.queueing, TTFT_SLO_S, 95.0)
    in_flight = next(t for t in found if t.signal == triggers.IN_FLIGHT)
    assert in_flight.threshold == math.ceil(estimate.in_flight_mean) == plan.capacity.concurrency
    assert in_flight.metrics == ("sglang:num_queue_reqs", "sglang:num_running_reqs")


def test_the_kv_threshold_is_where_three_sd_of_the_kv_held_fill_the_cache(plan):
    model, rate = plan.queueing, plan.capacity.request_rate_per_s
    estimate = model.latency(rate, percentiles=False)
    cap = model.limits.kv_capacity_tokens
    found = triggers.triggers("trtllm", plan.capacity, model, TTFT_SLO_S, 95.0)
    kv = next(t for t in found if t.signal == triggers.KV_USAGE)
    assert kv.threshold == math.floor((1 - 3 * estimate.kv_tokens_sd / cap) * 100) / 100
    # The plan's KV rule keeps the capacity rate's mean below where preemption begins.
    assert estimate.kv_tokens_mean / cap <= kv.threshold < 1
    assert kv.metrics == ("trtllm_kv_cache_utilization",)


def test_without_a_ttft_slo_the_queue_holds_the_ttft_predicted_at_capacity():
    inputs = FleetInputs(requests_per_s=20, tpot_slo_ms=50, arrivals=Arrivals(slo_percentile=90.0))
    plan = plan_fleet(LLAMA_31_8B, H100_SXM, "h100-sxm", SHAPE, inputs)
    found = triggers.triggers("vllm", plan.capacity, plan.queueing, None, 90.0)
    waiting = next(t for t in found if t.signal == triggers.WAITING)
    expected = triggers.waiting_threshold(plan.queueing, plan.capacity.request_rate_per_s, plan.capacity.ttft_s)
    assert expected is not None and waiting.threshold == expected[0]
    assert "p90 TTFT predicted at capacity" in waiting.derived_from


def test_a_measured_capacity_has_no_queueing_model_to_derive_from():
    inputs = FleetInputs(requests_per_s=20, per_replica_tokens_per_s=3000)
    plan = plan_fleet(LLAMA_31_8B, H100_SXM, "h100-sxm", SHAPE, inputs)
    found = triggers.triggers("vllm", plan.capacity, plan.queueing, TTFT_SLO_S, 95.0)
    assert [t.signal for t in found] == [triggers.IN_FLIGHT, triggers.WAITING]
    assert found[1].threshold == max(1, plan.capacity.concurrency // 4)
