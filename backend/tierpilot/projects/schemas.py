from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class MemberOut(BaseModel):
    username: str
    role: str = Field(description="viewer | member | manager")
    is_default: bool = Field(description="buckets this user creates through S3 land in this project")


class ProjectOut(BaseModel):
    name: str
    personal: bool = Field(description="a user's own project (named ~username)")
    quota_bytes: int | None = Field(None, description="hard quota in bytes over every stored version; None: none")
    quota_objects: int | None = Field(None, description="hard quota in objects (versions); None: none")
    used_bytes: int = Field(description="bytes stored: every version and restored copy")
    used_objects: int = Field(description="objects stored: every version and restored copy")
    members: list[MemberOut]
    buckets: list[str]
    created_at: datetime


class ProjectCreate(BaseModel):
    # plain types: the service names the field of a bad value in its 4xx (negative, absurd)
    name: str
    quota_bytes: int | None = None
    quota_objects: int | None = None


class MemberAdd(BaseModel):
    username: str
    role: str = "member"
    default: bool = False


class MemberChange(BaseModel):
    role: str | None = None
    default: bool | None = None


class QuotaSet(BaseModel):
    quota_bytes: int | None = None
    quota_objects: int | None = None


class BucketMove(BaseModel):
    bucket: str
