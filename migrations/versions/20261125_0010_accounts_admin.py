"""account administration: audit retention (issue 12)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa  # noqa: F401
from alembic import op  # noqa: F401

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # no schema change: the retention sweep (audit.prune) deletes through the existing ix_audit_events_at,
    # and the users' last sign-in is read from audit_events
    pass


def downgrade() -> None:
    pass
