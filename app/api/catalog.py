"""The catalog: models, GPUs (with their MIG profiles) and serving-engine profiles, listed,
read, written; models imported too.

Reads are open. Writes need a bearer token (auth.py) and, on an existing row, `If-Match`
with the row's ETag (`"<version>"`): 428 without it, 412 when it is stale, and the same 412
when another writer commits first (the version check in the UPDATE). Every write commits
here, in the view; the query and write functions never do.

The three kinds are served by one set of views: each kind is a `Kind` (its row functions,
schemas, document and CSV shape, messages), and `_register` gives it the same six routes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, current_app, request, url_for
from marshmallow import Schema
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.catalog import queries, writes
from app.catalog.convert import MODEL_PUBLIC_FIELDS, engine_to_dict, gpu_to_dict, model_to_dict
from app.catalog.db import begin_write
from app.catalog.safetensors_header import MAX_HEADER_BYTES
from app.planning import catalog_import, names

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
    load_model_columns,
)
from .errors import ApiError
from .lookup import catalog, invalidate_catalog_cache, session
from .render import JSON, respond, wants
from .requests import json_payload, query_args
from .schemas import PRICE_ALIASES

bp = Blueprint("catalog", __name__, url_prefix="/v1")
bp.after_request(add_challenge)

# An import body may carry a whole checkpoint's safetensors headers (DeepSeek-V3's 163
# shards run to ~10 MB), so it gets its own cap above the service-wide one.
IMPORT_MAX_BODY_BYTES = MAX_HEADER_BYTES + 1024 * 1024

Document = dict[str, Any]


# --------------------------------------------------------------------------- the kinds


def _as_is(document: Document) -> Document:
    return document


def _gpu_row(gpu: Document) -> Document:
    """A GPU as one CSV row: its MIG profiles by name in one cell."""
    return {**gpu, "mig_profiles": [p["name"] for p in gpu["mig_profiles"]]}


def _gpu_patch_base(stored: Document, patch: Mapping[str, Any]) -> Document:
    """A GPU document for a PATCH to merge into: a price the patch names by one of its two
    names (hourly_price_usd or prices.on_demand_usd_per_hour; price_date or
    prices.price_date) leaves the base under the other, so the patch sets both."""
    base = dict(stored)
    prices = dict(base.get("prices") or {})
    given = patch.get("prices")
    patched: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    for alias, name in PRICE_ALIASES.items():
        if alias in patch and name not in patched:
            prices.pop(name, None)
        elif name in patched and alias not in patch:
            base.pop(alias, None)
    base["prices"] = prices
    return base


def engine_row(engine: Document) -> Document:
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


@dataclass(frozen=True)
class Kind:
    """One kind of catalog document, and everything its views differ by."""

    noun: str  # in messages: "model", "GPU", "engine"
    name: str  # in endpoint names: get_<name>, list_<collection>
    collection: str  # the URL segment: /v1/<collection>
    key: str  # the unique column and URL variable: "slug" or "name"
    get: Callable[[Session, str], Any]
    page: Callable[..., tuple[Sequence[Any], int]]  # one page of the filtered rows, and the total
    list_query: type[Schema]
    write_schema: type[Schema]  # POST
    replace_schema: type[Schema]  # PUT, and PATCH after merging
    # app.catalog.writes, looked up on each call so that it can be patched (the race tests do).
    new: Callable[[Document], Any]
    update: Callable[[Any, Document], None]
    document: Callable[[Any], Document]  # the public JSON shape
    csv_row: Callable[[Document], Document]  # the document as one CSV row
    # Whether a 201's CSV is csv_row; a created GPU's CSV has only the document's scalars.
    csv_row_when_created: bool
    docs: Mapping[str, str]  # the view docstrings, by action
    # The stored document a PATCH merges into, given the patch (by default the stored one).
    patch_base: Callable[[Document, Mapping[str, Any]], Document] = lambda stored, _patch: stored

    @property
    def endpoint(self) -> str:
        return f"catalog.get_{self.name}"

    def what(self, key: str) -> str:
        return f"{self.noun} {key!r}"


MODELS = Kind(
    noun="model",
    name="model",
    collection="models",
    key="slug",
    get=queries.get_model,
    page=queries.filter_models,
    list_query=ModelListQuery,
    write_schema=ModelWriteSchema,
    replace_schema=ModelReplaceSchema,
    new=lambda values: writes.new_model(values),
    update=lambda row, values: writes.update_model(row, values),
    document=model_to_dict,
    csv_row=_as_is,
    csv_row_when_created=True,
    docs={
        "list": "Models, filtered by family, attention kind, MoE and size, one page at a time.",
        "get": "One model by slug, with its ETag.",
        "create": "Add a model to the catalog.",
        "replace": "Replace a model's document (If-Match required); omitted optional fields become null.",
        "patch": "Change some of a model's fields (JSON merge patch; If-Match required).",
        "delete": "Remove a model (If-Match required).",
    },
)
GPUS = Kind(
    noun="GPU",
    name="gpu",
    collection="gpus",
    key="slug",
    get=queries.get_gpu,
    page=queries.filter_gpus,
    list_query=GpuListQuery,
    write_schema=GpuWriteSchema,
    replace_schema=GpuReplaceSchema,
    new=lambda values: writes.new_gpu(values),
    update=lambda row, values: writes.update_gpu(row, values),
    document=gpu_to_dict,
    csv_row=_gpu_row,
    csv_row_when_created=False,
    patch_base=_gpu_patch_base,
    docs={
        "list": "GPUs with their MIG profiles, filtered by vendor, memory and MIG, one page at a time.",
        "get": "One GPU by slug, with its MIG profiles and its ETag.",
        "create": "Add a GPU (and its MIG profiles) to the catalog.",
        "replace": "Replace a GPU's document, MIG profiles included (If-Match required).",
        "patch": "Change some of a GPU's fields (JSON merge patch; `mig_profiles` is replaced whole).",
        "delete": "Remove a GPU and its MIG profiles (If-Match required).",
    },
)
ENGINES = Kind(
    noun="engine",
    name="engine",
    collection="engines",
    key="name",
    get=queries.get_engine,
    page=queries.filter_engines,
    list_query=EngineListQuery,
    write_schema=EngineWriteSchema,
    replace_schema=EngineReplaceSchema,
    new=lambda values: writes.new_engine(values),
    update=lambda row, values: writes.update_engine(row, values),
    document=engine_to_dict,
    csv_row=engine_row,
    csv_row_when_created=True,
    docs={
        "list": "Serving-engine profiles (vLLM, SGLang, TensorRT-LLM), by name, one page at a time.",
        "get": "One engine profile by name, with its ETag.",
        "create": "Add an engine profile to the catalog.",
        "replace": "Replace an engine profile (If-Match required); omitted constants take their defaults.",
        "patch": "Change some of an engine's fields (JSON merge patch; `uncertainty` merges key by key, "
        "`efficiencies` is replaced whole; If-Match required).",
        "delete": "Remove an engine profile (If-Match required); planning then refuses its name.",
    },
)


# --------------------------------------------------------------------------- helpers


def _writer() -> Session:
    """The request's session, its transaction opened for writing (see db.begin_write)."""
    db = session()
    begin_write(db)
    return db


def _body() -> dict[str, Any]:
    return json_payload(hint="")


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


def _found(kind: Kind, db: Session, key: str, *, forgiving: bool = False) -> Any:
    """The stored row of `kind` under `key` (`forgiving`, for a read: or the entry the name finds
    as a planning request would, names.resolve); 404 naming the nearest keys and the list."""
    row = kind.get(db, key)
    entries = getattr(catalog(), kind.collection, None) if row is None else None
    if row is None and forgiving and entries is not None:
        resolved = names.resolve(entries, key, models=kind.collection == "models")
        row = None if resolved is None else kind.get(db, resolved)
    if row is None:
        message = f"unknown {kind.noun} {key!r}"
        near = f"; nearest: {', '.join(names.nearest(entries, key))}" if entries else ""
        raise ApiError(404, f"{message}{near}: see GET /v1/{kind.collection}", {kind.key: [message]})
    return row


def _answer(kind: Kind, row: Any) -> Response:
    document = kind.document(row)
    return _etag(respond(document, rows=[kind.csv_row(document)]), row.version)


def _created(kind: Kind, row: Any, body: Document, rows: list[Document] | None) -> Response:
    response = respond(body, rows=rows, status=201)
    response.headers["Location"] = url_for(kind.endpoint, **{kind.key: getattr(row, kind.key)})
    return _etag(response, row.version)


# --------------------------------------------------------------------------- the views


def _list(kind: Kind) -> Response:
    wants()  # a bad ?format= is the first thing to report
    schema = kind.list_query()
    query: dict[str, Any] = schema.load(query_args(schema))  # unknown or repeated names are a 422
    rows, total = kind.page(session(), **query)
    items = [kind.document(row) for row in rows]
    body = {"items": items, "total": total, "limit": query["limit"], "offset": query["offset"]}
    return respond(body, rows=[kind.csv_row(item) for item in items])


def _get(kind: Kind, key: str) -> Response:
    return _answer(kind, _found(kind, session(), key, forgiving=True))


def _create(kind: Kind) -> Response:
    values = kind.write_schema().load(_body())
    db = _writer()
    key = values[kind.key]
    if kind.get(db, key) is not None:
        raise ApiError(409, f"{kind.what(key)} already exists: PUT or PATCH it", {kind.key: ["already exists"]})
    row = kind.new(values)
    db.add(row)
    _commit(db, kind.what(key), kind.key)
    document = kind.document(row)
    return _created(kind, row, document, [kind.csv_row(document)] if kind.csv_row_when_created else None)


def _update(kind: Kind, key: str, document: Callable[[Any], Document]) -> Response:
    """PUT or PATCH: the new document (from the stored row), checked and written whole."""
    db = _writer()
    row = _found(kind, db, key)
    _require_if_match(row.version, kind.what(key))
    values = kind.replace_schema().load(document(row))
    kind.update(row, values)
    _commit(db, kind.what(key), kind.key)
    return _answer(kind, row)


def _replace(kind: Kind, key: str) -> Response:
    body = _body()
    return _update(kind, key, lambda _row: body)


def _patch(kind: Kind, key: str) -> Response:
    patch = _body()

    def merged(row: Any) -> Document:
        # The stored document less its identifier and its version: what a PATCH merges into.
        stored = {name: value for name, value in kind.document(row).items() if name not in (kind.key, "version")}
        return merge_patch(kind.patch_base(stored, patch), patch)

    return _update(kind, key, merged)


def _delete(kind: Kind, key: str) -> Response:
    db = _writer()
    row = _found(kind, db, key)
    default_engine = current_app.extensions["fleet_sizer"]["config"].default_engine
    if kind.collection == "engines" and key == default_engine:
        # Every request that names no engine plans under it: without it they would all be refused.
        raise ApiError(
            409,
            f"engine {key!r} is this service's default (the DEFAULT_ENGINE setting): every planning request that "
            "names no engine plans under it; set DEFAULT_ENGINE to another engine first",
            {"name": ["the default engine cannot be deleted"]},
        )
    _require_if_match(row.version, kind.what(key))
    db.delete(row)
    _commit(db, kind.what(key), kind.key)
    return Response(status=204)


def _view(kind: Kind, action: str, handler: Callable[..., Response], *, needs_token: bool) -> Callable[..., Response]:
    """A Flask view for one action on `kind`, named and documented as a hand-written one."""

    def view(**url: str) -> Response:
        return handler(kind, *url.values())

    view.__name__ = f"{action}_{kind.collection if action == 'list' else kind.name}"
    view.__doc__ = kind.docs[action]
    return require_token(view) if needs_token else view


def _register(kind: Kind) -> None:
    """GET and POST /v1/<collection>; GET, PUT, PATCH and DELETE /v1/<collection>/<key>."""
    routes: list[tuple[str, str, str, Callable[..., Response]]] = [
        ("", "list", "GET", _list),
        ("", "create", "POST", _create),
        (f"/<{kind.key}>", "get", "GET", _get),
        (f"/<{kind.key}>", "replace", "PUT", _replace),
        (f"/<{kind.key}>", "patch", "PATCH", _patch),
        (f"/<{kind.key}>", "delete", "DELETE", _delete),
    ]
    for suffix, action, method, handler in routes:
        view = _view(kind, action, handler, needs_token=method != "GET")
        bp.add_url_rule(f"/{kind.collection}{suffix}", view_func=view, methods=[method])


# --------------------------------------------------------------------------- import


def _too_big_header(header: Any) -> bool:
    if request.content_length is not None and request.content_length <= MAX_HEADER_BYTES:
        return False
    return len(json.dumps(header, separators=(",", ":"))) > MAX_HEADER_BYTES


@bp.post("/models/import")
@require_token
def import_model() -> Response:
    """Derive a model from a Hugging Face config.json (and safetensors headers); store it
    unless dry_run."""
    request.max_content_length = IMPORT_MAX_BODY_BYTES
    data = ImportSchema().load(_body())
    if data["safetensors_header"] is not None and _too_big_header(data["safetensors_header"]):
        message = f"over {MAX_HEADER_BYTES} bytes"
        raise ApiError(413, f"safetensors_header: {message}", {"safetensors_header": [message]})
    values, report = catalog_import.prepare_import(data, load_model_columns)
    if data["dry_run"]:
        model = {field: values.get(field) for field in MODEL_PUBLIC_FIELDS}
        return respond({"stored": False, "model": model, "derivation": report})
    db = _writer()
    row = catalog_import.store_model(db, values)
    _commit(db, MODELS.what(row.slug))
    return _created(MODELS, row, {"stored": True, "model": model_to_dict(row), "derivation": report}, None)


for _kind in (MODELS, GPUS, ENGINES):
    _register(_kind)
