"""spend: daily roll-up of stored bytes (issue 17)

``spend_daily`` holds the byte-seconds of every finished UTC day per bucket and tier (with the minimum billable
size, per-object overhead and early-deletion charges of the day's month), filled by beat's ``spend.roll_up``;
``spend_rollup`` marks the first day not closed. The backfill of an existing installation is the task's first
run, not this migration: closing a day needs the price catalogs' minimum sizes and durations, which the
application loads (shipped YAML and admins' catalogs). Until it runs, ``GET /api/spend`` prices every day from
the catalog's rows, as before.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "spend_daily",
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("tier_id", sa.Integer(), nullable=False),
        sa.Column("byte_s", sa.Numeric(38, 0), nullable=False),
        sa.Column("billable_byte_s", sa.Numeric(38, 0), nullable=False),
        sa.Column("short_byte_s", sa.Numeric(38, 0), nullable=False),
        sa.Column("object_s", sa.Numeric(38, 0), nullable=False),
        sa.PrimaryKeyConstraint("day", "bucket_id", "tier_id", name=op.f("pk_spend_daily")),
    )
    rollup = op.create_table(
        "spend_rollup",
        sa.Column("name", sa.String(length=16), nullable=False),
        sa.Column("until", sa.String(length=10), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_spend_rollup")),
    )
    op.bulk_insert(rollup, [{"name": "storage", "until": None}])


def downgrade() -> None:
    op.drop_table("spend_rollup")
    op.drop_table("spend_daily")
