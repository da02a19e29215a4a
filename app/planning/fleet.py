"""/v1/fleet: a traffic forecast to replicas, GPUs, monthly cost and autoscaling numbers.

On a named GPU the service sizes that option; with none it ranks every catalog GPU and MIG
profile by monthly cost and sizes the cheapest that meets the SLOs (or, when none does, the
one that came closest). The answer also carries the replica's `vllm serve` line, and
`keda_scaled_object` turns a plan into a KEDA autoscaling policy.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.sizing.engine import IDEAL, EngineProfile, measured_on
from app.sizing.fleet import FleetSize
from app.sizing.fleet_plan import (
    AGGREGATED,
    PROMPT_TOKENS,
    Arrivals,
    FleetInputs,
    FleetPlan,
    Option,
    Period,
    TokenCost,
    forecast,
    plan_fleet,
    planned_load,
    rank,
    shapes,
    simulated_at_peak,
    size,
)
from app.sizing.plan import ARRIVALS_LEAVES_OUT, ENGINE_ARRIVALS_LEAVES_OUT, ENGINE_LEAVES_OUT, LEAVES_OUT, MS
from app.sizing.queueing import total_length_quantile
from app.sizing.simulate import GAMMA, SATURATION_REQUESTS, WorkLimitExceeded
from app.sizing.speculation import DRAFT_MODEL, EAGLE, EAGLE3, MTP, NGRAM, Speculation
from app.sizing.triggers import KV_USAGE, MODEL_LABEL, WAITING, Trigger, engine_metrics, triggers

from . import finance, work
from .calibration import Applied, apply, basis, ranking_note
from .context import Context
from .finance import FinanceAnswer
from .latency import simulated_row, spread_ms
from .replica import engine_fields, planned_speculation, uncertainty_fields, with_engine
from .requests import FleetRequest, Workload

NO_OPTION = "no option meets the SLO"
# How often KEDA asks Prometheus, and the failed reads before it falls back, s and reads.
POLLING_INTERVAL_S = 15
FALLBACK_FAILURES = 3
# Scale-in waits at least this long (HPA's own default window) or two cold starts, s.
MIN_SCALE_DOWN_WINDOW_S = 300
# HPA refuses a stabilization window over an hour.
MAX_STABILIZATION_S = 3600


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
    return plan.token_cost is not None and plan.token_cost.tokens == PROMPT_TOKENS


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
    if cost is not None and cost.tokens == PROMPT_TOKENS:
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


def served_name(plan: FleetPlan, model_label: str, given: str | None = None) -> str:
    """What the engine serves and labels its metrics with (`model_name`): the request's
    `served_model_name`, else the checkpoint's Hugging Face repo (which vLLM downloads), else
    the model's label."""
    model = plan.fit.model
    return given or model.instruct_repo or model.hf_repo or model_label


# The share of requests whose whole length the serve line's context holds: vLLM rejects a
# request longer than --max-model-len outright.
CONTEXT_QUANTILE = 0.999


def max_model_len(plan: FleetPlan, arrivals: Arrivals | None) -> int:
    """The context a replica is started with: the p99.9 of prompt + output tokens under the
    request's spreads (the mean sum when lengths do not vary), no more than the model's own
    context nor than the KV cache holds (vLLM refuses to start past either)."""
    inputs = plan.fit.inputs
    prompt_cv = arrivals.prompt_tokens_cv if arrivals is not None else 0.0
    output_cv = arrivals.output_tokens_cv if arrivals is not None and inputs.output_tokens > 1 else 0.0
    tail = total_length_quantile(
        inputs.prompt_tokens, prompt_cv, inputs.output_tokens, output_cv, GAMMA, CONTEXT_QUANTILE
    )
    caps = [tail, plan.fit.result.kv_capacity_tokens]
    if plan.fit.model.max_context:
        caps.append(plan.fit.model.max_context)
    return max(1, min(caps))


def vllm_command(
    plan: FleetPlan, model_label: str, served_model_name: str | None = None, arrivals: Arrivals | None = None
) -> str:
    """The replica's `vllm serve` line, every size taken from the plan (and the name it
    serves, which its metrics carry, when the request gives one of its own); its context
    holds the request lengths' tail under `arrivals`' spreads."""
    fitted = plan.fit
    repo = served_name(plan, model_label)
    parts = [
        "vllm serve",
        repo,
        *([f"--served-model-name {served_model_name}"] if served_model_name and served_model_name != repo else []),
        f"--tensor-parallel-size {fitted.tensor_parallel}",
        f"--max-num-seqs {plan.capacity.max_num_seqs or plan.capacity.concurrency}",
        f"--max-model-len {max_model_len(plan, arrivals)}",
        f"--gpu-memory-utilization {fitted.inputs.gpu_memory_utilization}",
        f"--max-num-batched-tokens {fitted.inputs.max_batched_tokens}",
        f"--kv-cache-dtype {'fp8' if fitted.kv_precision == 'fp8' else 'auto'}",
    ]
    if fitted.weight_precision == "fp8" and fitted.model.native_precision not in ("fp8", None):
        parts.append("--quantization fp8")  # online fp8 of a 16-bit checkpoint
    if (spec := fitted.inputs.speculative) is not None:
        parts.append(f"--speculative-config '{json.dumps(speculative_config(spec))}'")
    return " ".join(parts)


# What vLLM's --speculative-config names each method; an EAGLE head is a checkpoint of its own,
# which the catalog does not hold: the serve line says where it goes.
VLLM_METHODS = {EAGLE: "eagle", EAGLE3: "eagle3", MTP: "mtp", NGRAM: "ngram"}
EAGLE_HEAD = "<the EAGLE head's checkpoint>"


def speculative_config(spec: Speculation) -> dict[str, Any]:
    """vLLM's --speculative-config for the planned speculation."""
    config: dict[str, Any] = {}
    if spec.method == DRAFT_MODEL:
        # The draft's repository where the catalog records one, else its catalog slug.
        draft = spec.draft
        repo = None if draft is None else draft.instruct_repo or draft.hf_repo
        config["model"] = repo or spec.draft_model
    else:
        config["method"] = VLLM_METHODS[spec.method]
        if spec.method in (EAGLE, EAGLE3):
            config["model"] = EAGLE_HEAD
    config["num_speculative_tokens"] = spec.num_speculative_tokens
    return config


def engine_name(plan: FleetPlan) -> str:
    return IDEAL if plan.fit.engine is None else plan.fit.engine.name


def plan_triggers(plan: FleetPlan, traffic: FleetInputs | None) -> list[Trigger]:
    """The plan's triggers for its engine, thresholds from its queueing model at the capacity
    rate and the TTFT SLO `traffic` states (app/sizing/triggers.py)."""
    ttft_ms = None if traffic is None else traffic.ttft_slo_ms
    arrivals = None if traffic is None else traffic.arrivals
    percentile = arrivals.slo_percentile if arrivals is not None else 95.0
    ttft_s = None if ttft_ms is None else ttft_ms / MS
    return triggers(engine_name(plan), plan.capacity, plan.queueing, ttft_s, percentile)


def promql(trigger: Trigger, served: str) -> str:
    """The sum over the pods of each gauge the trigger reads, filtered on the served name."""
    selector = f'{{{MODEL_LABEL}="{served}"}}'
    return " + ".join(f"sum({metric}{selector})" for metric in trigger.metrics)


def threshold_text(trigger: Trigger) -> str:
    """KEDA's threshold string: a whole number of requests, or a usage to two decimals."""
    return f"{trigger.threshold:.2f}" if trigger.signal == KV_USAGE else str(int(trigger.threshold))


def trigger_row(trigger: Trigger, served: str) -> dict[str, Any]:
    return {
        "signal": trigger.signal,
        "metrics": list(trigger.metrics),
        "query": promql(trigger, served),
        "threshold": trigger.threshold,
        "derived_from": trigger.derived_from,
    }


def autoscaling_body(plan: FleetPlan, traffic: FleetInputs | None, served: str) -> dict[str, Any]:
    """What a KEDA/HPA policy needs: the bounds, the targets and the engine's triggers."""
    found = plan_triggers(plan, traffic)
    waiting = next(t for t in found if t.signal == WAITING)
    return {
        "min_replicas": plan.size.min_replicas,
        "max_replicas": plan.size.max_replicas,
        "target_in_flight_per_replica": plan.capacity.concurrency,
        "target_queue_per_replica": int(waiting.threshold),
        "max_in_flight_per_replica": plan.fit.result.max_concurrency,
        "cold_start_s": plan.cold_start_s,
        "queue_metric": waiting.metrics[0],
        "served_model_name": served,
        "triggers": [trigger_row(t, served) for t in found],
    }


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
        "topology": AGGREGATED,
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
    return simulated_row(result, Workload(traffic.arrivals, traffic.ttft_slo_ms, traffic.tpot_slo_ms))


def _leaves_out(plan: FleetPlan) -> str:
    if plan.queueing is not None:
        return ARRIVALS_LEAVES_OUT if plan.fit.engine is None else ENGINE_ARRIVALS_LEAVES_OUT
    return (
        LEAVES_OUT if plan.fit.engine is None else ENGINE_LEAVES_OUT
    ) + "; queueing delay at the SLO is not modelled"


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


@dataclass(frozen=True)
class FleetAnswer:
    """The answer, its CSV rows (the ranking or the forecast periods) and the chosen plan
    (None when nothing could be sized), which a KEDA policy is generated from."""

    body: dict[str, Any]
    rows: list[dict[str, Any]] | None
    chosen: FleetPlan | None
    model_label: str
    # A plan of several pools (mixed or disaggregated): the request field that asked for it.
    pools_from: str | None = None
    # Its money and energy beyond the on-demand bill (app/planning/finance.py).
    finance: FinanceAnswer | None = None


def fleet(request: FleetRequest, context: Context) -> FleetAnswer:
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
    body: dict[str, Any] = {"model": model_label, "topology": AGGREGATED, "status": NO_OPTION, "meets_slo": False}
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
                choices = [(label, spec) for label, spec in context.gpu_choices(request.gpus) if covered(label)]
                return rank(model, choices, applied.inputs, request.traffic, precisions)

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
    return FleetAnswer(body, rows, chosen, model_label, finance=money)


def _dns_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return (name or "llm")[:63].rstrip("-")


def scale_down_window_s(plan: FleetPlan) -> int:
    """Scale-in waits out two cold starts (at least HPA's default 300 s) so that a brief dip
    does not throw away a warm replica it would take minutes to bring back."""
    return min(MAX_STABILIZATION_S, max(MIN_SCALE_DOWN_WINDOW_S, math.ceil(plan.cold_start_s * 2)))


def keda_scaled_object(plan: FleetPlan, model_label: str, request: FleetRequest) -> dict[str, Any]:
    """A KEDA ScaledObject for the request's engine whose bounds and thresholds come from the
    plan. The scale-in delay is HPA's scale-down stabilization window (KEDA's cooldownPeriod
    only acts on the way to zero: it is set when scale_to_zero asks for minReplicaCount 0).
    Without scale-to-zero an empty query result is an error (`ignoreNullValues: false`), so a
    metric gone missing holds the peak fleet (`fallback`) instead of reading as 0 and
    shrinking it to the minimum."""
    deployment = request.deployment or _dns_name(f"{engine_metrics(engine_name(plan)).engine}-{model_label}")
    served = served_name(plan, model_label, request.served_model_name)
    window = scale_down_window_s(plan)
    to_zero = request.scale_to_zero
    spec: dict[str, Any] = {
        "scaleTargetRef": {"name": deployment},
        "pollingInterval": POLLING_INTERVAL_S,
        "minReplicaCount": 0 if to_zero else plan.size.min_replicas,
        "maxReplicaCount": plan.size.max_replicas,
    }
    if to_zero:
        spec["cooldownPeriod"] = window
    spec["fallback"] = {"failureThreshold": FALLBACK_FAILURES, "replicas": plan.size.max_replicas}
    spec["advanced"] = {
        "horizontalPodAutoscalerConfig": {
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": window,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
                },
                "scaleUp": {"stabilizationWindowSeconds": 0},
            }
        }
    }
    spec["triggers"] = [
        {
            "type": "prometheus",
            "name": trigger.signal.replace("_", "-"),
            "metricType": "AverageValue",
            "metadata": {
                "serverAddress": request.prometheus_url,
                "query": promql(trigger, served),
                "threshold": threshold_text(trigger),
                # At zero replicas no pod exports anything: an empty result is then zero load.
                "ignoreNullValues": "true" if to_zero else "false",
            },
        }
        for trigger in plan_triggers(plan, request.traffic)
    ]
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {
            "name": _dns_name(f"{deployment}-scaler"),
            "labels": {"app.kubernetes.io/managed-by": "fleet-sizer"},
        },
        "spec": spec,
    }
