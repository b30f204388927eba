"""Login, logout, the signed-in user, S3 keys and (admin) users."""

from __future__ import annotations

import secrets
from datetime import timedelta

from fastapi import APIRouter, Request, Response, status

from tierpilot.auth import repository, service
from tierpilot.auth.deps import CSRF_COOKIE, SESSION_COOKIE, AdminUser, CurrentUser, SessionDep
from tierpilot.auth.schemas import (
    AccessKeyOut,
    LoginIn,
    LoginOut,
    NewAccessKeyOut,
    TokenCreate,
    TokenOut,
    UserCreate,
    UserCreatedOut,
    UserOut,
)
from tierpilot.kit.inputs import RowId
from tierpilot.kit.settings import get_settings

router = APIRouter(tags=["auth"])


def _key_out(new: service.NewAccessKey) -> NewAccessKeyOut:
    return NewAccessKeyOut(access_key_id=new.access_key_id, secret_access_key=new.secret_access_key,
                           gateway_url=get_settings().gateway_url)


@router.post("/auth/login", response_model=LoginOut)
def login(body: LoginIn, request: Request, response: Response, session: SessionDep) -> LoginOut:
    client = request.client.host if request.client else ""
    user = service.authenticate(session, body.username, body.password, client)
    settings = get_settings()
    token = service.issue_token(session, user, kind="session", ttl=timedelta(seconds=settings.session_max_age_s))
    common = {"max_age": settings.session_max_age_s, "secure": settings.cookie_secure, "samesite": "lax",
              "path": "/"}
    response.set_cookie(SESSION_COOKIE, token, httponly=True, **common)  # type: ignore[arg-type]
    response.set_cookie(CSRF_COOKIE, secrets.token_urlsafe(24), httponly=False, **common)  # type: ignore[arg-type]
    return LoginOut(user=UserOut.model_validate(user))


@router.post("/auth/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(request: Request, response: Response, session: SessionDep, user: CurrentUser) -> None:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        service.revoke_token(session, token)
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")


@router.get("/auth/me", response_model=UserOut)
def me(user: CurrentUser) -> UserOut:
    return UserOut.model_validate(user)


@router.post("/auth/tokens", response_model=TokenOut, status_code=status.HTTP_201_CREATED)
def create_token(body: TokenCreate, session: SessionDep, user: CurrentUser) -> TokenOut:
    return TokenOut(token=service.issue_token(session, user, kind="api", name=body.name))


@router.get("/keys", response_model=list[AccessKeyOut])
def list_keys(session: SessionDep, user: CurrentUser, user_id: RowId | None = None) -> list[AccessKeyOut]:
    keys = service.list_access_keys(session, user, user_id if user_id is not None else user.id)
    return [AccessKeyOut.model_validate(k) for k in keys]


@router.post("/keys", response_model=NewAccessKeyOut, status_code=status.HTTP_201_CREATED)
def create_key(session: SessionDep, user: CurrentUser) -> NewAccessKeyOut:
    return _key_out(service.create_access_key(session, user))


@router.post("/keys/{access_key_id}/rotate", response_model=NewAccessKeyOut)
def rotate_key(access_key_id: str, session: SessionDep, user: CurrentUser) -> NewAccessKeyOut:
    return _key_out(service.rotate_access_key(session, user, access_key_id))


@router.delete("/keys/{access_key_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_key(access_key_id: str, session: SessionDep, user: CurrentUser) -> None:
    service.delete_access_key(session, user, access_key_id)


@router.get("/users", response_model=list[UserOut])
def list_users(session: SessionDep, admin: AdminUser) -> list[UserOut]:
    return [UserOut.model_validate(u) for u in repository.list_users(session)]


@router.post("/users", response_model=UserCreatedOut, status_code=status.HTTP_201_CREATED)
def create_user(body: UserCreate, session: SessionDep, admin: AdminUser) -> UserCreatedOut:
    user, key = service.create_user(session, body.username, body.password, body.is_admin)
    return UserCreatedOut(user=UserOut.model_validate(user), access_key=_key_out(key))
