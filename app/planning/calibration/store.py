"""Storing a calibration: fit efficiencies to measured benchmark points and a memory overhead
to an engine start-up log (fit.py), for a catalog model on a catalog GPU,
into the row the catalog stores. Nothing is stored here: the caller commits the row."""

from __future__ import annotations

from typing import Any

from app.catalog.models import Calibration

from ..context import Context
from .fit import CalibrationRequest, calibrate


def _request(data: dict[str, Any]) -> CalibrationRequest:
    engine = data["engine"]
    return CalibrationRequest(
        engine=engine["name"],
        engine_version=engine.get("version"),
        mig_profile=data.get("mig_profile"),
        tensor_parallel=data.get("tensor_parallel"),
        weight_precision=data.get("weight_precision"),
        kv_precision=data["kv_precision"],
        max_batched_tokens=data["max_batched_tokens"],
        gpu_memory_utilization=data.get("gpu_memory_utilization"),
        points=tuple(data["points"]),
        startup_log=data.get("startup_log"),
    )


def calibration_row(data: dict[str, Any], context: Context) -> Calibration:
    """The calibration of a validated CalibrationCreateSchema payload, as a row to insert."""
    model_slug, gpu_slug = data["model"].strip(), data["gpu"].strip()
    model, _ = context.model(model_slug)
    gpu, _ = context.gpu(gpu_slug)
    result = calibrate(model, gpu, _request(data))
    return Calibration(
        model_slug=model_slug,
        gpu_slug=gpu_slug,
        mig_profile=data.get("mig_profile"),
        tensor_parallel=result.tensor_parallel,
        weight_precision=result.weight_precision,
        kv_precision=result.kv_precision,
        engine=data["engine"]["name"],
        engine_version=result.engine_version,
        max_batched_tokens=data["max_batched_tokens"],
        gpu_memory_utilization=result.gpu_memory_utilization,
        memory_efficiency=result.memory_efficiency,
        compute_efficiency=result.compute_efficiency,
        memory_overhead_gb=result.memory_overhead_gb,
        kv_capacity_tokens=result.kv_capacity_tokens,
        point_count=len(result.points),
        mape_percent=result.mape_percent,
        points=result.points,
        residuals=result.residuals,
        log_summary=result.log_summary,
        undetermined=result.undetermined,
        warnings=result.warnings,
    )
