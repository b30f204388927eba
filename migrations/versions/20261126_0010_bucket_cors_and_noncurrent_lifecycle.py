"""bucket CORS configuration and object lock on multipart uploads (issue 14)

Buckets get their CORS rules (a JSON list, None: no configuration, GetBucketCors answers
NoSuchCORSConfiguration); multipart uploads keep the object lock a CreateMultipartUpload asked for, so the
object its completion makes is locked as a PutObject with the same headers would be. Noncurrent-version
lifecycle rules need no new state: ``object_versions.noncurrent_since`` (0005) is what they count from.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # plain ADD COLUMNs: SQLite keeps the tables (and their AUTOINCREMENT) as they are
    op.add_column("buckets", sa.Column("cors", sa.JSON(), nullable=True))
    op.add_column("multipart_uploads", sa.Column("lock_mode", sa.String(length=16), nullable=True))
    op.add_column("multipart_uploads",
                  sa.Column("lock_until", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=True))
    op.add_column("multipart_uploads",
                  sa.Column("legal_hold", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("multipart_uploads", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("legal_hold")
        batch.drop_column("lock_until")
        batch.drop_column("lock_mode")
    with op.batch_alter_table("buckets", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("cors")
