"""The mixed layout (`mix=true`): several replica kinds, each serving the length buckets it is
cheapest for (app/sizing/mix.py builds the problem, app/planning/mix.py solves it), beside
the best single-kind plan."""

from __future__ import annotations

from app.sizing.cost import monthly_cost_per_million_tokens_usd
from app.sizing.errors import SizingError
from app.sizing.fleet import SECONDS_PER_DAY
from app.sizing.fleet_plan import OPTIMISTIC_UTILIZATION, Arrivals, Period
from app.sizing.mix import MixKind, PoolSize, pool_size
from app.sizing.vocabulary import FleetLayout

from .. import finance
from ..answers import (
    FleetRow,
    MixAnswer,
    MixBucket,
    MixedAnswer,
    MixPeriodRow,
    MixPoolAnswer,
    MixPoolBucket,
    MixPoolSize,
    MixSingleKind,
    PoolPower,
    ReplicaKind,
)
from ..calibration.basis import apply, basis, ranking_note
from ..context import Context
from ..deployment import vllm_command
from ..mix import MixPlan, MixPool, plan_mix
from ..replica import with_engine
from ..requests import FleetRequest
from .answer import FLAT_DAY, NO_OPTION, PlannedFleet

LEAVES_OUT = (
    "a replica's capacity for each length bucket is its capacity serving that bucket alone: a pool that "
    "blends buckets (rather than a router sending each length to its pool) sees short requests' TPOT "
    "drag behind long prompts' chunks; the router's own latency, and the routing a prefix_cache_hit_rate "
    "assumes (requests sharing a prefix sent to the replica that caches it)"
)


def plan(request: FleetRequest, context: Context) -> PlannedFleet:
    """The cost-minimal mix of replica kinds over `gpus` (or the catalog) for the request's
    length buckets, each kind with N+1, and the best single kind beside it."""
    model, model_label = context.model(request.model)
    spec = request.inputs.speculative
    if spec is not None and spec.auto:
        # Each bucket's kinds are planned as given: a mix does not rank speculation on and off.
        raise SizingError("speculative.auto", "a mix plans with speculation or without: give it or leave it")
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, None, inputs, request.given)
    gpus = context.gpu_choices(request.gpus)
    plan = plan_mix(
        model, gpus, applied.inputs, request.traffic, request.length_buckets, precisions=request.weight_precisions
    )
    energy, per_pool = finance.mix_energy(plan, gpus, request)
    pools = tuple(
        _pool(plan, pool, _command(plan, pool, model_label, request.traffic.arrivals), power)
        for pool, power in zip(plan.pools, per_pool, strict=True)
    )
    # Its own rows (MixPeriod): a mix is sized at peak per pool, with no average fleet.
    periods = tuple(_period_row(period, plan, request) for period in request.forecast)
    answer = MixedAnswer(
        model=model_label,
        topology=FleetLayout.AGGREGATED,
        status="ok" if plan.meets_slo else NO_OPTION,
        meets_slo=plan.meets_slo,
        requests_per_s=request.traffic.requests_per_s,
        gpus_total=plan.gpus_total,
        monthly_cost_usd=plan.monthly_cost_usd,
        cost_per_million_output_tokens_usd=_per_million(plan, plan.monthly_cost_usd, request.traffic.requests_per_s),
        mix=_mix(plan, pools, periods or None),
        basis=basis(applied, measured=False),
        calibration=applied.used(),
        leaves_out=LEAVES_OUT,
        warnings=(
            *context.notes,
            *(ranking_note(context, request.model) if request.gpus is None else []),
            *_flat_day(request),
        ),
        energy=energy,
    )
    rows: tuple[FleetRow, ...] = periods or pools
    return PlannedFleet(FleetLayout.MIXED, answer, rows, None, model_label)


def _flat_day(request: FleetRequest) -> list[str]:
    if "peak_to_average" in request.given or request.forecast:
        return []
    return [f"{FLAT_DAY}: every pool is sized for the average arrival rate; give peak_to_average for your peak"]


def _per_million(plan: MixPlan, monthly_cost_usd: float, requests_per_s: float) -> float | None:
    """The mix's monthly cost over the output tokens its average traffic brings in the month."""
    tokens_per_s = requests_per_s * plan.problem.output_tokens_per_request()
    return monthly_cost_per_million_tokens_usd(monthly_cost_usd, tokens_per_s, plan.problem.hours_per_month)


def _kind(kind: MixKind) -> ReplicaKind:
    return ReplicaKind(
        gpu=kind.gpu_label,
        mig_profile=kind.mig_profile,
        tensor_parallel=kind.tensor_parallel,
        weight_precision=kind.weight_precision,
        price_per_replica_hour_usd=kind.price_per_replica_hour_usd,
    )


def _size(size: PoolSize) -> MixPoolSize:
    return MixPoolSize(
        replicas_peak=size.replicas, replicas_total=size.replicas_total, cards=size.cards, gpus_total=size.gpus
    )


def _saturation_load(plan: MixPlan, pool: MixPool) -> float | None:
    """The pool's arrivals at peak over its replicas' saturation rates (as a replica's
    utilization_peak counts it): each bucket's peak rate over the saturation rate of this
    kind's replica serving it, per replica carrying the peak; None without a queueing model."""
    problem = plan.problem
    if not problem.plans or not pool.size.replicas:
        return None
    k = problem.kinds.index(pool.kind)
    busy = 0.0
    for share in pool.buckets:
        sized = problem.plans[k][share.bucket]
        if sized is None or sized.queueing is None:
            return None
        busy += share.requests_per_s / sized.queueing.saturation_rate_per_s
    return busy / pool.size.replicas


def _pool(plan: MixPlan, pool: MixPool, command: str | None, power: PoolPower) -> MixPoolAnswer:
    saturation = _saturation_load(plan, pool)
    return MixPoolAnswer(
        kind=_kind(pool.kind),
        size=_size(pool.size),
        monthly_cost_usd=pool.monthly_cost_usd,
        utilization_peak=pool.utilization_peak,
        saturation_utilization_peak=saturation,
        optimistic=None if saturation is None else saturation > OPTIMISTIC_UTILIZATION,
        buckets=tuple(
            MixPoolBucket(
                bucket=share.bucket,
                prompt_tokens=share.prompt_tokens,
                output_tokens=share.output_tokens,
                share=share.share,
                requests_per_s=share.requests_per_s,
                capacity_per_replica=share.capacity_per_replica,
                meets_slo=share.meets_slo,
            )
            for share in pool.buckets
        ),
        vllm_command=command,
        power=power,
    )


def _command(plan: MixPlan, pool: MixPool, model_label: str, arrivals: Arrivals | None) -> str | None:
    """The pool's `vllm serve` line, from its replica sized for the longest bucket it serves
    (the context it must hold, and the sequences that fit at that length)."""
    problem = plan.problem
    k = problem.kinds.index(pool.kind)
    sized = [problem.plans[k][share.bucket] for share in pool.buckets] if problem.plans else []
    fitted = [p for p in sized if p is not None]
    if not fitted:
        return None
    longest = max(fitted, key=lambda p: p.fit.inputs.prompt_tokens + p.fit.inputs.output_tokens)
    return vllm_command(longest, model_label, arrivals=arrivals)


def _mix(plan: MixPlan, pools: tuple[MixPoolAnswer, ...], periods: tuple[MixPeriodRow, ...] | None) -> MixAnswer:
    problem, single = plan.problem, plan.single
    return MixAnswer(
        buckets=tuple(
            MixBucket(
                prompt_tokens=bucket.prompt_tokens,
                output_tokens=bucket.output_tokens,
                share=bucket.share,
                peak_requests_per_s=rate,
            )
            for bucket, rate in zip(problem.buckets, problem.rates, strict=True)
        ),
        pools=pools,
        gpus_total=plan.gpus_total,
        monthly_cost_usd=plan.monthly_cost_usd,
        single_kind=None
        if single is None
        else MixSingleKind(
            kind=_kind(single.kind),
            size=_size(single.pool),
            monthly_cost_usd=single.monthly_cost_usd,
            capacity_per_replica=tuple(problem.usable(single.kind_index, b) for b in range(len(problem.buckets))),
        ),
        savings_usd=plan.savings_usd,
        unserved_buckets=tuple(plan.unserved),
        dropped_buckets=tuple(plan.dropped),
        kinds_considered=problem.considered,
        kinds_kept=len(problem.kinds),
        solver_status=plan.status,
        build_s=plan.build_time_s,
        solve_s=plan.solve_time_s,
        periods=periods,
    )


def _period_row(period: Period, plan: MixPlan, request: FleetRequest) -> MixPeriodRow:
    """A forecast period: each pool of the mix (its kinds and bucket shares kept) sized for
    the period's peak by the same rule (the load scales with the traffic)."""
    traffic = request.traffic
    ratio = traffic.peak_to_average if period.peak_to_average is None else period.peak_to_average
    base = traffic.requests_per_s * traffic.peak_to_average
    scale = (period.requests_per_day / SECONDS_PER_DAY * ratio) / base if base > 0 else 0.0
    sizes = [pool_size(pool.kind, pool.size.load * scale, traffic.redundancy) for pool in plan.pools]
    hourly = sum(size.hourly_usd for size in sizes)
    monthly = round(hourly * traffic.hours_per_month, 2)
    return MixPeriodRow(
        period=period.period,
        requests_per_day=period.requests_per_day,
        peak_to_average=ratio,
        gpus_total=sum(size.gpus for size in sizes),
        monthly_cost_usd=monthly,
        cost_per_million_output_tokens_usd=_per_million(plan, monthly, period.requests_per_day / SECONDS_PER_DAY),
        pool_gpus_total=tuple(size.gpus for size in sizes),
    )
