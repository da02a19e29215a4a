"""Engine profiles gain four step terms: a per-sequence cost, NCCL's small-message latency per
collective, a per-expert-GEMM cost and an extra per-layer cost of MLA attention.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 03:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out rather than imported: a migration describes the schema as it was at this revision.
COLUMNS = ("sequence_overhead_us", "collective_latency_us", "expert_overhead_us", "mla_layer_overhead_us")


def upgrade() -> None:
    """Add the columns (0 for the rows already there: the terms were not counted) and their checks."""
    # Batch mode: SQLite cannot add a CHECK constraint to a table, so the table is copied.
    with op.batch_alter_table("engines") as batch_op:
        for column in COLUMNS:
            batch_op.add_column(sa.Column(column, sa.Float(), nullable=False, server_default="0"))
        for column in COLUMNS:
            batch_op.create_check_constraint(op.f(f"ck_engines_{column}_nonneg"), f"{column} >= 0")


def downgrade() -> None:
    """Drop the checks, then the columns."""
    with op.batch_alter_table("engines") as batch_op:
        for column in COLUMNS:
            batch_op.drop_constraint(op.f(f"ck_engines_{column}_nonneg"), type_="check")
        for column in reversed(COLUMNS):
            batch_op.drop_column(column)
