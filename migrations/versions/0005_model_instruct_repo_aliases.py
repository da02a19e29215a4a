"""A model's instruction-tuned repository (what a serve line deploys, where hf_repo is a base
release) and the other names requests may use for it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 04:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add both columns, nullable (unknown: null)."""
    with op.batch_alter_table("models") as batch_op:
        batch_op.add_column(sa.Column("instruct_repo", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("aliases", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("models") as batch_op:
        batch_op.drop_column("aliases")
        batch_op.drop_column("instruct_repo")
