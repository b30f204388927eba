"""Pieces several S3 operations share: flows, tiers, metadata, object headers, copy sources."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, unquote_plus

from tierpilot.catalog import service as catalog
from tierpilot.catalog.hotread import ObjectView
from tierpilot.catalog.models import Bucket
from tierpilot.drivers import registry
from tierpilot.drivers.base import RestoreStatus
from tierpilot.drivers.registry import TierSpec
from tierpilot.gateway import checksums
from tierpilot.gateway.errors import S3Error, invalid_argument
from tierpilot.gateway.http import Headers, Request, http_date
from tierpilot.kit.db import utcnow
from tierpilot.kit.flow import RESERVATION_HEADER, Direction, Flow, FlowRequest, get_policy
from tierpilot.kit.streaming import run

MAX_METADATA_BYTES = 2048
MAX_TAGS = 10
# headers S3 stores with an object and returns on GET/HEAD
STORED_HEADERS = ("content-encoding", "content-disposition", "cache-control", "content-language", "expires",
                  "x-amz-website-redirect-location")
PRIVATE_ACLS = {"private", "bucket-owner-full-control", "bucket-owner-read"}


async def open_flow(req: Request, bucket: Bucket, direction: Direction, expected: int | None) -> Flow:
    """The request's flow through the reservation policy (best-effort unless a reservation applies); a write
    without an ``expected`` size declares its body's (what a project's quota reserves before the body is read)."""
    if expected is None and direction == "write":
        expected = declared_length(req)
    flow = await get_policy().open(FlowRequest(
        reservation_id=req.header(RESERVATION_HEADER), user_id=req.user.user_id, is_admin=req.user.is_admin,
        bucket=bucket.name, bucket_id=bucket.id, direction=direction, expected_bytes=expected,
    ))
    req.flows.append(flow)
    return flow


def declared_length(req: Request) -> int | None:
    """The object bytes a request body says it carries: an aws-chunked body's decoded length, else its
    Content-Length (None: neither)."""
    for name in ("x-amz-decoded-content-length", "content-length"):
        value = req.headers.get(name)
        if value is not None and value.isdigit():
            return int(value)
    return None


async def all_tiers() -> list[TierSpec]:
    return registry.tiers.all() if registry.tiers.fresh() else await run(registry.tiers.all)


async def placement(bucket: Bucket, storage_class: str | None) -> tuple[TierSpec, str]:
    """The tier and class a new object of ``storage_class`` (x-amz-storage-class) goes to."""
    return catalog.tier_for_class(await all_tiers(), bucket.tier_id, storage_class)


def user_metadata(req: Request) -> dict[str, Any]:
    meta = {name[11:]: value for name, value in req.headers.items() if name.startswith("x-amz-meta-")}
    if sum(len(k) + len(v) for k, v in meta.items()) > MAX_METADATA_BYTES:
        raise S3Error("MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size.", 400,
                      MaxSizeAllowed=str(MAX_METADATA_BYTES))
    return meta


def stored_headers(req: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in STORED_HEADERS:
        value = req.header(name)
        if value is None:
            continue
        if name == "content-encoding":  # aws-chunked describes the transfer, not the object
            value = ", ".join(v.strip() for v in value.split(",") if v.strip() and v.strip() != "aws-chunked")
            if not value:
                continue
        out[name] = value
    return out


def tags_from_header(value: str | None) -> dict[str, Any] | None:
    """x-amz-tagging: URL-encoded ``k1=v1&k2=v2``."""
    if value is None:
        return None
    pairs: list[tuple[str, str]] = []
    for pair in value.split("&"):
        if not pair:
            continue
        k, _, v = pair.partition("=")
        pairs.append((unquote_plus(k), unquote_plus(v)))
    return validate_tags(pairs)


def validate_tags(pairs: list[tuple[str, str]], limit: int = MAX_TAGS) -> dict[str, Any]:
    """A tag set as S3 checks it (at most 10 tags on an object, 50 on a bucket, keys unique, 128/256
    characters) as a dict."""
    if len(pairs) > limit:
        raise S3Error("BadRequest", f"Object tags cannot be greater than {limit}", 400)
    tags: dict[str, Any] = {}
    for k, v in pairs:
        if not k or len(k) > 128 or len(v) > 256:
            raise S3Error("InvalidTag", "The TagKey/TagValue you have provided is invalid", 400)
        if k in tags:
            raise S3Error("InvalidTag", "Cannot provide multiple Tags with the same key", 400, TagKey=k)
        tags[k] = v
    return tags


_INT32_MAX = 2**31 - 1


def int_argument(req: Request, name: str, default: int, low: int = 0, header: bool = False) -> int:
    """A query parameter (``header``: a request header) S3 reads as an int32 of at least ``low`` (max-keys,
    max-parts, …): ASCII digits only; anything else, or a value past 2147483647, is InvalidArgument (never
    silently capped or a 500)."""
    raw = req.header(name) if header else req.query.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.lstrip("-").isdigit() or raw.startswith("+"):
        raise invalid_argument(f"Provided {name} not an integer or within integer range", name, raw[:64])
    value = int(raw)
    if value > _INT32_MAX or -value > _INT32_MAX + 1:
        raise invalid_argument(f"Provided {name} not an integer or within integer range", name, raw[:64])
    if value < low:
        raise invalid_argument(f"Argument {name} must be an integer between {low} and {_INT32_MAX}", name, raw)
    return value


def attribute_parts_window(req: Request) -> tuple[int, int]:
    """(max parts, part number marker) of GetObjectAttributes' ObjectParts: headers, not query parameters."""
    max_parts = min(int_argument(req, "x-amz-max-parts", 1000, header=True), 1000)
    return max_parts, int_argument(req, "x-amz-part-number-marker", 0, header=True)


def etag(obj_etag: str) -> str:
    return f'"{obj_etag.strip(chr(34))}"'


def checksum_headers(algorithm: str | None, value: str | None, kind: str | None = None) -> Headers:
    """x-amz-checksum-<alg> and -type of a stored checksum (``kind``: a part's, which is of its object's type)."""
    if not algorithm or not value:
        return []
    kind = kind or checksums.kind_of(value)
    return [(checksums.HEADERS[algorithm].encode(), value.encode()), (b"x-amz-checksum-type", kind.encode())]


def read_checksum_headers(obj: ObjectView, status: int, part: str | None) -> Headers:
    """The checksum a GET/HEAD with x-amz-checksum-mode: ENABLED answers: the object's for the whole object,
    a part's for ``partNumber`` of a multipart object that kept its parts' checksums, none for a range."""
    if status == 200:
        return checksum_headers(obj.checksum_algorithm, obj.checksum_value)
    if part is None or not obj.part_checksums or not obj.checksum_value:
        return []
    value = obj.part_checksums[int(part) - 1]  # the range read already checked the number
    return checksum_headers(obj.checksum_algorithm, value, checksums.kind_of(obj.checksum_value))


def restore_header(obj: ObjectView, tier: TierSpec | None, live: RestoreStatus | None = None) -> Headers:
    """x-amz-restore for archived objects, as S3 words it. ``live`` is the tier's own status of a recall
    the catalog still has as ongoing: the restore sweep records the end up to one sweep later."""
    if tier is None or not tier.offline or obj.restore_state is None:
        return []
    if obj.restore_state == "ongoing":
        if live is not None and live.restored and live.expiry is not None and live.expiry > utcnow():
            return [(b"x-amz-restore", f'ongoing-request="false", expiry-date="{http_date(live.expiry)}"'.encode())]
        return [(b"x-amz-restore", b'ongoing-request="true"')]
    # a copy past its expiry is gone (S3 drops the header) even before the expiry sweep clears the catalog
    if obj.restore_state == "restored" and obj.restore_expiry is not None and obj.restore_expiry > utcnow():
        return [(b"x-amz-restore", f'ongoing-request="false", expiry-date="{http_date(obj.restore_expiry)}"'.encode())]
    return []


def object_headers(obj: ObjectView, tier: TierSpec | None = None, live: RestoreStatus | None = None) -> Headers:
    """What GET and HEAD say about an object besides length and range."""
    out: Headers = [
        (b"etag", etag(obj.etag).encode()),
        (b"last-modified", http_date(obj.last_modified).encode()),
        (b"accept-ranges", b"bytes"),
        (b"content-type", obj.content_type.encode("latin-1", "replace")),
    ]
    if obj.storage_class != "STANDARD":  # as S3: "returns this header for all objects except for S3 Standard"
        out.append((b"x-amz-storage-class", obj.storage_class.encode()))
    for name, value in (obj.headers or {}).items():
        out.append((name.encode(), str(value).encode("latin-1", "replace")))
    for name, value in (obj.user_metadata or {}).items():
        out.append((f"x-amz-meta-{name}".encode("latin-1", "replace"), str(value).encode("latin-1", "replace")))
    if obj.tags:
        out.append((b"x-amz-tagging-count", str(len(obj.tags)).encode()))
    if obj.parts_count:
        out.append((b"x-amz-mp-parts-count", str(obj.parts_count).encode()))
    out.extend(restore_header(obj, tier, live))
    return out


def copy_source_version(req: Request) -> str | None:
    """The ``versionId`` of x-amz-copy-source, if it names one."""
    query = (req.header("x-amz-copy-source") or "").partition("?")[2]
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if name == "versionId":
            return unquote(value)
    return None


def version_headers(obj: ObjectView, bucket: Bucket, lock: bool = True) -> Headers:
    """x-amz-version-id and (``lock``) the version's object lock state. Reads name the "null" version of a
    bucket that had versioning; writes (``lock`` False) only a real version id, as S3 answers them."""
    out: Headers = []
    if obj.version_id != "null" or (lock and bucket.versioning is not None):
        out.append((b"x-amz-version-id", obj.version_id.encode()))
    if not lock:
        return out
    if obj.lock_mode is not None and obj.lock_until is not None:
        out.append((b"x-amz-object-lock-mode", obj.lock_mode.encode()))
        out.append((b"x-amz-object-lock-retain-until-date", iso8601(obj.lock_until).encode()))
    if obj.legal_hold:
        out.append((b"x-amz-object-lock-legal-hold", b"ON"))
    return out


def iso8601(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_iso8601(value: str, name: str) -> datetime:
    """A timestamp of an object lock header or document (ISO 8601, with a zone; Z for UTC)."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise invalid_argument(f"{name} must be an ISO 8601 timestamp", name, value[:64]) from None
    if moment.tzinfo is None:
        raise invalid_argument(f"{name} must carry a time zone", name, value[:64])
    return moment.astimezone(UTC)


def lock_from_headers(req: Request, bucket: Bucket) -> tuple[str | None, datetime | None, bool]:
    """(mode, retain until, legal hold) a PUT, copy or multipart upload asks for."""
    return lock_from_fields(req.headers.get, bucket)


def lock_from_fields(get: Callable[[str], str | None], bucket: Bucket) -> tuple[str | None, datetime | None, bool]:
    """(mode, retain until, legal hold) of x-amz-object-lock-* values, request headers or a POST form's fields
    (``get`` by lower-case name), checked the same way for both."""
    mode = get("x-amz-object-lock-mode")
    until_raw = get("x-amz-object-lock-retain-until-date")
    hold = get("x-amz-object-lock-legal-hold")
    if mode is None and until_raw is None and hold is None:
        return None, None, False
    if not bucket.object_lock:
        raise S3Error("InvalidRequest", "Bucket is missing ObjectLockConfiguration", 400)
    if (mode is None) != (until_raw is None):
        raise invalid_argument("x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be "
                               "supplied", "x-amz-object-lock-mode", mode or "")
    if mode is not None and mode not in ("GOVERNANCE", "COMPLIANCE"):
        raise invalid_argument("Unknown wormMode directive.", "x-amz-object-lock-mode", mode[:32])
    until = parse_iso8601(until_raw, "x-amz-object-lock-retain-until-date") if until_raw is not None else None
    if until is not None and until <= utcnow():
        raise invalid_argument("The retain until date must be in the future!",
                               "x-amz-object-lock-retain-until-date", until_raw or "")
    if hold is not None and hold not in ("ON", "OFF"):
        raise invalid_argument("Legal Hold must be either of 'ON' or 'OFF'", "x-amz-object-lock-legal-hold",
                               hold[:16])
    return mode, until, hold == "ON"


def copy_source(req: Request) -> tuple[str, str]:
    """(bucket, key) of x-amz-copy-source (``/bucket/key`` or ``bucket/key``, URL-encoded); the version it may
    name is ``copy_source_version``."""
    raw = req.header("x-amz-copy-source") or ""
    path = raw.partition("?")[0]
    try:
        decoded = unquote(path, errors="strict").lstrip("/")
    except UnicodeDecodeError:
        raise invalid_argument("Invalid copy source encoding", "x-amz-copy-source", raw[:200]) from None
    bucket, _, key = decoded.partition("/")
    if not bucket or not key:
        raise invalid_argument("Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                               "x-amz-copy-source", raw[:200])
    return bucket, key
