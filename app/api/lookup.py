"""Catalog slugs to sizing specs. Inline objects arrive already parsed into specs.

Slugs resolve from a per-worker, in-memory copy of the catalog (every model and GPU as a
spec, the GPU list the whole-catalog ranking walks, and every engine profile), so planning
does no ORM work. The
copy is compared with the database's fingerprint of the catalog (one aggregate query) at
most every CHECK_INTERVAL_S, and at once when a request names a slug the copy lacks; a write
from any worker, replica or the CLI changes the fingerprint, and the worker reloads.

Measured under gunicorn (`make bench`, 2 workers): checking on every request cost planning
GETs 15 to 40 % of their requests/s (0.18 ms of a ~0.6 ms answer); once a second it costs
nothing measurable, for edits that reach the other workers up to a second later.

When that check or a reload fails with a database error and the worker has a copy, planning
goes on from the copy (`Outage`): the answer's `warnings` say since when, the
fleet_sizer_catalog_stale_answers_total metric counts it, and the next check waits twice as
long each time (CHECK_INTERVAL_S doubling up to DB_RETRY_MAX_S), so an outage does not cost
every request a connection timeout. The first check that succeeds ends it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flask import Flask, current_app, g
from sqlalchemy import Engine, func, literal, select, union_all
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from app import observability
from app.catalog import queries
from app.catalog.convert import engine_to_spec, gpu_to_spec, model_to_spec
from app.catalog.models import Engine as EngineRow
from app.catalog.models import Gpu, Model
from app.sizing.engine import IDEAL, EngineProfile
from app.sizing.specs import GpuSpec, ModelSpec

from .errors import ApiError

log = logging.getLogger(__name__)

EXTENSION = "fleet_sizer"
CACHE_KEY = "catalog_cache"
# A backstop only: on SQLite, timestamps have one-second resolution, so a delete and a
# re-insert at the same id within the second of the previous write could leave the
# fingerprint unchanged. Reloading a copy this old bounds how long such a case can last.
MAX_SNAPSHOT_AGE_S = 60.0
# How often a worker compares its copy with the database's fingerprint. A slug the copy
# does not know is always checked at once (so a new model is plannable everywhere on the
# next request); edits and deletions made through another worker or replica reach this one
# within this interval. The worker that writes drops its own copy at once.
CHECK_INTERVAL_S = 1.0
# The longest wait between checks while the database is unreachable (DB_RETRY_MAX_S).
DEFAULT_RETRY_MAX_S = 30.0


class Outage:
    """A worker's view of a database it cannot reach: since when, and when to try again.

    Each failed check doubles the wait before the next one (from CHECK_INTERVAL_S up to
    `retry_max_s`); until then the copy is served without asking the database."""

    def __init__(self, retry_max_s: float = DEFAULT_RETRY_MAX_S) -> None:
        self.retry_max_s = retry_max_s
        self.since: datetime | None = None
        self.failures = 0
        self.retry_at = -math.inf

    def failed(self, now: float, exc: BaseException, what: str) -> None:
        if self.since is None:
            self.since = datetime.now(UTC)
            log.warning("database unreachable, %s served from memory: %s", what, exc.__class__.__name__)
        self.failures += 1
        self.retry_at = now + min(CHECK_INTERVAL_S * 2 ** (self.failures - 1), self.retry_max_s)

    def ended(self, what: str) -> None:
        if self.since is not None:
            log.warning("database reachable again, %s reloaded from it", what)
        self.since = None
        self.failures = 0
        self.retry_at = -math.inf

    def waiting(self, now: float) -> bool:
        return self.since is not None and now < self.retry_at

    def note(self, what: str) -> str | None:
        if self.since is None:
            return None
        since = self.since.isoformat(timespec="seconds").replace("+00:00", "Z")
        return f"{what} served from memory: the database is unreachable since {since}"


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


FINGERPRINT = union_all(_table_fingerprint(Model), _table_fingerprint(Gpu), _table_fingerprint(EngineRow))


@dataclass(frozen=True)
class CatalogSnapshot:
    """Every model, GPU and engine profile as specs, as of `fingerprint`."""

    fingerprint: tuple[Any, ...]
    models: Mapping[str, ModelSpec]
    gpus: Mapping[str, GpuSpec]
    # The whole-catalog /v1/fleet ranking walks this, in slug order.
    gpu_list: tuple[tuple[str, GpuSpec], ...]
    loaded_at: float
    # Counts this worker's loads: what anything derived from the copy is keyed by.
    serial: int
    # By name, in name order.
    engines: Mapping[str, EngineProfile]


class CatalogCache:
    """One worker's copy of the catalog (the specs are frozen, so requests share them)."""

    def __init__(
        self, engine: Engine, sessions: sessionmaker[Session], retry_max_s: float = DEFAULT_RETRY_MAX_S
    ) -> None:
        self._engine = engine
        self._sessions = sessions
        self._snapshot: CatalogSnapshot | None = None
        self._loads = 0
        self._checked_at = -math.inf
        self.outage = Outage(retry_max_s)

    def fingerprint(self) -> tuple[Any, ...]:
        """One round trip: per table, the row count, the sum of versions, the largest id and
        the newest updated_at. On a Core connection, not an ORM session: about 180 us on
        SQLite against about 300 us, and still seen by SQLAlchemy's events and logging."""
        with self._engine.connect() as connection:
            return tuple(tuple(row) for row in connection.execute(FINGERPRINT))

    def get(self, *, recheck: bool = False) -> tuple[CatalogSnapshot, bool]:
        """The copy, and whether it was compared with the database just now."""
        started = time.monotonic()
        snapshot = self._snapshot
        if snapshot is not None and not recheck and started - self._checked_at < CHECK_INTERVAL_S:
            return snapshot, False
        if snapshot is not None and self.outage.waiting(started):
            return snapshot, True
        try:
            # The fingerprint is read before the rows: a write landing in between makes the copy
            # newer than its fingerprint, which costs one more reload, never a stale copy.
            current = self.fingerprint()
            self._checked_at = started
            if snapshot is None or snapshot.fingerprint != current or started - snapshot.loaded_at > MAX_SNAPSHOT_AGE_S:
                with self._sessions() as db:
                    loaded = self._load(db, current, self._loads + 1)
                self._loads += 1
                snapshot = self._snapshot = loaded
        except SQLAlchemyError as exc:
            if snapshot is None:
                raise
            self.outage.failed(time.monotonic(), exc, "catalog")
            return snapshot, True
        self.outage.ended("catalog")
        return snapshot, True

    def invalidate(self) -> None:
        self._snapshot = None

    @staticmethod
    def _load(db: Session, current: tuple[Any, ...], serial: int) -> CatalogSnapshot:
        models = {row.slug: model_to_spec(row) for row in queries.list_models(db)}
        gpu_list = tuple((row.slug, gpu_to_spec(row)) for row in queries.list_gpus(db))
        engines = {row.name: engine_to_spec(row) for row in queries.list_engines(db)}
        observability.catalog_loaded(models=len(models), gpus=len(gpu_list), engines=len(engines))
        return CatalogSnapshot(current, models, dict(gpu_list), gpu_list, time.monotonic(), serial, engines)


def catalog_cache(app: Flask | None = None) -> CatalogCache:
    extension = (app or current_app).extensions[EXTENSION]
    cache: CatalogCache | None = extension.get(CACHE_KEY)
    if cache is None:
        retry_max_s = extension["config"].db_retry_max_s if "config" in extension else DEFAULT_RETRY_MAX_S
        cache = extension[CACHE_KEY] = CatalogCache(extension["engine"], extension["sessionmaker"], retry_max_s)
    return cache


def stale_note() -> str | None:
    """The warning an answer planned on the copy carries while the database is unreachable."""
    return catalog_cache().outage.note("catalog")


def invalidate_catalog_cache(app: Flask | None = None) -> None:
    """Drop this worker's copy at once (call after committing a catalog write); the other
    workers see the changed fingerprint on their next request."""
    catalog_cache(app).invalidate()


def catalog(*, recheck: bool = False) -> CatalogSnapshot:
    """The catalog as specs, for the whole request; `recheck` compares it with the database
    now unless this request already did."""
    if "catalog_snapshot" not in g or (recheck and not g.catalog_checked):
        g.catalog_snapshot, g.catalog_checked = catalog_cache().get(recheck=recheck)
    snapshot: CatalogSnapshot = g.catalog_snapshot
    return snapshot


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
    spec = catalog().models.get(value) or catalog(recheck=True).models.get(value)
    if spec is None:
        raise ApiError(404, f"unknown model {value!r}: see GET /v1/models", {"model": [f"unknown model {value!r}"]})
    return spec, value


def resolve_gpu(value: str | GpuSpec) -> tuple[GpuSpec, str]:
    if isinstance(value, GpuSpec):
        return value, value.name
    spec = catalog().gpus.get(value) or catalog(recheck=True).gpus.get(value)
    if spec is None:
        raise ApiError(404, f"unknown GPU {value!r}: see GET /v1/gpus", {"gpu": [f"unknown GPU {value!r}"]})
    return spec, value


def catalog_gpus() -> list[tuple[str, GpuSpec]]:
    """Every catalog GPU as (slug, spec), by slug: what the whole-catalog ranking walks."""
    return list(catalog().gpu_list)


def _unknown_engine(name: str) -> ApiError:
    known = ", ".join((IDEAL, *catalog().engines))
    message = f"unknown engine {name!r}: known are {known}"
    return ApiError(422, f"{message} (see GET /v1/engines)", {"engine": [message]})


def resolve_engine(name: str) -> EngineProfile | None:
    """A planning request's `engine`: None for `ideal` (the roofline alone), else the
    catalog's profile. An unknown name is an invalid field value (422 naming `engine`), not a
    missing resource: the request names no engine path."""
    if name == IDEAL:
        return None
    profile = catalog().engines.get(name) or catalog(recheck=True).engines.get(name)
    if profile is None:
        raise _unknown_engine(name)
    return profile


def catalog_engines() -> list[tuple[str, EngineProfile]]:
    """Every catalog engine profile as (name, profile), by name (`ideal` is not one)."""
    return list(catalog().engines.items())
