"""Autoscaling triggers: what each serving engine exports to scale on, and the thresholds that
follow from one replica's queueing model at its capacity rate.

Three signals, each a per-replica gauge an autoscaler sums over the pods and divides by its
threshold (KEDA's AverageValue: desired replicas = ceil(sum / threshold)):

- IN_FLIGHT, waiting plus running requests: the mean in flight at the capacity rate (Little's
  law, λ E2E), the concurrency the fleet was sized on.
- WAITING, requests queued for prefill: the queue at which a newly arriving request's TTFT
  reaches the TTFT SLO (else the TTFT the plan predicts at its SLO percentile). Prompts are
  served as one token stream, E[S] = ρ / λ seconds each at the capacity rate (the model's own
  prefill utilization over its rate), so behind W waiting a request's first token comes after
  W E[S] plus its own prefill and the API server's overhead:
  W = floor((TTFT target - overhead - own prefill) / E[S]). This is llm-d's hand formula
  (TTFT SLO less the prompt's prefill time, over the prefill rate) with the model's numbers.
- KV_USAGE, the share of the KV cache held: where preemption begins. The KV held fluctuates
  about its mean with the sd the model gives at the capacity rate; above a usage of
  1 - 3 sd / capacity an ordinary excursion fills the cache and the engine preempts (the
  plan's KV rule keeps the capacity rate's mean at or below it).

Engine metric names are those of each engine's Prometheus collector, every one labelled
`model_name` with the name the engine serves: vLLM's V1 loggers (vllm/v1/metrics/loggers.py),
SGLang's scheduler collector (python/sglang/srt/metrics/collector.py) and TensorRT-LLM's
(tensorrt_llm/metrics/collector.py, exported by trtllm-serve, its OpenAI front end). An
engine=ideal plan is served by vLLM (its `vllm serve` line), so it scales on vLLM's names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .fleet import ReplicaCapacity
from .queueing import KV_SIGMAS, ReplicaModel

IN_FLIGHT = "in_flight"
WAITING = "waiting"
KV_USAGE = "kv_usage"
SIGNALS = (IN_FLIGHT, WAITING, KV_USAGE)
MODEL_LABEL = "model_name"


@dataclass(frozen=True)
class EngineMetrics:
    """One engine's gauges: requests waiting, requests running, KV cache usage (0 to 1)."""

    engine: str
    waiting: str
    running: str
    kv_usage: str
    source: str

    def for_signal(self, signal: str) -> tuple[str, ...]:
        """The gauges a signal sums."""
        return {
            IN_FLIGHT: (self.waiting, self.running),
            WAITING: (self.waiting,),
            KV_USAGE: (self.kv_usage,),
        }[signal]

    @property
    def names(self) -> tuple[str, ...]:
        return (self.waiting, self.running, self.kv_usage)

    def signal_of(self, metric: str) -> str | None:
        """The signal a single metric name drives (the running gauge alone drives none)."""
        return {self.waiting: WAITING, self.kv_usage: KV_USAGE}.get(metric)


ENGINE_METRICS = {
    "vllm": EngineMetrics(
        "vllm",
        "vllm:num_requests_waiting",
        "vllm:num_requests_running",
        "vllm:kv_cache_usage_perc",
        "vLLM V1 PrometheusStatLogger (vllm/v1/metrics/loggers.py)",
    ),
    "sglang": EngineMetrics(
        "sglang",
        "sglang:num_queue_reqs",
        "sglang:num_running_reqs",
        "sglang:token_usage",
        "SGLang SchedulerMetricsCollector (python/sglang/srt/metrics/collector.py)",
    ),
    "trtllm": EngineMetrics(
        "trtllm",
        "trtllm_num_requests_waiting",
        "trtllm_num_requests_running",
        "trtllm_kv_cache_utilization",
        "TensorRT-LLM MetricsCollector, served by trtllm-serve (tensorrt_llm/metrics/collector.py)",
    ),
}
# engine=ideal: the plan's `vllm serve` line runs it.
ENGINE_METRICS["ideal"] = ENGINE_METRICS["vllm"]


def engine_metrics(engine: str) -> EngineMetrics:
    return ENGINE_METRICS[engine]


@dataclass(frozen=True)
class Trigger:
    """One signal, its per-replica threshold and how the threshold was found."""

    signal: str
    metrics: tuple[str, ...]  # the gauges summed
    threshold: float
    derived_from: str


def in_flight_trigger(metrics: EngineMetrics, capacity: ReplicaCapacity) -> Trigger:
    rate = capacity.request_rate_per_s
    how = (
        f"the mean requests in flight at the capacity rate {rate:.4g} requests/s (Little's law: rate x E2E)"
        if rate is not None
        else "the concurrency one replica sustains within the SLOs (steady state)"
    )
    return Trigger(IN_FLIGHT, metrics.for_signal(IN_FLIGHT), float(capacity.concurrency), how)


def waiting_threshold(
    model: ReplicaModel, rate_per_s: float, target_ttft_s: float
) -> tuple[int, float, float, float] | None:
    """The waiting requests at which a new arrival's TTFT reaches `target_ttft_s` at
    `rate_per_s`: (threshold, E[S] per prompt, own prefill s, overhead s); None when the model
    has no stable fixed point there."""
    core = model.mean_core(rate_per_s)
    if not core.stable or core.prefill_utilization <= 0:
        return None
    service_s = core.prefill_utilization / rate_per_s
    overhead_s = model.steps.hw.request_overhead_s
    room_s = target_ttft_s - overhead_s - core.prefill_s
    return max(1, math.floor(room_s / service_s)), service_s, core.prefill_s, overhead_s


def waiting_trigger(
    metrics: EngineMetrics,
    capacity: ReplicaCapacity,
    model: ReplicaModel | None,
    ttft_slo_s: float | None,
    slo_percentile: float,
) -> Trigger:
    rate = capacity.request_rate_per_s
    target, what = (
        (ttft_slo_s, "the TTFT SLO")
        if ttft_slo_s is not None
        else (capacity.ttft_s, f"the p{slo_percentile:g} TTFT predicted at capacity")
    )
    found = None
    if model is not None and rate and target is not None:
        found = waiting_threshold(model, rate, target)
    if found is None or target is None:
        # A measured capacity or no TTFT to hold: requests queue once every replica holds its
        # target in flight; a quarter of it waiting says the fleet runs at capacity.
        threshold = max(1, capacity.concurrency // 4)
        how = f"a quarter of the {capacity.concurrency} requests in flight at capacity (no queueing model of TTFT)"
        return Trigger(WAITING, metrics.for_signal(WAITING), float(threshold), how)
    threshold, service_s, prefill_s, overhead_s = found
    how = (
        f"the queue at which a new request's TTFT reaches {what} ({target * 1e3:.0f} ms): "
        f"floor(({target * 1e3:.0f} - {overhead_s * 1e3:.1f} overhead - {prefill_s * 1e3:.1f} own prefill) ms / "
        f"{service_s * 1e3:.2f} ms a queued prompt), the prefill stream at the capacity rate {rate:.4g} requests/s"
    )
    return Trigger(WAITING, metrics.for_signal(WAITING), float(threshold), how)


def kv_usage_threshold(model: ReplicaModel, rate_per_s: float) -> tuple[float, float, float] | None:
    """(threshold, mean share, sd share) of the KV cache at `rate_per_s`; None when unstable."""
    estimate = model.latency(rate_per_s, percentiles=False)
    capacity = model.limits.kv_capacity_tokens
    if not estimate.stable or capacity <= 0:
        return None
    mean, sd = estimate.kv_tokens_mean / capacity, estimate.kv_tokens_sd / capacity
    # Two decimals, rounded down: the gauge's own resolution is a block.
    threshold = math.floor(max(mean, 1.0 - KV_SIGMAS * sd) * 100) / 100
    return max(0.01, min(threshold, 0.99)), mean, sd


def kv_usage_trigger(metrics: EngineMetrics, capacity: ReplicaCapacity, model: ReplicaModel | None) -> Trigger | None:
    rate = capacity.request_rate_per_s
    if model is None or not rate:
        return None
    found = kv_usage_threshold(model, rate)
    if found is None:
        return None
    threshold, mean, sd = found
    how = (
        f"where preemption begins: 1 - {KV_SIGMAS:g} sd of the KV held ({sd:.3f} of the cache, the queueing "
        f"model's at the capacity rate {rate:.4g} requests/s; mean {mean:.3f}) reaches the whole cache"
    )
    return Trigger(KV_USAGE, metrics.for_signal(KV_USAGE), threshold, how)


def triggers(
    engine: str,
    capacity: ReplicaCapacity,
    model: ReplicaModel | None,
    ttft_slo_s: float | None,
    slo_percentile: float,
) -> list[Trigger]:
    """The engine's triggers for a replica of this capacity (in flight, waiting, KV usage when
    the queueing model gives its spread)."""
    metrics = engine_metrics(engine)
    found = [
        in_flight_trigger(metrics, capacity),
        waiting_trigger(metrics, capacity, model, ttft_slo_s, slo_percentile),
    ]
    kv = kv_usage_trigger(metrics, capacity, model)
    if kv is not None:
        found.append(kv)
    return found
