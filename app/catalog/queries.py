"""Catalog reads as plain functions taking a Session (the caller owns its lifetime)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.catalog.models import Base, Engine, Gpu, MigProfile, Model, Precision

T = TypeVar("T", bound=Base)


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


def get_engine(session: Session, name: str) -> Engine | None:
    """The engine profile stored under `name` (`vllm`, `sglang`, …), or None."""
    return session.scalar(select(Engine).where(Engine.name == name))


def list_engines(session: Session) -> Sequence[Engine]:
    """Every engine profile, by name."""
    return session.scalars(select(Engine).order_by(Engine.name)).all()


def _page(
    session: Session, entity: type[T], conditions: list[Any], order: Any, limit: int, offset: int, *options: Any
) -> tuple[Sequence[T], int]:
    """One page of the rows of `entity` matching every condition, in `order`, and how many
    match in all (the count ignores limit and offset)."""
    total = session.scalar(select(func.count()).select_from(entity).where(*conditions)) or 0
    page = select(entity).where(*conditions).order_by(order).limit(limit).offset(offset).options(*options)
    return session.scalars(page).all(), total


def filter_engines(session: Session, *, limit: int = 100, offset: int = 0) -> tuple[Sequence[Engine], int]:
    """One page of the engine profiles, by name, and how many there are."""
    return _page(session, Engine, [], Engine.name, limit, offset)


def catalog_counts(session: Session) -> dict[str, int]:
    """Row counts for readiness checks: models, gpus, mig_profiles, precisions, engines."""
    counted = {"models": Model, "gpus": Gpu, "mig_profiles": MigProfile, "precisions": Precision, "engines": Engine}
    return {key: session.scalar(select(func.count()).select_from(entity)) or 0 for key, entity in counted.items()}


def filter_models(
    session: Session,
    *,
    family: str | None = None,
    attention: str | None = None,
    moe: bool | None = None,
    min_params: int | None = None,
    max_params: int | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[Sequence[Model], int]:
    """One page of the models matching every given filter, by slug, and how many match."""
    conditions = []
    if family is not None:
        conditions.append(Model.family == family)
    if attention is not None:
        conditions.append(Model.attention == attention)
    if moe is not None:
        conditions.append(Model.experts.is_not(None) if moe else Model.experts.is_(None))
    if min_params is not None:
        conditions.append(Model.params_total >= min_params)
    if max_params is not None:
        conditions.append(Model.params_total <= max_params)
    return _page(session, Model, conditions, Model.slug, limit, offset)


def filter_gpus(
    session: Session,
    *,
    vendor: str | None = None,
    min_memory_gb: float | None = None,
    has_mig: bool | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[Sequence[Gpu], int]:
    """One page of the GPUs (profiles loaded) matching every given filter, and how many match."""
    conditions = []
    if vendor is not None:
        conditions.append(Gpu.vendor == vendor)
    if min_memory_gb is not None:
        conditions.append(Gpu.memory_gb >= min_memory_gb)
    if has_mig is not None:
        conditions.append(Gpu.mig_profiles.any() if has_mig else ~Gpu.mig_profiles.any())
    return _page(session, Gpu, conditions, Gpu.slug, limit, offset, selectinload(Gpu.mig_profiles))
