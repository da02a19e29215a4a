"""A GPU's prices beyond the on-demand rate: committed and spot rates, the spot interruption
rate, the purchase price, board and idle power, and where they come from.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-20 10:02:11.418305
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out rather than imported: a migration describes the schema as it was at this
# revision, whatever app.catalog.models says later.
FIGURES = (
    "prices_reserved_1y_usd_per_hour",
    "prices_reserved_3y_usd_per_hour",
    "prices_spot_usd_per_hour",
    "prices_spot_interruptions_per_hour",
    "prices_purchase_usd",
    "prices_power_w",
    "prices_idle_power_w",
)
NONNEG = ("hourly_price_usd", *FIGURES)
CHECKS = {
    **{f"{column}_nonneg": f"{column} >= 0" for column in NONNEG},
    "prices_spot_interruptions_per_hour_below_1": "prices_spot_interruptions_per_hour < 1",
    "prices_idle_power_w_at_most_power_w": "prices_idle_power_w <= prices_power_w",
}


def upgrade() -> None:
    """Add the price columns (all nullable: an unknown price is null) and their checks."""
    # Batch mode: SQLite cannot add a CHECK constraint to a table, so the table is copied.
    with op.batch_alter_table("gpus") as batch_op:
        for column in FIGURES:
            batch_op.add_column(sa.Column(column, sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("prices_source", sa.Text(), nullable=True))
        for name, condition in CHECKS.items():
            batch_op.create_check_constraint(op.f(f"ck_gpus_{name}"), condition)


def downgrade() -> None:
    """Drop the checks, then the columns."""
    with op.batch_alter_table("gpus") as batch_op:
        for name in CHECKS:
            batch_op.drop_constraint(op.f(f"ck_gpus_{name}"), type_="check")
        batch_op.drop_column("prices_source")
        for column in reversed(FIGURES):
            batch_op.drop_column(column)
