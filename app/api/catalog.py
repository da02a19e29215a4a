"""The catalog: models, GPUs (with their MIG profiles) and serving-engine profiles, listed,
read, written; models imported too.

Reads are open. Writes need a bearer token (auth.py) and, on an existing row, `If-Match`
with the row's ETag (`"<version>"`): 428 without it, 412 when it is stale, and the same 412
when another writer commits first (the version check in the UPDATE). Every write commits
here, in the view; the query and write functions never do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from flask import Blueprint, Response, request, url_for
from marshmallow import Schema
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.catalog import hf_import, queries, writes
from app.catalog.convert import MODEL_PUBLIC_FIELDS, engine_to_dict, gpu_to_dict, model_to_dict
from app.catalog.db import begin_write
from app.catalog.models import Engine, Gpu, Model

from .auth import add_challenge, require_token
from .catalog_schemas import (
    EngineListQuery,
    EngineReplaceSchema,
    EngineWriteSchema,
    GpuListQuery,
    GpuReplaceSchema,
    GpuWriteSchema,
    ImportSchema,
    ModelListQuery,
    ModelReplaceSchema,
    ModelWriteSchema,
)
from .errors import ApiError
from .lookup import invalidate_catalog_cache, session
from .render import JSON, respond, wants
from .requests import json_payload, query_args

bp = Blueprint("catalog", __name__, url_prefix="/v1")
bp.after_request(add_challenge)

# An import body may carry a whole checkpoint's safetensors headers (DeepSeek-V3's 163
# shards run to ~10 MB), so it gets its own cap above the service-wide one.
IMPORT_MAX_BODY_BYTES = hf_import.MAX_HEADER_BYTES + 1024 * 1024


# --------------------------------------------------------------------------- helpers


def _writer() -> Session:
    """The request's session, its transaction opened for writing (see db.begin_write)."""
    db = session()
    begin_write(db)
    return db


def _unknown_model(slug: str) -> ApiError:
    return ApiError(404, f"unknown model {slug!r}: see GET /v1/models", {"slug": [f"unknown model {slug!r}"]})


def _unknown_gpu(slug: str) -> ApiError:
    return ApiError(404, f"unknown GPU {slug!r}: see GET /v1/gpus", {"slug": [f"unknown GPU {slug!r}"]})


def _unknown_engine(name: str) -> ApiError:
    return ApiError(404, f"unknown engine {name!r}: see GET /v1/engines", {"name": [f"unknown engine {name!r}"]})


def _body() -> dict[str, Any]:
    return json_payload(hint="")


def _query(schema: Schema) -> dict[str, Any]:
    """Query parameters through a filter schema (unknown or repeated names are a 422)."""
    loaded: dict[str, Any] = schema.load(query_args(schema))
    return loaded


def _etag(response: Response, version: int) -> Response:
    """A strong ETag on the JSON representation (CSV is another representation)."""
    if response.mimetype == JSON:
        response.set_etag(str(version))
    return response


def _require_if_match(version: int, what: str) -> None:
    """RFC 9110 §13.1.1 with strong comparison; `*` is refused (it cannot prevent a lost update)."""
    if "If-Match" not in request.headers:
        raise ApiError(
            428,
            f'send If-Match with the ETag of GET {request.path} (If-Match: "{version}") to change {what}',
            {"If-Match": ["required"]},
        )
    if request.if_match.star_tag:
        raise ApiError(428, "If-Match: * does not guard against lost updates: send the ETag", {"If-Match": ["*"]})
    if not request.if_match.contains(str(version)):
        raise ApiError(
            412,
            f'{what} has changed since that ETag: GET it again (current ETag "{version}") and reapply the change',
            {"If-Match": ["stale"]},
        )


def _commit(db: Session, what: str, key: str = "slug") -> None:
    try:
        db.commit()
    except StaleDataError:
        db.rollback()
        raise ApiError(
            412, f"{what} was changed by another request meanwhile: GET it again and retry", {"If-Match": ["stale"]}
        ) from None
    except IntegrityError:
        db.rollback()
        raise ApiError(409, f"{what} conflicts with a stored row", {key: ["already in the catalog"]}) from None
    invalidate_catalog_cache()  # this worker's planning copy at once; other workers see the fingerprint change


def merge_patch(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 7396 JSON merge patch, except that null sets a field to null (unknown), which is
    what removing it means in this catalog."""
    merged = dict(target)
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_patch(merged[key], value)
        else:
            merged[key] = value
    return merged


def _editable(document: dict[str, Any], key: str = "slug") -> dict[str, Any]:
    """A stored document less its identifier and its version: what a PATCH merges into."""
    return {name: value for name, value in document.items() if name not in (key, "version")}


# --------------------------------------------------------------------------- models


def _listing(items: list[dict[str, Any]], rows: list[dict[str, Any]], total: int, query: dict[str, Any]) -> Response:
    body = {"items": items, "total": total, "limit": query["limit"], "offset": query["offset"]}
    return respond(body, rows=rows)


@bp.get("/models")
def list_models() -> Response:
    """Models, filtered by family, attention kind, MoE and size, one page at a time."""
    wants()  # a bad ?format= is the first thing to report
    query = _query(ModelListQuery())
    rows, total = queries.filter_models(session(), **query)
    items = [model_to_dict(row) for row in rows]
    return _listing(items, items, total, query)


@bp.get("/models/<slug>")
def get_model(slug: str) -> Response:
    """One model by slug, with its ETag."""
    row = queries.get_model(session(), slug)
    if row is None:
        raise _unknown_model(slug)
    return _etag(respond(model_to_dict(row)), row.version)


def _model_answer(row: Model, status: int = 200) -> Response:
    return _etag(respond(model_to_dict(row), status=status), row.version)


def store_new_model(db: Session, values: dict[str, Any]) -> Model:
    """Insert a validated model (409 when its slug is taken) and commit."""
    if queries.get_model(db, values["slug"]) is not None:
        raise ApiError(409, f"model {values['slug']!r} already exists: PUT or PATCH it", {"slug": ["already exists"]})
    row = writes.new_model(values)
    db.add(row)
    _commit(db, f"model {values['slug']!r}")
    return row


def _created(
    row: Model | Gpu | Engine, endpoint: str, body: dict[str, Any], rows: list[dict[str, Any]] | None = None
) -> Response:
    response = respond(body, rows=rows, status=201)
    if isinstance(row, Engine):
        response.headers["Location"] = url_for(endpoint, name=row.name)
    else:
        response.headers["Location"] = url_for(endpoint, slug=row.slug)
    return _etag(response, row.version)


@bp.post("/models")
@require_token
def create_model() -> Response:
    """Add a model to the catalog."""
    values = ModelWriteSchema().load(_body())
    row = store_new_model(_writer(), values)
    return _created(row, "catalog.get_model", model_to_dict(row))


def _update_model(slug: str, document: Callable[[Model], dict[str, Any]]) -> Response:
    db = _writer()
    row = queries.get_model(db, slug)
    if row is None:
        raise _unknown_model(slug)
    _require_if_match(row.version, f"model {slug!r}")
    values = ModelReplaceSchema().load(document(row))
    writes.update_model(row, values)
    _commit(db, f"model {slug!r}")
    return _model_answer(row)


@bp.put("/models/<slug>")
@require_token
def replace_model(slug: str) -> Response:
    """Replace a model's document (If-Match required); omitted optional fields become null."""
    body = _body()
    return _update_model(slug, lambda _row: body)


@bp.patch("/models/<slug>")
@require_token
def patch_model(slug: str) -> Response:
    """Change some of a model's fields (JSON merge patch; If-Match required)."""
    patch = _body()
    return _update_model(slug, lambda row: merge_patch(_editable(model_to_dict(row)), patch))


@bp.delete("/models/<slug>")
@require_token
def delete_model(slug: str) -> Response:
    """Remove a model (If-Match required)."""
    db = _writer()
    row = queries.get_model(db, slug)
    if row is None:
        raise _unknown_model(slug)
    _require_if_match(row.version, f"model {slug!r}")
    db.delete(row)
    _commit(db, f"model {slug!r}")
    return Response(status=204)


# --------------------------------------------------------------------------- import


_NOT_SLUG = re.compile(r"[^a-z0-9.-]+")


def _slug_from_repo(repo: str | None) -> str | None:
    if not repo:
        return None
    slug = _NOT_SLUG.sub("-", repo.rsplit("/", 1)[-1].lower()).strip("-.")
    return slug[:100] or None


def _config_error(exc: hf_import.HFConfigError) -> ApiError:
    field = f"config.{exc.field}" if exc.field else "config"
    return ApiError(422, f"{field}: {exc.message}", {field: [exc.message]})


def _header_error(exc: hf_import.HeaderError) -> ApiError:
    field = f"safetensors_header.{exc.path}" if exc.path else "safetensors_header"
    return ApiError(413 if exc.too_large else 422, f"{field}: {exc.message}", {field: [exc.message]})


def prepare_import(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(validated model columns, derivation report) for an ImportSchema payload.

    Shared by POST /v1/models/import and `flask import-model`; raises ApiError or
    marshmallow's ValidationError naming the field at fault.
    """
    try:
        derived = hf_import.derive(data["config"])
    except hf_import.HFConfigError as exc:
        raise _config_error(exc) from None
    summary = None
    if data.get("safetensors_header") is not None:
        try:
            summary = hf_import.summarise_header(data["safetensors_header"], layers=derived.layers)
        except hf_import.HeaderError as exc:
            raise _header_error(exc) from None
    notes = list(derived.assumptions)
    params_total = derived.params_total if summary is None else summary.params_total
    if summary is not None and abs(summary.params_total / derived.params_total - 1) > 0.005:
        notes.append(
            f"the header holds {summary.params_total} parameters, the config implies {derived.params_total}: "
            "the header's exact count is stored"
        )
    # Header dtypes, else the config's ignore lists; the notes say which (and any disagreement).
    quantized_components, quantization_notes = hf_import.settle_quantized_components(derived, summary)
    notes.extend(quantization_notes)
    hf_repo = data.get("hf_repo") or derived.hf_repo
    slug = data.get("slug") or _slug_from_repo(hf_repo)
    counted = "exact, from the safetensors header" if summary else "computed from the config fields"
    document = {
        **derived.catalog_fields(params_total),
        "quantized_components": quantized_components,
        "hf_repo": hf_repo,
        "name": data.get("name") or (hf_repo.rsplit("/", 1)[-1] if hf_repo else slug) or "imported model",
        "source": data.get("source")
        or f"{hf_repo + ' ' if hf_repo else ''}config.json, derived by the Hugging Face import; params_total {counted}",
        "notes": "; ".join(notes) or None,
    }
    if slug is None and not data.get("dry_run"):
        raise ApiError(422, "slug: required, the config names no repository", {"slug": ["required"]})
    if slug is not None:
        values = ModelWriteSchema().load({**document, "slug": slug})
    else:
        values = {**ModelReplaceSchema().load(document), "slug": None}
    report = {
        "family": derived.family,
        "params_total_from_config": derived.params_total,
        "params": {**asdict(derived.params), "total": derived.params_total},
        "kv_bytes_per_token": derived.kv_bytes_per_token,
        "assumptions": notes,
        "safetensors": summary.as_dict() if summary else None,
    }
    return values, report


def _too_big_header(header: Any) -> bool:
    if request.content_length is not None and request.content_length <= hf_import.MAX_HEADER_BYTES:
        return False
    return len(json.dumps(header, separators=(",", ":"))) > hf_import.MAX_HEADER_BYTES


@bp.post("/models/import")
@require_token
def import_model() -> Response:
    """Derive a model from a Hugging Face config.json (and safetensors headers); store it
    unless dry_run."""
    request.max_content_length = IMPORT_MAX_BODY_BYTES
    data = ImportSchema().load(_body())
    if data["safetensors_header"] is not None and _too_big_header(data["safetensors_header"]):
        message = f"over {hf_import.MAX_HEADER_BYTES} bytes"
        raise ApiError(413, f"safetensors_header: {message}", {"safetensors_header": [message]})
    values, report = prepare_import(data)
    if data["dry_run"]:
        model = {field: values.get(field) for field in MODEL_PUBLIC_FIELDS}
        return respond({"stored": False, "model": model, "derivation": report})
    row = store_new_model(_writer(), values)
    return _created(row, "catalog.get_model", {"stored": True, "model": model_to_dict(row), "derivation": report})


# --------------------------------------------------------------------------- GPUs


def _gpu_row(gpu: dict[str, Any]) -> dict[str, Any]:
    """A GPU as one CSV row: its MIG profiles by name in one cell."""
    return {**gpu, "mig_profiles": [p["name"] for p in gpu["mig_profiles"]]}


@bp.get("/gpus")
def list_gpus() -> Response:
    """GPUs with their MIG profiles, filtered by vendor, memory and MIG, one page at a time."""
    wants()
    query = _query(GpuListQuery())
    rows, total = queries.filter_gpus(session(), **query)
    items = [gpu_to_dict(row) for row in rows]
    return _listing(items, [_gpu_row(g) for g in items], total, query)


def _gpu_answer(row: Gpu, status: int = 200) -> Response:
    gpu = gpu_to_dict(row)
    return _etag(respond(gpu, rows=[_gpu_row(gpu)], status=status), row.version)


@bp.get("/gpus/<slug>")
def get_gpu(slug: str) -> Response:
    """One GPU by slug, with its MIG profiles and its ETag."""
    row = queries.get_gpu(session(), slug)
    if row is None:
        raise _unknown_gpu(slug)
    return _gpu_answer(row)


@bp.post("/gpus")
@require_token
def create_gpu() -> Response:
    """Add a GPU (and its MIG profiles) to the catalog."""
    values = GpuWriteSchema().load(_body())
    db = _writer()
    if queries.get_gpu(db, values["slug"]) is not None:
        raise ApiError(409, f"GPU {values['slug']!r} already exists: PUT or PATCH it", {"slug": ["already exists"]})
    row = writes.new_gpu(values)
    db.add(row)
    _commit(db, f"GPU {values['slug']!r}")
    return _created(row, "catalog.get_gpu", gpu_to_dict(row))


def _update_gpu(slug: str, document: Callable[[Gpu], dict[str, Any]]) -> Response:
    db = _writer()
    row = queries.get_gpu(db, slug)
    if row is None:
        raise _unknown_gpu(slug)
    _require_if_match(row.version, f"GPU {slug!r}")
    values = GpuReplaceSchema().load(document(row))
    writes.update_gpu(row, values)
    _commit(db, f"GPU {slug!r}")
    return _gpu_answer(row)


@bp.put("/gpus/<slug>")
@require_token
def replace_gpu(slug: str) -> Response:
    """Replace a GPU's document, MIG profiles included (If-Match required)."""
    body = _body()
    return _update_gpu(slug, lambda _row: body)


@bp.patch("/gpus/<slug>")
@require_token
def patch_gpu(slug: str) -> Response:
    """Change some of a GPU's fields (JSON merge patch; `mig_profiles` is replaced whole)."""
    patch = _body()
    return _update_gpu(slug, lambda row: merge_patch(_editable(gpu_to_dict(row)), patch))


@bp.delete("/gpus/<slug>")
@require_token
def delete_gpu(slug: str) -> Response:
    """Remove a GPU and its MIG profiles (If-Match required)."""
    db = _writer()
    row = queries.get_gpu(db, slug)
    if row is None:
        raise _unknown_gpu(slug)
    _require_if_match(row.version, f"GPU {slug!r}")
    db.delete(row)
    _commit(db, f"GPU {slug!r}")
    return Response(status=204)


# --------------------------------------------------------------------------- engines


def engine_row(engine: dict[str, Any]) -> dict[str, Any]:
    """An engine as one CSV row of fixed columns: the efficiencies as parallel lists (one
    cell per field, ` | ` between architectures), each uncertainty range as `low | high`,
    the row counts and fitted_on as `key=value` lists."""
    efficiencies = engine["efficiencies"]
    uncertainty = engine["uncertainty"]
    row = {key: value for key, value in engine.items() if key not in ("efficiencies", "uncertainty", "fitted_on")}
    for field in ("architecture", "memory", "compute", "moe_memory"):
        row[f"efficiencies_{field}"] = [e[field] for e in efficiencies]
    for field, value in uncertainty.items():
        row[f"uncertainty_{field}"] = [f"{k}={v}" for k, v in value.items()] if field == "rows" else value
    row["fitted_on"] = [f"{k}={v}" for k, v in engine["fitted_on"].items()]
    return row


@bp.get("/engines")
def list_engines() -> Response:
    """Serving-engine profiles (vLLM, SGLang, TensorRT-LLM), by name, one page at a time."""
    wants()
    query = _query(EngineListQuery())
    rows, total = queries.filter_engines(session(), **query)
    items = [engine_to_dict(row) for row in rows]
    return _listing(items, [engine_row(e) for e in items], total, query)


def _engine_answer(row: Engine, status: int = 200) -> Response:
    engine = engine_to_dict(row)
    return _etag(respond(engine, rows=[engine_row(engine)], status=status), row.version)


@bp.get("/engines/<name>")
def get_engine(name: str) -> Response:
    """One engine profile by name, with its ETag."""
    row = queries.get_engine(session(), name)
    if row is None:
        raise _unknown_engine(name)
    return _engine_answer(row)


@bp.post("/engines")
@require_token
def create_engine() -> Response:
    """Add an engine profile to the catalog."""
    values = EngineWriteSchema().load(_body())
    db = _writer()
    if queries.get_engine(db, values["name"]) is not None:
        raise ApiError(409, f"engine {values['name']!r} already exists: PUT or PATCH it", {"name": ["already exists"]})
    row = writes.new_engine(values)
    db.add(row)
    _commit(db, f"engine {values['name']!r}", key="name")
    engine = engine_to_dict(row)
    return _created(row, "catalog.get_engine", engine, rows=[engine_row(engine)])


def _update_engine(name: str, document: Callable[[Engine], dict[str, Any]]) -> Response:
    db = _writer()
    row = queries.get_engine(db, name)
    if row is None:
        raise _unknown_engine(name)
    _require_if_match(row.version, f"engine {name!r}")
    values = EngineReplaceSchema().load(document(row))
    writes.update_engine(row, values)
    _commit(db, f"engine {name!r}", key="name")
    return _engine_answer(row)


@bp.put("/engines/<name>")
@require_token
def replace_engine(name: str) -> Response:
    """Replace an engine profile (If-Match required); omitted constants take their defaults."""
    body = _body()
    return _update_engine(name, lambda _row: body)


@bp.patch("/engines/<name>")
@require_token
def patch_engine(name: str) -> Response:
    """Change some of an engine's fields (JSON merge patch; `uncertainty` merges key by key,
    `efficiencies` is replaced whole; If-Match required)."""
    patch = _body()
    return _update_engine(name, lambda row: merge_patch(_editable(engine_to_dict(row), "name"), patch))


@bp.delete("/engines/<name>")
@require_token
def delete_engine(name: str) -> Response:
    """Remove an engine profile (If-Match required); planning then refuses its name."""
    db = _writer()
    row = queries.get_engine(db, name)
    if row is None:
        raise _unknown_engine(name)
    _require_if_match(row.version, f"engine {name!r}")
    db.delete(row)
    _commit(db, f"engine {name!r}", key="name")
    return Response(status=204)
