from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class LoginIn(BaseModel):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=1024)


class UserOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    is_admin: bool
    role: str
    created_at: datetime
    disabled: bool = False
    disabled_at: datetime | None = None
    last_login_at: datetime | None = Field(None, description="latest sign-in still in the audit log; in the admin "
                                           "list of users only")


class LoginOut(BaseModel):
    user: UserOut


class UserCreate(BaseModel):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=8, max_length=1024)
    is_admin: bool = False


class AccessKeyOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    access_key_id: str
    active: bool
    created_at: datetime
    expires_at: datetime | None = Field(None, description="temporary keys: refused (ExpiredToken) after this")


MAX_KEY_SECONDS = 366 * 86400


class KeyCreate(BaseModel):
    expires_in: int | None = Field(None, ge=60, le=MAX_KEY_SECONDS,
                                   description="seconds the key works (a temporary key); absent: until deleted")


class NewAccessKeyOut(BaseModel):
    access_key_id: str
    secret_access_key: str = Field(description="shown once; store it now")
    gateway_url: str
    expires_at: datetime | None = None


class UserCreatedOut(BaseModel):
    user: UserOut
    access_key: NewAccessKeyOut


class TokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=128)
    expires_in_days: int = Field(90, ge=1, le=366, description="the token stops working after this many days")


class TokenInfo(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None = Field(description="to the minute")


class TokenOut(TokenInfo):
    token: str = Field(description="bearer token for scripts; shown once")


class PasswordChange(BaseModel):
    current_password: str = Field(min_length=1, max_length=1024)
    new_password: str = Field(min_length=8, max_length=1024)
    revoke_tokens: bool = Field(False, description="also revoke every API token of yours")
    revoke_s3_keys: bool = Field(False, description="also delete every S3 access key of yours")


class PasswordChangedOut(BaseModel):
    """What the change ended, and what keeps working (``*_kept``)."""

    sessions_ended: int = Field(description="your other dashboard sessions, signed out")
    tokens_revoked: int
    s3_keys_revoked: int
    tokens_kept: int
    s3_keys_kept: int


class PasswordReset(BaseModel):
    new_password: str = Field(min_length=8, max_length=1024)


class UserUpdate(BaseModel):
    """What an admin changes about a user; absent fields stay as they are."""

    disabled: bool | None = Field(None, description="a disabled user's sessions end; tokens and S3 keys are refused")
    role: Literal["admin", "member"] | None = None
