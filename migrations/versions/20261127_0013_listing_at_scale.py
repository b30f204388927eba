"""catalog: listing at a million objects (issue 14)

ListObjectVersions reads a bucket's versions by (key, newest first): the (bucket_id, key, id) index of 0005
gave them in ascending id order, so both databases sorted each key's group of every page (SQLite: a temp
b-tree for the right part of the ORDER BY). It becomes (bucket_id, key, id DESC), which also serves every
by-key lookup of a key's versions (newest first, or by equality). Lifecycle's noncurrent sweep looks a
bucket's versions up by ``noncurrent_since`` (oldest first): it gets (bucket_id, noncurrent_since, id)
instead of reading every version of the bucket.

Plain CREATE INDEX inside the upgrade's transaction on both databases: the build reads the table once
(seconds at a million rows) and keeps existing rows as they are; PostgreSQL's CONCURRENTLY cannot run inside
the transaction that Alembic wraps every revision of an upgrade in. The new index is built before the old
one is dropped, so listings never lack one.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_object_versions_bucket_key_newest", "object_versions",
                    ["bucket_id", "key", sa.text("id DESC")])
    op.drop_index("ix_object_versions_bucket_key_id", table_name="object_versions")
    op.create_index("ix_object_versions_bucket_noncurrent", "object_versions",
                    ["bucket_id", "noncurrent_since", "id"])


def downgrade() -> None:
    op.drop_index("ix_object_versions_bucket_noncurrent", table_name="object_versions")
    op.create_index("ix_object_versions_bucket_key_id", "object_versions", ["bucket_id", "key", "id"])
    op.drop_index("ix_object_versions_bucket_key_newest", table_name="object_versions")
