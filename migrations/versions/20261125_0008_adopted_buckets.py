"""adopted buckets: the remote bucket a local bucket mirrors and its scans (issues 15, 16)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 00:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "adopted_buckets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("tier_id", sa.Integer(), nullable=False),
        sa.Column("remote_bucket", sa.String(length=255), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("listed", sa.BigInteger(), nullable=False),
        sa.Column("added", sa.BigInteger(), nullable=False),
        sa.Column("removed", sa.BigInteger(), nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("started_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("updated_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("scanned_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_adopted_buckets_bucket_id_buckets"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tier_id"], ["tiers.id"], name=op.f("fk_adopted_buckets_tier_id_tiers"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_adopted_buckets")),
        sa.UniqueConstraint("bucket_id", name=op.f("uq_adopted_buckets_bucket_id")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_adopted_buckets_tier_id", "adopted_buckets", ["tier_id"], unique=False)
    op.create_index("ix_adopted_buckets_state_scanned", "adopted_buckets", ["state", "scanned_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_adopted_buckets_state_scanned", table_name="adopted_buckets")
    op.drop_index("ix_adopted_buckets_tier_id", table_name="adopted_buckets")
    op.drop_table("adopted_buckets")
