from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from tierpilot.kit.db import Base, utcnow


class User(Base):
    __tablename__ = "users"
    __table_args__ = (Index("uq_users_external", "external_source", "external_subject", unique=True),)

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    webhook_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    # signs webhook POSTs; encrypted like S3 secrets, since signing needs the secret itself
    webhook_secret_encrypted: Mapped[str | None] = mapped_column(String(512), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # set while an admin has disabled the account: its sessions, tokens and S3 keys are refused
    disabled_at: Mapped[datetime | None] = mapped_column(default=None)
    # who vouches for the account when it is not a local password: "oidc" (subject: the issuer's "sub") or "ldap"
    # (its DN); an external account never signs in with a password here, and a local one is never taken over
    external_source: Mapped[str | None] = mapped_column(String(16), default=None)
    external_subject: Mapped[str | None] = mapped_column(String(512), default=None)

    access_keys: Mapped[list[AccessKey]] = relationship(back_populates="user", lazy="raise")

    @property
    def role(self) -> str:
        return "admin" if self.is_admin else "member"

    @property
    def disabled(self) -> bool:
        return self.disabled_at is not None


class ApiToken(Base):
    """A bearer token for scripts; only its SHA-256 is stored. Also backs dashboard sessions."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(16), default="api")  # api | session
    name: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)


class AccessKey(Base):
    """S3 credentials for the gateway. SigV4 needs the secret itself, so it is stored (encrypted)."""

    __tablename__ = "access_keys"
    # an ID token buys one set of keys
    __table_args__ = (Index("uq_access_keys_web_identity_hash", "web_identity_hash", unique=True),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    access_key_id: Mapped[str] = mapped_column(String(32), unique=True)
    secret_encrypted: Mapped[str] = mapped_column(String(512))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # temporary keys: refused with ExpiredToken after ``expires_at``; those from STS also need their session
    # token (x-amz-security-token, only its SHA-256 kept), and keep the SHA-256 of the ID token that bought
    # them, so the same token cannot buy a second set
    expires_at: Mapped[datetime | None] = mapped_column(default=None, index=True)
    session_token_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    web_identity_hash: Mapped[str | None] = mapped_column(String(64), default=None)

    user: Mapped[User] = relationship(back_populates="access_keys", lazy="raise")
