"""What every fleet layout's answer is made of: the answer itself (the body, its CSV rows and
the plan a KEDA policy is made from), and the pieces each layout writes: one replica, a fleet's
size and token cost, a ranked option, a simulated check, the flat-day warning."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

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
from app.sizing.plan import MS
from app.sizing.simulate import SATURATION_REQUESTS, WorkLimitExceeded
from app.sizing.vocabulary import CostedTokens, FleetLayout

from .. import work
from ..finance import FinanceAnswer
from ..latency import simulated_fields, simulated_row, spread_ms
from ..requests import FleetRequest, Workload

NO_OPTION = "no option meets the SLO"


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * MS


def _load_fields(plan: FleetPlan) -> dict[str, Any]:
    """Under random arrivals: the capacity rate, the planned utilization and the predicted
    percentiles at the planned peak; null for a steady-state or measured capacity."""
    load = planned_load(plan)
    if load is None:
        return dict.fromkeys(("max_request_rate", "utilization_peak", "utilization_average", "optimistic", "predicted"))
    estimate = load.predicted
    return {
        "max_request_rate": plan.capacity.request_rate_per_s,
        "utilization_peak": load.utilization_peak,
        "utilization_average": load.utilization_average,
        "optimistic": load.optimistic,
        "predicted": {
            "request_rate": load.peak_rate_per_s,
            "queue_wait_ms": spread_ms(estimate.queue_wait_s),
            "ttft_ms": spread_ms(estimate.ttft_s),
            "tpot_ms": spread_ms(estimate.tpot_s),
            "e2e_ms": spread_ms(estimate.e2e_s),
        },
    }


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


def replica_body(plan: FleetPlan, simulated: dict[str, Any] | None = None) -> dict[str, Any]:
    """One replica of the plan. A prefill replica's throughput is its prompt tokens/s (the one
    token it hands back per request is no throughput: `tokens_per_s` is null there, and
    requests/s is `max_request_rate`)."""
    fitted, capacity = plan.fit, plan.capacity
    return {
        "gpu": plan.gpu_label,
        "mig_profile": fitted.target.mig_profile.name if fitted.target.mig_profile else None,
        "gpus": fitted.tensor_parallel,
        "tensor_parallel": fitted.tensor_parallel,
        "weight_precision": fitted.weight_precision,
        "kv_precision": fitted.kv_precision,
        "concurrency": capacity.concurrency,
        "max_concurrency": fitted.result.max_concurrency,
        "tokens_per_s": None if is_prefill(plan) else capacity.tokens_per_s,
        "prompt_tokens_per_s": _prompt_tokens_per_s(plan),
        "ttft_ms": _ms(capacity.ttft_s),
        "time_per_token_ms": _ms(capacity.time_per_token_s),
        "bound_by": capacity.bound_by,
        "meets_slo": capacity.meets_slo,
        "max_num_seqs": capacity.max_num_seqs or capacity.concurrency,
        **_load_fields(plan),
        "simulated": simulated,
    }


def size_body(plan: FleetPlan) -> dict[str, Any]:
    return {
        **_sized(plan.size, plan.price_per_gpu_hour_usd, plan.monthly_cost_usd),
        **token_cost_fields(plan.token_cost),
    }


def _sized(s: FleetSize, price_per_gpu_hour_usd: float | None, monthly_cost_usd: float | None) -> dict[str, Any]:
    return {
        "replicas_average": s.replicas_average,
        "replicas_peak": s.replicas_peak,
        "replicas_total": s.replicas_total,
        "replicas_per_zone": s.replicas_per_zone,
        "gpus_average": s.gpus_average,
        "gpus_peak": s.gpus_peak,
        "gpus_total": s.gpus_total,
        "price_per_gpu_hour_usd": price_per_gpu_hour_usd,
        "monthly_cost_usd": monthly_cost_usd,
    }


def token_cost_fields(cost: TokenCost | None) -> dict[str, Any]:
    """The fleet's and one loaded replica's cost per 10^6 output tokens; a prefill pool's
    replicas hand back one token a request, so theirs are null and the same figures come per
    10^6 prompt tokens instead."""
    body: dict[str, Any] = {
        "cost_per_million_output_tokens_usd": None,
        "replica_cost_per_million_output_tokens_usd": None,
    }
    if cost is not None and cost.tokens == CostedTokens.PROMPT:
        return {
            **body,
            "cost_per_million_prompt_tokens_usd": cost.fleet_usd,
            "replica_cost_per_million_prompt_tokens_usd": cost.replica_usd,
        }
    if cost is not None:
        body.update(
            cost_per_million_output_tokens_usd=cost.fleet_usd,
            replica_cost_per_million_output_tokens_usd=cost.replica_usd,
        )
    return body


def simulated_body(plan: FleetPlan, request: FleetRequest, traffic: FleetInputs | None = None) -> dict[str, Any] | None:
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
    return simulated_fields(simulated_row(result, Workload(traffic.arrivals, traffic.ttft_slo_ms, traffic.tpot_slo_ms)))


def option_row(rank_index: int | None, option: Option, measured: bool | None = None) -> dict[str, Any]:
    """A ranked row. Sized at the SLO percentile, it gives its fleet and whether it meets the
    SLOs; left at a bound (never sized: the ranking had no need to), only what its GPUs and cost
    are at least, and `meets_slo` null, since nobody checked."""
    plan = option.plan
    sized = plan is not None and option.bound is None
    row: dict[str, Any] = {
        "rank": rank_index,
        "gpu": option.gpu,
        "mig_profile": option.mig_profile,
        "tensor_parallel": option.tensor_parallel,
        "weight_precision": option.weight_precision,
        "speculative": option.speculative,
        "eligible": option.eligible,
        "sized": sized,
        "meets_slo": _option_meets_slo(option, sized),
        "measured_generation": measured,
        "why": option.why,
    }
    if plan is not None and sized:
        row.update(
            {
                "concurrency": plan.capacity.concurrency,
                "tokens_per_s": plan.capacity.tokens_per_s,
                "time_per_token_ms": _ms(plan.capacity.time_per_token_s),
                "ttft_ms": _ms(plan.capacity.ttft_s),
                "bound_by": plan.capacity.bound_by,
                "capacity_exact": plan.capacity.exact,
                "capacity_bound": None,
                **size_body(plan),
            }
        )
    elif plan is not None:
        # Sized on a bound only (its saturation rate or mean latencies): a lower bound on its fleet.
        row.update(
            {"capacity_exact": False, "capacity_bound": option.bound, **_at_least(plan.size, plan.monthly_cost_usd)}
        )
        row["price_per_gpu_hour_usd"] = plan.price_per_gpu_hour_usd
    elif (floor := option.floor) is not None:
        # Never evaluated: only its minimum fleet is known, a lower bound on its GPUs and cost.
        row.update(
            {"capacity_exact": False, "capacity_bound": option.bound, **_at_least(floor.size, floor.monthly_cost_usd)}
        )
        row["price_per_gpu_hour_usd"] = floor.price_per_gpu_hour_usd
    return row


def _option_meets_slo(option: Option, sized: bool) -> bool | None:
    """True or false once sized at the SLO percentile (false too when it misses even at
    concurrency 1, or cannot be fitted at all); null while the row stands on a bound."""
    if option.plan is not None:
        return option.plan.meets_slo if sized or not option.plan.meets_slo else None
    return False if option.ruled_out is not None else None


def _at_least(s: FleetSize, monthly_cost_usd: float | None) -> dict[str, Any]:
    return {
        "replicas_total_at_least": s.replicas_total,
        "gpus_total_at_least": s.gpus_total,
        "monthly_cost_usd_at_least": monthly_cost_usd,
    }


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
class FleetAnswer:
    """The answer, its CSV rows (the ranking or the forecast periods) and the chosen plan
    (None when nothing could be sized), which a KEDA policy is generated from."""

    layout: FleetLayout
    body: dict[str, Any]
    rows: list[dict[str, Any]] | None
    chosen: FleetPlan | None
    model_label: str
    # Its money and energy beyond the on-demand bill (app/planning/finance.py).
    finance: FinanceAnswer | None = None

    @property
    def pools_from(self) -> str | None:
        """A plan of several pools (mixed or disaggregated): the request field that asked for it."""
        return LAYOUT_FIELDS.get(self.layout)


# The request field that asks for each layout of several pools.
LAYOUT_FIELDS = {FleetLayout.DISAGGREGATED: "topology", FleetLayout.MIXED: "mix"}
