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


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("external_source", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("external_subject", sa.String(length=512), nullable=True))
        batch_op.create_unique_constraint("uq_users_external", ["external_source", "external_subject"])
    with op.batch_alter_table("access_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_at", WHEN, nullable=True))
        batch_op.add_column(sa.Column("session_token_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("web_identity_hash", sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f("ix_access_keys_expires_at"), ["expires_at"], unique=False)
        batch_op.create_unique_constraint(batch_op.f("uq_access_keys_web_identity_hash"), ["web_identity_hash"])


def downgrade() -> None:
    with op.batch_alter_table("access_keys", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_access_keys_web_identity_hash"), type_="unique")
        batch_op.drop_index(batch_op.f("ix_access_keys_expires_at"))
        batch_op.drop_column("web_identity_hash")
        batch_op.drop_column("session_token_hash")
        batch_op.drop_column("expires_at")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_constraint("uq_users_external", type_="unique")
        batch_op.drop_column("external_subject")
        batch_op.drop_column("external_source")
