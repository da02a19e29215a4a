"""The model import: a Hugging Face config.json, and optionally its safetensors header(s), to
a validated catalog model with a report of how it was derived; stored unless a dry run.

POST /v1/models/import and `flask import-model` both call prepare_import and store_model.
What the derivation refuses is an InvalidRequest naming the field at fault (`config.<path>`,
`safetensors_header.<path>`, `slug`), an input over a size cap a TooLarge, a slug already
stored a Conflict; the model document itself is checked by the caller's `load_columns` (the
catalog's write schema), which raises marshmallow's ValidationError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.catalog import hf_config, queries, safetensors_header, writes
from app.catalog.models import Model

from .errors import Conflict, InvalidRequest, TooLarge

# (model document, slug or None) -> validated model columns. The catalog's write schema
# (app.api.catalog_schemas.load_model_columns): passed in, so that this layer does not
# depend on the HTTP edge.
LoadColumns = Callable[[dict[str, Any], str | None], dict[str, Any]]

_NOT_SLUG = re.compile(r"[^a-z0-9.-]+")
# Where the parameter count the catalog stores comes from, said in the model's `source`.
_COUNTED = {True: "exact, from the safetensors header", False: "computed from the config fields"}
# The header's count may differ from the config's by this share before a note says so.
_COUNT_TOLERANCE = 0.005
# Past this share the two disagree (a warning says so): a header far short of the config is
# taken for part of the checkpoint (one shard of several) and the config's count is kept; one
# far above it holds weights the text config does not describe (a vision tower) and is kept.
_DISAGREEMENT = 0.05


def _slug_from_repo(repo: str | None) -> str | None:
    if not repo:
        return None
    slug = _NOT_SLUG.sub("-", repo.rsplit("/", 1)[-1].lower()).strip("-.")
    return slug[:100] or None


def _derive(config: Any) -> hf_config.DerivedModel:
    try:
        return hf_config.derive(config)
    except hf_config.HFConfigError as exc:
        field = f"config.{exc.field}" if exc.field else "config"
        raise InvalidRequest(f"{field}: {exc.message}", {field: [exc.message]}) from None


def _summarise(header: Any, layers: int) -> safetensors_header.HeaderSummary:
    try:
        return safetensors_header.summarise_header(header, layers=layers)
    except safetensors_header.HeaderError as exc:
        field = f"safetensors_header.{exc.path}" if exc.path else "safetensors_header"
        refusal = TooLarge if exc.too_large else InvalidRequest
        raise refusal(f"{field}: {exc.message}", {field: [exc.message]}) from None


def prepare_import(data: Mapping[str, Any], load_columns: LoadColumns) -> tuple[dict[str, Any], dict[str, Any]]:
    """(validated model columns, derivation report) for a loaded ImportSchema payload.

    Without a slug (none given, none in the config's repository) only a dry run goes on,
    and the columns' slug is None.
    """
    derived = _derive(data["config"])
    summary = None
    if data.get("safetensors_header") is not None:
        summary = _summarise(data["safetensors_header"], derived.layers)
    notes = list(derived.assumptions)
    warnings: list[str] = []
    beyond_shape = None  # what explains a header's count past the shape, when one does
    params_total = derived.params_total if summary is None else summary.params_total
    from_header = summary is not None
    if summary is not None:
        ratio = summary.params_total / derived.params_total
        said = f"the header holds {summary.params_total:,} parameters, the config implies {derived.params_total:,}"
        if ratio < 1 - _DISAGREEMENT:
            params_total, from_header = derived.params_total, False
            warnings.append(
                f"{said} ({ratio:.1%} of it): the header looks like part of the checkpoint (one shard of several?), "
                "so the config's count is stored; send every shard's header for an exact count"
            )
            notes.append(warnings[-1])
        elif ratio > 1 + _DISAGREEMENT:
            warnings.append(
                f"{said} ({ratio:.1%} of it): the checkpoint holds weights the config does not describe (a vision "
                "tower, an extra head?); the header's exact count is stored"
            )
            notes.append(warnings[-1])
            beyond_shape = f"the safetensors header counts {ratio - 1:.0%} more parameters than the config describes"
        elif abs(ratio - 1) > _COUNT_TOLERANCE:
            notes.append(f"{said}: the header's exact count is stored")
    # Header dtypes, else the config's ignore lists; the notes say which (and any disagreement).
    quantized_components, quantization_notes = hf_config.settle_quantized_components(derived, summary)
    notes.extend(quantization_notes)
    hf_repo = data.get("hf_repo") or derived.hf_repo
    slug = data.get("slug") or _slug_from_repo(hf_repo)
    document = {
        **derived.catalog_fields(params_total),
        "quantized_components": quantized_components,
        "hf_repo": hf_repo,
        "name": data.get("name") or (hf_repo.rsplit("/", 1)[-1] if hf_repo else slug) or "imported model",
        "source": data.get("source")
        or f"{hf_repo + ' ' if hf_repo else ''}config.json, derived by the Hugging Face import; "
        f"params_total {_COUNTED[from_header]}",
        "notes": "; ".join(notes) or None,
        "params_beyond_shape": beyond_shape,
    }
    if slug is None and not data.get("dry_run"):
        raise InvalidRequest("slug: required, the config names no repository", {"slug": ["required"]})
    values = load_columns(document, slug)
    report = {
        "family": derived.family,
        "params_total_from_config": derived.params_total,
        "params": {**asdict(derived.params), "total": derived.params_total},
        "kv_bytes_per_token": derived.kv_bytes_per_token,
        "assumptions": notes,
        "safetensors": summary.as_dict() if summary else None,
        "warnings": warnings,
    }
    return values, report


def store_model(db: Session, values: dict[str, Any]) -> Model:
    """Add the prepared model to the session and flush it; the caller commits. A slug that is
    taken, or taken meanwhile by another writer, is a Conflict (nothing is left pending)."""
    slug = values["slug"]
    if queries.get_model(db, slug) is not None:
        raise Conflict(f"model {slug!r} already exists: PUT or PATCH it", {"slug": ["already exists"]})
    row = writes.new_model(values)
    db.add(row)
    try:
        db.flush()
    except IntegrityError:
        db.rollback()
        raise Conflict(f"model {slug!r} conflicts with a stored row", {"slug": ["already in the catalog"]}) from None
    return row
