"""What running a plan takes: the replica's `vllm serve` line (its sizes, context and
speculation), the name it serves and labels its metrics with, the autoscaling triggers and
bounds, and the KEDA ScaledObject made of them."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from app.sizing.engine import IDEAL
from app.sizing.fleet_plan import (
    Arrivals,
    FleetInputs,
    FleetPlan,
)
from app.sizing.plan import MS
from app.sizing.queueing import total_length_quantile
from app.sizing.speculation import DRAFT_MODEL, EAGLE, EAGLE3, MTP, NGRAM, Speculation
from app.sizing.triggers import KV_USAGE, MODEL_LABEL, WAITING, Trigger, engine_metrics, triggers
from app.sizing.vocabulary import LengthDistribution

from .answers import FleetAutoscaling, ScaledObject, ScalingTrigger, TriggerAnswer
from .requests import FleetRequest

# How often KEDA asks Prometheus, and the failed reads before it falls back, s and reads.
POLLING_INTERVAL_S = 15


FALLBACK_FAILURES = 3


# Scale-in waits at least this long (HPA's own default window) or two cold starts, s.
MIN_SCALE_DOWN_WINDOW_S = 300


# HPA refuses a stabilization window over an hour.
MAX_STABILIZATION_S = 3600


# Scale-in removes at most one pod a minute: a warm replica is slow to bring back.
SCALE_DOWN_PODS = 1
SCALE_DOWN_PERIOD_S = 60


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
        inputs.prompt_tokens, prompt_cv, inputs.output_tokens, output_cv, LengthDistribution.GAMMA, CONTEXT_QUANTILE
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


def trigger_answer(trigger: Trigger, served: str, threshold: float | None = None) -> TriggerAnswer:
    """A trigger as a policy states it, at its own threshold or the one given."""
    return TriggerAnswer(
        signal=trigger.signal,
        metrics=trigger.metrics,
        query=promql(trigger, served),
        threshold=trigger.threshold if threshold is None else threshold,
        derived_from=trigger.derived_from,
    )


def autoscaling(plan: FleetPlan, traffic: FleetInputs | None, served: str) -> FleetAutoscaling:
    """What a KEDA/HPA policy needs: the bounds, the targets and the engine's triggers."""
    found = plan_triggers(plan, traffic)
    waiting = next(t for t in found if t.signal == WAITING)
    return FleetAutoscaling(
        min_replicas=plan.size.min_replicas,
        max_replicas=plan.size.max_replicas,
        target_in_flight_per_replica=plan.capacity.concurrency,
        target_queue_per_replica=int(waiting.threshold),
        max_in_flight_per_replica=plan.fit.result.max_concurrency,
        cold_start_s=plan.cold_start_s,
        queue_metric=waiting.metrics[0],
        served_model_name=served,
        triggers=tuple(trigger_answer(t, served) for t in found),
    )


def _dns_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return (name or "llm")[:63].rstrip("-")


def scale_down_window_s(plan: FleetPlan) -> int:
    """Scale-in waits out two cold starts (at least HPA's default 300 s) so that a brief dip
    does not throw away a warm replica it would take minutes to bring back."""
    return min(MAX_STABILIZATION_S, max(MIN_SCALE_DOWN_WINDOW_S, math.ceil(plan.cold_start_s * 2)))


def keda_scaled_object(plan: FleetPlan, model_label: str, request: FleetRequest) -> ScaledObject:
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
    return ScaledObject(
        name=_dns_name(f"{deployment}-scaler"),
        deployment=deployment,
        polling_interval_s=POLLING_INTERVAL_S,
        min_replicas=0 if to_zero else plan.size.min_replicas,
        max_replicas=plan.size.max_replicas,
        cooldown_period_s=window if to_zero else None,
        fallback_failures=FALLBACK_FAILURES,
        fallback_replicas=plan.size.max_replicas,
        scale_down_window_s=window,
        scale_down_pods=SCALE_DOWN_PODS,
        scale_down_period_s=SCALE_DOWN_PERIOD_S,
        triggers=tuple(
            ScalingTrigger(
                name=trigger.signal.replace("_", "-"),
                server_address=request.prometheus_url,
                query=promql(trigger, served),
                threshold=threshold_text(trigger),
                # At zero replicas no pod exports anything: an empty result is then zero load.
                ignore_null_values=to_zero,
            )
            for trigger in plan_triggers(plan, request.traffic)
        ),
    )
