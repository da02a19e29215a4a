"""The calibration a planning request uses, from a per-worker copy of the calibrations table.

Planning answers for a catalog model on a catalog GPU (never for inline objects) use the
newest calibration stored for the same (model, GPU, MIG profile, weight precision), whatever
the engine: its efficiencies and its memory overhead (as reserved_gb), each unless the request
gives that field itself. Without one, the newest calibration of the same model family on the
same target lends its efficiencies (not its memory overhead, which is the model's own), and
the answer says so: `basis: calibrated-nearest`.

Like the catalog copy of lookup.py, the copy is compared with the database at most every
CHECK_INTERVAL_S (one aggregate query: calibrations are only ever inserted and deleted, and
their ids never reused, so the row count and the largest id tell every change) and dropped at
once by the worker that writes. It is also rebuilt whenever the catalog copy is, since the
model families and sizes the nearest match reads come from the catalog. `serial()` numbers the
copies, so that memo.py's remembered answers change with it. While the database is unreachable
the last copy is served, with lookup.py's `Outage` backoff and a note in the answer.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from flask import Flask, current_app, g, request
from sqlalchemy import Engine, func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from app import observability
from app.catalog import calibrations as store
from app.catalog.models import Calibration, Model
from app.sizing.plan import PlanInputs, resolve_target
from app.sizing.precision import choose_weight_precision
from app.sizing.specs import GpuSpec, ModelSpec

from .lookup import (
    CHECK_INTERVAL_S,
    EXTENSION,
    Outage,
    catalog,
    catalog_cache,
    resolve_gpu,
    resolve_model,
    stale_note,
)

log = logging.getLogger(__name__)

CACHE_KEY = "calibration_cache"
EXACT = "calibrated"
NEAREST = "calibrated-nearest"
DATASHEET = "datasheet"
MEASURED = "measured"
# Calibration field -> the planning input it stands in for.
OVERRIDES = {
    "memory_efficiency": "memory_efficiency",
    "compute_efficiency": "compute_efficiency",
    "memory_overhead_gb": "reserved_gb",
}
EFFICIENCIES = ("memory_efficiency", "compute_efficiency")
ALL_FIELDS = tuple(OVERRIDES)
# What /v1/fit can use: only memory enters a fit.
MEMORY_ONLY = ("memory_overhead_gb",)

Key = tuple[str, str, str | None, str]  # model slug, GPU slug, MIG profile, weight precision

FINGERPRINT = select(func.count(), func.max(Calibration.id)).select_from(Calibration)


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
    family: str | None
    params_total: int


@dataclass(frozen=True)
class CalibrationSnapshot:
    fingerprint: tuple[Any, ...]
    catalog_serial: int
    newest: Mapping[Key, CalibrationRecord]
    models: Mapping[str, ModelFacts]
    loaded_at: float
    serial: int

    @property
    def in_use(self) -> frozenset[int]:
        return frozenset(record.id for record in self.newest.values())


EMPTY = CalibrationSnapshot((), -1, {}, {}, -math.inf, 0)


class CalibrationCache:
    """One worker's copy of the newest calibration per planning key."""

    def __init__(self, engine: Engine, sessions: sessionmaker[Session], outage: Outage | None = None) -> None:
        self._engine = engine
        self._sessions = sessions
        self._snapshot: CalibrationSnapshot | None = None
        self._loads = 0
        self._checked_at = -math.inf
        # Shared with the catalog copy (the same database): one failed check per request at most.
        self.outage = outage or Outage()

    def get(self, catalog_serial: int) -> CalibrationSnapshot:
        started = time.monotonic()
        snapshot = self._snapshot
        fresh = snapshot is not None and snapshot.catalog_serial == catalog_serial
        if fresh and started - self._checked_at < CHECK_INTERVAL_S:
            assert snapshot is not None
            return snapshot
        if snapshot is not None and self.outage.waiting(started):
            return snapshot
        try:
            with self._engine.connect() as connection:
                current = tuple(connection.execute(FINGERPRINT).one())
            self._checked_at = started
            if snapshot is None or not fresh or snapshot.fingerprint != current:
                with self._sessions() as db:
                    loaded = self._load(db, current, catalog_serial, self._loads + 1)
                self._loads += 1
                snapshot = self._snapshot = loaded
        except SQLAlchemyError as exc:
            if snapshot is None:
                raise
            self.outage.failed(time.monotonic(), exc, "calibrations")
            return snapshot
        self.outage.ended("calibrations")
        return snapshot

    def invalidate(self) -> None:
        self._snapshot = None

    @staticmethod
    def _load(db: Session, current: tuple[Any, ...], catalog_serial: int, serial: int) -> CalibrationSnapshot:
        newest: dict[Key, CalibrationRecord] = {}
        for row in store.list_calibrations(db):  # oldest first: the newest of a key wins
            record = CalibrationRecord.of(row)
            newest[record.key] = record
        facts = {
            slug: ModelFacts(family, params)
            for slug, family, params in db.execute(select(Model.slug, Model.family, Model.params_total))
        }
        return CalibrationSnapshot(current, catalog_serial, newest, facts, time.monotonic(), serial)


def calibration_cache(app: Flask | None = None) -> CalibrationCache:
    extension = (app or current_app).extensions[EXTENSION]
    cache: CalibrationCache | None = extension.get(CACHE_KEY)
    if cache is None:
        outage = catalog_cache(app).outage
        cache = extension[CACHE_KEY] = CalibrationCache(extension["engine"], extension["sessionmaker"], outage)
    return cache


def stale_notes() -> list[str]:
    """What an answer planned while the database is unreachable says about it."""
    note = stale_note()
    if note is None:
        return []
    observability.STALE_ANSWERS.inc()
    return [note]


def outage_key() -> tuple[Any, ...]:
    """Part of a remembered answer's key: an answer given during an outage carries its note."""
    return (stale_note(),)


def invalidate_calibration_cache(app: Flask | None = None) -> None:
    """Drop this worker's copy at once (after committing a calibration write)."""
    calibration_cache(app).invalidate()


def calibrations() -> CalibrationSnapshot:
    """The copy for the whole request. A database without the table (a schema behind its
    migrations, which /readyz reports) plans on datasheet figures rather than failing."""
    if "calibration_snapshot" not in g:
        try:
            g.calibration_snapshot = calibration_cache().get(catalog().serial)
        except SQLAlchemyError as exc:
            log.warning("calibrations unavailable, planning on datasheet figures: %s", exc.__class__.__name__)
            g.calibration_snapshot = EMPTY
    snapshot: CalibrationSnapshot = g.calibration_snapshot
    return snapshot


def serial() -> int:
    """Numbers this worker's copies: part of the key of every remembered planning answer."""
    return calibrations().serial


# --------------------------------------------------------------------------- use in planning


@dataclass(frozen=True)
class Applied:
    """A request's planning inputs with the calibration's values put in."""

    inputs: PlanInputs
    record: CalibrationRecord | None = None
    fields_used: tuple[str, ...] = ()
    nearest: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def mape_percent(self) -> float | None:
        """The calibration's own error, when its efficiencies are in use (its error bars)."""
        if self.record is None or not any(name in EFFICIENCIES for name in self.fields_used):
            return None
        return self.record.mape_percent

    @property
    def basis(self) -> str:
        if self.record is None or not self.fields_used:
            return DATASHEET
        return NEAREST if self.nearest else EXACT

    def describe(self) -> dict[str, Any] | None:
        record = self.record
        if record is None or not self.fields_used:
            return None
        return {
            "id": record.id,
            "model": record.model,
            "match": "nearest" if self.nearest else "exact",
            "point_count": record.point_count,
            "mape_percent": record.mape_percent,
            "engine": {"name": record.engine, "version": record.engine_version},
            "tensor_parallel": record.tensor_parallel,
            "created_at": record.created_at,
            "memory_efficiency": record.memory_efficiency,
            "compute_efficiency": record.compute_efficiency,
            "memory_overhead_gb": record.memory_overhead_gb,
            "fields_used": list(self.fields_used),
        }


def given_fields() -> frozenset[str]:
    """The fields this request states itself (a request's own value wins over a calibration's);
    a blank query parameter counts as absent, as for the schemas."""
    if request.method == "GET":
        return frozenset(k for k in request.args if any(v.strip() for v in request.args.getlist(k)))
    body = request.get_json(silent=True)
    return frozenset(body) if isinstance(body, dict) else frozenset()


def _weight_precision(model: ModelSpec, gpu: GpuSpec, inputs: PlanInputs) -> str | None:
    """The precision plan_fit will resolve to, or None when it will refuse (and say why)."""
    try:
        target = resolve_target(gpu, inputs.mig_profile)
        return choose_weight_precision(inputs.weight_precision, model, target.gpu).weight_precision
    except ValueError:  # SizingError, UnknownPrecision: plan_fit names the field
        return None


def _nearest(snapshot: CalibrationSnapshot, model_slug: str, key: Key) -> CalibrationRecord | None:
    """The newest calibration of the closest-sized model of the same family on this target."""
    facts = snapshot.models.get(model_slug)
    if facts is None or facts.family is None:
        return None
    candidates = []
    for record in snapshot.newest.values():
        other = snapshot.models.get(record.model)
        if record.key[1:] != key[1:] or record.model == model_slug or other is None or other.family != facts.family:
            continue
        if record.memory_efficiency is None and record.compute_efficiency is None:
            continue
        candidates.append((abs(math.log(other.params_total / facts.params_total)), -record.id, record))
    return min(candidates, default=(None, None, None))[2]


def apply(model_value: object, gpu_value: object, inputs: PlanInputs, usable: Iterable[str] = ALL_FIELDS) -> Applied:
    """`inputs` with the matching calibration's values for the `usable` fields the request
    does not give itself; unchanged for inline models or GPUs (and without a GPU)."""
    if not isinstance(model_value, str) or not isinstance(gpu_value, str):
        return Applied(inputs)
    model, _ = resolve_model(model_value)
    gpu, _ = resolve_gpu(gpu_value)
    precision = _weight_precision(model, gpu, inputs)
    if precision is None:
        return Applied(inputs)
    snapshot = calibrations()
    key: Key = (model_value, gpu_value, inputs.mig_profile, precision)
    record = snapshot.newest.get(key)
    nearest = False
    if record is None:
        record = _nearest(snapshot, model_value, key)
        nearest = record is not None
    if record is None:
        return Applied(inputs)
    given = given_fields()
    changes: dict[str, Any] = {}
    used = []
    for name in usable:
        value = getattr(record, name)
        if value is None or OVERRIDES[name] in given or (nearest and name not in EFFICIENCIES):
            continue
        changes[OVERRIDES[name]] = value
        used.append(name)
    if any(name in EFFICIENCIES for name in used):
        # The efficiencies were fitted on the roofline alone: the engine's own step overheads
        # and kernel shares would count twice; and at the step budget they were measured under.
        changes["engine_timing"] = False
        if "max_batched_tokens" not in given:
            changes["max_batched_tokens"] = record.max_batched_tokens
    warnings = []
    if nearest and used:
        warnings.append(
            f"no calibration of {model_value} on {gpu_value}: the efficiencies of calibration {record.id} "
            f"({record.model}, the same family) are used"
        )
    return Applied(replace(inputs, **changes), record, tuple(used), nearest, tuple(warnings))


def annotate(body: dict[str, Any], applied: Applied | None, *, measured: bool = False) -> dict[str, Any]:
    """Say on a planning answer what its figures rest on: `basis` and `calibration`, and warn
    where the calibration was measured under other settings than the plan's."""
    body["basis"] = MEASURED if measured else DATASHEET if applied is None else applied.basis
    described = None if applied is None else applied.describe()
    body["calibration"] = described
    if isinstance(body.get("warnings"), list):
        body["warnings"].extend(stale_notes())
    if applied is not None and described is not None and isinstance(body.get("warnings"), list):
        record = applied.record
        assert record is not None
        warnings: list[str] = body["warnings"]
        warnings.extend(applied.warnings)
        tp = body.get("tensor_parallel", (body.get("replica") or {}).get("tensor_parallel"))
        if tp is not None and tp != record.tensor_parallel:
            warnings.append(
                f"calibration {record.id} was measured at tensor_parallel {record.tensor_parallel}, "
                f"this plan uses {tp}: its values are carried over"
            )
        kv = body.get("kv_precision", (body.get("replica") or {}).get("kv_precision"))
        if kv is not None and kv != record.kv_precision:
            warnings.append(
                f"calibration {record.id} was measured with a {record.kv_precision} KV cache, this plan uses {kv}"
            )
    return body


def annotate_fleet(body: dict[str, Any], applied: Applied, data: Mapping[str, Any]) -> dict[str, Any]:
    """annotate() for /v1/fleet: a measured per-replica rate is the basis when given, and a
    ranking over the catalog (no `gpu`) plans every option on datasheet figures, which it says
    when calibrations of the model exist."""
    annotate(body, applied, measured=data.get("per_replica_tokens_per_s") is not None)
    model = data.get("model")
    if data.get("gpu") is None and isinstance(model, str) and isinstance(body.get("warnings"), list):
        calibrated = sorted({r.gpu + (f" {r.mig_profile}" if r.mig_profile else "") for r in _of_model(model)})
        if calibrated:
            body["warnings"].append(
                "the ranking plans every option on datasheet efficiencies; calibrations of this model exist for "
                + ", ".join(calibrated)
                + ": pass gpu (and mig_profile) to plan with them"
            )
    return body


def _of_model(model_slug: str) -> list[CalibrationRecord]:
    return [record for record in calibrations().newest.values() if record.model == model_slug]
