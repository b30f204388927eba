"""spend: a bucket's plan may be a planner scenario

A scenario saved as a bucket's plan keeps the whole scenario (its one tier, volume, objects, reads, egress
destination, restored-copy days, speed) so the Spend view prices it with the planner's own function; the usage
columns keep what it adds up to. NULL: a plan of usage figures only, as before.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("spend_plans") as batch:
        batch.add_column(sa.Column("scenario", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("spend_plans") as batch:
        batch.drop_column("scenario")
