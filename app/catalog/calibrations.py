"""Calibration rows: read and listed as plain functions taking a Session, and their public shape.

The caller owns the session and its transaction (the view commits), as for the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog.models import Calibration

# The summary a list shows (and CSV's columns, in this order); one calibration adds the rest.
SUMMARY_FIELDS = (
    "id",
    "model",
    "gpu",
    "mig_profile",
    "tensor_parallel",
    "weight_precision",
    "kv_precision",
    "engine",
    "max_batched_tokens",
    "gpu_memory_utilization",
    "memory_efficiency",
    "compute_efficiency",
    "memory_overhead_gb",
    "kv_capacity_tokens",
    "point_count",
    "mape_percent",
    "undetermined",
    "in_use",
    "created_at",
)


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z, as dashboards' time fields expect."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def get_calibration(session: Session, calibration_id: int) -> Calibration | None:
    return session.get(Calibration, calibration_id)


def filter_calibrations(
    session: Session,
    *,
    model: str | None = None,
    gpu: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[Sequence[Calibration], int]:
    """One page of the calibrations for a model and/or GPU slug, newest first, and how many match."""
    conditions = []
    if model is not None:
        conditions.append(Calibration.model_slug == model)
    if gpu is not None:
        conditions.append(Calibration.gpu_slug == gpu)
    total = session.scalar(select(func.count()).select_from(Calibration).where(*conditions)) or 0
    page = select(Calibration).where(*conditions).order_by(Calibration.id.desc()).limit(limit).offset(offset)
    return session.scalars(page).all(), total


def list_calibrations(session: Session) -> Sequence[Calibration]:
    """Every calibration, oldest first (so that a dict filled in order keeps the newest)."""
    return session.scalars(select(Calibration).order_by(Calibration.id)).all()


def calibration_to_dict(row: Calibration, *, in_use: bool, full: bool = True) -> dict[str, Any]:
    """The public shape: the summary, and with `full` the points, residuals, log and warnings."""
    document: dict[str, Any] = {
        "id": row.id,
        "model": row.model_slug,
        "gpu": row.gpu_slug,
        "mig_profile": row.mig_profile,
        "tensor_parallel": row.tensor_parallel,
        "weight_precision": row.weight_precision,
        "kv_precision": row.kv_precision,
        "engine": {"name": row.engine, "version": row.engine_version},
        "max_batched_tokens": row.max_batched_tokens,
        "gpu_memory_utilization": row.gpu_memory_utilization,
        "memory_efficiency": row.memory_efficiency,
        "compute_efficiency": row.compute_efficiency,
        "memory_overhead_gb": row.memory_overhead_gb,
        "kv_capacity_tokens": row.kv_capacity_tokens,
        "point_count": row.point_count,
        "mape_percent": row.mape_percent,
        "undetermined": dict(row.undetermined),
        "in_use": in_use,
        "created_at": iso_utc(row.created_at),
    }
    if full:
        document.update(
            {
                "points": list(row.points),
                "residuals": list(row.residuals),
                "log_summary": row.log_summary,
                "warnings": list(row.warnings),
            }
        )
    return document
