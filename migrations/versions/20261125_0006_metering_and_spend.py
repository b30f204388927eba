"""metered usage and spend (issue 17)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # data-path requests and bytes per UTC day, user, bucket and direction (gateways add to it in batches)
    op.create_table(
        "usage_meter",
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("direction", sa.String(8), nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("day", "user_id", "bucket_id", "direction", name=op.f("pk_usage_meter")),
    )


def downgrade() -> None:
    op.drop_table("usage_meter")
