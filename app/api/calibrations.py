"""/v1/calibrations: measured benchmark points and engine start-up logs in, fitted efficiencies
and memory overhead out, stored for planning to use (app/planning/calibration/basis.py).

Writes need a bearer token (auth.py). A calibration is computed whole before anything is
stored, and stored in one INSERT committed here: a refusal leaves nothing behind. Stored
calibrations are never changed, only added and deleted, so they carry no version.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request, url_for
from marshmallow import EXCLUDE, RAISE, Schema, ValidationError, fields, post_load, validate, validates_schema
from sqlalchemy.orm import Session

from app.catalog import calibrations as store
from app.catalog.db import begin_write
from app.catalog.models import SLUG_LENGTH, Calibration
from app.planning.calibration.fit import MAX_POINTS, METRICS, MeasuredPoint
from app.planning.calibration.startup_log import MAX_LOG_BYTES
from app.planning.calibration.store import calibration_row

from .auth import add_challenge, require_token
from .catalog_schemas import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET
from .errors import ApiError
from .lookup import calibrations, context, invalidate_calibration_cache, session
from .render import respond, wants
from .requests import json_payload, query_args
from .schemas import (
    MAX_CONCURRENCY,
    MAX_OUTPUT_TOKENS,
    MAX_PROMPT_TOKENS,
    Integer,
    _precision_validator,
    count,
    positive,
)

bp = Blueprint("calibrations", __name__, url_prefix="/v1")
bp.after_request(add_challenge)

# A 4 MiB log may grow in JSON (each newline, quote or ANSI colour escape takes more bytes).
MAX_BODY_BYTES = 2 * MAX_LOG_BYTES + 1024 * 1024
ENGINE_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
# Ids are 32-bit on every backend; a larger one names nothing (and must not reach the driver).
MAX_ID = 2**31 - 1


class EngineSchema(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(
        required=True,
        validate=[validate.Length(min=1, max=32), validate.Regexp(ENGINE_PATTERN, error="lowercase, like vllm")],
    )
    version = fields.String(allow_none=True, validate=validate.Length(min=1, max=64))


class PointSchema(Schema):
    """One benchmark point: the workload and any of the measured figures."""

    class Meta:
        unknown = RAISE

    concurrency = Integer(required=True, validate=count(1, MAX_CONCURRENCY))
    prompt_tokens = Integer(required=True, validate=count(1, MAX_PROMPT_TOKENS))
    output_tokens = Integer(required=True, validate=count(1, MAX_OUTPUT_TOKENS))
    tpot_ms = fields.Float(allow_none=True, validate=positive(1e7))
    itl_ms = fields.Float(allow_none=True, validate=positive(1e7))
    ttft_ms = fields.Float(allow_none=True, validate=positive(1e7))
    output_tokens_per_s = fields.Float(allow_none=True, validate=positive(1e9))

    @validates_schema
    def _measured(self, data: dict[str, Any], **_: Any) -> None:
        if all(data.get(metric) is None for metric in METRICS):
            raise ValidationError({"tpot_ms": ["give at least one of " + ", ".join(METRICS)]})

    @post_load
    def _point(self, data: dict[str, Any], **_: Any) -> MeasuredPoint:
        return MeasuredPoint(**data)


def _slug() -> fields.String:
    return fields.String(required=True, validate=validate.Length(min=1, max=SLUG_LENGTH))


class CalibrationCreateSchema(Schema):
    """POST /v1/calibrations: what was measured, on what, and how the engine was set up."""

    class Meta:
        unknown = RAISE

    model = _slug()
    gpu = _slug()
    mig_profile = fields.String(allow_none=True, validate=validate.Length(min=1, max=64))
    tensor_parallel = Integer(allow_none=True, validate=count(1, 1024))
    weight_precision = fields.String(allow_none=True, validate=_precision_validator("auto"))
    kv_precision = fields.String(load_default="bf16", validate=_precision_validator())
    engine = fields.Nested(EngineSchema, required=True)
    max_batched_tokens = Integer(load_default=2048, validate=count(1, MAX_PROMPT_TOKENS))
    gpu_memory_utilization = fields.Float(allow_none=True, validate=positive(1))
    points = fields.List(
        fields.Nested(PointSchema),
        load_default=list,
        validate=validate.Length(max=MAX_POINTS, error=f"at most {MAX_POINTS} points"),
    )
    startup_log = fields.String(allow_none=True, validate=validate.Length(min=1, max=MAX_LOG_BYTES))

    @validates_schema
    def _measured(self, data: dict[str, Any], **_: Any) -> None:
        errors: dict[str, list[str]] = {}
        if not data.get("points") and data.get("startup_log") is None:
            message = "give benchmark points, a startup_log, or both"
            errors = {"points": [message], "startup_log": [message]}
        log = data.get("startup_log")
        if log is not None and len(log.encode("utf-8", "surrogatepass")) > MAX_LOG_BYTES:
            errors["startup_log"] = [f"at most {MAX_LOG_BYTES} bytes (4 MiB) of UTF-8"]
        budget = data.get("max_batched_tokens", 2048)
        for index, point in enumerate(data.get("points") or []):
            if point.concurrency >= budget:
                errors[f"points.{index}.concurrency"] = [
                    f"must be below max_batched_tokens ({budget}): decodes alone would fill every step"
                ]
        if errors:
            raise ValidationError(errors)


class CalibrationListQuery(Schema):
    """GET /v1/calibrations filters (unknown names are refused before loading, app/api/requests.py)."""

    class Meta:
        unknown = EXCLUDE

    model = fields.String(validate=validate.Length(min=1, max=SLUG_LENGTH))
    gpu = fields.String(validate=validate.Length(min=1, max=SLUG_LENGTH))
    limit = Integer(load_default=DEFAULT_LIMIT, validate=count(1, MAX_LIMIT))
    offset = Integer(load_default=0, validate=count(0, MAX_OFFSET))


def _body() -> dict[str, Any]:
    return json_payload(hint="")


def _unknown(calibration_id: int) -> ApiError:
    return ApiError(
        404,
        f"no calibration {calibration_id}: see GET /v1/calibrations",
        {"calibration_id": [f"unknown calibration {calibration_id}"]},
    )


def _in_use(row: Calibration) -> bool:
    return row.id in calibrations().in_use


def _writer() -> Session:
    db = session()
    begin_write(db)
    return db


@bp.post("/calibrations")
@require_token
def create_calibration() -> Response:
    """Fit efficiencies to benchmark points and a memory overhead to a start-up log, and store them."""
    request.max_content_length = MAX_BODY_BYTES
    data = CalibrationCreateSchema().load(_body())
    row = calibration_row(data, context())
    db = _writer()
    db.add(row)
    db.commit()
    invalidate_calibration_cache()  # this worker plans with it at once; the others within a second
    db.refresh(row)
    # The newest row is the newest of its planning key: the one planning now uses.
    response = respond(store.calibration_to_dict(row, in_use=True), status=201)
    response.headers["Location"] = url_for("calibrations.get_calibration", calibration_id=row.id)
    return response


@bp.get("/calibrations")
def list_calibrations() -> Response:
    """Calibrations, newest first, filtered by model and GPU slug; one row each in CSV."""
    wants()
    schema = CalibrationListQuery()
    query = schema.load({k: v for k, v in query_args(schema).items() if v.strip()})
    rows, total = store.filter_calibrations(session(), **query)
    in_use = calibrations().in_use
    items = [store.calibration_to_dict(row, in_use=row.id in in_use, full=False) for row in rows]
    body = {"items": items, "total": total, "limit": query["limit"], "offset": query["offset"]}
    return respond(body, rows=items)


@bp.get("/calibrations/<int:calibration_id>")
def get_calibration(calibration_id: int) -> Response:
    """One calibration with its points, residuals, start-up log summary and warnings."""
    wants()
    row = store.get_calibration(session(), calibration_id) if calibration_id <= MAX_ID else None
    if row is None:
        raise _unknown(calibration_id)
    document = store.calibration_to_dict(row, in_use=_in_use(row))
    return respond(document, rows=[store.calibration_to_dict(row, in_use=_in_use(row), full=False)])


@bp.delete("/calibrations/<int:calibration_id>")
@require_token
def delete_calibration(calibration_id: int) -> Response:
    """Remove a calibration; planning falls back to the next newest of its key, or the datasheet."""
    db = _writer()
    row = store.get_calibration(db, calibration_id) if calibration_id <= MAX_ID else None
    if row is None:
        raise _unknown(calibration_id)
    db.delete(row)
    db.commit()
    invalidate_calibration_cache()
    return Response(status=204)
