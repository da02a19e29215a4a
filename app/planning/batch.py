"""/v1/batch: an offline batch on one replica, every request queued at once and run to the
last completion.

What a benchmark's "infinite request rate" burst measures, and what an offline
batch-inference job is: `requests` prompts handed to one replica together. The replica is
/v1/latency's (the same fit, engine profile, calibration and step-time model); the
discrete-event simulator (`simulate.burst`) runs the engine's scheduler over the queue, so
the answer holds what a steady state leaves out: the first wave's prompts prefilled
together, the wait for a seat, and the drain of the longest answers at a small batch.

A run's cost is not its request count alone (a KV cache that thrashes preempts without end,
a sliding-window model walks every decode step), so it is bounded by BATCH_MAX_WORK units of
the simulator's work, about 2 to 6 µs each here: a batch over it is a 422 naming the fields
that make it large, before the run when the sampled lengths already say so.
"""

from __future__ import annotations

from app.sizing import cost as cost_mod
from app.sizing.fleet_plan import Arrivals
from app.sizing.plan import ARRIVALS_LEAVES_OUT, ENGINE_ARRIVALS_LEAVES_OUT, plan_fit
from app.sizing.simulate import BurstResult, WorkLimitExceeded, burst

from .answers import BatchAnswer, Provenance
from .calibration.basis import Applied, apply, basis
from .context import Context
from .errors import InvalidRequest
from .latency import Replica, replica, spread_ms
from .replica import engine_figures, speculation_planned, with_engine
from .requests import BatchRequest, Workload

# About 1 s of one core here at the cheapest units (prompts in many chunks), up to 3 s at the
# dearest (a thrashing KV cache) on a loaded machine: far inside gunicorn's 30 s timeout. The
# largest batches at common lengths take 120,000 to 220,000 (50,000 requests of 2,000 + 500
# tokens: 120,000 at fixed lengths, 150,000 spread).
BATCH_MAX_WORK = 500_000
SECONDS_PER_HOUR = 3600.0


def batch(request: BatchRequest, context: Context) -> BatchAnswer:
    """The makespan of the batch, its throughput over it, each request's TTFT and E2E from the
    start, and what the job costs."""
    model, model_label = context.model(request.model)
    gpu, gpu_label = context.gpu(request.gpu)
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, request.gpu, inputs, request.given)
    arrivals = Arrivals(prompt_tokens_cv=request.prompt_tokens_cv, output_tokens_cv=request.output_tokens_cv)
    shape = replica(plan_fit(model, gpu, applied.inputs), Workload(arrivals))
    queue = shape.model
    try:
        result = burst(
            queue.steps,
            queue.traffic,
            queue.limits,
            seed=request.seed,
            requests=request.requests,
            max_work=BATCH_MAX_WORK,
        )
    except WorkLimitExceeded as over:
        raise _too_large(request, shape, over) from None
    return _body(request, shape, result, model_label, gpu_label, applied, context.notes)


def _too_large(request: BatchRequest, shape: Replica, over: WorkLimitExceeded) -> InvalidRequest:
    """A 422 naming what makes the batch large: its size and lengths, and max_num_seqs when the
    KV cache thrashes (a smaller running batch preempts less)."""
    detail = (
        f"simulating this batch takes more than {over.max_work:,} units of work (scheduler passes, prefill chunks, "
        "preemptions), the limit that keeps one answer within a few seconds: fewer requests, or shorter prompts "
        "or answers"
    )
    names = ["requests", "prompt_tokens", "output_tokens"]
    if over.preemptions > request.requests:
        kv = shape.fit.result.kv_capacity_tokens
        detail += (
            f"; the KV cache ({kv:,} tokens) had preempted {over.preemptions:,} times when the run stopped: "
            "a smaller max_num_seqs runs fewer requests at once and preempts less"
        )
        names.append("max_num_seqs")
    return InvalidRequest(detail, {name: [detail] for name in names})


def _warnings(
    request: BatchRequest, shape: Replica, result: BurstResult, applied: Applied, notes: tuple[str, ...]
) -> list[str]:
    fitted = shape.fit
    kv = fitted.result.kv_capacity_tokens
    warnings = [*fitted.warnings, *notes, *applied.notes(fitted.tensor_parallel, fitted.kv_precision)]
    if result.preemptions:
        warnings.append(
            f"{result.preemptions:,} preemptions: the KV cache ({kv:,} tokens) could not hold every running "
            "request's growing context; each preempted request recomputed its prompt and the tokens it had "
            "generated (vLLM's recompute), which the makespan includes. A smaller max_num_seqs may finish sooner"
        )
    if result.cut_requests:
        warnings.append(
            f"{result.cut_requests:,} of the {request.requests:,} requests were drawn longer than the KV cache holds "
            f"({kv:,} tokens) and cut to fit it (an engine would refuse them)"
        )
    if shape.price_per_gpu_hour_usd is None:
        warnings.append("no hourly price for this GPU: pass price_per_gpu_hour_usd for the job's cost")
    return warnings


def _body(
    request: BatchRequest,
    shape: Replica,
    result: BurstResult,
    model_label: str,
    gpu_label: str,
    applied: Applied,
    notes: tuple[str, ...],
) -> BatchAnswer:
    fitted, limits = shape.fit, shape.model.limits
    makespan = result.makespan_s
    price, gpus = shape.price_per_gpu_hour_usd, fitted.gpus
    return BatchAnswer(
        model=model_label,
        gpu=gpu_label,
        mig_profile=fitted.target.mig_profile.name if fitted.target.mig_profile else None,
        tensor_parallel=fitted.tensor_parallel,
        gpus=gpus,
        weight_precision=fitted.weight_precision,
        kv_precision=fitted.kv_precision,
        engine_figures=engine_figures(fitted),
        kv_capacity_tokens=fitted.result.kv_capacity_tokens,
        max_concurrency=fitted.result.max_concurrency,
        # What the simulated scheduler runs at once at most (the KV cache may hold fewer).
        max_running_requests=min(limits.max_num_seqs, shape.model.steps.max_decodes(limits.max_batched_tokens)),
        speculative=speculation_planned(fitted.inputs.speculative),
        requests=request.requests,
        prompt_tokens=fitted.inputs.prompt_tokens,
        output_tokens=fitted.inputs.output_tokens,
        prompt_tokens_cv=request.prompt_tokens_cv,
        output_tokens_cv=request.output_tokens_cv,
        seed=request.seed,
        prompt_tokens_total=result.prompt_tokens,
        output_tokens_total=result.output_tokens,
        makespan_s=makespan,
        output_tokens_per_s=result.output_tokens_per_s,
        total_tokens_per_s=(result.prompt_tokens + result.output_tokens) / makespan,
        requests_per_s=request.requests / makespan,
        ttft_ms=spread_ms(result.ttft_s),
        e2e_ms=spread_ms(result.e2e_s),
        preemptions=result.preemptions,
        cut_requests=result.cut_requests,
        price_per_gpu_hour_usd=price,
        job_cost_usd=None if price is None else price * gpus * makespan / SECONDS_PER_HOUR,
        cost_per_million_output_tokens_usd=(
            None if price is None else cost_mod.cost_per_million_tokens_usd(price, gpus, result.output_tokens_per_s)
        ),
        provenance=Provenance(
            basis(applied),
            applied.used(),
            ARRIVALS_LEAVES_OUT if fitted.engine is None else ENGINE_ARRIVALS_LEAVES_OUT,
            tuple(_warnings(request, shape, result, applied, notes)),
        ),
    )
