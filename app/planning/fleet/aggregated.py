"""The aggregated layout: one kind of replica serving whole requests.

On a named GPU the service sizes that option; with none it ranks every catalog GPU and MIG
profile by monthly cost and sizes the cheapest that meets the SLOs (or, when none does, the
one that came closest). The answer carries the replica's `vllm serve` line and the numbers a
KEDA policy is made of (app/planning/deployment.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

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
from ..answers import (
    AggregatedAnswer,
    FleetPeriod,
    FleetRange,
    FleetRow,
    OptionRow,
    PeriodFinance,
    Ranking,
    UnsizedAnswer,
)
from ..calibration.basis import Applied, apply, basis, ranking_note
from ..context import Context
from ..deployment import autoscaling, served_name, vllm_command
from ..replica import engine_figures, speculation_planned, uncertainty, with_engine
from ..requests import FleetRequest
from .answer import (
    NO_OPTION,
    PlannedFleet,
    flat_day_warning,
    fleet_sizing,
    option_row,
    replica,
    simulated_check,
)


def fleet_uncertainty(plan: FleetPlan, request: FleetRequest, applied: Applied) -> tuple[FleetRange | None, str]:
    """The fleet's range and its basis: the replica's capacity at the low and high end of the
    engine's (or the calibration's) spread of measured over predicted throughput, each sized
    as the plan is. A measured capacity or engine=ideal has none."""
    if request.traffic.per_replica_tokens_per_s is not None:
        return None, "a measured per-replica throughput: no model error"
    capacity = plan.capacity
    ranges = uncertainty(plan.fit, {"tokens_per_s": capacity.tokens_per_s}, applied.mape_percent)
    spread = (ranges.uncertainty or {}).get("tokens_per_s")
    if spread is None or capacity.tokens_per_s <= 0:
        return None, ranges.uncertainty_basis
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
    fleet_range = FleetRange(
        max_request_rate=None if None in rates else tuple(sorted(rate for rate in rates if rate is not None)),
        gpus_total=tuple(end.size.gpus_total for end in ends),
        monthly_cost_usd=None if ends[0].monthly_cost_usd is None else tuple(end.monthly_cost_usd for end in ends),
    )
    return fleet_range, ranges.uncertainty_basis


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


def period_row(period: Period, plan: FleetPlan, money: PeriodFinance) -> FleetPeriod:
    return FleetPeriod(
        period=period.period,
        requests_per_day=period.requests_per_day,
        peak_to_average=plan.demand.peak_to_average,
        average_tokens_per_s=plan.demand.average_tokens_per_s,
        peak_tokens_per_s=plan.demand.peak_tokens_per_s,
        size=fleet_sizing(plan),
        min_replicas=plan.size.min_replicas,
        max_replicas=plan.size.max_replicas,
        finance=money,
    )


def plan(request: FleetRequest, context: Context) -> PlannedFleet:
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
    if chosen is None:
        ranking, alternatives = _listed(options, request, context, applied)
        unsized = UnsizedAnswer(
            model=model_label,
            topology=FleetLayout.AGGREGATED,
            status=NO_OPTION,
            meets_slo=False,
            basis=basis(applied, measured=request.traffic.per_replica_tokens_per_s is not None),
            calibration=applied.used(),
            ranking=ranking,
            alternatives=alternatives,
        )
        return PlannedFleet(FleetLayout.AGGREGATED, unsized, _rows(ranking), None, model_label)
    fitted = chosen.fit
    warnings = [
        *chosen.warnings,
        *context.notes,
        *applied.notes(fitted.tensor_parallel, fitted.kv_precision),
        *(ranking_note(context, request.model) if request.gpu is None else []),
        *flat_day_warning([chosen], request),
    ]
    meets_slo = chosen.meets_slo and (options is None or any(o.eligible for o in options))
    simulated = simulated_check(chosen, request)
    served = served_name(chosen, model_label, request.served_model_name)
    scaling = autoscaling(chosen, request.traffic, served)
    fleet_range, range_basis = fleet_uncertainty(chosen, request, applied)
    if options is not None and request.gpu is None:
        covered = _measured_generations(context, request, applied.inputs.engine)
        ranked = options

        def rerank() -> list[Option]:
            return resumed(ranked, request.traffic, lambda o: bool(covered(o.gpu)))

        warnings.extend(_guessed_winner(options, covered, applied.inputs.engine, rerank))
    ranking, alternatives = _listed(options, request, context, applied)
    periods = forecast(chosen, request.forecast, request.traffic) if request.forecast else []
    money = finance.answer(chosen, periods, request)
    period_rows = tuple(
        period_row(period, sized, extra) for (period, sized), extra in zip(periods, money.periods, strict=True)
    )
    demand, redundancy = chosen.demand, request.traffic.redundancy
    answer = AggregatedAnswer(
        model=model_label,
        gpu=chosen.gpu_label,
        mig_profile=fitted.target.mig_profile.name if fitted.target.mig_profile else None,
        topology=FleetLayout.AGGREGATED,
        status="ok" if meets_slo else NO_OPTION,
        meets_slo=meets_slo,
        replica=replica(chosen, simulated),
        requests_per_s=demand.requests_per_s,
        average_tokens_per_s=demand.average_tokens_per_s,
        peak_tokens_per_s=demand.peak_tokens_per_s,
        average_input_tokens_per_s=demand.average_input_tokens_per_s,
        peak_input_tokens_per_s=demand.peak_input_tokens_per_s,
        spare_replicas=redundancy.spare_replicas if redundancy.zones == 1 else 0,
        zones=redundancy.zones,
        headroom=redundancy.headroom,
        size=fleet_sizing(chosen),
        replicas_per_card=chosen.replicas_per_card,
        hours_per_month=request.traffic.hours_per_month,
        host_cpu_cores=chosen.host_cpu_cores,
        autoscaling=scaling,
        vllm_command=vllm_command(chosen, model_label, request.served_model_name, request.traffic.arrivals),
        speculative=speculation_planned(fitted.inputs.speculative, request.inputs.speculative),
        engine_figures=engine_figures(fitted),
        basis=basis(applied, measured=request.traffic.per_replica_tokens_per_s is not None),
        leaves_out=_leaves_out(chosen),
        warnings=tuple(warnings),
        calibration=applied.used(),
        uncertainty=fleet_range,
        uncertainty_basis=range_basis,
        ranking=ranking,
        alternatives=alternatives,
        periods=period_rows or None,
        finance=money.fields,
    )
    # The CSV rows: a flat traffic's procurement split, else the forecast's periods, else the
    # ranking (None: the answer is its own one row).
    rows: tuple[FleetRow, ...] | None = money.rows or period_rows or _rows(ranking)
    return PlannedFleet(FleetLayout.AGGREGATED, answer, rows, chosen, model_label)


def _listed(
    options: list[Option] | None, request: FleetRequest, context: Context, applied: Applied
) -> tuple[Ranking | None, tuple[OptionRow, ...] | None]:
    """The first `limit` options as rows, ranked where eligible: the catalog's ranking with no
    gpu named, else the named GPU's alternatives (None for either when nothing was ranked)."""
    if options is None:
        return None, None
    covered = _measured_generations(context, request, applied.inputs.engine)
    ranks = iter(range(1, len(options) + 1))
    listed = tuple(option_row(next(ranks) if o.eligible else None, o, covered(o.gpu)) for o in options[: request.limit])
    if request.gpu is None:
        return Ranking(listed, len(options)), None
    return None, listed


def _rows(ranking: Ranking | None) -> tuple[FleetRow, ...] | None:
    return None if ranking is None else ranking.options
