"""Only this module queries auth tables."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from tierpilot.auth.models import AccessKey, ApiToken, User


def get_user_by_name(session: Session, username: str) -> User | None:
    return session.scalar(select(User).where(User.username == username))


def get_user(session: Session, user_id: int) -> User | None:
    return session.get(User, user_id)


def list_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.username)))


def count_users(session: Session) -> int:
    return len(list(session.scalars(select(User.id))))


def get_token(session: Session, token_hash: str) -> ApiToken | None:
    return session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash))


def get_access_key(session: Session, access_key_id: str) -> AccessKey | None:
    return session.scalar(select(AccessKey).where(AccessKey.access_key_id == access_key_id))


def list_access_keys(session: Session, user_id: int) -> list[AccessKey]:
    return list(
        session.scalars(
            select(AccessKey).where(AccessKey.user_id == user_id).order_by(AccessKey.created_at, AccessKey.id)
        )
    )
