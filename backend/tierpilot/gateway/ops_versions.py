"""Versioning, object lock and bucket tagging: PutBucketVersioning/GetBucketVersioning, ListObjectVersions,
Put/GetObjectLockConfiguration, Put/GetObjectRetention, Put/GetObjectLegalHold, bucket tagging."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tierpilot.catalog import repository, versions
from tierpilot.catalog import service as catalog
from tierpilot.catalog.models import Object, ObjectVersion
from tierpilot.gateway import auth, xmlio
from tierpilot.gateway.auth import bucket_of
from tierpilot.gateway.body import key_of, read_xml_body
from tierpilot.gateway.common import int_argument, iso8601, parse_iso8601, validate_tags
from tierpilot.gateway.errors import S3Error, malformed_xml
from tierpilot.gateway.http import Request
from tierpilot.gateway.ops_buckets import MAX_KEYS, encoder, owner_element
from tierpilot.gateway.routes import route
from tierpilot.kit.db import transaction
from tierpilot.kit.streaming import run

# versioning ------------------------------------------------------------------------------------------


def _set_versioning(bucket_id: int, state: str) -> None:
    with transaction(write=True) as session:
        versions.set_versioning(session, bucket_id, state)


@route("PUT", "bucket", "versioning")
async def put_bucket_versioning(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    doc = xmlio.parse(await read_xml_body(req), "VersioningConfiguration")
    status = xmlio.child_text(doc, "Status")
    if status is None:
        raise malformed_xml()
    await run(_set_versioning, bucket.id, status.strip())
    auth.buckets.pop(bucket.name)
    await req.respond(200, content_type=None)


@route("GET", "bucket", "versioning")
async def get_bucket_versioning(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    children = [xmlio.el("Status", bucket.versioning)] if bucket.versioning else []
    await req.respond(200, xmlio.document("VersioningConfiguration", children))


def _list_versions(bucket_id: int, prefix: str, delimiter: str, key_marker: str, version_marker: str,
                   max_keys: int) -> versions.VersionListing[repository.ListedVersionForS3]:
    with transaction() as session:
        return versions.list_versions_s3(session, bucket_id, prefix, delimiter, key_marker, version_marker,
                                         max_keys)


def _version_elements(listing: versions.VersionListing[repository.ListedVersionForS3], enc: Any, owner: str
                      ) -> str:
    """The page's <Version> and <DeleteMarker> elements, one string (1,000 a page), as ListObjectsV2's
    <Contents>: LastModified and the bare ETag come from the scan, escaping is decided once for the page."""
    rows = listing.versions
    latest = ["true" if flag else "false" for flag in listing.latest()]
    # encoding-type=url (boto3 asks for it): most pages' keys are all characters it leaves as they are
    if enc is not str and not (enc is xmlio.url_encode and xmlio.url_unchanged("".join([r[0] for r in rows]))):
        rows = [(enc(key), *rest) for key, *rest in rows]
    # one search over the page's text decides: a search per field cost more than the rest
    if xmlio.needs_escape("".join([key + vid + etag + cls for key, vid, _, etag, _, cls, _, _ in rows])):
        rows = [(xmlio.esc(key), xmlio.esc(vid), modified, xmlio.esc(etag), size, xmlio.esc(cls), marker, row_id)
                for key, vid, modified, etag, size, cls, marker, row_id in rows]
    # the ETag's quotes are always escaped, as el() would
    return "".join([f"<DeleteMarker><Key>{key}</Key><VersionId>{vid}</VersionId><IsLatest>{is_latest}</IsLatest>"
                    f"<LastModified>{modified}</LastModified>{owner}</DeleteMarker>" if marker else
                    f"<Version><Key>{key}</Key><VersionId>{vid}</VersionId><IsLatest>{is_latest}</IsLatest>"
                    f"<LastModified>{modified}</LastModified><ETag>&quot;{etag}&quot;</ETag><Size>{size}</Size>"
                    f"<StorageClass>{cls}</StorageClass>{owner}</Version>"
                    for (key, vid, modified, etag, size, cls, marker, _), is_latest in zip(rows, latest, strict=True)])


@route("GET", "bucket", "versions")
async def list_object_versions(req: Request) -> None:
    bucket = await bucket_of(req)
    q = req.query
    enc = encoder(req)
    prefix, delimiter = q.get("prefix", ""), q.get("delimiter", "")
    key_marker, version_marker = q.get("key-marker", ""), q.get("version-id-marker", "")
    max_keys = min(int_argument(req, "max-keys", MAX_KEYS), MAX_KEYS)
    if version_marker and not key_marker:
        raise S3Error("InvalidArgument", "A version-id marker cannot be specified without a key marker.", 400,
                      ArgumentName="version-id-marker", ArgumentValue=version_marker[:64])
    listing = await run(_list_versions, bucket.id, prefix, delimiter, key_marker, version_marker, max_keys)
    owner = owner_element(bucket, req)
    head = [xmlio.el("Name", bucket.name), xmlio.el("Prefix", enc(prefix)), xmlio.el("KeyMarker", enc(key_marker)),
            xmlio.el("VersionIdMarker", version_marker), xmlio.el("MaxKeys", max_keys)]
    if delimiter:
        head.append(xmlio.el("Delimiter", enc(delimiter)))
    head.append(xmlio.el("IsTruncated", str(listing.truncated).lower()))
    if listing.truncated and listing.next_key_marker is not None:
        head.append(xmlio.el("NextKeyMarker", enc(listing.next_key_marker)))
        if listing.next_version_id_marker is not None:
            head.append(xmlio.el("NextVersionIdMarker", listing.next_version_id_marker))
    if "encoding-type" in q:
        head.append(xmlio.el("EncodingType", "url"))
    body = _version_elements(listing, enc, owner)
    prefixes = [f"<CommonPrefixes>{xmlio.el('Prefix', enc(p))}</CommonPrefixes>" for p in listing.prefixes]
    await req.respond(200, xmlio.document("ListVersionsResult", [*head, body, *prefixes]))


# object lock -----------------------------------------------------------------------------------------


def _positive(text: str | None, name: str) -> int | None:
    if text is None:
        return None
    value = text.strip()
    if not value.lstrip("-").isdigit() or len(value) > 12:
        raise malformed_xml()
    number = int(value)
    if number <= 0:
        raise S3Error("InvalidRetentionPeriod", f"Default retention period must be a positive integer value ({name}).",
                      400)
    return number


def _set_lock(bucket_id: int, mode: str | None, days: int | None, years: int | None) -> None:
    with transaction(write=True) as session:
        versions.set_lock_configuration(session, bucket_id, mode, days, years)


@route("PUT", "bucket", "object-lock")
async def put_object_lock_configuration(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    doc = xmlio.parse(await read_xml_body(req), "ObjectLockConfiguration")
    if (xmlio.child_text(doc, "ObjectLockEnabled") or "").strip() != "Enabled":
        raise malformed_xml()
    mode = days = years = None
    for rule in xmlio.children(doc, "Rule"):
        for default in xmlio.children(rule, "DefaultRetention"):
            mode = (xmlio.child_text(default, "Mode") or "").strip() or None
            days = _positive(xmlio.child_text(default, "Days"), "Days")
            years = _positive(xmlio.child_text(default, "Years"), "Years")
            if mode is None or (days is None) == (years is None):
                raise malformed_xml()
    await run(_set_lock, bucket.id, mode, days, years)
    auth.buckets.pop(bucket.name)
    await req.respond(200, content_type=None)


@route("GET", "bucket", "object-lock")
async def get_object_lock_configuration(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    if not bucket.object_lock:
        raise S3Error("ObjectLockConfigurationNotFoundError", "Object Lock configuration does not exist for this "
                      "bucket", 404, BucketName=bucket.name)
    children = [xmlio.el("ObjectLockEnabled", "Enabled")]
    if bucket.lock_default_mode:
        period = (xmlio.el("Days", bucket.lock_default_days) if bucket.lock_default_days
                  else xmlio.el("Years", bucket.lock_default_years))
        children.append(f"<Rule><DefaultRetention>{xmlio.el('Mode', bucket.lock_default_mode)}{period}"
                        "</DefaultRetention></Rule>")
    await req.respond(200, xmlio.document("ObjectLockConfiguration", children))


def _require_lock(bucket_lock: bool) -> None:
    if not bucket_lock:
        raise S3Error("InvalidRequest", "Bucket is missing Object Lock Configuration", 400)


def _version_row(session: Any, bucket_id: int, key: str, version_id: str | None) -> Object | ObjectVersion:
    row: Object | ObjectVersion | None
    if version_id is None:
        row = repository.get_object(session, bucket_id, key, for_update=True)
    else:
        row = versions.find_version(session, bucket_id, key, version_id)
    if row is None or (isinstance(row, ObjectVersion) and row.delete_marker):
        catalog.require_bucket(session, bucket_id)
        if version_id is not None:
            raise S3Error("NoSuchVersion", "The specified version does not exist.", 404, Key=key,
                          VersionId=version_id)
        raise S3Error("NoSuchKey", "The specified key does not exist.", 404, Key=key)
    return row


def _put_retention(bucket_id: int, key: str, version_id: str | None, mode: str | None, until: datetime | None,
                   bypass: bool) -> None:
    with transaction(write=True) as session:
        row = _version_row(session, bucket_id, key, version_id)
        versions.set_retention(session, row, mode, until, bypass_governance=bypass)


def _read_lock(bucket_id: int, key: str, version_id: str | None) -> tuple[str | None, datetime | None, bool]:
    with transaction() as session:
        row = _version_row(session, bucket_id, key, version_id)
        return row.lock_mode, row.lock_until, row.legal_hold


@route("PUT", "object", "retention")
async def put_object_retention(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    _require_lock(bucket.object_lock)
    key = key_of(req)
    doc = xmlio.parse(await read_xml_body(req), "Retention")
    mode = (xmlio.child_text(doc, "Mode") or "").strip() or None
    until_text = xmlio.child_text(doc, "RetainUntilDate")
    until = parse_iso8601(until_text, "RetainUntilDate") if until_text else None
    if (mode is None) != (until is None):
        raise malformed_xml()
    bypass = (req.header("x-amz-bypass-governance-retention") or "").strip().lower() == "true"
    await run(_put_retention, bucket.id, key, req.query.get("versionId"), mode, until, bypass)
    await req.respond(200, content_type=None)


@route("GET", "object", "retention")
async def get_object_retention(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    _require_lock(bucket.object_lock)
    mode, until, _hold = await run(_read_lock, bucket.id, key_of(req), req.query.get("versionId"))
    if mode is None or until is None:
        raise S3Error("NoSuchObjectLockConfiguration", "The specified object does not have a ObjectLock "
                      "configuration", 404)
    await req.respond(200, xmlio.document("Retention", [xmlio.el("Mode", mode),
                                                        xmlio.el("RetainUntilDate", iso8601(until))]))


def _put_hold(bucket_id: int, key: str, version_id: str | None, on: bool) -> None:
    with transaction(write=True) as session:
        versions.set_legal_hold(session, _version_row(session, bucket_id, key, version_id), on)


@route("PUT", "object", "legal-hold")
async def put_object_legal_hold(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    _require_lock(bucket.object_lock)
    doc = xmlio.parse(await read_xml_body(req), "LegalHold")
    status = (xmlio.child_text(doc, "Status") or "").strip()
    if status not in ("ON", "OFF"):
        raise malformed_xml()
    await run(_put_hold, bucket.id, key_of(req), req.query.get("versionId"), status == "ON")
    await req.respond(200, content_type=None)


@route("GET", "object", "legal-hold")
async def get_object_legal_hold(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    _require_lock(bucket.object_lock)
    _mode, _until, hold = await run(_read_lock, bucket.id, key_of(req), req.query.get("versionId"))
    await req.respond(200, xmlio.document("LegalHold", [xmlio.el("Status", "ON" if hold else "OFF")]))


# bucket tagging --------------------------------------------------------------------------------------


def _set_bucket_tags(bucket_id: int, tags: dict[str, Any] | None) -> None:
    with transaction(write=True) as session:
        catalog.require_bucket(session, bucket_id)
        repository.set_bucket_settings(session, bucket_id, tags=tags)


@route("PUT", "bucket", "tagging")
async def put_bucket_tagging(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    doc = xmlio.parse(await read_xml_body(req), "Tagging")
    pairs = [(xmlio.required_text(tag, "Key"), xmlio.child_text(tag, "Value") or "")
             for tag_set in xmlio.children(doc, "TagSet") for tag in xmlio.children(tag_set, "Tag")]
    if len(pairs) > 50:
        raise S3Error("BadRequest", "Bucket tag count cannot be greater than 50", 400)
    tags = validate_tags(pairs, limit=50)
    await run(_set_bucket_tags, bucket.id, tags)
    auth.buckets.pop(bucket.name)
    await req.respond(204, content_type=None)


@route("GET", "bucket", "tagging")
async def get_bucket_tagging(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    if bucket.tags is None:
        raise S3Error("NoSuchTagSet", "The TagSet does not exist", 404, BucketName=bucket.name)
    tags = "".join(f"<Tag>{xmlio.el('Key', k)}{xmlio.el('Value', v)}</Tag>" for k, v in bucket.tags.items())
    await req.respond(200, xmlio.document("Tagging", [f"<TagSet>{tags}</TagSet>"]))


@route("DELETE", "bucket", "tagging")
async def delete_bucket_tagging(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    await run(_set_bucket_tags, bucket.id, None)
    auth.buckets.pop(bucket.name)
    await req.respond(204, content_type=None)
