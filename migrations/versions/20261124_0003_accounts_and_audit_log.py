"""accounts and audit log: users can be disabled; the audit_events table

``users.disabled_at`` is a plain added column (SQLite's ALTER TABLE ADD/DROP COLUMN, no table rebuild, so
the AUTOINCREMENT of revision 0002 and the rows referencing users stay untouched). ``audit_events`` has no
foreign key to users on purpose: the log keeps the events of a deleted user.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 21:13:34.860376
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("client", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=300), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_audit_events_actor_at", "audit_events", ["actor", "at"], unique=False)
    op.create_index("ix_audit_events_at", "audit_events", ["at"], unique=False)
    op.create_index("ix_audit_events_event_at", "audit_events", ["event", "at"], unique=False)
    op.add_column("users", sa.Column("disabled_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("users", "disabled_at")
    op.drop_index("ix_audit_events_event_at", table_name="audit_events")
    op.drop_index("ix_audit_events_at", table_name="audit_events")
    op.drop_index("ix_audit_events_actor_at", table_name="audit_events")
    op.drop_table("audit_events")
