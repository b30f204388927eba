"""The events API's shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class TargetIn(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    type: str
    url: str = Field(min_length=1, max_length=2048)
    topic: str = Field("", max_length=255)
    options: dict[str, str] = Field(default_factory=dict)


class TargetOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    type: str
    shown_url: str
    topic: str
    arn: str = ""
    created_at: datetime


class TargetCreated(BaseModel):
    target: TargetOut
    arn: str
    secret: str | None = None  # a webhook's signing secret, shown this once


class TestOut(BaseModel):
    ok: bool
    error: str | None = None


class MetricsOut(BaseModel):
    queued: int
    retrying: int
    dead_letters: int
    oldest_age_s: float | None


class DeadLetterOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    target_id: int
    bucket_id: int
    key: str
    name: str
    created_at: datetime
    failed_at: datetime
    attempts: int
    last_error: str | None


class ReplayIn(BaseModel):
    ids: list[int] | None = None


class ReplayOut(BaseModel):
    replayed: int


class DeliveryOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    target_id: int
    key: str
    name: str
    status: str
    attempts: int
    error: str | None
    at: datetime


class ConfigurationOut(BaseModel):
    entries: list[dict[str, Any]]
