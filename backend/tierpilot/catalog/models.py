from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, UniqueConstraint, desc, false
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, KeyString, utcnow


class Bucket(Base):
    __tablename__ = "buckets"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id"), index=True)
    # the project whose members reach it and whose quota it counts toward (the projects domain places it)
    project_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id"), index=True, default=None)
    region: Mapped[str] = mapped_column(String(32), default="us-east-1")
    # space reservation: PUTs beyond space_bytes are refused while the window is open
    space_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    space_start: Mapped[datetime | None] = mapped_column(default=None)
    space_end: Mapped[datetime | None] = mapped_column(default=None)
    # running totals kept in the same transaction as every object write, so the quota check and the
    # dashboard never sum millions of rows
    object_count: Mapped[int] = mapped_column(BigInteger, default=0)
    used_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # None (never enabled) | "Enabled" | "Suspended"; object lock needs (and keeps) it enabled
    versioning: Mapped[str | None] = mapped_column(String(16), default=None)
    object_lock: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    lock_default_mode: Mapped[str | None] = mapped_column(String(16), default=None)
    lock_default_days: Mapped[int | None] = mapped_column(Integer, default=None)
    lock_default_years: Mapped[int | None] = mapped_column(Integer, default=None)
    tags: Mapped[dict[str, Any] | None] = mapped_column(default=None)  # None: no tag set (NoSuchTagSet)
    # CORS rules (PutBucketCors), each a dict of AllowedOrigins/Methods/Headers, ExposeHeaders, MaxAgeSeconds, ID
    cors: Mapped[list[Any] | None] = mapped_column(default=None)  # None: no configuration


class Object(Base):
    """The current version of a key (older versions and delete markers are ``ObjectVersion`` rows)."""

    __tablename__ = "objects"
    __table_args__ = (
        UniqueConstraint("bucket_id", "key", name="uq_objects_bucket_key"),
        Index("ix_objects_tier_id", "tier_id"),
        # lifecycle due scans; with size, spend's sums of a bucket read the index alone
        Index("ix_objects_bucket_tier_created_size", "bucket_id", "tier_id", "created_at", "size"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id"))
    key: Mapped[str] = mapped_column(KeyString)
    size: Mapped[int] = mapped_column(BigInteger)
    etag: Mapped[str] = mapped_column(String(80))
    checksum_algorithm: Mapped[str | None] = mapped_column(String(16), default=None)
    checksum_value: Mapped[str | None] = mapped_column(String(128), default=None)
    content_type: Mapped[str] = mapped_column(String(255), default="binary/octet-stream")
    # x-amz-meta-* (names lower-case, without the prefix), as boto3's Metadata shows them
    user_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # other headers stored with the object: Content-Encoding, Content-Disposition, Cache-Control, …
    headers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tags: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id"))
    storage_class: Mapped[str] = mapped_column(String(32), default="STANDARD")
    # where the bytes are on the tier; unique per write so an overwrite never clobbers live data
    locator: Mapped[str] = mapped_column(String(2048))
    parts_count: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_modified: Mapped[datetime] = mapped_column(default=utcnow)
    last_access_at: Mapped[datetime | None] = mapped_column(default=None)
    # restore state for archive tiers: None | "ongoing" | "restored" | "failed"
    restore_state: Mapped[str | None] = mapped_column(String(16), default=None)
    restore_speed: Mapped[str | None] = mapped_column(String(16), default=None)
    restore_expiry: Mapped[datetime | None] = mapped_column(default=None)
    # "null" for a version written while the bucket's versioning was off or suspended
    version_id: Mapped[str] = mapped_column(String(64), default="null", server_default="null")
    # object lock: retention (GOVERNANCE | COMPLIANCE until lock_until) and legal hold
    lock_mode: Mapped[str | None] = mapped_column(String(16), default=None)
    lock_until: Mapped[datetime | None] = mapped_column(default=None)
    legal_hold: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    part_sizes: Mapped[list[Any] | None] = mapped_column(default=None)  # sizes of a multipart object's parts
    # the parts' checksums of a multipart object with one (GET ?partNumber=, GetObjectAttributes ObjectParts)
    part_checksums: Mapped[list[Any] | None] = mapped_column(default=None)


class ObjectVersion(Base):
    """A noncurrent version or a delete marker; a key's versions are ordered by id (newest: largest)."""

    __tablename__ = "object_versions"
    __table_args__ = (
        # a key's versions newest first, as ListObjectVersions and every by-key lookup read them: an index in
        # ascending id order made both databases sort each key's group (SQLite: a temp b-tree per page)
        Index("ix_object_versions_bucket_key_newest", "bucket_id", "key", desc("id")),
        Index("ix_object_versions_tier_id", "tier_id"),
        # lifecycle's noncurrent sweep: a bucket's versions by how long they have been noncurrent
        Index("ix_object_versions_bucket_noncurrent", "bucket_id", "noncurrent_since", "id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id"))
    key: Mapped[str] = mapped_column(KeyString)
    delete_marker: Mapped[bool] = mapped_column(Boolean, default=False)
    size: Mapped[int] = mapped_column(BigInteger, default=0)
    etag: Mapped[str] = mapped_column(String(80), default="")
    checksum_algorithm: Mapped[str | None] = mapped_column(String(16), default=None)
    checksum_value: Mapped[str | None] = mapped_column(String(128), default=None)
    content_type: Mapped[str] = mapped_column(String(255), default="binary/octet-stream")
    user_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    headers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tags: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tier_id: Mapped[int | None] = mapped_column(ForeignKey("tiers.id"), default=None)  # None: a delete marker
    storage_class: Mapped[str] = mapped_column(String(32), default="STANDARD")
    locator: Mapped[str] = mapped_column(String(2048), default="")
    parts_count: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_modified: Mapped[datetime] = mapped_column(default=utcnow)
    restore_state: Mapped[str | None] = mapped_column(String(16), default=None)
    restore_speed: Mapped[str | None] = mapped_column(String(16), default=None)
    restore_expiry: Mapped[datetime | None] = mapped_column(default=None)
    # when a newer version replaced it (NoncurrentDays of lifecycle rules count from here)
    noncurrent_since: Mapped[datetime] = mapped_column(default=utcnow)
    version_id: Mapped[str] = mapped_column(String(64), default="null", server_default="null")
    lock_mode: Mapped[str | None] = mapped_column(String(16), default=None)
    lock_until: Mapped[datetime | None] = mapped_column(default=None)
    legal_hold: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    part_sizes: Mapped[list[Any] | None] = mapped_column(default=None)  # sizes of a multipart object's parts
    # the parts' checksums of a multipart object with one (GET ?partNumber=, GetObjectAttributes ObjectParts)
    part_checksums: Mapped[list[Any] | None] = mapped_column(default=None)


# what a version carries from the current row to object_versions and back
VERSION_FIELDS = ("size", "etag", "checksum_algorithm", "checksum_value", "content_type", "user_metadata",
                  "headers", "tags", "tier_id", "storage_class", "locator", "parts_count", "created_at",
                  "last_modified", "restore_state", "restore_speed", "restore_expiry", "version_id", "lock_mode",
                  "lock_until", "legal_hold", "part_sizes", "part_checksums")


class MultipartUpload(Base):
    __tablename__ = "multipart_uploads"

    id: Mapped[int] = mapped_column(primary_key=True)
    upload_id: Mapped[str] = mapped_column(String(64), unique=True)
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id"), index=True)
    key: Mapped[str] = mapped_column(KeyString)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id"))
    storage_class: Mapped[str] = mapped_column(String(32), default="STANDARD")
    # the driver-level name under which the tier keeps this upload's parts
    locator: Mapped[str] = mapped_column(String(2048))
    content_type: Mapped[str] = mapped_column(String(255), default="binary/octet-stream")
    user_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    headers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    checksum_algorithm: Mapped[str | None] = mapped_column(String(16), default=None)
    # COMPOSITE | FULL_OBJECT (None: an upload begun before the type was kept, COMPOSITE)
    checksum_type: Mapped[str | None] = mapped_column(String(16), default=None)
    initiated_at: Mapped[datetime] = mapped_column(default=utcnow)
    tags: Mapped[dict[str, Any] | None] = mapped_column(default=None)  # x-amz-tagging of the upload
    # object lock the CreateMultipartUpload asked for, given to the object its completion makes
    lock_mode: Mapped[str | None] = mapped_column(String(16), default=None)
    lock_until: Mapped[datetime | None] = mapped_column(default=None)
    legal_hold: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class UploadPart(Base):
    __tablename__ = "upload_parts"
    __table_args__ = (UniqueConstraint("upload_id", "part_number", name="uq_upload_parts_upload_part"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    upload_id: Mapped[int] = mapped_column(ForeignKey("multipart_uploads.id", ondelete="CASCADE"))
    part_number: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(BigInteger)
    etag: Mapped[str] = mapped_column(String(80))
    checksum_value: Mapped[str | None] = mapped_column(String(128), default=None)
    locator: Mapped[str] = mapped_column(String(2048))
    # driver data needed to join the part later (e.g. the remote part ETag of an s3 tier)
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)
    last_modified: Mapped[datetime] = mapped_column(default=utcnow)


class ObjectUsage(Base):
    """Signed deltas of the current objects' count and bytes per bucket and tier, appended by triggers on
    ``objects`` (migration 0021) and folded by ``repository.fold_usage``: their sums are the usage the Overview
    shows, read without scanning the objects."""

    __tablename__ = "object_usage"
    __table_args__ = (Index("ix_object_usage_bucket_id_tier_id", "bucket_id", "tier_id"),
                      {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True)
    bucket_id: Mapped[int] = mapped_column(Integer)
    tier_id: Mapped[int] = mapped_column(Integer)
    objects: Mapped[int] = mapped_column(BigInteger)
    bytes: Mapped[int] = mapped_column(BigInteger)
