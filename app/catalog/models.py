"""The catalog's tables: models, GPUs with their MIG profiles, weight precisions and serving
engines.

Columns follow catalog_seed/SCHEMA.md. Rows are data only: planning happens on the plain
specs of `app.sizing.specs`, built by `app.catalog.convert`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    event,
    func,
    inspect,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    UOWTransaction,
    attributes,
    declared_attr,
    mapped_column,
    relationship,
)

from app.sizing.engine import KV_RULES

# Stable constraint names, so later migrations can drop or alter them on every backend
# (SQLite's batch mode needs names to find constraints again).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

SLUG_LENGTH = 100
NAME_LENGTH = 200
# Engine names are what a planning request's `engine` and a calibration's `engine` say.
ENGINE_NAME_LENGTH = 32
ENGINE_VERSION_LENGTH = 64
ARCHITECTURE_LENGTH = 32
# Slugs are URL path segments and stable identifiers: `llama-3.1-8b`, `h100-sxm`.
SLUG_PATTERN = r"^[a-z0-9][a-z0-9.-]*$"
PRICE_DATE_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])$"
VENDORS = ("nvidia", "amd")
CONFIDENCE_LEVELS = ("primary", "vendor-transcribed", "secondary", "derived")


# gpus.prices_<figure>: the numbers of a GPU document's `prices` beyond the on-demand rate.
GPU_PRICE_FIGURES = (
    "prices_reserved_1y_usd_per_hour",
    "prices_reserved_3y_usd_per_hour",
    "prices_spot_usd_per_hour",
    "prices_spot_interruptions_per_hour",
    "prices_purchase_usd",
    "prices_power_w",
    "prices_idle_power_w",
)


class Base(DeclarativeBase):
    """Declarative base carrying the naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware timestamp that reads back as UTC on every backend.

    SQLite stores `CURRENT_TIMESTAMP` as naive UTC text; PostgreSQL returns the session's
    time zone. Both come back as aware UTC datetimes so the API never mixes the two.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
            if dialect.name == "sqlite":
                value = value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Audited:
    """Surrogate key, optimistic-locking version and timestamps shared by catalog rows.

    `version` is SQLAlchemy's version_id_col: every UPDATE checks and increments it, so a
    stale write fails with StaleDataError and the API can serve it as an ETag.
    """

    # sort_order: the key first and the bookkeeping last, whatever the subclass declares.
    id: Mapped[int] = mapped_column(Integer, primary_key=True, sort_order=-1)
    version: Mapped[int] = mapped_column(Integer, nullable=False, sort_order=1)
    created_at: Mapped[datetime] = mapped_column(
        UtcDateTime(), nullable=False, server_default=func.current_timestamp(), sort_order=1
    )
    updated_at: Mapped[datetime] = mapped_column(
        UtcDateTime(),
        nullable=False,
        server_default=func.current_timestamp(),
        onupdate=func.current_timestamp(),
        sort_order=1,
    )

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, Any]:
        return {"version_id_col": cls.__table__.c.version}  # type: ignore[attr-defined]


class Model(Audited, Base):
    """A transformer model's architecture, as published in its config.

    The shape columns the KV-cache and FLOP formulas need are NOT NULL; descriptive facts,
    the checkpoint dtype included, may be unknown.
    """

    __tablename__ = "models"
    __table_args__ = (
        CheckConstraint("attention IN ('mha', 'gqa', 'mla')", name="attention_values"),
        CheckConstraint("params_total > 0", name="params_total_positive"),
        CheckConstraint("layers > 0", name="layers_positive"),
        CheckConstraint("hidden_size > 0", name="hidden_size_positive"),
        CheckConstraint("attention_heads > 0", name="attention_heads_positive"),
        CheckConstraint("kv_heads > 0", name="kv_heads_positive"),
        CheckConstraint("head_dim > 0", name="head_dim_positive"),
        CheckConstraint("sliding_window_layers >= 0", name="sliding_window_layers_nonneg"),
    )

    slug: Mapped[str] = mapped_column(String(SLUG_LENGTH), unique=True, index=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    family: Mapped[str | None] = mapped_column(String(SLUG_LENGTH))
    hf_repo: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    # The instruction-tuned release people deploy (same architecture), where hf_repo is a base one.
    instruct_repo: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    # Other names requests may use for the model (a renamed or derived release of this architecture).
    aliases: Mapped[list[str] | None] = mapped_column(JSON(none_as_null=True))
    # BigInteger: 405e9 parameters overflow a 32-bit INTEGER on PostgreSQL.
    params_total: Mapped[int] = mapped_column(BigInteger)
    params_active: Mapped[int | None] = mapped_column(BigInteger)
    layers: Mapped[int] = mapped_column(Integer)
    hidden_size: Mapped[int] = mapped_column(Integer)
    attention_heads: Mapped[int] = mapped_column(Integer)
    kv_heads: Mapped[int] = mapped_column(Integer)
    head_dim: Mapped[int] = mapped_column(Integer)
    attention: Mapped[str] = mapped_column(String(8))
    kv_lora_rank: Mapped[int | None] = mapped_column(Integer)
    qk_rope_head_dim: Mapped[int | None] = mapped_column(Integer)
    sliding_window: Mapped[int | None] = mapped_column(Integer)
    sliding_window_layers: Mapped[int] = mapped_column(Integer, default=0)
    experts: Mapped[int | None] = mapped_column(Integer)
    experts_per_token: Mapped[int | None] = mapped_column(Integer)
    shared_experts: Mapped[int | None] = mapped_column(Integer)
    expert_params: Mapped[int | None] = mapped_column(BigInteger)
    vocab_size: Mapped[int | None] = mapped_column(Integer)
    intermediate_size: Mapped[int | None] = mapped_column(Integer)
    moe_intermediate_size: Mapped[int | None] = mapped_column(Integer)
    tie_word_embeddings: Mapped[bool] = mapped_column(Boolean, default=False)
    # Components (memory.COMPONENTS) the checkpoint's own format quantizes; SQL NULL = the
    # format's convention (precision.QUANTIZED_BY_DEFAULT).
    quantized_components: Mapped[list[str] | None] = mapped_column(JSON(none_as_null=True))
    native_precision: Mapped[str | None] = mapped_column(String(16))
    max_context: Mapped[int | None] = mapped_column(Integer)
    license: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    source: Mapped[str] = mapped_column(Text)
    notes: Mapped[str | None] = mapped_column(Text)
    # Why params_total differs from what the shape counts (a vision tower, an audio encoder):
    # required when it does by more than specs.PARAMS_SHAPE_TOLERANCE.
    params_beyond_shape: Mapped[str | None] = mapped_column(Text)

    def __repr__(self) -> str:
        return f"<Model {self.slug}>"


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def _nonneg(*columns: str) -> tuple[CheckConstraint, ...]:
    return tuple(CheckConstraint(f"{column} >= 0", name=f"{column}_nonneg") for column in columns)


def _positive(*columns: str) -> tuple[CheckConstraint, ...]:
    return tuple(CheckConstraint(f"{column} > 0", name=f"{column}_positive") for column in columns)


class Gpu(Audited, Base):
    """An accelerator's datasheet figures; `None` means not known (SCHEMA.md: never guessed).

    Even `memory_gb` may be unknown (a cloud-only variant without a datasheet): such a GPU
    is listed, and planning on it refuses until an inline spec supplies the figure.
    """

    __tablename__ = "gpus"
    __table_args__ = (
        CheckConstraint("memory_gb > 0", name="memory_gb_positive"),
        CheckConstraint("memory_visible_gib > 0", name="memory_visible_gib_positive"),
        CheckConstraint("gpus_per_node > 0", name="gpus_per_node_positive"),
        CheckConstraint(
            "confidence IN ('primary', 'vendor-transcribed', 'secondary', 'derived')",
            name="confidence_values",
        ),
        *_nonneg("hourly_price_usd", *GPU_PRICE_FIGURES),
        # An interruption rate is a probability per hour: 1 would be capacity that never stays.
        CheckConstraint("prices_spot_interruptions_per_hour < 1", name="prices_spot_interruptions_per_hour_below_1"),
        CheckConstraint("prices_idle_power_w <= prices_power_w", name="prices_idle_power_w_at_most_power_w"),
    )

    slug: Mapped[str] = mapped_column(String(SLUG_LENGTH), unique=True, index=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    vendor: Mapped[str] = mapped_column(String(32))
    architecture: Mapped[str | None] = mapped_column(String(32))
    form_factor: Mapped[str | None] = mapped_column(String(64))
    memory_gb: Mapped[float | None] = mapped_column(Float)
    # What the driver shows an engine (torch's total_memory), GiB; null = not measured.
    memory_visible_gib: Mapped[float | None] = mapped_column(Float)
    memory_bandwidth_tb_per_s: Mapped[float | None] = mapped_column(Float)
    # Dense (not 2:4 sparse) peaks, one column per precision; int8 is TOPS.
    peak_tflops_bf16: Mapped[float | None] = mapped_column(Float)
    peak_tflops_fp16: Mapped[float | None] = mapped_column(Float)
    peak_tflops_fp8: Mapped[float | None] = mapped_column(Float)
    peak_tflops_int8: Mapped[float | None] = mapped_column(Float)
    peak_tflops_fp4: Mapped[float | None] = mapped_column(Float)
    # none_as_null: an unknown list is SQL NULL, not the JSON literal `null`.
    native_precisions: Mapped[list[str] | None] = mapped_column(JSON(none_as_null=True))
    interconnect_kind: Mapped[str | None] = mapped_column(String(32))
    interconnect_bandwidth_gb_per_s: Mapped[float | None] = mapped_column(Float)
    interconnect_latency_us: Mapped[float | None] = mapped_column(Float)
    gpus_per_node: Mapped[int] = mapped_column(Integer)
    host_cpu_cores: Mapped[int | None] = mapped_column(Integer)
    # The on-demand price (the document's prices.on_demand_usd_per_hour) and its month.
    hourly_price_usd: Mapped[float | None] = mapped_column(Float)
    price_date: Mapped[str | None] = mapped_column(String(7))
    # The rest of the document's `prices`, flattened: committed and spot rates per GPU-hour,
    # the spot interruption rate, the purchase price, board and idle power, and their source.
    prices_reserved_1y_usd_per_hour: Mapped[float | None] = mapped_column(Float)
    prices_reserved_3y_usd_per_hour: Mapped[float | None] = mapped_column(Float)
    prices_spot_usd_per_hour: Mapped[float | None] = mapped_column(Float)
    prices_spot_interruptions_per_hour: Mapped[float | None] = mapped_column(Float)
    prices_purchase_usd: Mapped[float | None] = mapped_column(Float)
    prices_power_w: Mapped[float | None] = mapped_column(Float)
    prices_idle_power_w: Mapped[float | None] = mapped_column(Float)
    prices_source: Mapped[str | None] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text)
    confidence: Mapped[str | None] = mapped_column(String(32))
    notes: Mapped[str | None] = mapped_column(Text)

    mig_profiles: Mapped[list[MigProfile]] = relationship(
        back_populates="gpu",
        order_by=lambda: (MigProfile.compute_slices, MigProfile.memory_gb, MigProfile.name),
        cascade="all, delete-orphan",
        # The database's ON DELETE CASCADE removes profiles that were never loaded.
        passive_deletes=True,
    )

    def __repr__(self) -> str:
        return f"<Gpu {self.slug}>"


class MigProfile(Base):
    """A MIG slice of one GPU; part of the GPU's document, so it has no version of its own."""

    __tablename__ = "mig_profiles"
    __table_args__ = (
        UniqueConstraint("gpu_id", "name"),
        CheckConstraint("compute_slices > 0", name="compute_slices_positive"),
        CheckConstraint("memory_slices > 0", name="memory_slices_positive"),
        CheckConstraint("memory_gb > 0", name="memory_gb_positive"),
        CheckConstraint("max_instances > 0", name="max_instances_positive"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    gpu_id: Mapped[int] = mapped_column(ForeignKey("gpus.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(32))
    compute_slices: Mapped[int] = mapped_column(Integer)
    memory_slices: Mapped[int] = mapped_column(Integer)
    memory_gb: Mapped[float] = mapped_column(Float)
    max_instances: Mapped[int] = mapped_column(Integer)

    gpu: Mapped[Gpu] = relationship(back_populates="mig_profiles")

    def __repr__(self) -> str:
        return f"<MigProfile {self.name}>"

    def sort_key(self) -> tuple[int, float, str]:
        """Smallest slice first: the order `Gpu.mig_profiles` loads in."""
        return (self.compute_slices, self.memory_gb, self.name)


class Precision(Audited, Base):
    """A weight / KV-cache number format and its storage cost."""

    __tablename__ = "precisions"
    __table_args__ = (
        CheckConstraint("bits > 0", name="bits_positive"),
        CheckConstraint("bytes_per_param > 0", name="bytes_per_param_positive"),
        CheckConstraint("kind IN ('float', 'int')", name="kind_values"),
    )

    name: Mapped[str] = mapped_column(String(16), unique=True, index=True)
    bits: Mapped[int] = mapped_column(Integer)
    bytes_per_param: Mapped[float] = mapped_column(Float)
    kind: Mapped[str] = mapped_column(String(8))
    block_scaled: Mapped[bool] = mapped_column(Boolean, default=False)
    source: Mapped[str] = mapped_column(Text)

    def __repr__(self) -> str:
        return f"<Precision {self.name}>"


ENGINE_POSITIVE_COLUMNS = (
    "max_batched_tokens",
    "max_num_seqs",
    "block_size",
    "large_gpu_gib",
    "max_batched_tokens_large_gpu",
    "max_num_seqs_large_gpu",
)
ENGINE_NONNEG_COLUMNS = (
    "activation_bytes_per_token_hidden",
    "activation_bytes_per_token_expert_hidden",
    "logits_bytes_per_vocab_entry",
    "non_torch_gib",
    "non_torch_gib_per_extra_rank",
    "cuda_graph_gib",
    "engine_buffers_gib",
    "step_overhead_ms",
    "layer_overhead_us",
    "ttft_overhead_ms",
    "sequence_overhead_us",
    "collective_latency_us",
    "expert_overhead_us",
    "mla_layer_overhead_us",
)


class Engine(Audited, Base):
    """A serving engine's profile (app.sizing.engine.EngineProfile): how it sizes its KV cache,
    what it reserves, its default settings, its per-step overheads and kernel efficiencies.

    `engine_version` is the engine release the constants describe; `version` stays the row's
    optimistic-locking version (the ETag) as on every catalog table. The nested parts
    (efficiencies per GPU architecture, the uncertainty ranges, what each constant was fitted
    on) are JSON: always read and written whole, never queried into.
    """

    __tablename__ = "engines"
    __table_args__ = (
        CheckConstraint(_in("kv_rule", KV_RULES), name="kv_rule_values"),
        CheckConstraint(
            "gpu_memory_utilization > 0 AND gpu_memory_utilization <= 1", name="gpu_memory_utilization_range"
        ),
        *_positive(*ENGINE_POSITIVE_COLUMNS),
        *_nonneg(*ENGINE_NONNEG_COLUMNS),
    )

    name: Mapped[str] = mapped_column(String(ENGINE_NAME_LENGTH), unique=True, index=True)
    display_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    engine_version: Mapped[str] = mapped_column(String(ENGINE_VERSION_LENGTH))
    kv_rule: Mapped[str] = mapped_column(String(32))
    gpu_memory_utilization: Mapped[float] = mapped_column(Float)
    max_batched_tokens: Mapped[int] = mapped_column(Integer)
    max_num_seqs: Mapped[int] = mapped_column(Integer)
    block_size: Mapped[int] = mapped_column(Integer)
    large_gpu_gib: Mapped[float | None] = mapped_column(Float)
    max_batched_tokens_large_gpu: Mapped[int | None] = mapped_column(Integer)
    max_num_seqs_large_gpu: Mapped[int | None] = mapped_column(Integer)
    activation_bytes_per_token_hidden: Mapped[float] = mapped_column(Float, default=0.0)
    activation_bytes_per_token_expert_hidden: Mapped[float] = mapped_column(Float, default=0.0)
    logits_bytes_per_vocab_entry: Mapped[float] = mapped_column(Float, default=0.0)
    non_torch_gib: Mapped[float] = mapped_column(Float, default=0.0)
    non_torch_gib_per_extra_rank: Mapped[float] = mapped_column(Float, default=0.0)
    cuda_graph_gib: Mapped[float] = mapped_column(Float, default=0.0)
    cuda_graph_in_budget: Mapped[bool] = mapped_column(Boolean, default=False)
    engine_buffers_gib: Mapped[float] = mapped_column(Float, default=0.0)
    step_overhead_ms: Mapped[float] = mapped_column(Float, default=0.0)
    layer_overhead_us: Mapped[float] = mapped_column(Float, default=0.0)
    sequence_overhead_us: Mapped[float] = mapped_column(Float, default=0.0)
    collective_latency_us: Mapped[float] = mapped_column(Float, default=0.0)
    expert_overhead_us: Mapped[float] = mapped_column(Float, default=0.0)
    mla_layer_overhead_us: Mapped[float] = mapped_column(Float, default=0.0)
    ttft_overhead_ms: Mapped[float] = mapped_column(Float, default=0.0)
    # [{architecture, memory, compute, moe_memory}, ...]; "*" is the row for any other GPU.
    efficiencies: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # {time_per_token: [p10, p90], ttft, tokens_per_s, kv_capacity_tokens, rows, unseen_widening}
    uncertainty: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Constant name -> the training rows it was fitted on.
    fitted_on: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    source: Mapped[str] = mapped_column(Text)
    notes: Mapped[str | None] = mapped_column(Text)

    def __repr__(self) -> str:
        return f"<Engine {self.name}>"


# The bookkeeping every Audited row carries: not part of any document a client reads or writes.
AUDIT_COLUMNS = ("id", "version", "created_at", "updated_at")


def data_columns(row_class: type[Base]) -> tuple[str, ...]:
    """A table's own columns in declaration order, less the Audited bookkeeping: what a write
    stores and a document shows (`version` is shown, as the ETag, but never written)."""
    return tuple(column.key for column in row_class.__table__.columns if column.key not in AUDIT_COLUMNS)


MODEL_COLUMNS = data_columns(Model)
GPU_COLUMNS = data_columns(Gpu)
ENGINE_COLUMNS = data_columns(Engine)
PRECISION_COLUMNS = data_columns(Precision)
# A MIG profile belongs to its GPU's document: its key and the GPU's are not shown.
MIG_PROFILE_COLUMNS = tuple(column.key for column in MigProfile.__table__.columns if column.key not in ("id", "gpu_id"))
# Formats a GPU's tensor cores run natively (gpus.native_precisions holds some of these).
NATIVE_PRECISIONS = (
    "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "fp4", "nvfp4", "mxfp4", "int4",
)  # fmt: skip
# A GPU's visible memory may exceed its datasheet figure read as GB (the "80 GB" of an H100
# is 80 GiB in practice: 79.2 GiB visible, above 80e9 bytes), never by much more.
VISIBLE_OVER_DATASHEET = 1.1
# gpus.peak_tflops_<key>: the dense peaks a datasheet gives, one column per precision.
PEAK_TFLOPS_KEYS = tuple(
    column.removeprefix("peak_tflops_") for column in GPU_COLUMNS if column.startswith("peak_tflops_")
)
# gpus.prices_<key>: a GPU document's `prices` object, flattened, less its two fields that
# are columns of their own (on_demand_usd_per_hour is hourly_price_usd; price_date).
PRICES_KEYS = tuple(column.removeprefix("prices_") for column in GPU_COLUMNS if column.startswith("prices_"))
# gpus.interconnect_<key>: a GPU document's `interconnect` object, flattened.
INTERCONNECT_KEYS = tuple(
    column.removeprefix("interconnect_") for column in GPU_COLUMNS if column.startswith("interconnect_")
)


@event.listens_for(Session, "before_flush")
def _bump_gpu_version_when_profiles_change(
    session: Session, _flush_context: UOWTransaction, _instances: object
) -> None:
    """A GPU's MIG profiles are part of its document, so changing them is a GPU update.

    Left alone, SQLAlchemy bumps `gpus.version` only when a gpus column changes, and an ETag
    would survive an edit of the profiles. Marking the GPU modified makes the flush issue
    an UPDATE that checks and increments the version like any other edit.
    """
    with session.no_autoflush:
        changed: set[Gpu] = {
            gpu
            for gpu in session.dirty
            if isinstance(gpu, Gpu) and attributes.get_history(gpu, "mig_profiles").has_changes()
        }
        for obj in (*session.new, *session.dirty, *session.deleted):
            if isinstance(obj, MigProfile) and obj.gpu is not None:
                changed.add(obj.gpu)
        for gpu in changed:
            # A new GPU is inserted at version 1 anyway; a deleted one needs no bump.
            if inspect(gpu).persistent and gpu not in session.deleted:
                # Not `version` itself: the ORM must compute the new value from the old.
                # flag_modified needs the value in memory, so refresh it if it was expired.
                if "slug" not in gpu.__dict__:
                    session.refresh(gpu, ["slug"])
                attributes.flag_modified(gpu, "slug")


class Calibration(Base):
    """Measurements of one model on one GPU (or MIG slice) and what was fitted to them.

    Keyed by slug, not by foreign key: planning matches calibrations by the slugs a request
    names (a published slug stays stable), a MIG profile is a name and not a row of
    its own, and a measurement is a record of what was run: deleting or re-importing a catalog
    entry neither destroys it (a cascade) nor is refused because of it (a restrict). Rows are
    never updated, only inserted and deleted; ids are never reused (AUTOINCREMENT on SQLite, a
    sequence on PostgreSQL), which is what lets a worker's cached copy be checked by count and
    largest id alone.
    """

    __tablename__ = "calibrations"
    __table_args__ = (
        Index("ix_calibrations_model_slug_gpu_slug", "model_slug", "gpu_slug"),
        CheckConstraint("tensor_parallel > 0", name="tensor_parallel_positive"),
        CheckConstraint("point_count >= 0", name="point_count_nonneg"),
        CheckConstraint("max_batched_tokens > 0", name="max_batched_tokens_positive"),
        CheckConstraint(
            "gpu_memory_utilization > 0 AND gpu_memory_utilization <= 1", name="gpu_memory_utilization_range"
        ),
        CheckConstraint("memory_efficiency > 0 AND memory_efficiency <= 1", name="memory_efficiency_range"),
        CheckConstraint("compute_efficiency > 0 AND compute_efficiency <= 1", name="compute_efficiency_range"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_slug: Mapped[str] = mapped_column(String(SLUG_LENGTH))
    gpu_slug: Mapped[str] = mapped_column(String(SLUG_LENGTH), index=True)
    mig_profile: Mapped[str | None] = mapped_column(String(32))
    tensor_parallel: Mapped[int] = mapped_column(Integer)
    weight_precision: Mapped[str] = mapped_column(String(16))
    kv_precision: Mapped[str] = mapped_column(String(16))
    engine: Mapped[str] = mapped_column(String(32))
    engine_version: Mapped[str | None] = mapped_column(String(64))
    # The engine settings the measurements were taken under.
    max_batched_tokens: Mapped[int] = mapped_column(Integer)
    gpu_memory_utilization: Mapped[float] = mapped_column(Float)
    # Null: the measurements did not determine it (planning then keeps the datasheet default).
    memory_efficiency: Mapped[float | None] = mapped_column(Float)
    compute_efficiency: Mapped[float | None] = mapped_column(Float)
    # Per GPU, GB; negative when the driver shows more memory than the datasheet's GB.
    memory_overhead_gb: Mapped[float | None] = mapped_column(Float)
    kv_capacity_tokens: Mapped[int | None] = mapped_column(BigInteger)
    point_count: Mapped[int] = mapped_column(Integer)
    mape_percent: Mapped[float | None] = mapped_column(Float)
    points: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    residuals: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    log_summary: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    undetermined: Mapped[dict[str, str]] = mapped_column(JSON)
    warnings: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), nullable=False, server_default=func.current_timestamp())

    def __repr__(self) -> str:
        return f"<Calibration {self.id} {self.model_slug} on {self.gpu_slug}>"
