"""Bodies and answers of the adoption endpoints (``/api/tiers/{id}/adopt``)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

# S3 bucket, Azure container and GCS bucket names: lower case, digits, dots, dashes (GCS: underscores)
REMOTE_NAME = r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$"
LOCAL_NAME = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"


class AdoptIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bucket: str = Field(pattern=REMOTE_NAME, description="the remote bucket (Azure: container) to adopt")
    into: str | None = Field(None, pattern=LOCAL_NAME, description="local bucket (default: the remote's name)")
    owner: str | None = Field(None, min_length=1, max_length=64,
                              description="username owning a new local bucket (default: you)")


class AdoptionOut(BaseModel):
    id: int
    tier_id: int
    remote_bucket: str
    bucket: str
    state: str
    listed: int
    added: int
    removed: int
    requests: int
    error: str | None
    created_at: datetime
    started_at: datetime | None
    updated_at: datetime
    scanned_at: datetime | None
