"""A calibration end to end: the planner's own replica for the measured setup, the efficiencies
fitted to the benchmark points, the memory overhead fitted to the start-up log, and the
cross-checks that say when the measurements and the catalog disagree.

The replica is built exactly as the planner builds it (plan_fit, then prepare_timing), so a
plan that uses the fitted values reproduces the measurements. Everything is computed before
anything is stored: a refusal is a SizingError naming the request field at fault.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from app.sizing import memory
from app.sizing.calibration import BenchmarkPoint, EfficiencyFit, fit_efficiencies, fit_memory_overhead
from app.sizing.errors import SizingError
from app.sizing.plan import FitPlan, PlanInputs, plan_fit, prepare_timing
from app.sizing.specs import GpuSpec, ModelSpec

from .startup_log import EXPECTED_LINES, GB, GIB, LogParseError, StartupLog, parse_startup_log

MAX_POINTS = 16
# Log lines are quoted back (lines_used) up to this length.
MAX_QUOTED_CHARS = 500
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default
# The log's weights against the planner's: beyond this the catalog entry (or the request's
# precision or tensor parallel) is probably not what the engine loaded.
WEIGHTS_TOLERANCE = 0.05
KV_PER_TOKEN_TOLERANCE = 0.05
# Weights and KV cache may exceed the datasheet's GB by the GiB/GB gap (7.4%) and a little more,
# never by more: a log that claims so is not from this model on this GPU.
MEMORY_PLAUSIBLE = 1.10
# TPOT and ITL measure the same thing here; tools report them a little apart.
TPOT_ITL_TOLERANCE = 0.10
METRICS = ("tpot_ms", "itl_ms", "ttft_ms", "output_tokens_per_s")

_VERSION_PATTERNS = (
    re.compile(r"vLLM API server version ([0-9][\w.+-]*)"),
    re.compile(r"Initializing an? (?:V[01] )?LLM engine \(v([0-9][\w.+-]*)\)"),
    re.compile(r"sglang(?:==| version:? )v?([0-9][\w.+-]*)", re.IGNORECASE),
)
# vLLM V0 (and V1 before 0.8) prints "Loading model weights took %.4f GB" of bytes / 2**30: GiB.
_MISLABELLED_WEIGHTS = re.compile(r"Loading model weights took [0-9][0-9,]*(?:\.[0-9]+)? ?GB\b")
_UTILIZATION = re.compile(r"gpu_memory_utilization['\"]?\s*(?:[:=]\s*|\(\s*)([01](?:\.[0-9]+)?)")
# vLLM's engine config line; SGLang's server args print tp_size.
_TENSOR_PARALLEL = re.compile(r"\b(?:tensor_parallel_size|tp_size)['\"]?\s*[:=]\s*([0-9]{1,4})\b")


@dataclass(frozen=True)
class MeasuredPoint:
    """A benchmark point as given: TPOT and ITL are the same measurement under two names."""

    concurrency: int
    prompt_tokens: int
    output_tokens: int
    tpot_ms: float | None = None
    itl_ms: float | None = None
    ttft_ms: float | None = None
    output_tokens_per_s: float | None = None

    def benchmark(self) -> BenchmarkPoint:
        return BenchmarkPoint(
            self.concurrency,
            self.prompt_tokens,
            self.output_tokens,
            tpot_ms=self.tpot_ms if self.tpot_ms is not None else self.itl_ms,
            ttft_ms=self.ttft_ms,
            output_tokens_per_s=self.output_tokens_per_s,
        )

    def as_dict(self) -> dict[str, Any]:
        shape = {"concurrency": self.concurrency, "prompt_tokens": self.prompt_tokens}
        shape["output_tokens"] = self.output_tokens
        return {**shape, **{m: getattr(self, m) for m in METRICS if getattr(self, m) is not None}}


@dataclass(frozen=True)
class CalibrationRequest:
    engine: str
    engine_version: str | None = None
    mig_profile: str | None = None
    tensor_parallel: int | None = None
    weight_precision: str | None = None
    kv_precision: str = "bf16"
    max_batched_tokens: int = 2048
    gpu_memory_utilization: float | None = None  # None: the log's, else vLLM's default
    points: tuple[MeasuredPoint, ...] = ()
    startup_log: str | None = None


@dataclass
class CalibrationResult:
    """What is stored and answered."""

    tensor_parallel: int
    weight_precision: str
    kv_precision: str
    engine_version: str | None
    gpu_memory_utilization: float
    memory_efficiency: float | None
    compute_efficiency: float | None
    memory_overhead_gb: float | None
    kv_capacity_tokens: int | None
    mape_percent: float | None
    points: list[dict[str, Any]]
    residuals: list[dict[str, Any]]
    log_summary: dict[str, Any] | None
    undetermined: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _LogFit:
    summary: dict[str, Any]
    kv_capacity_tokens: int | None
    memory_overhead_gb: float | None
    warnings: list[str]


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    for pattern in patterns:
        if match := pattern.search(text):
            return match.group(1)
    return None


# SGLang's weights line is matched by "Load weight end\..*?mem usage=": on a line repeating its
# prefix without the suffix, every repetition rescans the rest of the line (quadratic: a 4 MiB
# log of such lines takes minutes). The last repetition is the only one that can match.
SGLANG_WEIGHTS_PREFIX = "Load weight end."
MAX_LINE_CHARS = 16 * 1024  # engine lines are far shorter; a longer one is cut, not rejected


def _defused(text: str) -> str:
    """The log with each line cut to MAX_LINE_CHARS and to its last SGLang weights prefix: what
    the parser reads in linear time, with every line it could have matched kept whole."""
    lines = []
    for line in text.splitlines():
        line = line[:MAX_LINE_CHARS]
        if line.count(SGLANG_WEIGHTS_PREFIX) > 1:
            line = line[line.rfind(SGLANG_WEIGHTS_PREFIX) :]
        lines.append(line)
    return "\n".join(lines)


def _parse_log(text: str) -> StartupLog:
    try:
        log = parse_startup_log(text)
    except LogParseError as exc:
        raise SizingError("startup_log", str(exc)) from None
    except OverflowError:  # a token count too long for a float
        raise SizingError("startup_log", "a figure in the log is out of range") from None
    figures = [v for v in vars(log).values() if isinstance(v, float)]
    if not all(math.isfinite(v) for v in figures):
        raise SizingError("startup_log", "a figure in the log is out of range")
    if log.weights_bytes is not None and any(_MISLABELLED_WEIGHTS.search(line) for line in log.lines_used):
        log = replace(log, weights_bytes=log.weights_bytes * GIB / GB)
    return log


def log_utilization(text: str | None) -> float | None:
    """The gpu_memory_utilization the engine printed (its config or its profiling line)."""
    if text is None or not (match := _UTILIZATION.search(text)):
        return None
    value = float(match.group(1))
    return value if 0 < value <= 1 else None


def log_tensor_parallel(text: str | None) -> int | None:
    """The tensor-parallel size the engine printed in its configuration."""
    if text is None or not (match := _TENSOR_PARALLEL.search(text)):
        return None
    return int(match.group(1)) or None


def _percent_apart(measured: float, planned: float) -> float:
    return 100 * (measured / planned - 1)


def _fit_log(log: StartupLog, fitted: FitPlan, utilization: float, text: str) -> _LogFit:
    """The per-GPU overhead that makes the planner's KV capacity equal the log's, with the
    cross-checks against the catalog's weights and KV cost per token."""
    tp = fitted.tensor_parallel
    result = fitted.result
    per_gpu_kv_per_token = result.kv_bytes_per_token / tp
    warnings: list[str] = []
    capacity = log.kv_capacity_tokens
    source = "log"
    if capacity is None and log.kv_cache_bytes:
        # The engine's KV memory is per GPU; the planner's bytes per token sum over the group.
        capacity = math.floor(log.kv_cache_bytes / per_gpu_kv_per_token)
        source = "derived from the KV cache memory and the planner's bytes per token"
    weights_apart = None
    if log.weights_bytes is not None:
        # The engine logs rank 0: one GPU's share of the weights.
        weights_apart = _percent_apart(log.weights_bytes * tp, result.weights_bytes)
        if abs(weights_apart) > 100 * WEIGHTS_TOLERANCE:
            warnings.append(
                f"the log's weights ({log.weights_bytes * tp / 1e9:.2f} GB over {tp} GPU(s)) differ from the "
                f"planner's ({result.weights_bytes / 1e9:.2f} GB) by {weights_apart:+.1f}%: check the model, "
                "weight_precision and tensor_parallel of the run"
            )
    kv_apart = None
    if log.kv_bytes_per_token is not None:
        kv_apart = _percent_apart(log.kv_bytes_per_token, per_gpu_kv_per_token)
        if abs(kv_apart) > 100 * KV_PER_TOKEN_TOLERANCE:
            warnings.append(
                f"the engine's KV cache costs {log.kv_bytes_per_token:,.0f} B per token per GPU, the planner's "
                f"{per_gpu_kv_per_token:,.0f} B ({kv_apart:+.1f}%): check kv_precision and tensor_parallel"
            )
    if capacity == 0:
        raise SizingError("startup_log", "the log reports a KV cache of 0 tokens: an engine that cannot hold one token")
    overhead = None
    if capacity is not None:
        memory_gb = fitted.target.gpu.memory_gb
        assert memory_gb is not None  # plan_fit refuses a GPU without it
        claimed = result.weights_bytes + capacity * result.kv_bytes_per_token
        if claimed > memory_gb * 1e9 * tp * MEMORY_PLAUSIBLE:
            raise SizingError(
                "startup_log",
                f"the log's KV cache of {capacity:,} tokens ({capacity * result.kv_bytes_per_token / 1e9:.1f} GB at "
                f"{result.kv_bytes_per_token:,.0f} B per token) and the weights ({result.weights_bytes / 1e9:.1f} GB) "
                f"exceed the {memory_gb * tp:g} GB of {tp} x {fitted.target.gpu.name}: the log is not from this "
                "model, GPU, kv_precision and tensor_parallel",
            )
        overhead = fit_memory_overhead(
            memory_gb, tp, utilization, result.weights_bytes, result.kv_bytes_per_token, capacity
        ).memory_overhead_gb
    summary = {
        "engine": log.engine,
        "engine_version": _first(_VERSION_PATTERNS, text),
        "gpu_memory_utilization": log_utilization(text),
        "tensor_parallel": log_tensor_parallel(text),
        "weights_bytes": log.weights_bytes,
        "planner_weights_bytes": result.weights_bytes,
        "weights_difference_percent": weights_apart,
        "kv_cache_bytes": log.kv_cache_bytes,
        "kv_capacity_tokens": capacity,
        "kv_capacity_source": None if capacity is None else source,
        "kv_bytes_per_token": log.kv_bytes_per_token,
        "planner_kv_bytes_per_token": per_gpu_kv_per_token,
        "kv_bytes_per_token_difference_percent": kv_apart,
        "non_torch_bytes": log.non_torch_bytes,
        "activation_peak_bytes": log.activation_peak_bytes,
        "cuda_graph_bytes": log.cuda_graph_bytes,
        "max_concurrency": log.max_concurrency,
        "max_concurrency_tokens": log.max_concurrency_tokens,
        "lines_used": [line[:MAX_QUOTED_CHARS] for line in log.lines_used],
    }
    return _LogFit(summary, capacity, overhead, warnings)


def _fit_points(
    fitted: FitPlan, inputs: PlanInputs, points: tuple[MeasuredPoint, ...], max_batched_tokens: int
) -> EfficiencyFit:
    setup = prepare_timing(fitted)
    try:
        return fit_efficiencies(setup.work, setup.hardware, [p.benchmark() for p in points], max_batched_tokens)
    except SizingError as exc:
        raise _as_given(exc, points) from None


def _as_given(exc: SizingError, points: tuple[MeasuredPoint, ...]) -> SizingError:
    """A refusal of `points.N.tpot_ms` names itl_ms when that is what point N gave."""
    parts = exc.field.split(".")
    if len(parts) == 3 and parts[2] == "tpot_ms" and parts[1].isdigit():
        point = points[int(parts[1])]
        if point.tpot_ms is None and point.itl_ms is not None:
            return SizingError(f"points.{parts[1]}.itl_ms", exc.message.replace("tpot_ms", "itl_ms"))
    return exc


def _residual_rows(fit: EfficiencyFit, points: tuple[MeasuredPoint, ...]) -> list[dict[str, Any]]:
    rows = []
    for r in fit.residuals:
        metric = r.metric
        if metric == "tpot_ms" and points[r.index].tpot_ms is None:
            metric = "itl_ms"
        rows.append(
            {
                "point": r.index,
                "metric": metric,
                "measured": r.measured,
                "predicted": r.predicted,
                "error_percent": r.error_percent,
            }
        )
    return rows


def _point_warnings(
    model: ModelSpec, fitted: FitPlan, points: tuple[MeasuredPoint, ...], capacity_tokens: int
) -> list[str]:
    warnings = []
    budget = capacity_tokens * fitted.result.kv_bytes_per_token
    for index, point in enumerate(points):
        per_sequence = memory.kv_bytes_for_context(
            model, fitted.kv_precision, point.prompt_tokens + point.output_tokens, fitted.tensor_parallel
        )
        most = math.floor(budget / per_sequence)
        if point.concurrency > most:
            warnings.append(
                f"point {index}: concurrency {point.concurrency} exceeds the {most} sequences of "
                f"{point.prompt_tokens + point.output_tokens} tokens the KV cache holds: the engine queued the rest, "
                "so this point was fitted as if all were in flight"
            )
        tpot, itl = point.tpot_ms, point.itl_ms
        if tpot is not None and itl is not None and abs(itl / tpot - 1) > TPOT_ITL_TOLERANCE:
            warnings.append(
                f"point {index}: itl_ms {itl:g} and tpot_ms {tpot:g} differ by more than "
                f"{100 * TPOT_ITL_TOLERANCE:.0f}%: tpot_ms was fitted"
            )
    return warnings


def calibrate(model: ModelSpec, gpu: GpuSpec, request: CalibrationRequest) -> CalibrationResult:
    """Fit what the measurements determine; refuse (SizingError naming the field) when they
    are unreadable, impossible for this model on this hardware, or determine nothing."""
    text = None if request.startup_log is None else _defused(request.startup_log)
    utilization = request.gpu_memory_utilization
    logged_utilization = log_utilization(text)
    if utilization is None:
        utilization = logged_utilization or DEFAULT_GPU_MEMORY_UTILIZATION
    logged_tp = log_tensor_parallel(text)
    tensor_parallel = request.tensor_parallel or logged_tp
    shape = request.points[0] if request.points else None
    inputs = PlanInputs(
        prompt_tokens=shape.prompt_tokens if shape else PlanInputs.prompt_tokens,
        output_tokens=shape.output_tokens if shape else PlanInputs.output_tokens,
        tensor_parallel=tensor_parallel,
        mig_profile=request.mig_profile,
        weight_precision=request.weight_precision,
        kv_precision=request.kv_precision,
        gpu_memory_utilization=utilization,
        max_batched_tokens=request.max_batched_tokens,
    )
    # Read the log first: an unreadable one is refused before any fitting work.
    log = _parse_log(text) if text is not None else None
    fitted = plan_fit(model, gpu, inputs)
    warnings = list(fitted.warnings)
    if request.tensor_parallel is not None and logged_tp is not None and logged_tp != request.tensor_parallel:
        warnings.append(
            f"the log says tensor_parallel_size {logged_tp}, the request {request.tensor_parallel}: "
            "the request's was used"
        )
    if tensor_parallel is None:
        warnings.append(
            f"tensor_parallel not given: {fitted.tensor_parallel} assumed (the smallest group that holds the weights)"
        )
    if (
        request.gpu_memory_utilization is not None
        and logged_utilization is not None
        and abs(logged_utilization - request.gpu_memory_utilization) > 0.005
    ):
        warnings.append(
            f"the log says gpu_memory_utilization {logged_utilization:g}, the request {utilization:g}: "
            "the request's was used"
        )
    undetermined: dict[str, str] = {}

    log_fit = None
    if log is not None:
        log_fit = _fit_log(log, fitted, utilization, text or "")
        warnings.extend(log_fit.warnings)
        if log.engine != request.engine and request.engine in ("vllm", "sglang"):
            warnings.append(f"engine is {request.engine!r} but the log reads like {log.engine}'s")
        if log_fit.memory_overhead_gb is None:
            undetermined["memory_overhead_gb"] = "the log has no KV cache line; expected " + "; ".join(
                EXPECTED_LINES[1:]
            )
    else:
        undetermined["memory_overhead_gb"] = "no startup_log was given"

    efficiency = None
    if request.points:
        efficiency = _fit_points(fitted, inputs, request.points, request.max_batched_tokens)
        if efficiency.memory_efficiency is None:
            undetermined["memory_efficiency"] = (
                "the points do not depend on memory bandwidth (all compute-bound): add TPOT points at low concurrency"
            )
        if efficiency.compute_efficiency is None:
            undetermined["compute_efficiency"] = (
                "the points do not depend on compute (all memory-bound): add TTFT points or higher concurrencies"
            )
        capacity = log_fit.kv_capacity_tokens if log_fit and log_fit.kv_capacity_tokens else None
        warnings.extend(_point_warnings(model, fitted, request.points, capacity or fitted.result.kv_capacity_tokens))
    else:
        undetermined["memory_efficiency"] = undetermined["compute_efficiency"] = "no benchmark points were given"

    overhead = log_fit.memory_overhead_gb if log_fit else None
    if efficiency is None and overhead is None:
        raise SizingError(
            "startup_log",
            "nothing to calibrate: the log has no KV cache line and no points were given; expected "
            + "; ".join(EXPECTED_LINES[1:]),
        )
    engine_version = request.engine_version
    if engine_version is None and log_fit is not None:
        engine_version = log_fit.summary["engine_version"]
    return CalibrationResult(
        tensor_parallel=fitted.tensor_parallel,
        weight_precision=fitted.weight_precision,
        kv_precision=fitted.kv_precision,
        engine_version=engine_version,
        gpu_memory_utilization=utilization,
        memory_efficiency=efficiency.memory_efficiency if efficiency else None,
        compute_efficiency=efficiency.compute_efficiency if efficiency else None,
        memory_overhead_gb=overhead,
        kv_capacity_tokens=log_fit.kv_capacity_tokens if log_fit else None,
        mape_percent=efficiency.mape_percent if efficiency else None,
        points=[p.as_dict() for p in request.points],
        residuals=_residual_rows(efficiency, request.points) if efficiency else [],
        log_summary=log_fit.summary if log_fit else None,
        undetermined=undetermined,
        warnings=warnings,
    )
