"""shared counters: event counts every API process sees (login throttling) when no Redis is configured

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 21:21:19
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "shared_counters",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("started", sa.Float(), nullable=False),
        sa.Column("last", sa.Float(), nullable=True),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_shared_counters")),
    )
    with op.batch_alter_table("shared_counters", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_shared_counters_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("shared_counters", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_shared_counters_expires_at"))
    op.drop_table("shared_counters")
