"""Domain errors that routers turn into HTTP answers."""

from __future__ import annotations

import errno
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


class Unavailable(DomainError):
    """Something the request needs (the database, the broker) is out of reach for now: the client retries."""

    status_code = 503

    def __init__(self, message: str, retry_after_s: int = 1, **extra: Any) -> None:
        super().__init__(message, **extra)
        self.headers["Retry-After"] = str(retry_after_s)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen and len(seen) < 16:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def no_space(exc: BaseException) -> bool:
    """Whether a failure is a full file system (a tier's, or the data dir's under SQLite), anywhere in its chain."""
    for e in _chain(exc):
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if type(e).__name__ == "OperationalError" and "database or disk is full" in str(e):
            return True
    return False


def database_unreachable(exc: BaseException) -> bool:
    """Whether a failure is the database being out of reach (connection refused or lost, server shutting down)."""
    from sqlalchemy.exc import DBAPIError

    for e in _chain(exc):
        if isinstance(e, DBAPIError) and (e.connection_invalidated or type(e.orig).__name__ in (
                "OperationalError", "InterfaceError")) and "database or disk is full" not in str(e):
            return True
    return False
