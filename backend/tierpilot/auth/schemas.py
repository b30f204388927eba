from __future__ import annotations

from datetime import datetime

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


class NewAccessKeyOut(BaseModel):
    access_key_id: str
    secret_access_key: str = Field(description="shown once; store it now")
    gateway_url: str


class UserCreatedOut(BaseModel):
    user: UserOut
    access_key: NewAccessKeyOut


class TokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=128)


class TokenOut(BaseModel):
    token: str = Field(description="bearer token for scripts; shown once")
