"""Multipart uploads: Create, UploadPart, UploadPartCopy, Complete, Abort, ListParts, ListMultipartUploads.

Each part streams straight to the upload's tier from the request that carries it, and is recorded in
its own short transaction: parallel parts never wait for each other except for that commit.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from tierpilot.auth import repository as auth_repository
from tierpilot.catalog import repository, store
from tierpilot.catalog import service as catalog
from tierpilot.catalog.errors import NoSuchUpload
from tierpilot.catalog.models import Bucket, MultipartUpload, Object, UploadPart
from tierpilot.gateway import checksums, xmlio
from tierpilot.gateway.auth import bucket_of
from tierpilot.gateway.body import key_of, read_xml_body
from tierpilot.gateway.common import (
    checksum_headers,
    etag,
    int_argument,
    lock_from_headers,
    open_flow,
    placement,
    stored_headers,
    tags_from_header,
    user_metadata,
    version_headers,
)
from tierpilot.gateway.errors import S3Error, bad_digest, invalid_argument, invalid_request, malformed_xml
from tierpilot.gateway.http import Headers, Request
from tierpilot.gateway.ops_buckets import encoder
from tierpilot.gateway.ops_objects import parse_range, source_object
from tierpilot.gateway.payload import Payload
from tierpilot.gateway.routes import route
from tierpilot.kit.db import transaction
from tierpilot.kit.streaming import Inbound, run
from tierpilot.sharing import gate as sharing

MAX_LIST = 1000


def _get_upload(bucket: Bucket, key: str, upload_id: str) -> MultipartUpload:
    with transaction() as session:
        return catalog.get_upload(session, bucket, key, upload_id)


def _names(req: Request, uploads: list[MultipartUpload]) -> dict[int, str]:
    """Usernames of the uploads' owners other than the caller (a grantee's uploads in a shared bucket)."""
    others = {u.owner_id for u in uploads} - {req.user.user_id}
    if not others:
        return {}
    with transaction() as session:
        return auth_repository.usernames(session, others)


def _owner(req: Request, upload: MultipartUpload, names: dict[int, str]) -> str:
    name = req.user.username if upload.owner_id == req.user.user_id else names.get(upload.owner_id,
                                                                                     str(upload.owner_id))
    ident = f"{xmlio.el('ID', upload.owner_id)}{xmlio.el('DisplayName', name)}"
    return f"<Initiator>{ident}</Initiator><Owner>{ident}</Owner>"


@route("POST", "object", "uploads")
async def create_upload(req: Request) -> None:
    key = key_of(req)
    bucket = await bucket_of(req)
    wanted = await sharing.requested_acl(bucket, req.headers, req.user.user_id)
    tier, storage_class = await placement(bucket, req.header("x-amz-storage-class"))
    alg_header = req.header("x-amz-checksum-algorithm")
    algorithm = checksums.normalise_algorithm(alg_header) if alg_header else None
    kind = checksums.multipart_type(algorithm, req.header("x-amz-checksum-type"))
    meta, headers = user_metadata(req), stored_headers(req)
    tags = tags_from_header(req.header("x-amz-tagging"))
    lock_mode, lock_until, legal_hold = lock_from_headers(req, bucket)

    def create() -> MultipartUpload:
        with transaction(write=True) as session:
            return catalog.create_upload(session, bucket, key, owner_id=wanted.owner_id, tier_id=tier.id,
                                         storage_class=storage_class, content_type=req.header("content-type"),
                                         user_metadata=meta, headers=headers, checksum_algorithm=algorithm,
                                         tags=tags, lock_mode=lock_mode, lock_until=lock_until,
                                         legal_hold=legal_hold, checksum_type=kind)

    upload = await run(create)
    # the ACL it asks for, held by the upload until completion makes it the version's
    await sharing.record_write(bucket, key, f"upload:{upload.upload_id}", wanted, req.seen)
    out: Headers = []
    if algorithm and kind:
        out += [(b"x-amz-checksum-algorithm", algorithm.encode()), (b"x-amz-checksum-type", kind.encode())]
    body = xmlio.document("InitiateMultipartUploadResult", [
        xmlio.el("Bucket", bucket.name), xmlio.el("Key", key), xmlio.el("UploadId", upload.upload_id)])
    await req.respond(200, body, out)


def _part_number(req: Request) -> int:
    raw = req.query.get("partNumber", "")
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= catalog.MAX_PARTS:
        raise invalid_argument("Part number must be an integer between 1 and 10000, inclusive", "partNumber", raw)
    return int(raw)


@route("PUT", "object", "uploadId")
async def upload_part(req: Request) -> None:
    key = key_of(req)
    if "partNumber" not in req.query:
        raise invalid_request("UploadPart needs partNumber")
    number = _part_number(req)
    bucket = await bucket_of(req)
    upload = await run(_get_upload, bucket, key, req.query["uploadId"])
    if "x-amz-copy-source" in req.headers:
        await _upload_part_copy(req, bucket, upload, number)
        return
    flow = await open_flow(req, bucket, "write", None)
    inbound = Inbound(req.receive, flow)
    payload = Payload(req, inbound, stored_algorithm=upload.checksum_algorithm or checksums.INGEST)
    if upload.checksum_algorithm and payload.algorithm not in (None, upload.checksum_algorithm):
        raise invalid_request(f"Checksum Type mismatch occurred, expected checksum Type: "
                              f"{upload.checksum_algorithm.lower()}, actual checksum Type: "
                              f"{(payload.algorithm or '').lower()}")
    if store.space_limited(bucket):
        await run(store.check_space, bucket, payload.expected_size, upload)
    part, result = await inbound.drive(store.upload_part, upload, number, payload.chunks(), verify=payload.verify)
    req.bytes_in = part.size
    out: Headers = [(b"etag", etag(part.etag).encode())]
    if payload.algorithm:
        value = payload.checksum(result)
        if value:
            out.append((checksums.HEADERS[payload.algorithm].encode(), value.encode()))
    await req.respond(200, headers=out, content_type=None)


async def _upload_part_copy(req: Request, bucket: Bucket, upload: MultipartUpload, number: int) -> None:
    _src_bucket, src = await source_object(req)
    rng_header = req.header("x-amz-copy-source-range")
    if rng_header:
        if src.size == 0:
            raise invalid_argument("The x-amz-copy-source-range value must be of the form bytes=first-last where "
                                   "first and last are the zero-based offsets of the first and last bytes to copy",
                                   "x-amz-copy-source-range", rng_header)
        rng = parse_range(rng_header, src.size)
        if rng is None or not rng_header.strip().startswith("bytes=") or rng_header.strip().startswith("bytes=-"):
            raise invalid_argument("The x-amz-copy-source-range value must be of the form bytes=first-last",
                                   "x-amz-copy-source-range", rng_header)
        start, end = rng
        last = rng_header.strip().rpartition("-")[2].strip()
        if last.isdigit() and int(last) >= src.size:  # a copy's range may not run past the source (S3: 416)
            raise S3Error("InvalidRange", "The requested range is not satisfiable", 416, RangeRequested=rng_header,
                          ActualObjectSize=str(src.size))
    else:
        start, end = 0, src.size - 1
    part, _result = await run(store.copy_part, bucket, upload, number, src, start, end)
    children = [xmlio.el("LastModified", xmlio.iso(part.last_modified)), xmlio.el("ETag", etag(part.etag))]
    if upload.checksum_algorithm and part.checksum_value:  # the copied range's, as the upload's algorithm
        children.append(xmlio.el(f"Checksum{upload.checksum_algorithm}", part.checksum_value))
    body = xmlio.document("CopyPartResult", children)
    await req.respond(200, body)


def _requested_parts(body: bytes, algorithm: str | None) -> list[catalog.RequestedPart]:
    doc = xmlio.parse(body, "CompleteMultipartUpload")
    parts: list[catalog.RequestedPart] = []
    tag = f"Checksum{algorithm}" if algorithm else None
    for node in xmlio.children(doc, "Part"):
        number = (xmlio.child_text(node, "PartNumber") or "").strip()
        tag_value = xmlio.child_text(node, "ETag")
        if not (number.isascii() and number.isdigit()) or tag_value is None:
            raise malformed_xml()
        checksum = xmlio.child_text(node, tag) if tag else None
        part = catalog.RequestedPart(int(number), tag_value, checksum.strip() if checksum else None)
        if parts and parts[-1].part_number == part.part_number:
            # a number listed twice in a row (a part re-sent while its first upload ran, both answers listed):
            # the later entry counts, as RGW reads it; out of order is still InvalidPartOrder
            parts[-1] = part
        else:
            parts.append(part)
    return parts


def _object_checksum(upload: MultipartUpload, claimed: str | None
                     ) -> Callable[[list[UploadPart]], tuple[str | None, str | None]]:
    """The object's checksum from the stored parts' (their sizes too, for a FULL_OBJECT CRC), checked against
    the value the CompleteMultipartUpload named (BadDigest before the catalog sees the object)."""
    algorithm, kind = upload.checksum_algorithm, upload.checksum_type
    if algorithm is None and claimed is None:  # parts written since ingest checksums carry a CRC of their own
        algorithm, kind = checksums.INGEST, checksums.FULL_OBJECT

    def compute(parts: list[UploadPart]) -> tuple[str | None, str | None]:
        if not algorithm or any(not p.checksum_value for p in parts):
            if claimed is not None:
                raise bad_digest(f"The upload has no {algorithm or 'checksum'} of every part listed.")
            return None, None
        try:
            raw = [(base64.b64decode(p.checksum_value or ""), p.size) for p in parts]
        except (binascii.Error, ValueError):
            return None, None
        value = checksums.multipart(raw, algorithm, kind)
        if claimed is not None and claimed != value:
            raise bad_digest(f"The {algorithm} you specified did not match the calculated checksum.")
        return algorithm, value

    return compute


def _claimed_checksum(req: Request, upload: MultipartUpload, requested: list[catalog.RequestedPart]) -> str | None:
    """The object's checksum a CompleteMultipartUpload names (x-amz-checksum-<alg>: for a COMPOSITE upload the
    checksum of its parts' checksums with ``-N``, for a FULL_OBJECT one the whole object's CRC), refused with
    BadDigest when it cannot be the upload's; whether it matches is decided on the stored parts."""
    claimed = next(((alg, req.headers[name].strip()) for alg, name in checksums.HEADERS.items()
                    if name in req.headers), None)
    kind = req.header("x-amz-checksum-type")
    if kind is not None and kind.strip().upper() != (upload.checksum_type or checksums.COMPOSITE):
        raise invalid_request(f"The upload was created using the {upload.checksum_type or 'COMPOSITE'} checksum "
                              f"mode. The complete request must use the same checksum mode.")
    if claimed is None:
        return None
    alg, value = claimed
    algorithm = upload.checksum_algorithm
    full = (upload.checksum_type or checksums.COMPOSITE) == checksums.FULL_OBJECT
    digest, _, count = value.partition("-")
    checksums.decode_b64(digest, checksums.DIGEST_SIZES[alg], f"x-amz-checksum-{alg.lower()}")
    if alg != algorithm or (not full and count != str(len(requested))) or (full and count):
        raise bad_digest(f"The {alg} you specified does not match the upload's {algorithm or 'no'} checksums "
                         "of the parts listed.")
    if not full and any(p.checksum is None for p in requested):
        raise bad_digest(f"Every part listed needs its {alg} checksum.")
    return value


def _completed_before(bucket: Bucket, key: str, requested: list[catalog.RequestedPart]) -> Object | None:
    """The object a completion of these very parts made (a client's retry of a completion that succeeded)."""
    if not requested:
        return None
    try:
        wanted = catalog.multipart_etag([p.etag.strip() for p in requested])
    except ValueError:
        return None
    with transaction() as session:
        obj = repository.get_object(session, bucket.id, key)
    return obj if obj is not None and obj.etag == wanted else None


@route("POST", "object", "uploadId")
async def complete_upload(req: Request) -> None:
    key = key_of(req)
    bucket = await bucket_of(req)
    body = await read_xml_body(req, checksum_headers=False)
    try:
        upload = await run(_get_upload, bucket, key, req.query["uploadId"])
    except NoSuchUpload:
        done = await run(_completed_before, bucket, key, _requested_parts(body, None))
        if done is None:
            raise
        obj = done
    else:
        requested = _requested_parts(body, upload.checksum_algorithm)
        claimed = _claimed_checksum(req, upload, requested)
        obj = await run(store.complete_upload, bucket, upload, requested, _object_checksum(upload, claimed),
                        if_match=req.header("if-match"), if_none_match=req.header("if-none-match"))
        await sharing.record_completion(bucket, key, upload.upload_id, obj.version_id, req.seen)
    host = req.header("host", "")
    children = [xmlio.el("Location", f"http://{host}/{bucket.name}/{key}"), xmlio.el("Bucket", bucket.name),
                xmlio.el("Key", key), xmlio.el("ETag", etag(obj.etag))]
    if obj.checksum_algorithm and obj.checksum_value:
        children.append(xmlio.el(f"Checksum{obj.checksum_algorithm}", obj.checksum_value))
        children.append(xmlio.el("ChecksumType", checksums.kind_of(obj.checksum_value)))
    await req.respond(200, xmlio.document("CompleteMultipartUploadResult", children),
                      checksum_headers(obj.checksum_algorithm, obj.checksum_value)
                      + version_headers(obj, bucket, lock=False))


@route("DELETE", "object", "uploadId")
async def abort_upload(req: Request) -> None:
    key = key_of(req)
    bucket = await bucket_of(req)
    await run(store.abort_upload, bucket, key, req.query["uploadId"])
    await req.respond(204, content_type=None)


@route("GET", "object", "uploadId")
async def list_parts(req: Request) -> None:
    key = key_of(req)
    bucket = await bucket_of(req)
    upload_id = req.query["uploadId"]
    marker = int_argument(req, "part-number-marker", 0)
    max_parts = min(int_argument(req, "max-parts", MAX_LIST), MAX_LIST)

    def load() -> tuple[MultipartUpload, list[UploadPart], bool]:
        with transaction() as session:
            upload = catalog.get_upload(session, bucket, key, upload_id)
            parts, truncated = catalog.list_parts(session, upload, marker, max_parts)
            return upload, parts, truncated

    upload, parts, truncated = await run(load)
    names = await run(_names, req, [upload]) if upload.owner_id != req.user.user_id else {}
    alg = upload.checksum_algorithm
    items = []
    for p in parts:
        checksum = xmlio.el(f"Checksum{alg}", p.checksum_value) if alg and p.checksum_value else ""
        items.append(f"<Part>{xmlio.el('PartNumber', p.part_number)}"
                     f"{xmlio.el('LastModified', xmlio.iso(p.last_modified))}{xmlio.el('ETag', etag(p.etag))}"
                     f"{xmlio.el('Size', p.size)}{checksum}</Part>")
    head = [xmlio.el("Bucket", bucket.name), xmlio.el("Key", key), xmlio.el("UploadId", upload_id),
            _owner(req, upload, names),
            xmlio.el("StorageClass", upload.storage_class), xmlio.el("PartNumberMarker", marker)]
    if parts:
        head.append(xmlio.el("NextPartNumberMarker", parts[-1].part_number))
    head += [xmlio.el("MaxParts", max_parts), xmlio.el("IsTruncated", str(truncated).lower())]
    if alg:
        head += [xmlio.el("ChecksumAlgorithm", alg),
                 xmlio.el("ChecksumType", upload.checksum_type or checksums.COMPOSITE)]
    await req.respond(200, xmlio.document("ListPartsResult", head + items))


@route("GET", "bucket", "uploads")
async def list_uploads(req: Request) -> None:
    bucket = await bucket_of(req)
    q = req.query
    enc = encoder(req)
    prefix, delimiter = q.get("prefix", ""), q.get("delimiter", "")
    key_marker, id_marker = q.get("key-marker", ""), q.get("upload-id-marker", "")
    max_uploads = min(int_argument(req, "max-uploads", MAX_LIST), MAX_LIST)

    def load() -> tuple[list[MultipartUpload], list[str], bool]:
        with transaction() as session:
            return catalog.list_uploads(session, bucket, prefix, delimiter, key_marker, id_marker, max_uploads)

    uploads, prefixes, truncated = await run(load)
    names = await run(_names, req, uploads) if any(u.owner_id != req.user.user_id for u in uploads) else {}
    head = [xmlio.el("Bucket", bucket.name), xmlio.el("KeyMarker", enc(key_marker)),
            xmlio.el("UploadIdMarker", id_marker)]
    if truncated and uploads:
        head += [xmlio.el("NextKeyMarker", enc(uploads[-1].key)), xmlio.el("NextUploadIdMarker", uploads[-1].upload_id)]
    if delimiter:
        head.append(xmlio.el("Delimiter", enc(delimiter)))
    head += [xmlio.el("Prefix", enc(prefix)), xmlio.el("MaxUploads", max_uploads),
             xmlio.el("IsTruncated", str(truncated).lower())]
    if "encoding-type" in q:
        head.append(xmlio.el("EncodingType", "url"))
    items = [
        f"<Upload>{xmlio.el('Key', enc(u.key))}{xmlio.el('UploadId', u.upload_id)}{_owner(req, u, names)}"
        f"{xmlio.el('StorageClass', u.storage_class)}{xmlio.el('Initiated', xmlio.iso(u.initiated_at))}</Upload>"
        for u in uploads
    ]
    common = [f"<CommonPrefixes>{xmlio.el('Prefix', enc(p))}</CommonPrefixes>" for p in prefixes]
    await req.respond(200, xmlio.document("ListMultipartUploadsResult", head + items + common))

