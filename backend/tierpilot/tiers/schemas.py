"""API shapes of tiers. Secrets go in, never out."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tierpilot.pricing.schemas import DESTINATIONS

STORAGE_CLASS_PATTERN = r"^[A-Z][A-Z0-9_]{0,31}$"
S3_ARCHIVE_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
MIN_PART_SIZE = 8 << 20
MAX_PART_SIZE = 64 << 20


class RestoreDelays(BaseModel):
    """Seconds from a restore request until the restored copy is readable, per speed."""

    model_config = ConfigDict(extra="forbid")

    expedited: float = Field(5, ge=0, le=30 * 86400)
    standard: float = Field(30, ge=0, le=30 * 86400)
    bulk: float = Field(60, ge=0, le=30 * 86400)


class PosixConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=1024,
                      description="absolute directory, or relative to the data dir's tiers/ directory")


class S3Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    endpoint_url: str = Field(min_length=1, max_length=512, pattern=r"^https?://[^\s/]+(/[^\s]*)?$",
                              description="e.g. https://s3.eu-central-1.amazonaws.com or http://127.0.0.1:9000")
    region: str = Field("us-east-1", min_length=1, max_length=64)
    bucket: str = Field(min_length=3, max_length=63, pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    prefix: str = Field("", max_length=256, description="key prefix of every blob in the bucket")
    access_key_id: str | None = Field(None, max_length=128)
    secret_access_key: str | None = Field(None, max_length=256, description="write-only; stored encrypted")
    storage_class: str = Field("STANDARD", pattern=STORAGE_CLASS_PATTERN,
                               description="class of new objects unless a PUT asks for another")
    addressing_style: Literal["path", "virtual", "auto"] = "path"
    max_pool_connections: int = Field(32, ge=1, le=1024)
    part_size: int = Field(16 << 20, ge=MIN_PART_SIZE, le=MAX_PART_SIZE, description="multipart part size, bytes")
    max_concurrency: int = Field(4, ge=1, le=32, description="parts in flight per upload")

    @field_validator("prefix")
    @classmethod
    def _prefix_is_a_folder(cls, value: str) -> str:
        return folder_prefix(value)


def folder_prefix(value: str) -> str:
    """A name prefix as a folder: ends with '/', never starts with '/' or holds '//'."""
    if value and not value.endswith("/"):
        value += "/"
    if value.startswith("/") or "//" in value:
        raise ValueError("prefix must not start with '/' or contain '//'")
    return value


AZURE_SECRETS = ("account_key", "sas_token", "connection_string")
AZURE_ARCHIVE_TIERS = frozenset({"ARCHIVE"})
GCS_SECRETS = ("service_account_key",)


class AzureConfig(BaseModel):
    """An Azure Blob container: the account by URL with a shared key or SAS, or by connection string."""

    model_config = ConfigDict(extra="forbid")

    account_url: str | None = Field(None, max_length=512, pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$",
                                    description="e.g. https://myaccount.blob.core.windows.net; "
                                                "taken from the connection string when omitted")
    container: str = Field(min_length=3, max_length=63, pattern=r"^[a-z0-9]([a-z0-9]|-[a-z0-9]){1,62}$")
    prefix: str = Field("", max_length=256, description="name prefix of every blob in the container")
    account_name: str | None = Field(None, min_length=3, max_length=64, pattern=r"^[a-z0-9]+$",
                                     description="with account_key when the URL does not name the account")
    account_key: str | None = Field(None, max_length=256, pattern=r"^[A-Za-z0-9+/=]+$",
                                    description="shared key; write-only, stored encrypted")
    sas_token: str | None = Field(None, max_length=2048, pattern=r"^\??[A-Za-z0-9%&=:._+/-]+$",
                                  description="SAS token; write-only, stored encrypted")
    connection_string: str | None = Field(None, max_length=2048, description="write-only, stored encrypted")
    access_tier: Literal["HOT", "COOL", "COLD", "ARCHIVE"] = Field(
        "HOT", description="access tier of new blobs unless a PUT asks for another; ARCHIVE makes the tier offline")
    rehydrate: Literal["copy", "in_place"] = Field(
        "copy", description="restores rehydrate into a copy that expires, or change the blob's tier for good")
    rehydrate_tier: Literal["HOT", "COOL", "COLD"] = Field("HOT", description="access tier a rehydration reaches")
    block_size: int = Field(8 << 20, ge=1 << 20, le=256 << 20, description="block size of large uploads, bytes")
    max_concurrency: int = Field(4, ge=1, le=32, description="blocks in flight per upload")
    max_pool_connections: int = Field(32, ge=1, le=1024)

    @field_validator("prefix")
    @classmethod
    def _prefix_is_a_folder(cls, value: str) -> str:
        return folder_prefix(value)

    @field_validator("connection_string")
    @classmethod
    def _connection_string(cls, value: str | None) -> str | None:
        if value is None:
            return None
        fields = dict(part.split("=", 1) for part in value.strip(";").split(";") if "=" in part)
        if not fields.get("AccountName") and not fields.get("BlobEndpoint"):
            raise ValueError("connection string needs AccountName or BlobEndpoint")
        return value


def azure_account_url(connection_string: str) -> str:
    """The blob endpoint a connection string names."""
    fields = dict(part.split("=", 1) for part in connection_string.strip(";").split(";") if "=" in part)
    if fields.get("BlobEndpoint"):
        return fields["BlobEndpoint"].rstrip("/")
    protocol = fields.get("DefaultEndpointsProtocol", "https")
    return f"{protocol}://{fields['AccountName']}.blob.{fields.get('EndpointSuffix', 'core.windows.net')}"


class GCSConfig(BaseModel):
    """A Google Cloud Storage bucket, reached with a service-account key (or anonymously on an emulator)."""

    model_config = ConfigDict(extra="forbid")

    bucket: str = Field(min_length=3, max_length=63, pattern=r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")
    prefix: str = Field("", max_length=256, description="name prefix of every object in the bucket")
    project: str | None = Field(None, max_length=64, pattern=r"^[a-z][a-z0-9-]{4,62}[a-z0-9]$")
    endpoint_url: str | None = Field(None, max_length=512, pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$",
                                     description="only for emulators or private endpoints; "
                                                 "default https://storage.googleapis.com")
    service_account_key: str | None = Field(None, max_length=16384,
                                            description="service-account key JSON; write-only, stored encrypted")
    storage_class: Literal["STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE"] = Field(
        "STANDARD", description="class of new objects unless a PUT asks for another (all online)")
    chunk_size: int = Field(16 << 20, ge=256 << 10, le=256 << 20, multiple_of=256 << 10,
                            description="resumable upload chunk, a multiple of 256 KiB")
    max_pool_connections: int = Field(32, ge=1, le=1024)

    @field_validator("prefix")
    @classmethod
    def _prefix_is_a_folder(cls, value: str) -> str:
        return folder_prefix(value)

    @field_validator("service_account_key")
    @classmethod
    def _key_is_a_service_account(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            info = json.loads(value)
        except ValueError:
            raise ValueError("service_account_key is not JSON") from None
        if not isinstance(info, dict) or info.get("type") != "service_account" or not all(
                isinstance(info.get(k), str) and info.get(k) for k in ("client_email", "private_key")):
            raise ValueError("service_account_key must be a service-account key (type, client_email, private_key)")
        return value


class TierCheck(BaseModel):
    """Driver settings to try before saving; ``tier_id`` fills in the secrets the form leaves out."""

    model_config = ConfigDict(extra="forbid")

    driver: Literal["posix", "s3", "azure", "gcs"]
    config: dict[str, Any]
    tier_id: int | None = Field(None, ge=1, le=2**31 - 1)


class TierCheckOut(BaseModel):
    ok: bool
    message: str


# the driver, or "offline" for an offline posix tier (a driver of its own)
TierKind = Literal["posix", "offline", "s3", "azure", "gcs"]


class TierHealthOut(BaseModel):
    """Whether a tier's location answers with its stored settings, as last probed (at most a few seconds ago)."""

    tier_id: int
    name: str
    kind: TierKind
    ok: bool
    detail: str = Field(description="the location that answered, or why the probe failed")
    latency_ms: float = Field(description="how long the probe took (the deadline when it got no answer)")
    checked_at: datetime


EGRESS_KEY = "egress"
PRICE_REF_HELP = ("{catalog, storage_class} the tier is priced at, and optionally egress: where its reads leave "
                  f"the provider ({' | '.join(DESTINATIONS)}; default internet)")


class TierCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    driver: Literal["posix", "s3", "azure", "gcs"]
    config: dict[str, Any]
    storage_classes: list[str] = Field(default_factory=lambda: ["STANDARD"], min_length=1, max_length=16)
    offline: bool = Field(False, description="archive semantics: reads need a restore first")
    restore_delays: RestoreDelays | None = None
    price_ref: dict[str, str] = Field(default_factory=dict, description=PRICE_REF_HELP)
    capacity_bytes: int | None = Field(None, ge=0)
    min_storage_days: int = Field(0, ge=0, le=3650)

    @field_validator("storage_classes")
    @classmethod
    def _classes(cls, value: list[str]) -> list[str]:
        return _check_classes(value)

    @field_validator("price_ref")
    @classmethod
    def _price_ref(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_egress(value)


class TierUpdate(BaseModel):
    """Fields to change; ``config`` keys are merged (an omitted secret keeps the stored one)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    config: dict[str, Any] | None = None
    storage_classes: list[str] | None = Field(None, min_length=1, max_length=16)
    offline: bool | None = None
    restore_delays: RestoreDelays | None = None
    price_ref: dict[str, str] | None = Field(None, description=PRICE_REF_HELP)
    capacity_bytes: int | None = Field(None, ge=0)
    min_storage_days: int | None = Field(None, ge=0, le=3650)

    @field_validator("storage_classes")
    @classmethod
    def _classes(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _check_classes(value)

    @field_validator("price_ref")
    @classmethod
    def _price_ref(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return None if value is None else _check_egress(value)


def _check_egress(ref: dict[str, str]) -> dict[str, str]:
    # egress is billed where bytes leave the tier's provider, so the destination is the tier's, not the client's
    dest = ref.get(EGRESS_KEY)
    if dest is not None and dest not in DESTINATIONS:
        raise ValueError(f"price_ref.egress must be one of {', '.join(DESTINATIONS)}, not {dest!r}")
    return ref


def _check_classes(value: list[str]) -> list[str]:
    for name in value:
        if not re.match(STORAGE_CLASS_PATTERN, name):
            raise ValueError(f"storage class {name!r} must be upper-case letters, digits or '_'")
    if len(set(value)) != len(value):
        raise ValueError("storage classes must be distinct")
    return value


class TierOut(BaseModel):
    id: int
    name: str
    driver: str
    location: str | None = Field(description="directory, or s3 endpoint/bucket/prefix; admins only")
    config: dict[str, Any] | None = Field(description="driver settings without secrets; admins only")
    has_secret: bool
    storage_classes: list[str]
    offline: bool
    restore_delays: dict[str, float]
    price_ref: dict[str, str] = Field(description=PRICE_REF_HELP)
    capacity_bytes: int | None
    min_storage_days: int
    created_at: datetime
    used_bytes: int
    object_count: int
    bucket_count: int
