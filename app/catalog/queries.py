"""Catalog reads as plain functions taking a Session (the caller owns its lifetime)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.catalog.models import Gpu, MigProfile, Model, Precision


def get_model(session: Session, slug: str) -> Model | None:
    """The model stored under `slug`, or None."""
    return session.scalar(select(Model).where(Model.slug == slug))


def get_gpu(session: Session, slug: str) -> Gpu | None:
    """The GPU stored under `slug` with its MIG profiles already loaded, or None."""
    # Eager: callers convert to specs after the session may be gone.
    statement = select(Gpu).where(Gpu.slug == slug).options(selectinload(Gpu.mig_profiles))
    return session.scalar(statement)


def list_models(session: Session) -> Sequence[Model]:
    """Every model, by slug."""
    return session.scalars(select(Model).order_by(Model.slug)).all()


def list_gpus(session: Session) -> Sequence[Gpu]:
    """Every GPU with its MIG profiles, by slug (one extra query for all profiles)."""
    statement = select(Gpu).order_by(Gpu.slug).options(selectinload(Gpu.mig_profiles))
    return session.scalars(statement).all()


def get_precision(session: Session, name: str) -> Precision | None:
    """The precision stored under `name` (`bf16`, `fp8`, …), or None."""
    return session.scalar(select(Precision).where(Precision.name == name))


def list_precisions(session: Session) -> Sequence[Precision]:
    """Every precision, widest first, then by name."""
    statement = select(Precision).order_by(Precision.bits.desc(), Precision.name)
    return session.scalars(statement).all()


def catalog_counts(session: Session) -> dict[str, int]:
    """Row counts for readiness checks: models, gpus, mig_profiles, precisions."""
    counted = {"models": Model, "gpus": Gpu, "mig_profiles": MigProfile, "precisions": Precision}
    return {key: session.scalar(select(func.count()).select_from(entity)) or 0 for key, entity in counted.items()}
