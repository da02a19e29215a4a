"""The request's view of the database: its session, and the snapshots planning reads.

Each app (one per gunicorn worker) keeps two fingerprint caches (app/catalog/cache.py): the
catalog (every model, GPU and engine profile as specs, the GPU list the whole-catalog ranking
walks) and the newest calibration per planning key, which is also reloaded whenever the
catalog copy is (the model families and sizes the nearest match reads come from the catalog).
A request takes one snapshot of each, once, in `g`; `context()` hands them to the planning
services. A name the catalog copy lacks makes the request compare it with the database at
once, so a model added through another worker is plannable on the next request.

While the database is unreachable both copies are served, their shared `Outage` backs off the
checks, every planning answer with warnings says since when, and the
fleet_sizer_catalog_stale_answers_total metric counts those answers. A database without the
calibrations table (a schema behind its migrations, which /readyz reports) plans on datasheet
figures rather than failing.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, current_app, g
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app import observability
from app.catalog.cache import DEFAULT_RETRY_MAX_S, FingerprintCache, Outage
from app.catalog.snapshots import (
    CALIBRATION_FINGERPRINT,
    CATALOG_FINGERPRINT,
    MAX_SNAPSHOT_AGE_S,
    NO_CALIBRATIONS,
    CalibrationSnapshot,
    CatalogSnapshot,
    catalog_loader,
    load_calibrations,
)
from app.planning.context import Context
from app.sizing.engine import DEFAULT_ENGINE

log = logging.getLogger(__name__)

EXTENSION = "fleet_sizer"
CATALOG = "catalog_cache"
CALIBRATIONS = "calibration_cache"


def _count_entries(snapshot: CatalogSnapshot) -> None:
    observability.catalog_loaded(
        models=len(snapshot.models), gpus=len(snapshot.gpu_list), engines=len(snapshot.engines)
    )


def _caches(app: Flask | None = None) -> dict[str, Any]:
    """The app's two caches, made on first use (they share one Outage: one database)."""
    extension: dict[str, Any] = (app or current_app).extensions[EXTENSION]
    if CATALOG not in extension:
        config = extension.get("config")
        retry_max_s = config.db_retry_max_s if config is not None else DEFAULT_RETRY_MAX_S
        catalog_cache: FingerprintCache[CatalogSnapshot] = FingerprintCache(
            extension["engine"],
            extension["sessionmaker"],
            what="catalog",
            fingerprint=CATALOG_FINGERPRINT,
            load=catalog_loader(_count_entries),
            outage=Outage(retry_max_s),
            max_age_s=MAX_SNAPSHOT_AGE_S,
        )
        extension[CALIBRATIONS] = FingerprintCache(
            extension["engine"],
            extension["sessionmaker"],
            what="calibrations",
            fingerprint=CALIBRATION_FINGERPRINT,
            load=load_calibrations,
            outage=catalog_cache.outage,
        )
        extension[CATALOG] = catalog_cache
    return extension


def catalog_cache(app: Flask | None = None) -> FingerprintCache[CatalogSnapshot]:
    cache: FingerprintCache[CatalogSnapshot] = _caches(app)[CATALOG]
    return cache


def calibration_cache(app: Flask | None = None) -> FingerprintCache[CalibrationSnapshot]:
    cache: FingerprintCache[CalibrationSnapshot] = _caches(app)[CALIBRATIONS]
    return cache


def invalidate_catalog_cache(app: Flask | None = None) -> None:
    """Drop this worker's copy at once (call after committing a catalog write); the other
    workers see the changed fingerprint on their next check."""
    catalog_cache(app).invalidate()


def invalidate_calibration_cache(app: Flask | None = None) -> None:
    """Drop this worker's copy at once (after committing a calibration write)."""
    calibration_cache(app).invalidate()


def catalog(*, recheck: bool = False) -> CatalogSnapshot:
    """The catalog as specs, for the whole request; `recheck` compares it with the database
    now unless this request already did."""
    if "catalog_snapshot" not in g or (recheck and not g.catalog_checked):
        g.catalog_snapshot, g.catalog_checked = catalog_cache().get(recheck=recheck)
    snapshot: CatalogSnapshot = g.catalog_snapshot
    return snapshot


def calibrations() -> CalibrationSnapshot:
    """The calibrations for the whole request, reloaded with each new catalog copy."""
    if "calibration_snapshot" not in g:
        try:
            g.calibration_snapshot, _ = calibration_cache().get(depends_on=catalog().serial)
        except SQLAlchemyError as exc:
            log.warning("calibrations unavailable, planning on datasheet figures: %s", exc.__class__.__name__)
            g.calibration_snapshot = NO_CALIBRATIONS
    snapshot: CalibrationSnapshot = g.calibration_snapshot
    return snapshot


def stale_note() -> str | None:
    """The warning an answer planned on the copy carries while the database is unreachable."""
    return catalog_cache().outage.note("catalog")


def context() -> Context:
    """What this request's planning services plan with."""
    note = stale_note()
    if note is not None:
        observability.STALE_ANSWERS.inc()
    config = current_app.extensions[EXTENSION].get("config")
    return Context(
        catalog(),
        calibrations(),
        notes=() if note is None else (note,),
        refresh=lambda: catalog(recheck=True),
        default_engine=DEFAULT_ENGINE if config is None else config.default_engine,
    )


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
