"""Users, passwords, sessions, API tokens and S3 keys. Services flush; the caller commits."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete
from sqlalchemy.orm import Session

from tierpilot.auth import repository
from tierpilot.auth.models import AccessKey, ApiToken, User
from tierpilot.kit import generations
from tierpilot.kit.crypto import decrypt, encrypt
from tierpilot.kit.db import after_commit, transaction, utcnow
from tierpilot.kit.errors import Conflict, Forbidden, Invalid, NotFound, Unauthorized
from tierpilot.kit.settings import get_settings

log = logging.getLogger("tierpilot.auth")
_hasher = PasswordHasher()
# verifying against a fixed hash when the user is unknown keeps timing the same for both failures
_DUMMY_HASH = _hasher.hash("tierpilot-dummy-password")
USERNAME_CHARS = set(string.ascii_letters + string.digits + "._-")
# bumped after every change that takes an S3 grant away: gateways then drop cached credentials (gateway/auth.py)
CREDENTIALS_GENERATION = "auth:credentials"
# last-used times are kept to the minute: a token used all day costs one write a minute, not one per request
LAST_USED_RESOLUTION = timedelta(minutes=1)
_undecryptable_keys: set[str] = set()  # access keys already logged as encrypted under another secret key
# what an external account holds instead of a password hash: argon2 refuses to verify it, so no password matches
NO_PASSWORD = "!external"
# a password a directory checks (LDAP): the user it vouches for, or None when it is not configured or does not
# know the name. Filled by ``tierpilot.app.wiring``: the directory maps groups to projects, which sit above auth.
PasswordBackend = Callable[[Session, str, str], User | None]
_password_backends: list[PasswordBackend] = []


def install_password_backend(backend: PasswordBackend) -> None:
    """Register a directory that checks passwords of names without a local one (idempotent)."""
    if backend not in _password_backends:
        _password_backends.append(backend)


@dataclass(frozen=True)
class NewAccessKey:
    access_key_id: str
    secret_access_key: str
    created: AccessKey
    session_token: str | None = None


@dataclass(frozen=True)
class Credential:
    """What the gateway needs to check a signature and authorise a caller."""

    user_id: int
    username: str
    is_admin: bool
    secret_access_key: str
    disabled: bool = False
    expires_at: float | None = None  # epoch seconds; temporary keys only
    session_token_hash: str | None = None  # keys from STS: the SHA-256 of the x-amz-security-token they need


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_token(session_token: str) -> str:
    """The dashboard's CSRF token of a session: derived from it, so a cookie another origin of the same host
    plants (cookies ignore ports) matches no session but the one it was made for."""
    key = hashlib.sha256(("tierpilot-csrf:" + get_settings().secret_key).encode()).digest()
    return hmac.new(key, session_token.encode(), hashlib.sha256).hexdigest()


def password_matches(user: User, password: str) -> bool:
    try:
        return _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def set_password(user: User, password: str) -> None:
    user.password_hash = _hasher.hash(password)


def validate_username(username: str) -> None:
    if not (1 <= len(username) <= 64) or not set(username) <= USERNAME_CHARS:
        raise Invalid("username must be 1-64 characters of letters, digits, '.', '_' or '-'")


def validate_password(password: str) -> None:
    if len(password) < 8:
        raise Invalid("password must be at least 8 characters")
    if len(password) > 1024:
        raise Invalid("password must be at most 1024 characters")


def create_user(session: Session, username: str, password: str, is_admin: bool = False) -> tuple[User, NewAccessKey]:
    """Create a user with a first S3 access key (its secret is returned once)."""
    validate_username(username)
    validate_password(password)
    if repository.get_user_by_name(session, username) is not None:
        raise Conflict(f"user {username!r} already exists")
    user = User(username=username, password_hash=_hasher.hash(password), is_admin=is_admin)
    session.add(user)
    session.flush()
    return user, create_access_key(session, user)


def ensure_user(session: Session, username: str, password: str, is_admin: bool) -> User:
    """Create the user when missing (bootstrap admin, demo); leave an existing one untouched."""
    existing = repository.get_user_by_name(session, username)
    if existing is not None:
        return existing
    return create_user(session, username, password, is_admin)[0]


def create_external_user(session: Session, username: str, source: str, subject: str) -> User:
    """An account an identity provider or directory vouches for: no password of its own, no S3 key yet."""
    validate_username(username)
    if repository.get_user_by_name(session, username) is not None:
        raise Conflict(f"the name {username!r} belongs to another account here; ask an administrator")
    user = User(username=username, password_hash=NO_PASSWORD, external_source=source, external_subject=subject)
    session.add(user)
    session.flush()
    return user


def break_glass(user: User) -> bool:
    """Whether the user is an admin whose local password signs in although local passwords are off."""
    names = {n.strip() for n in get_settings().break_glass_admins.split(",") if n.strip()}
    return user.is_admin and user.username in names


def authenticate(session: Session, username: str, password: str) -> User:
    """The user this password belongs to (checked here, or by a directory for names without a local password);
    throttling is the caller's (``auth.throttle``, before the transaction)."""
    user = repository.get_user_by_name(session, username)
    if (user is None or user.external_source == "ldap") and _password_backends:
        for backend in _password_backends:
            found = backend(session, username, password)
            if found is not None:
                return _usable(found)
        raise Unauthorized("invalid username or password")
    try:
        _hasher.verify(user.password_hash if user and user.external_source is None else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        user = None
    if user is None or user.external_source is not None:
        raise Unauthorized("invalid username or password")
    if not get_settings().local_passwords and not break_glass(user):  # said only to whoever knows the password
        raise Forbidden("local passwords are switched off here: sign in through your institution")
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    return _usable(user)


def _usable(user: User) -> User:
    if user.disabled:  # said only to whoever proved who they are
        raise Forbidden("this account is disabled; ask an administrator")
    return user


def issue_token(session: Session, user: User, kind: str = "session", name: str = "",
                ttl: timedelta | None = None) -> str:
    """Create a session or API token; only its hash is stored."""
    token = secrets.token_urlsafe(32)
    expires = utcnow() + ttl if ttl else None
    session.add(ApiToken(user_id=user.id, token_hash=hash_token(token), kind=kind, name=name, expires_at=expires))
    session.flush()
    return token


def user_for_token(session: Session, token: str) -> User:
    """The enabled user behind a live session or API token (read on every request: revocation is immediate)."""
    row = repository.get_token(session, hash_token(token))
    now = utcnow()
    if row is None or (row.expires_at is not None and row.expires_at < now):
        raise Unauthorized("not signed in")
    user = repository.get_user(session, row.user_id)
    if user is None or user.disabled:
        raise Unauthorized("not signed in")
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        # in a transaction of its own after the request's: a read-only request must not turn into a writer
        token_id = row.id
        after_commit(session, lambda: _touch_token(token_id, now))
    return user


def _touch_token(token_id: int, now: datetime) -> None:
    try:
        with transaction(write=True) as session:
            repository.touch_token(session, token_id, now, now - LAST_USED_RESOLUTION)
    except Exception:  # noqa: BLE001  (a missed last-used time must not fail the request that was served)
        log.warning("could not note the last use of token %s", token_id, exc_info=True)


def credentials_changed(session: Session, user_id: int) -> None:
    """Make every gateway forget its cached S3 credentials once the change commits (before the API answers);
    GenerationUnavailable (503) refuses the change when they cannot be told."""
    generations.changing(session, CREDENTIALS_GENERATION)


def revoke_token(session: Session, token: str) -> None:
    session.execute(delete(ApiToken).where(ApiToken.token_hash == hash_token(token)))


def create_access_key(session: Session, user: User, expires_in: timedelta | None = None,
                      web_identity_hash: str | None = None) -> NewAccessKey:
    """A new S3 key (its secret returned once); ``expires_in``: a temporary key. ``web_identity_hash``: the key is
    bought by that ID token through STS and also needs the session token returned with it."""
    # temporary keys start "TS" so that a log or a support request tells them apart at a glance
    key_id = ("TS" if expires_in else "TP") + "".join(
        secrets.choice(string.ascii_uppercase + string.digits) for _ in range(18))
    secret = secrets.token_urlsafe(30)[:40]
    session_token = secrets.token_urlsafe(48) if web_identity_hash else None
    row = AccessKey(user_id=user.id, access_key_id=key_id, secret_encrypted=encrypt(secret),
                    expires_at=utcnow() + expires_in if expires_in else None,
                    session_token_hash=hash_token(session_token) if session_token else None,
                    web_identity_hash=web_identity_hash)
    session.add(row)
    session.flush()
    return NewAccessKey(key_id, secret, row, session_token)


def list_access_keys(session: Session, actor: User, user_id: int) -> list[AccessKey]:
    _require_self_or_admin(actor, user_id)
    return repository.list_access_keys(session, user_id)


def rotate_access_key(session: Session, actor: User, access_key_id: str) -> NewAccessKey:
    """Replace a key by a new one; the old one stops working at once."""
    old = repository.get_access_key(session, access_key_id)
    if old is None or (old.user_id != actor.id and not actor.is_admin):
        raise NotFound("no such access key")
    if old.expires_at is not None:  # a rotation would outlive the grant that made it temporary
        raise Invalid("temporary keys are not rotated: create a new one")
    owner = repository.get_user(session, old.user_id)
    assert owner is not None
    session.delete(old)
    session.flush()
    credentials_changed(session, owner.id)
    return create_access_key(session, owner)


def delete_access_key(session: Session, actor: User, access_key_id: str) -> int:
    """Delete a key (the owner's or, for an admin, anyone's); returns its owner's id."""
    key = repository.get_access_key(session, access_key_id)
    if key is None or (key.user_id != actor.id and not actor.is_admin):
        raise NotFound("no such access key")
    session.delete(key)
    session.flush()
    credentials_changed(session, key.user_id)
    return key.user_id


def credential_for(session: Session, access_key_id: str) -> Credential | None:
    """Gateway lookup: the caller behind an S3 access key id, or None when unknown or inactive."""
    key = repository.get_access_key(session, access_key_id)
    if key is None or not key.active:
        return None
    user = repository.get_user(session, key.user_id)
    if user is None:
        return None
    try:
        secret = decrypt(key.secret_encrypted)
    except ValueError:
        # encrypted under another TIERPILOT_SECRET_KEY (a database moved between installations): no request can
        # prove it holds the secret, so the key is as good as unknown; said once per process, not per request
        if access_key_id not in _undecryptable_keys:
            _undecryptable_keys.add(access_key_id)
            log.error("access key %s of user %s cannot be decrypted with this TIERPILOT_SECRET_KEY: its requests "
                      "are refused; rotate the key", access_key_id, user.username)
        return None
    return Credential(user.id, user.username, user.is_admin, secret, user.disabled,
                      key.expires_at.timestamp() if key.expires_at else None, key.session_token_hash)


def _require_self_or_admin(actor: User, user_id: int) -> None:
    if actor.id != user_id and not actor.is_admin:
        raise Forbidden("you may only see your own keys")
