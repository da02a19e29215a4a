"""The answers' shapes, declared once: marshmallow schemas used only to document what the
views render (nothing loads or dumps with them). app.openapi.generator writes each class
below as a component of the same name: `required=True` marks a key every answer carries,
`allow_none=True` a value that may be null, a base class that is itself a component becomes
`allOf` (ThroughputResponse is FitResponse and its own fields), and a private base class
shares field declarations (the fleet's sizes, an engine's figures) without a component.
Nested schemas named by string that are not classes here are request components
(`PeakTflops`, `MigProfile`, `CalibrationPoint`: the very schemas the writes load with).
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

BASES = ("datasheet", "calibrated", "calibrated-nearest")
PLAN_BASES = ("datasheet", "measured", "calibrated", "calibrated-nearest")
BOUND_BY = ("tpot_slo", "ttft_slo", "kv_capacity", "max_batched_tokens", "max_num_seqs", "measured")
BOUNDS = ("memory", "compute")


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


class PlanCalibration(Schema):
    id = fields.Integer(required=True)
    model = fields.String(required=True)
    match = fields.String(required=True, validate=validate.OneOf(("exact", "nearest")))
    point_count = fields.Integer(required=True)
    mape_percent = fields.Float(required=True, allow_none=True)
    engine = fields.Nested("CalibrationEngine", required=True)
    tensor_parallel = fields.Integer(required=True)
    created_at = fields.String(required=True, metadata={"format": "date-time"})
    memory_efficiency = fields.Float(required=True, allow_none=True)
    compute_efficiency = fields.Float(required=True, allow_none=True)
    memory_overhead_gb = fields.Float(required=True, allow_none=True)
    fields_used = fields.List(
        fields.String(validate=validate.OneOf(("memory_efficiency", "compute_efficiency", "memory_overhead_gb"))),
        required=True,
    )


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
    weights_bytes = fields.Integer(required=True)
    kv_bytes_per_token = fields.Integer(required=True)
    kv_bytes_per_sequence = fields.Integer(required=True)
    usable_bytes = fields.Integer(required=True)
    kv_budget_bytes = fields.Integer(required=True)
    kv_capacity_tokens = fields.Integer(required=True)
    max_concurrency = fields.Integer(required=True)
    concurrency = fields.Integer(required=True)
    kv_bytes_at_concurrency = fields.Integer(required=True)
    memory_used_bytes = fields.Integer(required=True)
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


class ContinuousBatching(Schema):
    max_batched_tokens = fields.Integer(required=True)
    time_per_token_ms = fields.Float(required=True, allow_none=True)
    ttft_ms = fields.Float(required=True, allow_none=True)
    tokens_per_s = fields.Float(required=True, allow_none=True)
    requests_per_s = fields.Float(required=True, allow_none=True)
    chunks_per_prompt = fields.Integer(required=True)
    decode_step_ms = fields.Float(required=True, allow_none=True)
    mixed_step_ms = fields.Float(required=True, allow_none=True)
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


class SweepRow(Schema):
    concurrency = fields.Integer(required=True)
    time_per_token_ms = fields.Float(required=True, allow_none=True)
    tokens_per_s = fields.Float(required=True, allow_none=True)
    tokens_per_s_per_user = fields.Float(required=True, allow_none=True)
    decode_bound = fields.String(required=True, validate=validate.OneOf(BOUNDS))
    memory_ms = fields.Float(required=True, allow_none=True)
    compute_ms = fields.Float(required=True, allow_none=True)
    communication_ms = fields.Float(required=True, allow_none=True)
    expert_fraction = fields.Float(required=True)
    ttft_ms = fields.Float(required=True, allow_none=True)
    request_latency_ms = fields.Float(required=True, allow_none=True)
    effective_tokens_per_s = fields.Float(required=True, allow_none=True)
    cost_per_million_output_tokens_usd = fields.Float(required=True, allow_none=True)
    fits = fields.Boolean(required=True)
    continuous_batching_time_per_token_ms = fields.Float(required=True, allow_none=True)
    continuous_batching_ttft_ms = fields.Float(required=True, allow_none=True)
    continuous_batching_tokens_per_s = fields.Float(required=True, allow_none=True)


class ThroughputResponse(FitResponse):
    time_per_token_ms = fields.Float(required=True, allow_none=True)
    tokens_per_s = fields.Float(required=True, allow_none=True)
    tokens_per_s_per_user = fields.Float(required=True, allow_none=True)
    decode_bound = fields.String(required=True, validate=validate.OneOf(BOUNDS))
    decode_memory_ms = fields.Float(required=True, allow_none=True)
    decode_compute_ms = fields.Float(required=True, allow_none=True)
    weight_bytes_per_step = fields.Integer(required=True)
    kv_bytes_per_step = fields.Integer(required=True)
    flops_per_step = fields.Float(required=True, allow_none=True)
    expert_fraction = fields.Float(required=True)
    communication_ms = fields.Float(required=True, allow_none=True)
    ttft_ms = fields.Float(required=True, allow_none=True)
    prefill_bound = fields.String(required=True, validate=validate.OneOf(BOUNDS))
    prefill_compute_ms = fields.Float(required=True, allow_none=True)
    prefill_memory_ms = fields.Float(required=True, allow_none=True)
    request_latency_ms = fields.Float(required=True, allow_none=True)
    effective_tokens_per_s = fields.Float(required=True, allow_none=True)
    crossover_concurrency = fields.Integer(required=True, allow_none=True)
    arithmetic_intensity = fields.Float(required=True, allow_none=True)
    ridge_flops_per_byte = fields.Float(required=True, allow_none=True)
    compute_precision = fields.String(required=True)
    peak_tflops = fields.Float(required=True)
    memory_bandwidth_tb_per_s = fields.Float(required=True)
    memory_efficiency = fields.Float(required=True)
    compute_efficiency = fields.Float(required=True)
    context_tokens = fields.Float(required=True)
    price_per_gpu_hour_usd = fields.Float(required=True, allow_none=True)
    cost_per_million_output_tokens_usd = fields.Float(required=True, allow_none=True)
    cost_per_million_output_tokens_decode_only_usd = fields.Float(required=True, allow_none=True)
    continuous_batching = fields.Nested("ContinuousBatching", required=True, allow_none=True)
    sweep = fields.List(fields.Nested("SweepRow"), required=True)
    basis = fields.String(required=True, validate=validate.OneOf(BASES))
    leaves_out = fields.String(required=True)


class CostResponse(Schema):
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
    engine = fields.String(allow_none=True)


class RooflineResponse(Schema):
    m = fields.Integer(required=True)
    k = fields.Integer(required=True)
    n = fields.Integer(required=True)
    flops = fields.Float(required=True, allow_none=True)
    bytes_moved = fields.Float(required=True, allow_none=True)
    arithmetic_intensity = fields.Float(required=True, allow_none=True)
    ridge_flops_per_byte = fields.Float(required=True, allow_none=True)
    attainable_tflops = fields.Float(required=True, allow_none=True)
    percent_of_peak = fields.Float(required=True, allow_none=True)
    time_us = fields.Float(required=True, allow_none=True)
    bound = fields.String(required=True, validate=validate.OneOf(BOUNDS))


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

    return Sized


class FleetReplica(Schema):
    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    gpus = fields.Integer(required=True)
    tensor_parallel = fields.Integer(required=True)
    weight_precision = fields.String(required=True)
    kv_precision = fields.String(required=True)
    concurrency = fields.Integer(required=True)
    max_concurrency = fields.Integer(required=True)
    tokens_per_s = fields.Float(required=True, allow_none=True)
    ttft_ms = fields.Float(required=True, allow_none=True)
    time_per_token_ms = fields.Float(required=True, allow_none=True)
    bound_by = fields.String(
        required=True,
        validate=validate.OneOf(BOUND_BY),
    )
    meets_slo = fields.Boolean(required=True)


class FleetAutoscaling(Schema):
    min_replicas = fields.Integer(required=True)
    max_replicas = fields.Integer(required=True)
    target_in_flight_per_replica = fields.Integer(required=True)
    max_in_flight_per_replica = fields.Integer(required=True)
    cold_start_s = fields.Float(required=True, allow_none=True)
    queue_metric = fields.String(required=True)


class FleetOption(_sized(required=False)):  # type: ignore[misc]
    rank = fields.Integer(required=True, allow_none=True)
    gpu = fields.String(required=True)
    mig_profile = fields.String(required=True, allow_none=True)
    tensor_parallel = fields.Integer(required=True, allow_none=True)
    weight_precision = fields.String(required=True, allow_none=True)
    eligible = fields.Boolean(required=True)
    why = fields.String(required=True)
    concurrency = fields.Integer()
    tokens_per_s = fields.Float(allow_none=True)
    time_per_token_ms = fields.Float(allow_none=True)
    ttft_ms = fields.Float(allow_none=True)
    bound_by = fields.String(validate=validate.OneOf(BOUND_BY))


class FleetPeriod(_sized(required=True)):  # type: ignore[misc]
    period = fields.String(required=True)
    requests_per_day = fields.Float(required=True)
    peak_to_average = fields.Float(required=True)
    average_tokens_per_s = fields.Float(required=True, allow_none=True)
    peak_tokens_per_s = fields.Float(required=True, allow_none=True)
    min_replicas = fields.Integer(required=True)
    max_replicas = fields.Integer(required=True)


class FleetResponse(_sized(required=False), _EngineFigures):  # type: ignore[misc]
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
    basis = fields.String(required=True, validate=validate.OneOf(PLAN_BASES))
    calibration = fields.Nested("PlanCalibration", required=True, allow_none=True)
    leaves_out = fields.String()
    warnings = fields.List(fields.String())
    options = fields.List(fields.Nested("FleetOption"))
    options_total = fields.Integer()
    alternatives = fields.List(fields.Nested("FleetOption"))
    periods = fields.List(fields.Nested("FleetPeriod"))
    engine = fields.String()


class Model(Schema):
    slug = fields.String(required=True)
    name = fields.String(required=True)
    family = fields.String(required=True, allow_none=True)
    hf_repo = fields.String(required=True, allow_none=True)
    params_total = fields.Integer(required=True)
    params_active = fields.Integer(required=True, allow_none=True)
    layers = fields.Integer(required=True)
    hidden_size = fields.Integer(required=True)
    attention_heads = fields.Integer(required=True)
    kv_heads = fields.Integer(required=True)
    head_dim = fields.Integer(required=True)
    attention = fields.String(required=True, validate=validate.OneOf(("mha", "gqa", "mla")))
    kv_lora_rank = fields.Integer(required=True, allow_none=True)
    qk_rope_head_dim = fields.Integer(required=True, allow_none=True)
    sliding_window = fields.Integer(required=True, allow_none=True)
    sliding_window_layers = fields.Integer(required=True)
    experts = fields.Integer(required=True, allow_none=True)
    experts_per_token = fields.Integer(required=True, allow_none=True)
    shared_experts = fields.Integer(required=True, allow_none=True)
    expert_params = fields.Integer(required=True, allow_none=True)
    vocab_size = fields.Integer(required=True, allow_none=True)
    intermediate_size = fields.Integer(required=True, allow_none=True)
    moe_intermediate_size = fields.Integer(required=True, allow_none=True)
    tie_word_embeddings = fields.Boolean(required=True)
    quantized_components = fields.List(fields.String(), required=True, allow_none=True)
    native_precision = fields.String(required=True, allow_none=True)
    max_context = fields.Integer(required=True, allow_none=True)
    license = fields.String(required=True, allow_none=True)
    source = fields.String(required=True)
    notes = fields.String(required=True, allow_none=True)
    version = fields.Integer(required=True)


class Gpu(Schema):
    slug = fields.String(required=True)
    name = fields.String(required=True)
    vendor = fields.String(required=True)
    architecture = fields.String(required=True, allow_none=True)
    form_factor = fields.String(required=True, allow_none=True)
    memory_gb = fields.Float(required=True, allow_none=True)
    memory_visible_gib = fields.Float(required=True, allow_none=True)
    memory_bandwidth_tb_per_s = fields.Float(required=True, allow_none=True)
    peak_tflops = fields.Nested("PeakTflops", required=True)
    native_precisions = fields.List(fields.String(), required=True, allow_none=True)
    interconnect = fields.Nested("Interconnect", required=True)
    gpus_per_node = fields.Integer(required=True)
    host_cpu_cores = fields.Integer(required=True, allow_none=True)
    hourly_price_usd = fields.Float(required=True, allow_none=True)
    price_date = fields.String(required=True, allow_none=True)
    mig_profiles = fields.List(fields.Nested("MigProfile"), required=True)
    confidence = fields.String(
        required=True,
        allow_none=True,
        validate=validate.OneOf(("primary", "vendor-transcribed", "secondary", "derived")),
    )
    source = fields.String(required=True)
    notes = fields.String(required=True, allow_none=True)
    version = fields.Integer(required=True)


class KernelEfficiency(Schema):
    architecture = fields.String(required=True)
    memory = fields.Float(required=True)
    compute = fields.Float(required=True)
    moe_memory = fields.Float(required=True)


class EngineUncertainty(Schema):
    time_per_token = fields.List(fields.Float(), required=True, validate=validate.Length(min=2, max=2))
    ttft = fields.List(fields.Float(), required=True, validate=validate.Length(min=2, max=2))
    tokens_per_s = fields.List(fields.Float(), required=True, validate=validate.Length(min=2, max=2))
    kv_capacity_tokens = fields.List(fields.Float(), required=True, validate=validate.Length(min=2, max=2))
    rows = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    unseen_widening = fields.Float(required=True)


class Engine(Schema):
    name = fields.String(required=True)
    display_name = fields.String(required=True)
    engine_version = fields.String(required=True)
    kv_rule = fields.String(
        required=True, validate=validate.OneOf(("util_of_visible", "static_fraction", "fraction_of_free"))
    )
    gpu_memory_utilization = fields.Float(required=True)
    max_batched_tokens = fields.Integer(required=True)
    max_num_seqs = fields.Integer(required=True)
    block_size = fields.Integer(required=True)
    large_gpu_gib = fields.Float(required=True, allow_none=True)
    max_batched_tokens_large_gpu = fields.Integer(required=True, allow_none=True)
    max_num_seqs_large_gpu = fields.Integer(required=True, allow_none=True)
    activation_bytes_per_token_hidden = fields.Float(required=True)
    activation_bytes_per_token_expert_hidden = fields.Float(required=True)
    logits_bytes_per_vocab_entry = fields.Float(required=True)
    non_torch_gib = fields.Float(required=True)
    non_torch_gib_per_extra_rank = fields.Float(required=True)
    cuda_graph_gib = fields.Float(required=True)
    cuda_graph_in_budget = fields.Boolean(required=True)
    engine_buffers_gib = fields.Float(required=True)
    step_overhead_ms = fields.Float(required=True)
    layer_overhead_us = fields.Float(required=True)
    ttft_overhead_ms = fields.Float(required=True)
    efficiencies = fields.List(fields.Nested("KernelEfficiency"), required=True)
    uncertainty = fields.Nested("EngineUncertainty", required=True)
    fitted_on = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    source = fields.String(required=True)
    notes = fields.String(required=True, allow_none=True)
    version = fields.Integer(required=True)


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
    SweepRow,
    CostResponse,
    RooflineResponse,
    FleetResponse,
    FleetReplica,
    FleetAutoscaling,
    FleetOption,
    FleetPeriod,
    Model,
    Gpu,
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
