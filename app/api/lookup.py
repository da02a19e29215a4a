"""Catalog slugs to sizing specs. Inline objects arrive already parsed into specs."""

from __future__ import annotations

from flask import current_app, g
from sqlalchemy.orm import Session

from app.catalog import queries
from app.catalog.convert import gpu_to_spec, model_to_spec
from app.sizing.specs import GpuSpec, ModelSpec

from .errors import ApiError

EXTENSION = "fleet_sizer"


def session() -> Session:
    """The request's session, opened on first use and closed at teardown (never committed
    by query functions; planning calls never write)."""
    if "db_session" not in g:
        g.db_session = current_app.extensions[EXTENSION]["sessionmaker"]()
    db_session: Session = g.db_session
    return db_session


def close_session(_exc: BaseException | None = None) -> None:
    db_session = g.pop("db_session", None)
    if db_session is not None:
        db_session.close()


def resolve_model(value: str | ModelSpec) -> tuple[ModelSpec, str]:
    if isinstance(value, ModelSpec):
        return value, value.name
    row = queries.get_model(session(), value)
    if row is None:
        raise ApiError(404, f"unknown model {value!r}: see GET /v1/models", {"model": [f"unknown model {value!r}"]})
    return model_to_spec(row), row.slug


def resolve_gpu(value: str | GpuSpec) -> tuple[GpuSpec, str]:
    if isinstance(value, GpuSpec):
        return value, value.name
    row = queries.get_gpu(session(), value)
    if row is None:
        raise ApiError(404, f"unknown GPU {value!r}: see GET /v1/gpus", {"gpu": [f"unknown GPU {value!r}"]})
    return gpu_to_spec(row), row.slug
