"""Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation, listings."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tierpilot.audit.service import Actor
from tierpilot.catalog import service as catalog
from tierpilot.catalog import store
from tierpilot.catalog.models import Bucket
from tierpilot.gateway import auth, xmlio
from tierpilot.gateway.auth import bucket_of
from tierpilot.gateway.body import read_all
from tierpilot.gateway.common import int_argument
from tierpilot.gateway.errors import S3Error, invalid_argument
from tierpilot.gateway.http import Request
from tierpilot.gateway.routes import route
from tierpilot.kit.db import transaction
from tierpilot.kit.streaming import run
from tierpilot.sharing import gate as sharing

SPACE_HEADERS = ("x-tierpilot-space-bytes", "x-tierpilot-space-start", "x-tierpilot-space-end")
TIER_HEADER = "x-tierpilot-tier"
MAX_KEYS = 1000


def owner_element(bucket: Bucket, req: Request) -> str:
    name = req.user.username if bucket.owner_id == req.user.user_id else str(bucket.owner_id)
    return f"<Owner>{xmlio.el('ID', bucket.owner_id)}{xmlio.el('DisplayName', name)}</Owner>"


# buckets ---------------------------------------------------------------------------------------------


def _list_buckets(user_id: int, is_admin: bool) -> list[Bucket]:
    with transaction() as session:
        return catalog.list_buckets(session, user_id, is_admin)


@route("GET", "service")
async def list_buckets(req: Request) -> None:
    rows = await run(_list_buckets, req.user.user_id, req.user.is_admin)
    prefix = req.query.get("prefix", "")
    token = req.query.get("continuation-token")
    after = catalog.decode_marker(token) if token else ""
    rows = [b for b in rows if b.name.startswith(prefix) and b.name > after]
    max_buckets = min(int_argument(req, "max-buckets", 10000, low=1), 10000)
    truncated = len(rows) > max_buckets
    rows = rows[:max_buckets]
    items = "".join(
        f"<Bucket>{xmlio.el('Name', b.name)}{xmlio.el('CreationDate', xmlio.iso(b.created_at))}"
        f"{xmlio.el('BucketRegion', b.region)}</Bucket>"
        for b in rows
    )
    owner = f"<Owner>{xmlio.el('ID', req.user.user_id)}{xmlio.el('DisplayName', req.user.username)}</Owner>"
    tail = [xmlio.el("ContinuationToken", catalog.encode_marker(rows[-1].name))] if truncated else []
    if "prefix" in req.query:
        tail.append(xmlio.el("Prefix", prefix))
    await req.respond(200, xmlio.document("ListAllMyBucketsResult", [owner, f"<Buckets>{items}</Buckets>", *tail]))


def _space_time(req: Request, name: str) -> datetime | None:
    value = req.header(name)
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise invalid_argument(f"{name} must be an ISO 8601 time, e.g. 2026-12-01T00:00:00Z", name, value) from None
    if moment.tzinfo is None:
        raise invalid_argument(f"{name} must carry a time zone (Z for UTC)", name, value)
    return moment


def _create_bucket(owner_id: int, name: str, tier: str | None, region: str | None, space: dict[str, Any],
                   object_lock: bool = False) -> Bucket:
    with transaction(write=True) as session:
        return catalog.create_bucket(session, owner_id=owner_id, name=name, tier_name=tier, region=region,
                                     object_lock=object_lock, **space)


@route("PUT", "bucket")
async def create_bucket(req: Request) -> None:
    shared = await sharing.requested_bucket_acl(req.headers, req.user.user_id)
    body = await read_all(req.receive, 64 * 1024)
    region = None
    if body.strip():
        doc = xmlio.parse(body, "CreateBucketConfiguration")
        region = (xmlio.child_text(doc, "LocationConstraint") or "").strip() or None
    raw_bytes = req.header(SPACE_HEADERS[0])
    if raw_bytes is not None and not (raw_bytes.strip().isascii() and raw_bytes.strip().isdigit()
                                      and int(raw_bytes) < 2**63):
        raise invalid_argument("x-tierpilot-space-bytes must be a number of bytes", SPACE_HEADERS[0], raw_bytes)
    space = {"space_bytes": int(raw_bytes) if raw_bytes is not None else None,
             "space_start": _space_time(req, SPACE_HEADERS[1]), "space_end": _space_time(req, SPACE_HEADERS[2])}
    lock = (req.header("x-amz-bucket-object-lock-enabled") or "").strip().lower() == "true"
    bucket = await run(_create_bucket, req.user.user_id, req.bucket, req.header(TIER_HEADER), region, space, lock)
    await sharing.record_bucket_acl(bucket, shared)
    auth.buckets.put(bucket.name, bucket)
    await req.respond(200, headers=[(b"location", f"/{bucket.name}".encode())], content_type=None)


@route("HEAD", "bucket")
async def head_bucket(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    await req.respond(200, headers=[(b"x-amz-bucket-region", bucket.region.encode())], content_type=None)


@route("DELETE", "bucket")
async def delete_bucket(req: Request) -> None:
    bucket = await bucket_of(req)
    client = (req.scope.get("client") or ("",))[0]
    try:
        await run(store.delete_bucket, bucket, Actor(req.user.user_id, req.user.username, client))
    finally:
        auth.buckets.pop(bucket.name)
    await req.respond(204, content_type=None)


@route("GET", "bucket", "location")
async def get_bucket_location(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    region = "" if bucket.region == "us-east-1" else bucket.region
    await req.respond(200, f'{xmlio.DECLARATION}<LocationConstraint xmlns="{xmlio.NS}">{xmlio.esc(region)}'
                           "</LocationConstraint>".encode())


# configurations tierpilot does not keep: answered as S3 answers a bucket without them
_ABSENT = {
    "encryption": ("ServerSideEncryptionConfigurationNotFoundError",
                   "The server side encryption configuration was not found"),
    "website": ("NoSuchWebsiteConfiguration", "The specified bucket does not have a website configuration"),
    "replication": ("ReplicationConfigurationNotFoundError", "The replication configuration was not found"),
}
_EMPTY = {
    "logging": ("BucketLoggingStatus", []),
    "requestPayment": ("RequestPaymentConfiguration", ["<Payer>BucketOwner</Payer>"]),
    "accelerate": ("AccelerateConfiguration", []),
}


def _absent_handler(code: str, message: str) -> Any:
    async def handler(req: Request) -> None:
        await bucket_of(req, confirm=True)
        raise S3Error(code, message, 404, BucketName=req.bucket)

    return handler


def _empty_handler(root: str, children: list[str]) -> Any:
    async def handler(req: Request) -> None:
        await bucket_of(req, confirm=True)
        await req.respond(200, xmlio.document(root, children))

    return handler


for _sub, (_code, _message) in _ABSENT.items():
    route("GET", "bucket", _sub)(_absent_handler(_code, _message))
for _sub, (_root, _children) in _EMPTY.items():
    route("GET", "bucket", _sub)(_empty_handler(_root, _children))


# listings --------------------------------------------------------------------------------------------


def _max_keys(req: Request, name: str = "max-keys") -> int:
    return min(int_argument(req, name, MAX_KEYS), MAX_KEYS)


def encoder(req: Request) -> Any:
    enc = req.query.get("encoding-type")
    if enc is None:
        return str
    if enc.lower() != "url":
        raise invalid_argument("Invalid Encoding Method specified in Request", "encoding-type", enc)
    return xmlio.url_encode


def _list(bucket_id: int, prefix: str, delimiter: str, marker: str, max_keys: int
          ) -> catalog.Listing[catalog.ListedForS3]:
    with transaction() as session:
        return catalog.list_objects_s3(session, bucket_id, prefix, delimiter, marker, max_keys)


def _contents(objects: list[catalog.ListedForS3], enc: Any, owner: str) -> str:
    """The page's <Contents> elements, one string (this runs over 1,000 keys a page)."""
    rows = objects
    # encoding-type=url (boto3 asks for it): most pages' keys are all characters it leaves as they are
    if enc is not str and not (enc is xmlio.url_encode and xmlio.url_unchanged("".join([r[0] for r in rows]))):
        rows = [(enc(key), modified, etag, size, cls) for key, modified, etag, size, cls in rows]
    # one search over the page's text decides: most pages have nothing to escape, and a search per field cost
    # more than the rest of the rendering; LastModified and the bare ETag come from the scan
    if xmlio.needs_escape("".join([key + etag + cls for key, _, etag, _, cls in rows])):
        rows = [(xmlio.esc(key), modified, xmlio.esc(etag), size, xmlio.esc(cls))
                for key, modified, etag, size, cls in rows]
    # the ETag's quotes are always escaped, as el() would
    return "".join([f"<Contents><Key>{key}</Key><LastModified>{modified}</LastModified><ETag>&quot;{etag}&quot;"
                    f"</ETag><Size>{size}</Size><StorageClass>{cls}</StorageClass>{owner}</Contents>"
                    for key, modified, etag, size, cls in rows])


def _prefixes(listing: catalog.Listing[catalog.ListedForS3], enc: Any) -> list[str]:
    return [f"<CommonPrefixes>{xmlio.el('Prefix', enc(p))}</CommonPrefixes>" for p in listing.prefixes]


@route("GET", "bucket")
async def list_objects(req: Request) -> None:
    bucket = await bucket_of(req)
    q = req.query
    enc = encoder(req)
    prefix, delimiter = q.get("prefix", ""), q.get("delimiter", "")
    max_keys = _max_keys(req)
    v2 = q.get("list-type") == "2"
    if "list-type" in q and not v2:
        raise invalid_argument("Invalid List Type specified in Request", "list-type", q["list-type"])
    if v2:
        token = q.get("continuation-token")
        start_after = q.get("start-after", "")
        marker = catalog.decode_marker(token) if token else start_after  # an empty token: the first page
    else:
        marker = q.get("marker", "")
    listing = await run(_list, bucket.id, prefix, delimiter, marker, max_keys)
    head = [xmlio.el("Name", bucket.name), xmlio.el("Prefix", enc(prefix))]
    body: list[str]
    if v2:
        owner = owner_element(bucket, req) if q.get("fetch-owner") == "true" else None
        head += [xmlio.el("KeyCount", len(listing.objects) + len(listing.prefixes)), xmlio.el("MaxKeys", max_keys)]
        if delimiter:
            head.append(xmlio.el("Delimiter", enc(delimiter)))
        head.append(xmlio.el("IsTruncated", str(listing.truncated).lower()))
        if "continuation-token" in q:
            head.append(xmlio.el("ContinuationToken", q["continuation-token"]))
        if listing.truncated and listing.next_marker is not None:
            head.append(xmlio.el("NextContinuationToken", catalog.encode_marker(listing.next_marker)))
        if "start-after" in q:
            head.append(xmlio.el("StartAfter", enc(q["start-after"])))
    else:
        owner = owner_element(bucket, req)
        head += [xmlio.el("Marker", enc(marker)), xmlio.el("MaxKeys", max_keys)]
        if delimiter:
            head.append(xmlio.el("Delimiter", enc(delimiter)))
        head.append(xmlio.el("IsTruncated", str(listing.truncated).lower()))
        if listing.truncated and delimiter and listing.next_marker is not None:
            head.append(xmlio.el("NextMarker", enc(listing.next_marker)))
    if "encoding-type" in q:
        head.append(xmlio.el("EncodingType", "url"))
    body = [*head, _contents(listing.objects, enc, owner or ""), *_prefixes(listing, enc)]
    await req.respond(200, xmlio.document("ListBucketResult", body))
