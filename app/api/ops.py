"""Liveness and readiness for load balancers and Kubernetes probes."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.catalog import queries

from .errors import problem
from .lookup import EXTENSION, session

bp = Blueprint("ops", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    """The process is up; touches nothing."""
    return jsonify(status="ok")


@bp.get("/livez")
def livez() -> Response:
    """Alias of /healthz for Kubernetes liveness probes."""
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz() -> Response:
    """Database reachable, schema at the migrations' head, catalog loaded."""
    head = current_app.extensions[EXTENSION]["schema_head"]
    try:
        db = session()
        db.execute(text("SELECT 1"))
        current = db.execute(text("SELECT version_num FROM alembic_version")).scalar()
        counts = queries.catalog_counts(db)
    except SQLAlchemyError as exc:
        return problem(503, f"database not ready: {exc.__class__.__name__}", checks={"database": "unreachable"})
    if current != head:
        return problem(
            503,
            f"schema at {current!r}, migrations head is {head!r}: run migrations",
            checks={"database": "ok", "schema": "behind"},
        )
    if not counts["models"] or not counts["gpus"]:
        return problem(503, "catalog is empty: seed it", checks={"database": "ok", "schema": "ok", "catalog": "empty"})
    return jsonify(status="ready", schema=current, catalog=counts)
