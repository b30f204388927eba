"""Domain errors that routers turn into HTTP answers."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status_code = 400

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra
        self.headers: dict[str, str] = {}


class NotFound(DomainError):
    status_code = 404


class Forbidden(DomainError):
    status_code = 403


class Conflict(DomainError):
    status_code = 409


class Invalid(DomainError):
    status_code = 422


class Unauthorized(DomainError):
    status_code = 401


class TooManyRequests(DomainError):
    status_code = 429

    def __init__(self, message: str, retry_after_s: int | None = None, **extra: Any) -> None:
        if retry_after_s is not None:
            extra["retry_after_s"] = retry_after_s
        super().__init__(message, **extra)
        if retry_after_s is not None:
            self.headers["Retry-After"] = str(retry_after_s)
