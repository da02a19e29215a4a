"""Schemas for catalog writes, the Hugging Face import and the list filters.

Writes reuse the planning schemas' field definitions and checks (ModelShapeSchema,
GpuFiguresSchema, PeakSchema, InterconnectSchema, MigProfileSchema) and tighten what the
catalog needs beyond them: required identity and provenance, lengths that fit the columns,
fields that only make sense together. They load into plain column dicts for
app.catalog.writes; what is stored is dumped by app.catalog.convert.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from marshmallow import (
    EXCLUDE,
    RAISE,
    Schema,
    ValidationError,
    fields,
    post_load,
    pre_load,
    validate,
    validates_schema,
)

from app.catalog import models as columns
from app.catalog.convert import PEAK_TFLOPS_KEYS
from app.catalog.seed import NATIVE_PRECISIONS
from app.sizing.precision import ALIASES, PRECISIONS
from app.sizing.specs import ATTENTION_KINDS, GQA, MHA, MLA

from .schemas import (
    MAX_PARAMS,
    GpuFiguresSchema,
    InterconnectSchema,
    MigProfileSchema,
    ModelShapeSchema,
    count,
    positive,
)

# `import` is a path segment of its own (POST /v1/models/import), so no model may take it.
RESERVED_SLUGS = frozenset({"import"})
FAMILY_PATTERN = r"^[a-z0-9][a-z0-9_.-]*$"
MAX_LIMIT = 500
DEFAULT_LIMIT = 100
MAX_OFFSET = 10_000_000
MAX_MIG_PROFILES = 64
PRECISION_NAMES = tuple(PRECISIONS)


def _slug_field(**kwargs: Any) -> fields.String:
    return fields.String(
        validate=[
            validate.Length(min=1, max=columns.SLUG_LENGTH),
            validate.Regexp(columns.SLUG_PATTERN, error="lowercase letters, digits, '.' and '-' only"),
            validate.NoneOf(RESERVED_SLUGS, error="is reserved"),
        ],
        **kwargs,
    )


def _text(maximum: int, **kwargs: Any) -> fields.String:
    return fields.String(validate=validate.Length(min=1, max=maximum), **kwargs)


def _optional_text(maximum: int) -> fields.String:
    return fields.String(allow_none=True, load_default=None, validate=validate.Length(max=maximum))


class _Precision(validate.Validator):
    """A catalogued weight format, or one of its aliases (`bfloat16` is `bf16`)."""

    error = "must be one of: " + ", ".join(PRECISION_NAMES)

    def __call__(self, value: str) -> str:
        if value.strip().lower() not in PRECISIONS and value.strip().lower() not in ALIASES:
            raise ValidationError(self.error)
        return value


def canonical_precision(value: str | None) -> str | None:
    if value is None:
        return None
    key = value.strip().lower()
    return ALIASES.get(key, key)


class _WholeNumbers(Schema):
    """Integer fields refuse 1.5 instead of storing 1 (marshmallow truncates by default)."""

    @pre_load
    def _no_fractions(self, data: Any, **_: Any) -> Any:
        if isinstance(data, dict):
            errors = {
                name: ["Not a valid integer."]
                for name, field in self.fields.items()
                if isinstance(field, fields.Integer)
                and isinstance(data.get(name), float)
                and not data[name].is_integer()
            }
            if errors:
                raise ValidationError(errors)
        return data


# --------------------------------------------------------------------------- models


class ModelWriteSchema(_WholeNumbers, ModelShapeSchema):
    """POST /v1/models: a whole model document. Omitted optional fields are unknown (null);
    head_dim, attention, params_active and sliding_window_layers are derived when omitted."""

    class Meta:
        unknown = RAISE

    slug = _slug_field(required=True)
    name = _text(columns.NAME_LENGTH, required=True)
    family = fields.String(
        allow_none=True,
        load_default=None,
        validate=[
            validate.Length(max=columns.SLUG_LENGTH),
            validate.Regexp(FAMILY_PATTERN, error="lowercase letters, digits, '_', '.' and '-' only"),
        ],
    )
    hf_repo = _optional_text(columns.NAME_LENGTH)
    native_precision = fields.String(allow_none=True, load_default=None, validate=_Precision())
    tie_word_embeddings = fields.Boolean(load_default=False)
    license = _optional_text(columns.NAME_LENGTH)
    source = _text(5000, required=True)
    notes = _optional_text(5000)
    version = fields.Integer(dump_only=True)

    @validates_schema
    def _catalog_consistent(self, data: dict[str, Any], **_: Any) -> None:
        """What the catalog adds to the shape checks: fields that only come together."""
        errors: dict[str, list[str]] = {}
        attention = data.get("attention")
        for name in ("kv_lora_rank", "qk_rope_head_dim"):
            if data.get(name) is not None and attention != MLA:
                errors[name] = ["only with attention mla"]
        if attention == GQA and data.get("kv_heads") == data.get("attention_heads"):
            errors["attention"] = ["gqa means fewer kv_heads than attention_heads; use mha"]
        if data.get("experts") is None:
            for name in ("shared_experts", "moe_intermediate_size"):
                if data.get(name) is not None:
                    errors[name] = ["only with experts (a mixture-of-experts model)"]
        active, total = data.get("params_active"), data.get("params_total")
        if active is not None and total is not None and active > total:
            errors["params_active"] = [f"must be at most params_total ({total})"]
        if data.get("sliding_window") is not None and data.get("sliding_window_layers") == 0:
            errors["sliding_window_layers"] = ["must be at least 1 when sliding_window is set (or leave it out)"]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _columns(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        """Every model column, with the derivable ones filled in as SCHEMA.md defines them."""
        out = {name: data.get(name) for name in MODEL_COLUMNS}
        if "slug" in data:
            out["slug"] = data["slug"]
        else:
            out.pop("slug")
        out["tie_word_embeddings"] = data.get("tie_word_embeddings", False)
        out["native_precision"] = canonical_precision(data.get("native_precision"))
        if out["head_dim"] is None:
            out["head_dim"] = data["hidden_size"] // data["attention_heads"]
        if out["attention"] is None:
            out["attention"] = MHA if data["kv_heads"] == data["attention_heads"] else GQA
        if out["sliding_window_layers"] is None:
            # A window with no layer count: every layer is windowed (Mistral 7B v0.1).
            out["sliding_window_layers"] = data["layers"] if data.get("sliding_window") else 0
        if out["params_active"] is None:
            out["params_active"] = _active(data)
        return out


def _active(data: dict[str, Any]) -> int:
    total: int = data["params_total"]
    experts: int | None = data.get("experts")
    top_k: int | None = data.get("experts_per_token")
    routed: int | None = data.get("expert_params")
    if experts is None or top_k is None or routed is None:
        return total
    return total - routed + routed * top_k // experts


MODEL_COLUMNS = (
    "slug", "name", "family", "hf_repo", "params_total", "params_active", "layers", "hidden_size",
    "attention_heads", "kv_heads", "head_dim", "attention", "kv_lora_rank", "qk_rope_head_dim",
    "sliding_window", "sliding_window_layers", "experts", "experts_per_token", "shared_experts",
    "expert_params", "vocab_size", "intermediate_size", "moe_intermediate_size", "tie_word_embeddings",
    "native_precision", "max_context", "license", "source", "notes",
)  # fmt: skip


class ModelReplaceSchema(ModelWriteSchema):
    """PUT (and PATCH, after merging) /v1/models/{slug}: the slug is the URL's."""

    slug = fields.String(dump_only=True)


# --------------------------------------------------------------------------- GPUs


class CatalogInterconnectSchema(InterconnectSchema):
    kind = fields.String(allow_none=True, validate=validate.Length(max=32))


class CatalogMigProfileSchema(_WholeNumbers, MigProfileSchema):
    name = fields.String(
        required=True,
        validate=[
            validate.Length(min=1, max=32),
            # NVIDIA's names: 1g.10gb, 1g.10gb+me, 1g.24gb-me, 2g.48gb+me.all, 7g.80gb ...
            validate.Regexp(r"^[0-9]+g\.[0-9]+gb([+-][a-z][a-z.]*)?$", error="an NVIDIA MIG profile name like 1g.10gb"),
        ],
    )


class GpuWriteSchema(_WholeNumbers, GpuFiguresSchema):
    """POST /v1/gpus: a whole GPU document, MIG profiles included. Unknown figures are null."""

    class Meta:
        unknown = RAISE

    slug = _slug_field(required=True)
    name = _text(columns.NAME_LENGTH, required=True)
    vendor = fields.String(required=True, validate=validate.OneOf(columns.VENDORS))
    architecture = _optional_text(32)
    form_factor = _optional_text(64)
    memory_gb = fields.Float(allow_none=True, load_default=None, validate=positive(1e5))
    native_precisions = fields.List(
        fields.String(validate=validate.OneOf(NATIVE_PRECISIONS)),
        allow_none=True,
        load_default=None,
        validate=validate.Length(max=len(NATIVE_PRECISIONS)),
    )
    interconnect = fields.Nested(CatalogInterconnectSchema, allow_none=True, load_default=None)
    gpus_per_node = fields.Integer(required=True, validate=count(1, 1024))
    host_cpu_cores = fields.Integer(allow_none=True, load_default=None, validate=count(1, 10_000))
    price_date = fields.String(
        allow_none=True, load_default=None, validate=validate.Regexp(columns.PRICE_DATE_PATTERN, error="YYYY-MM")
    )
    source = _text(5000, required=True)
    confidence = fields.String(allow_none=True, load_default=None, validate=validate.OneOf(columns.CONFIDENCE_LEVELS))
    notes = _optional_text(5000)
    mig_profiles = fields.List(
        fields.Nested(CatalogMigProfileSchema),
        load_default=list,
        validate=validate.Length(max=MAX_MIG_PROFILES),
    )
    version = fields.Integer(dump_only=True)

    @validates_schema
    def _catalog_consistent(self, data: dict[str, Any], **_: Any) -> None:
        errors: dict[str, list[str]] = {}
        profiles = data.get("mig_profiles") or []
        if profiles and data.get("memory_gb") is None:
            errors["memory_gb"] = ["required when the card has mig_profiles"]
        names = [p.name for p in profiles]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            errors["mig_profiles"] = [f"duplicate profile name(s): {', '.join(duplicates)}"]
        natives = data.get("native_precisions") or []
        if len(set(natives)) != len(natives):
            errors["native_precisions"] = ["each precision once"]
        if data.get("hourly_price_usd") is not None and data.get("price_date") is None:
            errors["price_date"] = ["required with hourly_price_usd: an indicative price needs its date"]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _columns(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        peaks = data.get("peak_tflops") or {}
        link = data.get("interconnect") or {}
        out = {name: data.get(name) for name in GPU_SCALAR_COLUMNS if name != "slug"}
        if "slug" in data:
            out["slug"] = data["slug"]
        out.update({f"peak_tflops_{key}": peaks.get(key) for key in PEAK_TFLOPS_KEYS})
        out["interconnect_kind"] = link.get("kind")
        out["interconnect_bandwidth_gb_per_s"] = link.get("bandwidth_gb_per_s")
        out["interconnect_latency_us"] = link.get("latency_us")
        out["mig_profiles"] = [asdict(profile) for profile in data.get("mig_profiles") or []]
        return out


GPU_SCALAR_COLUMNS = (
    "slug", "name", "vendor", "architecture", "form_factor", "memory_gb", "memory_bandwidth_tb_per_s",
    "native_precisions", "gpus_per_node", "host_cpu_cores", "hourly_price_usd", "price_date", "source",
    "confidence", "notes",
)  # fmt: skip


class GpuReplaceSchema(GpuWriteSchema):
    """PUT (and PATCH, after merging) /v1/gpus/{slug}: the slug is the URL's."""

    slug = fields.String(dump_only=True)


# --------------------------------------------------------------------------- import


class ImportSchema(Schema):
    """POST /v1/models/import: a config.json, optionally its safetensors header(s)."""

    class Meta:
        unknown = RAISE

    config = fields.Dict(required=True)
    slug = _slug_field(load_default=None, allow_none=True)
    name = fields.String(allow_none=True, load_default=None, validate=validate.Length(min=1, max=columns.NAME_LENGTH))
    hf_repo = fields.String(
        allow_none=True, load_default=None, validate=validate.Length(min=1, max=columns.NAME_LENGTH)
    )
    source = fields.String(allow_none=True, load_default=None, validate=validate.Length(min=1, max=5000))
    safetensors_header = fields.Dict(allow_none=True, load_default=None)
    dry_run = fields.Boolean(load_default=False)


# --------------------------------------------------------------------------- list filters

_TRUE = {"true", "True", "TRUE", "1"}
_FALSE = {"false", "False", "FALSE", "0"}


class _ListQuery(Schema):
    """Pagination shared by the lists; unknown parameters are ignored (cache-busters)."""

    class Meta:
        unknown = EXCLUDE

    limit = fields.Integer(load_default=DEFAULT_LIMIT, validate=count(1, MAX_LIMIT))
    offset = fields.Integer(load_default=0, validate=count(0, MAX_OFFSET))

    @pre_load
    def _drop_blanks(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        # A blank spreadsheet cell means "not given", as on the planning endpoints.
        return {key: value for key, value in data.items() if not (isinstance(value, str) and not value.strip())}


class ModelListQuery(_ListQuery):
    """GET /v1/models filters."""

    family = fields.String(
        validate=[validate.Length(max=columns.SLUG_LENGTH), validate.Regexp(FAMILY_PATTERN, error="not a family name")]
    )
    attention = fields.String(validate=validate.OneOf(ATTENTION_KINDS))
    moe = fields.Boolean(truthy=_TRUE, falsy=_FALSE)
    min_params = fields.Integer(validate=count(0, MAX_PARAMS))
    max_params = fields.Integer(validate=count(0, MAX_PARAMS))

    @validates_schema
    def _range(self, data: dict[str, Any], **_: Any) -> None:
        low, high = data.get("min_params"), data.get("max_params")
        if low is not None and high is not None and low > high:
            raise ValidationError({"max_params": [f"must be at least min_params ({low})"]})


class GpuListQuery(_ListQuery):
    """GET /v1/gpus filters."""

    vendor = fields.String(validate=validate.OneOf(columns.VENDORS))
    min_memory_gb = fields.Float(validate=validate.Range(min=0, max=1e5))
    has_mig = fields.Boolean(truthy=_TRUE, falsy=_FALSE)
