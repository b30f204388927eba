"""projects: members with roles, quotas; every bucket in a project

Tables `projects` (name, the user of a personal project, hard quotas, the quota counter used without Redis, the
soft threshold last told) and `project_members` (role viewer | member | manager, default project). Every existing
user gets a personal project `~username` whose manager they are, holding the buckets they own; its counter starts
at what those buckets store. Nothing else changes: owners keep every right on their buckets.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 16:00:00
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = tierpilot.kit.db.UTCDateTime(timezone=True)

# Without Redis a project's committed use is its row's counter: every change of a bucket's totals moves it in
# the same transaction (a trigger: the write's own statements stay what they were), for projects with a quota;
# others are set from the catalog when they get one. A bucket moved between projects is reconciled by the mover.
_MOVE = ("UPDATE projects SET counted_bytes = counted_bytes + NEW.used_bytes - OLD.used_bytes, "
         "counted_objects = counted_objects + NEW.object_count - OLD.object_count "
         "WHERE id = NEW.project_id AND (quota_bytes IS NOT NULL OR quota_objects IS NOT NULL)")
_CHANGED = ("NEW.project_id IS NOT NULL AND (NEW.used_bytes <> OLD.used_bytes OR "
            "NEW.object_count <> OLD.object_count)")
SQLITE = [f"CREATE TRIGGER buckets_count_project_usage AFTER UPDATE OF used_bytes, object_count ON buckets "
          f"WHEN {_CHANGED} AND OLD.project_id IS NEW.project_id BEGIN {_MOVE}; END"]
POSTGRESQL = [
    f"CREATE FUNCTION projects_count_usage() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    f"IF {_CHANGED} AND OLD.project_id IS NOT DISTINCT FROM NEW.project_id THEN {_MOVE}; END IF; "
    f"RETURN NULL; END $$",
    "CREATE TRIGGER buckets_count_project_usage AFTER UPDATE OF used_bytes, object_count ON buckets FOR EACH ROW "
    "EXECUTE FUNCTION projects_count_usage()",
]


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("personal_user_id", sa.Integer(), nullable=True),
        sa.Column("quota_bytes", sa.BigInteger(), nullable=True),
        sa.Column("quota_objects", sa.BigInteger(), nullable=True),
        sa.Column("counted_bytes", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("counted_objects", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("inflight_bytes", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("inflight_objects", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("alerted_percent", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["personal_user_id"], ["users.id"], name=op.f("fk_projects_personal_user_id_users"),
                                ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("name", name=op.f("uq_projects_name")),
        sa.UniqueConstraint("personal_user_id", name=op.f("uq_projects_personal_user_id")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "project_members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("is_default", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("added_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_project_members_project_id_projects"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_project_members_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_project_members")),
        sa.UniqueConstraint("project_id", "user_id", name="uq_project_members_project_user"),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_project_members_user_id"), "project_members", ["user_id"], unique=False)
    # a plain ADD COLUMN: SQLite keeps the table and its AUTOINCREMENT (its reference declared inline, as SQLite
    # adds no constraint to a table)
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE buckets ADD COLUMN project_id INTEGER "
                   "CONSTRAINT fk_buckets_project_id_projects REFERENCES projects (id)")
    else:
        op.add_column("buckets", sa.Column("project_id", sa.Integer(), nullable=True))
        op.create_foreign_key(op.f("fk_buckets_project_id_projects"), "buckets", "projects", ["project_id"], ["id"])
    op.create_index(op.f("ix_buckets_project_id"), "buckets", ["project_id"], unique=False)
    _personal_projects()
    for statement in SQLITE if op.get_bind().dialect.name == "sqlite" else POSTGRESQL:
        op.execute(statement)


def _personal_projects() -> None:
    """Each user's personal project, with the buckets they own and the counter at their totals."""
    conn = op.get_bind()
    now = datetime.now(UTC)
    users = sa.table("users", sa.column("id", sa.Integer()), sa.column("username", sa.String()))
    projects = sa.table("projects", sa.column("id", sa.Integer()), sa.column("name", sa.String()),
                        sa.column("personal_user_id", sa.Integer()), sa.column("counted_bytes", sa.BigInteger()),
                        sa.column("counted_objects", sa.BigInteger()), sa.column("created_at", WHEN))
    members = sa.table("project_members", sa.column("project_id", sa.Integer()), sa.column("user_id", sa.Integer()),
                       sa.column("role", sa.String()), sa.column("is_default", sa.Boolean()),
                       sa.column("added_at", WHEN))
    buckets = sa.table("buckets", sa.column("id", sa.Integer()), sa.column("owner_id", sa.Integer()),
                       sa.column("project_id", sa.Integer()), sa.column("used_bytes", sa.BigInteger()),
                       sa.column("object_count", sa.BigInteger()))
    totals = dict((owner, (int(b), int(o))) for owner, b, o in conn.execute(
        sa.select(buckets.c.owner_id, sa.func.coalesce(sa.func.sum(buckets.c.used_bytes), 0),
                  sa.func.coalesce(sa.func.sum(buckets.c.object_count), 0)).group_by(buckets.c.owner_id)))
    rows = conn.execute(sa.select(users.c.id, users.c.username).order_by(users.c.id)).all()
    for user_id, username in rows:
        nbytes, objects = totals.get(user_id, (0, 0))
        conn.execute(projects.insert().values(name=f"~{username}"[:64], personal_user_id=user_id,
                                              counted_bytes=nbytes, counted_objects=objects, created_at=now))
    ids = {uid: pid for uid, pid in conn.execute(sa.select(projects.c.personal_user_id, projects.c.id))}
    if ids:
        conn.execute(members.insert(), [{"project_id": pid, "user_id": uid, "role": "manager", "is_default": False,
                                         "added_at": now} for uid, pid in ids.items()])
    for user_id, project_id in ids.items():
        conn.execute(buckets.update().where(buckets.c.owner_id == user_id).values(project_id=project_id))


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.execute("DROP TRIGGER IF EXISTS buckets_count_project_usage" + (" ON buckets" if postgresql else ""))
    if postgresql:
        op.execute("DROP FUNCTION IF EXISTS projects_count_usage()")
    op.drop_index(op.f("ix_buckets_project_id"), table_name="buckets")
    with op.batch_alter_table("buckets", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("project_id")
    op.drop_index(op.f("ix_project_members_user_id"), table_name="project_members")
    op.drop_table("project_members")
    op.drop_table("projects")
