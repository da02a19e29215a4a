"""The planning services' answers as typed values: frozen dataclasses computed whole in the
service, in SI units (seconds, bytes, FLOP/s) and unrounded. The wire form (milliseconds,
TFLOP/s, key order, null for a non-finite figure) is the API's: each type is written by the dump
schema of the same shape in app/openapi/answers.py, which also documents it (app/api/wire.py).

Field names are the wire's names where the unit is the same; a field held in another unit than
the wire's carries its own (`time_s` is written as `time_us`). Answers not yet typed here are
still built as dicts by their services.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.sizing.vocabulary import RooflineBound


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
