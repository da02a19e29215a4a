"""Initial catalog: models, gpus with mig_profiles, precisions.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 10:49:23.652633
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _audit_columns() -> list[sa.Column[object]]:
    """Optimistic-locking version and timestamps, shared by every versioned table."""
    # Plain DateTime here: the model's UtcDateTime only changes how Python sees the value.
    return [
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
    ]


def upgrade() -> None:
    """Create the four catalog tables."""
    op.create_table(
        "gpus",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("vendor", sa.String(length=32), nullable=False),
        sa.Column("architecture", sa.String(length=32), nullable=True),
        sa.Column("form_factor", sa.String(length=64), nullable=True),
        sa.Column("memory_gb", sa.Float(), nullable=True),
        sa.Column("memory_bandwidth_tb_per_s", sa.Float(), nullable=True),
        sa.Column("peak_tflops_bf16", sa.Float(), nullable=True),
        sa.Column("peak_tflops_fp16", sa.Float(), nullable=True),
        sa.Column("peak_tflops_fp8", sa.Float(), nullable=True),
        sa.Column("peak_tflops_int8", sa.Float(), nullable=True),
        sa.Column("peak_tflops_fp4", sa.Float(), nullable=True),
        sa.Column("native_precisions", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("interconnect_kind", sa.String(length=32), nullable=True),
        sa.Column("interconnect_bandwidth_gb_per_s", sa.Float(), nullable=True),
        sa.Column("interconnect_latency_us", sa.Float(), nullable=True),
        sa.Column("gpus_per_node", sa.Integer(), nullable=False),
        sa.Column("host_cpu_cores", sa.Integer(), nullable=True),
        sa.Column("hourly_price_usd", sa.Float(), nullable=True),
        sa.Column("price_date", sa.String(length=7), nullable=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("confidence", sa.String(length=32), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        *_audit_columns(),
        sa.CheckConstraint(
            "confidence IN ('primary', 'vendor-transcribed', 'secondary', 'derived')",
            name=op.f("ck_gpus_confidence_values"),
        ),
        sa.CheckConstraint("gpus_per_node > 0", name=op.f("ck_gpus_gpus_per_node_positive")),
        sa.CheckConstraint("memory_gb > 0", name=op.f("ck_gpus_memory_gb_positive")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gpus")),
    )
    op.create_index(op.f("ix_gpus_slug"), "gpus", ["slug"], unique=True)

    op.create_table(
        "models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("family", sa.String(length=100), nullable=True),
        sa.Column("hf_repo", sa.String(length=200), nullable=True),
        sa.Column("params_total", sa.BigInteger(), nullable=False),
        sa.Column("params_active", sa.BigInteger(), nullable=True),
        sa.Column("layers", sa.Integer(), nullable=False),
        sa.Column("hidden_size", sa.Integer(), nullable=False),
        sa.Column("attention_heads", sa.Integer(), nullable=False),
        sa.Column("kv_heads", sa.Integer(), nullable=False),
        sa.Column("head_dim", sa.Integer(), nullable=False),
        sa.Column("attention", sa.String(length=8), nullable=False),
        sa.Column("kv_lora_rank", sa.Integer(), nullable=True),
        sa.Column("qk_rope_head_dim", sa.Integer(), nullable=True),
        sa.Column("sliding_window", sa.Integer(), nullable=True),
        sa.Column("sliding_window_layers", sa.Integer(), nullable=False),
        sa.Column("experts", sa.Integer(), nullable=True),
        sa.Column("experts_per_token", sa.Integer(), nullable=True),
        sa.Column("shared_experts", sa.Integer(), nullable=True),
        sa.Column("expert_params", sa.BigInteger(), nullable=True),
        sa.Column("vocab_size", sa.Integer(), nullable=True),
        sa.Column("intermediate_size", sa.Integer(), nullable=True),
        sa.Column("moe_intermediate_size", sa.Integer(), nullable=True),
        sa.Column("tie_word_embeddings", sa.Boolean(), nullable=False),
        sa.Column("native_precision", sa.String(length=16), nullable=True),
        sa.Column("max_context", sa.Integer(), nullable=True),
        sa.Column("license", sa.String(length=200), nullable=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        *_audit_columns(),
        sa.CheckConstraint("attention IN ('mha', 'gqa', 'mla')", name=op.f("ck_models_attention_values")),
        sa.CheckConstraint("attention_heads > 0", name=op.f("ck_models_attention_heads_positive")),
        sa.CheckConstraint("head_dim > 0", name=op.f("ck_models_head_dim_positive")),
        sa.CheckConstraint("hidden_size > 0", name=op.f("ck_models_hidden_size_positive")),
        sa.CheckConstraint("kv_heads > 0", name=op.f("ck_models_kv_heads_positive")),
        sa.CheckConstraint("layers > 0", name=op.f("ck_models_layers_positive")),
        sa.CheckConstraint("params_total > 0", name=op.f("ck_models_params_total_positive")),
        sa.CheckConstraint("sliding_window_layers >= 0", name=op.f("ck_models_sliding_window_layers_nonneg")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_models")),
    )
    op.create_index(op.f("ix_models_slug"), "models", ["slug"], unique=True)

    op.create_table(
        "precisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=16), nullable=False),
        sa.Column("bits", sa.Integer(), nullable=False),
        sa.Column("bytes_per_param", sa.Float(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("block_scaled", sa.Boolean(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        *_audit_columns(),
        sa.CheckConstraint("kind IN ('float', 'int')", name=op.f("ck_precisions_kind_values")),
        sa.CheckConstraint("bits > 0", name=op.f("ck_precisions_bits_positive")),
        sa.CheckConstraint("bytes_per_param > 0", name=op.f("ck_precisions_bytes_per_param_positive")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_precisions")),
    )
    op.create_index(op.f("ix_precisions_name"), "precisions", ["name"], unique=True)

    op.create_table(
        "mig_profiles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("gpu_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("compute_slices", sa.Integer(), nullable=False),
        sa.Column("memory_slices", sa.Integer(), nullable=False),
        sa.Column("memory_gb", sa.Float(), nullable=False),
        sa.Column("max_instances", sa.Integer(), nullable=False),
        sa.CheckConstraint("compute_slices > 0", name=op.f("ck_mig_profiles_compute_slices_positive")),
        sa.CheckConstraint("max_instances > 0", name=op.f("ck_mig_profiles_max_instances_positive")),
        sa.CheckConstraint("memory_gb > 0", name=op.f("ck_mig_profiles_memory_gb_positive")),
        sa.CheckConstraint("memory_slices > 0", name=op.f("ck_mig_profiles_memory_slices_positive")),
        sa.ForeignKeyConstraint(
            ["gpu_id"],
            ["gpus.id"],
            name=op.f("fk_mig_profiles_gpu_id_gpus"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mig_profiles")),
        sa.UniqueConstraint("gpu_id", "name", name=op.f("uq_mig_profiles_gpu_id_name")),
    )


def downgrade() -> None:
    """Drop the catalog, children first (their indexes go with the tables)."""
    op.drop_table("mig_profiles")
    op.drop_table("precisions")
    op.drop_table("models")
    op.drop_table("gpus")
