"""gateway: CRC64NVME and full-object multipart checksums (issue 14)

A multipart upload keeps the checksum type its CreateMultipartUpload asked for (COMPOSITE or FULL_OBJECT;
NULL for uploads begun before, which were all COMPOSITE), and a multipart object (current or noncurrent)
keeps its parts' checksums for GET ?partNumber= and GetObjectAttributes' ObjectParts (NULL: none kept, as
for every object written before). Plain nullable ADD COLUMNs: existing rows stay as they are, and SQLite keeps
the tables, their AUTOINCREMENT and the storage_history triggers of 0011.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (("multipart_uploads", "checksum_type", sa.String(length=16)),
           ("objects", "part_checksums", sa.JSON()),
           ("object_versions", "part_checksums", sa.JSON()))


def upgrade() -> None:
    for table, name, type_ in COLUMNS:
        op.add_column(table, sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for table, name, _type in reversed(COLUMNS):
        if sqlite:
            # SQLite ≥ 3.35 drops a column in place; a batch copy would drop 0011's triggers with the table
            op.execute(f'ALTER TABLE {table} DROP COLUMN "{name}"')
        else:
            op.drop_column(table, name)
