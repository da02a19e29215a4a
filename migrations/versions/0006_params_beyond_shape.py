"""A model's params_beyond_shape: why its params_total differs from what its shape counts
(a vision tower, an audio encoder), which a write needs when the two are more than 5% apart.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 04:05:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable column: every stored model keeps null (nothing to explain yet)."""
    with op.batch_alter_table("models") as batch:
        batch.add_column(sa.Column("params_beyond_shape", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("models") as batch:
        batch.drop_column("params_beyond_shape")
