"""Sharing tables: a bucket's sharing settings (one row, only for buckets that have any) and object ACLs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, KeyString, utcnow


class BucketSharing(Base):
    """What a bucket shares beyond its owner: policy, ACL grants, object ownership, public access block.

    A bucket without a row shares nothing (the owner's FULL_CONTROL ACL, no policy): the gateway keeps that
    answer cached, so private buckets cost no extra statement per request.
    """

    __tablename__ = "bucket_sharing"
    __table_args__ = (UniqueConstraint("bucket_id"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(primary_key=True)
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"))
    policy: Mapped[str | None] = mapped_column(Text, default=None)  # the document as the owner sent it
    # grants besides the owner's FULL_CONTROL: [{"grantee": "id:5" | "uri:…", "permission": "READ"}]; None: private
    acl: Mapped[list[Any] | None] = mapped_column(default=None)
    ownership: Mapped[str | None] = mapped_column(String(32), default=None)  # None: no controls (ObjectWriter)
    # public access block: None when not configured, else the four flags
    public_block: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    # set once any object of the bucket got an ACL row: writes then reset the row of the key they replace
    object_acls: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ObjectAcl(Base):
    """An object version's ACL when it is not the default (the bucket owner's FULL_CONTROL), and its owner
    when someone other than the bucket owner wrote it. Keyed like the catalog's versions; an upload's ACL
    waits under ``upload:<id>`` until the upload completes."""

    __tablename__ = "object_acls"
    __table_args__ = (UniqueConstraint("bucket_id", "key", "version_id"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(primary_key=True)
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(KeyString)
    version_id: Mapped[str] = mapped_column(String(80))
    owner_id: Mapped[int] = mapped_column(Integer)
    grants: Mapped[list[Any]] = mapped_column(default=list)
