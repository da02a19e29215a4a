"""/v1/autoscaling/simulate: a day of a fleet under an autoscaling policy, checked before it is
deployed (app/sizing/fleet_day.py), beside the static plan of /v1/fleet on the same traffic.

The replica is /v1/fleet's (the same fit, engine profile, calibration, queueing model and
capacity at the SLO percentile), planned on the day's average and its busiest hour. Its
triggers and thresholds are those `format=keda` emits (app/sizing/triggers.py) unless the
policy names one; a new replica serves after node provisioning plus the model's load (the
weights' bytes over `load_gb_per_s`, then the engine's start-up) unless the policy states its
delay. The static plan holds /v1/fleet's peak fleet (the busiest hour's replicas plus the
spares) all day.

A day's cost is its simulated requests: each answer simulates at most
MAX_SIMULATED_REQUESTS (the policy's day, the static plan's, and with `recommend` each
grid point's), refused with a 422 before anything runs when the forecast asks for more, and
bounded by DAY_MAX_WORK units of the simulator's work while it runs.
"""

from __future__ import annotations

import math
from typing import Any

from app.sizing import budget
from app.sizing import fleet as fleet_mod
from app.sizing.fleet_day import (
    Candidate,
    DayResult,
    DayTraffic,
    Policy,
    Slos,
    recommend,
    recommendation_days_floor,
    simulate_day,
    static_policy,
)
from app.sizing.fleet_plan import FleetInputs, FleetPlan, plan_fleet
from app.sizing.plan import ENGINE_ARRIVALS_LEAVES_OUT
from app.sizing.queueing import ReplicaModel
from app.sizing.simulate import WorkLimitExceeded, predicted_work
from app.sizing.triggers import SIGNALS, Trigger, engine_metrics

from .answers import (
    AutoscalingAnswer,
    DayHour,
    DayPolicy,
    DayReplicas,
    GridPoint,
    Provenance,
    Recommendation,
    RecommendedPolicy,
    SimulatedDay,
    StaticDay,
)
from .calibration.basis import apply, basis
from .context import Context
from .deployment import engine_name, plan_triggers, scale_down_window_s, served_name, trigger_answer
from .errors import InvalidRequest
from .replica import engine_figures, speculation_planned, with_engine
from .requests import DayRequest
from .work import SETTING

# Simulated requests one answer may take (about 10 us a request on an idle core: some 20 s
# at the most), and the simulator's work units over them (3 to 5 a request at common lengths).
MAX_SIMULATED_REQUESTS = 2_500_000
DAY_MAX_WORK = 15_000_000
SECONDS_PER_HOUR = 3600.0
LEAVES_OUT = (
    ENGINE_ARRIVALS_LEAVES_OUT + "; round-robin routing (no load-aware balancer), replicas ready at the first poll "
    "after their delay, HPA's scale-up rate and tolerance and the emitted one-pod-a-minute scale-down; node "
    "failures and spot interruptions"
)


def _triggers(request: DayRequest, plan: FleetPlan, found: list[Trigger]) -> list[Trigger]:
    """The policy's triggers: the plan's (as format=keda emits them), or the one it names (an
    engine metric or a signal), at its threshold or the plan's for that signal."""
    name = request.policy.trigger
    if name is None:
        return found
    metrics = engine_metrics(engine_name(plan))
    signal = name if name in SIGNALS else metrics.signal_of(name)
    if signal is None:
        exported = ", ".join(metrics.names)
        detail = (
            f"{name} is not a trigger {metrics.engine} offers: name a signal ({', '.join(SIGNALS)}) or a metric it "
            f"exports ({exported}; the running gauge scales as part of in_flight)"
        )
        raise InvalidRequest(detail, {"policy.trigger": [detail]})
    planned = next((t for t in found if t.signal == signal), None)
    threshold = request.policy.threshold
    if planned is None and threshold is None:
        detail = f"no {signal} threshold follows from this plan (no queueing model of its KV): give policy.threshold"
        raise InvalidRequest(detail, {"policy.threshold": [detail]})
    if threshold is None:
        assert planned is not None
        return [planned]
    return [Trigger(signal, metrics.for_signal(signal), threshold, "given")]


def _plan(request: DayRequest, context: Context) -> tuple[FleetPlan, str, str, Any]:
    model, model_label = context.model(request.model)
    gpu, gpu_label = context.gpu(request.gpu)
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, request.gpu, inputs, request.given)
    hours = len(request.hourly_requests)
    average = math.fsum(request.hourly_requests) / hours
    peak = max(request.hourly_requests)
    workload = request.workload
    traffic = FleetInputs(
        requests_per_s=average / SECONDS_PER_HOUR,
        peak_to_average=peak / average,
        ttft_slo_ms=workload.ttft_slo_ms,
        tpot_slo_ms=workload.tpot_slo_ms,
        redundancy=fleet_mod.Redundancy(spare_replicas=request.spare_replicas),
        load_gb_per_s=request.load_gb_per_s,
        engine_startup_s=request.engine_startup_s,
        arrivals=workload.arrivals,
    )
    plan = plan_fleet(model, gpu, gpu_label, applied.inputs, traffic)
    return plan, model_label, gpu_label, (applied, traffic)


def _refuse_large(request: DayRequest, days: int, model: ReplicaModel) -> None:
    """422 before anything runs: over the simulated requests an answer may take, or over the
    request's work budget (WORK_BUDGET_UNITS) by the simulator's own prediction."""
    total = math.fsum(request.hourly_requests)
    simulated = total * days
    names = ["forecast", *(["recommend"] if request.recommend else [])]
    if simulated <= MAX_SIMULATED_REQUESTS:
        predicted = days * predicted_work(model.traffic, model.limits, math.ceil(total), model.steps.windowed)
        spent = budget.current()
        if predicted <= spent.work_left():
            return
        detail = (
            f"this day's simulations ({days} days of {total:,.0f} requests: the policy's, the static plan's"
            f"{' and the recommendation grid' if request.recommend else ''}) are predicted to take {predicted:,} "
            f"units of the simulator's work, over the limit of {spent.work_units:,} ({SETTING}) that keeps an answer "
            "within its time: fewer requests in the forecast" + (", or recommend=false" if request.recommend else "")
        )
        raise InvalidRequest(detail, {name: [detail] for name in names})
    detail = (
        f"this answer would simulate about {simulated:,.0f} requests ({total:,.0f} a day, {days} days: the policy's, "
        f"the static plan's{' and the recommendation grid' if request.recommend else ''}), over the limit of "
        f"{MAX_SIMULATED_REQUESTS:,} that keeps one answer within seconds: fewer requests in the forecast"
        + (", or recommend=false" if request.recommend else "")
    )
    raise InvalidRequest(detail, {name: [detail] for name in names})


def _too_much_work(over: WorkLimitExceeded) -> InvalidRequest:
    detail = (
        f"simulating this day takes more than {over.max_work:,} units of the simulator's work (scheduler passes, "
        f"prefill chunks, preemptions), the limit ({SETTING}, or the endpoint's {DAY_MAX_WORK:,}) that keeps one "
        "answer within its time: fewer requests, shorter prompts, or recommend=false"
    )
    return InvalidRequest(detail, {"forecast": [detail]})


def simulate(request: DayRequest, context: Context) -> AutoscalingAnswer:
    """The day under the policy and under the static peak plan, per hour and in total, and
    with `recommend` the cheapest grid policy meeting `max_violation_rate`."""
    plan, model_label, gpu_label, (applied, traffic) = _plan(request, context)
    model = plan.queueing
    if model is None or not plan.capacity.meets_slo or not plan.capacity.request_rate_per_s:
        detail = "no replica of this shape meets the SLOs at any rate: nothing to autoscale (see /v1/latency)"
        raise InvalidRequest(detail, {"gpu": [detail]})
    static_replicas = plan.size.replicas_total
    policy_in = request.policy
    highest_min = static_replicas
    days = 2 + (recommendation_days_floor() if request.recommend else 0)
    _refuse_large(request, days, model)
    found = _triggers(request, plan, plan_triggers(plan, traffic))
    weights_load_s = plan.fit.result.weights_bytes / (request.load_gb_per_s * 1e9)
    cold_start_s = request.node_provisioning_s + plan.cold_start_s
    up_delay = cold_start_s if policy_in.scale_up_delay_s is None else policy_in.scale_up_delay_s
    down_delay = (
        float(scale_down_window_s(plan)) if policy_in.scale_down_delay_s is None else policy_in.scale_down_delay_s
    )
    low = plan.size.min_replicas if policy_in.min_replicas is None else policy_in.min_replicas
    high = max(static_replicas, low) if policy_in.max_replicas is None else policy_in.max_replicas
    if low > high:
        detail = f"min_replicas {low} is above max_replicas {high}"
        raise InvalidRequest(detail, {"policy.min_replicas": [detail]})
    policy = Policy(tuple((t.signal, t.threshold) for t in found), up_delay, down_delay, low, high, policy_in.warm_pool)
    day = DayTraffic(request.hourly_requests, model.traffic)
    workload = request.workload
    slos = Slos(
        None if workload.ttft_slo_ms is None else workload.ttft_slo_ms / 1e3,
        None if workload.tpot_slo_ms is None else workload.tpot_slo_ms / 1e3,
        None if workload.arrivals.e2e_slo_ms is None else workload.arrivals.e2e_slo_ms / 1e3,
    )
    rate = plan.capacity.request_rate_per_s
    # The day starts as a steady first hour would leave it: the replicas that carry it.
    initial = math.ceil(request.hourly_requests[0] / SECONDS_PER_HOUR / rate - 1e-9)
    steps, limits, seed = model.steps, model.limits, request.seed
    recommended: Candidate | None = None
    evaluated: list[Candidate] = []
    spent = budget.current()
    limit = min(DAY_MAX_WORK, spent.work_left())
    used = 0
    try:
        policy_day = simulate_day(steps, limits, day, policy, slos, initial_replicas=initial, seed=seed, max_work=limit)
        used += policy_day.work
        static_day = simulate_day(
            steps,
            limits,
            day,
            static_policy(static_replicas),
            slos,
            initial_replicas=static_replicas,
            seed=seed,
            max_work=limit - used,
        )
        used += static_day.work
        if request.recommend:
            recommended, evaluated = recommend(
                steps,
                limits,
                day,
                policy,
                slos,
                request.max_violation_rate,
                initial_replicas=initial,
                highest_min=highest_min,
                seed=seed,
                max_work=limit - used,
            )
            used += sum(c.result.work for c in evaluated)
    except WorkLimitExceeded as over:
        raise _too_much_work(over) from None
    finally:
        spent.spend(used)
    gpus = plan.fit.gpus
    price = plan.price_per_replica_hour_usd
    served = served_name(plan, model_label, request.served_model_name)
    fitted = plan.fit
    warnings = [*plan.warnings, *context.notes, *applied.notes(fitted.tensor_parallel, fitted.kv_precision)]
    if price is None:
        warnings.append("no hourly price for this GPU: pass price_per_gpu_hour_usd for the day's cost")
    return AutoscalingAnswer(
        model=model_label,
        gpu=gpu_label,
        mig_profile=fitted.target.mig_profile.name if fitted.target.mig_profile else None,
        tensor_parallel=fitted.tensor_parallel,
        weight_precision=fitted.weight_precision,
        kv_precision=fitted.kv_precision,
        kv_capacity_tokens=fitted.result.kv_capacity_tokens,
        prompt_tokens=fitted.inputs.prompt_tokens,
        output_tokens=fitted.inputs.output_tokens,
        prompt_tokens_cv=workload.arrivals.prompt_tokens_cv,
        output_tokens_cv=workload.arrivals.output_tokens_cv,
        gpus_per_replica=gpus,
        engine_figures=engine_figures(fitted),
        speculative=speculation_planned(fitted.inputs.speculative),
        max_request_rate=rate,
        price_per_gpu_hour_usd=plan.price_per_gpu_hour_usd,
        seed=request.seed,
        hours=len(request.hourly_requests),
        requests=policy_day.arrived,
        cold_start_s=cold_start_s,
        cold_start_basis=(
            f"{request.node_provisioning_s:g} s node provisioning + {weights_load_s:.1f} s loading "
            f"{fitted.result.weights_bytes / 1e9:.1f} GB of weights at {request.load_gb_per_s:g} GB/s + "
            f"{request.engine_startup_s:g} s engine start-up"
        ),
        policy=_policy(policy, found, served),
        autoscaled=_day(policy_day, gpus, price),
        static=StaticDay(static_replicas, _day(static_day, gpus, price)),
        recommendation=None
        if not request.recommend
        else _recommendation(recommended, evaluated, request.max_violation_rate, gpus, price, served, found),
        max_violation_rate=request.max_violation_rate,
        provenance=Provenance(basis(applied), applied.used(), LEAVES_OUT, tuple(warnings)),
    )


def _policy(policy: Policy, found: list[Trigger], served: str) -> DayPolicy:
    by_signal = {t.signal: t for t in found}
    return DayPolicy(
        triggers=tuple(trigger_answer(by_signal[signal], served, threshold) for signal, threshold in policy.triggers),
        scale_up_delay_s=policy.scale_up_delay_s,
        scale_down_delay_s=policy.scale_down_delay_s,
        min_replicas=policy.min_replicas,
        max_replicas=policy.max_replicas,
        warm_pool=policy.warm_pool,
        polling_interval_s=policy.polling_interval_s,
    )


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _day(result: DayResult, gpus: int, price_per_replica_hour: float | None) -> SimulatedDay:
    def money(replica_hours: float) -> float | None:
        return None if price_per_replica_hour is None else replica_hours * price_per_replica_hour

    hours = tuple(
        DayHour(
            hour=h.hour,
            requests=h.arrived,
            finished=h.finished,
            violation_rate=_share(h.missed_any, h.finished),
            ttft_violation_rate=_share(h.missed_ttft, h.finished),
            tpot_violation_rate=_share(h.missed_tpot, h.finished),
            e2e_violation_rate=_share(h.missed_e2e, h.finished),
            replicas_mean=h.serving_mean,
            replicas_max=h.serving_max,
            replica_hours=h.replica_hours,
            gpu_hours=h.replica_hours * gpus,
            cost_usd=money(h.replica_hours),
        )
        for h in result.hours
    )
    finished = result.finished
    return SimulatedDay(
        requests=result.arrived,
        finished=finished,
        violation_rate=result.violation_rate,
        ttft_violation_rate=_share(sum(h.missed_ttft for h in result.hours), finished),
        tpot_violation_rate=_share(sum(h.missed_tpot for h in result.hours), finished),
        e2e_violation_rate=_share(sum(h.missed_e2e for h in result.hours), finished),
        replica_hours=result.replica_hours,
        gpu_hours=result.replica_hours * gpus,
        cost_usd=money(result.replica_hours),
        scale_ups=result.scale_ups,
        scale_downs=result.scale_downs,
        drain_s=result.drain_s,
        per_hour=hours,
        timeline=tuple(DayReplicas(*point) for point in result.timeline),
    )


def _recommendation(
    best: Candidate | None,
    evaluated: list[Candidate],
    target: float,
    gpus: int,
    price: float | None,
    served: str,
    found: list[Trigger],
) -> Recommendation:
    grid = tuple(
        GridPoint(
            min_replicas=c.policy.min_replicas,
            warm_pool=c.policy.warm_pool,
            threshold_scale=c.threshold_scale,
            violation_rate=c.result.violation_rate,
            gpu_hours=c.result.replica_hours * gpus,
            meets=c.result.violation_rate <= target,
        )
        for c in evaluated
    )
    if best is None:
        status = f"no policy of the grid keeps violations at or below {target:.2%} of requests"
        return Recommendation(status, None, None, grid)
    scale = best.threshold_scale
    scaled = [
        Trigger(t.signal, t.metrics, t.threshold * scale, f"{t.derived_from}; x {scale:g} (the grid's)") for t in found
    ]
    policy = RecommendedPolicy(_policy(best.policy, scaled, served), scale)
    return Recommendation("ok", policy, _day(best.result, gpus, price), grid)
