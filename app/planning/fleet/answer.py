"""What every fleet layout's answer is made of: what a planner hands the view (the typed
answer, its CSV rows and the plan a KEDA policy is made from), and the pieces each layout
writes: one replica, a fleet's size and token cost, a ranked option, a simulated check, the
flat-day warning."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.sizing.fleet import FleetSize
from app.sizing.fleet_plan import (
    FleetInputs,
    FleetPlan,
    Option,
    TokenCost,
    planned_load,
    simulated_at_peak,
    size,
)
from app.sizing.simulate import SATURATION_REQUESTS, WorkLimitExceeded
from app.sizing.vocabulary import CostedTokens, FleetLayout

from .. import work
from ..answers import (
    BoundedOption,
    FleetAnswer,
    FleetReplica,
    FleetRow,
    FleetSizing,
    OptionRow,
    PoolSizing,
    PredictedAtPeak,
    PromptCost,
    RankedOption,
    SimulatedRow,
    SizedOption,
)
from ..latency import simulated_row, spread_ms
from ..requests import FleetRequest, Workload

NO_OPTION = "no option meets the SLO"


def _prompt_tokens_per_s(plan: FleetPlan) -> float | None:
    """The prompt tokens one replica takes in a second at its capacity."""
    capacity, inputs = plan.capacity, plan.fit.inputs
    if capacity.request_rate_per_s is not None:
        return capacity.request_rate_per_s * inputs.prompt_tokens
    if not math.isfinite(capacity.tokens_per_s) or inputs.output_tokens <= 0:
        return None
    return capacity.tokens_per_s / inputs.output_tokens * inputs.prompt_tokens


def is_prefill(plan: FleetPlan) -> bool:
    """A disaggregated prefill pool's replica: it hands back one token a request."""
    return plan.token_cost is not None and plan.token_cost.tokens == CostedTokens.PROMPT


def replica(plan: FleetPlan, simulated: SimulatedRow | None = None) -> FleetReplica:
    """One replica of the plan. A prefill replica's throughput is its prompt tokens/s (the one
    token it hands back per request is no throughput: `tokens_per_s` is None there, and
    requests/s is `max_request_rate`). Under random arrivals, the capacity rate, the planned
    utilization and the percentiles predicted at the planned peak; None for a steady-state or
    measured capacity."""
    fitted, capacity = plan.fit, plan.capacity
    load = planned_load(plan)
    predicted = None
    if load is not None:
        estimate = load.predicted
        predicted = PredictedAtPeak(
            request_rate=load.peak_rate_per_s,
            queue_wait_ms=spread_ms(estimate.queue_wait_s),
            ttft_ms=spread_ms(estimate.ttft_s),
            tpot_ms=spread_ms(estimate.tpot_s),
            e2e_ms=spread_ms(estimate.e2e_s),
        )
    return FleetReplica(
        gpu=plan.gpu_label,
        mig_profile=fitted.target.mig_profile.name if fitted.target.mig_profile else None,
        gpus=fitted.tensor_parallel,
        tensor_parallel=fitted.tensor_parallel,
        weight_precision=fitted.weight_precision,
        kv_precision=fitted.kv_precision,
        concurrency=capacity.concurrency,
        max_concurrency=fitted.result.max_concurrency,
        tokens_per_s=None if is_prefill(plan) else capacity.tokens_per_s,
        prompt_tokens_per_s=_prompt_tokens_per_s(plan),
        ttft_s=capacity.ttft_s,
        time_per_token_s=capacity.time_per_token_s,
        bound_by=capacity.bound_by,
        meets_slo=capacity.meets_slo,
        max_num_seqs=capacity.max_num_seqs or capacity.concurrency,
        max_request_rate=None if load is None else plan.capacity.request_rate_per_s,
        utilization_peak=None if load is None else load.utilization_peak,
        utilization_average=None if load is None else load.utilization_average,
        optimistic=None if load is None else load.optimistic,
        predicted=predicted,
        simulated=simulated,
    )


def fleet_sizing(plan: FleetPlan) -> FleetSizing:
    """The plan's fleet and its costs per 10^6 output tokens (a prefill pool's are None: see
    `pool_sizing`)."""
    s, cost = plan.size, plan.token_cost
    per_output = cost is not None and cost.tokens != CostedTokens.PROMPT
    return FleetSizing(
        replicas_average=s.replicas_average,
        replicas_peak=s.replicas_peak,
        replicas_total=s.replicas_total,
        replicas_per_zone=s.replicas_per_zone,
        gpus_average=s.gpus_average,
        gpus_peak=s.gpus_peak,
        gpus_total=s.gpus_total,
        price_per_gpu_hour_usd=plan.price_per_gpu_hour_usd,
        monthly_cost_usd=plan.monthly_cost_usd,
        cost_per_million_output_tokens_usd=cost.fleet_usd if per_output and cost is not None else None,
        replica_cost_per_million_output_tokens_usd=cost.replica_usd if per_output and cost is not None else None,
    )


def pool_sizing(plan: FleetPlan) -> PoolSizing:
    """A pool's fleet: a prefill pool's replicas hand back one token a request, so its costs
    come per 10^6 prompt tokens instead of output tokens."""
    return PoolSizing(fleet_sizing(plan), _prompt_cost(plan.token_cost))


def _prompt_cost(cost: TokenCost | None) -> PromptCost | None:
    if cost is None or cost.tokens != CostedTokens.PROMPT:
        return None
    return PromptCost(cost.fleet_usd, cost.replica_usd)


def simulated_check(plan: FleetPlan, request: FleetRequest, traffic: FleetInputs | None = None) -> SimulatedRow | None:
    """mode=simulate: the chosen replica at the planned peak, as /v1/latency's simulated row,
    its SLOs checked as `traffic` states them (a pool's own; else the request's)."""
    simulation = request.simulation
    if simulation is None or plan.queueing is None:
        return None
    n = simulation.requests
    size_fields = ("requests",)
    work.check_predicted([work.Runs(plan.queueing, (min(n, SATURATION_REQUESTS), n))], size_fields)
    try:
        result = simulated_at_peak(plan, seed=simulation.seed, requests=n)
    except WorkLimitExceeded as over:
        raise work.over_budget(over, size_fields) from None
    if result is None:
        return None
    traffic = request.traffic if traffic is None else traffic
    assert traffic.arrivals is not None  # a queueing model implies arrivals
    return simulated_row(result, Workload(traffic.arrivals, traffic.ttft_slo_ms, traffic.tpot_slo_ms))


def option_row(rank_index: int | None, option: Option, measured: bool | None = None) -> OptionRow:
    """A ranked row. Sized at the SLO percentile, it gives its fleet and whether it meets the
    SLOs; left at a bound (never sized: the ranking had no need to), only what its GPUs and cost
    are at least, and `meets_slo` None, since nobody checked."""
    plan = option.plan
    sized = plan is not None and option.bound is None
    row = RankedOption(
        rank=rank_index,
        gpu=option.gpu,
        mig_profile=option.mig_profile,
        tensor_parallel=option.tensor_parallel,
        weight_precision=option.weight_precision,
        speculative=option.speculative,
        eligible=option.eligible,
        sized=sized,
        meets_slo=_option_meets_slo(option, sized),
        measured_generation=measured,
        why=option.why,
    )
    if plan is not None and sized:
        return SizedOption(
            option=row,
            concurrency=plan.capacity.concurrency,
            tokens_per_s=plan.capacity.tokens_per_s,
            time_per_token_s=plan.capacity.time_per_token_s,
            ttft_s=plan.capacity.ttft_s,
            bound_by=plan.capacity.bound_by,
            capacity_exact=plan.capacity.exact,
            capacity_bound=None,
            size=pool_sizing(plan),
        )
    if plan is not None:
        # Sized on a bound only (its saturation rate or mean latencies): a lower bound on its fleet.
        return _at_least(row, option, plan.size, plan.monthly_cost_usd, plan.price_per_gpu_hour_usd)
    if (floor := option.floor) is not None:
        # Never evaluated: only its minimum fleet is known, a lower bound on its GPUs and cost.
        return _at_least(row, option, floor.size, floor.monthly_cost_usd, floor.price_per_gpu_hour_usd)
    return row


def _option_meets_slo(option: Option, sized: bool) -> bool | None:
    """True or false once sized at the SLO percentile (false too when it misses even at
    concurrency 1, or cannot be fitted at all); null while the row stands on a bound."""
    if option.plan is not None:
        return option.plan.meets_slo if sized or not option.plan.meets_slo else None
    return False if option.ruled_out is not None else None


def _at_least(
    row: RankedOption,
    option: Option,
    s: FleetSize,
    monthly_cost_usd: float | None,
    price_per_gpu_hour_usd: float | None,
) -> BoundedOption:
    return BoundedOption(
        option=row,
        capacity_exact=False,
        capacity_bound=option.bound,
        replicas_total_at_least=s.replicas_total,
        gpus_total_at_least=s.gpus_total,
        monthly_cost_usd_at_least=monthly_cost_usd,
        price_per_gpu_hour_usd=price_per_gpu_hour_usd,
    )


# The peak ratios a flat-day plan is weighed against: an interactive service's busiest hour
# typically brings two to three times its daily average.
TYPICAL_PEAKS = (2.0, 3.0)


FLAT_DAY = "peak_to_average not given: sized for a flat day (x1, the default)"


def flat_day_warning(plans: Sequence[FleetPlan], request: FleetRequest) -> list[str]:
    """With no peak ratio and no forecast: the warning that the plan assumes a flat day, and what
    the same replicas need at a typical peak (each pool resized as a forecast period is)."""
    if "peak_to_average" in request.given or request.forecast or not plans:
        return []
    figures = []
    for ratio in TYPICAL_PEAKS:
        resized = [
            size(p.fit, p.setup, p.capacity, replace(p.demand, peak_to_average=ratio), request.traffic, p.gpu_label)
            for p in plans
        ]
        costs = [r.monthly_cost_usd for r in resized]
        cost = "" if None in costs else f" (${sum(c or 0.0 for c in costs):,.0f} a month)"
        figures.append(f"x{ratio:g} needs {sum(r.size.gpus_total for r in resized):,} GPUs{cost}")
    now = sum(p.size.gpus_total for p in plans)
    return [
        f"{FLAT_DAY}, {now:,} GPUs; traffic peaking at a typical x2-3 its daily average: "
        f"{', '.join(figures)}. Give peak_to_average to size for your peak"
    ]


@dataclass(frozen=True)
class PlannedFleet:
    """What a layout's planner hands the view: the answer, its CSV rows (the ranking, the
    forecast periods, the pools or a flat traffic's procurement split; None: the answer is
    the one row), and the chosen plan (None when nothing could be sized, or for a plan of
    several pools), which a KEDA policy is generated from."""

    layout: FleetLayout
    answer: FleetAnswer
    rows: tuple[FleetRow, ...] | None
    chosen: FleetPlan | None
    model_label: str

    @property
    def pools_from(self) -> str | None:
        """A plan of several pools (mixed or disaggregated): the request field that asked for it."""
        return LAYOUT_FIELDS.get(self.layout)


# The request field that asks for each layout of several pools.
LAYOUT_FIELDS = {FleetLayout.DISAGGREGATED: "topology", FleetLayout.MIXED: "mix"}
