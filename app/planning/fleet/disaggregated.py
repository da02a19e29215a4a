"""The disaggregated layout (`topology=disaggregated`): a prefill pool and a decode pool, each
sized for its own objective (app/sizing/disaggregated.py), the aggregated plan beside them, and
which costs less."""

from __future__ import annotations

from app.sizing.cost import monthly_cost_per_million_tokens_usd
from app.sizing.disaggregated import DisaggregatedPlan, cheaper, plan_disaggregated
from app.sizing.fleet_plan import FleetInputs, FleetPlan, Option, Period, forecast
from app.sizing.vocabulary import FleetLayout, Role

from .. import finance
from ..answers import (
    AggregatedBeside,
    DisaggregatedAnswer,
    FleetPool,
    FleetRow,
    PairPeriod,
    PoolPower,
    PoolRow,
    PoolsEnergy,
    PoolsTotals,
)
from ..calibration.basis import apply, basis, ranking_note
from ..context import Context
from ..deployment import autoscaling, served_name, vllm_command
from ..replica import engine_figures, with_engine
from ..requests import FleetRequest
from .answer import NO_OPTION, PlannedFleet, flat_day_warning, option_row, pool_sizing, replica, simulated_check

# vLLM's NIXL connector moves the KV between the pools; each instance is launched with it (a
# router sends the prompt to a prefill replica, then the request to a decode replica).
VLLM_KV_TRANSFER = """--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'"""
LEAVES_OUT = (
    "the decode replica's wait for a seat (it delays the second token, not the first), contention on the "
    "KV link, the router's own latency, and the routing a prefix_cache_hit_rate assumes (requests sharing a "
    "prefix sent to the prefill replica that caches it)"
)


def plan(request: FleetRequest, context: Context) -> PlannedFleet:
    """Both pools for the request's traffic on its GPU (every valid TP of it) or the whole
    catalog, each with N+1, and the aggregated plan's cost beside them."""
    model, model_label = context.model(request.model)
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, request.gpu, inputs, request.given)
    if request.gpu is not None:
        gpu, gpu_label = context.gpu(request.gpu)
        gpus = [(gpu_label, gpu)]
    else:
        gpus = context.gpu_choices(request.gpus)
    plan = plan_disaggregated(
        model,
        gpus,
        applied.inputs,
        request.traffic,
        named_gpu=request.gpu is not None,
        precisions=request.weight_precisions,
        network_gb_per_s_override=request.network_gb_per_s,
    )
    winner, why = cheaper(plan)
    pools = ((Role.PREFILL, plan.prefill), (Role.DECODE, plan.decode))
    sized = [p for _, p in pools if p is not None]
    energy, per_pool = finance.pools_energy(sized, request)
    power = iter(per_pool)  # each sized pool's own draw, in the same order
    prefill_pool = decode_pool = None
    if plan.prefill is not None:
        prefill_pool = _pool(plan.prefill, plan.prefill_options, plan.prefill_inputs, model_label, request, next(power))
    if plan.decode is not None:
        decode_pool = _pool(plan.decode, plan.decode_options, plan.decode_inputs, model_label, request, next(power))
    periods = (
        _periods(plan, request) if request.forecast and plan.prefill is not None and plan.decode is not None else ()
    )
    answer = DisaggregatedAnswer(
        model=model_label,
        topology=FleetLayout.DISAGGREGATED,
        status="ok" if plan.meets_slo else NO_OPTION,
        meets_slo=plan.meets_slo,
        prefill_pool=prefill_pool,
        decode_pool=decode_pool,
        kv_transfer=plan.transfer,
        prefill_ttft_budget_ms=plan.prefill_ttft_budget_ms,
        ttft_ms=plan.ttft_ms,
        prefill_to_decode_gpus=plan.prefill_to_decode_gpus,
        pd_ratio=_ratio(plan),
        gpus_total=plan.gpus_total,
        monthly_cost_usd=plan.monthly_cost_usd,
        cost_per_million_output_tokens_usd=plan.cost_per_million_output_tokens_usd,
        aggregated=_aggregated(plan.aggregated),
        cheaper=winner,
        comparison=why,
        basis=basis(applied, measured=False),
        calibration=applied.used(),
        leaves_out=LEAVES_OUT,
        totals=_totals(sized) if sized else None,
        engine_figures=engine_figures(sized[-1].fit) if sized else None,
        warnings=(
            *(w for p in sized for w in p.warnings),
            *context.notes,
            *(ranking_note(context, request.model) if request.gpu is None else []),
            *flat_day_warning(sized, request),
        ),
        energy=energy,
        periods=periods or None,
    )
    rows: tuple[FleetRow, ...] = periods or tuple(PoolRow(role, pool_sizing(p)) for role, p in pools if p is not None)
    return PlannedFleet(FleetLayout.DISAGGREGATED, answer, rows, None, model_label)


def _pool(
    plan: FleetPlan,
    options: list[Option],
    traffic: FleetInputs | None,
    model_label: str,
    request: FleetRequest,
    power: PoolPower,
) -> FleetPool:
    ranks = iter(range(1, len(options) + 1))
    command = vllm_command(plan, model_label, arrivals=None if traffic is None else traffic.arrivals)
    one = replica(plan, simulated_check(plan, request, traffic))
    return FleetPool(
        gpu=plan.gpu_label,
        mig_profile=plan.fit.target.mig_profile.name if plan.fit.target.mig_profile else None,
        replica=one,
        utilization_peak=one.utilization_peak,
        optimistic=one.optimistic,
        size=pool_sizing(plan),
        autoscaling=autoscaling(plan, traffic, served_name(plan, model_label, request.served_model_name)),
        vllm_command=f"{command} {VLLM_KV_TRANSFER}" if plan.fit.engine is not None else command,
        options=tuple(option_row(next(ranks) if o.eligible else None, o) for o in options[: request.limit]),
        options_total=len(options),
        power=power,
    )


def _ratio(plan: DisaggregatedPlan) -> str | None:
    """Prefill GPUs : decode GPUs, as a planner says it ("3:5")."""
    if plan.prefill is None or plan.decode is None:
        return None
    return f"{plan.prefill.size.gpus_total}:{plan.decode.size.gpus_total}"


def _aggregated(plan: FleetPlan | None) -> AggregatedBeside | None:
    if plan is None:
        return None
    return AggregatedBeside(
        gpu=plan.gpu_label,
        mig_profile=plan.fit.target.mig_profile.name if plan.fit.target.mig_profile else None,
        tensor_parallel=plan.fit.tensor_parallel,
        weight_precision=plan.fit.weight_precision,
        max_request_rate=plan.capacity.request_rate_per_s,
        bound_by=plan.capacity.bound_by,
        meets_slo=plan.meets_slo,
        gpus_total=plan.size.gpus_total,
        monthly_cost_usd=plan.monthly_cost_usd,
    )


def _totals(pools: list[FleetPlan]) -> PoolsTotals:
    """The fleet's GPUs and traffic: the pools' sums (each pool sees every request)."""
    return PoolsTotals(
        requests_per_s=pools[-1].demand.requests_per_s,
        gpus_average=sum(p.size.gpus_average for p in pools),
        gpus_peak=sum(p.size.gpus_peak for p in pools),
    )


def _periods(plan: DisaggregatedPlan, request: FleetRequest) -> tuple[PairPeriod, ...]:
    """Each forecast period: both pools sized for its traffic with the replicas planned."""
    assert plan.prefill is not None and plan.decode is not None
    assert plan.prefill_inputs is not None and plan.decode_inputs is not None
    prefill = forecast(plan.prefill, request.forecast, plan.prefill_inputs)
    decode = forecast(plan.decode, request.forecast, plan.decode_inputs)
    hours = request.traffic.hours_per_month
    return tuple(
        _period_row(period, p, d, hours, finance.pools_energy([p, d], request)[0])
        for (period, p), (_, d) in zip(prefill, decode, strict=True)
    )


def _period_row(
    period: Period, prefill: FleetPlan, decode: FleetPlan, hours_per_month: float, energy: PoolsEnergy
) -> PairPeriod:
    """Both pools' sums, and their cost over the period's output tokens; no single price (two
    GPU kinds may be priced)."""
    pools = (prefill.size, decode.size)
    costs = (prefill.monthly_cost_usd, decode.monthly_cost_usd)
    monthly = None if None in costs else round(sum(c for c in costs if c is not None), 2)
    return PairPeriod(
        period=period.period,
        requests_per_day=period.requests_per_day,
        peak_to_average=decode.demand.peak_to_average,
        average_tokens_per_s=decode.demand.average_tokens_per_s,
        peak_tokens_per_s=decode.demand.peak_tokens_per_s,
        replicas_average=sum(s.replicas_average for s in pools),
        replicas_peak=sum(s.replicas_peak for s in pools),
        replicas_total=sum(s.replicas_total for s in pools),
        replicas_per_zone=None,
        gpus_average=sum(s.gpus_average for s in pools),
        gpus_peak=sum(s.gpus_peak for s in pools),
        gpus_total=sum(s.gpus_total for s in pools),
        prefill_gpus_total=prefill.size.gpus_total,
        decode_gpus_total=decode.size.gpus_total,
        price_per_gpu_hour_usd=None,
        monthly_cost_usd=monthly,
        replica_cost_per_million_output_tokens_usd=None,
        cost_per_million_output_tokens_usd=None
        if monthly is None
        else monthly_cost_per_million_tokens_usd(monthly, decode.demand.average_tokens_per_s, hours_per_month),
        min_replicas=sum(s.min_replicas for s in pools),
        max_replicas=sum(s.max_replicas for s in pools),
        energy=energy,
    )
