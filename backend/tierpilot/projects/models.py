from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class Project(Base):
    """A group's buckets, members and quota; a personal project (``personal_user_id``) is one user's own."""

    __tablename__ = "projects"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    personal_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), unique=True,
                                                         default=None)
    # hard quota over every stored version and restored copy; None: no limit
    quota_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    quota_objects: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # the shared quota counter when no Redis is configured: committed use (moved by a trigger in the transaction
    # of every catalog write, migration 0018) and writes reserved but not yet committed
    counted_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    counted_objects: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    inflight_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    inflight_objects: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # the highest soft threshold (percent of a quota) the managers were told of; lowered when use drops below
    alerted_percent: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ProjectMember(Base):
    __tablename__ = "project_members"
    __table_args__ = (UniqueConstraint("project_id", "user_id", name="uq_project_members_project_user"),
                      {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(16))  # viewer | member | manager
    # where the buckets this user creates through S3 land (at most one per user; none: their personal project)
    is_default: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    added_at: Mapped[datetime] = mapped_column(default=utcnow)
