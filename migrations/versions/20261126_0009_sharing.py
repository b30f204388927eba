"""bucket sharing: ACLs, bucket policies, public access block, object ownership (issue 14)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "bucket_sharing",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("policy", sa.Text(), nullable=True),
        sa.Column("acl", sa.JSON(), nullable=True),
        sa.Column("ownership", sa.String(length=32), nullable=True),
        sa.Column("public_block", sa.JSON(), nullable=True),
        sa.Column("object_acls", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("updated_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_bucket_sharing_bucket_id_buckets"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bucket_sharing")),
        sa.UniqueConstraint("bucket_id", name=op.f("uq_bucket_sharing_bucket_id")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "object_acls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=1024).with_variant(sa.String(length=1024, collation="C"), "postgresql"),
                  nullable=False),
        sa.Column("version_id", sa.String(length=80), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("grants", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["bucket_id"], ["buckets.id"], name=op.f("fk_object_acls_bucket_id_buckets"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_object_acls")),
        sa.UniqueConstraint("bucket_id", "key", "version_id", name=op.f("uq_object_acls_bucket_id_key_version_id")),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("object_acls")
    op.drop_table("bucket_sharing")
