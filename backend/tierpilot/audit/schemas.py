from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class AuditEventOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    at: datetime
    event: str
    actor_id: int | None
    actor: str
    client: str
    target: str
    detail: dict[str, Any]


class AuditPage(BaseModel):
    events: list[AuditEventOut]
    next_before_id: int | None
    event_names: list[str]
