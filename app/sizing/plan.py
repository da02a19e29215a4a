"""One planning question end to end: a model on a GPU (or MIG slice) under a workload.

Glue over the topic modules: resolve the target and the precisions, pick a tensor-parallel
size, then ask memory and timing. Everything a response reports is computed here, so the
HTTP layer only parses and renders.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TypeVar

from . import architectures, memory, speculation, timing
from . import cost as cost_mod
from . import engine as engine_mod
from .engine import EngineProfile
from .errors import MissingFigure, NotFound, SizingError
from .parallelism import mig_target, valid_tensor_parallel
from .precision import AUTO, UnknownPrecision, choose_weight_precision, compute_peak, normalise, peak_key
from .specs import MLA, GpuSpec, MigProfile, ModelSpec
from .vocabulary import KvReadContext

MS = 1e3
GIB = 2**30
T = TypeVar("T")

# Said on every timing answer: what the roofline leaves out.
LEAVES_OUT = (
    "scheduler and kernel-launch overhead, sampling, activations beyond reserved_gb, queueing, "
    "paged-attention savings, prefix-cache hits not given, speculative decoding not given: "
    "estimates are optimistic lower bounds; the efficiencies are where measurements come in"
)

# Said instead under an engine profile: what its fitted constants still leave out.
ENGINE_LEAVES_OUT = (
    "queueing under random arrivals, prefix-cache hits and speculative decoding not given, and software-version "
    "differences (about 10% on latency, 25% on peak throughput); figures are fitted on measured rows "
    "and carry their spread as uncertainty"
)

# Said instead when random arrivals are modelled (/v1/latency, /v1/fleet): queueing is in.
ARRIVALS_LEAVES_OUT = (
    "scheduler and kernel-launch overhead, sampling, activations beyond reserved_gb, prefix-cache hits and "
    "speculative decoding not given (given, its tokens counted one a step: ITL's spread narrower), priority "
    "scheduling and the API server's own queue: lower bounds on time"
)
ENGINE_ARRIVALS_LEAVES_OUT = (
    "prefix-cache hits and speculative decoding not given (given, its tokens counted one a step: ITL's spread "
    "narrower), priority scheduling and the API server's own queue, and software-version differences; request "
    "lengths are drawn from gamma distributions of the given mean and spread"
)


# engine=ideal's knobs (the lab's sliders); an engine profile brings its own.
IDEAL_GPU_MEMORY_UTILIZATION = 0.9
IDEAL_MEMORY_EFFICIENCY = 0.7
IDEAL_COMPUTE_EFFICIENCY = 0.5
IDEAL_MAX_BATCHED_TOKENS = 2048
# Engines compute in the weights' own format where the card runs it (W8A8 FP8 on Hopper).
NATIVE_COMPUTE = "native"
ENGINE_COMPUTE_PRECISION = NATIVE_COMPUTE


@dataclass(frozen=True)
class PlanInputs:
    """The workload and the knobs; defaults are the API's. A None knob takes the
    engine's default (`engine` None is engine=ideal, whose defaults are the lab's)."""

    prompt_tokens: int = 2048
    output_tokens: int = 512
    concurrency: int = 1
    tensor_parallel: int | None = None
    mig_profile: str | None = None
    weight_precision: str | None = None
    kv_precision: str = "bf16"
    gpu_memory_utilization: float | None = None
    # Given, it replaces the engine's own reservations (activations, NCCL, graphs) and the
    # memory is the datasheet's, as a calibration measured it.
    reserved_gb: float | None = None
    memory_efficiency: float | None = None
    compute_efficiency: float | None = None
    compute_precision: str | None = None
    include_communication: bool = True
    price_per_gpu_hour_usd: float | None = None
    max_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    engine: EngineProfile | None = None
    # The replica's weights in bytes, when the checkpoint's real size is known (overrides).
    weights_bytes: float | None = None
    expert_parallel: int | None = None
    # False when a calibration's efficiencies stand in for the engine's timing constants.
    engine_timing: bool = True
    # The decode step reads each sequence's KV at its average context (prompt + output / 2,
    # the lab) or at its full length (prompt + output, seed 004's vram.py).
    kv_read_context: KvReadContext = KvReadContext.AVERAGE
    sweep: tuple[int, ...] = ()
    # Prefix caching: the share of each prompt's tokens found in the cache, and a prefix
    # common to every prompt (a system prompt), held once per replica.
    prefix_cache_hit_rate: float = 0.0
    shared_prefix_tokens: int = 0
    # Speculative decoding (app/sizing/speculation.py); None: off.
    speculative: speculation.Speculation | None = None

    def cached_prompt_tokens(self, block_size: int = 1) -> float:
        """Prompt tokens a request finds in the prefix cache: its hit rate's share, or the
        shared prefix's whole blocks when more; never the last token, whose logits the engine
        computes to sample the first output token."""
        shared = self.shared_prefix_tokens - self.shared_prefix_tokens % block_size
        return min(max(self.prefix_cache_hit_rate * self.prompt_tokens, float(shared)), self.prompt_tokens - 1.0)


@dataclass(frozen=True)
class Target:
    """The hardware one replica GPU stands for: a whole card or a MIG slice of one."""

    gpu: GpuSpec  # already scaled for a slice
    card: GpuSpec
    mig_profile: MigProfile | None


def resolve_target(gpu: GpuSpec, mig_profile: str | None) -> Target:
    if mig_profile is None:
        return Target(gpu, gpu, None)
    for profile in gpu.mig_profiles:
        if profile.name == mig_profile:
            return Target(mig_target(gpu, profile), gpu, profile)
    known = ", ".join(p.name for p in gpu.mig_profiles) or "none"
    raise NotFound("mig_profile", f"{gpu.name} has no MIG profile {mig_profile!r} (profiles: {known})")


def _require(value: float | None, field_name: str, what: str) -> float:
    if value is None:
        raise MissingFigure(field_name, what)
    return value


def _precision(name: str, field_name: str) -> str:
    try:
        return normalise(name)
    except UnknownPrecision:
        raise SizingError(field_name, f"unknown precision {name!r}") from None


@dataclass(frozen=True)
class FitPlan:
    model: ModelSpec
    target: Target
    weight_precision: str
    precision_native: bool
    kv_precision: str
    tensor_parallel: int
    valid_tensor_parallel: list[int]
    min_gpus_to_fit: int | None
    rough_gpus: int
    result: memory.FitResult
    # The request with every default filled in for this engine and GPU.
    inputs: PlanInputs = field(default_factory=PlanInputs)
    # Per GPU, under an engine; None under engine=ideal or a given reserved_gb.
    reservations: engine_mod.Reservations | None = None
    visible_gib: float | None = None
    weights_by_component: dict[str, float] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def gpus(self) -> int:
        return self.tensor_parallel

    @property
    def engine(self) -> EngineProfile | None:
        return self.inputs.engine


def resolve_defaults(inputs: PlanInputs, gpu: GpuSpec) -> PlanInputs:
    """Fill the knobs the request left out: the lab's under engine=ideal, the engine's own
    (which may depend on the card's memory, as vLLM's do) otherwise."""
    engine = inputs.engine
    if engine is None:
        return replace(
            inputs,
            gpu_memory_utilization=_given(inputs.gpu_memory_utilization, IDEAL_GPU_MEMORY_UTILIZATION),
            reserved_gb=_given(inputs.reserved_gb, 0.0),
            memory_efficiency=_given(inputs.memory_efficiency, IDEAL_MEMORY_EFFICIENCY),
            compute_efficiency=_given(inputs.compute_efficiency, IDEAL_COMPUTE_EFFICIENCY),
            max_batched_tokens=_given(inputs.max_batched_tokens, IDEAL_MAX_BATCHED_TOKENS),
        )
    visible = engine_mod.visible_gib(gpu.memory_gb or 0.0, gpu.memory_visible_gib, gpu.architecture, gpu.name)
    efficiency = engine.efficiency(gpu.architecture)
    return replace(
        inputs,
        gpu_memory_utilization=_given(inputs.gpu_memory_utilization, engine.gpu_memory_utilization),
        memory_efficiency=_given(inputs.memory_efficiency, efficiency.memory),
        compute_efficiency=_given(inputs.compute_efficiency, efficiency.compute),
        # A calibration's efficiencies were fitted at the lab's bf16 compute.
        compute_precision=_given(inputs.compute_precision, ENGINE_COMPUTE_PRECISION if inputs.engine_timing else None),
        max_batched_tokens=_given(inputs.max_batched_tokens, engine.default_max_batched_tokens(visible)),
        max_num_seqs=_given(inputs.max_num_seqs, engine.default_max_num_seqs(visible)),
    )


def _given(value: T | None, default: T) -> T:
    return default if value is None else value


def _weights(model: ModelSpec, weight_precision: str, inputs: PlanInputs) -> tuple[float, dict[str, float] | None]:
    """The replica's weights: as given, else the real checkpoint's under an engine
    (16-bit embeddings and ignored layers, block scales), else params x bytes (the seeds')."""
    if inputs.engine is None or inputs.reserved_gb is not None:
        # A given reserved_gb is the datasheet arithmetic a calibration measured against.
        total = memory.weights_bytes(model, weight_precision)
        return (total if inputs.weights_bytes is None else inputs.weights_bytes), None
    quantized = model.quantized_components if _same_format(model, weight_precision) else None
    components = memory.checkpoint_weights_by_component(model, weight_precision, quantized)
    if inputs.weights_bytes is not None:
        scale = inputs.weights_bytes / sum(components.values())
        components = {name: value * scale for name, value in components.items()}
    return sum(components.values()), components


def _same_format(model: ModelSpec, weight_precision: str) -> bool:
    """The checkpoint's own ignore list applies only to the format it was quantized in."""
    if model.native_precision is None:
        return False
    try:
        return normalise(model.native_precision) == weight_precision
    except UnknownPrecision:
        return False


def _fit_on(
    model: ModelSpec,
    target: GpuSpec,
    tp: int,
    weight_precision: str,
    kv_precision: str,
    inputs: PlanInputs,
) -> tuple[memory.FitResult, engine_mod.Reservations | None, dict[str, float] | None]:
    """One tensor-parallel size's fit under the request's engine."""
    assert inputs.gpu_memory_utilization is not None and target.memory_gb is not None
    weights, components = _weights(model, weight_precision, inputs)
    # A speculative drafter's weights sit beside the model's; its KV shares the cache.
    spec = inputs.speculative
    draft_kv = 0.0
    if spec is not None:
        if spec.draft is not None:
            speculation.check_draft(model, spec.draft)
        weights += speculation.draft_weights_bytes(spec, model, weight_precision)
        draft_kv = speculation.draft_kv_bytes_per_token(spec, model, kv_precision, tp)
    engine = inputs.engine
    if engine is None or inputs.reserved_gb is not None:
        # The seeds' arithmetic (and a calibration's, whose overhead is against datasheet GB).
        usable = memory.usable_bytes(target.memory_gb, tp, inputs.gpu_memory_utilization, inputs.reserved_gb or 0.0)
        block = 1 if engine is None else engine.block_size
        result = memory.fit_budget(
            model,
            weights=weights,
            usable=usable,
            gpus=tp,
            kv_precision=kv_precision,
            prompt_tokens=inputs.prompt_tokens,
            output_tokens=inputs.output_tokens,
            concurrency=inputs.concurrency,
            block_size=block,
            shared_prefix_tokens=min(inputs.shared_prefix_tokens, inputs.prompt_tokens),
            draft_kv_bytes_per_token=draft_kv,
        )
        return result, None, components
    assert inputs.max_batched_tokens is not None and inputs.max_num_seqs is not None
    visible_bytes = (
        engine_mod.visible_gib(target.memory_gb, target.memory_visible_gib, target.architecture, target.name) * GIB
    )
    reserved = engine_mod.reservations(
        engine,
        hidden_size=model.hidden_size,
        vocab_size=model.vocab_size,
        experts_per_token=model.experts_per_token if model.is_moe else None,
        tp=tp,
        max_batched_tokens=inputs.max_batched_tokens,
        max_num_seqs=inputs.max_num_seqs,
    )
    kv_per_gpu = engine_mod.kv_budget_bytes_per_gpu(
        engine,
        visible_bytes=visible_bytes,
        weights_bytes_per_gpu=weights / tp,
        reserved=reserved,
        utilization=inputs.gpu_memory_utilization,
    )
    result = memory.fit_budget(
        model,
        weights=weights,
        usable=(kv_per_gpu * tp) + weights,
        gpus=tp,
        kv_precision=kv_precision,
        prompt_tokens=inputs.prompt_tokens,
        output_tokens=inputs.output_tokens,
        concurrency=inputs.concurrency,
        block_size=engine.block_size,
        shared_prefix_tokens=min(inputs.shared_prefix_tokens, inputs.prompt_tokens),
        draft_kv_bytes_per_token=draft_kv,
    )
    return result, reserved, components


def resolve_architecture(gpu: GpuSpec) -> tuple[GpuSpec, str | None]:
    """The GPU with its architecture told from its name where none is given, and what an
    engine's answer says about it (None: a known architecture was given)."""
    if gpu.architecture is not None:
        if architectures.known(gpu.architecture) is not None:
            return gpu, None
        return gpu, (
            f"{gpu.name}: architecture {gpu.architecture!r} is not one the service knows "
            f"({architectures.describe_known()}): engine efficiencies fall back to the default"
        )
    told = architectures.infer_architecture(gpu.name)
    if told is None:
        return gpu, (
            f"{gpu.name}: no architecture given and none told from the name: engine efficiencies fall back "
            "to the default (give gpu.architecture)"
        )
    return replace(gpu, architecture=told), f"architecture {told} told from the name {gpu.name!r}"


def plan_fit(model: ModelSpec, gpu: GpuSpec, inputs: PlanInputs) -> FitPlan:
    """Does it fit, on how many GPUs, and for how many conversations?"""
    gpu, architecture_note = resolve_architecture(gpu)
    target = resolve_target(gpu, inputs.mig_profile)
    memory_gb = _require(target.gpu.memory_gb, "gpu.memory_gb", "GPU memory")
    inputs = resolve_defaults(inputs, target.gpu)
    assert inputs.gpu_memory_utilization is not None
    if inputs.weight_precision is not None and inputs.weight_precision.strip().lower() != AUTO:
        _precision(inputs.weight_precision, "weight_precision")
    if inputs.weight_precision is None and model.native_precision is None:
        raise SizingError(
            "weight_precision", f"{model.name}'s checkpoint precision is not known: pass weight_precision"
        )
    try:
        choice = choose_weight_precision(inputs.weight_precision, model, target.gpu)
    except UnknownPrecision:
        raise SizingError("model.native_precision", f"unknown precision {model.native_precision!r}") from None
    kv_precision = _precision(inputs.kv_precision, "kv_precision")
    if memory.usable_bytes(memory_gb, 1, inputs.gpu_memory_utilization, inputs.reserved_gb or 0.0) <= 0:
        raise SizingError(
            "reserved_gb",
            f"reserved_gb {inputs.reserved_gb} leaves nothing of {memory_gb} GB x "
            f"{inputs.gpu_memory_utilization} on {target.gpu.name}",
        )
    valid = valid_tensor_parallel(model, target.gpu.gpus_per_node)
    fits: dict[int, tuple[memory.FitResult, engine_mod.Reservations | None, dict[str, float] | None]] = {}

    def fit_on(tp: int) -> memory.FitResult:
        # Computed on demand: a ranking asks for one size at a time, most of them small.
        if tp not in fits:
            fits[tp] = _fit_on(model, target.gpu, tp, choice.weight_precision, kv_precision, inputs)
        return fits[tp][0]

    min_gpus = next((tp for tp in valid if fit_on(tp).fits), None)
    if inputs.tensor_parallel is not None:
        if inputs.tensor_parallel not in valid:
            raise SizingError(
                "tensor_parallel",
                f"tensor_parallel {inputs.tensor_parallel} is not valid for {model.name} on "
                f"{target.gpu.name}: valid sizes are {valid} (tp must divide the {model.attention_heads} "
                f"attention heads, tp and the {model.kv_heads} KV heads must divide one another, "
                f"and tp <= {target.gpu.gpus_per_node} GPUs per node)",
            )
        tp = inputs.tensor_parallel
    else:
        # The smallest group that holds the requested concurrency, else the weights alone,
        # else the largest group (and the answer says it does not fit).
        tp = min_gpus or next((t for t in valid if fit_on(t).fits_weights), valid[-1])
    _check_expert_parallel(model, inputs.expert_parallel, tp)
    warnings = list(choice.warnings)
    if inputs.engine is not None and architecture_note is not None:
        warnings.append(architecture_note)
    if inputs.engine is not None:
        warnings.extend(
            engine_mod.coverage_notes(
                inputs.engine, moe=model.is_moe, architecture=target.gpu.architecture, gpu_name=target.gpu.name
            )
        )
        if (kv_note := engine_mod.kv_format_note(inputs.engine, choice.weight_precision, kv_precision)) is not None:
            warnings.append(kv_note)
    if inputs.compute_precision is not None and inputs.compute_precision.strip().lower() == NATIVE_COMPUTE:
        peak_note = compute_peak(target.gpu, inputs.compute_precision, choice.weight_precision).warning
        if peak_note is not None:
            warnings.append(peak_note)
    fit_on(tp)
    result, reserved, components = fits[tp]
    if not result.fits_weights:
        warnings.append(
            f"weights ({result.weights_bytes / 1e9:.1f} GB) do not fit in {result.usable_bytes / 1e9:.1f} GB "
            f"usable on {tp} x {target.gpu.name}"
        )
    elif not result.fits:
        warnings.append(
            f"{inputs.concurrency} concurrent sequences need more KV cache than fits: max_concurrency "
            f"is {result.max_concurrency}"
        )
    if model.max_context and inputs.prompt_tokens + inputs.output_tokens > model.max_context:
        warnings.append(
            f"prompt + output ({inputs.prompt_tokens + inputs.output_tokens} tokens) exceeds the model's "
            f"max_context {model.max_context}"
        )
    visible = None
    if inputs.engine is not None:
        visible = engine_mod.visible_gib(
            memory_gb, target.gpu.memory_visible_gib, target.gpu.architecture, target.gpu.name
        )
        if target.gpu.memory_visible_gib is None:
            warnings.append(
                f"{target.gpu.name}: the memory the driver shows (memory_visible_gib) is not known; assumed "
                f"{visible:.2f} GiB ({architectures.visible_share(target.gpu.architecture, target.gpu.name):g} of "
                f"{memory_gb:g} GB, {architectures.visible_basis(target.gpu.architecture, target.gpu.name)})"
            )
    return FitPlan(
        model=model,
        target=target,
        weight_precision=choice.weight_precision,
        precision_native=choice.native,
        kv_precision=kv_precision,
        tensor_parallel=tp,
        valid_tensor_parallel=valid,
        min_gpus_to_fit=min_gpus,
        rough_gpus=memory.rough_gpus(result.weights_bytes, memory_gb),
        result=result,
        inputs=inputs,
        reservations=reserved,
        visible_gib=visible,
        weights_by_component=components,
        warnings=warnings,
    )


def _check_expert_parallel(model: ModelSpec, ep: int | None, tp: int) -> None:
    if ep is None or ep == 1:
        return
    if not model.is_moe:
        raise SizingError("expert_parallel", f"{model.name} has no experts to spread")
    assert model.experts is not None
    if model.experts % ep:
        raise SizingError("expert_parallel", f"expert_parallel {ep} must divide the {model.experts} experts")
    if ep > tp:
        raise SizingError("expert_parallel", f"expert_parallel {ep} exceeds the replica's {tp} GPUs")


@dataclass(frozen=True)
class Point:
    """Timing at one concurrency."""

    concurrency: int
    decode: timing.Step
    prefill: timing.Step
    steady: timing.SteadyState | None
    output_tokens: int
    # The speculative step the steady state runs, when speculation is on.
    speculative: speculation.SpeculativeStep | None = None

    @property
    def request_latency_s(self) -> float:
        """The lab's latency: this batch's prefill, then every output token (under
        speculation at the speculative time per token, at the steady state's context)."""
        per_token = self.decode.time_s if self.speculative is None else self.speculative.time_per_token_s
        return self.prefill.time_s + self.output_tokens * per_token

    @property
    def effective_tokens_per_s(self) -> float:
        """Output tokens per second with each batch's prefill included (the lab's cost basis)."""
        return self.concurrency * self.output_tokens / self.request_latency_s


@dataclass(frozen=True)
class ThroughputPlan:
    fit: FitPlan
    work: timing.Workload
    hardware: timing.Hardware
    compute_precision: str
    peak_tflops: float
    context_tokens: float
    point: Point
    crossover_concurrency: int | None
    price_per_gpu_hour_usd: float | None
    sweep: list[Point]
    warnings: list[str]

    def cost_per_million(self, tokens_per_s: float) -> float | None:
        if self.price_per_gpu_hour_usd is None:
            return None
        return cost_mod.cost_per_million_tokens_usd(self.price_per_gpu_hour_usd, self.work.tp, tokens_per_s)


@dataclass(frozen=True)
class TimingSetup:
    """A fitted replica made ready for the roofline: workload, hardware, price."""

    work: timing.Workload
    hardware: timing.Hardware
    compute_precision: str
    peak_tflops: float
    context_tokens: float
    price_per_gpu_hour_usd: float | None


def _streamed(components: dict[str, float] | None) -> tuple[float, float] | None:
    """What a step streams of the checkpoint: the dense part, and all the experts."""
    if components is None:
        return None
    experts = components.get(memory.EXPERTS, 0.0)
    dense = sum(v for k, v in components.items() if k not in (memory.EXPERTS, memory.EMBEDDINGS))
    return dense, experts


def matmul_params_per_token(model: ModelSpec) -> tuple[float, float]:
    """Per token, what decode and prefill multiply: no embedding lookup; prefill computes
    logits for the last token only."""
    params = memory.params_by_component(model)
    embeddings = params[memory.EMBEDDINGS]
    lm_head = params[memory.LM_HEAD] or embeddings  # a tied head multiplies the embedding table
    decode = model.active_params - embeddings + (embeddings if params[memory.LM_HEAD] == 0 else 0.0)
    return decode, max(0.0, decode - lm_head)


def prepare_timing(fitted: FitPlan) -> TimingSetup:
    """Refuses (naming the field) when the GPU lacks a figure the timing needs."""
    inputs = fitted.inputs
    target = fitted.target.gpu
    bandwidth = _require(target.memory_bandwidth_tb_per_s, "gpu.memory_bandwidth_tb_per_s", "memory bandwidth")
    chosen = compute_peak(target, inputs.compute_precision, fitted.weight_precision)
    compute_precision = chosen.precision
    peak = _require(
        chosen.tflops, f"gpu.peak_tflops.{peak_key(compute_precision)}", f"{compute_precision} peak TFLOP/s"
    )
    tp = fitted.tensor_parallel
    if tp > 1 and inputs.include_communication:
        _require(
            target.interconnect_bandwidth_gb_per_s, "gpu.interconnect.bandwidth_gb_per_s", "interconnect bandwidth"
        )
        _require(target.interconnect_latency_us, "gpu.interconnect.latency_us", "interconnect latency")
    engine = inputs.engine if inputs.engine_timing else None
    work = timing.Workload(
        fitted.model,
        fitted.weight_precision,
        fitted.kv_precision,
        tp,
        inputs.prompt_tokens,
        inputs.output_tokens,
        # A calibration's efficiencies were fitted on params x bytes: time the same bytes.
        streamed_weight_bytes=_streamed(fitted.weights_by_component) if engine is not None else None,
        matmul_params=matmul_params_per_token(fitted.model) if engine is not None else None,
        expert_parallel=inputs.expert_parallel or 1,
        cached_prompt_tokens=inputs.cached_prompt_tokens(1 if inputs.engine is None else inputs.engine.block_size),
    )
    assert inputs.memory_efficiency is not None and inputs.compute_efficiency is not None
    hardware = timing.Hardware(
        bandwidth_bytes_per_s=bandwidth * 1e12,
        peak_flops=peak * 1e12,
        memory_efficiency=inputs.memory_efficiency,
        compute_efficiency=inputs.compute_efficiency,
        link_gb_per_s=target.interconnect_bandwidth_gb_per_s,
        link_latency_us=target.interconnect_latency_us,
        include_communication=inputs.include_communication,
        step_overhead_s=0.0
        if engine is None
        else engine.step_overhead_s(fitted.model.layers, fitted.model.attention == MLA),
        sequence_overhead_s=0.0 if engine is None else engine.sequence_overhead_us / 1e6,
        collective_latency_s=0.0 if engine is None else engine.collective_latency_us / 1e6,
        expert_overhead_s=0.0 if engine is None else engine.expert_overhead_us / 1e6,
        moe_memory_efficiency=1.0 if engine is None else engine.efficiency(target.architecture).moe_memory,
        tpot_excludes_own_prefill=engine is not None,
        request_overhead_s=0.0 if engine is None else engine.ttft_overhead_ms / 1e3,
    )
    if inputs.kv_read_context == KvReadContext.FULL:
        context = float(inputs.prompt_tokens + inputs.output_tokens)
    else:
        context = inputs.prompt_tokens + inputs.output_tokens / 2
    price = inputs.price_per_gpu_hour_usd
    if price is None:
        price = target.hourly_price_usd
    return TimingSetup(work, hardware, compute_precision, peak, context, price)


def plan_throughput(model: ModelSpec, gpu: GpuSpec, inputs: PlanInputs) -> ThroughputPlan:
    """How fast, what bounds it, and what a token costs, at `inputs.concurrency` and each
    concurrency of the sweep."""
    fitted = plan_fit(model, gpu, inputs)
    setup = prepare_timing(fitted)
    work, hardware = setup.work, setup.hardware
    inputs = fitted.inputs
    assert inputs.max_batched_tokens is not None
    budget = inputs.max_batched_tokens

    spec = inputs.speculative

    def point(concurrency: int) -> Point:
        steady, step = (
            (timing.continuous_batching(work, hardware, concurrency, budget), None)
            if spec is None
            else speculation.steady_state(spec, work, hardware, concurrency, budget)
        )
        return Point(
            concurrency=concurrency,
            decode=timing.decode_step(work, hardware, concurrency, setup.context_tokens),
            prefill=timing.prefill(work, hardware, concurrency),
            steady=steady,
            output_tokens=inputs.output_tokens,
            speculative=step,
        )

    warnings = list(fitted.warnings)
    if setup.price_per_gpu_hour_usd is None:
        warnings.append("no hourly price for this GPU: pass price_per_gpu_hour_usd for costs")
    here = point(inputs.concurrency)
    swept = [point(b) for b in inputs.sweep]
    for at in (here, *swept):
        if at.speculative is not None and at.speculative.speedup < 1:
            warnings.append(
                f"speculative decoding loses at concurrency {at.concurrency}: speedup {at.speculative.speedup:.2f} "
                "(drafting and verifying k + 1 tokens per sequence cost more than the accepted tokens save); "
                "serve this batch without it"
            )
    if here.steady is None:
        warnings.append(
            f"concurrency {inputs.concurrency} fills max_batched_tokens {inputs.max_batched_tokens} with "
            "decodes alone: no prompt can be admitted under continuous batching"
        )
    return ThroughputPlan(
        fit=fitted,
        work=work,
        hardware=hardware,
        compute_precision=setup.compute_precision,
        peak_tflops=setup.peak_tflops,
        context_tokens=setup.context_tokens,
        point=here,
        crossover_concurrency=timing.crossover_concurrency(work, hardware, setup.context_tokens),
        price_per_gpu_hour_usd=setup.price_per_gpu_hour_usd,
        sweep=swept,
        warnings=warnings,
    )
