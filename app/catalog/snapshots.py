"""What planning reads of the database, as frozen snapshots: the catalog (every model, GPU
and engine profile as specs) and the newest calibration per planning key. Each kind comes
with the fingerprint query that tells when it changed and the loader that reads it, for
cache.FingerprintCache.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, literal, select, union_all
from sqlalchemy.orm import Session

from app.catalog import calibrations as store
from app.catalog import queries
from app.catalog.convert import engine_to_spec, gpu_to_spec, model_to_spec
from app.catalog.models import Calibration, Gpu, Model
from app.catalog.models import Engine as EngineRow
from app.sizing.engine import EngineProfile
from app.sizing.specs import GpuSpec, ModelSpec

# A backstop only: on SQLite, timestamps have one-second resolution, so a delete and a
# re-insert at the same id within the second of the previous write could leave the
# fingerprint unchanged. Reloading a catalog copy this old bounds how long such a case can last.
MAX_SNAPSHOT_AGE_S = 60.0


def _table_fingerprint(table: type[Model] | type[Gpu] | type[EngineRow]) -> Any:
    # version_id_col bumps `version` on every update (MIG profile edits bump the GPU's);
    # inserts and deletes move the count, the largest id or the newest updated_at.
    return select(
        literal(table.__tablename__),
        func.count(),
        func.coalesce(func.sum(table.version), 0),
        func.max(table.id),
        func.max(table.updated_at),
    ).select_from(table)


CATALOG_FINGERPRINT = union_all(_table_fingerprint(Model), _table_fingerprint(Gpu), _table_fingerprint(EngineRow))
# Calibrations are only ever inserted and deleted, and their ids never reused: the row count
# and the largest id tell every change.
CALIBRATION_FINGERPRINT = select(func.count(), func.max(Calibration.id)).select_from(Calibration)


@dataclass(frozen=True)
class CatalogSnapshot:
    """Every model, GPU and engine profile as specs (frozen, so requests share them)."""

    models: Mapping[str, ModelSpec]
    gpus: Mapping[str, GpuSpec]
    # The whole-catalog /v1/fleet ranking walks this, in slug order.
    gpu_list: tuple[tuple[str, GpuSpec], ...]
    # By name, in name order.
    engines: Mapping[str, EngineProfile]
    # Counts this worker's loads: what anything derived from the copy is keyed by.
    serial: int


def catalog_loader(on_load: Callable[[CatalogSnapshot], None]) -> Callable[[Session, int], CatalogSnapshot]:
    """The catalog's loader; `on_load` sees each new copy (the catalog-size gauge)."""

    def load(db: Session, serial: int) -> CatalogSnapshot:
        models = {row.slug: model_to_spec(row) for row in queries.list_models(db)}
        gpu_list = tuple((row.slug, gpu_to_spec(row)) for row in queries.list_gpus(db))
        engines = {row.name: engine_to_spec(row) for row in queries.list_engines(db)}
        snapshot = CatalogSnapshot(models, dict(gpu_list), gpu_list, engines, serial)
        on_load(snapshot)
        return snapshot

    return load


Key = tuple[str, str, str | None, str]  # model slug, GPU slug, MIG profile, weight precision


@dataclass(frozen=True)
class CalibrationRecord:
    """What planning needs of one stored calibration."""

    id: int
    model: str
    gpu: str
    mig_profile: str | None
    tensor_parallel: int
    weight_precision: str
    kv_precision: str
    engine: str
    engine_version: str | None
    max_batched_tokens: int
    memory_efficiency: float | None
    compute_efficiency: float | None
    memory_overhead_gb: float | None
    point_count: int
    mape_percent: float | None
    created_at: str

    @property
    def key(self) -> Key:
        return (self.model, self.gpu, self.mig_profile, self.weight_precision)

    @classmethod
    def of(cls, row: Calibration) -> CalibrationRecord:
        return cls(
            id=row.id,
            model=row.model_slug,
            gpu=row.gpu_slug,
            mig_profile=row.mig_profile,
            tensor_parallel=row.tensor_parallel,
            weight_precision=row.weight_precision,
            kv_precision=row.kv_precision,
            engine=row.engine,
            engine_version=row.engine_version,
            max_batched_tokens=row.max_batched_tokens,
            memory_efficiency=row.memory_efficiency,
            compute_efficiency=row.compute_efficiency,
            memory_overhead_gb=row.memory_overhead_gb,
            point_count=row.point_count,
            mape_percent=row.mape_percent,
            created_at=store.iso_utc(row.created_at),
        )


@dataclass(frozen=True)
class ModelFacts:
    """What the nearest-calibration match reads of a catalog model."""

    family: str | None
    params_total: int


@dataclass(frozen=True)
class CalibrationSnapshot:
    """The newest calibration per planning key, and the catalog models' families and sizes."""

    newest: Mapping[Key, CalibrationRecord]
    models: Mapping[str, ModelFacts]
    serial: int

    @property
    def in_use(self) -> frozenset[int]:
        return frozenset(record.id for record in self.newest.values())

    def of_model(self, model_slug: str) -> list[CalibrationRecord]:
        return [record for record in self.newest.values() if record.model == model_slug]


# What a database without the calibrations table (a schema behind its migrations) plans with.
NO_CALIBRATIONS = CalibrationSnapshot({}, {}, 0)


def load_calibrations(db: Session, serial: int) -> CalibrationSnapshot:
    newest: dict[Key, CalibrationRecord] = {}
    for row in store.list_calibrations(db):  # oldest first: the newest of a key wins
        record = CalibrationRecord.of(row)
        newest[record.key] = record
    facts = {
        slug: ModelFacts(family, params)
        for slug, family, params in db.execute(select(Model.slug, Model.family, Model.params_total))
    }
    return CalibrationSnapshot(newest, facts, serial)
