"""The planning services' answers as typed values: frozen dataclasses computed whole in the
service, in SI units (seconds, bytes, FLOP/s) and unrounded. The wire form (milliseconds,
TFLOP/s, key order, null for a non-finite figure) is the API's: each type is written by the dump
schema of the same shape in app/openapi/answers.py, which also documents it (app/api/wire.py).

Field names are the wire's names where the unit is the same; a field held in another unit than
the wire's carries its own (`time_s` is written as `time_us`), and a byte count held unrounded is
written as a whole number. A piece marked `FLAT` (the memory plan a fit and a throughput answer
share) is written as its own fields in place, not as a nested object. A field marked `OMITTED`
is a key some answers carry and others do not (a ranking's `options`, a period's procurement
split): None leaves it out of the wire form rather than writing null; `OMITTED_FLAT` does so for
a flat piece's fields together. A few figures the sizing core itself holds in milliseconds
(spreads by statistic, a disaggregated plan's TTFT budget) are held so, their names ending in
`_ms`, and `EngineFigures` holds the wire's GiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from app.sizing import trace_log
from app.sizing.disaggregated import KvTransfer
from app.sizing.specs import GpuPrices
from app.sizing.vocabulary import (
    Arrival,
    Binding,
    CapacityBound,
    FleetLayout,
    LatencyMode,
    Pricing,
    Role,
    RooflineBound,
)

# Metadata of a field whose value, a dataclass, is written as its own fields in place (the
# wire form is one flat object): `memory: MemoryPlan = field(metadata=FLAT)`.
FLAT_KEY = "flat"
FLAT: Mapping[str, bool] = MappingProxyType({FLAT_KEY: True})
# Metadata of a field left out of the wire form when its value is None (not written as null):
# `alternatives: tuple[...] | None = field(metadata=OMITTED)`; with OMITTED_FLAT, a flat piece
# whose fields are all left out when it is None.
OMITTED_KEY = "omitted"
OMITTED: Mapping[str, bool] = MappingProxyType({OMITTED_KEY: True})
OMITTED_FLAT: Mapping[str, bool] = MappingProxyType({FLAT_KEY: True, OMITTED_KEY: True})


@dataclass(frozen=True)
class CalibrationEngine:
    name: str
    version: str | None


@dataclass(frozen=True)
class CalibrationUsed:
    """The stored calibration a plan took figures from, and which (`fields_used`)."""

    id: int
    model: str
    match: str  # "exact", or "nearest": the same model family's on the same target
    point_count: int
    mape_percent: float | None
    engine: CalibrationEngine
    tensor_parallel: int
    created_at: str
    memory_efficiency: float | None
    compute_efficiency: float | None
    memory_overhead_gb: float | None
    fields_used: tuple[str, ...]


@dataclass(frozen=True)
class Provenance:
    """Where an answer's figures come from and what they leave out: their basis (datasheet,
    measured, calibrated), the stored calibration in use, what the model omits, the warnings.
    Written as its own fields in place, at the end of the answers it closes."""

    basis: str
    calibration: CalibrationUsed | None
    leaves_out: str
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class CostAnswer:
    """/v1/cost: what the GPUs cost an hour and a month, and per million output tokens at
    `tokens_per_s` (given, or from a throughput plan of the request's replica)."""

    # The engine the tokens/s were derived under (None for a given rate: no engine is needed).
    engine: str | None
    price_per_gpu_hour_usd: float
    gpus: float  # a fraction of a GPU may be priced (a MIG slice's share)
    tokens_per_s: float | None
    tokens_per_s_basis: str | None
    utilization: float
    hours_per_month: float
    hourly_cost_usd: float
    monthly_cost_usd: float
    cost_per_million_output_tokens_usd: float | None
    basis: str
    calibration: CalibrationUsed | None


@dataclass(frozen=True)
class RooflineAnswer:
    """/v1/roofline: one GEMM of m x k by k x n against the roofline of a peak and a bandwidth."""

    m: int
    k: int
    n: int
    flops: float
    bytes_moved: float
    arithmetic_intensity: float
    ridge_flops_per_byte: float
    attainable_flops_per_s: float
    percent_of_peak: float
    time_s: float
    bound: RooflineBound


@dataclass(frozen=True)
class EngineFigures:
    """What an engine's memory rule ran with: its settings and its reservations per GPU, in the
    wire's units (GiB, whole bytes)."""

    engine: str
    engine_version: str | None
    gpu_memory_utilization: float | None
    max_batched_tokens: int | None
    max_num_seqs: int | None
    block_size: int
    memory_visible_gib: float | None
    weights_bytes_per_gpu: int
    weights_by_component_bytes: Mapping[str, int] | None
    activation_peak_gib_per_gpu: float | None
    non_torch_gib_per_gpu: float | None
    cuda_graph_gib_per_gpu: float | None
    kv_budget_gib_per_gpu: float
    expert_parallel: int | None


@dataclass(frozen=True)
class MemoryPlan:
    """Do the weights and the KV cache fit one replica's GPUs, and for how many sequences: what
    a fit answer and a throughput answer share. Bytes unrounded (written whole)."""

    model: str
    gpu: str
    mig_profile: str | None
    weight_precision: str
    precision_native: bool
    kv_precision: str
    tensor_parallel: int
    gpus: int
    valid_tensor_parallel: tuple[int, ...]
    min_gpus_to_fit: int | None
    rough_gpus: int
    weights_bytes: float
    kv_bytes_per_token: float
    kv_bytes_per_sequence: float
    usable_bytes: float  # never negative: a shortfall is fits_weights false
    kv_budget_bytes: float  # never negative
    kv_capacity_tokens: int
    max_concurrency: int
    concurrency: int
    kv_bytes_at_concurrency: float
    shared_prefix_tokens: int
    shared_prefix_kv_bytes: float
    kv_bytes_saved: float
    # A speculative drafter's weights (counted in weights_bytes) and KV per token (in
    # kv_bytes_per_token); None without speculation.
    draft_weights_bytes: float | None
    draft_kv_bytes_per_token: float | None
    memory_used_bytes: float
    fits_weights: bool
    fits: bool
    memory_gb_per_gpu: float | None
    host_cpu_cores: float | None


@dataclass(frozen=True)
class Uncertainty:
    """Ranges around the answer's figures, what they rest on, and which block of the answer's
    figures they bound (None without ranges)."""

    # [low, high] by figure name (its wire name), None where the figure has none.
    uncertainty: Mapping[str, list[float] | None] | None
    uncertainty_basis: str
    uncertainty_applies_to: str | None


@dataclass(frozen=True, kw_only=True)
class FitAnswer:
    """/v1/fit: the memory plan of one replica and what it rests on."""

    memory: MemoryPlan = field(metadata=FLAT)
    engine_figures: EngineFigures = field(metadata=FLAT)
    warnings: tuple[str, ...]
    ranges: Uncertainty = field(metadata=FLAT)
    basis: str
    calibration: CalibrationUsed | None


@dataclass(frozen=True)
class ContinuousBatching:
    """The continuously batched steady state of a replica at its concurrency."""

    max_batched_tokens: int
    time_per_token_s: float
    ttft_s: float
    tokens_per_s: float
    requests_per_s: float
    chunks_per_prompt: int
    decode_step_s: float
    mixed_step_s: float
    queueing: str  # what the steady state's TTFT holds of waiting


@dataclass(frozen=True)
class SpeculativeFigures:
    """The speculation planned, what a verification step finishes and costs, and its speedup
    over the plain decode step at the answer's batch."""

    method: str
    num_speculative_tokens: int
    acceptance_rate: float
    draft_model: str | None
    tokens_per_step: float
    draft_s: float
    verify_s: float
    plain_step_s: float
    time_per_token_s: float
    speedup: float


@dataclass(frozen=True)
class SweepRow:
    """The lab's batch and the steady state at one concurrency of a throughput sweep."""

    concurrency: int
    time_per_token_s: float
    tokens_per_s: float
    tokens_per_s_per_user: float
    decode_bound: RooflineBound
    decode_memory_s: float
    decode_compute_s: float
    communication_s: float
    expert_fraction: float
    ttft_s: float
    request_latency_s: float
    effective_tokens_per_s: float
    cost_per_million_output_tokens_usd: float | None
    fits: bool
    continuous_batching_time_per_token_s: float | None
    continuous_batching_ttft_s: float | None
    continuous_batching_tokens_per_s: float | None
    speculative_speedup: float | None


@dataclass(frozen=True, kw_only=True)
class ThroughputAnswer:
    """/v1/throughput: the memory plan, the lab's batch at the request's concurrency and its
    roofline terms, the continuously batched steady state, speculation, and a sweep."""

    memory: MemoryPlan = field(metadata=FLAT)
    engine_figures: EngineFigures = field(metadata=FLAT)
    time_per_token_s: float
    tokens_per_s: float
    tokens_per_s_per_user: float
    decode_bound: RooflineBound
    decode_memory_s: float
    decode_compute_s: float
    weight_bytes_per_step: float
    kv_bytes_per_step: float
    flops_per_step: float
    expert_fraction: float
    communication_s: float
    ttft_s: float
    prefill_tokens_computed: float
    prefill_bound: RooflineBound
    prefill_compute_s: float
    prefill_memory_s: float
    request_latency_s: float
    effective_tokens_per_s: float
    crossover_concurrency: int | None
    arithmetic_intensity: float
    ridge_flops_per_byte: float
    compute_precision: str
    peak_tflops: float
    memory_bandwidth_bytes_per_s: float
    memory_efficiency: float
    compute_efficiency: float
    context_tokens: float
    price_per_gpu_hour_usd: float | None
    cost_per_million_output_tokens_usd: float | None
    cost_per_million_output_tokens_decode_only_usd: float | None
    continuous_batching: ContinuousBatching | None
    speculative: SpeculativeFigures | None
    sweep: tuple[SweepRow, ...]
    basis: str
    leaves_out: str
    ranges: Uncertainty = field(metadata=FLAT)
    warnings: tuple[str, ...]
    calibration: CalibrationUsed | None


@dataclass(frozen=True)
class SpeculationPlanned:
    """`speculative` on an answer under arrivals: the speculation planned (defaults filled in),
    the tokens a verification step finishes, and `used`: whether the plan runs it (under
    `speculative.auto` a fleet search may leave it off)."""

    method: str
    num_speculative_tokens: int
    acceptance_rate: float
    draft_model: str | None
    tokens_per_step: float
    auto: bool
    used: bool


@dataclass(frozen=True, kw_only=True)
class BatchAnswer:
    """/v1/batch: an offline batch on one replica, every request queued at once and run to the
    last completion; its makespan, throughput over it, each request's TTFT and E2E from the
    start, and what the job costs."""

    model: str
    gpu: str
    mig_profile: str | None
    tensor_parallel: int
    gpus: int
    weight_precision: str
    kv_precision: str
    engine_figures: EngineFigures = field(metadata=FLAT)
    kv_capacity_tokens: int
    max_concurrency: int
    # What the simulated scheduler runs at once at most (the KV cache may hold fewer).
    max_running_requests: int
    speculative: SpeculationPlanned | None
    requests: int
    prompt_tokens: int
    output_tokens: int
    prompt_tokens_cv: float
    output_tokens_cv: float
    seed: int
    prompt_tokens_total: int
    output_tokens_total: int
    makespan_s: float
    output_tokens_per_s: float
    total_tokens_per_s: float
    requests_per_s: float
    # Mean and percentiles in milliseconds by statistic (mean, p50, p90, p95, p99).
    ttft_ms: Mapping[str, float | None]
    e2e_ms: Mapping[str, float | None]
    preemptions: int
    cut_requests: int
    price_per_gpu_hour_usd: float | None
    job_cost_usd: float | None
    cost_per_million_output_tokens_usd: float | None
    provenance: Provenance = field(metadata=FLAT)


@dataclass(frozen=True, kw_only=True)
class LatencyRow:
    """One request rate on one replica (or prefill/decode pair) under random arrivals, from
    the queueing model: utilization, the percentiles, and whether the SLOs hold there. A
    spread is the mean and percentiles of one per-request figure in milliseconds by statistic
    (mean, p50, p90, p95, p99), null where the replica has no steady state."""

    request_rate: float
    utilization: float
    stable: bool
    in_flight_mean: float | None
    queue_wait_ms: Mapping[str, float | None]
    ttft_ms: Mapping[str, float | None]
    tpot_ms: Mapping[str, float | None]
    itl_ms: Mapping[str, float | None]
    e2e_ms: Mapping[str, float | None]
    output_tokens_per_s: float | None
    kv_fits: bool
    meets_slo: bool | None


@dataclass(frozen=True, kw_only=True)
class SimulatedRow:
    """A rate simulated instead: the figures, their 95% half-widths by batch means (the
    simulator's own sampling error) by figure, and what the simulation did."""

    figures: LatencyRow = field(metadata=FLAT)
    confidence_95_ms: Mapping[str, Mapping[str, float | None]]
    preemptions: int
    measured_requests: int


@dataclass(frozen=True, kw_only=True)
class LatencyAnswer:
    """/v1/latency: one replica under random arrivals, a row per rate, and the highest rate
    meeting the SLOs at `slo_percentile` with what stops a higher one."""

    model: str
    gpu: str
    mig_profile: str | None
    mode: LatencyMode
    tensor_parallel: int
    weight_precision: str
    kv_precision: str
    engine_figures: EngineFigures = field(metadata=FLAT)
    kv_capacity_tokens: int
    prompt_tokens: int
    output_tokens: int
    prompt_tokens_cv: float
    output_tokens_cv: float
    arrival: Arrival  # gamma at a burstiness other than 1
    burstiness: float
    saturation_rate: float
    slo_percentile: float
    ttft_slo_ms: float | None
    tpot_slo_ms: float | None
    e2e_slo_ms: float | None
    max_request_rate: float
    max_request_rate_bound_by: Binding
    # Null when no SLO is given.
    max_request_rate_meets_slo: bool | None
    speculative: SpeculationPlanned | None
    rates: tuple[LatencyRow | SimulatedRow, ...]
    provenance: Provenance = field(metadata=FLAT)
    topology: FleetLayout


@dataclass(frozen=True, kw_only=True)
class PairLatencyAnswer:
    """topology=disaggregated: one prefill and one decode replica of the request's shape; the
    answer is the decode replica's with the pair's rows and capacity, bound by the pool named,
    and a prompt's KV crosses a link."""

    answer: LatencyAnswer = field(metadata=FLAT)
    max_request_rate_pool: Role
    prefill_saturation_rate: float
    decode_saturation_rate: float
    kv_transfer: KvTransfer


@dataclass(frozen=True)
class TriggerAnswer:
    """One autoscaling trigger as a policy states it: the signal, the engine's gauges it sums,
    the PromQL query over the served model's pods, the threshold per replica and its basis."""

    signal: str
    metrics: tuple[str, ...]
    query: str
    threshold: float
    derived_from: str


@dataclass(frozen=True)
class DayPolicy:
    """The autoscaling policy a simulated day ran under."""

    triggers: tuple[TriggerAnswer, ...]
    scale_up_delay_s: float
    scale_down_delay_s: float
    min_replicas: int
    max_replicas: int
    warm_pool: int
    polling_interval_s: float


@dataclass(frozen=True)
class RecommendedPolicy:
    """A grid policy: the day's policy with every trigger's threshold scaled by `threshold_scale`."""

    policy: DayPolicy = field(metadata=FLAT)
    threshold_scale: float


@dataclass(frozen=True)
class DayHour:
    """One hour of a simulated day. Violation rates are shares of the requests finished in the
    hour (0 when none finished); the cost is unrounded (written to the cent)."""

    hour: int
    requests: int
    finished: int
    violation_rate: float
    ttft_violation_rate: float
    tpot_violation_rate: float
    e2e_violation_rate: float
    replicas_mean: float
    replicas_max: int
    replica_hours: float
    gpu_hours: float
    cost_usd: float | None


@dataclass(frozen=True)
class DayReplicas:
    """The replicas at one instant of a day: serving, starting up, and held warm."""

    t_s: float
    serving: int
    starting: int
    warm: int


@dataclass(frozen=True)
class SimulatedDay:
    """A day under one policy: its totals, its scaling events, its hours and its timeline."""

    requests: int
    finished: int
    violation_rate: float
    ttft_violation_rate: float
    tpot_violation_rate: float
    e2e_violation_rate: float
    replica_hours: float
    gpu_hours: float
    cost_usd: float | None
    scale_ups: int
    scale_downs: int
    drain_s: float
    per_hour: tuple[DayHour, ...]
    timeline: tuple[DayReplicas, ...]


@dataclass(frozen=True)
class StaticDay:
    """The static plan's day: /v1/fleet's peak fleet held all day."""

    replicas: int
    day: SimulatedDay = field(metadata=FLAT)


@dataclass(frozen=True)
class GridPoint:
    """One policy of the recommendation grid and how its day went."""

    min_replicas: int
    warm_pool: int
    threshold_scale: float
    violation_rate: float
    gpu_hours: float
    meets: bool


@dataclass(frozen=True)
class Recommendation:
    """The cheapest grid policy meeting the violation target (`policy` and `day` null when
    none does), and every policy the grid tried."""

    status: str
    policy: RecommendedPolicy | None
    day: SimulatedDay | None
    grid: tuple[GridPoint, ...]


@dataclass(frozen=True, kw_only=True)
class AutoscalingAnswer:
    """/v1/autoscaling/simulate: a day of the fleet under an autoscaling policy, beside the
    static peak plan, and with `recommend` the cheapest grid policy meeting the target."""

    model: str
    gpu: str
    mig_profile: str | None
    tensor_parallel: int
    weight_precision: str
    kv_precision: str
    kv_capacity_tokens: int
    prompt_tokens: int
    output_tokens: int
    prompt_tokens_cv: float
    output_tokens_cv: float
    gpus_per_replica: int
    engine_figures: EngineFigures = field(metadata=FLAT)
    speculative: SpeculationPlanned | None
    max_request_rate: float
    price_per_gpu_hour_usd: float | None
    seed: int
    hours: int
    requests: int
    cold_start_s: float
    cold_start_basis: str
    policy: DayPolicy
    autoscaled: SimulatedDay
    static: StaticDay
    recommendation: Recommendation | None
    max_violation_rate: float
    provenance: Provenance = field(metadata=FLAT)


@dataclass(frozen=True, kw_only=True)
class TracesAnswer:
    """POST /v1/traces: a request log's workload (app/sizing/trace_log.py's profile, its
    lengths, buckets and hourly periods as the profiler holds them) and the /v1/fleet body that
    plans it (None when no model is named)."""

    requests: int
    first_arrival: str
    last_arrival: str
    span_s: float
    requests_per_day: float
    requests_per_second: float
    peak_to_average: float
    burstiness: float | None
    arrival_cv: float | None
    prompt_tokens: trace_log.Spread
    output_tokens: trace_log.Spread
    prefix_cache_hit_rate: float | None
    models: Mapping[str, int]
    length_buckets: tuple[trace_log.Bucket, ...]
    periods: tuple[trace_log.HourlyPeriod, ...]
    length_samples: tuple[tuple[int, int], ...]
    # A request body, in the request's own field names.
    fleet_request: Mapping[str, Any] | None
    warnings: tuple[str, ...]


# --------------------------------------------------------------------------- /v1/fleet


@dataclass(frozen=True)
class PromptCost:
    """A prefill pool's costs per 10^6 prompt tokens: its replicas hand back one token a
    request, so its costs per output token are null and these stand in for them."""

    cost_per_million_prompt_tokens_usd: float | None
    replica_cost_per_million_prompt_tokens_usd: float | None


@dataclass(frozen=True)
class FleetSizing:
    """A fleet's replicas and whole GPUs on average, at peak and with its spares, the price of
    a GPU-hour, the month's cost and the cost per 10^6 output tokens of the fleet and of one
    loaded replica: what a plan, a ranked option and a forecast period share."""

    replicas_average: int
    replicas_peak: int
    replicas_total: int
    replicas_per_zone: int | None
    gpus_average: int
    gpus_peak: int
    gpus_total: int
    price_per_gpu_hour_usd: float | None
    monthly_cost_usd: float | None
    cost_per_million_output_tokens_usd: float | None
    replica_cost_per_million_output_tokens_usd: float | None


@dataclass(frozen=True)
class PoolSizing:
    """A pool's (or a pool's ranked option's) sizing, with its costs per prompt token when it
    is a prefill pool's."""

    sizing: FleetSizing = field(metadata=FLAT)
    prompt_cost: PromptCost | None = field(metadata=OMITTED_FLAT)


@dataclass(frozen=True)
class RankedOption:
    """One option of a ranking as far as the ranking went with it: its shape, whether it is
    eligible and was sized, whether it meets the SLOs (null while it stands on a bound), and why."""

    rank: int | None  # None: not eligible
    gpu: str
    mig_profile: str | None
    tensor_parallel: int | None
    weight_precision: str | None
    speculative: bool
    eligible: bool
    sized: bool
    meets_slo: bool | None
    measured_generation: bool | None  # None: no engine's training rows were read
    why: str


@dataclass(frozen=True, kw_only=True)
class SizedOption:
    """A ranked option sized at the SLO percentile: its replica's figures and its fleet."""

    option: RankedOption = field(metadata=FLAT)
    concurrency: int
    tokens_per_s: float
    time_per_token_s: float | None
    ttft_s: float | None
    bound_by: Binding
    capacity_exact: bool
    capacity_bound: CapacityBound | None
    size: PoolSizing = field(metadata=FLAT)


@dataclass(frozen=True, kw_only=True)
class BoundedOption:
    """A ranked option left at a bound (its saturation rate, its mean latencies, or its minimum
    fleet when never evaluated): what its fleet is at least."""

    option: RankedOption = field(metadata=FLAT)
    capacity_exact: bool
    capacity_bound: CapacityBound | None
    replicas_total_at_least: int
    gpus_total_at_least: int
    monthly_cost_usd_at_least: float | None
    price_per_gpu_hour_usd: float | None


OptionRow = RankedOption | SizedOption | BoundedOption


@dataclass(frozen=True)
class PredictedAtPeak:
    """The queueing model's percentiles at the planned peak rate, milliseconds by statistic."""

    request_rate: float
    queue_wait_ms: Mapping[str, float | None]
    ttft_ms: Mapping[str, float | None]
    tpot_ms: Mapping[str, float | None]
    e2e_ms: Mapping[str, float | None]


@dataclass(frozen=True, kw_only=True)
class FleetReplica:
    """One replica of a fleet: its shape, its capacity at the SLOs, and under random arrivals
    its planned utilization, the percentiles predicted at the peak and (mode=simulate) a
    simulation there. A prefill replica's throughput is its prompt tokens/s (`tokens_per_s`
    None)."""

    gpu: str
    mig_profile: str | None
    gpus: int
    tensor_parallel: int
    weight_precision: str
    kv_precision: str
    concurrency: int
    max_concurrency: int
    tokens_per_s: float | None
    prompt_tokens_per_s: float | None
    ttft_s: float | None
    time_per_token_s: float | None
    bound_by: Binding
    meets_slo: bool
    max_num_seqs: int
    # Under random arrivals; None for a steady-state or measured capacity.
    max_request_rate: float | None
    utilization_peak: float | None
    utilization_average: float | None
    optimistic: bool | None
    predicted: PredictedAtPeak | None
    simulated: SimulatedRow | None


@dataclass(frozen=True)
class FleetAutoscaling:
    """What a KEDA/HPA policy of the fleet needs: its bounds, its targets per replica, the
    cold start, the name it serves and the engine's triggers."""

    min_replicas: int
    max_replicas: int
    target_in_flight_per_replica: int
    target_queue_per_replica: int
    max_in_flight_per_replica: int
    cold_start_s: float | None
    queue_metric: str
    served_model_name: str
    triggers: tuple[TriggerAnswer, ...]


@dataclass(frozen=True)
class ScalingTrigger:
    """One Prometheus trigger of a KEDA ScaledObject: the signal it scales on, the query over
    the served model's pods, the threshold per replica as KEDA reads it (a string), and
    whether an empty result counts as zero load."""

    name: str
    server_address: str
    query: str
    threshold: str
    ignore_null_values: bool


@dataclass(frozen=True)
class ScaledObject:
    """A KEDA ScaledObject of one plan: the Deployment it scales, KEDA's polling, the replica
    bounds, the fallback while the metrics are missing, HPA's scale-down stabilization and
    pace, and the triggers. `cooldown_period_s` is set only when the fleet may scale to zero
    (KEDA's cooldown acts on the way to zero alone)."""

    name: str
    deployment: str
    polling_interval_s: int
    min_replicas: int
    max_replicas: int
    cooldown_period_s: int | None
    fallback_failures: int
    fallback_replicas: int
    scale_down_window_s: int
    scale_down_pods: int
    scale_down_period_s: int
    triggers: tuple[ScalingTrigger, ...]


@dataclass(frozen=True)
class PricesUsed:
    """The prices and power an answer is computed with, per whole card (the request's where it
    gives them, else the catalog card's)."""

    on_demand_usd_per_hour: float | None
    card: GpuPrices = field(metadata=FLAT)


@dataclass(frozen=True)
class EnergyDrawn:
    """One fleet's (or pool's) draw: its GPUs at their average utilization, PUE included."""

    gpus: int
    utilization: float
    power_per_gpu_w: float
    pue: float
    power_kw: float
    hours_per_month: float


@dataclass(frozen=True)
class EnergyFigures:
    """What a fleet draws a month, per 10^6 output tokens, and its CO2e with a grid intensity;
    None without the cards' power figures (CO2e: without a grid intensity)."""

    energy_kwh_per_month: float | None
    energy_wh_per_million_tokens: float | None
    co2e_kg_per_month: float | None


@dataclass(frozen=True)
class PoolsEnergy:
    """The energy figures of pools serving the same traffic together, and how they were made
    (or which power figure they lack)."""

    figures: EnergyFigures = field(metadata=FLAT)
    energy_basis: str


@dataclass(frozen=True)
class PoolPower:
    """One pool's own draw, utilization and prices."""

    energy_kwh_per_month: float | None
    energy: EnergyDrawn | None
    fleet_utilization: float
    prices: PricesUsed


@dataclass(frozen=True)
class HostedApi:
    """The same traffic on a per-token API (None without its prices), and the traffic from
    which self-hosting stays cheaper."""

    hosted_api_monthly_cost_usd: float | None
    break_even_requests_per_day: float | None
    hosted_api_comparison: str | None


@dataclass(frozen=True)
class OwnershipMonth:
    month: int
    owned_usd: float
    rented_usd: float | None


@dataclass(frozen=True)
class OwnershipAnswer:
    """Owning the fleet against renting it: the costs a month each way, the break-even and the
    running totals month by month."""

    gpus: int
    purchase_usd: float
    amortization_months: int
    electricity_usd_per_kwh: float
    hosting_usd_per_kw_month: float
    amortization_usd_per_month: float
    electricity_usd_per_month: float
    hosting_usd_per_month: float
    owned_monthly_cost_usd: float
    rented_monthly_cost_usd: float | None
    rented_basis: str
    break_even_months: float | None
    why: str
    months: tuple[OwnershipMonth, ...]


@dataclass(frozen=True)
class ProcurementRates:
    on_demand_usd_per_hour: float
    committed_usd_per_hour: Mapping[str, float]  # by term, those offered
    spot_usd_per_hour: float | None
    spot_share: float | None


@dataclass(frozen=True)
class ProcurementCommitment:
    term: str
    first_period: str
    last_period: str
    gpus: int
    usd_per_hour: float
    months: int
    cost_usd: float


@dataclass(frozen=True)
class ProcurementPeriod:
    """One period of pricing=optimize's split: the GPUs it needs, how they are had, and what
    each part costs."""

    period: str
    hours: float
    committed_hours: float
    gpus_needed: int
    gpus_protected: int
    committed_gpus: int
    committed_gpus_by_term: Mapping[str, int]
    on_demand_gpus: int
    spot_gpus: int
    committed_cost_usd: float
    on_demand_cost_usd: float
    spot_cost_usd: float
    cost_usd: float
    monthly_cost_usd: float
    on_demand_only_cost_usd: float


@dataclass(frozen=True)
class ProcurementAnswer:
    """pricing=optimize: the cheapest split of the horizon's fleets into committed, on-demand
    and spot GPUs, and what it saves against all on demand."""

    horizon_months: int
    period_months: int
    rates: ProcurementRates
    commitment: tuple[ProcurementCommitment, ...]
    committed_gpus: int
    periods: tuple[ProcurementPeriod, ...]
    cost_usd: float
    on_demand_cost_usd: float
    savings_usd: float
    monthly_cost_usd: float
    on_demand_monthly_cost_usd: float
    solver_status: str
    solve_s: float
    why: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class FleetFinance:
    """A plan's money and energy beyond its on-demand bill: the prices used, its draw, a
    hosted API beside it, owning it (when asked) and pricing=optimize's split."""

    pricing: Pricing
    prices: PricesUsed
    energy_figures: EnergyFigures = field(metadata=FLAT)
    fleet_utilization: float
    energy: EnergyDrawn | None
    energy_basis: str
    hosted: HostedApi = field(metadata=FLAT)
    ownership: OwnershipAnswer | None
    procurement: ProcurementAnswer | None


@dataclass(frozen=True)
class PeriodProcured:
    """A forecast period's part of pricing=optimize's split."""

    committed_gpus: int
    on_demand_gpus: int
    spot_gpus: int
    procured_cost_usd: float
    procured_monthly_cost_usd: float


@dataclass(frozen=True)
class PeriodFinance:
    """A forecast period's draw, hosted-API cost and (pricing=optimize) procurement."""

    energy_figures: EnergyFigures = field(metadata=FLAT)
    fleet_utilization: float
    hosted_api_monthly_cost_usd: float | None
    procured: PeriodProcured | None = field(metadata=OMITTED_FLAT)


@dataclass(frozen=True, kw_only=True)
class FleetPeriod:
    """One forecast period of an aggregated plan: its traffic, the fleet sized for it (the
    replica planned kept), its autoscaling bounds, and its money and energy."""

    period: str
    requests_per_day: float
    peak_to_average: float
    average_tokens_per_s: float | None
    peak_tokens_per_s: float | None
    size: FleetSizing = field(metadata=FLAT)
    min_replicas: int
    max_replicas: int
    finance: PeriodFinance = field(metadata=FLAT)


@dataclass(frozen=True)
class FleetRange:
    """The fleet sized at the low and high end of the replica's capacity spread (a measured
    capacity or engine=ideal has none)."""

    max_request_rate: tuple[float, ...] | None
    gpus_total: tuple[int, ...]
    monthly_cost_usd: tuple[float | None, ...] | None


@dataclass(frozen=True)
class Ranking:
    """A whole-catalog ranking's rows (the first `limit`) and how many options it held."""

    options: tuple[OptionRow, ...]
    options_total: int


@dataclass(frozen=True, kw_only=True)
class AggregatedAnswer:
    """The aggregated layout, planned: one kind of replica, its fleet with N+1 and zones, its
    autoscaling numbers and serve line, the ranking or the named GPU's alternatives it was
    chosen from, the forecast's periods, and its money and energy."""

    model: str
    gpu: str
    mig_profile: str | None
    topology: FleetLayout
    status: str
    meets_slo: bool
    replica: FleetReplica
    requests_per_s: float
    average_tokens_per_s: float
    peak_tokens_per_s: float
    average_input_tokens_per_s: float
    peak_input_tokens_per_s: float
    spare_replicas: int
    zones: int
    headroom: float
    size: FleetSizing = field(metadata=FLAT)
    replicas_per_card: int | None
    hours_per_month: float
    host_cpu_cores: float | None
    autoscaling: FleetAutoscaling
    vllm_command: str
    speculative: SpeculationPlanned | None
    engine_figures: EngineFigures = field(metadata=FLAT)
    basis: str
    leaves_out: str
    warnings: tuple[str, ...]
    calibration: CalibrationUsed | None
    uncertainty: FleetRange | None
    uncertainty_basis: str
    ranking: Ranking | None = field(metadata=OMITTED_FLAT)  # no gpu named
    alternatives: tuple[OptionRow, ...] | None = field(metadata=OMITTED)  # a gpu and its shapes
    periods: tuple[FleetPeriod, ...] | None = field(metadata=OMITTED)
    finance: FleetFinance = field(metadata=FLAT)


@dataclass(frozen=True, kw_only=True)
class UnsizedAnswer:
    """The aggregated layout when no option could be sized at all: what was tried."""

    model: str
    topology: FleetLayout
    status: str
    meets_slo: bool
    basis: str
    calibration: CalibrationUsed | None
    ranking: Ranking | None = field(metadata=OMITTED_FLAT)
    alternatives: tuple[OptionRow, ...] | None = field(metadata=OMITTED)


@dataclass(frozen=True, kw_only=True)
class FleetPool:
    """A disaggregated plan's prefill or decode pool: its replica, its fleet, autoscaling and
    serve line, the options it was chosen from, and its own draw and prices."""

    gpu: str
    mig_profile: str | None
    replica: FleetReplica
    # How loaded the pool's replicas run at its peak, and whether the queueing model is
    # optimistic there: the replica's figures, which every replica of the pool shares.
    utilization_peak: float | None
    optimistic: bool | None
    size: PoolSizing = field(metadata=FLAT)
    autoscaling: FleetAutoscaling
    vllm_command: str
    options: tuple[OptionRow, ...]
    options_total: int
    power: PoolPower = field(metadata=FLAT)


@dataclass(frozen=True)
class AggregatedBeside:
    """The aggregated plan a disaggregated one is compared with."""

    gpu: str
    mig_profile: str | None
    tensor_parallel: int
    weight_precision: str
    max_request_rate: float | None
    bound_by: Binding
    meets_slo: bool
    gpus_total: int
    monthly_cost_usd: float | None


@dataclass(frozen=True)
class PoolsTotals:
    """The traffic and the pools' summed GPUs (each pool sees every request)."""

    requests_per_s: float
    gpus_average: int
    gpus_peak: int


@dataclass(frozen=True, kw_only=True)
class PairPeriod:
    """One forecast period of a disaggregated plan: both pools sized for its traffic, their
    sums, and their cost over the period's output tokens; no single price (two GPU kinds may
    be priced), so the per-GPU and per-replica figures are None."""

    period: str
    requests_per_day: float
    peak_to_average: float
    average_tokens_per_s: float | None
    peak_tokens_per_s: float | None
    replicas_average: int
    replicas_peak: int
    replicas_total: int
    replicas_per_zone: int | None
    gpus_average: int
    gpus_peak: int
    gpus_total: int
    prefill_gpus_total: int
    decode_gpus_total: int
    price_per_gpu_hour_usd: float | None
    monthly_cost_usd: float | None
    replica_cost_per_million_output_tokens_usd: float | None
    cost_per_million_output_tokens_usd: float | None
    min_replicas: int
    max_replicas: int
    energy: PoolsEnergy = field(metadata=FLAT)


@dataclass(frozen=True)
class PoolRow:
    """A disaggregated plan's CSV row without a forecast: one pool's sizing."""

    pool: Role
    size: PoolSizing = field(metadata=FLAT)


@dataclass(frozen=True, kw_only=True)
class DisaggregatedAnswer:
    """The disaggregated layout: a prefill and a decode pool (None when it cannot be sized),
    the KV transfer between them, the TTFT budget left to prefill, the aggregated plan beside
    them and which costs less."""

    model: str
    topology: FleetLayout
    status: str
    meets_slo: bool
    prefill_pool: FleetPool | None
    decode_pool: FleetPool | None
    kv_transfer: KvTransfer | None
    prefill_ttft_budget_ms: float | None
    ttft_ms: float | None
    prefill_to_decode_gpus: float | None
    pd_ratio: str | None
    gpus_total: int | None
    monthly_cost_usd: float | None
    cost_per_million_output_tokens_usd: float | None
    aggregated: AggregatedBeside | None
    cheaper: FleetLayout | None
    comparison: str
    basis: str
    calibration: CalibrationUsed | None
    leaves_out: str
    # When either pool is sized (the last sized pool's engine figures).
    totals: PoolsTotals | None = field(metadata=OMITTED_FLAT)
    engine_figures: EngineFigures | None = field(metadata=OMITTED_FLAT)
    warnings: tuple[str, ...]
    energy: PoolsEnergy = field(metadata=FLAT)
    periods: tuple[PairPeriod, ...] | None = field(metadata=OMITTED)


@dataclass(frozen=True)
class ReplicaKind:
    """One kind of replica in a mix: its GPU (or MIG profile of one), TP size, weight format
    and price per replica-hour."""

    gpu: str
    mig_profile: str | None
    tensor_parallel: int
    weight_precision: str
    price_per_replica_hour_usd: float


@dataclass(frozen=True)
class MixPoolSize:
    replicas_peak: int
    replicas_total: int
    cards: int | None  # MIG: whole cards holding the slices
    gpus_total: int


@dataclass(frozen=True)
class MixBucket:
    prompt_tokens: int
    output_tokens: int
    share: float
    peak_requests_per_s: float


@dataclass(frozen=True)
class MixPoolBucket:
    """One bucket's part of a pool: its share of the bucket's requests, at what rate, and what
    one replica of the pool takes of it."""

    bucket: int
    prompt_tokens: int
    output_tokens: int
    share: float
    requests_per_s: float
    capacity_per_replica: float
    meets_slo: bool


@dataclass(frozen=True, kw_only=True)
class MixPoolAnswer:
    """One pool of a mix: its kind, its size and cost, how loaded it runs at peak, the buckets
    it serves, its serve line (from its replica sized for the longest bucket), its draw."""

    kind: ReplicaKind = field(metadata=FLAT)
    size: MixPoolSize = field(metadata=FLAT)
    monthly_cost_usd: float
    utilization_peak: float
    saturation_utilization_peak: float | None
    optimistic: bool | None
    buckets: tuple[MixPoolBucket, ...]
    vllm_command: str | None
    power: PoolPower = field(metadata=FLAT)


@dataclass(frozen=True, kw_only=True)
class MixSingleKind:
    """The best single-kind plan a mix is compared with, and what one of its replicas takes of
    each bucket (None: it cannot serve that bucket)."""

    kind: ReplicaKind = field(metadata=FLAT)
    size: MixPoolSize = field(metadata=FLAT)
    monthly_cost_usd: float
    capacity_per_replica: tuple[float | None, ...]


@dataclass(frozen=True)
class MixPeriodRow:
    """A forecast period of a mix: each pool (its kinds and bucket shares kept) sized for the
    period's peak."""

    period: str
    requests_per_day: float
    peak_to_average: float
    gpus_total: int
    monthly_cost_usd: float
    cost_per_million_output_tokens_usd: float | None
    pool_gpus_total: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class MixAnswer:
    """The mix itself: the buckets, the pools serving them, its cost beside the best single
    kind, what it could not serve, and what the solver did."""

    buckets: tuple[MixBucket, ...]
    pools: tuple[MixPoolAnswer, ...]
    gpus_total: int
    monthly_cost_usd: float
    single_kind: MixSingleKind | None
    savings_usd: float | None
    unserved_buckets: tuple[int, ...]
    dropped_buckets: tuple[int, ...]
    kinds_considered: int
    kinds_kept: int
    solver_status: str
    build_s: float | None
    solve_s: float
    periods: tuple[MixPeriodRow, ...] | None = field(metadata=OMITTED)


@dataclass(frozen=True, kw_only=True)
class MixedAnswer:
    """The mixed layout (`mix=true`): several replica kinds over length buckets. Its
    `topology` is aggregated: each pool serves whole requests."""

    model: str
    topology: FleetLayout
    status: str
    meets_slo: bool
    requests_per_s: float
    gpus_total: int
    monthly_cost_usd: float
    cost_per_million_output_tokens_usd: float | None
    mix: MixAnswer
    basis: str
    calibration: CalibrationUsed | None
    leaves_out: str
    warnings: tuple[str, ...]
    energy: PoolsEnergy = field(metadata=FLAT)


# /v1/fleet's answer, by layout: aggregated (planned, or nothing could be sized),
# disaggregated, mixed.
FleetAnswer = AggregatedAnswer | UnsizedAnswer | DisaggregatedAnswer | MixedAnswer
# A row of /v1/fleet's CSV: a ranked option, a forecast period (of one pool or two), a flat
# traffic's procurement period, a pool's sizing, a mix's pool or period.
FleetRow = OptionRow | FleetPeriod | PairPeriod | ProcurementPeriod | PoolRow | MixPoolAnswer | MixPeriodRow
