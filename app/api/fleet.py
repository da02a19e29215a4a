"""/v1/fleet: a traffic forecast to replicas, GPUs, monthly cost and autoscaling numbers."""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from flask import Blueprint, Response, current_app, request

from app.sizing import fleet as fleet_mod
from app.sizing.fleet_plan import (
    FleetInputs,
    FleetPlan,
    Option,
    Period,
    forecast,
    plan_fleet,
    rank,
)
from app.sizing.plan import ENGINE_LEAVES_OUT, LEAVES_OUT, MS
from app.sizing.specs import GpuSpec

from .calibration_lookup import annotate_fleet, apply
from .errors import ApiError
from .lookup import catalog_gpus, resolve_gpu, resolve_model
from .planning import engine_fields, with_engine
from .render import respond
from .requests import parse
from .schemas import PLANNING_BY_PATH

bp = Blueprint("fleet", __name__, url_prefix="/v1")

NO_OPTION = "no option meets the SLO"
YAML = "application/yaml"
# vLLM's V1 metric names, which a generated autoscaling policy refers to.
QUEUE_METRIC = "vllm:num_requests_waiting"
RUNNING_METRIC = "vllm:num_requests_running"


_schema = PLANNING_BY_PATH["/v1/fleet"].schema


def _requests_per_s(data: dict[str, Any]) -> float:
    if data.get("requests_per_second") is not None:
        return float(data["requests_per_second"])
    if data.get("requests_per_day") is not None:
        return float(data["requests_per_day"]) / fleet_mod.SECONDS_PER_DAY
    return float(data["forecast"][0]["requests_per_day"]) / fleet_mod.SECONDS_PER_DAY


def _inputs(data: dict[str, Any]) -> FleetInputs:
    return FleetInputs(
        requests_per_s=_requests_per_s(data),
        peak_to_average=data["peak_to_average"],
        ttft_slo_ms=data.get("ttft_slo_ms"),
        tpot_slo_ms=data.get("tpot_slo_ms"),
        per_replica_tokens_per_s=data.get("per_replica_tokens_per_s"),
        redundancy=fleet_mod.Redundancy(data["spare_replicas"], data["zones"], data["headroom"]),
        hours_per_month=data["hours_per_month"],
        load_gb_per_s=data["load_gb_per_s"],
        engine_startup_s=data["engine_startup_s"],
    )


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * MS


def replica_body(plan: FleetPlan) -> dict[str, Any]:
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
        "tokens_per_s": capacity.tokens_per_s,
        "ttft_ms": _ms(capacity.ttft_s),
        "time_per_token_ms": _ms(capacity.time_per_token_s),
        "bound_by": capacity.bound_by,
        "meets_slo": capacity.meets_slo,
    }


def size_body(plan: FleetPlan) -> dict[str, Any]:
    s = plan.size
    return {
        "replicas_average": s.replicas_average,
        "replicas_peak": s.replicas_peak,
        "replicas_total": s.replicas_total,
        "replicas_per_zone": s.replicas_per_zone,
        "gpus_average": s.gpus_average,
        "gpus_peak": s.gpus_peak,
        "gpus_total": s.gpus_total,
        "price_per_gpu_hour_usd": plan.price_per_gpu_hour_usd,
        "monthly_cost_usd": plan.monthly_cost_usd,
        "cost_per_million_output_tokens_usd": plan.cost_per_million_output_tokens_usd,
    }


def vllm_command(plan: FleetPlan, model_ref: str, data: dict[str, Any]) -> str:
    """The replica's `vllm serve` line, every size taken from the plan."""
    fitted = plan.fit
    parts = [
        "vllm serve",
        model_ref,
        f"--tensor-parallel-size {fitted.tensor_parallel}",
        f"--max-num-seqs {plan.capacity.concurrency}",
        f"--max-model-len {data['prompt_tokens'] + data['output_tokens']}",
        f"--gpu-memory-utilization {fitted.inputs.gpu_memory_utilization}",
        f"--max-num-batched-tokens {fitted.inputs.max_batched_tokens}",
        f"--kv-cache-dtype {'fp8' if fitted.kv_precision == 'fp8' else 'auto'}",
    ]
    if fitted.weight_precision == "fp8" and fitted.model.native_precision not in ("fp8", None):
        parts.append("--quantization fp8")  # online fp8 of a 16-bit checkpoint
    return " ".join(parts)


def autoscaling_body(plan: FleetPlan) -> dict[str, Any]:
    return {
        "min_replicas": plan.size.min_replicas,
        "max_replicas": plan.size.max_replicas,
        "target_in_flight_per_replica": plan.capacity.concurrency,
        "max_in_flight_per_replica": plan.fit.result.max_concurrency,
        "cold_start_s": plan.cold_start_s,
        "queue_metric": QUEUE_METRIC,
    }


def plan_body(plan: FleetPlan, model_label: str, data: dict[str, Any]) -> dict[str, Any]:
    demand = plan.demand
    body: dict[str, Any] = {
        "model": model_label,
        "gpu": plan.gpu_label,
        "mig_profile": plan.fit.target.mig_profile.name if plan.fit.target.mig_profile else None,
        "status": "ok" if plan.meets_slo else NO_OPTION,
        "meets_slo": plan.meets_slo,
        "replica": replica_body(plan),
        "requests_per_s": demand.requests_per_s,
        "average_tokens_per_s": demand.average_tokens_per_s,
        "peak_tokens_per_s": demand.peak_tokens_per_s,
        "average_input_tokens_per_s": demand.average_input_tokens_per_s,
        "peak_input_tokens_per_s": demand.peak_input_tokens_per_s,
        "spare_replicas": data["spare_replicas"] if data["zones"] == 1 else 0,
        "zones": data["zones"],
        "headroom": data["headroom"],
        **size_body(plan),
        "replicas_per_card": plan.replicas_per_card,
        "hours_per_month": data["hours_per_month"],
        "host_cpu_cores": plan.host_cpu_cores,
        "autoscaling": autoscaling_body(plan),
        "vllm_command": vllm_command(plan, model_label, data),
        **engine_fields(plan.fit),
        "basis": "measured" if data.get("per_replica_tokens_per_s") is not None else "datasheet",
        "leaves_out": (LEAVES_OUT if plan.fit.engine is None else ENGINE_LEAVES_OUT)
        + "; queueing delay at the SLO is not modelled",
        "warnings": plan.warnings,
    }
    return body


def option_row(rank_index: int | None, option: Option) -> dict[str, Any]:
    plan = option.plan
    row: dict[str, Any] = {
        "rank": rank_index,
        "gpu": option.gpu,
        "mig_profile": option.mig_profile,
        "tensor_parallel": option.tensor_parallel,
        "weight_precision": option.weight_precision,
        "eligible": option.eligible,
        "why": option.why,
    }
    if plan is not None:
        row.update(
            {
                "concurrency": plan.capacity.concurrency,
                "tokens_per_s": plan.capacity.tokens_per_s,
                "time_per_token_ms": _ms(plan.capacity.time_per_token_s),
                "ttft_ms": _ms(plan.capacity.ttft_s),
                "bound_by": plan.capacity.bound_by,
                **size_body(plan),
            }
        )
    return row


def _catalog_gpus() -> list[tuple[str, GpuSpec]]:
    return catalog_gpus()


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


@bp.route("/fleet", methods=["GET", "POST"])
def fleet() -> Response:
    """Replicas and GPUs for a traffic forecast with N+1, zones, MIG packing, cost and
    autoscaling; with no `gpu`, every catalog GPU and MIG profile ranked by monthly cost."""
    if request.method == "GET" and "forecast" in request.args:
        raise ApiError(422, "forecast is POST only: a list of periods has no query form", {"forecast": ["POST only"]})
    data = parse(_schema)
    model, model_label = resolve_model(data["model"])
    applied = apply(data["model"], data.get("gpu"), with_engine(_schema.inputs(data), data))
    plan_inputs = applied.inputs
    inputs = _inputs(data)
    options: list[Option] | None = None
    if data.get("gpu") is not None:
        gpu, gpu_label = resolve_gpu(data["gpu"])
        chosen: FleetPlan | None = plan_fleet(model, gpu, gpu_label, plan_inputs, inputs)
    else:
        options = rank(model, _catalog_gpus(), plan_inputs, inputs)
        eligible = [o for o in options if o.eligible]
        chosen = eligible[0].plan if eligible else _best_effort(options)
    if chosen is None:
        body: dict[str, Any] = {"model": model_label, "status": NO_OPTION, "meets_slo": False}
    else:
        body = plan_body(chosen, model_label, data)
        if options is not None and not any(o.eligible for o in options):
            body["status"], body["meets_slo"] = NO_OPTION, False
    annotate_fleet(body, applied, data)
    rows: list[dict[str, Any]] | None = None
    if options is not None:
        limited = options[: data["limit"]]
        ranks = iter(range(1, len(options) + 1))
        body["options"] = [option_row(next(ranks) if o.eligible else None, o) for o in limited]
        body["options_total"] = len(options)
        rows = body["options"]
    if data.get("forecast") and chosen is not None:
        periods = [Period(p["period"], p["requests_per_day"], p.get("peak_to_average")) for p in data["forecast"]]
        body["periods"] = [period_row(p, plan) for p, plan in forecast(chosen, periods, inputs)]
        rows = body["periods"]
    if request.args.get("format", "").lower() == "keda":
        if chosen is None:
            raise ApiError(422, NO_OPTION + ": nothing to scale", {"gpu": [NO_OPTION]})
        return keda_response(chosen, model_label, data)
    return respond(body, rows=rows)


def _dns_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return (name or "llm")[:63].rstrip("-")


def keda_scaled_object(plan: FleetPlan, model_label: str, data: dict[str, Any]) -> dict[str, Any]:
    """A KEDA ScaledObject whose bounds and thresholds come from the plan."""
    deployment = data.get("deployment") or _dns_name(f"vllm-{model_label}")
    selector = f'{{model_name="{model_label}"}}'
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {
            "name": _dns_name(f"{deployment}-scaler"),
            "labels": {"app.kubernetes.io/managed-by": "fleet-sizer"},
        },
        "spec": {
            "scaleTargetRef": {"name": deployment},
            "minReplicaCount": plan.size.min_replicas,
            "maxReplicaCount": plan.size.max_replicas,
            "pollingInterval": 15,
            # Scale-in waits out a cold start so a brief dip does not throw away a warm replica.
            "cooldownPeriod": max(300, math.ceil(plan.cold_start_s * 2)),
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": data["prometheus_url"],
                        "query": f"sum({QUEUE_METRIC}{selector}) + sum({RUNNING_METRIC}{selector})",
                        "threshold": str(plan.capacity.concurrency),
                    },
                },
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": data["prometheus_url"],
                        "query": f"sum({QUEUE_METRIC}{selector})",
                        # Requests queue once every replica holds its target in flight.
                        "threshold": str(max(1, plan.capacity.concurrency // 4)),
                    },
                },
            ],
        },
    }


def keda_response(plan: FleetPlan, model_label: str, data: dict[str, Any]) -> Response:
    text = yaml.safe_dump(keda_scaled_object(plan, model_label, data), sort_keys=False)
    return current_app.response_class(text, mimetype=YAML)
