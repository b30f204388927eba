"""institutional sign-in: external accounts (OpenID Connect, LDAP) and temporary S3 keys

`users` gains `external_source` and `external_subject` (unique together); `access_keys` gains `expires_at`,
`session_token_hash` and `web_identity_hash` (unique: an ID token buys one set of keys).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = tierpilot.kit.db.UTCDateTime(timezone=True)


# Columns are added in place and the unique rules are unique indexes: recreating `users` or `access_keys` on
# SQLite would drop a table other tables reference and lose its AUTOINCREMENT.
def upgrade() -> None:
    op.add_column("users", sa.Column("external_source", sa.String(length=16), nullable=True))
    op.add_column("users", sa.Column("external_subject", sa.String(length=512), nullable=True))
    op.create_index("uq_users_external", "users", ["external_source", "external_subject"], unique=True)
    op.add_column("access_keys", sa.Column("expires_at", WHEN, nullable=True))
    op.add_column("access_keys", sa.Column("session_token_hash", sa.String(length=64), nullable=True))
    op.add_column("access_keys", sa.Column("web_identity_hash", sa.String(length=64), nullable=True))
    op.create_index("ix_access_keys_expires_at", "access_keys", ["expires_at"], unique=False)
    op.create_index("uq_access_keys_web_identity_hash", "access_keys", ["web_identity_hash"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_access_keys_web_identity_hash", table_name="access_keys")
    op.drop_index("ix_access_keys_expires_at", table_name="access_keys")
    op.drop_index("uq_users_external", table_name="users")
    for table, column in (("access_keys", "web_identity_hash"), ("access_keys", "session_token_hash"),
                          ("access_keys", "expires_at"), ("users", "external_subject"), ("users", "external_source")):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")  # SQLite 3.35+ and PostgreSQL, no table rebuilt
