"""Sign-in through the institution's OpenID Connect provider, what the login page offers, and (admins) the
identity settings' status with a dry run of the group mapping."""

from __future__ import annotations

import logging
import secrets
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse
from itsdangerous import BadSignature, URLSafeTimedSerializer
from pydantic import BaseModel, Field

from tierpilot.audit import service as audit
from tierpilot.auth.deps import AdminUser, SessionDep, client_of
from tierpilot.auth.router import start_session
from tierpilot.identity import ldap, oidc, service
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import DomainError
from tierpilot.kit.groups import parse_group_mapping
from tierpilot.kit.settings import get_settings

log = logging.getLogger("tierpilot.identity")
router = APIRouter(tags=["identity"])
ATTEMPT_COOKIE = "tierpilot_oidc"
ATTEMPT_PATH = "/api/auth/oidc"
ATTEMPT_MAX_AGE_S = 600  # a sign-in at the provider that takes longer starts again


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(get_settings().secret_key, salt="tierpilot.oidc-attempt")


def _redirect_uri(request: Request) -> str:
    configured = get_settings().oidc_redirect_url
    return configured or str(request.url_for("oidc_callback"))


def _safe_next(value: str | None) -> str:
    # only a path of this site: "//host" or a scheme would make the sign-in an open redirect
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


def _failed(message: str) -> RedirectResponse:
    response = RedirectResponse(f"/login?sso_error={quote(message[:300])}", status_code=303)
    response.delete_cookie(ATTEMPT_COOKIE, path=ATTEMPT_PATH)
    return response


class ProvidersOut(BaseModel):
    oidc: bool = Field(description="a 'Sign in with …' button leads to /api/auth/oidc/login")
    oidc_name: str
    ldap: bool = Field(description="the password form also takes the directory's accounts")
    local_passwords: bool = Field(description="off: only break-glass admins sign in with a local password")


@router.get("/auth/providers", response_model=ProvidersOut)
def providers() -> ProvidersOut:
    """What the login page offers (no secrets: anyone may ask)."""
    s = get_settings()
    return ProvidersOut(oidc=oidc.configured(s), oidc_name=s.oidc_provider_name, ldap=ldap.configured(s),
                        local_passwords=s.local_passwords)


@router.get("/auth/oidc/login", status_code=303, responses={303: {"description": "to the identity provider"}})
def oidc_login(request: Request, next: Annotated[str | None, Query(max_length=2048)] = None) -> RedirectResponse:
    """Start a sign-in at the identity provider (authorization code with PKCE)."""
    if not oidc.configured():
        return _failed("no identity provider is configured here")
    attempt = oidc.new_attempt()
    try:
        url = oidc.authorization_url(attempt, _redirect_uri(request))
    except DomainError as exc:
        log.warning("OpenID Connect sign-in could not start: %s", exc.message)
        return _failed(exc.message)
    response = RedirectResponse(url, status_code=303)
    value = _serializer().dumps([attempt.state, attempt.nonce, attempt.verifier, _safe_next(next)])
    response.set_cookie(ATTEMPT_COOKIE, value, max_age=ATTEMPT_MAX_AGE_S, httponly=True, samesite="lax",
                        secure=get_settings().cookie_secure, path=ATTEMPT_PATH)
    return response


@router.get("/auth/oidc/callback", name="oidc_callback", status_code=303)
def oidc_callback(request: Request, code: Annotated[str | None, Query(max_length=4096)] = None,
                  state: Annotated[str | None, Query(max_length=512)] = None,
                  error: Annotated[str | None, Query(max_length=256)] = None,
                  error_description: Annotated[str | None, Query(max_length=1024)] = None) -> RedirectResponse:
    """Where the provider sends the browser back: state, PKCE and nonce checked, the ID token validated, the user
    made or found, their projects synced from their groups and a dashboard session started."""
    if error:
        return _failed(f"the identity provider refused the sign-in: {error_description or error}")
    try:
        saved_state, nonce, verifier, next_path = _serializer().loads(
            request.cookies.get(ATTEMPT_COOKIE, ""), max_age=ATTEMPT_MAX_AGE_S)
    except (BadSignature, ValueError, TypeError):
        return _failed("this sign-in expired or was not started here: sign in again")
    if not code or not state or not secrets.compare_digest(state, saved_state):
        return _failed("this sign-in does not match the one started here (state): sign in again")
    client = client_of(request)
    try:
        # the provider is asked with no transaction open: a slow provider holds no database lock
        claims = oidc.exchange(code, oidc.Attempt(saved_state, nonce, verifier), _redirect_uri(request))
    except DomainError as exc:
        log.warning("OpenID Connect sign-in failed: %s", exc.message)
        return _failed(exc.message)
    response = RedirectResponse(_safe_next(next_path), status_code=303)
    response.delete_cookie(ATTEMPT_COOKIE, path=ATTEMPT_PATH)
    try:
        with transaction(write=True) as session:
            user = service.oidc_sign_in(session, claims, client)
            start_session(session, response, user, client, via="oidc")
    except DomainError as exc:
        with transaction(write=True) as session:
            audit.record(session, "auth.login_failed", audit.Actor(None, oidc.username_of(claims)[:64], client),
                         f"user:{oidc.username_of(claims)[:64]}", reason="oidc", message=exc.message)
        return _failed(exc.message)
    return response


# admins: Settings › Identity ----------------------------------------------------------------------------------


class MappingRow(BaseModel):
    group: str
    project: str | None
    role: str | None
    status: str = Field(description="mapped | unmapped (no entry for the group) | no-project (the entry names a "
                        "project that does not exist: ignored)")


class SignIn(BaseModel):
    at: str
    username: str
    via: str


class IdentityStatus(BaseModel):
    oidc_configured: bool
    oidc_issuer: str | None = None
    oidc_error: str | None = Field(None, description="why the provider's discovery document could not be read")
    ldap_configured: bool
    ldap_url: str
    local_passwords: bool
    break_glass_admins: list[str]
    mapping: list[MappingRow]
    last_sign_ins: list[SignIn]


@router.get("/identity", response_model=IdentityStatus)
def identity_status(session: SessionDep, admin: AdminUser) -> IdentityStatus:
    """The identity provider's state (asked now), the directory, the mapping and the latest sign-ins."""
    s = get_settings()
    issuer = error = None
    if oidc.configured(s):
        try:
            issuer = oidc.provider(s).issuer
        except DomainError as exc:
            error = exc.message
    mapping = parse_group_mapping(s.group_mapping)
    rows = service.map_groups(session, list(mapping))
    events, _ = audit.page(session, event="auth.login_ok", limit=20)
    return IdentityStatus(
        oidc_configured=oidc.configured(s), oidc_issuer=issuer, oidc_error=error, ldap_configured=ldap.configured(s),
        ldap_url=s.ldap_url, local_passwords=s.local_passwords,
        break_glass_admins=[n.strip() for n in s.break_glass_admins.split(",") if n.strip()],
        mapping=[MappingRow(**r.__dict__) for r in rows],
        last_sign_ins=[SignIn(at=e.at.isoformat(), username=e.actor, via=str((e.detail or {}).get("via", "password")))
                       for e in events])


class DryRunIn(BaseModel):
    groups: list[Annotated[str, Field(max_length=256)]] = Field(max_length=1000)


@router.post("/identity/dry-run", response_model=list[MappingRow])
def dry_run(body: DryRunIn, session: SessionDep, admin: AdminUser) -> list[MappingRow]:
    """What a sign-in with these groups would give, changing nothing."""
    return [MappingRow(**r.__dict__) for r in service.map_groups(session, body.groups)]
