"""Request schemas for the planning endpoints: parse, validate ranges, apply defaults.

Every number has a range, so that no request can ask for work that keeps a worker busy,
and so that a bad value is named with what would be accepted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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

from app.catalog.models import PRICE_DATE_PATTERN
from app.planning.requests import (
    BatchRequest,
    CostRequest,
    DayPolicy,
    DayRequest,
    Finance,
    FleetRequest,
    LatencyRequest,
    OwnershipInputs,
    PlanRequest,
    RooflineRequest,
    Simulation,
    Workload,
)
from app.sizing import architectures, speculation
from app.sizing.disaggregated import TOPOLOGIES
from app.sizing.engine import IDEAL
from app.sizing.fleet import SECONDS_PER_DAY, Redundancy
from app.sizing.fleet_plan import MAX_FORECAST_PERIODS, Arrivals, FleetInputs, Period
from app.sizing.memory import COMPONENTS
from app.sizing.mix import SHARE_TOLERANCE, LengthBucket
from app.sizing.plan import PlanInputs
from app.sizing.precision import ALIASES, PRECISIONS
from app.sizing.procurement import (
    FLAT_HORIZON_MONTHS,
    FLAT_PERIOD_MONTHS,
    PERIOD_MONTHS,
    TERM_MONTHS,
)
from app.sizing.simulate import DEFAULT_BURST_REQUESTS, DEFAULT_REQUESTS, MAX_REQUESTS
from app.sizing.specs import (
    ATTENTION_KINDS,
    MHA,
    MLA,
    GpuPrices,
    GpuSpec,
    MigProfile,
    ModelSpec,
    default_head_dim,
    mig_profile_problems,
    model_defaults,
)
from app.sizing.vocabulary import Arrival, FleetLayout, KvReadContext, LatencyMode, Pricing

PRECISION_NAMES = tuple(PRECISIONS)
# Formats a datasheet gives a tensor-core peak for (the keys of peak_tflops, and the 4-bit
# floats that run at the fp4 peak).
COMPUTE_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4", "nvfp4", "mxfp4")
MAX_SWEEP = 256
MAX_PROMPT_TOKENS = 10_000_000
MAX_OUTPUT_TOKENS = 1_000_000
MAX_CONCURRENCY = 1_000_000
MAX_PARAMS = 10**14


def _precision_validator(*extra: str) -> validate.Validator:
    allowed = PRECISION_NAMES + extra

    class _Precision(validate.Validator):
        error = "must be one of: " + ", ".join(allowed)

        def __call__(self, value: str) -> str:
            key = value.strip().lower()
            if key not in allowed and key not in ALIASES:
                raise ValidationError(self.error)
            return value

    return _Precision()


class Integer(fields.Integer):
    """A whole number, in JSON as in a query string: 2048 and 2048.0 load as 2048; 2048.9 is
    refused instead of truncated (marshmallow's Integer truncates floats by default)."""

    def _validated(self, value: Any) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise self.make_error("invalid", input=value)
        return super()._validated(value)


# The smallest value a "positive" figure may take: small enough for any real input, large
# enough that no quotient of in-range inputs overflows a float (1 KB of memory, 1 MB/s).
POSITIVE_FLOOR = 1e-6


def positive(maximum: float) -> validate.Range:
    return validate.Range(min=POSITIVE_FLOOR, max=maximum)


def count(minimum: int, maximum: int) -> validate.Range:
    return validate.Range(min=minimum, max=maximum)


class ModelShapeSchema(Schema):
    """The architecture fields a model has wherever it is given (inline for planning, or
    written to the catalog), with their ranges and the checks that tie them together."""

    class Meta:
        unknown = RAISE

    params_total = Integer(required=True, validate=count(1, MAX_PARAMS))
    params_active = Integer(allow_none=True, validate=count(1, MAX_PARAMS))
    layers = Integer(required=True, validate=count(1, 10_000))
    hidden_size = Integer(required=True, validate=count(1, 1_000_000))
    attention_heads = Integer(required=True, validate=count(1, 100_000))
    kv_heads = Integer(required=True, validate=count(1, 100_000))
    head_dim = Integer(allow_none=True, validate=count(1, 100_000))
    attention = fields.String(allow_none=True, validate=validate.OneOf(ATTENTION_KINDS))
    kv_lora_rank = Integer(allow_none=True, validate=count(1, 1_000_000))
    qk_rope_head_dim = Integer(allow_none=True, validate=count(0, 100_000))
    sliding_window = Integer(allow_none=True, validate=count(1, MAX_PROMPT_TOKENS))
    sliding_window_layers = Integer(allow_none=True, validate=count(0, 10_000))
    experts = Integer(allow_none=True, validate=count(1, 100_000))
    experts_per_token = Integer(allow_none=True, validate=count(1, 100_000))
    expert_params = Integer(allow_none=True, validate=count(1, MAX_PARAMS))
    max_context = Integer(allow_none=True, validate=count(1, 100_000_000))
    vocab_size = Integer(allow_none=True, validate=count(1, 100_000_000))
    intermediate_size = Integer(allow_none=True, validate=count(1, 100_000_000))
    moe_intermediate_size = Integer(allow_none=True, validate=count(1, 100_000_000))
    shared_experts = Integer(allow_none=True, validate=count(0, 100_000))
    tie_word_embeddings = fields.Boolean(allow_none=True)
    # Components the checkpoint's format quantizes (null: the format's convention).
    quantized_components = fields.List(
        fields.String(validate=validate.OneOf(COMPONENTS)),
        allow_none=True,
        validate=validate.Length(max=len(COMPONENTS)),
    )

    @validates_schema
    def _consistent(self, data: dict[str, Any], **_: Any) -> None:
        errors: dict[str, list[str]] = {}
        attention = data.get("attention")
        heads, kv_heads = data.get("attention_heads"), data.get("kv_heads")
        if attention == MLA:
            for name in ("kv_lora_rank", "qk_rope_head_dim"):
                if data.get(name) is None:
                    errors[name] = ["required when attention is mla"]
        elif heads and kv_heads and heads % kv_heads:
            errors["kv_heads"] = [f"must divide attention_heads ({heads})"]
        if attention == MHA and heads and kv_heads and heads != kv_heads:
            errors["attention"] = ["mha means kv_heads == attention_heads; use gqa"]
        hidden = data.get("hidden_size")
        if hidden and heads and data.get("head_dim") is None and default_head_dim(hidden, heads) is None:
            errors["head_dim"] = ["required when hidden_size is not a multiple of attention_heads"]
        experts, per_token, expert_params = (data.get(n) for n in ("experts", "experts_per_token", "expert_params"))
        given = [v is not None for v in (experts, per_token, expert_params)]
        if any(given) and not all(given):
            errors["experts"] = ["experts, experts_per_token and expert_params go together"]
        elif experts is not None and per_token is not None and expert_params is not None:
            if per_token > experts:
                errors["experts_per_token"] = [f"must be at most experts ({experts})"]
            if expert_params >= data["params_total"]:
                errors["expert_params"] = ["must be less than params_total"]
        windowed = data.get("sliding_window_layers") or 0
        if windowed > (data.get("layers") or windowed):
            errors["sliding_window_layers"] = ["must be at most layers"]
        if windowed and data.get("sliding_window") is None:
            errors["sliding_window"] = ["required when sliding_window_layers > 0"]
        if errors:
            raise ValidationError(errors)


class InlineModelSchema(ModelShapeSchema):
    """A model given inline: the catalog's model fields (catalog-only ones are accepted so a
    GET /v1/models/{slug} answer can be pasted back, edited)."""

    name = fields.String(load_default="inline model", validate=validate.Length(min=1, max=200))
    # null = the checkpoint's format is not known (a catalog answer pasted back): planning
    # then needs an explicit weight_precision.
    native_precision = fields.String(load_default="bf16", allow_none=True, validate=_precision_validator())
    # Catalog fields that planning does not use.
    slug = fields.String(allow_none=True, validate=validate.Length(max=200))
    family = fields.String(allow_none=True, validate=validate.Length(max=200))
    hf_repo = fields.String(allow_none=True, validate=validate.Length(max=300))
    license = fields.String(allow_none=True, validate=validate.Length(max=500))
    source = fields.String(allow_none=True, validate=validate.Length(max=5000))
    notes = fields.String(allow_none=True, validate=validate.Length(max=5000))
    params_beyond_shape = fields.String(allow_none=True, validate=validate.Length(max=5000))
    instruct_repo = fields.String(allow_none=True, validate=validate.Length(max=300))
    aliases = fields.List(
        fields.String(validate=validate.Length(max=200)), allow_none=True, validate=validate.Length(max=50)
    )
    version = Integer(allow_none=True, validate=count(0, 2**31 - 1))

    @post_load
    def _spec(self, data: dict[str, Any], **_: Any) -> ModelSpec:
        return ModelSpec(
            name=data["name"],
            params_total=data["params_total"],
            layers=data["layers"],
            hidden_size=data["hidden_size"],
            attention_heads=data["attention_heads"],
            kv_heads=data["kv_heads"],
            **model_defaults(data),
            kv_lora_rank=data.get("kv_lora_rank"),
            qk_rope_head_dim=data.get("qk_rope_head_dim"),
            sliding_window=data.get("sliding_window"),
            experts=data.get("experts"),
            experts_per_token=data.get("experts_per_token"),
            expert_params=data.get("expert_params"),
            native_precision=data["native_precision"],
            max_context=data.get("max_context"),
            hf_repo=data.get("hf_repo"),
            vocab_size=data.get("vocab_size"),
            tie_word_embeddings=bool(data.get("tie_word_embeddings")),
            quantized_components=(
                None if data.get("quantized_components") is None else tuple(data["quantized_components"])
            ),
        )


class PeakSchema(Schema):
    class Meta:
        unknown = RAISE

    bf16 = fields.Float(allow_none=True, validate=positive(1e7))
    fp16 = fields.Float(allow_none=True, validate=positive(1e7))
    fp8 = fields.Float(allow_none=True, validate=positive(1e7))
    int8 = fields.Float(allow_none=True, validate=positive(1e7))
    fp4 = fields.Float(allow_none=True, validate=positive(1e7))


class InterconnectSchema(Schema):
    class Meta:
        unknown = RAISE

    kind = fields.String(allow_none=True, validate=validate.Length(max=100))
    bandwidth_gb_per_s = fields.Float(allow_none=True, validate=positive(1e6))
    latency_us = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e6))


class MigProfileSchema(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    compute_slices = Integer(required=True, validate=count(1, 7))
    memory_slices = Integer(required=True, validate=count(1, 8))
    memory_gb = fields.Float(required=True, validate=positive(1e5))
    max_instances = Integer(required=True, validate=count(1, 7))

    @post_load
    def _spec(self, data: dict[str, Any], **_: Any) -> MigProfile:
        return MigProfile(**data)


# The most a price or a power figure may be: no GPU-hour costs 100,000 USD, no card 100 M USD
# or 100 kW; above that a figure is a typo.
MAX_HOURLY_USD = 1e5
MAX_PURCHASE_USD = 1e8
MAX_POWER_W = 1e5


def _amount_of(maximum: float) -> fields.Float:
    """A price: zero (free) or more, up to `maximum`."""
    return fields.Float(allow_none=True, validate=validate.Range(min=0, max=maximum))


class PriceFiguresSchema(Schema):
    """A GPU's prices and power, per whole card (`prices`): what a request may override
    and the catalog stores (each null when not known)."""

    class Meta:
        unknown = RAISE

    on_demand_usd_per_hour = _amount_of(MAX_HOURLY_USD)
    reserved_1y_usd_per_hour = _amount_of(MAX_HOURLY_USD)
    reserved_3y_usd_per_hour = _amount_of(MAX_HOURLY_USD)
    spot_usd_per_hour = _amount_of(MAX_HOURLY_USD)
    # A probability per hour: at 1 the capacity would never stay.
    spot_interruptions_per_hour = fields.Float(
        allow_none=True, validate=validate.Range(min=0, max=1, max_inclusive=False, error="must be in [0, 1)")
    )
    purchase_usd = _amount_of(MAX_PURCHASE_USD)
    power_w = fields.Float(allow_none=True, validate=validate.Range(min=0, min_inclusive=False, max=MAX_POWER_W))
    idle_power_w = _amount_of(MAX_POWER_W)

    @validates_schema
    def _power(self, data: dict[str, Any], **_: Any) -> None:
        power, idle = data.get("power_w"), data.get("idle_power_w")
        if power is not None and idle is not None and idle > power:
            raise ValidationError({"idle_power_w": [f"must be at most power_w ({power:g})"]})

    @staticmethod
    def spec(data: dict[str, Any]) -> GpuPrices:
        """The figures beyond the on-demand rate, as the sizing core holds them."""
        return GpuPrices(**{name: data.get(name) for name in GpuPrices.__dataclass_fields__})


class GpuPricesSchema(PriceFiguresSchema):
    """A GPU document's `prices`: the figures, where they come from and the month they refer to."""

    source = fields.String(allow_none=True, validate=validate.Length(max=5000))
    price_date = fields.String(allow_none=True, validate=validate.Regexp(PRICE_DATE_PATTERN, error="YYYY-MM"))


# A GPU document's top-level fields that are older names of two of its prices.
PRICE_ALIASES = {"hourly_price_usd": "on_demand_usd_per_hour", "price_date": "price_date"}


def unify_price_aliases(data: Any) -> Any:
    """A GPU document with each alias and its `prices` field made one: given as either, both
    are set; given as both, they must agree (422 naming both)."""
    if not isinstance(data, dict) or not isinstance(data.get("prices", {}), (dict, type(None))):
        return data  # the schema says what is wrong with it
    data = dict(data)
    prices = dict(data.get("prices") or {})
    errors: dict[str, Any] = {}
    for alias, name in PRICE_ALIASES.items():
        if alias in data and name in prices and data[alias] != prices[name]:
            message = f"{alias} is prices.{name} by its older name: give one, or the same value"
            errors[alias] = [message]
            errors.setdefault("prices", {})[name] = [message]
        elif alias in data:
            prices[name] = data[alias]
        elif name in prices:
            data[alias] = prices[name]
    if errors:
        raise ValidationError(errors)
    data["prices"] = prices
    return data


def architecture_field(**kwargs: Any) -> fields.String:
    """A GPU's architecture: one the service knows (omitted: told from the GPU's name)."""
    return fields.String(
        allow_none=True,
        validate=validate.OneOf(
            architectures.NAMES, error="unknown architecture {input!r}: the service knows {choices}"
        ),
        **kwargs,
    )


class GpuFiguresSchema(Schema):
    """Datasheet figures a GPU has wherever it is given (inline or written to the catalog),
    and the check that its MIG slices fit in the card."""

    class Meta:
        unknown = RAISE

    memory_bandwidth_tb_per_s = fields.Float(allow_none=True, validate=positive(1e3))
    # What the driver shows an engine, GiB (torch's total_memory); null: derived.
    memory_visible_gib = fields.Float(allow_none=True, validate=positive(1e5))
    peak_tflops = fields.Nested(PeakSchema, load_default=dict)
    # The on-demand price: the same as prices.on_demand_usd_per_hour (its older name).
    hourly_price_usd = fields.Float(allow_none=True, validate=validate.Range(min=0, max=MAX_HOURLY_USD))
    prices = fields.Nested(GpuPricesSchema, load_default=dict)

    @pre_load
    def _aliases(self, data: Any, **_: Any) -> Any:
        return unify_price_aliases(data)

    @validates_schema
    def _consistent(self, data: dict[str, Any], **_: Any) -> None:
        memory_gb = data.get("memory_gb")
        errors = {}
        for index, profile in enumerate(data.get("mig_profiles") or []):
            # Within the card, as NVIDIA's profiles are: instances x slices and x memory.
            for name, problem in mig_profile_problems(profile, memory_gb).items():
                errors[f"mig_profiles.{index}.{name}"] = [problem]
        if errors:
            raise ValidationError(errors)


class InlineGpuSchema(GpuFiguresSchema):
    """A GPU given inline: the catalog's GPU fields."""

    name = fields.String(load_default="inline GPU", validate=validate.Length(min=1, max=200))
    memory_gb = fields.Float(required=True, validate=positive(1e5))
    native_precisions = fields.List(
        fields.String(validate=validate.Length(max=32)), allow_none=True, validate=validate.Length(max=32)
    )
    interconnect = fields.Nested(InterconnectSchema, allow_none=True)
    gpus_per_node = Integer(load_default=8, validate=count(1, 1024))
    host_cpu_cores = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e4))
    mig_profiles = fields.List(fields.Nested(MigProfileSchema), load_default=list, validate=validate.Length(max=64))
    # Catalog fields that planning does not use.
    slug = fields.String(allow_none=True, validate=validate.Length(max=200))
    vendor = fields.String(allow_none=True, validate=validate.Length(max=100))
    architecture = architecture_field()
    form_factor = fields.String(allow_none=True, validate=validate.Length(max=200))
    price_date = fields.String(allow_none=True, validate=validate.Length(max=32))
    source = fields.String(allow_none=True, validate=validate.Length(max=5000))
    confidence = fields.String(allow_none=True, validate=validate.Length(max=64))
    notes = fields.String(allow_none=True, validate=validate.Length(max=5000))
    version = Integer(allow_none=True, validate=count(0, 2**31 - 1))

    @post_load
    def _spec(self, data: dict[str, Any], **_: Any) -> GpuSpec:
        link = data.get("interconnect") or {}
        natives = data.get("native_precisions")
        return GpuSpec(
            name=data["name"],
            memory_gb=data["memory_gb"],
            memory_bandwidth_tb_per_s=data.get("memory_bandwidth_tb_per_s"),
            peak_tflops=dict(data.get("peak_tflops") or {}),
            native_precisions=None if natives is None else tuple(natives),
            interconnect_kind=link.get("kind"),
            interconnect_bandwidth_gb_per_s=link.get("bandwidth_gb_per_s"),
            interconnect_latency_us=link.get("latency_us"),
            gpus_per_node=data["gpus_per_node"],
            hourly_price_usd=data.get("hourly_price_usd"),
            host_cpu_cores=data.get("host_cpu_cores"),
            mig_profiles=tuple(data.get("mig_profiles") or ()),
            memory_visible_gib=data.get("memory_visible_gib"),
            architecture=data.get("architecture"),
            prices=PriceFiguresSchema.spec(data.get("prices") or {}),
        )


class SlugOrInline(fields.Field[Any]):
    """A catalog slug (str) or an inline object loaded with `schema`."""

    def __init__(self, schema: type[Schema], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inline_schema = schema

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, str):
            slug = value.strip()
            if not slug or len(slug) > 200:
                raise ValidationError("must be a catalog slug (1 to 200 characters) or an object")
            return slug
        if isinstance(value, dict):
            return self.inline_schema().load(value)
        raise ValidationError("must be a catalog slug or an object")


def _precision_field(**kwargs: Any) -> fields.String:
    return fields.String(validate=_precision_validator(*kwargs.pop("extra", ())), **kwargs)


MAX_PRECISION_CHOICES = 8
# A mixed fleet's candidate GPUs and length buckets: a few of each make the integer program.
MAX_MIX_GPUS = 64
MAX_LENGTH_BUCKETS = 16
# `gpus=any`: every catalog GPU and MIG profile.
ANY_GPU = "any"


class CommaList(fields.List[str]):
    """A list of strings that also loads from one string of them comma-separated (`fp8`,
    `l4,h100-sxm`), as a spreadsheet or a JSON body writes it."""

    accepts_single = True  # app/openapi documents it as "a value or a list of values"

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        return super()._deserialize(value, attr, data, **kwargs)


class PrecisionChoices(CommaList):
    """One weight format, or a list of those a fleet's search may choose from: a plain string
    (`fp8`) loads as a list of one, so a fleet request written for one format still works."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            fields.String(validate=_precision_validator("auto")),
            validate=validate.Length(min=1, max=MAX_PRECISION_CHOICES, error=f"1 to {MAX_PRECISION_CHOICES} formats"),
            **kwargs,
        )


class GpuChoices(CommaList):
    """The GPUs a ranking or a mix may choose from (`any` among them: the whole catalog)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            fields.String(validate=validate.Length(min=1, max=64)),
            validate=validate.Length(min=1, max=MAX_MIX_GPUS, error=f"1 to {MAX_MIX_GPUS} GPUs, or any"),
            **kwargs,
        )


class SpeculativeSchema(Schema):
    """Speculative decoding on every endpoint that times (GET: dotted,
    `speculative.method=eagle`); a left-out count or rate takes the method's published default
    (app/sizing/speculation.py). `auto` (/v1/fleet only): plan each option with and without
    it and keep the cheaper fleet."""

    method = fields.String(required=True, validate=validate.OneOf(speculation.METHODS))
    num_speculative_tokens = Integer(allow_none=True, validate=count(1, 16))
    acceptance_rate = fields.Float(
        allow_none=True,
        validate=validate.Range(min=0, max=1, max_inclusive=False, error="must be in [0, 1)"),
    )
    draft_model = fields.String(allow_none=True, validate=validate.Length(min=1, max=200))
    auto = fields.Boolean(load_default=False)

    @validates_schema
    def _draft(self, data: dict[str, Any], **_: Any) -> None:
        drafting = data.get("method") == speculation.DRAFT_MODEL
        if drafting and not data.get("draft_model"):
            raise ValidationError({"draft_model": ["required with method=draft_model: a catalog model"]})
        if not drafting and data.get("draft_model"):
            raise ValidationError({"draft_model": ["only with method=draft_model"]})

    @post_load
    def _spec(self, data: dict[str, Any], **_: Any) -> speculation.Speculation:
        return speculation.speculation(
            data["method"],
            data.get("num_speculative_tokens"),
            data.get("acceptance_rate"),
            data.get("draft_model"),
            data["auto"],
        )


class FitSchema(Schema):
    """Inputs of /v1/fit."""

    model = SlugOrInline(InlineModelSchema, required=True)
    gpu = SlugOrInline(InlineGpuSchema, required=True)
    mig_profile = fields.String(allow_none=True, validate=validate.Length(min=1, max=64))
    tensor_parallel = Integer(allow_none=True, validate=count(1, 1024))
    weight_precision = _precision_field(allow_none=True, extra=("auto",))
    kv_precision = _precision_field(load_default="bf16")
    prompt_tokens = Integer(load_default=2048, validate=count(1, MAX_PROMPT_TOKENS))
    output_tokens = Integer(load_default=512, validate=count(1, MAX_OUTPUT_TOKENS))
    concurrency = Integer(load_default=1, validate=count(1, MAX_CONCURRENCY))
    # None: the engine's default (0.9 for ideal and vLLM, SGLang's mem_fraction_static…).
    gpu_memory_utilization = fields.Float(allow_none=True, validate=positive(1))
    # Given, it replaces the engine's reservations (ideal: 0).
    reserved_gb = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e5))
    # ideal: the seeds' arithmetic; vllm, sglang, trtllm: the catalog's engine profiles.
    # None: the service's DEFAULT_ENGINE setting (the catalog's `vllm` unless renamed).
    engine = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=64))
    # The replica's weights as the checkpoint weighs them (e.g. summed from safetensors).
    weights_bytes = fields.Float(allow_none=True, validate=positive(1e15))
    expert_parallel = Integer(allow_none=True, validate=count(1, 1024))
    max_num_seqs = Integer(allow_none=True, validate=count(1, MAX_CONCURRENCY))
    # The per-step token budget; an engine's profiling pass over it sets its activation peak.
    max_batched_tokens = Integer(allow_none=True, validate=count(1, MAX_PROMPT_TOKENS))
    # Prefix caching: the share of prompt tokens found in the cache, and a prefix every prompt
    # shares (a system prompt), held once per replica.
    prefix_cache_hit_rate = fields.Float(load_default=0.0, validate=validate.Range(min=0, max=1))
    shared_prefix_tokens = Integer(load_default=0, validate=count(0, MAX_PROMPT_TOKENS))
    # Speculative decoding: the drafter's memory here, its timing on every endpoint that times.
    speculative = fields.Nested(SpeculativeSchema, allow_none=True)

    # Whether the endpoint chooses speculation per option (`speculative.auto`): /v1/fleet.
    chooses_speculation = False

    @validates_schema
    def _shared_prefix(self, data: dict[str, Any], **_: Any) -> None:
        shared, prompt = data.get("shared_prefix_tokens") or 0, data.get("prompt_tokens")
        if prompt is not None and shared > prompt:
            raise ValidationError({"shared_prefix_tokens": [f"must be at most prompt_tokens ({prompt})"]})

    @validates_schema
    def _speculation_chosen(self, data: dict[str, Any], **_: Any) -> None:
        spec = data.get("speculative")
        if spec is not None and spec.auto and not self.chooses_speculation:
            raise ValidationError(
                {"speculative": {"auto": ["only /v1/fleet chooses speculation per option; here give it or leave it"]}}
            )

    @post_load(pass_original=True)
    def _typed(self, data: dict[str, Any], original: Any, **_: Any) -> Any:
        # The names the request states itself (a blank query value is already absent; a JSON
        # null counts as given): they win over a stored calibration's values.
        given = frozenset(original) if isinstance(original, dict) else frozenset()
        return self.typed(data, given)

    def typed(self, data: dict[str, Any], given: frozenset[str]) -> Any:
        """The loaded fields as the service's typed request."""
        return PlanRequest(data["model"], data["gpu"], data["engine"], self.inputs(data), given)

    @staticmethod
    def inputs(data: dict[str, Any]) -> PlanInputs:
        """The replica's knobs; `engine` stays out (the service resolves it in the catalog)."""
        known = {
            k: v for k, v in data.items() if k in PlanInputs.__dataclass_fields__ and v is not None and k != "engine"
        }
        if "sweep" in known:
            known["sweep"] = tuple(known["sweep"])
        if "kv_read_context" in known:
            known["kv_read_context"] = KvReadContext(known["kv_read_context"])
        return PlanInputs(**known)


class ThroughputSchema(FitSchema):
    """Inputs of /v1/throughput: /v1/fit's and the timing knobs."""

    # Below 1% of a datasheet peak no estimate means anything (calibration fits 0.05-1.0).
    # None: the engine's kernel efficiencies for the GPU's generation (ideal: 0.7 and 0.5).
    memory_efficiency = fields.Float(allow_none=True, validate=validate.Range(min=0.01, max=1))
    compute_efficiency = fields.Float(allow_none=True, validate=validate.Range(min=0.01, max=1))
    compute_precision = fields.String(allow_none=True, validate=validate.OneOf((*COMPUTE_PRECISIONS, "native")))
    include_communication = fields.Boolean(load_default=True)
    price_per_gpu_hour_usd = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e5))
    kv_read_context = fields.String(
        load_default=KvReadContext.AVERAGE.value, validate=validate.OneOf(tuple(KvReadContext))
    )
    sweep = fields.List(
        Integer(validate=count(1, MAX_CONCURRENCY)),
        load_default=list,
        validate=validate.Length(max=MAX_SWEEP, error=f"at most {MAX_SWEEP} concurrencies"),
    )


class CostSchema(ThroughputSchema):
    """Inputs of /v1/cost: a price (or a GPU with one) and tokens/s (or the throughput
    fields to derive it from)."""

    model = SlugOrInline(InlineModelSchema, allow_none=True)
    gpu = SlugOrInline(InlineGpuSchema, allow_none=True)
    gpus = fields.Float(allow_none=True, validate=positive(1e6))
    tokens_per_s = fields.Float(allow_none=True, validate=validate.Range(min=1e-3, max=1e12))
    hours_per_month = fields.Float(load_default=730.0, validate=validate.Range(min=0, max=744))
    utilization = fields.Float(load_default=1.0, validate=positive(1))

    @validates_schema
    def _priced(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("price_per_gpu_hour_usd") is None and data.get("gpu") is None:
            raise ValidationError({"price_per_gpu_hour_usd": ["give price_per_gpu_hour_usd or a gpu with a price"]})
        if data.get("tokens_per_s") is None and data.get("model") is not None and data.get("gpu") is None:
            raise ValidationError({"gpu": ["needed to derive tokens_per_s from the model"]})

    def typed(self, data: dict[str, Any], given: frozenset[str]) -> CostRequest:
        return CostRequest(
            model=data.get("model"),
            gpu=data.get("gpu"),
            engine=data["engine"],
            inputs=self.inputs(data),
            tokens_per_s=data.get("tokens_per_s"),
            gpus=data.get("gpus"),
            hours_per_month=data["hours_per_month"],
            utilization=data["utilization"],
            given=given,
        )


def load(schema: Schema, payload: dict[str, Any], *, strict: bool) -> Any:
    """Strict (POST JSON) rejects unknown fields so typos surface; a query string's names were
    checked before (requests.check_unknown). A planning schema loads into its typed request."""
    return schema.load(payload, unknown=RAISE if strict else EXCLUDE)


class RooflineSchema(Schema):
    """Inputs of /v1/roofline: one GEMM C[M,N] = A[M,K] x B[K,N] on a GPU or on given peaks."""

    m = Integer(required=True, validate=count(1, 10_000_000))
    k = Integer(required=True, validate=count(1, 10_000_000))
    n = Integer(required=True, validate=count(1, 10_000_000))
    gpu = SlugOrInline(InlineGpuSchema, allow_none=True)
    peak_tflops = fields.Float(allow_none=True, validate=positive(1e7))
    memory_bandwidth_tb_per_s = fields.Float(allow_none=True, validate=positive(1e3))
    compute_precision = fields.String(load_default="bf16", validate=validate.OneOf(COMPUTE_PRECISIONS))
    activation_precision = _precision_field(load_default="bf16")
    weight_precision = _precision_field(load_default="bf16")

    @validates_schema
    def _hardware(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("gpu") is None:
            missing = [n for n in ("peak_tflops", "memory_bandwidth_tb_per_s") if data.get(n) is None]
            if missing:
                raise ValidationError({n: ["required when no gpu is given"] for n in missing})

    @post_load
    def _typed(self, data: dict[str, Any], **_: Any) -> RooflineRequest:
        return RooflineRequest(
            m=data["m"],
            k=data["k"],
            n=data["n"],
            gpu=data.get("gpu"),
            peak_tflops=data.get("peak_tflops"),
            memory_bandwidth_tb_per_s=data.get("memory_bandwidth_tb_per_s"),
            compute_precision=data["compute_precision"],
            activation_precision=data["activation_precision"],
            weight_precision=data["weight_precision"],
        )


SLO_PERCENTILES = (50, 90, 95, 99)
MODES = tuple(LatencyMode)
MAX_SWEEP_RATES = 64
# Requests x rates one simulate answer may take (about 20 us a request here: some 4 s).
MAX_SIMULATED_REQUESTS = 200_000


class LengthSpreadSchema(Schema):
    """How far request lengths spread about their means: coefficients of variation of gamma
    lengths (/v1/latency, /v1/fleet, /v1/batch)."""

    prompt_tokens_cv = fields.Float(load_default=0.0, validate=validate.Range(min=0, max=4))
    output_tokens_cv = fields.Float(load_default=0.0, validate=validate.Range(min=0, max=4))


# (prompt, output) pairs a simulation may draw its lengths from (a /v1/traces answer has 1,000).
MAX_LENGTH_SAMPLES = 10_000
LENGTH_FIELDS = ("prompt_tokens", "output_tokens", "prompt_tokens_cv", "output_tokens_cv")


def _sample_pairs(value: Any) -> list[tuple[int, int]] | None:
    """`length_samples` as pairs of whole numbers >= 1, or None when it is not (the field's own
    validation then says what is wrong)."""
    if not isinstance(value, list) or not value or len(value) > MAX_LENGTH_SAMPLES:
        return None
    pairs = []
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2):
            return None
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in pair):
            return None
        pairs.append((pair[0], pair[1]))
    return pairs


def _spread(values: list[int]) -> tuple[int, float]:
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return max(1, round(mean)), min(4.0, sd / mean)


class WorkloadSchema(LengthSpreadSchema):
    """Random arrivals, spread lengths and percentile SLOs (/v1/latency, /v1/fleet)."""

    # mode=simulate draws lengths from these pairs; the analytic model (and a fleet's sizing)
    # takes their means and cvs, derived here. POST only.
    length_samples = fields.List(
        fields.List(Integer(validate=count(1, MAX_PROMPT_TOKENS)), validate=validate.Length(equal=2)),
        allow_none=True,
        validate=validate.Length(min=1, max=MAX_LENGTH_SAMPLES, error=f"1 to {MAX_LENGTH_SAMPLES} pairs"),
    )

    @pre_load
    def _lengths_from_samples(self, data: Any, **_: Any) -> Any:
        if not isinstance(data, dict) or data.get("length_samples") is None:
            return data
        given = [name for name in LENGTH_FIELDS if name in data]
        if given:
            message = "length_samples give the lengths and their spread: leave this out"
            raise ValidationError({name: [message] for name in given})
        pairs = _sample_pairs(data["length_samples"])
        if pairs is None:
            return data
        (prompt, prompt_cv), (output, output_cv) = _spread([p for p, _ in pairs]), _spread([o for _, o in pairs])
        derived = {"prompt_tokens": prompt, "output_tokens": output}
        return {**data, **derived, "prompt_tokens_cv": prompt_cv, "output_tokens_cv": output_cv}

    arrival = fields.String(load_default=Arrival.POISSON.value, validate=validate.OneOf(tuple(Arrival)))
    # vLLM's benchmark convention: the gamma shape k; squared CV of inter-arrival times 1/k.
    burstiness = fields.Float(allow_none=True, validate=validate.Range(min=0.05, max=100))
    slo_percentile = Integer(load_default=95, validate=validate.OneOf(SLO_PERCENTILES))
    ttft_slo_ms = fields.Float(allow_none=True, validate=positive(1e7))
    tpot_slo_ms = fields.Float(allow_none=True, validate=positive(1e7))
    e2e_slo_ms = fields.Float(allow_none=True, validate=positive(1e8))

    @validates_schema
    def _arrivals(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("arrival") == Arrival.POISSON and data.get("burstiness") not in (None, 1, 1.0):
            raise ValidationError({"burstiness": ["needs arrival=gamma (Poisson arrivals have burstiness 1)"]})
        samples = data.get("length_samples")
        if samples and data.get("mode") != LatencyMode.SIMULATE:
            raise ValidationError({"length_samples": ["the simulator draws them: give mode=simulate"]})
        too_long = next((i for i, (_, output) in enumerate(samples or ()) if output > MAX_OUTPUT_TOKENS), None)
        if too_long is not None:
            raise ValidationError({f"length_samples.{too_long}.1": [f"an output of at most {MAX_OUTPUT_TOKENS:,}"]})

    @staticmethod
    def arrivals(data: dict[str, Any]) -> Arrivals:
        return Arrivals(
            burstiness=data.get("burstiness") or 1.0,
            prompt_tokens_cv=data["prompt_tokens_cv"],
            output_tokens_cv=data["output_tokens_cv"],
            slo_percentile=float(data["slo_percentile"]),
            e2e_slo_ms=data.get("e2e_slo_ms"),
            length_samples=tuple((p, o) for p, o in data.get("length_samples") or ()),
        )

    def workload(self, data: dict[str, Any]) -> Workload:
        return Workload(self.arrivals(data), data.get("ttft_slo_ms"), data.get("tpot_slo_ms"))


class SimulationSchema(Schema):
    """How to evaluate the arrivals: the analytic model, or the simulator with its seed and size."""

    mode = fields.String(load_default=LatencyMode.ANALYTIC, validate=validate.OneOf(MODES))
    seed = Integer(load_default=0, validate=count(0, 2**31 - 1))
    requests = Integer(load_default=DEFAULT_REQUESTS, validate=count(1_000, MAX_REQUESTS))

    @staticmethod
    def simulation(data: dict[str, Any]) -> Simulation | None:
        return Simulation(data["seed"], data["requests"]) if data["mode"] == LatencyMode.SIMULATE else None


class PeriodSchema(Schema):
    period = fields.String(required=True, validate=validate.Length(min=1, max=64))
    requests_per_day = fields.Float(required=True, validate=validate.Range(min=0, max=1e13))
    peak_to_average = fields.Float(allow_none=True, validate=validate.Range(min=1, max=1000))


class LengthBucketSchema(Schema):
    prompt_tokens = Integer(required=True, validate=count(1, MAX_PROMPT_TOKENS))
    output_tokens = Integer(required=True, validate=count(1, MAX_OUTPUT_TOKENS))
    share = fields.Float(required=True, validate=validate.Range(min=0, max=1))


class MixSchema(Schema):
    """A mixed fleet: several replica kinds, each serving the length buckets it is cheapest
    for (app/sizing/mix.py, solved as an integer program)."""

    gpus = GpuChoices(allow_none=True)
    mix = fields.Boolean(load_default=False)
    length_buckets = fields.List(
        fields.Nested(LengthBucketSchema),
        allow_none=True,
        validate=validate.Length(min=1, max=MAX_LENGTH_BUCKETS, error=f"1 to {MAX_LENGTH_BUCKETS} buckets"),
    )

    @validates_schema
    def _mix(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("gpus") is not None and data.get("gpu") is not None:
            raise ValidationError({"gpus": ["give gpu (one GPU) or gpus (those to choose from), not both"]})
        buckets = data.get("length_buckets")
        if buckets is not None:
            total = math.fsum(b["share"] for b in buckets)
            if abs(total - 1.0) > SHARE_TOLERANCE:
                raise ValidationError({"length_buckets": [f"the shares sum to {total:g}, not 1"]})
            if not data.get("mix"):
                raise ValidationError({"length_buckets": ["length buckets split a mixed fleet: give mix=true"]})
        if not data.get("mix"):
            return
        if data.get("gpu") is not None:
            raise ValidationError({"gpu": ["a mixed fleet chooses among `gpus` (or the whole catalog): not with gpu"]})
        for name in ("topology", "per_replica_tokens_per_s", "tensor_parallel", "mig_profile"):
            value = data.get(name)
            if value is not None and value != FleetLayout.AGGREGATED:
                raise ValidationError({name: ["not offered with mix=true: each kind's is searched"]})


class TopologySchema(Schema):
    """How a deployment serves requests: one kind of replica, or prefill and decode pools with
    the prompt's KV moved between them over the network (or NVLink inside a node)."""

    topology = fields.String(load_default=FleetLayout.AGGREGATED, validate=validate.OneOf(TOPOLOGIES))
    network_gb_per_s = fields.Float(allow_none=True, validate=positive(1e5))

    @validates_schema
    def _topology(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("topology") != FleetLayout.DISAGGREGATED:
            return
        if data.get("engine") == IDEAL:
            message = "a disaggregated topology needs a serving engine that runs one (vllm, sglang or trtllm)"
            raise ValidationError({"topology": [message]})
        for name, why in (
            ("per_replica_tokens_per_s", "a measured aggregated replica says nothing of either pool"),
            ("e2e_slo_ms", "not offered with topology=disaggregated yet: give ttft_slo_ms and tpot_slo_ms"),
        ):
            if data.get(name) is not None:
                raise ValidationError({name: [why]})


MAX_HORIZON_MONTHS = MAX_FORECAST_PERIODS * 12
# What an engine may serve a model as and a PromQL label matcher can hold as it is.
SERVED_NAME = r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,199}$"
SERVED_NAME_ERROR = "1 to 200 letters, digits and . _ / : @ + - (no quotes: every trigger's query filters on it)"
COMMITMENT_CHOICES = (*TERM_MONTHS, "none")


class OwnershipSchema(Schema):
    """Owning the fleet instead of renting it: how long the purchase is written off over, and
    what running it costs."""

    class Meta:
        unknown = RAISE

    amortization_months = Integer(required=True, validate=count(1, 600))
    # The facility's overhead on the GPUs' power (1 = none); the same as the request's pue.
    pue = fields.Float(allow_none=True, validate=validate.Range(min=1, max=5))
    electricity_usd_per_kwh = fields.Float(required=True, validate=validate.Range(min=0, max=100))
    hosting_usd_per_kw_month = fields.Float(required=True, validate=validate.Range(min=0, max=1e5))


class FinanceSchema(Schema):
    """How the fleet is paid for and what it draws: pricing=optimize's commitments and spot,
    price overrides, owning, energy and a hosted API's prices (app/planning/finance.py)."""

    pricing = fields.String(load_default=Pricing.ON_DEMAND.value, validate=validate.OneOf(tuple(Pricing)))
    commitments = CommaList(
        fields.String(validate=validate.OneOf(COMMITMENT_CHOICES)),
        allow_none=True,
        validate=validate.Length(min=1, max=len(COMMITMENT_CHOICES)),
    )
    spot = fields.Boolean(allow_none=True)
    period_months = Integer(allow_none=True, validate=validate.OneOf(PERIOD_MONTHS))
    horizon_months = Integer(allow_none=True, validate=count(1, MAX_HORIZON_MONTHS))
    prices = fields.Nested(PriceFiguresSchema, allow_none=True)
    pue = fields.Float(allow_none=True, validate=validate.Range(min=1, max=5))
    ownership = fields.Nested(OwnershipSchema, allow_none=True)
    grid_g_co2_per_kwh = fields.Float(allow_none=True, validate=validate.Range(min=0, max=5_000))
    api_price_per_million_input_tokens_usd = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e4))
    api_price_per_million_output_tokens_usd = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e4))

    @validates_schema
    def _finance(self, data: dict[str, Any], **_: Any) -> None:
        errors: dict[str, list[str]] = {}
        optimize = data.get("pricing") == Pricing.OPTIMIZE
        for name in ("commitments", "spot", "period_months", "horizon_months"):
            if data.get(name) is not None and not optimize:
                errors[name] = ["needs pricing=optimize"]
        prices = data.get("prices") or {}
        given = data.get("price_per_gpu_hour_usd")
        on_demand = prices.get("on_demand_usd_per_hour")
        if given is not None and on_demand is not None and given != on_demand:
            message = "price_per_gpu_hour_usd is prices.on_demand_usd_per_hour: give one, or the same value"
            errors["price_per_gpu_hour_usd"] = errors["prices.on_demand_usd_per_hour"] = [message]
        owned_pue = (data.get("ownership") or {}).get("pue")
        if owned_pue is not None and data.get("pue") is not None and owned_pue != data["pue"]:
            errors["ownership.pue"] = errors["pue"] = ["pue and ownership.pue are one figure: give one, or the same"]
        pair = ("api_price_per_million_input_tokens_usd", "api_price_per_million_output_tokens_usd")
        for name, other in (pair, pair[::-1]):
            if data.get(name) is not None and data.get(other) is None:
                errors[other] = [f"required with {name}: a hosted API prices both"]
        if optimize:
            errors.update(_horizon_errors(data))
        pools = "mix" if data.get("mix") else "topology" if data.get("topology") == FleetLayout.DISAGGREGATED else None
        for name in ("ownership", "api_price_per_million_input_tokens_usd"):
            if data.get(name) is not None and pools is not None:
                errors[name] = [f"not offered with {pools} yet: it plans one kind of replica"]
        if optimize and pools is not None:
            errors["pricing"] = [f"optimize is not offered with {pools} yet: it plans one kind of replica"]
        if errors:
            raise ValidationError(errors)

    @staticmethod
    def finance(data: dict[str, Any]) -> Finance:
        owned = data.get("ownership")
        terms = data.get("commitments")
        return Finance(
            pricing=Pricing(data["pricing"]),
            commitments=None if terms is None else tuple(t for t in dict.fromkeys(terms) if t != "none"),
            spot=data.get("spot"),
            period_months=data.get("period_months"),
            horizon_months=data.get("horizon_months"),
            prices=PriceFiguresSchema.spec(data.get("prices") or {}),
            pue=data.get("pue") or (owned or {}).get("pue") or 1.0,
            ownership=None
            if owned is None
            else OwnershipInputs(
                owned["amortization_months"], owned["electricity_usd_per_kwh"], owned["hosting_usd_per_kw_month"]
            ),
            grid_g_co2_per_kwh=data.get("grid_g_co2_per_kwh"),
            api_usd_per_million_input=data.get("api_price_per_million_input_tokens_usd"),
            api_usd_per_million_output=data.get("api_price_per_million_output_tokens_usd"),
        )


def _horizon_errors(data: dict[str, Any]) -> dict[str, list[str]]:
    """pricing=optimize's horizon: the forecast's length, or horizon_months of flat traffic,
    a whole number of periods; no commitment asked for longer than it."""
    forecast = data.get("forecast") or ()
    months = data.get("period_months") or (1 if forecast else FLAT_PERIOD_MONTHS)
    if forecast and data.get("horizon_months") is not None:
        return {"horizon_months": ["a forecast's length is the horizon: give one or the other"]}
    horizon = len(forecast) * months if forecast else data.get("horizon_months") or FLAT_HORIZON_MONTHS
    if horizon % months:
        return {"horizon_months": [f"must be a whole number of period_months ({months})"]}
    if horizon // months > MAX_FORECAST_PERIODS:
        # The integer program grows with the periods: a flat traffic has no more than a forecast.
        most = MAX_FORECAST_PERIODS * months
        return {"horizon_months": [f"at most {MAX_FORECAST_PERIODS} periods: {most} months at {months} a period"]}
    terms = data.get("commitments") or ()
    if "none" in terms and len(set(terms)) > 1:
        return {"commitments": ["none means no commitment: not with a term"]}
    longer = [t for t in terms if t in TERM_MONTHS and TERM_MONTHS[t] > horizon]
    if longer:
        term = longer[0]
        message = f"a {term} commitment ({TERM_MONTHS[term]} months) is longer than the {horizon}-month horizon"
        return {"commitments": [message]}
    return {}


class FleetSchema(ThroughputSchema, WorkloadSchema, SimulationSchema, TopologySchema, MixSchema, FinanceSchema):
    """Inputs of /v1/fleet: the replica's knobs (as /v1/throughput), the traffic and how it arrives."""

    chooses_speculation = True

    gpu = SlugOrInline(InlineGpuSchema, allow_none=True)
    # Several formats: the search tries each (quality is the user's call, so only when asked).
    weight_precision = PrecisionChoices(allow_none=True)  # type: ignore[assignment]
    requests_per_day = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e13))
    requests_per_second = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e8))
    peak_to_average = fields.Float(load_default=1.0, validate=validate.Range(min=1, max=1000))
    per_replica_tokens_per_s = fields.Float(allow_none=True, validate=positive(1e9))
    spare_replicas = Integer(load_default=1, validate=count(0, 1000))
    zones = Integer(load_default=1, validate=count(1, 64))
    headroom = fields.Float(load_default=0.0, validate=validate.Range(min=0, max=10))
    hours_per_month = fields.Float(load_default=730.0, validate=validate.Range(min=0, max=744))
    load_gb_per_s = fields.Float(load_default=2.0, validate=positive(1e4))
    engine_startup_s = fields.Float(load_default=60.0, validate=validate.Range(min=0, max=3600))
    limit = Integer(load_default=20, validate=count(1, 500))
    deployment = fields.String(allow_none=True, validate=validate.Regexp(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"))
    prometheus_url = fields.String(load_default="http://prometheus.monitoring:9090", validate=validate.Length(max=500))
    served_model_name = fields.String(allow_none=True, validate=validate.Regexp(SERVED_NAME, error=SERVED_NAME_ERROR))
    scale_to_zero = fields.Boolean(load_default=False)
    forecast = fields.List(
        fields.Nested(PeriodSchema),
        allow_none=True,
        validate=validate.Length(min=1, max=MAX_FORECAST_PERIODS, error=f"1 to {MAX_FORECAST_PERIODS} periods"),
    )

    @validates_schema
    def _traffic(self, data: dict[str, Any], **_: Any) -> None:
        given = [n for n in ("requests_per_day", "requests_per_second") if data.get(n) is not None]
        if len(given) != 1 and not data.get("forecast"):
            message = "give exactly one of requests_per_day and requests_per_second"
            raise ValidationError({"requests_per_day": [message], "requests_per_second": [message]})

    def typed(self, data: dict[str, Any], given: frozenset[str]) -> FleetRequest:
        forecast = data.get("forecast") or ()
        # A period without its own peak ratio takes the request's (not the busiest period's, which
        # the fleet may be sized on).
        default_ratio = data["peak_to_average"]
        periods = tuple(
            Period(p["period"], p["requests_per_day"], _given_or(p.get("peak_to_average"), default_ratio))
            for p in forecast
        )
        choices = tuple(dict.fromkeys(data.get("weight_precision") or ()))
        single = choices[0] if len(choices) == 1 else None
        # prices.on_demand_usd_per_hour is price_per_gpu_hour_usd by its catalog name.
        on_demand = (data.get("prices") or {}).get("on_demand_usd_per_hour", data.get("price_per_gpu_hour_usd"))
        return FleetRequest(
            model=data["model"],
            gpu=data.get("gpu"),
            engine=data["engine"],
            inputs=self.inputs({**data, "weight_precision": single, "price_per_gpu_hour_usd": on_demand}),
            weight_precisions=choices if len(choices) > 1 else (),
            traffic=FleetInputs(
                *_sized_traffic(data, periods),
                ttft_slo_ms=data.get("ttft_slo_ms"),
                tpot_slo_ms=data.get("tpot_slo_ms"),
                per_replica_tokens_per_s=data.get("per_replica_tokens_per_s"),
                redundancy=Redundancy(data["spare_replicas"], data["zones"], data["headroom"]),
                hours_per_month=data["hours_per_month"],
                load_gb_per_s=data["load_gb_per_s"],
                engine_startup_s=data["engine_startup_s"],
                arrivals=self.arrivals(data),
            ),
            forecast=periods,
            limit=data["limit"],
            deployment=data.get("deployment"),
            prometheus_url=data["prometheus_url"],
            served_model_name=data.get("served_model_name"),
            scale_to_zero=data["scale_to_zero"],
            simulation=self.simulation(data),
            given=given,
            layout=FleetLayout.of(data["topology"], data["mix"]),
            network_gb_per_s=data.get("network_gb_per_s"),
            gpus=_gpu_choices(data.get("gpus")),
            length_buckets=_buckets(data.get("length_buckets")),
            finance=self.finance(data),
        )


def _buckets(given: list[dict[str, Any]] | None) -> tuple[LengthBucket, ...] | None:
    if not given:
        return None
    return tuple(LengthBucket(b["prompt_tokens"], b["output_tokens"], b["share"]) for b in given)


def _gpu_choices(names: list[str] | None) -> tuple[str, ...] | None:
    """The GPUs a fleet may choose from: those named, or None for the whole catalog (`any`)."""
    if not names or [n.strip().lower() for n in names] == [ANY_GPU]:
        return None
    return tuple(dict.fromkeys(names))


def _sized_traffic(data: dict[str, Any], periods: tuple[Period, ...]) -> tuple[float, float]:
    """The average arrival rate and peak ratio the replica and the fleet are sized on: given
    per second or per day, else the forecast's busiest period (the highest peak), so that the
    chosen option is the one that carries the forecast at its height."""
    if data.get("requests_per_second") is not None:
        return float(data["requests_per_second"]), data["peak_to_average"]
    if data.get("requests_per_day") is not None:
        return float(data["requests_per_day"]) / SECONDS_PER_DAY, data["peak_to_average"]

    def ratio(period: Period) -> float:
        return _given_or(period.peak_to_average, data["peak_to_average"])

    busiest = max(periods, key=lambda period: period.requests_per_day * ratio(period))
    return busiest.requests_per_day / SECONDS_PER_DAY, ratio(busiest)


def _given_or(value: float | None, default: float) -> float:
    return default if value is None else value


class LatencySchema(ThroughputSchema, WorkloadSchema, SimulationSchema, TopologySchema):
    """Inputs of /v1/latency: one replica's knobs (as /v1/throughput), the arrivals, and the
    rates to evaluate."""

    request_rate = fields.Float(allow_none=True, validate=positive(1e6))
    sweep_rates = fields.List(
        fields.Float(validate=positive(1e6)),
        load_default=list,
        validate=validate.Length(max=MAX_SWEEP_RATES, error=f"at most {MAX_SWEEP_RATES} rates"),
    )

    @validates_schema
    def _rates(self, data: dict[str, Any], **_: Any) -> None:
        if (data.get("request_rate") is None) == (not data.get("sweep_rates")):
            message = "give exactly one of request_rate and sweep_rates"
            raise ValidationError({"request_rate": [message], "sweep_rates": [message]})
        rates = len(data.get("sweep_rates") or ()) or 1
        if (
            data.get("mode") == LatencyMode.SIMULATE
            and rates * data.get("requests", DEFAULT_REQUESTS) > MAX_SIMULATED_REQUESTS
        ):
            # What keeps one answer within a few seconds of a worker (gunicorn's timeout is 30 s).
            message = f"at most {MAX_SIMULATED_REQUESTS} simulated requests over all rates: fewer requests or rates"
            raise ValidationError({"requests": [message]})
        if data.get("mode") == LatencyMode.SIMULATE and data.get("topology") == FleetLayout.DISAGGREGATED:
            message = "a P/D unit is analytic here; /v1/fleet?topology=disaggregated&mode=simulate simulates each pool"
            raise ValidationError({"mode": [message]})

    def typed(self, data: dict[str, Any], given: frozenset[str]) -> LatencyRequest:
        rates = (data["request_rate"],) if data.get("request_rate") is not None else tuple(data["sweep_rates"])
        return LatencyRequest(
            model=data["model"],
            gpu=data["gpu"],
            engine=data["engine"],
            inputs=self.inputs(data),
            workload=self.workload(data),
            rates=rates,
            simulation=self.simulation(data),
            given=given,
            topology=FleetLayout(data["topology"]),
            network_gb_per_s=data.get("network_gb_per_s"),
        )


class BatchSchema(ThroughputSchema, LengthSpreadSchema):
    """Inputs of /v1/batch: one replica's knobs (as /v1/throughput), how long the requests
    are and how many are queued at once, and the simulation's seed."""

    requests = Integer(load_default=DEFAULT_BURST_REQUESTS, validate=count(1, MAX_REQUESTS))
    seed = Integer(load_default=0, validate=count(0, 2**31 - 1))

    def typed(self, data: dict[str, Any], given: frozenset[str]) -> BatchRequest:
        return BatchRequest(
            model=data["model"],
            gpu=data["gpu"],
            engine=data["engine"],
            inputs=self.inputs(data),
            requests=data["requests"],
            prompt_tokens_cv=data["prompt_tokens_cv"],
            output_tokens_cv=data["output_tokens_cv"],
            seed=data["seed"],
            given=given,
        )


MAX_DAY_HOURS = 48
MAX_DELAY_S = 24 * 3600.0


class HourSchema(Schema):
    """One hour of a simulated day's traffic."""

    class Meta:
        unknown = RAISE

    hour = fields.String(allow_none=True, validate=validate.Length(min=1, max=64))
    # /v1/traces' hourly periods as they come: a label, the requests seen, the seconds of the
    # hour the log covers and the rate over them as requests a day.
    period = fields.String(allow_none=True, validate=validate.Length(min=1, max=64))
    requests = fields.Float(allow_none=True, validate=validate.Range(min=0, max=1e9))
    covered_s = fields.Float(allow_none=True, validate=validate.Range(min=0, max=3600))
    requests_per_day = fields.Float(allow_none=True, validate=validate.Range(min=0, max=24e9))

    @validates_schema
    def _count(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("requests") is None and data.get("requests_per_day") is None:
            raise ValidationError(
                {"requests": ["give the hour's requests (or a /v1/traces period's requests_per_day)"]}
            )

    @staticmethod
    def requests_in(row: dict[str, Any]) -> float:
        """The hour's requests: a trace period's rate over its covered part (requests_per_day /
        24) when given, else its count."""
        if row.get("requests_per_day") is not None:
            return float(row["requests_per_day"]) / 24
        return float(row["requests"])


class DayPolicySchema(Schema):
    """The autoscaling policy a simulated day runs (defaults: the plan's)."""

    class Meta:
        unknown = RAISE

    trigger = fields.String(allow_none=True, validate=validate.Length(min=1, max=100))
    threshold = fields.Float(allow_none=True, validate=positive(1e7))
    scale_up_delay_s = fields.Float(allow_none=True, validate=validate.Range(min=0, max=MAX_DELAY_S))
    scale_down_delay_s = fields.Float(allow_none=True, validate=validate.Range(min=0, max=MAX_DELAY_S))
    min_replicas = Integer(allow_none=True, validate=count(0, 1000))
    max_replicas = Integer(allow_none=True, validate=count(1, 1000))
    warm_pool = Integer(load_default=0, validate=count(0, 100))

    @validates_schema
    def _bounds(self, data: dict[str, Any], **_: Any) -> None:
        low, high = data.get("min_replicas"), data.get("max_replicas")
        if low is not None and high is not None and low > high:
            raise ValidationError({"min_replicas": [f"min_replicas {low} is above max_replicas {high}"]})
        if data.get("threshold") is not None and data.get("trigger") is None:
            raise ValidationError({"threshold": ["a threshold needs its trigger"]})


class DaySchema(ThroughputSchema, WorkloadSchema):
    """Inputs of /v1/autoscaling/simulate: one replica's knobs (as /v1/latency), the requests
    of each hour of the day, the policy, and the recommendation's target."""

    forecast = fields.List(
        fields.Nested(HourSchema),
        required=True,
        validate=validate.Length(min=1, max=MAX_DAY_HOURS, error=f"1 to {MAX_DAY_HOURS} hourly rows"),
    )
    policy = fields.Nested(DayPolicySchema, load_default=dict)
    node_provisioning_s = fields.Float(load_default=180.0, validate=validate.Range(min=0, max=MAX_DELAY_S))
    load_gb_per_s = fields.Float(load_default=2.0, validate=positive(1e4))
    engine_startup_s = fields.Float(load_default=60.0, validate=validate.Range(min=0, max=3600))
    spare_replicas = Integer(load_default=1, validate=count(0, 1000))
    recommend = fields.Boolean(load_default=False)
    max_violation_rate = fields.Float(load_default=0.01, validate=validate.Range(min=0, max=1))
    seed = Integer(load_default=0, validate=count(0, 2**31 - 1))
    served_model_name = fields.String(allow_none=True, validate=validate.Regexp(SERVED_NAME, error=SERVED_NAME_ERROR))

    @validates_schema
    def _day(self, data: dict[str, Any], **_: Any) -> None:
        rows = data.get("forecast") or ()
        if rows and not any(HourSchema.requests_in(row) > 0 for row in rows):
            raise ValidationError({"forecast": ["no hour has a request: nothing to simulate"]})

    def typed(self, data: dict[str, Any], given: frozenset[str]) -> DayRequest:
        policy = data["policy"]
        return DayRequest(
            model=data["model"],
            gpu=data["gpu"],
            engine=data["engine"],
            inputs=self.inputs(data),
            workload=self.workload(data),
            hourly_requests=tuple(HourSchema.requests_in(row) for row in data["forecast"]),
            policy=DayPolicy(
                trigger=policy.get("trigger"),
                threshold=policy.get("threshold"),
                scale_up_delay_s=policy.get("scale_up_delay_s"),
                scale_down_delay_s=policy.get("scale_down_delay_s"),
                min_replicas=policy.get("min_replicas"),
                max_replicas=policy.get("max_replicas"),
                warm_pool=policy.get("warm_pool", 0),
            ),
            node_provisioning_s=data["node_provisioning_s"],
            load_gb_per_s=data["load_gb_per_s"],
            engine_startup_s=data["engine_startup_s"],
            spare_replicas=data["spare_replicas"],
            recommend=data["recommend"],
            max_violation_rate=data["max_violation_rate"],
            seed=data["seed"],
            served_model_name=data.get("served_model_name"),
            given=given,
        )


@dataclass(frozen=True)
class PlanningEndpoint:
    """A planning endpoint: its path, its Flask endpoint, its metric label and the schema
    instance its view parses with. The one list the views, the answer memo, the metrics and
    the OpenAPI generator read."""

    path: str
    endpoint: str
    label: str
    schema: Schema


PLANNING_ENDPOINTS = (
    PlanningEndpoint("/v1/fit", "planning.fit", "fit", FitSchema()),
    PlanningEndpoint("/v1/throughput", "planning.throughput", "throughput", ThroughputSchema()),
    PlanningEndpoint("/v1/cost", "planning.cost", "cost", CostSchema()),
    PlanningEndpoint("/v1/roofline", "planning.roofline", "roofline", RooflineSchema()),
    # Rates replace the one concurrency and the sweep; the simulator reads each context as it is.
    PlanningEndpoint(
        "/v1/latency",
        "planning.latency",
        "latency",
        LatencySchema(exclude=("sweep", "concurrency", "kv_read_context")),
    ),
    # Every request of the batch is queued at once: no concurrency, no sweep, contexts as they are.
    PlanningEndpoint(
        "/v1/batch",
        "planning.batch",
        "batch",
        BatchSchema(exclude=("sweep", "concurrency", "kv_read_context")),
    ),
    # The fleet's replica takes /v1/throughput's knobs, but one concurrency is not its input.
    PlanningEndpoint(
        "/v1/fleet",
        "fleet.fleet",
        "fleet",
        FleetSchema(exclude=("sweep", "concurrency", "kv_read_context")),
    ),
    # A day of a fleet under a policy: the replica's knobs as /v1/latency's, the hours' traffic.
    PlanningEndpoint(
        "/v1/autoscaling/simulate",
        "autoscaling.simulate",
        "autoscaling",
        DaySchema(exclude=("sweep", "concurrency", "kv_read_context")),
    ),
)
PLANNING_BY_PATH = {e.path: e for e in PLANNING_ENDPOINTS}
PLANNING_BY_ENDPOINT = {e.endpoint: e for e in PLANNING_ENDPOINTS}
