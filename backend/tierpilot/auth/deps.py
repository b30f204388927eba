"""FastAPI dependencies: the request's database session (the one commit point) and its user."""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from tierpilot.auth import service
from tierpilot.auth.models import User
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import Forbidden, Unauthorized

SESSION_COOKIE = "tierpilot_session"
CSRF_COOKIE = "tierpilot_csrf"
CSRF_HEADER = "x-csrf-token"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def get_session(request: Request) -> Iterator[Session]:
    """The request's transaction: commits when the handler returns, rolls back when it raises.

    Mutating requests take SQLite's write lock at BEGIN: a read-then-write transaction that loses
    the race to another writer would otherwise fail at once instead of waiting its turn.
    """
    with transaction(write=request.method not in _SAFE_METHODS) as session:
        yield session


# scope="function": commit before the response is sent, so a client's next request sees the change
# (FastAPI's default runs the teardown after the response) and a failed commit is never a 2xx
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def get_current_user(request: Request, session: SessionDep) -> User:
    """A bearer token (scripts) or the session cookie (dashboard, its session-bound CSRF token checked)."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return service.user_for_token(session, auth[7:].strip())
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise Unauthorized("not signed in")
    if request.method not in _SAFE_METHODS:
        # the header must carry the session's own token; the cookie only lets the dashboard read it
        header = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(header.encode(), service.csrf_token(token).encode()):
            raise Forbidden("missing or wrong X-CSRF-Token header")
    return service.user_for_token(session, token)


CurrentUser = Annotated[User, Depends(get_current_user)]


def client_of(request: Request) -> str:
    """The caller's address as the API sees it (what the audit log records)."""
    return request.client.host if request.client else ""


def get_admin_user(user: CurrentUser) -> User:
    if not user.is_admin:
        raise Forbidden("admins only")
    return user


AdminUser = Annotated[User, Depends(get_admin_user)]
