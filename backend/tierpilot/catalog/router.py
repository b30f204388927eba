"""/api/buckets: the Browser page's buckets, folders, object details, uploads and downloads.

Members see and touch their own buckets, admins all; in a bucket shared with a member the API allows what its
sharing allows (else 403 naming the S3 action), and anyone else's bucket answers as a missing one (404).
Uploads and downloads stream through the same data path as the gateway (``catalog.store``): bytes to a new
locator, then one catalog commit.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Annotated, Any
from urllib.parse import quote

import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session
from starlette.datastructures import UploadFile

from tierpilot.audit import service as audit
from tierpilot.auth.deps import CurrentUser, SessionDep, client_of, get_current_user
from tierpilot.auth.models import User
from tierpilot.catalog import cors, projects, repository, service, store, versions
from tierpilot.catalog.errors import InvalidInput, NoSuchKey, PreconditionFailed
from tierpilot.catalog.models import Bucket, Object
from tierpilot.catalog.schemas import (
    BucketCreate,
    BucketOut,
    BucketSettings,
    CorsRuleIn,
    CorsUpdate,
    FolderListing,
    LockUpdate,
    ObjectDetail,
    ObjectSummary,
    UploadOut,
    VersioningUpdate,
    VersionOut,
)
from tierpilot.drivers import registry
from tierpilot.drivers.registry import TierSpec
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import Conflict, Invalid
from tierpilot.kit.settings import get_settings

router = APIRouter(prefix="/buckets", tags=["catalog"])


def _reader() -> Iterator[Session]:
    """A session that does not take SQLite's write lock: for handlers that write through
    ``catalog.store`` (its own short transactions), so an upload never holds the lock while bytes flow."""
    with transaction() as session:
        yield session


ReaderSession = Annotated[Session, Depends(_reader)]


def _store_user(request: Request, session: ReaderSession) -> User:
    return get_current_user(request, session)


StoreUser = Annotated[User, Depends(_store_user)]

READ_CHUNK = 1 << 20
MAX_UPLOAD = 5 * 1024**3


def _bucket_for(session: Any, name: str, user: User, action: str, request: Request, *, key: str | None = None,
                prefix: str | None = None) -> Bucket:
    """The bucket for its owner and admins; for anyone else only where its sharing allows ``action``, the S3
    action the request amounts to, as the gateway would decide it (else 403 or 404: ``service.api_bucket``)."""
    shared = service.SharedRequest(user.id, user.username, action, key, prefix, client_of(request),
                                   request.url.scheme == "https")
    return service.api_bucket(session, name, user, shared)


def _tier_names() -> dict[int, TierSpec]:
    return {t.id: t for t in registry.tiers.all()}


def _summary(obj: Object | repository.ListedObject, tiers: dict[int, TierSpec]) -> ObjectSummary:
    tier = tiers.get(obj.tier_id)
    return ObjectSummary(key=obj.key, size=obj.size, etag=obj.etag, storage_class=obj.storage_class,
                         tier=tier.name if tier else str(obj.tier_id), tier_offline=bool(tier and tier.offline),
                         last_modified=obj.last_modified, restore_state=obj.restore_state)


def _bucket_out(bucket: Bucket, owner: str, tier: str, project: str | None = None) -> BucketOut:
    return BucketOut(name=bucket.name, owner=owner, project=project, tier=tier, region=bucket.region,
                     object_count=bucket.object_count, used_bytes=bucket.used_bytes, space_bytes=bucket.space_bytes,
                     space_start=bucket.space_start, space_end=bucket.space_end, created_at=bucket.created_at)


@router.get("", response_model=list[BucketOut])
def list_buckets(session: SessionDep, user: CurrentUser,
                 archived: Annotated[bool, Query(description="only buckets holding objects on an offline "
                                                             "(archive) tier: what a restore can start from")] = False,
                 ) -> list[BucketOut]:
    """Buckets with their object count, stored bytes and project (own buckets and those of the caller's projects;
    admins see all)."""
    directory = projects.directory
    member_of = directory.visible(session, user.id) if directory is not None and not user.is_admin else []
    rows = repository.buckets_with_owners(session, None if user.is_admin else user.id, member_of)
    names = directory.names(session, {b.project_id for b, _ in rows if b.project_id}) if directory else {}
    tiers = _tier_names()
    if archived:
        offline = {t.id for t in tiers.values() if t.offline}
        rows = [(b, owner) for b, owner in rows
                if any(n > 0 for t, (_b, n) in repository.usage_by_tier(session, b.id).items() if t in offline)]
    return [_bucket_out(b, owner, tiers[b.tier_id].name if b.tier_id in tiers else "",
                        names.get(b.project_id) if b.project_id else None) for b, owner in rows]


@router.post("", response_model=BucketOut, status_code=status.HTTP_201_CREATED)
def create_bucket(body: BucketCreate, session: SessionDep, user: CurrentUser) -> BucketOut:
    bucket = service.create_bucket(session, owner_id=user.id, name=body.name, tier_name=body.tier,
                                   space_bytes=body.space_bytes, space_start=body.space_start,
                                   space_end=body.space_end)
    names = projects.directory.names(session, [bucket.project_id]) if projects.directory and bucket.project_id else {}
    return _bucket_out(bucket, user.username, registry.tiers.get(bucket.tier_id).name,
                       names.get(bucket.project_id or 0))


@router.delete("/{name}", status_code=status.HTTP_204_NO_CONTENT)
def delete_bucket(name: str, request: Request, session: ReaderSession, user: StoreUser) -> None:
    bucket = service.owned_bucket(session, name, user, "deleting it")
    actor = audit.Actor(user.id, user.username, request.client.host if request.client else "")
    store.delete_bucket(bucket, actor)  # its own transaction, then the tier clean-up


@router.get("/{name}/objects", response_model=FolderListing)
def list_objects(
    name: str, request: Request, session: SessionDep, user: CurrentUser,
    prefix: str = "",
    delimiter: Annotated[str, Query(max_length=16)] = "/",
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> FolderListing:
    """One page of a folder: its sub-folders (common prefixes) and objects, in key order."""
    bucket = _bucket_for(session, name, user, "s3:ListBucket", request, prefix=prefix)
    marker = service.decode_marker(cursor) if cursor else ""
    page = service.list_objects(session, bucket.id, prefix, delimiter, marker, limit)
    tiers = _tier_names()
    return FolderListing(
        bucket=bucket.name, prefix=prefix, delimiter=delimiter, folders=page.prefixes,
        objects=[_summary(o, tiers) for o in page.objects], truncated=page.truncated,
        next_cursor=service.encode_marker(page.next_marker) if page.truncated and page.next_marker else None,
    )


def _object(session: Any, bucket: Bucket, key: str) -> Object:
    obj = repository.get_object(session, bucket.id, key)
    if obj is None:
        raise NoSuchKey(f"no object {key!r} in bucket {bucket.name!r}", Key=key)
    return obj


@router.get("/{name}/object", response_model=ObjectDetail)
def object_detail(name: str, key: str, request: Request, session: SessionDep, user: CurrentUser) -> ObjectDetail:
    """Everything the catalog knows about one object: tier, class, size, checksum, restore state."""
    bucket = _bucket_for(session, name, user, "s3:GetObject", request, key=key)
    obj = _object(session, bucket, key)
    tiers = _tier_names()
    summary = _summary(obj, tiers)
    return ObjectDetail(
        **summary.model_dump(), bucket=bucket.name, content_type=obj.content_type,
        checksum_algorithm=obj.checksum_algorithm, checksum_value=obj.checksum_value, parts_count=obj.parts_count,
        user_metadata=dict(obj.user_metadata or {}), headers=dict(obj.headers or {}), tags=dict(obj.tags or {}),
        readable=not summary.tier_offline or obj.restore_state == "restored",
        created_at=obj.created_at, last_access_at=obj.last_access_at, restore_speed=obj.restore_speed,
        restore_expiry=obj.restore_expiry, s3_uri=f"s3://{bucket.name}/{obj.key}",
        gateway_url=get_settings().gateway_url,
    )


@router.delete("/{name}/object", status_code=status.HTTP_204_NO_CONTENT)
def delete_object(name: str, key: str, request: Request, session: ReaderSession, user: StoreUser) -> None:
    store.delete_objects(_bucket_for(session, name, user, "s3:DeleteObject", request, key=key), [key])


def _content_disposition(key: str) -> str:
    filename = key.rstrip("/").rsplit("/", 1)[-1] or "download"
    ascii_name = filename.encode("ascii", "replace").decode().replace('"', "_")
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


@router.get("/{name}/object/content", response_class=StreamingResponse)
def download(name: str, key: str, request: Request, session: SessionDep, user: CurrentUser) -> StreamingResponse:
    """The object's bytes as a download (archived objects need a completed restore: 403)."""
    bucket = _bucket_for(session, name, user, "s3:GetObject", request, key=key)
    obj = _object(session, bucket, key)
    chunks: Iterator[bytes] = store.open_object(obj) if obj.size else iter(())
    store.access_log.note(obj.id)
    headers = {"content-length": str(obj.size), "etag": f'"{obj.etag}"',
               "content-disposition": _content_disposition(key)}
    return StreamingResponse(chunks, media_type=obj.content_type, headers=headers)


def _may_put(bucket: Bucket, key: str, user: User, request: Request) -> None:
    if not service.may_access(bucket, user.id, user.is_admin):
        with transaction() as session:
            _bucket_for(session, bucket.name, user, "s3:PutObject", request, key=key)


def _spooled_chunks(upload: UploadFile) -> Iterator[bytes]:
    while True:
        data = upload.file.read(READ_CHUNK)
        if not data:
            return
        yield data


@router.post("/{name}/objects", response_model=UploadOut, status_code=status.HTTP_201_CREATED)
async def upload(request: Request, name: str, user: StoreUser, key: str | None = None,
                 storage_class: str | None = None) -> UploadOut:
    """Store an object: a multipart form (``file``, optional ``key`` or ``prefix`` fields) from the
    browser, or the raw request body with ``?key=`` (streamed, never held in memory)."""
    def prepare() -> tuple[Bucket, TierSpec, str]:
        with transaction() as session:
            bucket = _bucket_for(session, name, user, "s3:PutObject", request, key=key)
            session.expunge(bucket)
        tier, cls = service.tier_for_class(registry.tiers.all(), bucket.tier_id, storage_class)
        return bucket, tier, cls

    bucket, tier, cls = await anyio.to_thread.run_sync(prepare)
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        form = await request.form(max_files=1, max_part_size=1024 * 1024)
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise InvalidInput("the form needs a `file` field")
        form_key = form.get("key")
        prefix = form.get("prefix")
        target = key or (form_key if isinstance(form_key, str) and form_key else None)
        if target is None:
            target = (prefix if isinstance(prefix, str) else "") + (file.filename or "upload")
        service.validate_key(target)
        if not key:  # the key came with the form: a grantee's write is decided for it (owners: no statement)
            await anyio.to_thread.run_sync(_may_put, bucket, target, user, request)
        spec = store.NewObject(tier=tier, storage_class=cls, content_type=file.content_type)
        size = file.size
        if size is not None and size > MAX_UPLOAD:
            raise InvalidInput("objects are at most 5 GiB; use the gateway's multipart upload for larger ones",
                               "EntityTooLarge")
        await anyio.to_thread.run_sync(store.check_space, bucket, size, None, target)
        put = functools.partial(store.put_object, bucket, target, _spooled_chunks(file), spec)
        obj = await anyio.to_thread.run_sync(put)
    else:
        if not key:
            raise InvalidInput("give the object key as ?key= (or post a multipart form)")
        service.validate_key(key)
        length = request.headers.get("content-length")
        expected = int(length) if length and length.isdigit() else None
        if expected is not None and expected > MAX_UPLOAD:
            raise InvalidInput("objects are at most 5 GiB", "EntityTooLarge")
        from tierpilot.kit.flow import BestEffortFlow
        from tierpilot.kit.streaming import Inbound

        await anyio.to_thread.run_sync(store.check_space, bucket, expected, None, key)
        spec = store.NewObject(tier=tier, storage_class=cls, content_type=content_type or None)
        inbound = Inbound(request.receive, BestEffortFlow())
        obj = await inbound.drive(store.put_object, bucket, key, inbound.blocks(), spec)
    return UploadOut(key=obj.key, size=obj.size, etag=obj.etag, storage_class=obj.storage_class)


# folders ---------------------------------------------------------------------------------------------

FOLDER_CONTENT_TYPE = "application/x-directory"


class FolderCreate(BaseModel):
    prefix: str = Field(min_length=1, max_length=1024,
                        description="the folder's full key prefix, e.g. `runs/2026/`; a missing final '/' is added")


class FolderOut(BaseModel):
    key: str = Field(description="the zero-byte marker object that makes the folder visible while empty")


def folder_marker(prefix: str) -> str:
    """The marker key S3 consoles write for a folder, or Invalid naming `prefix`."""
    key = prefix if prefix.endswith("/") else prefix + "/"
    if key.startswith("/") or "//" in key:
        raise Invalid("prefix: folder names must not be empty (no leading '/' and no '//')")
    if any(c < " " or c == "\x7f" for c in key):
        raise Invalid("prefix: folder names must not contain control characters")
    try:
        service.validate_key(key)
    except InvalidInput as exc:
        raise Invalid(f"prefix: {exc.message}") from None
    return key


@router.post("/{name}/folders", response_model=FolderOut, status_code=status.HTTP_201_CREATED,
             responses={409: {"description": "an object with the folder's marker key exists"}})
def create_folder(name: str, body: FolderCreate, request: Request, session: ReaderSession,
                  user: StoreUser) -> FolderOut:
    """Create an empty folder: the zero-byte `prefix/` object S3 consoles use, on the bucket's tier."""
    key = folder_marker(body.prefix)
    bucket = _bucket_for(session, name, user, "s3:PutObject", request, key=key)
    tier, cls = service.tier_for_class(registry.tiers.all(), bucket.tier_id, None)
    spec = store.NewObject(tier=tier, storage_class=cls, content_type=FOLDER_CONTENT_TYPE)
    try:
        store.put_object(bucket, key, iter(()), spec, if_none_match="*")
    except PreconditionFailed:
        raise Conflict(f"prefix: a folder {key!r} already exists in {bucket.name!r}") from None
    return FolderOut(key=key)


# versions and bucket settings ------------------------------------------------------------------------


def _settings(bucket: Bucket) -> BucketSettings:
    rules = cors.rules_of(bucket.cors)
    return BucketSettings(versioning=bucket.versioning, object_lock=bucket.object_lock,
                          default_retention_mode=bucket.lock_default_mode,
                          default_retention_days=bucket.lock_default_days,
                          default_retention_years=bucket.lock_default_years,
                          cors=[CorsRuleIn(**r.dump()) for r in rules] if rules is not None else None)


@router.get("/{name}/settings", response_model=BucketSettings)
def bucket_settings(name: str, session: SessionDep, user: CurrentUser) -> BucketSettings:
    """Versioning and object lock of a bucket."""
    return _settings(service.owned_bucket(session, name, user, "reading its settings"))


@router.put("/{name}/versioning", response_model=BucketSettings)
def put_versioning(name: str, body: VersioningUpdate, session: SessionDep, user: CurrentUser) -> BucketSettings:
    """Enable or suspend versioning (a bucket with object lock stays enabled)."""
    bucket = service.owned_bucket(session, name, user, "changing its versioning")
    versions.set_versioning(session, bucket.id, body.status)
    session.refresh(bucket)
    return _settings(bucket)


@router.put("/{name}/lock", response_model=BucketSettings)
def put_lock(name: str, body: LockUpdate, session: SessionDep, user: CurrentUser) -> BucketSettings:
    """The default retention of a bucket created with object lock (409 for a bucket without lock)."""
    bucket = service.owned_bucket(session, name, user, "changing its object lock")
    versions.set_lock_configuration(session, bucket.id, body.mode, body.days, body.years)
    session.refresh(bucket)
    return _settings(bucket)


@router.put("/{name}/cors", response_model=BucketSettings)
def put_cors(name: str, body: CorsUpdate, session: SessionDep, user: CurrentUser) -> BucketSettings:
    """Replace the bucket's CORS rules (checked as S3's PutBucketCors checks them: 422 naming the rule)."""
    bucket = service.owned_bucket(session, name, user, "changing its CORS rules")
    cors.set_rules(session, bucket.id, [cors.Rule(tuple(r.origins), tuple(r.methods), tuple(r.headers),
                                                  tuple(r.expose), r.max_age, r.id) for r in body.rules])
    session.refresh(bucket)
    return _settings(bucket)


@router.delete("/{name}/cors", response_model=BucketSettings)
def delete_cors(name: str, session: SessionDep, user: CurrentUser) -> BucketSettings:
    """Remove the bucket's CORS configuration (browsers' cross-origin requests are refused again)."""
    bucket = service.owned_bucket(session, name, user, "changing its CORS rules")
    cors.set_rules(session, bucket.id, None)
    session.refresh(bucket)
    return _settings(bucket)


@router.get("/{name}/versions", response_model=list[VersionOut])
def object_versions(name: str, key: str, request: Request, session: SessionDep,
                    user: CurrentUser) -> list[VersionOut]:
    """Every version of one object and its delete markers, newest first (at most 1,000)."""
    bucket = _bucket_for(session, name, user, "s3:ListBucketVersions", request, prefix=key)
    service.validate_key(key)
    listing = versions.list_versions(session, bucket.id, prefix=key, max_keys=1000)
    return [VersionOut(version_id=row.version_id, is_latest=latest,
                       delete_marker=row.delete_marker, size=row.size,
                       etag=row.etag, storage_class=row.storage_class, last_modified=row.last_modified,
                       lock_mode=row.lock_mode, lock_until=row.lock_until, legal_hold=row.legal_hold)
            for row, latest in listing.entries if row.key == key]
