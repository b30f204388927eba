"""Only this module queries auth tables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from tierpilot.auth.models import AccessKey, ApiToken, User


def get_user_by_name(session: Session, username: str) -> User | None:
    return session.scalar(select(User).where(User.username == username))


def get_user_by_external(session: Session, source: str, subject: str) -> User | None:
    return session.scalar(select(User).where(User.external_source == source, User.external_subject == subject))


def web_identity_used(session: Session, token_hash: str) -> bool:
    return session.scalar(select(AccessKey.id).where(AccessKey.web_identity_hash == token_hash)) is not None


def get_user(session: Session, user_id: int) -> User | None:
    return session.get(User, user_id)


def usernames(session: Session, user_ids: Iterable[int]) -> dict[int, str]:
    """User id -> username, of those of the given ids that exist."""
    ids = list(set(user_ids))
    if not ids:
        return {}
    return {k: v for k, v in session.execute(select(User.id, User.username).where(User.id.in_(ids)))}


def list_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.username)))


def get_token(session: Session, token_hash: str) -> ApiToken | None:
    return session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash))


def get_token_by_id(session: Session, token_id: int) -> ApiToken | None:
    return session.get(ApiToken, token_id)


def list_tokens(session: Session, user_id: int, kind: str) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).where(ApiToken.user_id == user_id, ApiToken.kind == kind)
                                .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())))


def count_tokens(session: Session, user_id: int, kind: str) -> int:
    return int(session.scalar(select(func.count()).select_from(ApiToken)
                              .where(ApiToken.user_id == user_id, ApiToken.kind == kind)) or 0)


def touch_token(session: Session, token_id: int, now: datetime, older_than: datetime) -> None:
    """Note a use, unless one was noted since ``older_than`` (concurrent requests write once)."""
    session.execute(update(ApiToken).where(
        ApiToken.id == token_id, or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at < older_than),
    ).values(last_used_at=now))


def delete_tokens(session: Session, user_id: int, kind: str, keep_hash: str | None = None) -> int:
    """Delete a user's tokens of one kind (all sessions on disable, the others on a password change)."""
    q = delete(ApiToken).where(ApiToken.user_id == user_id, ApiToken.kind == kind)
    if keep_hash is not None:
        q = q.where(ApiToken.token_hash != keep_hash)
    return int(getattr(session.execute(q), "rowcount", 0) or 0)


def delete_user(session: Session, user_id: int) -> None:
    """Delete the row; the database cascades to keys, tokens and the other domains' per-user rows."""
    session.execute(delete(User).where(User.id == user_id))


def count_enabled_admins(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(User)
                              .where(User.is_admin.is_(True), User.disabled_at.is_(None))) or 0)


def get_access_key(session: Session, access_key_id: str) -> AccessKey | None:
    return session.scalar(select(AccessKey).where(AccessKey.access_key_id == access_key_id))


def list_access_keys(session: Session, user_id: int) -> list[AccessKey]:
    return list(
        session.scalars(
            select(AccessKey).where(AccessKey.user_id == user_id).order_by(AccessKey.created_at, AccessKey.id)
        )
    )


def delete_access_keys(session: Session, user_id: int) -> int:
    """Delete every S3 key of a user; how many there were."""
    return int(getattr(session.execute(delete(AccessKey).where(AccessKey.user_id == user_id)), "rowcount", 0) or 0)


def count_access_keys(session: Session, user_id: int) -> int:
    return int(session.scalar(select(func.count()).select_from(AccessKey).where(AccessKey.user_id == user_id)) or 0)


# webhook settings (the notifications domain delivers to them) ---------------------------------------


def webhook_url_of(session: Session, user_id: int) -> str | None:
    return session.scalar(select(User.webhook_url).where(User.id == user_id))


def set_webhook_url(session: Session, user_id: int, url: str | None) -> None:
    session.execute(update(User).where(User.id == user_id).values(webhook_url=url))


def webhook_secret_of(session: Session, user_id: int) -> str | None:
    """The user's encrypted signing secret."""
    return session.scalar(select(User.webhook_secret_encrypted).where(User.id == user_id))


def set_webhook_secret(session: Session, user_id: int, secret_encrypted: str) -> None:
    session.execute(update(User).where(User.id == user_id).values(webhook_secret_encrypted=secret_encrypted))


def webhook_urls(session: Session, user_ids: Sequence[int]) -> dict[int, str | None]:
    """Webhook URLs by user id."""
    rows = session.execute(select(User.id, User.webhook_url).where(User.id.in_(list(user_ids))))
    return {user_id: url for user_id, url in rows}


def webhook_secrets(session: Session, user_ids: Sequence[int]) -> dict[int, str | None]:
    """Encrypted signing secrets by user id."""
    rows = session.execute(select(User.id, User.webhook_secret_encrypted).where(User.id.in_(list(user_ids))))
    return {user_id: secret for user_id, secret in rows}
