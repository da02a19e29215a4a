"""One replica's answers: /v1/fit, /v1/throughput, /v1/cost and /v1/roofline.

Each service resolves the request's catalog names, puts in the calibration that applies,
plans with the sizing core and builds the whole answer (figures, engine settings, error bars,
basis and warnings) in one go.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.sizing import cost as cost_mod
from app.sizing import engine as engine_mod
from app.sizing.errors import MissingFigure
from app.sizing.plan import (
    ENGINE_LEAVES_OUT,
    GIB,
    LEAVES_OUT,
    MS,
    FitPlan,
    PlanInputs,
    Point,
    ThroughputPlan,
    plan_fit,
    plan_throughput,
)
from app.sizing.precision import bytes_per_param, compute_peak_tflops, peak_key
from app.sizing.specs import MLA, GpuSpec, ModelSpec
from app.sizing.speculation import (
    Speculation,
    SpeculativeStep,
    draft_kv_bytes_per_token,
    draft_weights_bytes,
    expected_tokens_per_step,
)
from app.sizing.timing import gemm_roofline

from .answers import (
    ContinuousBatching,
    CostAnswer,
    EngineFigures,
    FitAnswer,
    MemoryPlan,
    RooflineAnswer,
    SpeculationPlanned,
    SpeculativeFigures,
    SweepRow,
    ThroughputAnswer,
    Uncertainty,
)
from .calibration.basis import MEMORY_ONLY, Applied, apply, basis
from .context import Context
from .errors import InvalidRequest, UnknownResource
from .requests import CostRequest, PlanRequest, RooflineRequest


def with_engine(context: Context, engine: str | None, inputs: PlanInputs) -> PlanInputs:
    """The request's typed inputs with its engine profile from the catalog (ideal: none) and
    its speculative draft model's spec."""
    return replace(inputs, engine=context.engine(engine), speculative=with_draft(context, inputs))


def with_draft(context: Context, inputs: PlanInputs) -> Speculation | None:
    """`speculative.draft_model` found in the catalog (404 naming the field when it is not)."""
    spec = inputs.speculative
    if spec is None or spec.draft_model is None:
        return spec
    try:
        draft, _ = context.model(spec.draft_model)
    except UnknownResource as exc:
        message = f"unknown model {spec.draft_model!r}"
        raise UnknownResource(exc.detail, {"speculative.draft_model": [message]}) from None
    return replace(spec, draft=draft)


def _gib(nbytes: float | None) -> float | None:
    return None if nbytes is None else nbytes / GIB


def engine_figures(plan: FitPlan) -> EngineFigures:
    """What an engine's memory rule ran with: the settings and its reservations per GPU."""
    inputs, reserved = plan.inputs, plan.reservations
    engine = plan.engine
    return EngineFigures(
        engine=engine_mod.IDEAL if engine is None else engine.name,
        engine_version=None if engine is None else engine.version,
        gpu_memory_utilization=inputs.gpu_memory_utilization,
        max_batched_tokens=inputs.max_batched_tokens,
        max_num_seqs=inputs.max_num_seqs,
        block_size=1 if engine is None else engine.block_size,
        memory_visible_gib=plan.visible_gib,
        weights_bytes_per_gpu=round(plan.result.weights_bytes / plan.gpus),
        weights_by_component_bytes=(
            None
            if plan.weights_by_component is None
            else {name: round(value) for name, value in plan.weights_by_component.items()}
        ),
        activation_peak_gib_per_gpu=None if reserved is None else _gib(reserved.activation_bytes),
        non_torch_gib_per_gpu=None if reserved is None else _gib(reserved.non_torch_bytes),
        cuda_graph_gib_per_gpu=None if reserved is None else _gib(reserved.cuda_graph_bytes),
        kv_budget_gib_per_gpu=max(0.0, plan.result.kv_budget_bytes) / plan.gpus / GIB,
        expert_parallel=inputs.expert_parallel,
    )


def uncertainty(
    plan: FitPlan, predicted: dict[str, float | None], mape: float | None, applies_to: str = "fit"
) -> Uncertainty:
    """Ranges from the engine's training residuals (or the calibration's), and which block of
    the answer's figures they bound."""
    ranges, basis_text = _uncertainty(plan, predicted, mape)
    return Uncertainty(ranges, basis_text, None if ranges is None else applies_to)


def _uncertainty(
    plan: FitPlan, predicted: dict[str, float | None], mape: float | None
) -> tuple[dict[str, list[float] | None] | None, str]:
    if mape is not None:
        return engine_mod.residual_ranges(predicted, mape), "calibration"
    engine = plan.engine
    if engine is None:
        return None, "engine=ideal: a lower bound, no error bars"
    ranges, notes = engine_mod.uncertainty_ranges(
        engine,
        predicted,
        moe=plan.model.is_moe,
        architecture=plan.target.gpu.architecture,
        mla=plan.model.attention == MLA,
    )
    basis_text = (
        f"10th-90th percentile of measured/predicted on {engine.name}'s training rows, each predicted by "
        "constants fitted without its publication's rows"
    )
    return ranges, "; ".join([basis_text, *notes])


def memory_plan(plan: FitPlan, model_label: str, gpu_label: str, concurrency: int) -> MemoryPlan:
    """What a fit answer and a throughput answer share: the memory plan."""
    r = plan.result
    target = plan.target
    host_cores = target.gpu.host_cpu_cores
    spec = plan.inputs.speculative
    return MemoryPlan(
        model=model_label,
        gpu=gpu_label,
        mig_profile=target.mig_profile.name if target.mig_profile else None,
        weight_precision=plan.weight_precision,
        precision_native=plan.precision_native,
        kv_precision=plan.kv_precision,
        tensor_parallel=plan.tensor_parallel,
        gpus=plan.gpus,
        valid_tensor_parallel=tuple(plan.valid_tensor_parallel),
        min_gpus_to_fit=plan.min_gpus_to_fit,
        rough_gpus=plan.rough_gpus,
        weights_bytes=r.weights_bytes,
        kv_bytes_per_token=r.kv_bytes_per_token,
        kv_bytes_per_sequence=r.kv_bytes_per_sequence,
        # A shortfall is fits_weights false, never a negative room.
        usable_bytes=max(0.0, r.usable_bytes),
        kv_budget_bytes=max(0.0, r.kv_budget_bytes),
        kv_capacity_tokens=r.kv_capacity_tokens,
        max_concurrency=r.max_concurrency,
        concurrency=concurrency,
        kv_bytes_at_concurrency=r.kv_bytes_at_concurrency,
        shared_prefix_tokens=r.shared_prefix_tokens,
        shared_prefix_kv_bytes=r.shared_prefix_kv_bytes,
        kv_bytes_saved=r.kv_bytes_saved,
        draft_weights_bytes=None if spec is None else draft_weights_bytes(spec, plan.model, plan.weight_precision),
        draft_kv_bytes_per_token=(
            None
            if spec is None
            else draft_kv_bytes_per_token(spec, plan.model, plan.kv_precision, plan.tensor_parallel)
        ),
        memory_used_bytes=r.memory_used_bytes,
        fits_weights=r.fits_weights,
        fits=r.fits,
        memory_gb_per_gpu=target.gpu.memory_gb,
        host_cpu_cores=None if host_cores is None else host_cores * plan.gpus,
    )


def _cost(plan: ThroughputPlan, tokens_per_s: float) -> float | None:
    return plan.cost_per_million(tokens_per_s)


def _ms(seconds: float) -> float:
    return seconds * MS


# What the steady state's TTFT holds of waiting, under engine=ideal and under an engine.
QUEUEING_IDEAL = "excluded"
QUEUEING_ENGINE = (
    "prefill contention included (the step in flight, and the others' prompts as M/D/1); "
    "waiting for a free slot excluded"
)


def _steady(point: Point, max_batched_tokens: int, engine: bool) -> ContinuousBatching | None:
    s = point.steady
    if s is None:
        return None
    return ContinuousBatching(
        max_batched_tokens=max_batched_tokens,
        time_per_token_s=s.time_per_token_s,
        ttft_s=s.ttft_s,
        tokens_per_s=s.tokens_per_s,
        requests_per_s=s.requests_per_s,
        chunks_per_prompt=s.chunks_per_prompt,
        decode_step_s=s.decode_step_s,
        mixed_step_s=s.mixed_step_s,
        queueing=QUEUEING_ENGINE if engine else QUEUEING_IDEAL,
    )


def _speculation_settings(spec: Speculation) -> dict[str, Any]:
    """The speculation planned, defaults filled in, and the tokens a verification step finishes."""
    return {
        "method": spec.method,
        "num_speculative_tokens": spec.num_speculative_tokens,
        "acceptance_rate": spec.acceptance_rate,
        "draft_model": spec.draft_model,
        "tokens_per_step": expected_tokens_per_step(spec.acceptance_rate, spec.num_speculative_tokens),
    }


def speculative_figures(spec: Speculation | None, step: SpeculativeStep | None) -> SpeculativeFigures | None:
    """`speculative`: the speculation planned, what a verification step finishes and costs,
    and its speedup over the plain decode step at this batch."""
    if spec is None or step is None:
        return None
    return SpeculativeFigures(
        **_speculation_settings(spec),
        draft_s=step.draft_s,
        verify_s=step.verify_s,
        plain_step_s=step.plain_step_s,
        time_per_token_s=step.time_per_token_s,
        speedup=step.speedup,
    )


def speculation_planned(spec: Speculation | None, asked: Speculation | None = None) -> SpeculationPlanned | None:
    """`speculative` on an answer under arrivals: the speculation planned and `used`, whether
    the plan runs it (under `speculative.auto` a fleet search may leave it off). None when
    not asked."""
    shown = spec or asked
    if shown is None:
        return None
    return SpeculationPlanned(**_speculation_settings(shown), auto=shown.auto, used=spec is not None)


def sweep_row(plan: ThroughputPlan, point: Point) -> SweepRow:
    d = point.decode
    steady = point.steady
    return SweepRow(
        concurrency=point.concurrency,
        time_per_token_s=d.time_s,
        tokens_per_s=point.concurrency / d.time_s,
        tokens_per_s_per_user=1 / d.time_s,
        decode_bound=d.bound,
        decode_memory_s=d.memory_s,
        decode_compute_s=d.compute_s,
        communication_s=d.communication_s,
        expert_fraction=d.expert_fraction,
        ttft_s=point.prefill.time_s,
        request_latency_s=point.request_latency_s,
        effective_tokens_per_s=point.effective_tokens_per_s,
        cost_per_million_output_tokens_usd=_cost(plan, point.effective_tokens_per_s),
        fits=point.concurrency <= plan.fit.result.max_concurrency,
        continuous_batching_time_per_token_s=None if steady is None else steady.time_per_token_s,
        continuous_batching_ttft_s=None if steady is None else steady.ttft_s,
        continuous_batching_tokens_per_s=None if steady is None else steady.tokens_per_s,
        speculative_speedup=None if point.speculative is None else point.speculative.speedup,
    )


CONTINUOUS_BATCHING = "continuous_batching"
LAB = "lab"


def throughput_predictions(plan: ThroughputPlan) -> tuple[dict[str, float | None], str]:
    """The figures error bars are given for: the continuously batched ones where the steady
    state exists (what engines run, and what the training rows were compared with), else the
    lab's all-at-once figures."""
    point = plan.point
    steady = point.steady
    if steady is None:
        return {
            "time_per_token_ms": _ms(point.decode.time_s),
            "ttft_ms": _ms(point.prefill.time_s),
            "tokens_per_s": point.concurrency / point.decode.time_s,
            "kv_capacity_tokens": plan.fit.result.kv_capacity_tokens,
        }, LAB
    return {
        "time_per_token_ms": _ms(steady.time_per_token_s),
        "ttft_ms": _ms(steady.ttft_s),
        "tokens_per_s": steady.tokens_per_s,
        "kv_capacity_tokens": plan.fit.result.kv_capacity_tokens,
    }, CONTINUOUS_BATCHING


def throughput_answer(
    plan: ThroughputPlan, model_label: str, gpu_label: str, applied: Applied, notes: tuple[str, ...] = ()
) -> ThroughputAnswer:
    """The whole /v1/throughput answer for a plan (the lab's batch and continuous batching)."""
    point = plan.point
    budget = plan.fit.inputs.max_batched_tokens
    assert budget is not None
    predicted, block = throughput_predictions(plan)
    d, p = point.decode, point.prefill
    decode_tokens_per_s = point.concurrency / d.time_s
    return ThroughputAnswer(
        memory=memory_plan(plan.fit, model_label, gpu_label, point.concurrency),
        engine_figures=engine_figures(plan.fit),
        time_per_token_s=d.time_s,
        tokens_per_s=decode_tokens_per_s,
        tokens_per_s_per_user=1 / d.time_s,
        decode_bound=d.bound,
        decode_memory_s=d.memory_s,
        decode_compute_s=d.compute_s,
        weight_bytes_per_step=d.weight_bytes,
        kv_bytes_per_step=d.kv_bytes,
        flops_per_step=d.flops,
        expert_fraction=d.expert_fraction,
        communication_s=d.communication_s,
        ttft_s=p.time_s,
        prefill_tokens_computed=plan.work.computed_prompt_tokens,
        prefill_bound=p.bound,
        prefill_compute_s=p.compute_s,
        prefill_memory_s=p.memory_s,
        request_latency_s=point.request_latency_s,
        effective_tokens_per_s=point.effective_tokens_per_s,
        crossover_concurrency=plan.crossover_concurrency,
        arithmetic_intensity=d.arithmetic_intensity,
        ridge_flops_per_byte=plan.hardware.ridge_flops_per_byte,
        compute_precision=plan.compute_precision,
        peak_tflops=plan.peak_tflops,
        memory_bandwidth_bytes_per_s=plan.hardware.bandwidth_bytes_per_s,
        memory_efficiency=plan.hardware.memory_efficiency,
        compute_efficiency=plan.hardware.compute_efficiency,
        context_tokens=plan.context_tokens,
        price_per_gpu_hour_usd=plan.price_per_gpu_hour_usd,
        cost_per_million_output_tokens_usd=_cost(plan, point.effective_tokens_per_s),
        cost_per_million_output_tokens_decode_only_usd=_cost(plan, decode_tokens_per_s),
        continuous_batching=_steady(point, budget, plan.hardware.tpot_excludes_own_prefill),
        speculative=speculative_figures(plan.fit.inputs.speculative, point.speculative),
        sweep=tuple(sweep_row(plan, s) for s in plan.sweep),
        basis=basis(applied),
        leaves_out=LEAVES_OUT if plan.fit.engine is None else ENGINE_LEAVES_OUT,
        ranges=uncertainty(plan.fit, predicted, applied.mape_percent, applies_to=block),
        warnings=(*plan.warnings, *notes, *applied.notes(plan.fit.tensor_parallel, plan.fit.kv_precision)),
        calibration=applied.used(),
    )


def fit(request: PlanRequest, context: Context) -> FitAnswer:
    """Do the weights and the KV cache fit, and for how many concurrent conversations?"""
    model, model_label = context.model(request.model)
    gpu, gpu_label = context.gpu(request.gpu)
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, request.gpu, inputs, request.given, MEMORY_ONLY)
    plan = plan_fit(model, gpu, applied.inputs)
    predicted: dict[str, float | None] = {"kv_capacity_tokens": plan.result.kv_capacity_tokens}
    return FitAnswer(
        memory=memory_plan(plan, model_label, gpu_label, request.inputs.concurrency),
        engine_figures=engine_figures(plan),
        warnings=(*plan.warnings, *context.notes, *applied.notes(plan.tensor_parallel, plan.kv_precision)),
        ranges=uncertainty(plan, predicted, None),
        basis=basis(applied),
        calibration=applied.used(),
    )


def throughput(request: PlanRequest, context: Context) -> ThroughputAnswer:
    """Time per token, TTFT, tokens/s and what bounds them; one row per sweep concurrency."""
    model, model_label = context.model(request.model)
    gpu, gpu_label = context.gpu(request.gpu)
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, request.gpu, inputs, request.given)
    plan = plan_throughput(model, gpu, applied.inputs)
    return throughput_answer(plan, model_label, gpu_label, applied, context.notes)


NO_PRICE = "no hourly price: the GPU has none in the catalog; pass price_per_gpu_hour_usd"


def cost(request: CostRequest, context: Context) -> CostAnswer:
    """Cost per million output tokens and per month, from tokens/s or from a throughput plan.
    The price is the request's, else the throughput plan's, else the catalog GPU's."""
    gpu_spec = None if request.gpu is None else context.gpu(request.gpu)[0]
    tokens_per_s, gpus = request.tokens_per_s, request.gpus
    tokens_basis = "given" if tokens_per_s is not None else None
    price = request.inputs.price_per_gpu_hour_usd
    applied = None
    if tokens_per_s is None and request.model is not None:
        assert gpu_spec is not None and request.gpu is not None  # the schema requires a GPU then
        model, _ = context.model(request.model)
        inputs = with_engine(context, request.engine, request.inputs)
        applied = apply(context, request.model, request.gpu, inputs, request.given)
        plan = plan_throughput(model, gpu_spec, applied.inputs)
        if not plan.fit.result.fits_weights:
            raise _no_plan(model, gpu_spec, plan.fit, request.inputs.tensor_parallel is not None)
        tokens_per_s = plan.point.effective_tokens_per_s
        gpus = gpus or plan.work.tp
        tokens_basis = "throughput_plan_prefill_included"
        price = plan.price_per_gpu_hour_usd if price is None else price
    if price is None:
        price = gpu_spec.hourly_price_usd if gpu_spec is not None else None
    if price is None:
        raise InvalidRequest(NO_PRICE, {"price_per_gpu_hour_usd": ["required: the GPU has no catalog price"]})
    gpus = gpus or 1
    result = cost_mod.cost(price, gpus, tokens_per_s or 0.0, request.hours_per_month, request.utilization)
    return CostAnswer(
        # The engine the tokens/s were derived under (none is needed for a given rate).
        engine=context.engine_name(request.engine) if tokens_basis != "given" else None,
        price_per_gpu_hour_usd=price,
        gpus=gpus,
        tokens_per_s=tokens_per_s,
        tokens_per_s_basis=tokens_basis,
        utilization=request.utilization,
        hours_per_month=request.hours_per_month,
        hourly_cost_usd=result.hourly_cost_usd,
        monthly_cost_usd=result.monthly_cost_usd,
        cost_per_million_output_tokens_usd=result.cost_per_million_output_tokens_usd,
        basis=basis(applied, measured=tokens_basis == "given"),
        calibration=None if applied is None else applied.used(),
    )


def _no_plan(model: ModelSpec, gpu: GpuSpec, fitted: FitPlan, tp_given: bool) -> InvalidRequest:
    """No price without a plan: the weights do not fit the shape (/v1/fit's computation), so
    there is nothing to price. The 422 names the shape's fields and the smallest tensor-parallel
    size of this GPU that holds the weights, when one does."""
    result, tp = fitted.result, fitted.tensor_parallel
    holds = next(
        (
            t
            for t in fitted.valid_tensor_parallel
            if t > tp and plan_fit(model, gpu, replace(fitted.inputs, tensor_parallel=t)).result.fits_weights
        ),
        None,
    )
    detail = (
        f"the weights ({result.weights_bytes / 1e9:.1f} GB at {fitted.weight_precision}) do not fit the "
        f"{max(0.0, result.usable_bytes) / 1e9:.1f} GB usable on {tp} x {fitted.target.gpu.name}: there is no replica "
        "to price; "
    )
    if holds is not None:
        detail += f"tensor_parallel={holds} is the smallest that holds them (see /v1/fit)"
    else:
        detail += (
            f"no tensor-parallel size of this GPU (up to {fitted.valid_tensor_parallel[-1]}) holds them: a GPU with "
            "more memory, or a smaller weight_precision"
        )
    names = ["gpu", "tensor_parallel"] if tp_given or holds is not None else ["gpu", "weight_precision"]
    return InvalidRequest(detail, {name: [detail] for name in names})


def roofline(request: RooflineRequest, context: Context) -> RooflineAnswer:
    """Arithmetic intensity, attainable FLOP/s and time of one GEMM (seed 004's roofline)."""
    peak, bandwidth = request.peak_tflops, request.memory_bandwidth_tb_per_s
    if request.gpu is not None:
        gpu, _ = context.gpu(request.gpu)
        if peak is None:
            _, peak = compute_peak_tflops(gpu, request.compute_precision, request.weight_precision)
            if peak is None:
                raise MissingFigure(f"gpu.peak_tflops.{peak_key(request.compute_precision)}", "peak TFLOP/s")
        if bandwidth is None:
            bandwidth = gpu.memory_bandwidth_tb_per_s
            if bandwidth is None:
                raise MissingFigure("gpu.memory_bandwidth_tb_per_s", "memory bandwidth")
    assert peak is not None and bandwidth is not None  # the schema requires them without a gpu
    gemm = gemm_roofline(
        request.m,
        request.k,
        request.n,
        peak * 1e12,
        bandwidth * 1e12,
        activation_bytes=bytes_per_param(request.activation_precision),
        weight_bytes=bytes_per_param(request.weight_precision),
    )
    return RooflineAnswer(
        m=request.m,
        k=request.k,
        n=request.n,
        flops=gemm.flops,
        bytes_moved=gemm.bytes_moved,
        arithmetic_intensity=gemm.arithmetic_intensity,
        ridge_flops_per_byte=gemm.ridge_flops_per_byte,
        attainable_flops_per_s=gemm.attainable_flops,
        percent_of_peak=100 * gemm.attainable_flops / (peak * 1e12),
        time_s=gemm.time_s,
        bound=gemm.bound,
    )
