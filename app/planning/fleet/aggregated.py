"""The aggregated layout: one kind of replica serving whole requests.

On a named GPU the service sizes that option; with none it ranks every catalog GPU and MIG
profile by monthly cost and sizes the cheapest that meets the SLOs (or, when none does, the
one that came closest). The answer carries the replica's `vllm serve` line and the numbers a
KEDA policy is made of (app/planning/deployment.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from app.sizing.engine import EngineProfile, measured_on
from app.sizing.fleet_plan import (
    FleetPlan,
    Option,
    Period,
    forecast,
    plan_fleet,
    rank,
    resumed,
    shapes,
    size,
)
from app.sizing.plan import ARRIVALS_LEAVES_OUT, ENGINE_ARRIVALS_LEAVES_OUT, ENGINE_LEAVES_OUT, LEAVES_OUT
from app.sizing.vocabulary import FleetLayout

from .. import finance
from ..calibration.basis import Applied, apply, basis, ranking_note
from ..context import Context
from ..deployment import autoscaling_body, served_name, vllm_command
from ..replica import engine_fields, planned_speculation, uncertainty_fields, with_engine
from ..requests import FleetRequest
from .answer import NO_OPTION, FleetAnswer, flat_day_warning, option_row, replica_body, simulated_body, size_body


def plan_body(
    plan: FleetPlan, model_label: str, request: FleetRequest, applied: Applied, warnings: list[str], meets_slo: bool
) -> dict[str, Any]:
    """The answer for the chosen option (all but the ranking and the forecast periods)."""
    demand = plan.demand
    redundancy = request.traffic.redundancy
    return {
        "model": model_label,
        "gpu": plan.gpu_label,
        "mig_profile": plan.fit.target.mig_profile.name if plan.fit.target.mig_profile else None,
        "topology": FleetLayout.AGGREGATED,
        "status": "ok" if meets_slo else NO_OPTION,
        "meets_slo": meets_slo,
        "replica": replica_body(plan, simulated_body(plan, request)),
        "requests_per_s": demand.requests_per_s,
        "average_tokens_per_s": demand.average_tokens_per_s,
        "peak_tokens_per_s": demand.peak_tokens_per_s,
        "average_input_tokens_per_s": demand.average_input_tokens_per_s,
        "peak_input_tokens_per_s": demand.peak_input_tokens_per_s,
        "spare_replicas": redundancy.spare_replicas if redundancy.zones == 1 else 0,
        "zones": redundancy.zones,
        "headroom": redundancy.headroom,
        **size_body(plan),
        "replicas_per_card": plan.replicas_per_card,
        "hours_per_month": request.traffic.hours_per_month,
        "host_cpu_cores": plan.host_cpu_cores,
        "autoscaling": autoscaling_body(
            plan, request.traffic, served_name(plan, model_label, request.served_model_name)
        ),
        "vllm_command": vllm_command(plan, model_label, request.served_model_name, request.traffic.arrivals),
        "speculative": planned_speculation(plan.fit.inputs.speculative, request.inputs.speculative),
        **engine_fields(plan.fit),
        "basis": basis(applied, measured=request.traffic.per_replica_tokens_per_s is not None),
        "leaves_out": _leaves_out(plan),
        "warnings": warnings,
        "calibration": applied.describe(),
        **fleet_uncertainty(plan, request, applied),
    }


def fleet_uncertainty(plan: FleetPlan, request: FleetRequest, applied: Applied) -> dict[str, Any]:
    """The fleet's range: the replica's capacity at the low and high end of the engine's (or the
    calibration's) spread of measured over predicted throughput, each sized as the plan is. A
    measured capacity or engine=ideal has none."""
    if request.traffic.per_replica_tokens_per_s is not None:
        return {"uncertainty": None, "uncertainty_basis": "a measured per-replica throughput: no model error"}
    capacity = plan.capacity
    ranges = uncertainty_fields(plan.fit, {"tokens_per_s": capacity.tokens_per_s}, applied.mape_percent)
    spread = (ranges["uncertainty"] or {}).get("tokens_per_s")
    if spread is None or capacity.tokens_per_s <= 0:
        return {"uncertainty": None, "uncertainty_basis": ranges["uncertainty_basis"]}
    ends = []
    for tokens_per_s in reversed(spread):  # the faster replica needs the fewer GPUs
        scaled = replace(
            capacity,
            tokens_per_s=tokens_per_s,
            request_rate_per_s=None
            if capacity.request_rate_per_s is None
            else capacity.request_rate_per_s * tokens_per_s / capacity.tokens_per_s,
        )
        ends.append(size(plan.fit, plan.setup, scaled, plan.demand, request.traffic, plan.gpu_label))
    rates = [c.capacity.request_rate_per_s for c in ends]
    return {
        "uncertainty": {
            "max_request_rate": None if None in rates else sorted(rates),
            "gpus_total": [end.size.gpus_total for end in ends],
            "monthly_cost_usd": None if ends[0].monthly_cost_usd is None else [end.monthly_cost_usd for end in ends],
        },
        "uncertainty_basis": ranges["uncertainty_basis"],
    }


def _leaves_out(plan: FleetPlan) -> str:
    if plan.queueing is not None:
        return ARRIVALS_LEAVES_OUT if plan.fit.engine is None else ENGINE_ARRIVALS_LEAVES_OUT
    return (
        LEAVES_OUT if plan.fit.engine is None else ENGINE_LEAVES_OUT
    ) + "; queueing delay at the SLO is not modelled"


def _measured_generations(
    context: Context, request: FleetRequest, engine: EngineProfile | None
) -> Callable[[str], bool | None]:
    """Whether the engine's training rows hold a ranked GPU's generation, by the GPU's label
    (None under engine=ideal or a measured capacity: no training rows are read)."""
    if engine is None or request.traffic.per_replica_tokens_per_s is not None:
        return lambda _label: None
    if request.gpu is not None:
        spec, label = context.gpu(request.gpu)
        specs = {label: spec}
    else:
        specs = dict(context.gpu_choices(request.gpus))
    return lambda label: None if label not in specs else measured_on(engine, specs[label].architecture)


def _guessed_winner(
    options: list[Option],
    covered: Callable[[str], bool | None],
    engine: EngineProfile | None,
    rerank: Callable[[], list[Option]],
) -> list[str]:
    """A ranking won on a GPU generation the engine has no measured row for says so, and what
    the cheapest option on a measured generation costs, sized (the ranking run again over
    those GPUs alone: the next measured row of this one may only be a bound)."""
    eligible = [o for o in options if o.eligible]
    if engine is None or not eligible or covered(eligible[0].gpu) is not False:
        return []
    best = eligible[0]
    text = (
        f"rank 1 ({_label(best)}) is on a GPU generation {engine.name} has no measured row for: its figures are a guess"
    )
    runner = next((o for o in rerank() if o.eligible and o.plan is not None and o.bound is None), None)
    if runner is None or runner.plan is None or runner.monthly_cost_usd is None or best.monthly_cost_usd is None:
        return [f"{text}, and no option on a measured generation meets the SLOs"]
    extra = runner.monthly_cost_usd - best.monthly_cost_usd
    share = extra / best.monthly_cost_usd if best.monthly_cost_usd > 0 else 0.0
    return [
        f"{text}; the cheapest option on a measured generation is {_label(runner)}: "
        f"{runner.plan.size.gpus_total:,} GPUs, ${runner.monthly_cost_usd:,.2f} a month "
        f"(${extra:,.2f}, {share:.0%} more)"
    ]


def _label(option: Option) -> str:
    parts = [option.gpu]
    if option.mig_profile:
        parts.append(f"MIG {option.mig_profile}")
    if option.tensor_parallel:
        parts.append(f"TP{option.tensor_parallel}")
    return " ".join(parts)


def _best_effort(options: list[Option]) -> FleetPlan | None:
    """With nothing meeting the SLO: the sized option that came closest (fastest token)."""
    sized = [o.plan for o in options if o.plan is not None]
    return min(sized, key=lambda p: p.capacity.time_per_token_s or math.inf, default=None)


def period_row(period: Period, plan: FleetPlan) -> dict[str, Any]:
    return {
        "period": period.period,
        "requests_per_day": period.requests_per_day,
        "peak_to_average": plan.demand.peak_to_average,
        "average_tokens_per_s": plan.demand.average_tokens_per_s,
        "peak_tokens_per_s": plan.demand.peak_tokens_per_s,
        **size_body(plan),
        "min_replicas": plan.size.min_replicas,
        "max_replicas": plan.size.max_replicas,
    }


def plan(request: FleetRequest, context: Context) -> FleetAnswer:
    """Replicas and GPUs for a traffic forecast with N+1, zones, MIG packing, cost and
    autoscaling; with no `gpu`, every catalog GPU and MIG profile ranked by monthly cost; with
    a `gpu` and no `tensor_parallel`, its cheapest valid TP, the others as `alternatives`."""
    model, model_label = context.model(request.model)
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, request.gpu, inputs, request.given)
    options: list[Option] | None = None
    chosen: FleetPlan | None = None
    precisions = request.weight_precisions
    if request.gpu is None:
        options = rank(model, context.gpu_choices(request.gpus), applied.inputs, request.traffic, precisions)
    else:
        gpu, gpu_label = context.gpu(request.gpu)
        auto = request.inputs.speculative is not None and request.inputs.speculative.auto
        if request.inputs.tensor_parallel is None or precisions or auto:
            # The cheapest shape on this GPU: every valid TP (and format asked), ranked as the catalog is.
            options = shapes(model, gpu, gpu_label, applied.inputs, request.traffic, precisions)
        if options is None or not any(o.plan for o in options):
            chosen = plan_fleet(model, gpu, gpu_label, applied.inputs, request.traffic)  # or says why not
            options = None
    if options is not None:
        eligible = [o for o in options if o.eligible]
        chosen = eligible[0].plan if eligible else _best_effort(options)
    body: dict[str, Any] = {
        "model": model_label,
        "topology": FleetLayout.AGGREGATED,
        "status": NO_OPTION,
        "meets_slo": False,
    }
    if chosen is None:
        measured = request.traffic.per_replica_tokens_per_s is not None
        body.update(basis=basis(applied, measured=measured), calibration=applied.describe())
    else:
        replica = chosen.fit
        warnings = [
            *chosen.warnings,
            *context.notes,
            *applied.notes(replica.tensor_parallel, replica.kv_precision),
            *(ranking_note(context, request.model) if request.gpu is None else []),
            *flat_day_warning([chosen], request),
        ]
        meets_slo = chosen.meets_slo and (options is None or any(o.eligible for o in options))
        body = plan_body(chosen, model_label, request, applied, warnings, meets_slo)
    rows: list[dict[str, Any]] | None = None
    if options is not None:
        covered = _measured_generations(context, request, applied.inputs.engine)
        if chosen is not None and request.gpu is None:

            def rerank() -> list[Option]:
                return resumed(options, request.traffic, lambda o: bool(covered(o.gpu)))

            body["warnings"].extend(_guessed_winner(options, covered, applied.inputs.engine, rerank))
        ranks = iter(range(1, len(options) + 1))
        listed = [option_row(next(ranks) if o.eligible else None, o, covered(o.gpu)) for o in options[: request.limit]]
        if request.gpu is None:
            rows = listed
            body.update(options=rows, options_total=len(options))
        else:
            body.update(alternatives=listed)
    periods = forecast(chosen, request.forecast, request.traffic) if request.forecast and chosen is not None else []
    if periods:
        rows = [period_row(p, plan) for p, plan in periods]
        body.update(periods=rows)
    money = None
    if chosen is not None:
        money = finance.answer(chosen, periods, request)
        body.update(money.fields)
        for row, extra in zip(body.get("periods") or [], money.period_fields, strict=True):
            row.update(extra)
        if money.rows is not None:
            rows = money.rows  # a flat traffic's split, period by period
    return FleetAnswer(FleetLayout.AGGREGATED, body, rows, chosen, model_label, finance=money)
