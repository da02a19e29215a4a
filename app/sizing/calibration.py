"""Calibration: fit the efficiencies to measured benchmark points, the memory overhead to a
start-up log, and say how well the fit holds (MAPE per point and overall).

A measured TPOT, TTFT or output rate is compared with the continuous-batching steady state
the service itself reports, so a calibrated plan reproduces the measurements it was fitted to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from . import timing
from .errors import SizingError

EFFICIENCY_BOUNDS = (0.05, 1.0)
# A parameter counts as determined when moving it across its range changes the fit's error
# by more than this share: all-memory-bound points say nothing about compute efficiency.
DETERMINED_SENSITIVITY = 0.02
GOLDEN = (math.sqrt(5) - 1) / 2


@dataclass(frozen=True)
class BenchmarkPoint:
    """One measurement at a concurrency; any of the three figures may be given."""

    concurrency: int
    prompt_tokens: int
    output_tokens: int
    tpot_ms: float | None = None
    ttft_ms: float | None = None
    output_tokens_per_s: float | None = None


@dataclass(frozen=True)
class PointFit:
    index: int
    metric: str
    measured: float
    predicted: float

    @property
    def error_percent(self) -> float:
        return 100 * (self.predicted - self.measured) / self.measured


@dataclass(frozen=True)
class EfficiencyFit:
    memory_efficiency: float | None  # None: the points do not determine it
    compute_efficiency: float | None
    residuals: list[PointFit]

    @property
    def mape_percent(self) -> float:
        return sum(abs(r.error_percent) for r in self.residuals) / len(self.residuals)


def _predict(
    work: timing.Workload, hw: timing.Hardware, point: BenchmarkPoint, max_batched_tokens: int
) -> timing.SteadyState:
    shaped = replace(work, prompt_tokens=point.prompt_tokens, output_tokens=point.output_tokens)
    steady = timing.continuous_batching(shaped, hw, point.concurrency, max_batched_tokens)
    if steady is None:
        raise SizingError(
            "points",
            f"concurrency {point.concurrency} fills max_batched_tokens {max_batched_tokens}: no prompt fits",
        )
    return steady


def _observations(points: Sequence[BenchmarkPoint]) -> list[tuple[int, str, float]]:
    observed = []
    for index, point in enumerate(points):
        for metric in ("tpot_ms", "ttft_ms", "output_tokens_per_s"):
            value = getattr(point, metric)
            if value is not None:
                observed.append((index, metric, value))
    return observed


def _predicted(steady: timing.SteadyState, metric: str) -> float:
    if metric == "tpot_ms":
        return steady.time_per_token_s * 1e3
    if metric == "ttft_ms":
        return steady.ttft_s * 1e3
    return steady.tokens_per_s


def residuals(
    work: timing.Workload,
    hw: timing.Hardware,
    points: Sequence[BenchmarkPoint],
    max_batched_tokens: int,
) -> list[PointFit]:
    fits = []
    steady: dict[int, timing.SteadyState] = {}  # one steady state per point, however many figures it has
    for index, metric, measured in _observations(points):
        if index not in steady:
            steady[index] = _predict(work, hw, points[index], max_batched_tokens)
        fits.append(PointFit(index, metric, measured, _predicted(steady[index], metric)))
    return fits


def _loss(fits: list[PointFit]) -> float:
    # Relative errors: a TTFT in seconds and a TPOT in milliseconds weigh alike.
    return sum((f.predicted / f.measured - 1) ** 2 for f in fits)


def _golden_min(f: Callable[[float], float], low: float, high: float, steps: int = 40) -> float:
    a, b = low, high
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + GOLDEN * (b - a)
            fd = f(d)
    return (a + b) / 2


def check_physical(
    work: timing.Workload, hw: timing.Hardware, points: Sequence[BenchmarkPoint], max_batched_tokens: int
) -> None:
    """A point faster than the roofline at 100% of bandwidth and compute cannot be this
    model on this hardware: refuse it by name rather than fit nonsense."""
    ideal = replace(hw, memory_efficiency=1.0, compute_efficiency=1.0)
    for fit in residuals(work, ideal, points, max_batched_tokens):
        faster = fit.measured > fit.predicted if fit.metric == "output_tokens_per_s" else fit.measured < fit.predicted
        if faster and abs(fit.error_percent) > 1:
            raise SizingError(
                f"points.{fit.index}.{fit.metric}",
                f"{fit.metric} {fit.measured:g} is beyond what the hardware allows at 100% efficiency "
                f"({fit.predicted:.4g}): check the model, GPU, precision and tensor parallel of the point",
            )


def fit_efficiencies(
    work: timing.Workload,
    hw: timing.Hardware,
    points: Sequence[BenchmarkPoint],
    max_batched_tokens: int = 2048,
) -> EfficiencyFit:
    """Least squares over both efficiencies, bounded to 0.05-1.0: an outer golden-section
    search on compute efficiency around an inner one on memory efficiency. Refuses when the
    points determine neither."""
    if not _observations(points):
        raise SizingError("points", "no measured tpot_ms, ttft_ms or output_tokens_per_s in any point")
    check_physical(work, hw, points, max_batched_tokens)
    low, high = EFFICIENCY_BOUNDS

    def loss(memory_eff: float, compute_eff: float) -> float:
        trial = replace(hw, memory_efficiency=memory_eff, compute_efficiency=compute_eff)
        return _loss(residuals(work, trial, points, max_batched_tokens))

    def best_memory(compute_eff: float) -> float:
        return _golden_min(lambda m: loss(m, compute_eff), low, high, steps=28)

    compute_eff = _golden_min(lambda c: loss(best_memory(c), c), low, high, steps=22)
    memory_eff = best_memory(compute_eff)
    best = loss(memory_eff, compute_eff)
    scale = max(best, 1e-6)

    def determined(vary: Callable[[float], float]) -> bool:
        return max(abs(vary(edge) - best) for edge in (low, high)) > DETERMINED_SENSITIVITY * max(scale, 1.0)

    memory_known = determined(lambda m: loss(m, compute_eff))
    compute_known = determined(lambda c: loss(memory_eff, c))
    if not memory_known and not compute_known:
        raise SizingError("points", "these points determine neither efficiency: measure across concurrencies")
    final = replace(hw, memory_efficiency=memory_eff, compute_efficiency=compute_eff)
    return EfficiencyFit(
        memory_efficiency=memory_eff if memory_known else None,
        compute_efficiency=compute_eff if compute_known else None,
        residuals=residuals(work, final, points, max_batched_tokens),
    )


@dataclass(frozen=True)
class MemoryFit:
    """What a start-up log says about memory, as a per-GPU overhead beyond weights and KV."""

    memory_overhead_gb: float
    kv_bytes_per_token: float | None
    kv_capacity_tokens: int | None


def fit_memory_overhead(
    memory_gb: float,
    gpus: int,
    gpu_memory_utilization: float,
    weights_bytes: float,
    kv_bytes_per_token: float,
    kv_capacity_tokens: int,
) -> MemoryFit:
    """The per-GPU reserve that makes the service's KV capacity equal the log's:
    usable - weights - capacity x bytes per token, per GPU. It folds activation peak,
    non-torch memory, CUDA graphs and the gap between the vendor's GB and what the driver
    reports; it may be negative when the driver shows more than the datasheet's GB."""
    usable = memory_gb * 1e9 * gpu_memory_utilization * gpus
    overhead = (usable - weights_bytes - kv_capacity_tokens * kv_bytes_per_token) / gpus / 1e9
    return MemoryFit(overhead, kv_bytes_per_token, kv_capacity_tokens)
