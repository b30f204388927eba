"""object versions, delete markers, object lock, bucket sharing (issue 14)

``objects`` keeps one row per key, the current version, so listings, lifecycle scans and restores read
what they read before. Noncurrent versions and delete markers go to ``object_versions``, in order of
their id (ids only grow: the newest noncurrent version of a key has the largest id). Buckets get their
versioning state, object lock and default retention, and tags; versions their retention and legal hold
and their part sizes (GET ?partNumber=, GetObjectAttributes); multipart uploads the tags they end with.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


KEY = sa.String(length=1024).with_variant(sa.String(length=1024, collation="C"), "postgresql")
WHEN = tierpilot.kit.db.UTCDateTime(timezone=True)

def _bucket_columns() -> list[sa.Column[object]]:
    return [
        sa.Column("versioning", sa.String(length=16), nullable=True),
        sa.Column("object_lock", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("lock_default_mode", sa.String(length=16), nullable=True),
        sa.Column("lock_default_days", sa.Integer(), nullable=True),
        sa.Column("lock_default_years", sa.Integer(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=True),
    ]


def _lock_columns() -> list[sa.Column[object]]:
    return [
        sa.Column("version_id", sa.String(length=64), nullable=False, server_default="null"),
        sa.Column("lock_mode", sa.String(length=16), nullable=True),
        sa.Column("lock_until", WHEN, nullable=True),
        sa.Column("legal_hold", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("part_sizes", sa.JSON(), nullable=True),
    ]


def upgrade() -> None:
    # plain ADD COLUMNs: SQLite keeps the tables (and their AUTOINCREMENT) as they are
    for column in _bucket_columns():
        op.add_column("buckets", column)
    for column in _lock_columns():
        op.add_column("objects", column)
    op.add_column("multipart_uploads", sa.Column("tags", sa.JSON(), nullable=True))
    op.create_table(
        "object_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("key", KEY, nullable=False),
        sa.Column("delete_marker", sa.Boolean(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("etag", sa.String(length=80), nullable=False),
        sa.Column("checksum_algorithm", sa.String(length=16), nullable=True),
        sa.Column("checksum_value", sa.String(length=128), nullable=True),
        sa.Column("content_type", sa.String(length=255), nullable=False),
        sa.Column("user_metadata", sa.JSON(), nullable=False),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("tier_id", sa.Integer(), nullable=True),
        sa.Column("storage_class", sa.String(length=32), nullable=False),
        sa.Column("locator", sa.String(length=2048), nullable=False),
        sa.Column("parts_count", sa.Integer(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("last_modified", WHEN, nullable=False),
        sa.Column("restore_state", sa.String(length=16), nullable=True),
        sa.Column("restore_speed", sa.String(length=16), nullable=True),
        sa.Column("restore_expiry", WHEN, nullable=True),
        sa.Column("noncurrent_since", WHEN, nullable=False),
        *_lock_columns(),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_object_versions_bucket_id_buckets")),
        sa.ForeignKeyConstraint(["tier_id"], ["tiers.id"], name=op.f("fk_object_versions_tier_id_tiers")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_object_versions")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_object_versions_bucket_key_id", "object_versions", ["bucket_id", "key", "id"])
    op.create_index("ix_object_versions_tier_id", "object_versions", ["tier_id"])


def downgrade() -> None:
    op.drop_index("ix_object_versions_tier_id", table_name="object_versions")
    op.drop_index("ix_object_versions_bucket_key_id", table_name="object_versions")
    op.drop_table("object_versions")
    with op.batch_alter_table("multipart_uploads", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("tags")
    with op.batch_alter_table("objects", table_kwargs={"sqlite_autoincrement": True}) as batch:
        for name in ("part_sizes", "legal_hold", "lock_until", "lock_mode", "version_id"):
            batch.drop_column(name)
    with op.batch_alter_table("buckets", table_kwargs={"sqlite_autoincrement": True}) as batch:
        for column in reversed(_bucket_columns()):
            batch.drop_column(column.name)
