"""Schemas for catalog writes (models, GPUs, engine profiles), the Hugging Face import and the
list filters.

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
from app.catalog.convert import UNCERTAINTY_RANGES, gpu_columns, uncertainty_to_dict
from app.catalog.models import (
    ENGINE_COLUMNS,
    MODEL_COLUMNS,
    NATIVE_PRECISIONS,
    VISIBLE_OVER_DATASHEET,
)
from app.catalog.seed import RESERVED_ENGINE_NAMES
from app.sizing.engine import KV_RULES, Uncertainty
from app.sizing.memory import COMPONENTS
from app.sizing.precision import normalise
from app.sizing.specs import ATTENTION_KINDS, GQA, MLA, PARAMS_SHAPE_TOLERANCE, model_defaults, shape_params

from .schemas import (
    MAX_PARAMS,
    GpuFiguresSchema,
    GpuPricesSchema,
    InterconnectSchema,
    MigProfileSchema,
    ModelShapeSchema,
    _precision_validator,
    architecture_field,
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


def _columns_of(data: dict[str, Any], names: tuple[str, ...], key: str) -> dict[str, Any]:
    """The columns `names` of a loaded document (absent ones None); the key column only when
    the document carries it (a PUT's slug or name is the URL's)."""
    return {name: data.get(name) for name in names if name != key or key in data}


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
    instruct_repo = _optional_text(columns.NAME_LENGTH)
    aliases = fields.List(
        fields.String(validate=[validate.Length(min=1, max=columns.SLUG_LENGTH)]),
        allow_none=True,
        load_default=None,
        validate=validate.Length(max=16),
    )
    native_precision = fields.String(allow_none=True, load_default=None, validate=_precision_validator())
    tie_word_embeddings = fields.Boolean(load_default=False)
    quantized_components = fields.List(
        fields.String(validate=validate.OneOf(COMPONENTS)),
        allow_none=True,
        load_default=None,
        validate=validate.Length(max=len(COMPONENTS)),
    )
    license = _optional_text(columns.NAME_LENGTH)
    source = _text(5000, required=True)
    notes = _optional_text(5000)
    # Why params_total is not what the shape counts (a vision tower): needed past the tolerance.
    params_beyond_shape = _optional_text(5000)
    version = fields.Integer(dump_only=True)

    @validates_schema
    def _catalog_consistent(self, data: dict[str, Any], **_: Any) -> None:
        """What the catalog adds to the shape checks: fields that only come together, and a
        params_total that its shape counts (within PARAMS_SHAPE_TOLERANCE) or a reason why not."""
        errors: dict[str, list[str]] = {}
        counted = shape_params(data) if data.get("params_total") else None
        if counted and not data.get("params_beyond_shape"):
            off = data["params_total"] / counted - 1
            if abs(off) > PARAMS_SHAPE_TOLERANCE:
                errors["params_total"] = [
                    f"{data['params_total']:,} is {off:+.0%} from the {counted:,} its shape counts (embeddings, "
                    f"attention, MLP): more than {PARAMS_SHAPE_TOLERANCE:.0%} apart, say why in params_beyond_shape "
                    "(a vision tower, an audio encoder) or correct the figure or the shape"
                ]
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
        components = data.get("quantized_components") or []
        if len(set(components)) != len(components):
            errors["quantized_components"] = ["each component once"]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _columns(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        """Every model column, with the derivable ones filled in as SCHEMA.md defines them."""
        out = _columns_of(data, MODEL_COLUMNS, "slug")
        out["tie_word_embeddings"] = data.get("tie_word_embeddings", False)
        native = data.get("native_precision")
        out["native_precision"] = None if native is None else normalise(native)
        out.update(model_defaults(data))
        return out


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


# A document's `prices` fields that are money: what a price_date dates.
USD_PRICES = ("reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour", "spot_usd_per_hour", "purchase_usd")


class CatalogPricesSchema(GpuPricesSchema):
    """A stored GPU's `prices`: every figure beyond the on-demand rate (whose source is the
    GPU's own) names where it comes from, and every price its month, as every catalog figure does."""

    @validates_schema
    def _sourced(self, data: dict[str, Any], **_: Any) -> None:
        given = [name for name in self.fields if name not in ("on_demand_usd_per_hour", "source", "price_date")]
        errors = {}
        if any(data.get(name) is not None for name in given) and not data.get("source"):
            errors["source"] = ["required with any price or power figure beyond on_demand_usd_per_hour"]
        if any(data.get(name) is not None for name in USD_PRICES) and data.get("price_date") is None:
            errors["price_date"] = ["required with a price: a list price needs its date"]
        if errors:
            raise ValidationError(errors)


class GpuWriteSchema(_WholeNumbers, GpuFiguresSchema):
    """POST /v1/gpus: a whole GPU document, MIG profiles included. Unknown figures are null."""

    class Meta:
        unknown = RAISE

    slug = _slug_field(required=True)
    name = _text(columns.NAME_LENGTH, required=True)
    vendor = fields.String(required=True, validate=validate.OneOf(columns.VENDORS))
    architecture = architecture_field(load_default=None)
    form_factor = _optional_text(64)
    memory_gb = fields.Float(allow_none=True, load_default=None, validate=positive(1e5))
    memory_visible_gib = fields.Float(allow_none=True, load_default=None, validate=positive(1e5))
    native_precisions = fields.List(
        fields.String(validate=validate.OneOf(NATIVE_PRECISIONS)),
        allow_none=True,
        load_default=None,
        validate=validate.Length(max=len(NATIVE_PRECISIONS)),
    )
    interconnect = fields.Nested(CatalogInterconnectSchema, allow_none=True, load_default=None)
    prices = fields.Nested(CatalogPricesSchema, load_default=dict)
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
        visible, datasheet = data.get("memory_visible_gib"), data.get("memory_gb")
        if visible is not None and datasheet is not None and visible > datasheet * VISIBLE_OVER_DATASHEET:
            errors["memory_visible_gib"] = [
                f"must be at most {VISIBLE_OVER_DATASHEET} x memory_gb ({datasheet * VISIBLE_OVER_DATASHEET:g})"
            ]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _columns(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        profiles = [asdict(profile) for profile in data.get("mig_profiles") or []]
        return gpu_columns({**data, "mig_profiles": profiles})


class GpuReplaceSchema(GpuWriteSchema):
    """PUT (and PATCH, after merging) /v1/gpus/{slug}: the slug is the URL's."""

    slug = fields.String(dump_only=True)


# --------------------------------------------------------------------------- engines

MAX_EFFICIENCIES = 64
MAX_FITTED_ON = 200
_UNCERTAINTY_DEFAULTS = uncertainty_to_dict(Uncertainty())


def _share() -> validate.Range:
    """A share of a datasheet peak: above 0, at most all of it."""
    return validate.Range(min=0, min_inclusive=False, max=1)


def _amount(maximum: float, **kwargs: Any) -> fields.Float:
    """A reservation or overhead: zero or more, up to `maximum` (defaults to 0)."""
    return fields.Float(load_default=0.0, validate=validate.Range(min=0, max=maximum), **kwargs)


class KernelEfficiencySchema(Schema):
    """One GPU generation's share of the datasheet peaks (app.sizing.engine.KernelEfficiency)."""

    class Meta:
        unknown = RAISE

    architecture = fields.String(
        required=True,
        validate=[
            validate.Length(min=1, max=columns.ARCHITECTURE_LENGTH),
            validate.Regexp(r"^(\*|[a-z0-9][a-z0-9_.-]*)$", error="a GPU architecture (`hopper`, ...) or `*`"),
        ],
    )
    memory = fields.Float(required=True, validate=_share())
    compute = fields.Float(required=True, validate=_share())
    moe_memory = fields.Float(load_default=1.0, validate=_share())


def _range_pair(metric: str) -> fields.List[float]:
    return fields.List(
        fields.Float(validate=validate.Range(min=0, min_inclusive=False, max=100)),
        load_default=lambda: list(_UNCERTAINTY_DEFAULTS[metric]),
        validate=validate.Length(equal=2),
    )


class UncertaintySchema(Schema):
    """The p10 and p90 of measured / predicted per metric (app.sizing.engine.Uncertainty);
    an omitted field keeps the stated default."""

    class Meta:
        unknown = RAISE

    time_per_token = _range_pair("time_per_token")
    ttft = _range_pair("ttft")
    tokens_per_s = _range_pair("tokens_per_s")
    kv_capacity_tokens = _range_pair("kv_capacity_tokens")
    rows = fields.Dict(
        keys=fields.String(validate=validate.Length(min=1, max=64)),
        values=fields.Integer(strict=True, validate=count(0, 1_000_000_000)),
        load_default=dict,
        validate=validate.Length(max=64),
    )
    unseen_widening = fields.Float(
        load_default=_UNCERTAINTY_DEFAULTS["unseen_widening"], validate=validate.Range(1, 10)
    )

    @validates_schema
    def _ordered(self, data: dict[str, Any], **_: Any) -> None:
        errors = {
            metric: [f"low ({data[metric][0]}) must not be above high ({data[metric][1]})"]
            for metric in UNCERTAINTY_RANGES
            if len(data.get(metric) or ()) == 2 and data[metric][0] > data[metric][1]
        }
        if errors:
            raise ValidationError(errors)


class EngineWriteSchema(_WholeNumbers):
    """POST /v1/engines: a whole engine profile (the fields of app.sizing.engine.EngineProfile,
    its `version` as `engine_version`). Omitted constants are 0, omitted defaults for large
    GPUs null, omitted uncertainty the stated default ranges."""

    class Meta:
        unknown = RAISE

    name = fields.String(
        required=True,
        validate=[
            validate.Length(min=1, max=columns.ENGINE_NAME_LENGTH),
            validate.Regexp(columns.SLUG_PATTERN, error="lowercase letters, digits, '.' and '-' only"),
            validate.NoneOf(RESERVED_ENGINE_NAMES, error="is reserved: it means planning without an engine"),
        ],
    )
    display_name = _text(columns.NAME_LENGTH, required=True)
    engine_version = _text(columns.ENGINE_VERSION_LENGTH, required=True)
    kv_rule = fields.String(required=True, validate=validate.OneOf(KV_RULES))
    gpu_memory_utilization = fields.Float(required=True, validate=_share())
    max_batched_tokens = fields.Integer(required=True, validate=count(1, 10_000_000))
    max_num_seqs = fields.Integer(required=True, validate=count(1, 1_000_000))
    block_size = fields.Integer(required=True, validate=count(1, 1_000_000))
    large_gpu_gib = fields.Float(allow_none=True, load_default=None, validate=positive(1e5))
    max_batched_tokens_large_gpu = fields.Integer(allow_none=True, load_default=None, validate=count(1, 10_000_000))
    max_num_seqs_large_gpu = fields.Integer(allow_none=True, load_default=None, validate=count(1, 1_000_000))
    activation_bytes_per_token_hidden = _amount(1e4)
    activation_bytes_per_token_expert_hidden = _amount(1e4)
    logits_bytes_per_vocab_entry = _amount(64)
    non_torch_gib = _amount(1e3)
    non_torch_gib_per_extra_rank = _amount(1e3)
    cuda_graph_gib = _amount(1e3)
    cuda_graph_in_budget = fields.Boolean(load_default=False)
    engine_buffers_gib = _amount(1e3)
    step_overhead_ms = _amount(1e4)
    layer_overhead_us = _amount(1e6)
    ttft_overhead_ms = _amount(1e5)
    sequence_overhead_us = _amount(1e6)
    collective_latency_us = _amount(1e6)
    expert_overhead_us = _amount(1e6)
    mla_layer_overhead_us = _amount(1e6)
    efficiencies = fields.List(
        fields.Nested(KernelEfficiencySchema), load_default=list, validate=validate.Length(max=MAX_EFFICIENCIES)
    )
    uncertainty = fields.Nested(UncertaintySchema, load_default=lambda: UncertaintySchema().load({}))
    fitted_on = fields.Dict(
        keys=fields.String(validate=validate.Length(min=1, max=200)),
        values=fields.String(validate=validate.Length(max=5000)),
        load_default=dict,
        validate=validate.Length(max=MAX_FITTED_ON),
    )
    source = _text(5000, required=True)
    notes = _optional_text(5000)
    version = fields.Integer(dump_only=True)

    @validates_schema
    def _catalog_consistent(self, data: dict[str, Any], **_: Any) -> None:
        errors: dict[str, list[str]] = {}
        if data.get("large_gpu_gib") is None:
            for name in ("max_batched_tokens_large_gpu", "max_num_seqs_large_gpu"):
                if data.get(name) is not None:
                    errors[name] = ["only with large_gpu_gib (the size from which it applies)"]
        architectures = [e["architecture"] for e in data.get("efficiencies") or []]
        duplicates = sorted({a for a in architectures if architectures.count(a) > 1})
        if duplicates:
            errors["efficiencies"] = [f"one row per architecture: {', '.join(duplicates)} more than once"]
        if errors:
            raise ValidationError(errors)

    @post_load
    def _columns(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        """Every engines column; `name` only when the document carries it (not on PUT)."""
        out = _columns_of(data, ENGINE_COLUMNS, "name")
        out["efficiencies"] = [dict(e) for e in data.get("efficiencies") or []]
        return out


class EngineReplaceSchema(EngineWriteSchema):
    """PUT (and PATCH, after merging) /v1/engines/{name}: the name is the URL's."""

    name = fields.String(dump_only=True)


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


def load_model_columns(document: dict[str, Any], slug: str | None) -> dict[str, Any]:
    """A derived model document (the import's) checked as a POST would check it, as model
    columns; without a slug (a dry run that has none) as a PUT would, the slug None."""
    if slug is not None:
        loaded: dict[str, Any] = ModelWriteSchema().load({**document, "slug": slug})
        return loaded
    return {**ModelReplaceSchema().load(document), "slug": None}


# --------------------------------------------------------------------------- list filters

_TRUE = {"true", "True", "TRUE", "1"}
_FALSE = {"false", "False", "FALSE", "0"}


class _ListQuery(Schema):
    """Pagination shared by the lists (unknown names are refused before loading, app/api/requests.py)."""

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


class EngineListQuery(_ListQuery):
    """GET /v1/engines: pages only (there are a handful)."""
