"""Disaggregated serving's parts (app/sizing/disaggregated.py): a decode replica's steps, the KV
transfer and its links, and the pools against a hand-sized fleet."""

from dataclasses import replace
from types import SimpleNamespace

import pytest

from app.sizing import disaggregated, timing
from app.sizing.fleet_plan import Arrivals, FleetInputs, arrival_model
from app.sizing.plan import PlanInputs, plan_fit, prepare_timing
from app.sizing.queueing import ReplicaModel
from app.sizing.vocabulary import FleetLayout, Link, Role

from .specs import H100_SXM, L4, LLAMA_31_8B

H100 = timing.Hardware(3.35e12, 989e12, link_gb_per_s=450, link_latency_us=10, step_overhead_s=0.002)
# Llama 3.1 8B: 32 layers x 8 KV heads x 128 dims x K and V x 2 bytes (bf16) per token.
KV_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2


def test_a_decode_replica_s_steps_cost_nothing_for_prompts():
    steps = timing.StepModel.build(timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 2048, 256), H100)
    decode = steps.decode_only()
    decode_step = steps.time_s(16, 16 * 3000)
    assert decode.time_s(16, 16 * 3000, 2048, 0) == pytest.approx(decode_step)
    assert decode.time_s(16, 16 * 3000) == pytest.approx(decode_step)
    # the replica that computes them pays for them: a 2,048-token chunk is compute-bound
    assert steps.time_s(16, 16 * 3000, 2048, 0) > 2 * decode_step


def test_the_transfer_uses_nvlink_inside_one_node_and_the_network_across():
    prompt = 4000
    kv_bytes = prompt * KV_BYTES_PER_TOKEN
    nvlink4 = replace(H100_SXM, interconnect_kind="nvlink4")
    inside = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 2), (nvlink4, 4))
    assert inside.bytes_per_request == kv_bytes
    assert inside.link == Link.NVLINK and inside.parallel_gpus == 2
    assert inside.seconds == pytest.approx(10e-6 + kv_bytes / (450e9 * 2))
    # 4 + 8 GPUs do not fit one 8-GPU node: over the network, whose default for an H100 node
    # (NVLink 4) is one 400 Gb/s NIC per GPU
    across = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 4), (nvlink4, 8))
    assert across.link == Link.NETWORK and across.gb_per_s_per_gpu == 400 / 8
    assert across.seconds == pytest.approx(20e-6 + kv_bytes / (50e9 * 4))
    given = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 4), (nvlink4, 8), 10.0)
    assert given.seconds == pytest.approx(20e-6 + kv_bytes / (10e9 * 4))
    # a GPU with no NVLink of its own never shares it; two kinds of GPU never share a node: the
    # slower node's network
    assert disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (H100_SXM, 1), (H100_SXM, 1)).link == "network"
    mixed = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 1), (L4, 1))
    assert mixed.link == Link.NETWORK
    assert mixed.gb_per_s_per_gpu == disaggregated.PCIE_SERVER_NETWORK_GB_PER_S


def test_each_pool_s_replica_model_serves_its_half_of_a_request():
    plan = replace(PlanInputs(prompt_tokens=8000, output_tokens=200), tensor_parallel=1)
    arrivals = Arrivals(prompt_tokens_cv=0.5, output_tokens_cv=0.5)
    # Prefill: one output token, no spread in it; the step budget is the engine's.
    prefill_fit = plan_fit(LLAMA_31_8B, H100_SXM, replace(plan, output_tokens=1))
    prefill = arrival_model(prefill_fit, prepare_timing(prefill_fit), arrivals, 64, Role.PREFILL)
    assert prefill.traffic.output_tokens == 1 and prefill.traffic.output_tokens_cv == 0
    assert prefill.limits.max_batched_tokens == prefill_fit.inputs.max_batched_tokens
    # Decode: prompts cost its steps nothing, and no step budget binds them.
    decode_fit = plan_fit(LLAMA_31_8B, H100_SXM, plan)
    decode = arrival_model(decode_fit, prepare_timing(decode_fit), arrivals, 64, Role.DECODE)
    assert decode.steps.prefill_cost == 0
    assert decode.limits.max_batched_tokens >= decode_fit.result.kv_capacity_tokens
    aggregated = arrival_model(decode_fit, prepare_timing(decode_fit), arrivals, 64)
    # Without prefill in its steps a replica decodes as fast at any load as at none of it.
    rate = 0.5 * aggregated.saturation_rate_per_s
    assert decode.latency(rate).tpot_s.p99 < aggregated.latency(rate).tpot_s.p99
    assert isinstance(decode, ReplicaModel)


def test_the_plan_needs_arrivals():
    with pytest.raises(AssertionError):
        disaggregated.plan_disaggregated(
            LLAMA_31_8B, [("h100", H100_SXM)], PlanInputs(), FleetInputs(requests_per_s=1), named_gpu=True
        )


def _unit(prompt=8000, output=200, network_gb_per_s=None):
    """A P/D unit of two single-H100 Llama 3.1 8B replicas (no NVLink of their own: over the network)."""
    plan = replace(PlanInputs(prompt_tokens=prompt, output_tokens=output), tensor_parallel=1)
    arrivals = Arrivals(prompt_tokens_cv=0.5, output_tokens_cv=0.5)
    prefill_fit = plan_fit(LLAMA_31_8B, H100_SXM, disaggregated.prefill_plan(plan))
    decode_fit = plan_fit(LLAMA_31_8B, H100_SXM, plan)
    return disaggregated.pd_unit(LLAMA_31_8B, prefill_fit, decode_fit, arrivals, (64, 64), network_gb_per_s)


def test_a_pd_unit_moves_the_prompt_s_kv_of_its_decode_replica_s_precision():
    unit = _unit(network_gb_per_s=25.0)
    # 8,000 prompt tokens of bf16 KV over one 25 GB/s link (one rank a side), after 20 us of
    # latency (two network hops).
    assert unit.transfer.bytes_per_request == 8000 * KV_BYTES_PER_TOKEN
    assert unit.transfer.seconds == pytest.approx(20e-6 + 8000 * KV_BYTES_PER_TOKEN / 25e9)
    assert unit.prefill.traffic.output_tokens == 1 and unit.decode.steps.prefill_cost == 0
    assert unit.saturation_rate_per_s == min(unit.prefill.saturation_rate_per_s, unit.decode.saturation_rate_per_s)


def test_a_pd_unit_s_ttft_is_the_prefill_s_plus_the_transfer_and_its_e2e_adds_the_decode_s():
    unit = _unit()
    rate = 0.4 * unit.saturation_rate_per_s
    p, d, moved = unit.prefill.latency(rate), unit.decode.latency(rate), unit.transfer.seconds
    got = unit.latency(rate)
    for q in ("mean", "p50", "p90", "p95", "p99"):
        assert getattr(got.ttft_s, q) == pytest.approx(getattr(p.ttft_s, q) + moved)
        # Quantile by quantile: an upper bound on the tail of two stages in a row.
        assert getattr(got.e2e_s, q) == pytest.approx(getattr(p.ttft_s, q) + moved + getattr(d.e2e_s, q))
        assert getattr(got.tpot_s, q) == getattr(d.tpot_s, q) and getattr(got.itl_s, q) == getattr(d.itl_s, q)
        assert getattr(got.queue_wait_s, q) == getattr(p.queue_wait_s, q)
    assert got.utilization == max(p.utilization, d.utilization) and got.stable
    # Little's law over the whole request.
    assert got.in_flight_mean == pytest.approx(rate * got.e2e_s.mean)
    assert got.output_tokens_per_s == d.output_tokens_per_s and got.kv_ok == (p.kv_ok and d.kv_ok)
    # Past the slower pool's saturation the unit has no steady state.
    assert not unit.latency(1.01 * unit.saturation_rate_per_s).stable


def test_a_pd_unit_s_capacity_is_its_slower_pool_s_and_the_ttft_budget_excludes_the_transfer():
    unit = _unit(network_gb_per_s=5.0)  # a slow link: the transfer is a visible share of TTFT
    moved = unit.transfer.seconds
    slo = moved + 1.5
    found, pool = unit.max_request_rate(slo, None, 95.0)
    assert pool == Role.PREFILL and found.meets_slo and found.rate_per_s > 0
    # At the rate found, the unit's own TTFT holds the SLO; a tenth faster it does not.
    assert unit.latency(found.rate_per_s).ttft_s.p95 <= slo * (1 + 1e-6)
    assert unit.latency(found.rate_per_s * 1.1).ttft_s.p95 > slo or not unit.latency(found.rate_per_s * 1.1).stable
    # A TPOT only the decode replica can break, tighter than its step at any load: the decode pool binds.
    tight = unit.decode.latency(1e-3).tpot_s.p95 * 0.5
    found, pool = unit.max_request_rate(None, tight, 95.0)
    assert pool == Role.DECODE and not found.meets_slo
    # A TTFT SLO under the transfer alone leaves the prefill replica a microsecond: nothing meets it.
    found, pool = unit.max_request_rate(moved / 2, None, 95.0)
    assert not found.meets_slo


def _pool(monthly, meets=True, rate=2.0, tp=1):
    capacity = SimpleNamespace(request_rate_per_s=rate, bound_by="tpot_slo")
    return SimpleNamespace(
        monthly_cost_usd=monthly, meets_slo=meets, capacity=capacity, fit=SimpleNamespace(tensor_parallel=tp)
    )


def _plans(prefill, decode, aggregated):
    return disaggregated.DisaggregatedPlan(prefill, decode, [], [], None, aggregated, [], None)


def test_the_cheaper_topology_is_the_one_meeting_the_slos_at_the_lower_monthly_cost():
    # 300 + 500 = 800 a month against 1,000: disaggregated, by 200.
    layout, why = disaggregated.cheaper(_plans(_pool(300.0), _pool(500.0), _pool(1000.0, tp=2)))
    assert layout == FleetLayout.DISAGGREGATED and why.startswith("200.00 USD a month less")
    assert "an aggregated replica (2 GPUs)" in why
    layout, why = disaggregated.cheaper(_plans(_pool(600.0), _pool(500.0), _pool(1000.0)))
    assert layout == FleetLayout.AGGREGATED and why.startswith("100.00 USD a month less")
    assert why.endswith("two pools carry two sets of spares") and "(1 GPU)" in why
    # The same cost: one pool is simpler to run.
    layout, why = disaggregated.cheaper(_plans(_pool(400.0), _pool(600.0), _pool(1000.0)))
    assert layout == FleetLayout.AGGREGATED and why.startswith("they cost the same")
    # Only what meets the SLOs competes.
    assert (
        disaggregated.cheaper(_plans(_pool(1.0, meets=False), _pool(1.0), _pool(1000.0)))[0] == FleetLayout.AGGREGATED
    )
    assert disaggregated.cheaper(_plans(_pool(300.0), _pool(500.0), _pool(10.0, meets=False)))[0] == (
        FleetLayout.DISAGGREGATED
    )
    assert disaggregated.cheaper(_plans(_pool(300.0), _pool(500.0), None))[0] == FleetLayout.DISAGGREGATED
    assert disaggregated.cheaper(_plans(None, _pool(500.0), None)) == (None, "neither topology meets the SLOs")


LONG_PROMPTS = FleetInputs(
    requests_per_s=2.0, peak_to_average=2, ttft_slo_ms=2000, tpot_slo_ms=40, arrivals=Arrivals(e2e_slo_ms=60_000)
)


@pytest.fixture(scope="module")
def pools():
    shape = PlanInputs(prompt_tokens=8000, output_tokens=300)
    return disaggregated.plan_disaggregated(
        LLAMA_31_8B, [("h100-sxm", H100_SXM)], shape, LONG_PROMPTS, named_gpu=True, network_gb_per_s_override=10.0
    )


def test_each_pool_is_sized_on_its_own_objective(pools):
    decode, prefill = pools.decode_inputs, pools.prefill_inputs
    # Decode: TPOT only, no E2E; prefill: TTFT less the transfer, one output token, no TPOT.
    assert (decode.role, decode.ttft_slo_ms, decode.tpot_slo_ms, decode.arrivals.e2e_slo_ms) == (
        Role.DECODE,
        None,
        40,
        None,
    )
    assert (prefill.role, prefill.tpot_slo_ms, prefill.arrivals.output_tokens_cv) == (Role.PREFILL, None, 0.0)
    # The budget is the SLO less the slowest transfer: 8,000 tokens of bf16 KV at 10 GB/s, one rank.
    slowest = 20e-6 + 8000 * KV_BYTES_PER_TOKEN / 10e9
    assert pools.prefill_ttft_budget_ms == pytest.approx(2000 - slowest * 1e3)
    assert prefill.ttft_slo_ms == pytest.approx(pools.prefill_ttft_budget_ms)
    # Both pools are found on the GPU named, and the plan holds the SLOs.
    assert pools.prefill.fit.inputs.output_tokens == 1 and pools.decode.fit.inputs.output_tokens == 300
    assert pools.meets_slo and pools.aggregated is not None
    assert pools.gpus_total == pools.prefill.size.gpus_total + pools.decode.size.gpus_total
    # The transfer given is the placed pools': single-GPU replicas over the 10 GB/s asked for.
    assert pools.transfer.seconds == pytest.approx(slowest)
    assert pools.ttft_ms == pytest.approx((pools.prefill.capacity.ttft_s + slowest) * 1e3)
    total = pools.prefill.monthly_cost_usd + pools.decode.monthly_cost_usd
    assert pools.monthly_cost_usd == round(total, 2)
    assert pools.prefill_to_decode_gpus == pools.prefill.size.gpus_total / pools.decode.size.gpus_total


def test_a_ttft_slo_under_the_transfer_leaves_the_prefill_pool_a_microsecond_and_misses():
    tight = replace(LONG_PROMPTS, ttft_slo_ms=50)  # 8,000 tokens of KV take 105 ms over 10 GB/s
    plan = disaggregated.plan_disaggregated(
        LLAMA_31_8B,
        [("h100-sxm", H100_SXM)],
        PlanInputs(prompt_tokens=8000, output_tokens=300),
        tight,
        named_gpu=True,
        network_gb_per_s_override=10.0,
    )
    assert plan.prefill_ttft_budget_ms < 0 and plan.prefill_inputs.ttft_slo_ms == 1e-3
    assert not plan.meets_slo
