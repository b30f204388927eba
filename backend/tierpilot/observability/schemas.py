from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class PhaseOut(BaseModel):
    name: str
    start_ms: float
    duration_ms: float


class RequestTraceOut(BaseModel):
    request_id: str
    at: datetime
    operation: str
    bucket: str
    status: int
    bytes: int
    total_ms: float
    reason: str
    phases: list[PhaseOut]


class RequestTracesOut(BaseModel):
    items: list[RequestTraceOut]
