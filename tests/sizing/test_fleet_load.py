"""A fleet plan's load per replica (fleet_plan.planned_load), its simulated check at the planned
peak (simulated_at_peak) and the shapes one GPU offers (shapes), on Llama 3.1 on H100."""

import pytest

from app.sizing.fleet_plan import Arrivals, FleetInputs, plan_fleet, planned_load, shapes, simulated_at_peak
from app.sizing.plan import PlanInputs

from .specs import H100_SXM, LLAMA_31_8B, LLAMA_31_70B

# 200,000 requests a day peaking at 3x: 6.94 requests/s at peak.
TRAFFIC = FleetInputs(
    requests_per_s=200_000 / 86_400, peak_to_average=3, ttft_slo_ms=2000, tpot_slo_ms=40, arrivals=Arrivals()
)


@pytest.fixture(scope="module")
def plan():
    return plan_fleet(LLAMA_31_8B, H100_SXM, "h100-sxm", PlanInputs(prompt_tokens=2000, output_tokens=300), TRAFFIC)


def test_the_planned_load_spreads_the_peak_over_the_peak_s_replicas_and_the_average_over_the_average_s(plan):
    load = planned_load(plan)
    assert load is not None
    peak = 200_000 / 86_400 * 3 / plan.size.replicas_peak
    assert load.peak_rate_per_s == pytest.approx(peak)
    saturation = plan.queueing.saturation_rate_per_s
    assert load.utilization_peak == pytest.approx(peak / saturation)
    assert load.utilization_average == pytest.approx(200_000 / 86_400 / plan.size.replicas_average / saturation)
    # The replicas are sized to hold their SLOs at the peak: under saturation, and predicted at it.
    assert 0 < load.utilization_peak < 1 and load.predicted.rate_per_s == pytest.approx(peak)
    assert load.predicted.tpot_s.p95 <= 0.040 * (1 + 1e-9)


def test_the_simulated_check_runs_one_replica_at_the_planned_peak(plan):
    result = simulated_at_peak(plan, seed=7, requests=2000)
    assert result is not None and result.rate_per_s == pytest.approx(planned_load(plan).peak_rate_per_s)
    assert result.stable and result.measured_requests > 0
    # Same seed, same answer.
    assert simulated_at_peak(plan, seed=7, requests=2000).ttft_s == result.ttft_s


def test_a_measured_capacity_has_no_queueing_model_to_load_or_simulate():
    measured = FleetInputs(requests_per_s=1, per_replica_tokens_per_s=1000)
    plan = plan_fleet(LLAMA_31_8B, H100_SXM, "h100-sxm", PlanInputs(), measured)
    assert planned_load(plan) is None and simulated_at_peak(plan, seed=1, requests=1000) is None


def test_one_gpu_s_shapes_are_its_valid_tensor_parallel_sizes_cheapest_first():
    options = shapes(LLAMA_31_70B, H100_SXM, "h100-sxm", PlanInputs(prompt_tokens=2000, output_tokens=300), TRAFFIC)
    # 141 GB of bf16 weights: one 80 GB card cannot hold them, TP2, 4 and 8 can.
    assert {o.tensor_parallel for o in options} == {2, 4, 8}
    eligible = [o for o in options if o.eligible]
    assert {o.tensor_parallel for o in eligible} == {2, 4, 8} and all(o.gpu == "h100-sxm" for o in eligible)
    costs = [o.monthly_cost_usd for o in eligible]
    assert costs == sorted(costs) and eligible[0].plan is not None
    # Two formats asked: every TP at each.
    both = shapes(
        LLAMA_31_70B, H100_SXM, "h100-sxm", PlanInputs(prompt_tokens=2000, output_tokens=300), TRAFFIC, ["bf16", "fp8"]
    )
    assert {(o.tensor_parallel, o.weight_precision) for o in both} >= {(2, "bf16"), (2, "fp8"), (1, "fp8")}
