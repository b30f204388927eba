"""Running accounts: API tokens, passwords, disabling, roles and deletion. Every change is audited.

What takes effect at once, and how: the API reads a caller's token and user row on every request, so a
revoked token, a disabled user or a changed role is refused or re-judged on the next request; gateways
cache S3 credentials only while they hear ``service.credentials_changed`` (see ``gateway/auth.py``).
Services flush; the caller commits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.orm import Session

from tierpilot.audit import service as audit
from tierpilot.auth import repository, service
from tierpilot.auth.models import ApiToken, User
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import Conflict, Forbidden, Invalid, NotFound

MAX_TOKENS_PER_USER = 100
MAX_TOKEN_DAYS = 366

# what a user still owns elsewhere (buckets and uploads in the catalog): names that block deleting them.
# Filled by ``tierpilot.app.wiring``: auth sits below the catalog and cannot ask it directly.
OwnedElsewhere = Callable[[Session, int], list[str]]
_owned_elsewhere: list[OwnedElsewhere] = []


def install_ownership_check(check: OwnedElsewhere) -> None:
    """Register what blocks deleting a user (idempotent)."""
    if check not in _owned_elsewhere:
        _owned_elsewhere.append(check)


@dataclass(frozen=True)
class NewToken:
    token: str
    row: ApiToken


def actor(user: User, client: str = "") -> audit.Actor:
    return audit.Actor(user.id, user.username, client)


def _target(user: User) -> str:
    return f"user:{user.username}"


# API tokens -----------------------------------------------------------------------------------------


def create_token(session: Session, user: User, name: str, expires_in_days: int, client: str = "") -> NewToken:
    """A named API token for scripts that expires after ``expires_in_days``; shown once."""
    if not name.strip():
        raise Invalid("name must not be blank", field="name")
    if not 1 <= expires_in_days <= MAX_TOKEN_DAYS:
        raise Invalid(f"expires_in_days must be 1-{MAX_TOKEN_DAYS}", field="expires_in_days")
    if repository.count_tokens(session, user.id, "api") >= MAX_TOKENS_PER_USER:
        raise Conflict(f"at most {MAX_TOKENS_PER_USER} API tokens per user: revoke one first")
    token = service.issue_token(session, user, kind="api", name=name.strip(), ttl=timedelta(days=expires_in_days))
    row = repository.get_token(session, service.hash_token(token))
    assert row is not None
    audit.record(session, "auth.token_created", actor(user, client), _target(user), token_id=row.id,
                 name=row.name, expires_at=row.expires_at.isoformat() if row.expires_at else None)
    return NewToken(token, row)


def list_tokens(session: Session, acting: User, user_id: int) -> list[ApiToken]:
    """A user's API tokens, newest first (the user's own, or any user's for an admin)."""
    if acting.id != user_id and not acting.is_admin:
        raise Forbidden("you may only see your own tokens")
    return repository.list_tokens(session, user_id, "api")


def revoke_token(session: Session, acting: User, token_id: int, client: str = "") -> None:
    """Delete an API token: the next request that presents it is refused."""
    row = repository.get_token_by_id(session, token_id)
    if row is None or row.kind != "api" or (row.user_id != acting.id and not acting.is_admin):
        raise NotFound("no such token", field="token_id")
    owner = repository.get_user(session, row.user_id)
    audit.record(session, "auth.token_revoked", actor(acting, client), _target(owner) if owner else "",
                 token_id=row.id, name=row.name)
    session.delete(row)
    session.flush()


# passwords ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PasswordChanged:
    """What a password change ended and what keeps working."""

    sessions_ended: int
    tokens_revoked: int
    s3_keys_revoked: int
    tokens_kept: int
    s3_keys_kept: int


def change_password(session: Session, user: User, current: str, new: str, keep_session: str | None,
                    client: str = "", revoke_tokens: bool = False, revoke_s3_keys: bool = False) -> PasswordChanged:
    """The user's own change: the current password proves it is them; their other sessions end, and their API
    tokens and S3 keys too when asked (a password that leaked may have been used to make some)."""
    if not service.password_matches(user, current):
        # 403, not 401: the session is fine, and the dashboard treats any 401 as "signed out"
        raise Forbidden("current password is wrong", field="current_password")
    service.validate_password(new)
    if current == new:
        raise Invalid("the new password must differ from the current one", field="new_password")
    service.set_password(user, new)
    ended = repository.delete_tokens(session, user.id, "session",
                                     keep_hash=service.hash_token(keep_session) if keep_session else None)
    tokens = repository.delete_tokens(session, user.id, "api") if revoke_tokens else 0
    keys = repository.delete_access_keys(session, user.id) if revoke_s3_keys else 0
    if keys:
        service.credentials_changed(session, user.id)
    audit.record(session, "auth.password_changed", actor(user, client), _target(user), sessions_ended=ended,
                 tokens_revoked=tokens, s3_keys_revoked=keys)
    return PasswordChanged(ended, tokens, keys, repository.count_tokens(session, user.id, "api"),
                           repository.count_access_keys(session, user.id))


def reset_password(session: Session, admin: User, user_id: int, new: str, client: str = "") -> User:
    """An admin sets a user's password; every session of that user ends (tokens and S3 keys stay)."""
    user = get_user(session, user_id)
    service.validate_password(new)
    service.set_password(user, new)
    ended = repository.delete_tokens(session, user.id, "session")
    audit.record(session, "auth.password_reset", actor(admin, client), _target(user), sessions_ended=ended)
    return user


# user administration --------------------------------------------------------------------------------


def get_user(session: Session, user_id: int) -> User:
    user = repository.get_user(session, user_id)
    if user is None:
        raise NotFound("no such user", field="user_id")
    return user


def _not_yourself(admin: User, user: User, what: str) -> None:
    # an admin who cannot act on themselves can never remove the last enabled admin
    if admin.id == user.id:
        raise Conflict(f"you cannot {what} your own account; ask another admin")


def set_disabled(session: Session, admin: User, user_id: int, disabled: bool, client: str = "") -> User:
    """Disable (sessions end; tokens and S3 keys are refused while disabled) or enable a user."""
    user = get_user(session, user_id)
    if disabled == user.disabled:
        return user
    if disabled:
        _not_yourself(admin, user, "disable")
        user.disabled_at = utcnow()
        ended = repository.delete_tokens(session, user.id, "session")
        audit.record(session, "user.disabled", actor(admin, client), _target(user), sessions_ended=ended)
    else:
        user.disabled_at = None
        audit.record(session, "user.enabled", actor(admin, client), _target(user))
    session.flush()
    service.credentials_changed(session, user.id)
    return user


def set_role(session: Session, admin: User, user_id: int, role: str, client: str = "") -> User:
    if role not in ("admin", "member"):
        raise Invalid("role must be admin or member", field="role")
    user = get_user(session, user_id)
    if user.role == role:
        return user
    _not_yourself(admin, user, "change the role of")
    before = user.role
    user.is_admin = role == "admin"
    session.flush()
    audit.record(session, "user.role_changed", actor(admin, client), _target(user), before=before, after=role)
    service.credentials_changed(session, user.id)
    return user


def delete_user(session: Session, admin: User, user_id: int, client: str = "") -> None:
    """Delete a user with their keys, tokens, sessions, reservations, restores, scenarios and notifications.

    Refused while they own buckets (or uploads in progress): their data is never deleted or handed to
    someone else implicitly; delete or empty those first, or disable the user instead.
    """
    user = get_user(session, user_id)
    _not_yourself(admin, user, "delete")
    owned = [name for check in _owned_elsewhere for name in check(session, user.id)]
    if owned:
        shown = ", ".join(owned[:5]) + (f" and {len(owned) - 5} more" if len(owned) > 5 else "")
        raise Conflict(f"{user.username} still owns {shown}: delete those first, or disable the user instead",
                       owned=owned[:100])
    audit.record(session, "user.deleted", actor(admin, client), _target(user), user_id=user.id,
                 role=user.role)
    session.expunge(user)
    repository.delete_user(session, user.id)
    service.credentials_changed(session, user_id)
