"""spend: a bucket's planned monthly usage (issue 17)

One row per bucket: GiB read, GET- and PUT-class requests, GiB restored at a speed each month, who set it and
when. `GET /api/spend` prices it with the tier's catalog beside the actual; a bucket without a row plans storage
only. Deleting the bucket deletes its plan.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28 23:55:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "spend_plans",
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("reads_gib", sa.Numeric(precision=24, scale=6), nullable=False),
        sa.Column("read_requests", sa.BigInteger(), nullable=False),
        sa.Column("write_requests", sa.BigInteger(), nullable=False),
        sa.Column("restores_gib", sa.Numeric(precision=24, scale=6), nullable=False),
        sa.Column("restore_speed", sa.String(length=16), nullable=False),
        sa.Column("updated_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_spend_plans_bucket_id_buckets"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("bucket_id", name=op.f("pk_spend_plans")),
    )


def downgrade() -> None:
    op.drop_table("spend_plans")
