"""Read-only catalog: models and GPUs (with their MIG profiles)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from app.catalog import queries
from app.catalog.convert import gpu_to_dict, model_to_dict

from .errors import ApiError
from .lookup import session
from .render import respond

bp = Blueprint("catalog", __name__, url_prefix="/v1")


def _listing(items: list[dict[str, Any]], rows: list[dict[str, Any]]) -> Response:
    return respond({"items": items, "total": len(items)}, rows=rows)


@bp.get("/models")
def list_models() -> Response:
    """Every model in the catalog."""
    items = [model_to_dict(row) for row in queries.list_models(session())]
    return _listing(items, items)


@bp.get("/models/<slug>")
def get_model(slug: str) -> Response:
    """One model by slug."""
    row = queries.get_model(session(), slug)
    if row is None:
        raise ApiError(404, f"unknown model {slug!r}: see GET /v1/models", {"slug": [f"unknown model {slug!r}"]})
    return respond(model_to_dict(row))


def _gpu_row(gpu: dict[str, Any]) -> dict[str, Any]:
    """A GPU as one CSV row: its MIG profiles by name in one cell."""
    return {**gpu, "mig_profiles": [p["name"] for p in gpu["mig_profiles"]]}


@bp.get("/gpus")
def list_gpus() -> Response:
    """Every GPU in the catalog, with its MIG profiles."""
    items = [gpu_to_dict(row) for row in queries.list_gpus(session())]
    return _listing(items, [_gpu_row(g) for g in items])


@bp.get("/gpus/<slug>")
def get_gpu(slug: str) -> Response:
    """One GPU by slug, with its MIG profiles."""
    row = queries.get_gpu(session(), slug)
    if row is None:
        raise ApiError(404, f"unknown GPU {slug!r}: see GET /v1/gpus", {"slug": [f"unknown GPU {slug!r}"]})
    gpu = gpu_to_dict(row)
    return respond(gpu, rows=[_gpu_row(gpu)])
