"""API shapes of the Browser page: buckets, folder listings, object details."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class CorsRuleIn(BaseModel):
    """One CORS rule, as S3's CORSRule (origins and allowed headers may hold one ``*``)."""

    origins: list[str] = Field(min_length=1, max_length=100, description="AllowedOrigin patterns")
    methods: list[str] = Field(min_length=1, max_length=5, description="GET, PUT, POST, DELETE or HEAD")
    headers: list[str] = Field(default_factory=list, max_length=100, description="AllowedHeader patterns")
    expose: list[str] = Field(default_factory=list, max_length=100, description="ExposeHeader names")
    max_age: int | None = Field(None, ge=0, le=2**31 - 1, description="MaxAgeSeconds of a preflight answer")
    id: str | None = Field(None, max_length=255)


class CorsUpdate(BaseModel):
    rules: list[CorsRuleIn] = Field(min_length=1, max_length=100)


class LockUpdate(BaseModel):
    """The default retention of a bucket created with object lock (mode None: none)."""

    mode: str | None = Field(None, pattern="^(GOVERNANCE|COMPLIANCE)$")
    days: int | None = Field(None, ge=1, le=36500)
    years: int | None = Field(None, ge=1, le=100)


class BucketSettings(BaseModel):
    """Versioning, object lock and CORS of a bucket."""

    versioning: str | None = Field(None, description="None (never enabled), Enabled or Suspended")
    object_lock: bool = False
    default_retention_mode: str | None = Field(None, description="GOVERNANCE or COMPLIANCE")
    default_retention_days: int | None = None
    default_retention_years: int | None = None
    cors: list[CorsRuleIn] | None = Field(None, description="None: no CORS configuration")


class VersioningUpdate(BaseModel):
    status: str = Field(pattern="^(Enabled|Suspended)$", description="Enabled or Suspended")


class VersionOut(BaseModel):
    """One version of an object, or a delete marker, newest first."""

    version_id: str
    is_latest: bool
    delete_marker: bool
    size: int
    etag: str
    storage_class: str
    last_modified: datetime
    lock_mode: str | None = None
    lock_until: datetime | None = None
    legal_hold: bool = False


class BucketCreate(BaseModel):
    name: str = Field(min_length=3, max_length=63, description="S3 bucket name")
    tier: str | None = Field(None, description="tier name; default from settings")
    space_bytes: int | None = Field(None, ge=0, description="space reservation in bytes")
    space_start: datetime | None = Field(None, description="space reservation start (UTC)")
    space_end: datetime | None = Field(None, description="space reservation end (UTC)")


class BucketOut(BaseModel):
    name: str
    owner: str
    project: str | None = Field(None, description="its project (whose members reach it and whose quota counts it)")
    tier: str
    region: str
    object_count: int
    used_bytes: int = Field(description="bytes stored (sum of object sizes)")
    space_bytes: int | None = None
    space_start: datetime | None = None
    space_end: datetime | None = None
    created_at: datetime


class ObjectSummary(BaseModel):
    key: str
    size: int = Field(description="bytes")
    etag: str
    storage_class: str
    tier: str
    tier_offline: bool = Field(description="on an archive tier: reads need a restore")
    last_modified: datetime
    restore_state: str | None = Field(None, description="None | ongoing | restored | failed")


class FolderListing(BaseModel):
    bucket: str
    prefix: str
    delimiter: str
    folders: list[str] = Field(description="common prefixes (sub-folders) at this level")
    objects: list[ObjectSummary]
    truncated: bool
    next_cursor: str | None = Field(None, description="pass as `cursor` for the next page")


class ObjectDetail(ObjectSummary):
    bucket: str
    content_type: str
    checksum_algorithm: str | None = None
    checksum_value: str | None = None
    parts_count: int | None = None
    user_metadata: dict[str, Any]
    headers: dict[str, Any]
    tags: dict[str, Any]
    readable: bool = Field(description="GET works now (not archived, or restored)")
    created_at: datetime
    last_access_at: datetime | None = None
    restore_speed: str | None = None
    restore_expiry: datetime | None = None
    s3_uri: str
    gateway_url: str


class UploadOut(BaseModel):
    key: str
    size: int
    etag: str
    storage_class: str
