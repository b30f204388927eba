"""integrity: the fixity log and each tier's audit cursor

`fixity_checks`: one row per re-read of an object's blob (object, version, tier, locator, when, ok | mismatch |
missing, algorithm, expected and found values), written as an audit goes; a deleted bucket takes its rows along.
`fixity_cursors`: where beat's periodic audit of a tier stands in its cycle, and who holds it (a lease).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fixity_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("object_id", sa.BigInteger(), nullable=False),
        sa.Column("key", sa.String(length=1024).with_variant(sa.String(length=1024, collation="C"), "postgresql"),
                  nullable=False),
        sa.Column("version_id", sa.String(length=64), nullable=False),
        sa.Column("tier_id", sa.Integer(), nullable=False),
        sa.Column("locator", sa.String(length=2048), nullable=False),
        sa.Column("checked_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("result", sa.String(length=16), nullable=False),
        sa.Column("algorithm", sa.String(length=16), nullable=False),
        sa.Column("expected", sa.String(length=128), nullable=False),
        sa.Column("found", sa.String(length=128), nullable=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_fixity_checks_bucket_id_buckets"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tier_id"], ["tiers.id"], name=op.f("fk_fixity_checks_tier_id_tiers"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fixity_checks")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_fixity_checks_bucket_checked", "fixity_checks", ["bucket_id", "checked_at"])
    op.create_index("ix_fixity_checks_object", "fixity_checks", ["object_id", "id"])
    op.create_table(
        "fixity_cursors",
        sa.Column("tier_id", sa.Integer(), nullable=False),
        sa.Column("after_id", sa.BigInteger(), nullable=False),
        sa.Column("cycle_started_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("checked_in_cycle", sa.BigInteger(), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=True),
        sa.Column("lease_until", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("updated_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tier_id"], ["tiers.id"], name=op.f("fk_fixity_cursors_tier_id_tiers"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tier_id", name=op.f("pk_fixity_cursors")),
    )


def downgrade() -> None:
    op.drop_table("fixity_cursors")
    op.drop_index("ix_fixity_checks_object", table_name="fixity_checks")
    op.drop_index("ix_fixity_checks_bucket_checked", table_name="fixity_checks")
    op.drop_table("fixity_checks")
