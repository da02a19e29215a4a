"""A simulated day under an autoscaling policy (app/sizing/fleet_day.py), on a worked case:
Llama 3.1 8B on H100 through a day whose busiest hour brings 3x its quietest's
requests. Long answers at a tight TPOT make one replica carry 0.7 requests/s, so a day of
86,000 requests moves the fleet between one replica and three."""

import math

import pytest

from app.sizing import fleet_day, triggers
from app.sizing.fleet_day import DayTraffic, Policy, Slos, recommend, simulate_day, static_policy
from app.sizing.fleet_plan import Arrivals, FleetInputs, plan_fleet
from app.sizing.plan import PlanInputs
from app.sizing.simulate import WorkLimitExceeded

from .specs import H100_SXM, LLAMA_31_8B

TROUGH_PER_HOUR = 1800.0
# 2 - cos(...) runs from 1 at 03:00 to 3 at 15:00: the busiest hour 3x the quietest.
HOURLY = tuple(TROUGH_PER_HOUR * (2 - math.cos(2 * math.pi * (h - 3) / 24)) for h in range(24))
TTFT_SLO_S, TPOT_SLO_S = 1.0, 0.015
SLOS = Slos(TTFT_SLO_S, TPOT_SLO_S)


@pytest.fixture(scope="module")
def plan():
    average = math.fsum(HOURLY) / 24
    inputs = FleetInputs(
        requests_per_s=average / 3600,
        peak_to_average=max(HOURLY) / average,
        ttft_slo_ms=TTFT_SLO_S * 1e3,
        tpot_slo_ms=TPOT_SLO_S * 1e3,
        arrivals=Arrivals(),
    )
    return plan_fleet(LLAMA_31_8B, H100_SXM, "h100-sxm", PlanInputs(prompt_tokens=1000, output_tokens=4000), inputs)


@pytest.fixture(scope="module")
def case(plan):
    model = plan.queueing
    found = triggers.triggers("vllm", plan.capacity, model, TTFT_SLO_S, 95.0)
    policy = Policy(tuple((t.signal, t.threshold) for t in found), plan.cold_start_s, 600.0, 1, plan.size.max_replicas)
    first = math.ceil(HOURLY[0] / 3600 / plan.capacity.request_rate_per_s)
    return model, DayTraffic(HOURLY, model.traffic), policy, first


def day_with(case, **changes):
    model, day, policy, first = case
    fields = {name: getattr(policy, name) for name in Policy.__dataclass_fields__}
    return simulate_day(model.steps, model.limits, day, Policy(**{**fields, **changes}), SLOS, initial_replicas=first)


@pytest.fixture(scope="module")
def by_delay(plan, case):
    cold = plan.cold_start_s
    return {delay: day_with(case, scale_up_delay_s=delay) for delay in (0.0, cold, 6 * cold)}


def test_the_worked_case_scales_between_one_and_three_replicas(plan, by_delay):
    assert plan.capacity.request_rate_per_s == pytest.approx(0.71, abs=0.02)
    result = by_delay[0.0]
    assert result.arrived == result.finished == pytest.approx(math.fsum(HOURLY), rel=0.02)
    serving = [h.serving_max for h in result.hours]
    assert min(serving) == 1 and max(serving) >= 3
    assert result.scale_ups > 0 and result.scale_downs > 0


def test_more_violations_as_the_scale_up_delay_grows(by_delay):
    rates = [result.violation_rate for _, result in sorted(by_delay.items())]
    assert rates == sorted(rates)
    assert rates[-1] > rates[0]


@pytest.mark.simulation
def test_a_warm_pool_cuts_the_violations_of_a_slow_scale_up(plan, case, by_delay):
    slow = 6 * plan.cold_start_s
    warm = day_with(case, scale_up_delay_s=slow, warm_pool=2)
    assert warm.violation_rate < by_delay[slow].violation_rate
    # The warm replicas are billed all day: at least their 2 x 24 replica-hours more, less what fewer late
    # scale-ups save.
    assert warm.replica_hours > by_delay[slow].replica_hours


@pytest.mark.simulation
def test_a_static_fleet_is_billed_for_every_replica_all_day(plan, case):
    model, day, _, _ = case
    held = plan.size.replicas_total
    result = simulate_day(model.steps, model.limits, day, static_policy(held), SLOS, initial_replicas=held)
    # 24 hours of each, and the minutes past midnight its last requests take.
    assert result.replica_hours == pytest.approx(held * (24 + result.drain_s / 3600), abs=held * 15 / 3600)
    assert result.scale_ups == result.scale_downs == 0
    assert result.violation_rate <= 0.01


@pytest.mark.simulation
def test_the_recommendation_meets_the_target_with_fewer_gpu_hours_than_the_static_plan(plan, case):
    model, day, policy, first = case
    held = plan.size.replicas_total
    static = simulate_day(model.steps, model.limits, day, static_policy(held), SLOS, initial_replicas=held)
    best, evaluated = recommend(
        model.steps, model.limits, day, policy, SLOS, 0.01, initial_replicas=first, highest_min=held
    )
    assert best is not None and best.result.violation_rate <= 0.01
    assert best.result.replica_hours < static.replica_hours
    # Nothing run that met the target was cheaper.
    assert all(
        c.result.replica_hours >= best.result.replica_hours for c in evaluated if c.result.violation_rate <= 0.01
    )


def test_a_day_over_its_work_limit_is_refused_before_it_runs(case):
    model, day, policy, first = case
    floor = fleet_day.expected_work_floor(day, model.limits)
    with pytest.raises(WorkLimitExceeded) as refused:
        simulate_day(model.steps, model.limits, day, policy, SLOS, initial_replicas=first, max_work=floor - 1)
    assert refused.value.floor == floor and refused.value.simulated_s == 0.0
