"""API shapes of notifications."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tierpilot.kit.inputs import RowId


class NotificationOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    kind: str
    title: str
    body: str
    link: str | None
    payload: dict[str, Any]
    created_at: datetime
    read_at: datetime | None
    webhook_state: str = Field(description="none | pending | delivered | failed")
    webhook_attempts: int
    webhook_last_error: str | None


class NotificationsOut(BaseModel):
    items: list[NotificationOut]
    unread: int


class MarkReadIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[RowId] | None = Field(None, max_length=1000, description="omitted: every unread notification")


class MarkReadOut(BaseModel):
    marked: int


class WebhookIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(None, max_length=2048, description="http(s) URL; empty or null clears it")


class WebhookOut(BaseModel):
    url: str | None
    has_secret: bool = Field(description="a signing secret exists (deliveries are signed with it)")
    secret: str | None = Field(None, description="the new signing secret, only in the answer that created it; "
                                                 "shown once, store it now")
