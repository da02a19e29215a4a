"""Serving engines as catalog data; a GPU's visible memory; a model's quantized components.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-14 09:12:40.118204
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out rather than imported: a migration describes the schema as it was at this
# revision, whatever app.catalog.models says later.
POSITIVE = (
    "block_size",
    "large_gpu_gib",
    "max_batched_tokens",
    "max_batched_tokens_large_gpu",
    "max_num_seqs",
    "max_num_seqs_large_gpu",
)
NONNEG = (
    "activation_bytes_per_token_expert_hidden",
    "activation_bytes_per_token_hidden",
    "cuda_graph_gib",
    "engine_buffers_gib",
    "layer_overhead_us",
    "logits_bytes_per_vocab_entry",
    "non_torch_gib",
    "non_torch_gib_per_extra_rank",
    "step_overhead_ms",
    "ttft_overhead_ms",
)


def _audit_columns() -> list[sa.Column[object]]:
    """Optimistic-locking version and timestamps, as in 0001."""
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
    """Create the engines table; add gpus.memory_visible_gib and models.quantized_components."""
    op.create_table(
        "engines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=False),
        sa.Column("engine_version", sa.String(length=64), nullable=False),
        sa.Column("kv_rule", sa.String(length=32), nullable=False),
        sa.Column("gpu_memory_utilization", sa.Float(), nullable=False),
        sa.Column("max_batched_tokens", sa.Integer(), nullable=False),
        sa.Column("max_num_seqs", sa.Integer(), nullable=False),
        sa.Column("block_size", sa.Integer(), nullable=False),
        sa.Column("large_gpu_gib", sa.Float(), nullable=True),
        sa.Column("max_batched_tokens_large_gpu", sa.Integer(), nullable=True),
        sa.Column("max_num_seqs_large_gpu", sa.Integer(), nullable=True),
        sa.Column("activation_bytes_per_token_hidden", sa.Float(), nullable=False),
        sa.Column("activation_bytes_per_token_expert_hidden", sa.Float(), nullable=False),
        sa.Column("logits_bytes_per_vocab_entry", sa.Float(), nullable=False),
        sa.Column("non_torch_gib", sa.Float(), nullable=False),
        sa.Column("non_torch_gib_per_extra_rank", sa.Float(), nullable=False),
        sa.Column("cuda_graph_gib", sa.Float(), nullable=False),
        sa.Column("cuda_graph_in_budget", sa.Boolean(), nullable=False),
        sa.Column("engine_buffers_gib", sa.Float(), nullable=False),
        sa.Column("step_overhead_ms", sa.Float(), nullable=False),
        sa.Column("layer_overhead_us", sa.Float(), nullable=False),
        sa.Column("ttft_overhead_ms", sa.Float(), nullable=False),
        sa.Column("efficiencies", sa.JSON(), nullable=False),
        sa.Column("uncertainty", sa.JSON(), nullable=False),
        sa.Column("fitted_on", sa.JSON(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        *_audit_columns(),
        sa.CheckConstraint(
            "kv_rule IN ('util_of_visible', 'static_fraction', 'fraction_of_free')",
            name=op.f("ck_engines_kv_rule_values"),
        ),
        sa.CheckConstraint(
            "gpu_memory_utilization > 0 AND gpu_memory_utilization <= 1",
            name=op.f("ck_engines_gpu_memory_utilization_range"),
        ),
        *(sa.CheckConstraint(f"{column} > 0", name=op.f(f"ck_engines_{column}_positive")) for column in POSITIVE),
        *(sa.CheckConstraint(f"{column} >= 0", name=op.f(f"ck_engines_{column}_nonneg")) for column in NONNEG),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_engines")),
    )
    op.create_index(op.f("ix_engines_name"), "engines", ["name"], unique=True)

    # Batch mode: SQLite cannot add a CHECK constraint to a table, so the table is copied.
    with op.batch_alter_table("gpus") as batch_op:
        batch_op.add_column(sa.Column("memory_visible_gib", sa.Float(), nullable=True))
        batch_op.create_check_constraint(op.f("ck_gpus_memory_visible_gib_positive"), "memory_visible_gib > 0")

    with op.batch_alter_table("models") as batch_op:
        batch_op.add_column(sa.Column("quantized_components", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    """Drop the engines table and the two columns (their constraint first)."""
    with op.batch_alter_table("models") as batch_op:
        batch_op.drop_column("quantized_components")

    with op.batch_alter_table("gpus") as batch_op:
        batch_op.drop_constraint(op.f("ck_gpus_memory_visible_gib_positive"), type_="check")
        batch_op.drop_column("memory_visible_gib")

    op.drop_table("engines")
