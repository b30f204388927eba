"""bucket events: targets, per-bucket notification configurations, the outbox, dead letters, recent deliveries

Tables `event_targets` (an admin's targets, connection settings encrypted), `event_configurations` (one row per
bucket with a notification configuration), `event_outbox` (events written in the transaction of their change,
one row per target, deleted once delivered), `event_dead_letters` and `event_deliveries` (the newest outcomes).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 16:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = tierpilot.kit.db.UTCDateTime(timezone=True)
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "event_targets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("sealed", sa.Text(), nullable=False),
        sa.Column("shown_url", sa.String(length=2048), nullable=False),
        sa.Column("topic", sa.String(length=255), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_targets")),
        sa.UniqueConstraint("name", name=op.f("uq_event_targets_name")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "event_configurations",
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("entries", sa.JSON(), nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_event_configurations_bucket_id_buckets"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("bucket_id", name=op.f("pk_event_configurations")),
    )
    op.create_table(
        "event_outbox",
        sa.Column("id", BIG_ID, nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("next_at", WHEN, nullable=False),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("lease_token", sa.String(length=32), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["target_id"], ["event_targets.id"],
                                name=op.f("fk_event_outbox_target_id_event_targets"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_outbox")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_event_outbox_target_id_bucket_id_key_id", "event_outbox",
                    ["target_id", "bucket_id", "key", "id"])
    op.create_index("ix_event_outbox_next_at", "event_outbox", ["next_at"])
    op.create_table(
        "event_dead_letters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("failed_at", WHEN, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["target_id"], ["event_targets.id"],
                                name=op.f("fk_event_dead_letters_target_id_event_targets"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_dead_letters")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "event_deliveries",
        sa.Column("id", BIG_ID, nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["target_id"], ["event_targets.id"],
                                name=op.f("fk_event_deliveries_target_id_event_targets"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_deliveries")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_event_deliveries_bucket_id_id", "event_deliveries", ["bucket_id", "id"])


def downgrade() -> None:
    op.drop_table("event_deliveries")
    op.drop_table("event_dead_letters")
    op.drop_table("event_outbox")
    op.drop_table("event_configurations")
    op.drop_table("event_targets")
