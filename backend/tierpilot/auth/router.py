"""Login, logout, the signed-in user, API tokens, passwords, S3 keys and (admin) users; the audit log's
endpoints come from ``audit_router``."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response, status
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from tierpilot.audit import service as audit
from tierpilot.auth import accounts, repository, service
from tierpilot.auth.audit_router import router as audit_router
from tierpilot.auth.deps import CSRF_COOKIE, SESSION_COOKIE, AdminUser, CurrentUser, SessionDep, client_of
from tierpilot.auth.models import User
from tierpilot.auth.schemas import (
    AccessKeyOut,
    KeyCreate,
    LoginIn,
    LoginOut,
    NewAccessKeyOut,
    PasswordChange,
    PasswordChangedOut,
    PasswordReset,
    TokenCreate,
    TokenInfo,
    TokenOut,
    UserCreate,
    UserCreatedOut,
    UserOut,
    UserUpdate,
)
from tierpilot.auth.throttle import LoginAttempt, login_limiter
from tierpilot.kit.db import after_commit
from tierpilot.kit.errors import Forbidden, Unauthorized
from tierpilot.kit.inputs import RowId
from tierpilot.kit.settings import get_settings

router = APIRouter(tags=["auth"])
router.include_router(audit_router)


def _key_out(new: service.NewAccessKey) -> NewAccessKeyOut:
    return NewAccessKeyOut(access_key_id=new.access_key_id, secret_access_key=new.secret_access_key,
                           gateway_url=get_settings().gateway_url, expires_at=new.created.expires_at)


def _login_attempt(body: LoginIn, request: Request) -> LoginAttempt:
    """Counted before the request's transaction begins: it holds SQLite's write lock (see ``auth.throttle``)."""
    return login_limiter().attempt(body.username, client_of(request))


@router.post("/auth/login", response_model=LoginOut, responses={401: {}, 403: {}})
def login(body: LoginIn, attempt: Annotated[LoginAttempt, Depends(_login_attempt)], request: Request,
          response: Response, session: SessionDep) -> LoginOut | JSONResponse:
    try:
        user = service.authenticate(session, body.username, body.password)
    except (Unauthorized, Forbidden) as exc:
        # answered, not raised: the request's transaction then commits the audit event
        audit.record(session, "auth.login_failed", audit.Actor(None, body.username[:64], client_of(request)),
                     f"user:{body.username[:64]}", reason="disabled" if isinstance(exc, Forbidden) else "password")
        return JSONResponse({"detail": exc.message}, status_code=exc.status_code)
    audit.record(session, "auth.login_ok", accounts.actor(user, client_of(request)), f"user:{user.username}")
    after_commit(session, attempt.succeeded)
    settings = get_settings()
    token = service.issue_token(session, user, kind="session", ttl=timedelta(seconds=settings.session_max_age_s))
    response.set_cookie(SESSION_COOKIE, token, httponly=True, **_cookie_options())  # type: ignore[arg-type]
    _set_csrf_cookie(response, token)
    return LoginOut(user=UserOut.model_validate(user))


def _cookie_options() -> dict[str, object]:
    settings = get_settings()
    return {"max_age": settings.session_max_age_s, "secure": settings.cookie_secure, "samesite": "lax", "path": "/"}


def _set_csrf_cookie(response: Response, session_token: str) -> None:
    response.set_cookie(CSRF_COOKIE, service.csrf_token(session_token), httponly=False,
                        **_cookie_options())  # type: ignore[arg-type]


def start_session(session: Session, response: Response, user: User, client: str, via: str) -> None:
    """A dashboard session for a user an identity provider or directory vouched for (``via``)."""
    audit.record(session, "auth.login_ok", accounts.actor(user, client), f"user:{user.username}", via=via)
    token = service.issue_token(session, user, kind="session",
                                ttl=timedelta(seconds=get_settings().session_max_age_s))
    response.set_cookie(SESSION_COOKIE, token, httponly=True, **_cookie_options())  # type: ignore[arg-type]
    _set_csrf_cookie(response, token)


@router.post("/auth/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(request: Request, response: Response, session: SessionDep, user: CurrentUser) -> None:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        service.revoke_token(session, token)
    audit.record(session, "auth.logout", accounts.actor(user, client_of(request)), f"user:{user.username}")
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")


@router.get("/auth/me", response_model=UserOut)
def me(request: Request, response: Response, user: CurrentUser) -> UserOut:
    """The signed-in user; a dashboard session also gets its CSRF cookie again (one lost or overwritten, or
    made before tokens were bound to sessions, is replaced by the right one)."""
    token = request.cookies.get(SESSION_COOKIE)
    if token and not request.headers.get("authorization", "").lower().startswith("bearer "):
        _set_csrf_cookie(response, token)
    return UserOut.model_validate(user)


@router.get("/auth/tokens", response_model=list[TokenInfo])
def list_tokens(session: SessionDep, user: CurrentUser, user_id: RowId | None = None) -> list[TokenInfo]:
    """Your API tokens (an admin may name another user); secrets are never shown again."""
    rows = accounts.list_tokens(session, user, user_id if user_id is not None else user.id)
    return [TokenInfo.model_validate(t) for t in rows]


@router.post("/auth/tokens", response_model=TokenOut, status_code=status.HTTP_201_CREATED)
def create_token(body: TokenCreate, request: Request, session: SessionDep, user: CurrentUser) -> TokenOut:
    new = accounts.create_token(session, user, body.name, body.expires_in_days, client_of(request))
    return TokenOut(token=new.token, **TokenInfo.model_validate(new.row).model_dump())


@router.delete("/auth/tokens/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(token_id: RowId, request: Request, session: SessionDep, user: CurrentUser) -> None:
    """Revoke an API token: the next request that presents it is refused."""
    accounts.revoke_token(session, user, token_id, client_of(request))


@router.post("/auth/password", response_model=PasswordChangedOut)
def change_password(body: PasswordChange, request: Request, session: SessionDep,
                    user: CurrentUser) -> PasswordChangedOut:
    """Change your password (the current one is required); your other sessions end, your API tokens and S3 keys
    too when asked. The answer says what was revoked and what keeps working."""
    done = accounts.change_password(session, user, body.current_password, body.new_password,
                                    request.cookies.get(SESSION_COOKIE), client_of(request),
                                    revoke_tokens=body.revoke_tokens, revoke_s3_keys=body.revoke_s3_keys)
    return PasswordChangedOut.model_validate(done, from_attributes=True)


@router.get("/keys", response_model=list[AccessKeyOut])
def list_keys(session: SessionDep, user: CurrentUser, user_id: RowId | None = None) -> list[AccessKeyOut]:
    keys = service.list_access_keys(session, user, user_id if user_id is not None else user.id)
    return [AccessKeyOut.model_validate(k) for k in keys]


@router.post("/keys", response_model=NewAccessKeyOut, status_code=status.HTTP_201_CREATED)
def create_key(request: Request, session: SessionDep, user: CurrentUser,
               body: KeyCreate | None = None) -> NewAccessKeyOut:
    """A new S3 key; with ``expires_in`` a temporary one the gateway refuses (ExpiredToken) after that."""
    ttl = timedelta(seconds=body.expires_in) if body and body.expires_in else None
    new = service.create_access_key(session, user, expires_in=ttl)
    audit.record(session, "auth.key_created", accounts.actor(user, client_of(request)), f"user:{user.username}",
                 access_key_id=new.access_key_id,
                 expires_at=new.created.expires_at.isoformat() if new.created.expires_at else None)
    return _key_out(new)


@router.post("/keys/{access_key_id}/rotate", response_model=NewAccessKeyOut)
def rotate_key(access_key_id: str, request: Request, session: SessionDep, user: CurrentUser) -> NewAccessKeyOut:
    new = service.rotate_access_key(session, user, access_key_id)
    owner = repository.get_user(session, new.created.user_id)
    audit.record(session, "auth.key_rotated", accounts.actor(user, client_of(request)),
                 f"user:{owner.username if owner else ''}", old_access_key_id=access_key_id,
                 access_key_id=new.access_key_id)
    return _key_out(new)


@router.delete("/keys/{access_key_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_key(access_key_id: str, request: Request, session: SessionDep, user: CurrentUser) -> None:
    owner_id = service.delete_access_key(session, user, access_key_id)
    owner = repository.get_user(session, owner_id)
    audit.record(session, "auth.key_deleted", accounts.actor(user, client_of(request)),
                 f"user:{owner.username if owner else ''}", access_key_id=access_key_id)


@router.get("/users", response_model=list[UserOut])
def list_users(session: SessionDep, admin: AdminUser) -> list[UserOut]:
    users = repository.list_users(session)
    last_login = audit.last_logins(session, [u.id for u in users])
    return [UserOut.model_validate(u).model_copy(update={"last_login_at": last_login.get(u.id)}) for u in users]


@router.post("/users", response_model=UserCreatedOut, status_code=status.HTTP_201_CREATED)
def create_user(body: UserCreate, request: Request, session: SessionDep, admin: AdminUser) -> UserCreatedOut:
    user, key = service.create_user(session, body.username, body.password, body.is_admin)
    audit.record(session, "user.created", accounts.actor(admin, client_of(request)), f"user:{user.username}",
                 role=user.role, access_key_id=key.access_key_id)
    return UserCreatedOut(user=UserOut.model_validate(user), access_key=_key_out(key))


@router.patch("/users/{user_id}", response_model=UserOut)
def update_user(user_id: RowId, body: UserUpdate, request: Request, session: SessionDep,
                admin: AdminUser) -> UserOut:
    """Disable or enable a user (at once: sessions end, tokens and S3 keys are refused), or change the role."""
    client = client_of(request)
    user = accounts.get_user(session, user_id)
    if body.role is not None:
        user = accounts.set_role(session, admin, user_id, body.role, client)
    if body.disabled is not None:
        user = accounts.set_disabled(session, admin, user_id, body.disabled, client)
    return UserOut.model_validate(user)


@router.post("/users/{user_id}/password", status_code=status.HTTP_204_NO_CONTENT)
def reset_password(user_id: RowId, body: PasswordReset, request: Request, session: SessionDep,
                   admin: AdminUser) -> None:
    """Set a user's password; all their sessions end (their API tokens and S3 keys keep working)."""
    accounts.reset_password(session, admin, user_id, body.new_password, client_of(request))


@router.delete("/users/{user_id}", status_code=status.HTTP_204_NO_CONTENT, responses={409: {}})
def delete_user(user_id: RowId, request: Request, session: SessionDep, admin: AdminUser) -> None:
    """Delete a user with their keys, tokens, reservations and restores: refused (409) while they own
    buckets or uploads; delete those first or disable the user instead."""
    accounts.delete_user(session, admin, user_id, client_of(request))
