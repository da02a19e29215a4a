"""The answers' shapes, declared once: marshmallow schemas that document what the views render
and, for the answers typed in app/planning/answers.py, write them (app/api/wire.py compiles
each into a plain function; WRITERS below says which schema writes which type; the others
only document a dict their service builds). app.openapi.generator writes each class
below as a component of the same name: `required=True` marks a key every answer carries,
`allow_none=True` a value that may be null, a base class that is itself a component becomes
`allOf` (ThroughputResponse is FitResponse and its own fields), and a private base class
shares field declarations (the fleet's sizes, an engine's figures) without a component;
`taken` shares them where one answer repeats another's figures (a sweep row, a fleet's
replica, a plan's calibration).
Nested schemas named by string that are not classes here are request components
(`PeakTflops`, `MigProfile`, `CalibrationPoint`: the very schemas the writes load with).

Catalog entries (Model, Gpu, Engine and their nested parts) are not declared here: they are
the write documents of app.api.catalog_schemas as the tables of app.catalog.models hold
them (`catalog_entry`), so a new column reaches their documentation from its write field.
"""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, class_registry, fields, validate

from app.api import catalog_schemas
from app.api.schemas import LengthBucketSchema, PeakSchema
from app.catalog import models as tables
from app.planning import answers as typed
from app.sizing import disaggregated, procurement, trace_log
from app.sizing.triggers import SIGNALS
from app.sizing.vocabulary import Arrival, Binding, CapacityBound, LatencyMode, Link, Pricing, Role, RooflineBound

MS = 1e3  # seconds held, milliseconds written
BASES = ("datasheet", "calibrated", "calibrated-nearest")
PLAN_BASES = ("datasheet", "measured", "calibrated", "calibrated-nearest")
BOUND_BY = tuple(Binding)

BOUNDS = tuple(RooflineBound)
# What a ranked option's cost is a lower bound from (app/sizing/fleet_plan.py's ranking).
CAPACITY_BOUNDS = tuple(CapacityBound)


class Scaled(fields.Float):
    """A figure held in SI units, written multiplied by `factor` (seconds as milliseconds:
    1e3), or divided by it with `divide` (FLOP/s as TFLOP/s: 1e12)."""

    def __init__(self, factor: float, *, divide: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = factor
        self.divide = divide

    def convert(self, value: float | None) -> float | None:
        if value is None:
            return None
        return value / self.factor if self.divide else value * self.factor

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> float | None:
        return self.convert(value)


class Rounded(fields.Integer):
    """A count held unrounded (bytes of a plan), written as the nearest whole number."""

    def convert(self, value: float | None) -> int | None:
        return None if value is None else round(value)

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> int | None:
        return self.convert(value)


class Cents(fields.Float):
    """Dollars held unrounded (a day's cost), written to the cent."""

    def convert(self, value: float | None) -> float | None:
        return None if value is None else round(value, 2)

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> float | None:
        return self.convert(value)


def page(item: str, name: str | None = None) -> type[Schema]:
    """A list envelope: one page of `item`s, the count of every match and the page's bounds."""
    return Schema.from_dict(
        {
            "items": fields.List(fields.Nested(item), required=True),
            "total": fields.Integer(required=True),
            "limit": fields.Integer(required=True),
            "offset": fields.Integer(required=True),
        },
        name=name or f"{item}List",
    )


def taken(source: type[Schema], names: str) -> dict[str, fields.Field[Any]]:
    """`source`'s declarations of the space-separated `names`: where an answer repeats
    another's figures (a sweep row a throughput answer's, at its concurrency), they are
    declared once."""
    return {name: source._declared_fields[name] for name in names.split()}


class Problem(Schema):
    type = fields.String(required=True, metadata={"format": "uri-reference"})
    title = fields.String(required=True)
    status = fields.Integer(required=True, validate=validate.Range(min=400, max=599))
    detail = fields.String(required=True)
    instance = fields.String(required=True, metadata={"format": "uri-reference"})
    request_id = fields.String(required=True, validate=validate.Regexp("^[A-Za-z0-9._-]{1,128}$"))
    errors = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))
    checks = fields.Dict(keys=fields.String(), values=fields.String())


class Health(Schema):
    status = fields.String(required=True, validate=validate.OneOf(("ok",)))


class ReadyCatalog(Schema):
    models = fields.Integer(required=True)
    gpus = fields.Integer(required=True)
    mig_profiles = fields.Integer(required=True)
    precisions = fields.Integer(required=True)
    engines = fields.Integer(required=True)


class Ready(Schema):
    status = fields.String(required=True, validate=validate.OneOf(("ready",)))
    schema = fields.String(required=True)
    catalog = fields.Nested("ReadyCatalog", required=True)


class CalibrationEngine(Schema):
    name = fields.String(required=True)
    version = fields.String(required=True, allow_none=True)


class FitUncertainty(Schema):
    time_per_token_ms = fields.List(fields.Float(), allow_none=True)
    ttft_ms = fields.List(fields.Float(), allow_none=True)
    tokens_per_s = fields.List(fields.Float(), allow_none=True)
    kv_capacity_tokens = fields.List(fields.Float(), allow_none=True)


class _EngineFigures(Schema):
    """What an engine profile adds to a plan (absent with engine=ideal)."""

    engine = fields.String()
    engine_version = fields.String(allow_none=True)
    gpu_memory_utilization = fields.Float(allow_none=True)
    max_batched_tokens = fields.Integer(allow_none=True)
    max_num_seqs = fields.Integer(allow_none=True)
    block_size = fields.Integer()
    memory_visible_gib = fields.Float(allow_none=True)
    weights_bytes_per_gpu = fields.Integer()
    weights_by_component_bytes = fields.Dict(keys=fields.String(), values=fields.Integer(), allow_none=True)
    activation_peak_gib_per_gpu = fields.Float(allow_none=True)
    non_torch_gib_per_gpu = fields.Float(allow_none=True)
    cuda_graph_gib_per_gpu = fields.Float(allow_none=True)
    kv_budget_gib_per_gpu = fields.Float()
    expert_parallel = fields.Integer(allow_none=True)


class FitResponse(_EngineFigures):
    model = fields.String(required=True)
    draft_weights_bytes = Rounded(required=True, allow_none=True)
    draft_kv_bytes_per_token = Rounded(required=True, allow_none=True)
    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    weight_precision = fields.String(required=True)
    precision_native = fields.Boolean(required=True)
    kv_precision = fields.String(required=True)
    tensor_parallel = fields.Integer(required=True)
    gpus = fields.Integer(required=True)
    valid_tensor_parallel = fields.List(fields.Integer(), required=True)
    min_gpus_to_fit = fields.Integer(required=True, allow_none=True)
    rough_gpus = fields.Integer(required=True)
    weights_bytes = Rounded(required=True)
    kv_bytes_per_token = Rounded(required=True)
    kv_bytes_per_sequence = Rounded(required=True)
    usable_bytes = Rounded(required=True)
    kv_budget_bytes = Rounded(required=True)
    shared_prefix_tokens = fields.Integer(required=True)
    shared_prefix_kv_bytes = Rounded(required=True)
    kv_bytes_saved = Rounded(required=True)
    kv_capacity_tokens = fields.Integer(required=True)
    max_concurrency = fields.Integer(required=True)
    concurrency = fields.Integer(required=True)
    kv_bytes_at_concurrency = Rounded(required=True)
    memory_used_bytes = Rounded(required=True)
    fits_weights = fields.Boolean(required=True)
    fits = fields.Boolean(required=True)
    memory_gb_per_gpu = fields.Float(required=True)
    host_cpu_cores = fields.Float(required=True, allow_none=True)
    warnings = fields.List(fields.String(), required=True)
    basis = fields.String(required=True, validate=validate.OneOf(BASES))
    calibration = fields.Nested("PlanCalibration", required=True, allow_none=True)
    uncertainty = fields.Nested("FitUncertainty", allow_none=True)
    uncertainty_basis = fields.String()
    uncertainty_applies_to = fields.String(
        allow_none=True, validate=validate.OneOf(("fit", "continuous_batching", "lab"))
    )


class SpeculationSettings(Schema):
    method = fields.String(required=True)
    num_speculative_tokens = fields.Integer(required=True)
    acceptance_rate = fields.Float(required=True)
    draft_model = fields.String(required=True, allow_none=True)
    tokens_per_step = fields.Float(required=True)


class SpeculativeStep(SpeculationSettings):
    draft_ms = Scaled(MS, attribute="draft_s", required=True)
    verify_ms = Scaled(MS, attribute="verify_s", required=True)
    plain_step_ms = Scaled(MS, attribute="plain_step_s", required=True)
    time_per_token_ms = Scaled(MS, attribute="time_per_token_s", required=True)
    speedup = fields.Float(required=True)


class SpeculationPlanned(SpeculationSettings):
    auto = fields.Boolean(required=True)
    used = fields.Boolean(required=True)


class ContinuousBatching(Schema):
    max_batched_tokens = fields.Integer(required=True)
    time_per_token_ms = Scaled(MS, attribute="time_per_token_s", required=True, allow_none=True)
    ttft_ms = Scaled(MS, attribute="ttft_s", required=True, allow_none=True)
    tokens_per_s = fields.Float(required=True, allow_none=True)
    requests_per_s = fields.Float(required=True, allow_none=True)
    chunks_per_prompt = fields.Integer(required=True)
    decode_step_ms = Scaled(MS, attribute="decode_step_s", required=True, allow_none=True)
    mixed_step_ms = Scaled(MS, attribute="mixed_step_s", required=True, allow_none=True)
    queueing = fields.String(
        required=True,
        validate=validate.OneOf(
            (
                "excluded",
                "prefill contention included (the step in flight, and the others' prompts as M/D/1); "
                "waiting for a free slot excluded",
            )
        ),
    )


class ThroughputResponse(FitResponse):
    time_per_token_ms = Scaled(MS, attribute="time_per_token_s", required=True, allow_none=True)
    tokens_per_s = fields.Float(required=True, allow_none=True)
    tokens_per_s_per_user = fields.Float(required=True, allow_none=True)
    decode_bound = fields.String(required=True, validate=validate.OneOf(BOUNDS))
    decode_memory_ms = Scaled(MS, attribute="decode_memory_s", required=True, allow_none=True)
    decode_compute_ms = Scaled(MS, attribute="decode_compute_s", required=True, allow_none=True)
    weight_bytes_per_step = Rounded(required=True)
    kv_bytes_per_step = Rounded(required=True)
    flops_per_step = fields.Float(required=True, allow_none=True)
    expert_fraction = fields.Float(required=True)
    communication_ms = Scaled(MS, attribute="communication_s", required=True, allow_none=True)
    ttft_ms = Scaled(MS, attribute="ttft_s", required=True, allow_none=True)
    prefill_bound = fields.String(required=True, validate=validate.OneOf(BOUNDS))
    prefill_compute_ms = Scaled(MS, attribute="prefill_compute_s", required=True, allow_none=True)
    prefill_memory_ms = Scaled(MS, attribute="prefill_memory_s", required=True, allow_none=True)
    request_latency_ms = Scaled(MS, attribute="request_latency_s", required=True, allow_none=True)
    effective_tokens_per_s = fields.Float(required=True, allow_none=True)
    crossover_concurrency = fields.Integer(required=True, allow_none=True)
    arithmetic_intensity = fields.Float(required=True, allow_none=True)
    ridge_flops_per_byte = fields.Float(required=True, allow_none=True)
    compute_precision = fields.String(required=True)
    peak_tflops = fields.Float(required=True)
    memory_bandwidth_tb_per_s = Scaled(1e12, divide=True, attribute="memory_bandwidth_bytes_per_s", required=True)
    memory_efficiency = fields.Float(required=True)
    compute_efficiency = fields.Float(required=True)
    context_tokens = fields.Float(required=True)
    price_per_gpu_hour_usd = fields.Float(required=True, allow_none=True)
    cost_per_million_output_tokens_usd = fields.Float(required=True, allow_none=True)
    cost_per_million_output_tokens_decode_only_usd = fields.Float(required=True, allow_none=True)
    continuous_batching = fields.Nested("ContinuousBatching", required=True, allow_none=True)
    speculative = fields.Nested("SpeculativeStep", required=True, allow_none=True)
    sweep = fields.List(fields.Nested("SweepRow"), required=True)
    basis = fields.String(required=True, validate=validate.OneOf(BASES))
    leaves_out = fields.String(required=True)
    prefill_tokens_computed = fields.Float(required=True)


SweepRow = Schema.from_dict(
    {
        **taken(ThroughputResponse, "concurrency time_per_token_ms tokens_per_s tokens_per_s_per_user decode_bound"),
        "memory_ms": ThroughputResponse._declared_fields["decode_memory_ms"],
        "compute_ms": ThroughputResponse._declared_fields["decode_compute_ms"],
        **taken(
            ThroughputResponse,
            "communication_ms expert_fraction ttft_ms request_latency_ms effective_tokens_per_s "
            "cost_per_million_output_tokens_usd fits",
        ),
        **{
            f"continuous_batching_{name}": Scaled(
                MS, attribute=f"continuous_batching_{name[:-3]}_s", required=True, allow_none=True
            )
            for name in ("time_per_token_ms", "ttft_ms")
        },
        "continuous_batching_tokens_per_s": fields.Float(required=True, allow_none=True),
        "speculative_speedup": fields.Float(required=True, allow_none=True),
    },
    name="SweepRow",
)


class CostResponse(Schema):
    engine = fields.String(allow_none=True)
    price_per_gpu_hour_usd = fields.Float(required=True, allow_none=True)
    gpus = fields.Float(required=True)
    tokens_per_s = fields.Float(required=True, allow_none=True)
    tokens_per_s_basis = fields.String(
        required=True, allow_none=True, validate=validate.OneOf(("given", "throughput_plan_prefill_included"))
    )
    utilization = fields.Float(required=True)
    hours_per_month = fields.Float(required=True)
    hourly_cost_usd = fields.Float(required=True, allow_none=True)
    monthly_cost_usd = fields.Float(required=True, allow_none=True)
    cost_per_million_output_tokens_usd = fields.Float(required=True, allow_none=True)
    basis = fields.String(required=True, validate=validate.OneOf(PLAN_BASES))
    calibration = fields.Nested("PlanCalibration", required=True, allow_none=True)


class RooflineResponse(Schema):
    m = fields.Integer(required=True)
    k = fields.Integer(required=True)
    n = fields.Integer(required=True)
    flops = fields.Float(required=True, allow_none=True)
    bytes_moved = fields.Float(required=True, allow_none=True)
    arithmetic_intensity = fields.Float(required=True, allow_none=True)
    ridge_flops_per_byte = fields.Float(required=True, allow_none=True)
    attainable_tflops = Scaled(1e12, divide=True, attribute="attainable_flops_per_s", required=True, allow_none=True)
    percent_of_peak = fields.Float(required=True, allow_none=True)
    time_us = Scaled(1e6, attribute="time_s", required=True, allow_none=True)
    bound = fields.String(required=True, validate=validate.OneOf(BOUNDS))


class Spread(Schema):
    """Mean and percentiles of one per-request figure, milliseconds (null past capacity)."""

    mean = fields.Float(required=True, allow_none=True)
    p50 = fields.Float(required=True, allow_none=True)
    p90 = fields.Float(required=True, allow_none=True)
    p95 = fields.Float(required=True, allow_none=True)
    p99 = fields.Float(required=True, allow_none=True)


class LatencyRow(Schema):
    request_rate = fields.Float(required=True)
    utilization = fields.Float(required=True)
    stable = fields.Boolean(required=True)
    in_flight_mean = fields.Float(required=True, allow_none=True)
    queue_wait_ms = fields.Nested("Spread", required=True)
    ttft_ms = fields.Nested("Spread", required=True)
    tpot_ms = fields.Nested("Spread", required=True)
    itl_ms = fields.Nested("Spread", required=True)
    e2e_ms = fields.Nested("Spread", required=True)
    output_tokens_per_s = fields.Float(required=True, allow_none=True)
    kv_fits = fields.Boolean(required=True)
    meets_slo = fields.Boolean(required=True, allow_none=True)
    confidence_95_ms = fields.Nested("LatencyConfidence")
    preemptions = fields.Integer()
    measured_requests = fields.Integer()


# The per-request figures a simulation gives half-widths for, and a fleet predicts at its peak.
PER_REQUEST = "queue_wait_ms ttft_ms tpot_ms e2e_ms"
LatencyConfidence = Schema.from_dict(taken(LatencyRow, PER_REQUEST), name="LatencyConfidence")


class _SimulatedReplica(_EngineFigures):
    """What an answer about one replica under a workload of spread lengths says of it."""

    model = fields.String(required=True)
    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    tensor_parallel = fields.Integer(required=True)
    weight_precision = fields.String(required=True)
    kv_precision = fields.String(required=True)
    kv_capacity_tokens = fields.Integer(required=True)
    prompt_tokens = fields.Integer(required=True)
    output_tokens = fields.Integer(required=True)
    prompt_tokens_cv = fields.Float(required=True)
    output_tokens_cv = fields.Float(required=True)
    basis = fields.String(required=True, validate=validate.OneOf(BASES))
    calibration = fields.Nested("PlanCalibration", required=True, allow_none=True)
    leaves_out = fields.String(required=True)
    warnings = fields.List(fields.String(), required=True)
    speculative = fields.Nested("SpeculationPlanned", required=True, allow_none=True)


class LatencyResponse(_SimulatedReplica):
    mode = fields.String(required=True, validate=validate.OneOf(tuple(LatencyMode)))
    arrival = fields.String(required=True, validate=validate.OneOf(tuple(Arrival)))
    burstiness = fields.Float(required=True)
    saturation_rate = fields.Float(required=True)
    slo_percentile = fields.Float(required=True)
    ttft_slo_ms = fields.Float(required=True, allow_none=True)
    tpot_slo_ms = fields.Float(required=True, allow_none=True)
    e2e_slo_ms = fields.Float(required=True, allow_none=True)
    max_request_rate = fields.Float(required=True)
    max_request_rate_bound_by = fields.String(
        required=True,
        validate=validate.OneOf(("ttft_slo", "tpot_slo", "e2e_slo", "kv_capacity", "max_num_seqs", "saturation")),
    )
    max_request_rate_meets_slo = fields.Boolean(required=True, allow_none=True)
    rates = fields.List(fields.Nested("LatencyRow"), required=True)
    topology = fields.String(required=True, validate=validate.OneOf(disaggregated.TOPOLOGIES))
    max_request_rate_pool = fields.String(validate=validate.OneOf(("prefill", "decode")))
    prefill_saturation_rate = fields.Float()
    decode_saturation_rate = fields.Float()
    kv_transfer = fields.Nested("FleetKvTransfer")


class BatchResponse(_SimulatedReplica):
    gpus = fields.Integer(required=True)
    max_concurrency = fields.Integer(required=True)
    max_running_requests = fields.Integer(required=True)
    requests = fields.Integer(required=True)
    seed = fields.Integer(required=True)
    prompt_tokens_total = fields.Integer(required=True)
    output_tokens_total = fields.Integer(required=True)
    makespan_s = fields.Float(required=True)
    output_tokens_per_s = fields.Float(required=True)
    total_tokens_per_s = fields.Float(required=True)
    requests_per_s = fields.Float(required=True)
    ttft_ms = fields.Nested("Spread", required=True)
    e2e_ms = fields.Nested("Spread", required=True)
    preemptions = fields.Integer(required=True)
    cut_requests = fields.Integer(required=True)
    price_per_gpu_hour_usd = fields.Float(required=True, allow_none=True)
    job_cost_usd = fields.Float(required=True, allow_none=True)
    cost_per_million_output_tokens_usd = fields.Float(required=True, allow_none=True)


class TraceProfile(Schema):
    requests = fields.Integer(required=True)
    first_arrival = fields.String(required=True)
    last_arrival = fields.String(required=True)
    span_s = fields.Float(required=True)
    requests_per_day = fields.Float(required=True)
    requests_per_second = fields.Float(required=True)
    peak_to_average = fields.Float(required=True)
    burstiness = fields.Float(required=True, allow_none=True)
    arrival_cv = fields.Float(required=True, allow_none=True)
    prompt_tokens = fields.Nested("TraceLengths", required=True)
    output_tokens = fields.Nested("TraceLengths", required=True)
    prefix_cache_hit_rate = fields.Float(required=True, allow_none=True)
    models = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    length_buckets = fields.List(fields.Nested(LengthBucketSchema), required=True)
    periods = fields.List(fields.Nested("TracePeriod"), required=True)
    length_samples = fields.List(fields.List(fields.Integer()), required=True)
    fleet_request = fields.Nested("FleetRequest", required=True, allow_none=True)
    warnings = fields.List(fields.String(), required=True)


class TraceLengths(Schema):
    """One length's distribution over the log's requests, tokens."""

    mean = fields.Float(required=True)
    cv = fields.Float(required=True)
    p50 = fields.Integer(required=True)
    p90 = fields.Integer(required=True)
    p99 = fields.Integer(required=True)


class TracePeriod(Schema):
    period = fields.String(required=True)
    requests = fields.Integer(required=True)
    covered_s = fields.Float(required=True)
    requests_per_day = fields.Float(required=True)


class AutoscalingResponse(_SimulatedReplica):
    gpus_per_replica = fields.Integer(required=True)
    max_request_rate = fields.Float(required=True)
    price_per_gpu_hour_usd = fields.Float(required=True, allow_none=True)
    seed = fields.Integer(required=True)
    hours = fields.Integer(required=True)
    requests = fields.Integer(required=True)
    cold_start_s = fields.Float(required=True)
    cold_start_basis = fields.String(required=True)
    policy = fields.Nested("DayPolicyAnswer", required=True)
    autoscaled = fields.Nested("Day", required=True)
    static = fields.Nested("StaticDay", required=True)
    recommendation = fields.Nested("DayRecommendation", required=True, allow_none=True)
    max_violation_rate = fields.Float(required=True)


class DayPolicyAnswer(Schema):
    triggers = fields.List(fields.Nested("FleetTrigger"), required=True)
    scale_up_delay_s = fields.Float(required=True)
    scale_down_delay_s = fields.Float(required=True)
    min_replicas = fields.Integer(required=True)
    max_replicas = fields.Integer(required=True)
    warm_pool = fields.Integer(required=True)
    polling_interval_s = fields.Float(required=True)
    threshold_scale = fields.Float()


class _DayFigures(Schema):
    requests = fields.Integer(required=True)
    finished = fields.Integer(required=True)
    violation_rate = fields.Float(required=True)
    ttft_violation_rate = fields.Float(required=True)
    tpot_violation_rate = fields.Float(required=True)
    e2e_violation_rate = fields.Float(required=True)
    replica_hours = fields.Float(required=True)
    gpu_hours = fields.Float(required=True)
    cost_usd = Cents(required=True, allow_none=True)


class Day(_DayFigures):
    scale_ups = fields.Integer(required=True)
    scale_downs = fields.Integer(required=True)
    drain_s = fields.Float(required=True)
    per_hour = fields.List(fields.Nested("DayHour"), required=True)
    timeline = fields.List(fields.Nested("DayReplicas"), required=True)


class StaticDay(Day):
    replicas = fields.Integer(required=True)


class DayHour(_DayFigures):
    hour = fields.Integer(required=True)
    replicas_mean = fields.Float(required=True)
    replicas_max = fields.Integer(required=True)


class DayReplicas(Schema):
    t_s = fields.Float(required=True)
    serving = fields.Integer(required=True)
    starting = fields.Integer(required=True)
    warm = fields.Integer(required=True)


class DayRecommendation(Schema):
    status = fields.String(required=True)
    policy = fields.Nested("DayPolicyAnswer", required=True, allow_none=True)
    day = fields.Nested("Day", required=True, allow_none=True)
    grid = fields.List(fields.Nested("DayGridPoint"), required=True)


class DayGridPoint(Schema):
    min_replicas = fields.Integer(required=True)
    warm_pool = fields.Integer(required=True)
    threshold_scale = fields.Float(required=True)
    violation_rate = fields.Float(required=True)
    gpu_hours = fields.Float(required=True)
    meets = fields.Boolean(required=True)


def _sized(*, required: bool) -> type[Schema]:
    """The size and cost of a fleet: a plan, one ranked option, one forecast period."""

    class Sized(Schema):
        replicas_average = fields.Integer(required=required)
        replicas_peak = fields.Integer(required=required)
        replicas_total = fields.Integer(required=required)
        replicas_per_zone = fields.Integer(required=required, allow_none=True)
        gpus_average = fields.Integer(required=required)
        gpus_peak = fields.Integer(required=required)
        gpus_total = fields.Integer(required=required)
        price_per_gpu_hour_usd = fields.Float(required=required, allow_none=True)
        monthly_cost_usd = fields.Float(required=required, allow_none=True)
        cost_per_million_output_tokens_usd = fields.Float(required=required, allow_none=True)
        replica_cost_per_million_output_tokens_usd = fields.Float(required=required, allow_none=True)

    return Sized


class _PromptCost(Schema):
    """A prefill pool's costs, counted in the prompts it takes (its replicas give one token each)."""

    cost_per_million_prompt_tokens_usd = fields.Float(allow_none=True)
    replica_cost_per_million_prompt_tokens_usd = fields.Float(allow_none=True)


FleetReplica = Schema.from_dict(
    {
        **taken(
            ThroughputResponse,
            "gpu mig_profile gpus tensor_parallel weight_precision kv_precision concurrency max_concurrency "
            "tokens_per_s ttft_ms time_per_token_ms",
        ),
        "prompt_tokens_per_s": fields.Float(required=True, allow_none=True),
        "bound_by": fields.String(required=True, validate=validate.OneOf(BOUND_BY)),
        "meets_slo": fields.Boolean(required=True),
        "max_num_seqs": fields.Integer(required=True),
        "max_request_rate": fields.Float(required=True, allow_none=True),
        "utilization_peak": fields.Float(required=True, allow_none=True),
        "utilization_average": fields.Float(required=True, allow_none=True),
        "optimistic": fields.Boolean(required=True, allow_none=True),
        "predicted": fields.Nested("FleetPredicted", required=True, allow_none=True),
        "simulated": fields.Nested("LatencyRow", required=True, allow_none=True),
    },
    name="FleetReplica",
)


FleetPredicted = Schema.from_dict(taken(LatencyRow, f"request_rate {PER_REQUEST}"), name="FleetPredicted")


class FleetAutoscaling(Schema):
    min_replicas = fields.Integer(required=True)
    max_replicas = fields.Integer(required=True)
    target_in_flight_per_replica = fields.Integer(required=True)
    target_queue_per_replica = fields.Integer(required=True)
    max_in_flight_per_replica = fields.Integer(required=True)
    cold_start_s = fields.Float(required=True, allow_none=True)
    queue_metric = fields.String(required=True)
    served_model_name = fields.String(required=True)
    triggers = fields.List(fields.Nested("FleetTrigger"), required=True)


class FleetTrigger(Schema):
    signal = fields.String(required=True, validate=validate.OneOf(SIGNALS))
    metrics = fields.List(fields.String(), required=True)
    query = fields.String(required=True)
    threshold = fields.Float(required=True)
    derived_from = fields.String(required=True)


class FleetOption(_sized(required=False), _PromptCost):  # type: ignore[misc]
    rank = fields.Integer(required=True, allow_none=True)
    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    tensor_parallel = fields.Integer(required=True, allow_none=True)
    weight_precision = fields.String(required=True, allow_none=True)
    speculative = fields.Boolean(required=True)
    eligible = fields.Boolean(required=True)
    sized = fields.Boolean(required=True)
    meets_slo = fields.Boolean(required=True, allow_none=True)
    measured_generation = fields.Boolean(required=True, allow_none=True)
    why = fields.String(required=True)
    replicas_total_at_least = fields.Integer()
    gpus_total_at_least = fields.Integer()
    monthly_cost_usd_at_least = fields.Float(allow_none=True)
    concurrency = fields.Integer()
    tokens_per_s = fields.Float(allow_none=True)
    time_per_token_ms = Scaled(MS, attribute="time_per_token_s", allow_none=True)
    ttft_ms = Scaled(MS, attribute="ttft_s", allow_none=True)
    bound_by = fields.String(validate=validate.OneOf(BOUND_BY))
    capacity_exact = fields.Boolean()
    capacity_bound = fields.String(allow_none=True, validate=validate.OneOf(CAPACITY_BOUNDS))


class FleetPool(_sized(required=True), _PromptCost):  # type: ignore[misc]
    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    replica = fields.Nested("FleetReplica", required=True)
    utilization_peak = fields.Float(required=True, allow_none=True)
    optimistic = fields.Boolean(required=True, allow_none=True)
    autoscaling = fields.Nested("FleetAutoscaling", required=True)
    vllm_command = fields.String(required=True)
    options = fields.List(fields.Nested("FleetOption"), required=True)
    options_total = fields.Integer(required=True)
    energy_kwh_per_month = fields.Float(required=True, allow_none=True)
    energy = fields.Nested("FleetEnergy", required=True, allow_none=True)
    fleet_utilization = fields.Float(required=True)
    prices = fields.Nested("FleetPrices", required=True)


class FleetKvTransfer(Schema):
    bytes_per_request = fields.Float(required=True)
    link = fields.String(required=True, validate=validate.OneOf(tuple(Link)))
    gb_per_s_per_gpu = fields.Float(required=True)
    parallel_gpus = fields.Integer(required=True)
    ms = Scaled(MS, attribute="seconds", required=True)


class _ReplicaKind(Schema):
    """What one kind of replica is: its GPU (or MIG profile of one), TP size and weight format."""

    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    tensor_parallel = fields.Integer(required=True)
    weight_precision = fields.String(required=True)


class FleetAggregated(_ReplicaKind):
    max_request_rate = fields.Float(required=True, allow_none=True)
    bound_by = fields.String(required=True, validate=validate.OneOf(BOUND_BY))
    meets_slo = fields.Boolean(required=True)
    gpus_total = fields.Integer(required=True)
    monthly_cost_usd = fields.Float(required=True, allow_none=True)


class FleetUncertainty(Schema):
    max_request_rate = fields.List(fields.Float(), allow_none=True)
    gpus_total = fields.List(fields.Integer(), required=True)
    monthly_cost_usd = fields.List(fields.Float(), allow_none=True)


class MixBucket(Schema):
    prompt_tokens = fields.Integer(required=True)
    output_tokens = fields.Integer(required=True)
    share = fields.Float(required=True)
    peak_requests_per_s = fields.Float(required=True)


class MixPoolBucket(Schema):
    bucket = fields.Integer(required=True)
    prompt_tokens = fields.Integer(required=True)
    output_tokens = fields.Integer(required=True)
    share = fields.Float(required=True)
    requests_per_s = fields.Float(required=True)
    capacity_per_replica = fields.Float(required=True)
    meets_slo = fields.Boolean(required=True)


class MixSingleKind(_ReplicaKind):
    price_per_replica_hour_usd = fields.Float(required=True)
    replicas_peak = fields.Integer(required=True)
    replicas_total = fields.Integer(required=True)
    cards = fields.Integer(required=True, allow_none=True)
    gpus_total = fields.Integer(required=True)
    monthly_cost_usd = fields.Float(required=True)


class MixSingleKindPlan(MixSingleKind):
    capacity_per_replica = fields.List(fields.Float(allow_none=True), required=True)


class MixPool(MixSingleKind):
    utilization_peak = fields.Float(required=True)
    saturation_utilization_peak = fields.Float(required=True, allow_none=True)
    optimistic = fields.Boolean(required=True, allow_none=True)
    vllm_command = fields.String(required=True, allow_none=True)
    buckets = fields.List(fields.Nested("MixPoolBucket"), required=True)
    energy_kwh_per_month = fields.Float(required=True, allow_none=True)
    energy = fields.Nested("FleetEnergy", required=True, allow_none=True)
    fleet_utilization = fields.Float(required=True)
    prices = fields.Nested("FleetPrices", required=True)


class MixPeriod(Schema):
    period = fields.String(required=True)
    requests_per_day = fields.Float(required=True)
    peak_to_average = fields.Float(required=True)
    gpus_total = fields.Integer(required=True)
    monthly_cost_usd = fields.Float(required=True)
    cost_per_million_output_tokens_usd = fields.Float(required=True, allow_none=True)
    pool_gpus_total = fields.List(fields.Integer(), required=True)


class FleetMix(Schema):
    buckets = fields.List(fields.Nested("MixBucket"), required=True)
    pools = fields.List(fields.Nested("MixPool"), required=True)
    gpus_total = fields.Integer(required=True)
    monthly_cost_usd = fields.Float(required=True)
    single_kind = fields.Nested("MixSingleKindPlan", required=True, allow_none=True)
    savings_usd = fields.Float(required=True, allow_none=True)
    unserved_buckets = fields.List(fields.Integer(), required=True)
    dropped_buckets = fields.List(fields.Integer(), required=True)
    kinds_considered = fields.Integer(required=True)
    kinds_kept = fields.Integer(required=True)
    solver_status = fields.String(required=True)
    build_ms = Scaled(MS, attribute="build_s", required=True, allow_none=True)
    solve_ms = Scaled(MS, attribute="solve_s", required=True)
    periods = fields.List(fields.Nested("MixPeriod"))


class FleetPrices(Schema):
    on_demand_usd_per_hour = fields.Float(required=True, allow_none=True)
    reserved_1y_usd_per_hour = fields.Float(required=True, allow_none=True)
    reserved_3y_usd_per_hour = fields.Float(required=True, allow_none=True)
    spot_usd_per_hour = fields.Float(required=True, allow_none=True)
    spot_interruptions_per_hour = fields.Float(required=True, allow_none=True)
    purchase_usd = fields.Float(required=True, allow_none=True)
    power_w = fields.Float(required=True, allow_none=True)
    idle_power_w = fields.Float(required=True, allow_none=True)


class FleetEnergy(Schema):
    gpus = fields.Integer(required=True)
    utilization = fields.Float(required=True)
    power_per_gpu_w = fields.Float(required=True)
    pue = fields.Float(required=True)
    power_kw = fields.Float(required=True)
    hours_per_month = fields.Float(required=True)


class OwnershipMonth(Schema):
    month = fields.Integer(required=True)
    owned_usd = fields.Float(required=True)
    rented_usd = fields.Float(required=True, allow_none=True)


class FleetOwnership(Schema):
    gpus = fields.Integer(required=True)
    purchase_usd = fields.Float(required=True)
    amortization_months = fields.Integer(required=True)
    electricity_usd_per_kwh = fields.Float(required=True)
    hosting_usd_per_kw_month = fields.Float(required=True)
    amortization_usd_per_month = fields.Float(required=True)
    electricity_usd_per_month = fields.Float(required=True)
    hosting_usd_per_month = fields.Float(required=True)
    owned_monthly_cost_usd = fields.Float(required=True)
    rented_monthly_cost_usd = fields.Float(required=True, allow_none=True)
    rented_basis = fields.String(required=True)
    break_even_months = fields.Float(required=True, allow_none=True)
    why = fields.String(required=True)
    months = fields.List(fields.Nested("OwnershipMonth"), required=True)


class ProcurementRates(Schema):
    on_demand_usd_per_hour = fields.Float(required=True)
    committed_usd_per_hour = fields.Dict(keys=fields.String(), values=fields.Float(), required=True)
    spot_usd_per_hour = fields.Float(required=True, allow_none=True)
    spot_share = fields.Float(required=True, allow_none=True)


class ProcurementCommitment(Schema):
    term = fields.String(required=True, validate=validate.OneOf(tuple(procurement.TERM_MONTHS)))
    first_period = fields.String(required=True)
    last_period = fields.String(required=True)
    gpus = fields.Integer(required=True)
    usd_per_hour = fields.Float(required=True)
    months = fields.Integer(required=True)
    cost_usd = fields.Float(required=True)


class ProcurementPeriod(Schema):
    period = fields.String(required=True)
    hours = fields.Float(required=True)
    committed_hours = fields.Float(required=True)
    gpus_needed = fields.Integer(required=True)
    gpus_protected = fields.Integer(required=True)
    committed_gpus = fields.Integer(required=True)
    committed_gpus_by_term = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    on_demand_gpus = fields.Integer(required=True)
    spot_gpus = fields.Integer(required=True)
    committed_cost_usd = fields.Float(required=True)
    on_demand_cost_usd = fields.Float(required=True)
    spot_cost_usd = fields.Float(required=True)
    cost_usd = fields.Float(required=True)
    monthly_cost_usd = fields.Float(required=True)
    on_demand_only_cost_usd = fields.Float(required=True)


class FleetProcurement(Schema):
    horizon_months = fields.Integer(required=True)
    period_months = fields.Integer(required=True)
    rates = fields.Nested("ProcurementRates", required=True)
    commitment = fields.List(fields.Nested("ProcurementCommitment"), required=True)
    committed_gpus = fields.Integer(required=True)
    periods = fields.List(fields.Nested("ProcurementPeriod"), required=True)
    cost_usd = fields.Float(required=True)
    on_demand_cost_usd = fields.Float(required=True)
    savings_usd = fields.Float(required=True)
    monthly_cost_usd = fields.Float(required=True)
    on_demand_monthly_cost_usd = fields.Float(required=True)
    solver_status = fields.String(required=True)
    solve_ms = Scaled(MS, attribute="solve_s", required=True)
    why = fields.List(fields.String(), required=True)


class _EnergyFigures(Schema):
    """What a fleet (or one forecast period of it) draws, and its CO2e with a grid intensity."""

    energy_kwh_per_month = fields.Float(allow_none=True)
    energy_wh_per_million_tokens = fields.Float(allow_none=True)
    co2e_kg_per_month = fields.Float(allow_none=True)
    hosted_api_monthly_cost_usd = fields.Float(allow_none=True)
    fleet_utilization = fields.Float()


class FleetPeriod(_sized(required=True), _EnergyFigures):  # type: ignore[misc]
    period = fields.String(required=True)
    requests_per_day = fields.Float(required=True)
    peak_to_average = fields.Float(required=True)
    average_tokens_per_s = fields.Float(required=True, allow_none=True)
    peak_tokens_per_s = fields.Float(required=True, allow_none=True)
    min_replicas = fields.Integer(required=True)
    max_replicas = fields.Integer(required=True)
    prefill_gpus_total = fields.Integer()
    decode_gpus_total = fields.Integer()
    committed_gpus = fields.Integer()
    on_demand_gpus = fields.Integer()
    spot_gpus = fields.Integer()
    procured_cost_usd = fields.Float()
    procured_monthly_cost_usd = fields.Float()
    energy_basis = fields.String()


class FleetPoolRow(_sized(required=True), _PromptCost):  # type: ignore[misc]
    """A disaggregated plan's CSV row without a forecast: one pool's sizing (the JSON answer
    nests it in the pool); not a component of the document."""

    pool = fields.String(required=True, validate=validate.OneOf(tuple(Role)))


class FleetResponse(_sized(required=False), _EngineFigures, _EnergyFigures):  # type: ignore[misc]
    model = fields.String(required=True)
    gpu = fields.String()
    mig_profile = fields.String(allow_none=True)
    status = fields.String(required=True, validate=validate.OneOf(("ok", "no option meets the SLO")))
    meets_slo = fields.Boolean(required=True)
    replica = fields.Nested("FleetReplica")
    requests_per_s = fields.Float(allow_none=True)
    average_tokens_per_s = fields.Float(allow_none=True)
    peak_tokens_per_s = fields.Float(allow_none=True)
    average_input_tokens_per_s = fields.Float(allow_none=True)
    peak_input_tokens_per_s = fields.Float(allow_none=True)
    spare_replicas = fields.Integer()
    zones = fields.Integer()
    headroom = fields.Float()
    replicas_per_card = fields.Integer(allow_none=True)
    hours_per_month = fields.Float()
    host_cpu_cores = fields.Float(allow_none=True)
    autoscaling = fields.Nested("FleetAutoscaling")
    vllm_command = fields.String()
    speculative = fields.Nested("SpeculationPlanned", allow_none=True)
    basis = fields.String(required=True, validate=validate.OneOf(PLAN_BASES))
    calibration = fields.Nested("PlanCalibration", required=True, allow_none=True)
    leaves_out = fields.String()
    warnings = fields.List(fields.String())
    options = fields.List(fields.Nested("FleetOption"))
    options_total = fields.Integer()
    alternatives = fields.List(fields.Nested("FleetOption"))
    periods = fields.List(fields.Nested("FleetPeriod"))
    topology = fields.String(required=True, validate=validate.OneOf(disaggregated.TOPOLOGIES))
    prefill_pool = fields.Nested("FleetPool", allow_none=True)
    decode_pool = fields.Nested("FleetPool", allow_none=True)
    kv_transfer = fields.Nested("FleetKvTransfer", allow_none=True)
    prefill_ttft_budget_ms = fields.Float(allow_none=True)
    ttft_ms = fields.Float(allow_none=True)
    prefill_to_decode_gpus = fields.Float(allow_none=True)
    pd_ratio = fields.String(allow_none=True)
    aggregated = fields.Nested("FleetAggregated", allow_none=True)
    cheaper = fields.String(allow_none=True, validate=validate.OneOf(disaggregated.TOPOLOGIES))
    comparison = fields.String()
    mix = fields.Nested("FleetMix")
    uncertainty = fields.Nested("FleetUncertainty", allow_none=True)
    uncertainty_basis = fields.String()
    pricing = fields.String(validate=validate.OneOf(tuple(Pricing)))
    prices = fields.Nested("FleetPrices")
    energy = fields.Nested("FleetEnergy", allow_none=True)
    energy_basis = fields.String()
    break_even_requests_per_day = fields.Float(allow_none=True)
    hosted_api_comparison = fields.String(allow_none=True)
    ownership = fields.Nested("FleetOwnership", allow_none=True)
    procurement = fields.Nested("FleetProcurement", allow_none=True)


# --- catalog entries: the write documents as GET answers them -------------------------------

# The component that documents a nested part of a catalog document as an answer holds it
# (the write document's own checks more: a MIG profile's name pattern, a range's bounds).
NESTED_ANSWERS: dict[type[Schema], str] = {
    PeakSchema: "PeakTflops",
    catalog_schemas.CatalogInterconnectSchema: "Interconnect",
    catalog_schemas.CatalogPricesSchema: "GpuPrices",
    catalog_schemas.CatalogMigProfileSchema: "MigProfile",
    catalog_schemas.KernelEfficiencySchema: "KernelEfficiency",
    catalog_schemas.UncertaintySchema: "EngineUncertainty",
}
SCALARS = (fields.Boolean, fields.Integer, fields.Float, fields.String)


def answered(field: fields.Field[Any], *, required: bool = False, allow_none: bool = False) -> fields.Field[Any]:
    """A write field as an answer states it: its JSON type (its items' and values' too, a
    nested part as the answer component of NESTED_ANSWERS, a pair's length). The ranges,
    enums, patterns and defaults are the write document's: an answer is one."""
    if isinstance(field, fields.Nested):
        nested = field.nested
        kind = nested if isinstance(nested, type) else type(nested)
        if kind not in NESTED_ANSWERS:
            raise TypeError(f"no answer component documents {kind.__name__}: name it in answers.NESTED_ANSWERS")
        return fields.Nested(NESTED_ANSWERS[kind], required=required, allow_none=allow_none)
    if isinstance(field, fields.List):
        pair = [v for v in field.validators if isinstance(v, validate.Length) and v.equal is not None]
        return fields.List(answered(field.inner), validate=pair, required=required, allow_none=allow_none)
    if isinstance(field, fields.Dict):
        values = answered(field.value_field) if field.value_field is not None else None
        return fields.Dict(values=values, required=required, allow_none=allow_none)
    for scalar in SCALARS:
        if isinstance(field, scalar):
            return scalar(required=required, allow_none=allow_none)
    raise TypeError(f"cannot state {type(field).__name__} in an answer: teach answers.answered about it")


def catalog_part(write: type[Schema], name: str) -> type[Schema]:
    """A nested part of a catalog entry (an engine's efficiency row, its uncertainty): every
    field of the part as written, always present (the defaults filled in)."""
    return Schema.from_dict(
        {key: answered(field, required=True, allow_none=field.allow_none) for key, field in write().fields.items()},
        name=name,
    )


def catalog_entry(write: type[Schema], row: type[tables.Base]) -> type[Schema]:
    """A catalog entry as GET (and every write) answers it, a component named as its table's
    row class: each field of the write document (what a POST takes, and `version`), always
    present, null where its column may be null. A part that no column holds whole is never
    null (a GPU's `peak_tflops` and `interconnect` are objects of nullable figures, its
    `mig_profiles` a list). In the table's column order: a part where its flattened columns
    stand (gpus.peak_tflops_<key>), one no column holds (mig_profiles) after them, `version`
    last."""
    columns = row.__table__.columns
    order = tables.data_columns(row)

    def position(key: str) -> int:
        if key in order:
            return order.index(key)
        flattened = (i for i, column in enumerate(order) if column.startswith(f"{key}_"))
        return len(order) + 1 if key == "version" else next(flattened, len(order))

    written = write().fields
    return Schema.from_dict(
        {
            key: answered(written[key], required=True, allow_none=key in columns and columns[key].nullable)
            for key in sorted(written, key=position)
        },
        name=row.__name__,
    )


Model = catalog_entry(catalog_schemas.ModelWriteSchema, tables.Model)
Gpu = catalog_entry(catalog_schemas.GpuWriteSchema, tables.Gpu)
GpuPrices = catalog_part(catalog_schemas.CatalogPricesSchema, "GpuPrices")
KernelEfficiency = catalog_part(catalog_schemas.KernelEfficiencySchema, "KernelEfficiency")
EngineUncertainty = catalog_part(catalog_schemas.UncertaintySchema, "EngineUncertainty")
Engine = catalog_entry(catalog_schemas.EngineWriteSchema, tables.Engine)
ModelList = page("Model")
GpuList = page("Gpu")
EngineList = page("Engine")


class ParamBreakdown(Schema):
    class Meta:
        unknown = RAISE

    embedding = fields.Integer(required=True)
    lm_head = fields.Integer(required=True)
    attention = fields.Integer(required=True)
    dense_mlp = fields.Integer(required=True)
    shared_experts = fields.Integer(required=True)
    routed_experts = fields.Integer(required=True)
    router = fields.Integer(required=True)
    norms = fields.Integer(required=True)
    total = fields.Integer(required=True)


class SafetensorsSummary(Schema):
    class Meta:
        unknown = RAISE

    params_total = fields.Integer(required=True)
    tensors = fields.Integer(required=True)
    shards = fields.Integer(required=True)
    bytes_total = fields.Integer(required=True)
    bytes_by_dtype = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    params_by_dtype = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    mxfp4_packed_bytes = fields.Integer(required=True)
    quantization_scale_bytes = fields.Integer(required=True)
    excluded_params = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)


class ImportDerivation(Schema):
    class Meta:
        unknown = RAISE

    family = fields.String(required=True)
    params_total_from_config = fields.Integer(required=True)
    params = fields.Nested("ParamBreakdown", required=True)
    kv_bytes_per_token = fields.Integer(required=True)
    assumptions = fields.List(fields.String(), required=True)
    safetensors = fields.Nested("SafetensorsSummary", required=True, allow_none=True)
    warnings = fields.List(fields.String(), required=True)


class ModelPreview(Schema):
    """ModelDocument (the write's fields) as a dry run derives it: not stored, so no version."""

    class Meta:
        unknown = RAISE

    slug = fields.String(allow_none=True)
    version = fields.Constant(None)


class ImportResult(Schema):
    class Meta:
        unknown = RAISE

    stored = fields.Boolean(required=True)
    model = fields.Raw(required=True, metadata={"one_of": ["Model", "ModelPreview"]})
    derivation = fields.Nested("ImportDerivation", required=True)


class CalibrationResidual(Schema):
    point = fields.Integer(required=True)
    metric = fields.String(
        required=True, validate=validate.OneOf(("tpot_ms", "itl_ms", "ttft_ms", "output_tokens_per_s"))
    )
    measured = fields.Float(required=True)
    predicted = fields.Float(required=True, allow_none=True)
    error_percent = fields.Float(required=True, allow_none=True)


class CalibrationLogSummary(Schema):
    engine = fields.String(required=True, validate=validate.OneOf(("vllm", "sglang")))
    engine_version = fields.String(required=True, allow_none=True)
    gpu_memory_utilization = fields.Float(required=True, allow_none=True)
    tensor_parallel = fields.Integer(required=True, allow_none=True)
    weights_bytes = fields.Float(required=True, allow_none=True)
    planner_weights_bytes = fields.Float(required=True)
    weights_difference_percent = fields.Float(required=True, allow_none=True)
    kv_cache_bytes = fields.Float(required=True, allow_none=True)
    kv_capacity_tokens = fields.Integer(required=True, allow_none=True)
    kv_capacity_source = fields.String(required=True, allow_none=True)
    kv_bytes_per_token = fields.Float(required=True, allow_none=True)
    planner_kv_bytes_per_token = fields.Float(required=True)
    kv_bytes_per_token_difference_percent = fields.Float(required=True, allow_none=True)
    non_torch_bytes = fields.Float(required=True, allow_none=True)
    activation_peak_bytes = fields.Float(required=True, allow_none=True)
    cuda_graph_bytes = fields.Float(required=True, allow_none=True)
    max_concurrency = fields.Float(required=True, allow_none=True)
    max_concurrency_tokens = fields.Integer(required=True, allow_none=True)
    lines_used = fields.List(fields.String(), required=True)


class CalibrationSummary(Schema):
    id = fields.Integer(required=True)
    model = fields.String(required=True)
    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    tensor_parallel = fields.Integer(required=True)
    weight_precision = fields.String(required=True)
    kv_precision = fields.String(required=True)
    engine = fields.Nested("CalibrationEngine", required=True)
    max_batched_tokens = fields.Integer(required=True)
    gpu_memory_utilization = fields.Float(required=True)
    memory_efficiency = fields.Float(required=True, allow_none=True)
    compute_efficiency = fields.Float(required=True, allow_none=True)
    memory_overhead_gb = fields.Float(required=True, allow_none=True)
    kv_capacity_tokens = fields.Integer(required=True, allow_none=True)
    point_count = fields.Integer(required=True)
    mape_percent = fields.Float(required=True, allow_none=True)
    undetermined = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    in_use = fields.Boolean(required=True)
    created_at = fields.String(required=True, metadata={"format": "date-time"})


PlanCalibration = Schema.from_dict(
    {
        **taken(CalibrationSummary, "id model"),
        "match": fields.String(required=True, validate=validate.OneOf(("exact", "nearest"))),
        **taken(
            CalibrationSummary,
            "point_count mape_percent engine tensor_parallel created_at memory_efficiency compute_efficiency "
            "memory_overhead_gb",
        ),
        "fields_used": fields.List(
            fields.String(validate=validate.OneOf(("memory_efficiency", "compute_efficiency", "memory_overhead_gb"))),
            required=True,
        ),
    },
    name="PlanCalibration",
)


class Calibration(CalibrationSummary):
    points = fields.List(fields.Nested("CalibrationPoint"), required=True)
    residuals = fields.List(fields.Nested("CalibrationResidual"), required=True)
    log_summary = fields.Nested("CalibrationLogSummary", required=True, allow_none=True)
    warnings = fields.List(fields.String(), required=True)


CalibrationList = page("CalibrationSummary", "CalibrationList")

# Components that extend one that is not a class here: a catalog answer is a valid write
# document (what GET answers can be PUT back) with every key present, its identity and its
# version. A field the document describes takes its description from there (an override in
# app/openapi/descriptions.py adds what the answer says beyond it).
EXTENDS = {
    "ModelPreview": "ModelDocument",
    "Model": "ModelDocument",
    "Gpu": "GpuDocument",
    "Engine": "EngineDocument",
}

# Every answer component, in the order the document lists them.
COMPONENTS: tuple[type[Schema], ...] = (
    Problem,
    Health,
    Ready,
    ReadyCatalog,
    PlanCalibration,
    CalibrationEngine,
    FitResponse,
    FitUncertainty,
    ThroughputResponse,
    ContinuousBatching,
    SpeculationSettings,
    SpeculativeStep,
    SpeculationPlanned,
    SweepRow,
    CostResponse,
    RooflineResponse,
    LatencyResponse,
    LatencyRow,
    LatencyConfidence,
    BatchResponse,
    AutoscalingResponse,
    DayPolicyAnswer,
    Day,
    StaticDay,
    DayHour,
    DayReplicas,
    DayRecommendation,
    DayGridPoint,
    Spread,
    TraceProfile,
    TraceLengths,
    TracePeriod,
    FleetResponse,
    FleetReplica,
    FleetPredicted,
    FleetAutoscaling,
    FleetTrigger,
    FleetOption,
    FleetPeriod,
    FleetPool,
    FleetKvTransfer,
    FleetAggregated,
    FleetMix,
    FleetUncertainty,
    FleetPrices,
    FleetEnergy,
    FleetOwnership,
    OwnershipMonth,
    FleetProcurement,
    ProcurementRates,
    ProcurementCommitment,
    ProcurementPeriod,
    MixBucket,
    MixPool,
    MixPoolBucket,
    MixSingleKind,
    MixSingleKindPlan,
    MixPeriod,
    Model,
    Gpu,
    GpuPrices,
    ModelList,
    GpuList,
    Engine,
    KernelEfficiency,
    EngineUncertainty,
    EngineList,
    ParamBreakdown,
    SafetensorsSummary,
    ImportDerivation,
    ModelPreview,
    ImportResult,
    CalibrationSummary,
    Calibration,
    CalibrationResidual,
    CalibrationLogSummary,
    CalibrationList,
)


# Nested fields name components by string; those made by Schema.from_dict are not in
# marshmallow's registry unless put there, and a schema that writes must find them.
for _component in COMPONENTS:
    class_registry.register(_component.__name__, _component)

# The typed answers (app/planning/answers.py) and the schemas that write them (app/api/wire.py).
WRITERS: dict[type, type[Schema]] = {
    typed.FitAnswer: FitResponse,
    typed.ThroughputAnswer: ThroughputResponse,
    typed.ContinuousBatching: ContinuousBatching,
    typed.SpeculativeFigures: SpeculativeStep,
    typed.SweepRow: SweepRow,
    typed.BatchAnswer: BatchResponse,
    typed.SpeculationPlanned: SpeculationPlanned,
    typed.CostAnswer: CostResponse,
    typed.RooflineAnswer: RooflineResponse,
    typed.CalibrationUsed: PlanCalibration,
    typed.CalibrationEngine: CalibrationEngine,
    typed.LatencyAnswer: LatencyResponse,
    typed.PairLatencyAnswer: LatencyResponse,
    typed.LatencyRow: LatencyRow,
    typed.SimulatedRow: LatencyRow,
    disaggregated.KvTransfer: FleetKvTransfer,
    typed.AutoscalingAnswer: AutoscalingResponse,
    typed.TriggerAnswer: FleetTrigger,
    typed.DayPolicy: DayPolicyAnswer,
    typed.RecommendedPolicy: DayPolicyAnswer,
    typed.SimulatedDay: Day,
    typed.StaticDay: StaticDay,
    typed.DayHour: DayHour,
    typed.DayReplicas: DayReplicas,
    typed.Recommendation: DayRecommendation,
    typed.GridPoint: DayGridPoint,
    typed.TracesAnswer: TraceProfile,
    trace_log.Spread: TraceLengths,
    trace_log.HourlyPeriod: TracePeriod,
    trace_log.Bucket: LengthBucketSchema,
    typed.AggregatedAnswer: FleetResponse,
    typed.UnsizedAnswer: FleetResponse,
    typed.DisaggregatedAnswer: FleetResponse,
    typed.MixedAnswer: FleetResponse,
    typed.FleetReplica: FleetReplica,
    typed.PredictedAtPeak: FleetPredicted,
    typed.FleetAutoscaling: FleetAutoscaling,
    typed.RankedOption: FleetOption,
    typed.SizedOption: FleetOption,
    typed.BoundedOption: FleetOption,
    typed.FleetPeriod: FleetPeriod,
    typed.PairPeriod: FleetPeriod,
    typed.FleetRange: FleetUncertainty,
    typed.FleetPool: FleetPool,
    typed.PoolRow: FleetPoolRow,
    typed.AggregatedBeside: FleetAggregated,
    typed.PricesUsed: FleetPrices,
    typed.EnergyDrawn: FleetEnergy,
    typed.OwnershipAnswer: FleetOwnership,
    typed.OwnershipMonth: OwnershipMonth,
    typed.ProcurementAnswer: FleetProcurement,
    typed.ProcurementRates: ProcurementRates,
    typed.ProcurementCommitment: ProcurementCommitment,
    typed.ProcurementPeriod: ProcurementPeriod,
    typed.MixAnswer: FleetMix,
    typed.MixBucket: MixBucket,
    typed.MixPoolAnswer: MixPool,
    typed.MixPoolBucket: MixPoolBucket,
    typed.MixSingleKind: MixSingleKindPlan,
    typed.MixPeriodRow: MixPeriod,
}
