"""Object operations: PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects, CopyObject, tagging."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tierpilot.catalog import events as object_events
from tierpilot.catalog import hotread, repository, store, versions
from tierpilot.catalog import service as catalog
from tierpilot.catalog.errors import CatalogError
from tierpilot.catalog.hotread import ObjectView
from tierpilot.catalog.models import Bucket, Object, ObjectVersion
from tierpilot.drivers import registry
from tierpilot.drivers.base import RestoreStatus, TierError
from tierpilot.drivers.posix import PosixDriver
from tierpilot.drivers.registry import TierSpec
from tierpilot.gateway import checksums, expiration, usercontent, xmlio
from tierpilot.gateway.auth import bucket_of, deletable
from tierpilot.gateway.body import key_of, read_xml_body
from tierpilot.gateway.common import (
    attribute_parts_window,
    checksum_headers,
    copy_source,
    copy_source_version,
    etag,
    lock_from_headers,
    object_headers,
    open_flow,
    placement,
    read_checksum_headers,
    stored_headers,
    tags_from_header,
    user_metadata,
    validate_tags,
    version_headers,
)
from tierpilot.gateway.errors import (
    S3Error,
    invalid_argument,
    invalid_request,
    malformed_xml,
    no_such_key,
    precondition_failed,
)
from tierpilot.gateway.http import Headers, Request, http_date, parse_http_date
from tierpilot.gateway.payload import MAX_OBJECT_SIZE, Payload, WholeBody, small_body
from tierpilot.gateway.routes import route
from tierpilot.kit.db import transaction
from tierpilot.kit.streaming import Inbound, run, send_stream
from tierpilot.sharing import gate as sharing

_RANGE = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*")
MAX_DELETE_KEYS = 1000
INLINE_READ_BYTES = 64 << 10  # a GET range up to this is read on the event loop when its pages are cached
RESPONSE_OVERRIDES = {
    "response-content-type": b"content-type", "response-content-language": b"content-language",
    "response-expires": b"expires", "response-cache-control": b"cache-control",
    "response-content-disposition": b"content-disposition", "response-content-encoding": b"content-encoding",
}


def _lookup(bucket_id: int, key: str, version_id: str | None = None) -> Object:
    """The current version, or the one named (a noncurrent one as a detached ``Object``); a delete marker
    answers as S3 does: 404 NoSuchKey when it hides the key, 405 when named, both with x-amz-delete-marker."""
    with transaction() as session:
        if version_id is None:
            obj = repository.get_object(session, bucket_id, key)
            if obj is not None:
                return obj
            catalog.require_bucket(session, bucket_id)
            err = no_such_key(key)
            marker = versions.latest_is_marker(session, bucket_id, key)
            if marker is not None:
                err.headers += [(b"x-amz-delete-marker", b"true"), (b"x-amz-version-id", marker.version_id.encode())]
            else:  # gone without a marker (or never there): said as RGW says it, for clients that check
                err.headers.append((b"x-amz-delete-marker", b"false"))
            raise err
        row = versions.find_version(session, bucket_id, key, version_id)
        if row is None:
            catalog.require_bucket(session, bucket_id)
            raise S3Error("NoSuchVersion", "The specified version does not exist.", 404, Key=key,
                          VersionId=version_id)
        if isinstance(row, ObjectVersion):
            if row.delete_marker:
                err = S3Error("MethodNotAllowed", "The specified method is not allowed against this resource.", 405,
                              Method="GET", ResourceType="DeleteMarker")
                err.headers += [(b"x-amz-delete-marker", b"true"), (b"x-amz-version-id", row.version_id.encode()),
                                (b"last-modified", http_date(row.last_modified).encode())]
                raise err
            return versions.as_object(row)
        return row


# conditions and ranges -------------------------------------------------------------------------------


def _etag_in(obj_etag: str, header: str) -> bool:
    wanted = [t.strip().removeprefix("W/").strip('"') for t in header.split(",")]
    return "*" in wanted or obj_etag.strip('"') in wanted


def _seconds(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


def evaluate_conditions(obj: ObjectView, if_match: str | None, if_none_match: str | None, if_modified: str | None,
                        if_unmodified: str | None, read: bool = True) -> int:
    """S3's order of precondition checks: 412, 304 (reads only) or 0 when the request proceeds."""
    if if_match is not None:
        if not _etag_in(obj.etag, if_match):
            return 412
    elif if_unmodified:  # the dates only when asked about (most reads ask nothing)
        unmodified_since = parse_http_date(if_unmodified)
        if unmodified_since is not None and _seconds(obj.last_modified) > unmodified_since:
            return 412
    if if_none_match is not None:
        if _etag_in(obj.etag, if_none_match):
            return 304 if read else 412
    elif if_modified:
        modified_since = parse_http_date(if_modified)
        if modified_since is not None and _seconds(obj.last_modified) <= modified_since:
            return 304 if read else 412
    return 0


def parse_range(value: str | None, size: int) -> tuple[int, int] | None:
    """(start, end) inclusive of a single byte range; None when absent or ignorable; 416 when unsatisfiable."""
    if not value:
        return None
    m = _RANGE.fullmatch(value)
    if m is None:
        return None  # several ranges or garbage: ignored, the whole object is sent (as S3)
    first, last = m.group(1), m.group(2)
    if not first and not last:
        return None
    if not first:
        length = int(last)
        if length == 0 or size == 0:
            raise _invalid_range(value, size)
        return max(0, size - length), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if last and end < start:
        return None
    if start >= size:
        raise _invalid_range(value, size)
    return start, min(end, size - 1)


def _invalid_range(value: str, size: int) -> S3Error:
    err = S3Error("InvalidRange", "The requested range is not satisfiable", 416, RangeRequested=value,
                  ActualObjectSize=str(size))
    err.headers.append((b"content-range", f"bytes */{size}".encode()))
    return err


# PutObject -------------------------------------------------------------------------------------------


@route("PUT", "object")
async def put_object(req: Request) -> None:
    if "x-amz-copy-source" in req.headers:
        await copy_object(req)
        return
    key = key_of(req)
    bucket = await bucket_of(req)
    wanted = await sharing.requested_acl(bucket, req.headers, req.user.user_id)
    tier, storage_class = await placement(bucket, req.header("x-amz-storage-class"))
    meta, headers, tags = user_metadata(req), stored_headers(req), tags_from_header(req.header("x-amz-tagging"))
    lock_mode, lock_until, legal_hold = lock_from_headers(req, bucket)
    flow = await open_flow(req, bucket, "write", None)
    whole = WholeBody() if small_body(req, store.SMALL_PUT_MAX) else None
    inbound = Inbound(req.receive, flow) if whole is None else None
    payload = Payload(req, whole if whole is not None else inbound)  # type: ignore[arg-type]
    if store.space_limited(bucket):
        await run(store.check_space, bucket, payload.expected_size, None, key)
    spec = store.NewObject(tier=tier, storage_class=storage_class, content_type=req.header("content-type"),
                           user_metadata=meta, headers=headers, tags=tags,
                           checksum_algorithm=payload.algorithm or checksums.INGEST,  # type: ignore[arg-type]
                           lock_mode=lock_mode, lock_until=lock_until, legal_hold=legal_hold)
    small = store.small_put_driver(spec) if whole is not None else None
    if small is not None and whole is not None:  # a few KiB: read, checked and stored from the event loop
        await whole.read(req.receive, flow)
        obj = await store.put_small_object(small, bucket, key, list(payload.chunks()), spec, verify=payload.verify,
                                           if_match=req.header("if-match"), if_none_match=req.header("if-none-match"))
    else:
        if inbound is None:  # a small body for a tier without syncfs rounds: streamed to a worker thread
            inbound = Inbound(req.receive, flow)
            payload = Payload(req, inbound)
        obj = await inbound.drive(store.put_object, bucket, key, payload.chunks(), spec, verify=payload.verify,
                                  if_match=req.header("if-match"), if_none_match=req.header("if-none-match"))
    req.bytes_in = obj.size
    await sharing.record_write(bucket, key, obj.version_id, wanted, req.seen)
    out: Headers = [(b"etag", etag(obj.etag).encode())]
    out += checksum_headers(obj.checksum_algorithm, obj.checksum_value)
    out += version_headers(obj, bucket, lock=False)
    out += await expiration_header(bucket, obj)
    await req.respond(200, headers=out)


async def expiration_header(bucket: Bucket, obj: ObjectView) -> Headers:
    """x-amz-expiration of a current version a lifecycle rule will expire (rules cached per process)."""
    rules = expiration.source.cached(bucket.id)
    if rules is None:
        rules = await run(expiration.source.read, bucket.id)
    value = expiration.source.header(rules, obj.key, obj.size, obj.tags, obj.created_at) if rules else None
    return [(b"x-amz-expiration", value.encode())] if value else []


# GetObject / HeadObject ------------------------------------------------------------------------------


@dataclass
class _Read:
    obj: ObjectView
    tier: TierSpec
    status: int
    start: int = 0
    end: int = -1
    chunks: Iterator[bytes] | None = None
    first: bytes | None = None
    live_restore: RestoreStatus | None = None  # the tier's status of a recall the catalog has as ongoing


def _prepare_read(bucket_id: int, key: str, headers: dict[str, str], method: str, part: str | None,
                  reader: int | None = None, version_id: str | None = None) -> _Read:
    """One worker-thread visit: look the object up, check conditions and range, open and read the first block."""
    # the current version in one statement; the session's lookup only to say why it is absent
    obj = (hotread.current(bucket_id, key) if version_id is None else None) or _lookup(bucket_id, key, version_id)
    read = _resolve(obj, registry.tiers.get(obj.tier_id), headers, part)
    if read.status in (200, 206):
        _open(read, method, reader)
    return read


def _resolve(obj: ObjectView, tier: TierSpec, headers: dict[str, str], part: str | None) -> _Read:
    """Conditions (412/304) and the range (200/206) of a read of ``obj``; no I/O."""
    status = evaluate_conditions(obj, headers.get("if-match"), headers.get("if-none-match"),
                                 headers.get("if-modified-since"), headers.get("if-unmodified-since"))
    if status:
        return _Read(obj, tier, status)
    rng = parse_range(headers.get("range"), obj.size)
    if part is not None:
        rng = _part_range(obj, part)
    start, end = rng if rng is not None else (0, obj.size - 1)
    return _Read(obj, tier, 206 if rng is not None else 200, start, end)


def _open(read: _Read, method: str, reader: int | None) -> None:
    """The blocking part of a read: a recall's live status, and for GET the stream and its first block."""
    obj = read.obj
    if read.tier.offline and obj.restore_state == "ongoing":
        with contextlib.suppress(TierError):  # unknown to the tier: the catalog's word stands
            read.live_restore = store.driver(obj.tier_id).restore_status(obj.locator)
    if method == "GET":
        chunks = store.open_object(obj, read.start, read.end, reader) if obj.size else iter(())
        read.chunks = chunks
        read.first = next(chunks, None)


async def _read_inline(bucket_id: int, req: Request, key: str) -> _Read | None:
    """The read prepared on the event loop, without a thread hop, or None when it needs a worker thread.

    A hop costs a small GET more than its lookup: the worker waits for the GIL behind the busy loop (up to
    the 5 ms switch interval each way). Inline: the current version read from the loop
    (``hotread.current_on_loop``: SQLite never waiting for a lock, PostgreSQL on the loop's own connections), a
    tier the process knows, not an archive. A GET's bytes come along when they are at most
    ``INLINE_READ_BYTES`` and all in the page cache (``PosixDriver.read_cached``); otherwise ``chunks`` is
    None and the caller opens the blob in a thread. Anything else (a version id, a part number, an absent
    key whose answer needs the versions table) takes the thread path whole.
    """
    if "versionId" in req.query or "partNumber" in req.query or not registry.tiers.fresh():
        return None
    obj = await hotread.current_on_loop(bucket_id, key, req.seen)
    if not isinstance(obj, hotread.ObjectRow):
        return None
    tier = registry.tiers.cached(obj.tier_id)
    if tier is None or tier.offline:
        return None
    read = _resolve(obj, tier, req.headers, None)
    if req.method != "GET" or read.status not in (200, 206):
        return read
    length = read.end - read.start + 1
    if not obj.size:
        read.chunks = iter(())
    elif length <= INLINE_READ_BYTES:
        drv = registry.driver_for(tier)
        data = drv.read_cached(obj.locator, read.start, read.end) if isinstance(drv, PosixDriver) else None
        if data is not None:
            read.chunks, read.first = iter(()), data
    return read


def _part_range(obj: ObjectView, part: str) -> tuple[int, int] | None:
    """The bytes of part ``part`` (1-based) of a multipart object; an object of one part is its part 1."""
    if not (part.isascii() and part.isdigit()) or not 1 <= int(part) <= 10000:
        raise invalid_argument("Part number must be an integer between 1 and 10000, inclusive", "partNumber",
                               part[:16])
    sizes = obj.part_sizes or [obj.size]
    number = int(part)
    if number > len(sizes):
        raise S3Error("InvalidPart", "The requested partnumber is not satisfiable", 400, PartNumber=part)
    start = sum(sizes[: number - 1])
    return (start, start + sizes[number - 1] - 1) if obj.part_sizes else None


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _check_overrides(query: dict[str, str]) -> None:
    """A ``response-*`` value becomes a header: a control character in it would break the response."""
    for name in RESPONSE_OVERRIDES:
        if name in query and _CONTROL.search(query[name]):
            raise invalid_argument(f"{name} may not contain control characters", name, query[name][:64])


@route("GET", "object")
@route("HEAD", "object")
async def get_object(req: Request) -> None:
    key = key_of(req)
    bucket = await bucket_of(req)
    reader = req.caller.user_id if req.caller else None  # read-ahead follows each caller's pattern
    read = await _read_inline(bucket.id, req, key)
    if read is None:
        read = await run(_prepare_read, bucket.id, key, req.headers, req.method, req.query.get("partNumber"),
                         reader, req.query.get("versionId"))
    elif read.status in (200, 206) and req.method == "GET" and read.chunks is None:
        await run(_open, read, req.method, reader)
    obj = read.obj
    if read.status == 412:
        raise precondition_failed("If-Match" if req.header("if-match") else "If-Unmodified-Since")
    headers = object_headers(obj, read.tier, read.live_restore) + version_headers(obj, bucket)
    # current-version rules say nothing about a version asked for by id; a bucket without rules (the rules
    # cached, none) needs no call
    if "versionId" not in req.query and expiration.source.cached(bucket.id) != ():
        headers += await expiration_header(bucket, obj)
    if read.status == 304:
        await req.respond(304, headers=[h for h in headers if h[0] in (b"etag", b"last-modified")],
                          content_type=None)
        return
    if (req.header("x-amz-checksum-mode") or "").upper() == "ENABLED":
        headers += read_checksum_headers(obj, read.status, req.query.get("partNumber"))
    length = read.end - read.start + 1
    if read.status == 206:
        headers.append((b"content-range", f"bytes {read.start}-{read.end}/{obj.size}".encode()))
    if req.method == "GET":
        overrides = {RESPONSE_OVERRIDES[q]: v for q, v in req.query.items() if q in RESPONSE_OVERRIDES}
        _check_overrides(req.query)
        if overrides:
            headers = [h for h in headers if h[0] not in overrides]
            headers += [(k, v.encode("latin-1", "replace")) for k, v in overrides.items()]
    headers = usercontent.guard(headers)
    if req.method == "HEAD":
        await req.start(read.status, headers, content_length=length)
        await req.send({"type": "http.response.body", "body": b""})
        return
    if obj.id is not None:  # a noncurrent version is read through a detached row
        store.access_log.note(obj.id)
    assert read.chunks is not None
    try:
        flow = await open_flow(req, bucket, "read", length)
        await req.start(read.status, headers, content_length=length)
        req.bytes_out = await send_stream(req.send, read.chunks, flow, length, first=read.first)
    finally:
        close = getattr(read.chunks, "close", None)
        if close is not None:
            close()


@route("GET", "object", "attributes")
async def get_object_attributes(req: Request) -> None:
    bucket = await bucket_of(req)
    obj = await run(_lookup, bucket.id, key_of(req), req.query.get("versionId"))
    wanted = {a.strip() for a in (req.header("x-amz-object-attributes") or "").split(",") if a.strip()}
    known = {"ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"}
    if not wanted or not wanted <= known:
        raise invalid_argument("Invalid attribute name specified.", "x-amz-object-attributes",
                               ",".join(sorted(wanted - known))[:64])
    children: list[str] = []
    if "ETag" in wanted:
        children.append(xmlio.el("ETag", obj.etag.strip('"')))
    if "Checksum" in wanted and obj.checksum_algorithm and obj.checksum_value:
        children.append(f"<Checksum>{xmlio.el(f'Checksum{obj.checksum_algorithm}', obj.checksum_value)}"
                        f"{xmlio.el('ChecksumType', checksums.kind_of(obj.checksum_value))}</Checksum>")
    if "ObjectParts" in wanted and obj.part_sizes:
        max_parts, marker = attribute_parts_window(req)
        numbered = list(enumerate(obj.part_sizes, start=1))[marker:marker + max_parts]
        sums = obj.part_checksums if obj.part_checksums and obj.checksum_algorithm else None
        parts = "".join(f"<Part>{xmlio.el('PartNumber', n)}{xmlio.el('Size', size)}"
                        f"{xmlio.el(f'Checksum{obj.checksum_algorithm}', sums[n - 1]) if sums else ''}</Part>"
                        for n, size in numbered)
        truncated = marker + max_parts < len(obj.part_sizes)
        children.append(f"<ObjectParts>{xmlio.el('PartsCount', len(obj.part_sizes))}"
                        f"{xmlio.el('PartNumberMarker', marker)}"
                        f"{xmlio.el('NextPartNumberMarker', numbered[-1][0] if numbered else marker)}"
                        f"{xmlio.el('MaxParts', max_parts)}{xmlio.el('IsTruncated', str(truncated).lower())}"
                        f"{parts}</ObjectParts>")
    if "StorageClass" in wanted:
        children.append(xmlio.el("StorageClass", obj.storage_class))
    if "ObjectSize" in wanted:
        children.append(xmlio.el("ObjectSize", obj.size))
    headers = [(b"last-modified", http_date(obj.last_modified).encode())] + version_headers(obj, bucket, lock=False)
    await req.respond(200, xmlio.document("GetObjectAttributesResponse", children), headers)


# DeleteObject / DeleteObjects ------------------------------------------------------------------------


def _bypass(req: Request) -> bool:
    return (req.header("x-amz-bypass-governance-retention") or "").strip().lower() == "true"


@route("DELETE", "object")
async def delete_object(req: Request) -> None:
    key = key_of(req)
    bucket = await bucket_of(req)
    [result] = await run(store.delete_versions, bucket, [(key, req.query.get("versionId"))], _bypass(req))
    if isinstance(result, CatalogError):
        raise result
    out: Headers = []
    if result.version_id is not None:
        out.append((b"x-amz-version-id", result.version_id.encode()))
    if result.delete_marker:
        out.append((b"x-amz-delete-marker", b"true"))
    await req.respond(204, headers=out, content_type=None)


@route("POST", "bucket", "delete")
async def delete_objects(req: Request) -> None:
    bucket = await bucket_of(req)
    doc = xmlio.parse(await read_xml_body(req), "Delete")
    quiet_text = xmlio.child_text(doc, "Quiet")
    if quiet_text is not None and quiet_text.lower() not in ("true", "false"):
        raise malformed_xml()  # S3 reads Quiet as a boolean: anything else fails the schema
    quiet = quiet_text is not None and quiet_text.lower() == "true"
    entries = xmlio.children(doc, "Object")
    if not entries or len(entries) > MAX_DELETE_KEYS:
        raise malformed_xml()
    deleted: list[str] = []
    errors: list[str] = []
    wanted: list[tuple[str, str | None]] = []
    for entry in entries:
        key = xmlio.child_text(entry, "Key")
        if key is None:
            raise malformed_xml()
        version = xmlio.child_text(entry, "VersionId")
        try:
            catalog.validate_key(key)
        except catalog.InvalidInput as exc:
            errors.append(_delete_error(key, exc.s3_code, exc.message))
            continue
        wanted.append((key, version))
    permitted = await deletable(req, bucket, wanted)
    for (key, version), ok in zip(wanted, permitted, strict=True):
        if not ok:
            errors.append(_delete_error(key, "AccessDenied", "Access Denied", version))
    wanted = [entry for entry, ok in zip(wanted, permitted, strict=True) if ok]
    results = await run(store.delete_versions, bucket, wanted, _bypass(req)) if wanted else []
    for (key, version), result in zip(wanted, results, strict=True):
        if isinstance(result, CatalogError):
            errors.append(_delete_error(key, result.s3_code, result.message, version))
        elif not quiet:
            parts = [xmlio.el("Key", key)]
            if version is not None:
                parts.append(xmlio.el("VersionId", version))
            if result.delete_marker:
                parts.append(xmlio.el("DeleteMarker", "true"))
                if result.marker_version_id is not None:
                    parts.append(xmlio.el("DeleteMarkerVersionId", result.marker_version_id))
            deleted.append(f"<Deleted>{''.join(parts)}</Deleted>")
    await req.respond(200, xmlio.document("DeleteResult", deleted + errors))


def _delete_error(key: str, code: str, message: str, version_id: str | None = None) -> str:
    version = xmlio.el("VersionId", version_id) if version_id is not None else ""
    return (f"<Error>{xmlio.el('Key', key)}{version}{xmlio.el('Code', code)}{xmlio.el('Message', message)}"
            "</Error>")


# CopyObject ------------------------------------------------------------------------------------------


def copy_conditions(req: Request, src: Object) -> None:
    status = evaluate_conditions(src, req.header("x-amz-copy-source-if-match"),
                                 req.header("x-amz-copy-source-if-none-match"),
                                 req.header("x-amz-copy-source-if-modified-since"),
                                 req.header("x-amz-copy-source-if-unmodified-since"), read=False)
    if status:
        raise precondition_failed()


async def source_object(req: Request) -> tuple[Bucket, Object]:
    src_bucket_name, src_key = copy_source(req)
    src_bucket = await bucket_of(req, src_bucket_name)
    src = await run(_lookup, src_bucket.id, src_key, copy_source_version(req))
    copy_conditions(req, src)
    return src_bucket, src


async def copy_object(req: Request) -> None:
    key = key_of(req)
    bucket = await bucket_of(req)
    wanted = await sharing.requested_acl(bucket, req.headers, req.user.user_id)
    src_bucket, src = await source_object(req)
    if src.size > MAX_OBJECT_SIZE:
        raise invalid_request(f"The specified copy source is larger than the maximum allowable size for a copy "
                              f"source: {MAX_OBJECT_SIZE}")
    directive = (req.header("x-amz-metadata-directive") or "COPY").upper()
    tag_directive = (req.header("x-amz-tagging-directive") or "COPY").upper()
    if directive not in ("COPY", "REPLACE") or tag_directive not in ("COPY", "REPLACE"):
        raise invalid_argument("Unknown metadata directive.", "x-amz-metadata-directive", directive)
    requested_class = req.header("x-amz-storage-class")
    tier, storage_class = await placement(bucket, requested_class)
    if (src_bucket.id == bucket.id and src.key == key and directive == "COPY" and src.id is not None
            and (requested_class is None or storage_class == src.storage_class)):
        raise invalid_request("This copy request is illegal because it is trying to copy an object to itself "
                              "without changing the object's metadata, storage class, website redirect location "
                              "or encryption attributes.")
    meta: dict[str, Any]
    if directive == "REPLACE":
        meta, headers, content_type = user_metadata(req), stored_headers(req), req.header("content-type")
    else:
        meta, headers, content_type = dict(src.user_metadata or {}), dict(src.headers or {}), src.content_type
    tags = tags_from_header(req.header("x-amz-tagging")) if tag_directive == "REPLACE" else dict(src.tags or {})
    lock_mode, lock_until, legal_hold = lock_from_headers(req, bucket)
    spec = store.NewObject(tier=tier, storage_class=storage_class, content_type=content_type, user_metadata=meta,
                           headers=headers, tags=tags, lock_mode=lock_mode, lock_until=lock_until,
                           legal_hold=legal_hold)
    obj = await run(store.copy_object, src, bucket, key, spec, if_match=req.header("if-match"),
                    if_none_match=req.header("if-none-match"))
    await sharing.record_write(bucket, key, obj.version_id, wanted, req.seen)
    body = xmlio.document("CopyObjectResult", [xmlio.el("LastModified", xmlio.iso(obj.last_modified)),
                                               xmlio.el("ETag", etag(obj.etag))])
    out = checksum_headers(obj.checksum_algorithm, obj.checksum_value) + version_headers(obj, bucket, lock=False)
    if src.version_id != "null" or src_bucket.versioning is not None:
        out.append((b"x-amz-copy-source-version-id", src.version_id.encode()))
    await req.respond(200, body, out)


# tagging ---------------------------------------------------------------------------------------------


def _set_tags(bucket_id: int, key: str, tags: dict[str, Any], event: str) -> None:
    with transaction(write=True) as session:
        obj = repository.get_object(session, bucket_id, key, for_update=True)
        if obj is None:
            catalog.require_bucket(session, bucket_id)
            raise no_such_key(key)
        obj.tags = tags
        object_events.emit(session, [object_events.Change(bucket_id, key, event, obj.size, obj.etag, obj.version_id)])


@route("GET", "object", "tagging")
async def get_object_tagging(req: Request) -> None:
    bucket = await bucket_of(req)
    obj = await run(_lookup, bucket.id, key_of(req))
    # in key order, as S3 lists them (the order they were given in is not kept)
    tags = "".join(f"<Tag>{xmlio.el('Key', k)}{xmlio.el('Value', v)}</Tag>"
                   for k, v in sorted((obj.tags or {}).items()))
    await req.respond(200, xmlio.document("Tagging", [f"<TagSet>{tags}</TagSet>"]))


@route("PUT", "object", "tagging")
async def put_object_tagging(req: Request) -> None:
    bucket = await bucket_of(req)
    key = key_of(req)
    doc = xmlio.parse(await read_xml_body(req), "Tagging")
    pairs = [(xmlio.required_text(tag, "Key"), xmlio.child_text(tag, "Value") or "")
             for tag_set in xmlio.children(doc, "TagSet") for tag in xmlio.children(tag_set, "Tag")]
    tags = validate_tags(pairs)
    await run(_set_tags, bucket.id, key, tags, "ObjectTagging:Put")
    await req.respond(200, content_type=None)


@route("DELETE", "object", "tagging")
async def delete_object_tagging(req: Request) -> None:
    bucket = await bucket_of(req)
    await run(_set_tags, bucket.id, key_of(req), {}, "ObjectTagging:Delete")
    await req.respond(204, content_type=None)
