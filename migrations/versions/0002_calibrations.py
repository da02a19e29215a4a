"""Calibrations: measured benchmark points and start-up logs, and what was fitted to them.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 11:54:01.509087
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the calibrations table (slugs, not foreign keys: see app.catalog.models.Calibration)."""
    op.create_table(
        "calibrations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_slug", sa.String(length=100), nullable=False),
        sa.Column("gpu_slug", sa.String(length=100), nullable=False),
        sa.Column("mig_profile", sa.String(length=32), nullable=True),
        sa.Column("tensor_parallel", sa.Integer(), nullable=False),
        sa.Column("weight_precision", sa.String(length=16), nullable=False),
        sa.Column("kv_precision", sa.String(length=16), nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("engine_version", sa.String(length=64), nullable=True),
        sa.Column("max_batched_tokens", sa.Integer(), nullable=False),
        sa.Column("gpu_memory_utilization", sa.Float(), nullable=False),
        sa.Column("memory_efficiency", sa.Float(), nullable=True),
        sa.Column("compute_efficiency", sa.Float(), nullable=True),
        sa.Column("memory_overhead_gb", sa.Float(), nullable=True),
        sa.Column("kv_capacity_tokens", sa.BigInteger(), nullable=True),
        sa.Column("point_count", sa.Integer(), nullable=False),
        sa.Column("mape_percent", sa.Float(), nullable=True),
        sa.Column("points", sa.JSON(), nullable=False),
        sa.Column("residuals", sa.JSON(), nullable=False),
        sa.Column("log_summary", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("undetermined", sa.JSON(), nullable=False),
        sa.Column("warnings", sa.JSON(), nullable=False),
        sa.Column(
            "created_at",
            # Plain DateTime here: the model's UtcDateTime only changes how Python sees the value.
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "compute_efficiency > 0 AND compute_efficiency <= 1", name=op.f("ck_calibrations_compute_efficiency_range")
        ),
        sa.CheckConstraint(
            "gpu_memory_utilization > 0 AND gpu_memory_utilization <= 1",
            name=op.f("ck_calibrations_gpu_memory_utilization_range"),
        ),
        sa.CheckConstraint("max_batched_tokens > 0", name=op.f("ck_calibrations_max_batched_tokens_positive")),
        sa.CheckConstraint(
            "memory_efficiency > 0 AND memory_efficiency <= 1", name=op.f("ck_calibrations_memory_efficiency_range")
        ),
        sa.CheckConstraint("point_count >= 0", name=op.f("ck_calibrations_point_count_nonneg")),
        sa.CheckConstraint("tensor_parallel > 0", name=op.f("ck_calibrations_tensor_parallel_positive")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calibrations")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_calibrations_gpu_slug"), "calibrations", ["gpu_slug"], unique=False)
    op.create_index("ix_calibrations_model_slug_gpu_slug", "calibrations", ["model_slug", "gpu_slug"], unique=False)


def downgrade() -> None:
    """Drop the calibrations table (its indexes go with it)."""
    op.drop_table("calibrations")
