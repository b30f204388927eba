"""sampled request traces and benchmark runs (issue 13)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "request_traces",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.String(length=32), nullable=False),
        sa.Column("at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("bucket", sa.String(length=63), nullable=False),
        sa.Column("operation", sa.String(length=64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("total_ms", sa.Double(), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("phases", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_request_traces")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_request_traces_request_id", "request_traces", ["request_id"], unique=True)
    op.create_index("ix_request_traces_user_at", "request_traces", ["user_id", "at"], unique=False)
    op.create_index("ix_request_traces_at", "request_traces", ["at"], unique=False)
    op.create_table(
        "benchmark_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("progress", sa.Double(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("points", sa.JSON(), nullable=False),
        sa.Column("error", sa.String(length=500), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("created_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], name=op.f("fk_benchmark_runs_owner_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_benchmark_runs")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_benchmark_runs_owner_created", "benchmark_runs", ["owner_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_benchmark_runs_owner_created", table_name="benchmark_runs")
    op.drop_table("benchmark_runs")
    op.drop_index("ix_request_traces_at", table_name="request_traces")
    op.drop_index("ix_request_traces_user_at", table_name="request_traces")
    op.drop_index("ix_request_traces_request_id", table_name="request_traces")
    op.drop_table("request_traces")
