"""Catalog rules: buckets, object records, listings and multipart bookkeeping.

Services flush, never commit: the caller's ``transaction()`` (gateway, store) or the API's session
dependency commits. Moving bytes to and from tiers is ``catalog.store``'s job.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import re
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar, cast

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from tierpilot.catalog import events as object_events
from tierpilot.catalog import hotread, projects, repository, versions
from tierpilot.catalog.errors import (
    AccessDenied,
    BucketAlreadyExists,
    BucketAlreadyOwnedByYou,
    BucketNotEmpty,
    CatalogError,
    InvalidInput,
    NoSuchBucket,
    NoSuchKey,
    NoSuchUpload,
    PreconditionFailed,
    QuotaExceeded,
    invalid_bucket_name,
    invalid_storage_class,
)
from tierpilot.catalog.models import Bucket, MultipartUpload, Object, UploadPart
from tierpilot.catalog.versions import Blob
from tierpilot.drivers import registry
from tierpilot.drivers.registry import TierLike
from tierpilot.kit.db import utcnow
from tierpilot.kit.settings import get_settings

MAX_KEY_BYTES = 1024
MIN_PART_SIZE = 5 * 1024 * 1024
MAX_PARTS = 10000
DEFAULT_STORAGE_CLASS = "STANDARD"
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
# S3's general purpose bucket naming rules reserve these for punycode, its own services and access points
RESERVED_BUCKET_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
RESERVED_BUCKET_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


# what a listing shows of an object (the gateway and the API render it)
ListedObject = repository.ListedObject
ListedForS3 = repository.ListedForS3
# what a listing shows of a key: the dashboard's columns, or the gateway's with LastModified as S3's text
Shown = TypeVar("Shown", repository.ListedObject, repository.ListedForS3)


@dataclass
class Listing(Generic[Shown]):
    """One page of a hierarchical listing; ``next_marker`` resumes it (a key or a common prefix)."""

    objects: list[Shown] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    truncated: bool = False
    next_marker: str | None = None


# names -----------------------------------------------------------------------------------------------


def validate_bucket_name(name: str) -> None:
    if not _BUCKET_NAME.fullmatch(name):
        raise invalid_bucket_name("Bucket names are 3-63 characters of lower-case letters, digits, '.' and '-', "
                                  "starting and ending with a letter or digit")
    if ".." in name or ".-" in name or "-." in name:
        raise invalid_bucket_name("Bucket names must not contain '..', '.-' or '-.'")
    if name.startswith(RESERVED_BUCKET_PREFIXES) or name.endswith(RESERVED_BUCKET_SUFFIXES):
        raise invalid_bucket_name("Bucket names must not start with xn--, sthree- or amzn-s3-demo-, nor end with "
                                  "-s3alias, --ol-s3, .mrap, --x-s3 or --table-s3 (reserved by S3)")
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        return
    raise invalid_bucket_name("Bucket names must not look like an IP address")


def validate_key(key: str) -> None:
    """Keys are any UTF-8 up to 1024 bytes, except NUL and '.'/'..' path segments (they cannot round-trip
    through URL normalisation and file-system clients, so storing them would strand the object)."""
    # checked on every request that names a key: an ASCII key (nearly all) is its own UTF-8, and a key
    # without "/." has no dot segment but a leading one
    if not key:
        raise InvalidInput("Object key must not be empty", "InvalidArgument")
    ascii_key = key.isascii()
    if (len(key) if ascii_key else len(key.encode("utf-8", "surrogatepass"))) > MAX_KEY_BYTES:
        raise InvalidInput("Your key is too long", "KeyTooLongError", MaxSizeAllowed=str(MAX_KEY_BYTES))
    if "\x00" in key:
        raise InvalidInput("Object key must not contain the NUL character", "InvalidArgument")
    if (key[0] == "." or "/." in key) and any(seg in (".", "..") for seg in key.split("/")):
        raise InvalidInput("Object key must not contain '.' or '..' path segments", "InvalidArgument")
    if not ascii_key:
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput("Object key must be valid UTF-8", "InvalidArgument") from None


def new_locator(bucket: str, key: str) -> str:
    """A fresh blob name for one write of ``key``; unique so an overwrite never touches live bytes."""
    return f"{bucket}/{key}~{uuid.uuid4().hex}"


def multipart_etag(part_md5_hexes: Sequence[str]) -> str:
    """S3's ETag of a multipart object: MD5 of the parts' binary MD5s, then "-" and the part count."""
    joined = b"".join(bytes.fromhex(h.strip('"')) for h in part_md5_hexes)
    return f"{hashlib.md5(joined, usedforsecurity=False).hexdigest()}-{len(part_md5_hexes)}"


def encode_marker(marker: str) -> str:
    """An opaque continuation token for a listing position (a key or a common prefix)."""
    return base64.urlsafe_b64encode(b"1:" + marker.encode("utf-8")).decode()


def decode_marker(token: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(token.encode() + b"=" * (-len(token) % 4))
        if not raw.startswith(b"1:"):
            raise ValueError(token)
        return raw[2:].decode("utf-8")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput("The continuation token provided is incorrect", "InvalidArgument",
                           ArgumentName="continuation-token") from None


def new_upload_id() -> str:
    return secrets.token_urlsafe(36)


# access ----------------------------------------------------------------------------------------------


def may_access(bucket: Bucket, user_id: int, is_admin: bool) -> bool:
    """Only the owner and admins may touch a bucket."""
    return bucket.owner_id == user_id or is_admin


class Viewer(Protocol):
    """Who asks through the API, as bucket lookups need them (``auth.models.User`` is one)."""

    @property
    def id(self) -> int: ...

    @property
    def username(self) -> str: ...

    @property
    def is_admin(self) -> bool: ...


@dataclass(frozen=True)
class SharedRequest:
    """An API request on a bucket the caller neither owns nor administers, as the S3 action it amounts to."""

    user_id: int
    username: str
    action: str  # s3:ListBucket, s3:GetObject, s3:PutObject, s3:DeleteObject, s3:ListBucketVersions
    key: str | None = None  # the object; None: the bucket (or, for an object action, any of its objects)
    prefix: str | None = None  # a listing's prefix (s3:prefix)
    client: str = ""  # the client's address (aws:SourceIp)
    secure: bool = False  # over HTTPS (aws:SecureTransport)


# The sharing domain's answers (installed by ``wiring.install``; the catalog may not import sharing), both asked
# only for a caller who neither owns nor administers the bucket. Not installed: owners and admins only.
# - SharedAccess: whether the bucket's sharing allows a SharedRequest (the decision the gateway takes);
# - SharedWith: whether its sharing names the caller at all (user id, username): then they see the bucket.
SharedAccess = Callable[[Session, Bucket, SharedRequest], bool]
SharedWith = Callable[[Session, Bucket, int, str], bool]
# - SharedAny: the ids of the buckets whose sharing says anything at all (the few a SharedWith may name).
SharedAny = Callable[[Session], list[int]]
_shared_access: SharedAccess | None = None
_shared_with: SharedWith | None = None
_shared_any: SharedAny | None = None


def install_shared_access(check: SharedAccess, names: SharedWith, sharing: SharedAny | None = None) -> None:
    global _shared_access, _shared_with, _shared_any
    _shared_access, _shared_with, _shared_any = check, names, sharing


def hidden_bucket(name: str) -> NoSuchBucket:
    """What the API answers for a bucket the caller may not see: exactly what it answers for one that does not
    exist, so an answer never tells that a name is taken."""
    return NoSuchBucket("The specified bucket does not exist", BucketName=name)


def _named(session: Session, bucket: Bucket, viewer: Viewer) -> bool:
    return _shared_with is not None and _shared_with(session, bucket, viewer.id, viewer.username)


def visible_bucket(session: Session, name: str, viewer: Viewer) -> tuple[Bucket, bool]:
    """The API's bucket lookup by name: the bucket and whether the caller owns or administers it.

    Its owner and admins see it, and users its sharing names (a grant, or an Allow statement covering them);
    anyone else gets ``hidden_bucket``, the NoSuchBucket of a missing bucket. Owners cost no statement more.
    """
    bucket = get_bucket(session, name)
    if may_access(bucket, viewer.id, viewer.is_admin):
        return bucket, True
    if not _named(session, bucket, viewer):
        raise hidden_bucket(name)
    return bucket, False


def owned_bucket(session: Session, name: str, viewer: Viewer, doing: str) -> Bucket:
    """A bucket for what only its owner or an admin may do (``doing``, e.g. "changing its lifecycle rules"):
    NoSuchBucket where the caller may not see it, AccessDenied (403) saying what is missing where they see it
    through its sharing."""
    bucket, owns = visible_bucket(session, name, viewer)
    if not owns:
        raise AccessDenied(f"bucket {name!r} is shared with you, but {doing} needs its owner or an admin",
                           BucketName=name, needs="owner")
    return bucket


def api_bucket(session: Session, name: str, viewer: Viewer, request: SharedRequest) -> Bucket:
    """A bucket for an API request that amounts to an S3 action: its owner and admins may do anything, anyone
    else what its sharing allows for ``request``; refused, AccessDenied naming the action where the caller sees
    the bucket, NoSuchBucket where they do not."""
    bucket = get_bucket(session, name)
    if may_access(bucket, viewer.id, viewer.is_admin) or (
            _shared_access is not None and _shared_access(session, bucket, request)):
        return bucket
    if not _named(session, bucket, viewer):
        raise hidden_bucket(name)
    on = f" on {request.key!r}" if request.key is not None else ""
    raise AccessDenied(f"bucket {name!r} is shared with you without {request.action}{on}", BucketName=name,
                       needs=request.action)


def require_bucket(session: Session, bucket_id: int) -> None:
    """NoSuchBucket when the bucket of this id is gone.

    Callers that hold a bucket row read earlier (the gateway caches them for a moment) call this where a
    statement keyed by the id found nothing, so a bucket deleted meanwhile answers NoSuchBucket rather
    than an empty bucket. Ids are never reused, so a statement keyed by a stale id can only reach the
    data of the bucket that id was given to, never a later bucket of the same name.
    """
    if not repository.bucket_exists(session, bucket_id):
        raise NoSuchBucket("The specified bucket does not exist")


def space_open(space_bytes: int | None, start: datetime | None, end: datetime | None, now: datetime) -> bool:
    return space_bytes is not None and (start is None or start <= now) and (end is None or now < end)


def check_space(bucket: Bucket, used_bytes: int, incoming: int, now: datetime) -> None:
    """Refuse a write that would take the bucket past its open space reservation."""
    if incoming > 0 and space_open(bucket.space_bytes, bucket.space_start, bucket.space_end, now):
        assert bucket.space_bytes is not None
        if used_bytes + incoming > bucket.space_bytes:
            raise QuotaExceeded(
                f"The bucket's space reservation of {bucket.space_bytes} bytes would be exceeded "
                f"({used_bytes} bytes used, {incoming} bytes more asked)",
                SpaceBytes=str(bucket.space_bytes), UsedBytes=str(used_bytes),
            )


# buckets ---------------------------------------------------------------------------------------------


def get_bucket(session: Session, name: str) -> Bucket:
    """The bucket of that name whoever asks (the gateway, workers, the CLI); the API looks up with
    ``visible_bucket``."""
    bucket = repository.get_bucket_by_name(session, name)
    if bucket is None:
        raise hidden_bucket(name)
    return bucket


def visible_buckets(session: Session, viewer: Viewer) -> list[Bucket]:
    """Every bucket the viewer sees, by name: all for an admin; otherwise their own, their projects' and those
    whose sharing names them (what ``visible_bucket`` lets them open)."""
    if viewer.is_admin:
        return repository.list_buckets(session, None)
    member_of = projects.directory.visible(session, viewer.id) if projects.directory is not None else []
    seen = [b for b, _ in repository.buckets_with_owners(session, viewer.id, member_of)]
    known = {b.id for b in seen}
    candidates = [i for i in (_shared_any(session) if _shared_any is not None else []) if i not in known]
    shared = [b for b in repository.buckets_by_id(session, candidates) if _named(session, b, viewer)]
    return sorted(seen + shared, key=lambda b: b.name)


def list_buckets(session: Session, user_id: int, is_admin: bool) -> list[Bucket]:
    """Members see their own buckets, admins all."""
    return repository.list_buckets(session, None if is_admin else user_id)


def create_bucket(session: Session, *, owner_id: int, name: str, tier_name: str | None = None,
                  region: str | None = None, space_bytes: int | None = None, space_start: datetime | None = None,
                  space_end: datetime | None = None, object_lock: bool = False,
                  project_id: int | None = None) -> Bucket:
    """A bucket on a tier (default from settings), optionally with a space reservation, in ``project_id`` or else
    the owner's default project; a bucket created with object lock has versioning enabled for good."""
    validate_bucket_name(name)
    existing = repository.get_bucket_by_name(session, name)
    if existing is not None:
        if existing.owner_id == owner_id:
            raise BucketAlreadyOwnedByYou("Your previous request to create the named bucket succeeded and you "
                                          "already own it.", BucketName=name)
        raise BucketAlreadyExists("The requested bucket name is not available. Please select a different name "
                                  "and try again.", BucketName=name)
    tier_name = tier_name or get_settings().default_tier
    tier = registry.tiers.by_name(tier_name, session)
    if tier is None:
        raise InvalidInput(f"There is no tier named {tier_name!r}", "InvalidArgument")
    if space_bytes is not None and space_bytes < 0:
        raise InvalidInput("x-tierpilot-space-bytes must be a non-negative number of bytes", "InvalidArgument")
    if space_start and space_end and space_end <= space_start:
        raise InvalidInput("x-tierpilot-space-end must be after x-tierpilot-space-start", "InvalidArgument")
    if space_bytes is None and (space_start or space_end):
        raise InvalidInput("a space window needs x-tierpilot-space-bytes", "InvalidArgument")
    if project_id is None and projects.directory is not None:
        project_id = projects.directory.placement(session, owner_id)
    bucket = Bucket(name=name, owner_id=owner_id, tier_id=tier.id, region=region or get_settings().gateway_region,
                    project_id=project_id,
                    space_bytes=space_bytes, space_start=space_start, space_end=space_end,
                    object_count=0, used_bytes=0, object_lock=object_lock,
                    versioning="Enabled" if object_lock else None)
    session.add(bucket)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:  # created concurrently
        raise BucketAlreadyExists("The requested bucket name is not available.", BucketName=name) from None
    return bucket


def delete_bucket(session: Session, bucket: Bucket) -> list[tuple[int, str]]:
    """Delete an empty bucket; its unfinished uploads go too. Returns (tier id, upload locator) to clean."""
    if repository.bucket_has_objects(session, bucket.id):
        raise BucketNotEmpty("The bucket you tried to delete is not empty", BucketName=bucket.name)
    uploads = repository.uploads_of_bucket(session, bucket.id)
    for upload in uploads:
        repository.delete_upload(session, upload.id)
    repository.delete_bucket_row(session, bucket.id)
    return [(u.tier_id, u.locator) for u in uploads]


T = TypeVar("T", bound=TierLike)


# tiers and storage classes ---------------------------------------------------------------------------


def tier_for_class(tiers: Sequence[T], bucket_tier_id: int, storage_class: str | None) -> tuple[T, str]:
    """The tier an object of ``storage_class`` lives on: the bucket's own tier unless the class is
    another tier's; no class means the bucket's tier and its first class."""
    by_id = {t.id: t for t in tiers}
    home = by_id.get(bucket_tier_id)
    if home is None:
        raise InvalidInput("The bucket's tier no longer exists", "InvalidRequest")
    if not storage_class:
        classes = list(home.storage_classes or [])
        return home, str(classes[0]) if classes else DEFAULT_STORAGE_CLASS
    cls = storage_class.upper()
    if cls in (home.storage_classes or []) or (not home.storage_classes and cls == DEFAULT_STORAGE_CLASS):
        return home, cls
    for tier in tiers:
        if cls in (tier.storage_classes or []):
            return tier, cls
    raise invalid_storage_class(storage_class)


# objects ---------------------------------------------------------------------------------------------


def _etag_matches(etag: str, condition: str) -> bool:
    wanted = [c.strip().strip('"') for c in condition.split(",")]
    return "*" in wanted or etag.strip('"') in wanted


@dataclass(frozen=True)
class ObjectWrite:
    """One write of a key's current version (PutObject, a copy, a multipart completion): ``record_object``'s
    arguments."""

    bucket_id: int
    key: str
    size: int
    etag: str
    tier_id: int
    storage_class: str
    locator: str
    content_type: str | None = None
    user_metadata: dict[str, Any] | None = None
    headers: dict[str, Any] | None = None
    checksum_algorithm: str | None = None
    checksum_value: str | None = None
    parts_count: int | None = None
    tags: dict[str, Any] | None = None
    if_match: str | None = None
    if_none_match: str | None = None
    lock_mode: str | None = None
    lock_until: datetime | None = None
    legal_hold: bool = False
    part_sizes: list[int] | None = None
    part_checksums: list[str] | None = None
    event: str = "ObjectCreated:Put"  # the S3 event it makes (Post, Copy, CompleteMultipartUpload)


# a write's row and the blob it replaced (to delete once committed)
Recorded = tuple[Object, Blob | None]


def record_object(
    session: Session,
    bucket_id: int,
    key: str,
    *,
    size: int,
    etag: str,
    tier_id: int,
    storage_class: str,
    locator: str,
    content_type: str | None = None,
    user_metadata: dict[str, Any] | None = None,
    headers: dict[str, Any] | None = None,
    checksum_algorithm: str | None = None,
    checksum_value: str | None = None,
    parts_count: int | None = None,
    tags: dict[str, Any] | None = None,
    if_match: str | None = None,
    if_none_match: str | None = None,
    now: datetime | None = None,
    lock_mode: str | None = None,
    lock_until: datetime | None = None,
    legal_hold: bool = False,
    part_sizes: list[int] | None = None,
    part_checksums: list[str] | None = None,
) -> Recorded:
    """Make a new object version visible (insert or overwrite) and keep the bucket's totals and space
    reservation; returns the row and the old blob to delete once committed.

    In a versioned bucket the replaced version is kept as a noncurrent one (no blob to delete); a suspended
    bucket's write replaces the key's "null" version. A bucket's default retention applies unless the write
    names its own.
    """
    write = ObjectWrite(
        bucket_id, key, size=size, etag=etag, tier_id=tier_id, storage_class=storage_class, locator=locator,
        content_type=content_type, user_metadata=user_metadata, headers=headers, checksum_algorithm=checksum_algorithm,
        checksum_value=checksum_value, parts_count=parts_count, tags=tags, if_match=if_match,
        if_none_match=if_none_match, lock_mode=lock_mode, lock_until=lock_until, legal_hold=legal_hold,
        part_sizes=part_sizes, part_checksums=part_checksums,
    )
    return record_write(session, write, now)


def record_write(session: Session, write: ObjectWrite, now: datetime | None = None) -> Recorded:
    """``record_object`` of an ``ObjectWrite``."""
    outcome = record_objects(session, [write], now)[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


@dataclass
class _Usage:
    """What a round's writes change of one bucket's totals."""

    objects: int = 0
    nbytes: int = 0
    grew: bool = False  # a write added bytes (only such a write can be refused by the space reservation)

    def add(self, objects: int, nbytes: int) -> None:
        self.objects += objects
        self.nbytes += nbytes
        self.grew = self.grew or nbytes > 0


def record_objects(session: Session, writes: Sequence[ObjectWrite],
                   now: datetime | None = None) -> list[Recorded | CatalogError]:
    """``record_object`` of many writes in one transaction (the rows of concurrent PUTs), in order: a key's later
    write replaces its earlier one. The statements are the round's, not each write's: the buckets' settings read
    once; in a bucket without versioning, the current rows of the keys read (and locked), the new ones inserted and
    the others overwritten by one statement each; each bucket's totals moved once, last.

    A write refused before anything of it is written (bucket gone, a precondition, object lock) gets its error as
    its outcome and leaves the others. A refusal found after writing raises, and the caller's transaction must be
    rolled back: the space reservation a bucket's writes take it past, a precondition against the row of a
    concurrent writer (PostgreSQL), any refusal in a versioned bucket (written by the ORM, one write at a time).
    """
    now = now or utcnow()
    settings = repository.buckets_versioning_rows(session, {w.bucket_id for w in writes})
    out: list[Recorded | CatalogError | None] = [None] * len(writes)
    usage: dict[int, _Usage] = {}
    # a bucket without versioning: the first write of each key in the first batch, its second in the next, …
    batches: list[dict[tuple[int, str], int]] = []
    one_by_one: list[int] = []
    for i, write in enumerate(writes):
        bucket = settings.get(write.bucket_id)
        if bucket is None:
            out[i] = NoSuchBucket("The specified bucket does not exist")
        elif bucket[0] is not None:
            one_by_one.append(i)
        else:
            name = (write.bucket_id, write.key)
            batch = next((b for b in batches if name not in b), None)
            if batch is None:
                batch = {}
                batches.append(batch)
            batch[name] = i
    # Rows are locked in one order, by bucket then key, in every round (two rounds of other processes that took
    # the same keys crosswise would wait for each other: a deadlock): the first batch reads (and locks) every key
    # of its buckets that the later batches write again; versioned writes are taken in that order too, each key's
    # own in the order they came.
    for batch in batches:
        _record_unversioned(session, writes, batch, settings, now, out, usage)
    one_by_one.sort(key=lambda i: (writes[i].bucket_id, writes[i].key))
    for i in one_by_one:
        write = writes[i]
        obj, replaced = _record_versioned(session, write, settings[write.bucket_id], now, usage)
        if len(writes) > 1:  # detached: a later write of the key loads a row of its own, not this answer's
            session.expunge(obj)
        out[i] = obj, replaced
    _emit_created(session, writes, out)
    # the buckets' totals last: every write locks the objects' rows before them, rounds too (in bucket id order)
    for bucket_id in sorted(usage):
        moved = usage[bucket_id]
        _check_space(repository.add_usage_row(session, bucket_id, moved.objects, moved.nbytes), moved.grew,
                     moved.nbytes, now)
    return cast(list[Recorded | CatalogError], out)


def _emit_created(session: Session, writes: Sequence[ObjectWrite], out: list[Recorded | CatalogError | None]) -> None:
    """The round's object events, in its transaction (nothing is built for a bucket nobody watches)."""
    changes = [object_events.Change(w.bucket_id, w.key, w.event, w.size, w.etag, o[0].version_id)
               for w, o in zip(writes, out, strict=True) if isinstance(o, tuple) and object_events.watched(w.bucket_id)]
    if changes:
        object_events.emit(session, changes)


def _values(write: ObjectWrite, settings: repository.BucketVersioning, version_id: str,
            now: datetime) -> dict[str, Any]:
    """The columns a write gives the key's current version (all but its bucket and key)."""
    lock_mode, lock_until = write.lock_mode, write.lock_until
    if lock_mode is None and lock_until is None:
        lock_mode, lock_until = versions.default_retention(settings, now)
    return dict(
        size=write.size, etag=write.etag, tier_id=write.tier_id, storage_class=write.storage_class,
        locator=write.locator, content_type=write.content_type or "binary/octet-stream",
        user_metadata=write.user_metadata or {}, headers=write.headers or {},
        checksum_algorithm=write.checksum_algorithm, checksum_value=write.checksum_value,
        parts_count=write.parts_count, tags=write.tags or {}, created_at=now, last_modified=now, last_access_at=None,
        restore_state=None, restore_speed=None, restore_expiry=None, version_id=version_id, lock_mode=lock_mode,
        lock_until=lock_until, legal_hold=write.legal_hold, part_sizes=write.part_sizes,
        part_checksums=write.part_checksums,
    )


def _record_unversioned(session: Session, writes: Sequence[ObjectWrite], batch: dict[tuple[int, str], int],
                        settings: dict[int, repository.BucketVersioning], now: datetime,
                        out: list[Recorded | CatalogError | None], usage: dict[int, _Usage]) -> None:
    """Writes of distinct keys in buckets that never had versioning (``batch``: (bucket id, key) -> index in
    ``writes``), by Core statements: each row inserted or overwritten in place, its answer a transient ``Object``
    of the values written."""
    # Locks in one order, the objects' rows (by bucket, then key) before the buckets' totals (every write path
    # does): taking the totals first let a writer that lost an insert race wait for the winner's row while holding
    # the totals the winner's next writer waits for (PostgreSQL's deadlock detector then failed one of them).
    keys: dict[int, list[str]] = {}
    for bucket_id, key in batch:
        keys.setdefault(bucket_id, []).append(key)
    current: dict[tuple[int, str], repository.WriteTarget] = {}
    for bucket_id in sorted(keys):
        for key, target in repository.objects_for_write(session, bucket_id, sorted(keys[bucket_id])).items():
            current[(bucket_id, key)] = target
    inserts: list[tuple[int, dict[str, Any]]] = []
    updates: list[tuple[int, repository.WriteTarget, dict[str, Any]]] = []
    for name, i in batch.items():
        write, old = writes[i], current.get(name)
        try:
            _check_write_conditions(session, write.bucket_id, write.key, old.etag if old is not None else None,
                                    write.if_match, write.if_none_match)
            if old is not None:
                versions.refuse_locked(old, now)
        except CatalogError as exc:
            out[i] = exc
            continue
        values = _values(write, settings[write.bucket_id], "null", now)
        if old is None:
            inserts.append((i, values))
        else:
            updates.append((i, old, values))
    if inserts:
        inserts.sort(key=lambda insert: (writes[insert[0]].bucket_id, writes[insert[0]].key))  # the locks' order
        ids = repository.insert_object_rows(
            session, [{"bucket_id": writes[i].bucket_id, "key": writes[i].key, **values} for i, values in inserts])
        for i, values in inserts:
            write = writes[i]
            object_id = ids.get((write.bucket_id, write.key))
            if object_id is None:
                # PostgreSQL: a concurrent writer inserted the key first; this write overwrites its row
                raced = repository.objects_for_write(session, write.bucket_id, [write.key]).get(write.key)
                if raced is None:
                    raise RuntimeError(f"key {write.key!r} of bucket {write.bucket_id} both exists and does not")
                _check_write_conditions(session, write.bucket_id, write.key, raced.etag, write.if_match,
                                        write.if_none_match)
                versions.refuse_locked(raced, now)
                updates.append((i, raced, values))
                continue
            out[i] = _written(object_id, write, values), None
            usage.setdefault(write.bucket_id, _Usage()).add(1, write.size)
    if updates:
        repository.update_object_rows(session, [{"object_id": old.id, **values} for _i, old, values in updates])
        for i, old, values in updates:
            write = writes[i]
            out[i] = _written(old.id, write, values), Blob(old.tier_id, old.locator)
            usage.setdefault(write.bucket_id, _Usage()).add(0, write.size - old.size)


def _written(object_id: int, write: ObjectWrite, values: dict[str, Any]) -> Object:
    return hotread.object_from({"id": object_id, "bucket_id": write.bucket_id, "key": write.key, **values})


def _record_versioned(session: Session, write: ObjectWrite, settings: repository.BucketVersioning, now: datetime,
                      usage: dict[int, _Usage]) -> Recorded:
    """A write in a bucket with versioning enabled or suspended, by the ORM; its totals noted in ``usage``."""
    bucket_id, key, size = write.bucket_id, write.key, write.size
    version_id = versions.new_version_id() if settings[0] == "Enabled" else "null"
    values = _values(write, settings, version_id, now)
    old = repository.get_object(session, bucket_id, key, for_update=True)
    _check_write_conditions(session, bucket_id, key, old.etag if old is not None else None, write.if_match,
                            write.if_none_match)
    dropped: list[Blob] = []
    if settings[0] == "Suspended":
        dropped = versions.drop_null_version(session, bucket_id, key, now)
    if old is not None and not (old.version_id == "null" and version_id == "null"):
        versions.archive(session, old, now)  # the replaced version stays, as a noncurrent one
        old_size = 0
        kept_old = True
    else:
        if old is not None:
            versions.refuse_locked(old, now)
        old_size = old.size if old is not None else 0
        kept_old = False
    added, delta = (1 if old is None or kept_old else 0), size - old_size
    result: Recorded
    if old is not None:
        replaced = None if kept_old else Blob(old.tier_id, old.locator)
        if dropped:
            replaced = dropped[0]
        for name, value in values.items():
            setattr(old, name, value)
        session.flush()
        result = old, replaced
    else:
        obj = Object(bucket_id=bucket_id, key=key, **values)
        result = obj, dropped[0] if dropped else None
        try:
            if session.get_bind().dialect.name == "sqlite":  # its one write lock admits no concurrent insert
                session.add(obj)
                session.flush()
            else:
                with session.begin_nested():
                    session.add(obj)
                    session.flush()
        except IntegrityError:  # PostgreSQL: a concurrent writer inserted the key first
            raced = repository.get_object(session, bucket_id, key, for_update=True)
            if raced is None:
                raise
            _check_write_conditions(session, bucket_id, key, raced.etag, write.if_match, write.if_none_match)
            if version_id != "null" or raced.version_id != "null":
                versions.archive(session, raced, now)  # the winner's version stays, as a noncurrent one
                replaced = None
            else:
                versions.refuse_locked(raced, now)
                added, delta, replaced = 0, size - raced.size, Blob(raced.tier_id, raced.locator)
            for name, value in values.items():
                setattr(raced, name, value)
            session.flush()
            result = raced, replaced
    usage.setdefault(bucket_id, _Usage()).add(added, delta)
    return result


def _check_write_conditions(session: Session, bucket_id: int, key: str, old_etag: str | None, if_match: str | None,
                            if_none_match: str | None) -> None:
    """If-None-Match / If-Match of a write against the ETag of the key's current version, None if there is none
    (412; NoSuchKey if absent)."""
    if if_none_match is not None and old_etag is not None and _etag_matches(old_etag, if_none_match):
        raise PreconditionFailed("At least one of the pre-conditions you specified did not hold",
                                 Condition="If-None-Match")
    if if_match is not None and (old_etag is None or not _etag_matches(old_etag, if_match)):
        if old_etag is None:
            require_bucket(session, bucket_id)
            raise NoSuchKey("The specified key does not exist.", Key=key)
        raise PreconditionFailed("At least one of the pre-conditions you specified did not hold",
                                 Condition="If-Match")


def _check_space(totals: Any | None, grew: bool, delta: int, now: datetime) -> None:
    """NoSuchBucket when the totals' row is gone; QuotaExceeded when writes that added bytes (``delta`` in all) took
    an open reservation past it."""
    if totals is None:
        raise NoSuchBucket("The specified bucket does not exist")
    _count, used, space_bytes, space_start, space_end = totals[:5]
    if grew and space_open(space_bytes, space_start, space_end, now) and used > space_bytes:
        raise QuotaExceeded(
            f"The bucket's space reservation of {space_bytes} bytes would be exceeded ({used - delta} bytes "
            f"used, {delta} bytes more asked)", SpaceBytes=str(space_bytes), UsedBytes=str(used - delta))


def find_object(session: Session, bucket_id: int, key: str) -> Object:
    """The object, or NoSuchKey (NoSuchBucket when the bucket itself is gone)."""
    obj = repository.get_object(session, bucket_id, key)
    if obj is None:
        require_bucket(session, bucket_id)
        raise NoSuchKey("The specified key does not exist.", Key=key)
    return obj


def remove_objects(session: Session, bucket_id: int, keys: Sequence[str]) -> list[Blob]:
    """Delete object records (missing keys are fine, as S3); returns their blobs to delete after commit."""
    rows = repository.get_objects(session, bucket_id, list(dict.fromkeys(keys)))
    if not rows:
        require_bucket(session, bucket_id)
        return []
    repository.delete_object_rows(session, [r.id for r in rows])
    repository.add_usage(session, bucket_id, -len(rows), -sum(r.size for r in rows))
    return [Blob(r.tier_id, r.locator) for r in rows]


def list_objects(session: Session, bucket_id: int, prefix: str = "", delimiter: str = "", marker: str = "",
                 max_keys: int = 1000) -> Listing[ListedObject]:
    """Keys and common prefixes after ``marker`` (see ``_listing``), with the dashboard's columns."""
    return _listing(repository.scan_listed, session, bucket_id, prefix, delimiter, marker, max_keys)


def list_objects_s3(session: Session, bucket_id: int, prefix: str = "", delimiter: str = "", marker: str = "",
                    max_keys: int = 1000) -> Listing[ListedForS3]:
    """``list_objects`` with what ListObjects shows, LastModified as S3's text (no datetimes on the hot path)."""
    return _listing(repository.scan_listed_s3, session, bucket_id, prefix, delimiter, marker, max_keys)


def _listing(scan: Callable[[Session, int, str | None, bool, str | None, int], list[Shown]], session: Session,
             bucket_id: int, prefix: str, delimiter: str, marker: str, max_keys: int) -> Listing[Shown]:
    """Keys and common prefixes after ``marker``, answered by range reads of the (bucket_id, key) index.

    A common prefix is emitted once and then skipped with one seek past it, so a delimiter listing
    costs one small index read per folder shown rather than one row per key below it. Common prefixes
    not greater than ``marker`` are not repeated, so a listing resumes from a prefix it returned.
    Each read is one statement returning the listed columns (``ListedObject`` or ``ListedForS3``, plain
    tuples, never ORM objects): without a delimiter every row read is shown, so a page is one statement; with
    one, reads start small and grow while keys are shown, and shrink again after a common prefix. On PostgreSQL
    the rest of a page after its first common prefix is one statement (``repository.scan_folders``).
    """
    out: Listing[Shown] = Listing()
    if max_keys <= 0:
        require_bucket(session, bucket_id)
        return out
    upper = repository.prefix_end(prefix) if prefix else None
    lower: str | None
    lower, inclusive = (prefix, True) if prefix and prefix > marker else (marker or None, False)
    if delimiter and marker.startswith(prefix):
        cut = marker.find(delimiter, len(prefix))
        if cut >= 0:  # the marker is inside (or is) a common prefix already returned: skip past it
            lower, inclusive = repository.prefix_end(marker[: cut + len(delimiter)]), True
            if lower is None:
                return out
    full = min(1001, max_keys + 1)
    batch = min(repository.FOLDER_BATCH, full) if delimiter else full
    while True:
        listed = scan(session, bucket_id, lower, inclusive, upper, batch)
        folder: str | None = None
        if not delimiter:
            # every row read is shown: the page is a slice (row by row, this loop cost a tenth of a page's CPU)
            room = max_keys - len(out.objects)
            shown = listed[:room]
            out.objects += shown
            if shown:
                out.next_marker = shown[-1][0]  # a row's key is its first column, in either kind of row
            if len(listed) > room:
                out.truncated = True
                return out
        else:
            for row in listed:
                key = row[0]
                common = None
                cut = key.find(delimiter, len(prefix))
                if cut >= 0:
                    common = key[: cut + len(delimiter)]
                if len(out.objects) + len(out.prefixes) >= max_keys:
                    out.truncated = True
                    return out
                if common is not None:
                    out.prefixes.append(common)
                    out.next_marker = folder = common
                    break
                out.objects.append(row)
                out.next_marker = key
        # a delimiter page's next read: never more rows than the page has room for, and the one that tells it
        # is truncated (the last of 32, 64, ... reads read 1,001 rows to show the page's last few)
        room = max_keys - len(out.objects) - len(out.prefixes) + 1
        if folder is not None:
            lower, inclusive = repository.prefix_end(folder), True
            batch = min(repository.FOLDER_BATCH, full, room)
            if lower is None:
                break
            # past the first folder, PostgreSQL walks the rest of the page in one statement (one index descent per
            # folder or key in the server, not a round trip per folder); elsewhere the seeks go on
            walked = repository.scan_folders(session, bucket_id, lower, True, upper, room, prefix, delimiter,
                                             s3=scan is repository.scan_listed_s3)
            if walked is not None:
                return _walked(walked, session, bucket_id, prefix, delimiter, max_keys, out)
            continue
        if len(listed) < batch:
            break
        lower, inclusive = listed[-1][0], False
        batch = min(full, batch * 2, room)
    if not out.objects and not out.prefixes:
        require_bucket(session, bucket_id)
    return out


def _walked(rows: Sequence[Shown], session: Session, bucket_id: int, prefix: str, delimiter: str, max_keys: int,
            out: Listing[Shown]) -> Listing[Shown]:
    """A delimiter page from ``repository.scan_folders``' rows: a folder's one row is its common prefix."""
    for row in rows:
        if len(out.objects) + len(out.prefixes) >= max_keys:
            out.truncated = True
            return out
        key = row[0]
        cut = key.find(delimiter, len(prefix))
        if cut >= 0:
            out.next_marker = key[: cut + len(delimiter)]
            out.prefixes.append(out.next_marker)
        else:
            out.objects.append(row)
            out.next_marker = key
    if not out.objects and not out.prefixes:
        require_bucket(session, bucket_id)
    return out


# multipart -------------------------------------------------------------------------------------------


def create_upload(session: Session, bucket: Bucket, key: str, *, owner_id: int, tier_id: int, storage_class: str,
                  content_type: str | None, user_metadata: dict[str, Any], headers: dict[str, Any],
                  checksum_algorithm: str | None, tags: dict[str, Any] | None = None, lock_mode: str | None = None,
                  lock_until: datetime | None = None, legal_hold: bool = False, checksum_type: str | None = None
                  ) -> MultipartUpload:
    require_bucket(session, bucket.id)
    upload_id = new_upload_id()
    upload = MultipartUpload(
        upload_id=upload_id, bucket_id=bucket.id, key=key, owner_id=owner_id, tier_id=tier_id,
        storage_class=storage_class, locator=f"{bucket.name}/{key}~mpu-{upload_id}",
        content_type=content_type or "binary/octet-stream", user_metadata=user_metadata, headers=headers,
        checksum_algorithm=checksum_algorithm, checksum_type=checksum_type, initiated_at=utcnow(), tags=tags,
        lock_mode=lock_mode, lock_until=lock_until, legal_hold=legal_hold,
    )
    session.add(upload)
    session.flush()
    return upload


def get_upload(session: Session, bucket: Bucket, key: str, upload_id: str, for_update: bool = False
               ) -> MultipartUpload:
    upload = repository.get_upload(session, upload_id, for_update=for_update)
    if upload is None or upload.bucket_id != bucket.id or upload.key != key:
        require_bucket(session, bucket.id)
        raise NoSuchUpload("The specified upload does not exist.", UploadId=upload_id)
    return upload


def check_part_space(session: Session, bucket: Bucket, upload: MultipartUpload, incoming: int, now: datetime
                     ) -> None:
    """A part may not take the bucket (with this upload's parts so far) past its space reservation."""
    if space_open(bucket.space_bytes, bucket.space_start, bucket.space_end, now):
        used = repository.usage(session, bucket.id)[1] + repository.parts_size(session, upload.id)
        check_space(bucket, used, incoming, now)


def record_part(session: Session, upload_pk: int, part_number: int, *, size: int, etag: str,
                checksum_value: str | None, locator: str, extra: dict[str, Any]) -> str | None:
    """Record a stored part (replacing an earlier upload of the same number); returns the replaced
    part's locator, or raises NoSuchUpload when the upload ended meanwhile."""
    upload = session.get(MultipartUpload, upload_pk, with_for_update=True)
    if upload is None:
        raise NoSuchUpload("The specified upload does not exist.")
    old = repository.get_part(session, upload_pk, part_number)
    if old is not None:
        replaced = old.locator
        old.size, old.etag, old.checksum_value = size, etag, checksum_value
        old.locator, old.extra, old.last_modified = locator, extra, utcnow()
        session.flush()
        return replaced if replaced != locator else None
    session.add(UploadPart(upload_id=upload_pk, part_number=part_number, size=size, etag=etag,
                           checksum_value=checksum_value, locator=locator, extra=extra, last_modified=utcnow()))
    session.flush()
    return None


@dataclass(frozen=True)
class RequestedPart:
    part_number: int
    etag: str
    checksum: str | None = None


def plan_complete(session: Session, upload: MultipartUpload, requested: Sequence[RequestedPart]) -> list[UploadPart]:
    """The stored parts a CompleteMultipartUpload names, checked as S3 checks them."""
    if not requested:
        raise InvalidInput("You must specify at least one part", "MalformedXML")
    numbers = [p.part_number for p in requested]
    if any(b <= a for a, b in zip(numbers, numbers[1:], strict=False)):
        raise InvalidInput("The list of parts was not in ascending order. The parts list must be specified in "
                           "order by part number.", "InvalidPartOrder")
    stored = {p.part_number: p for p in repository.list_parts(session, upload.id)}
    chosen: list[UploadPart] = []
    for req in requested:
        part = stored.get(req.part_number)
        if part is None or part.etag.strip('"') != req.etag.strip().strip('"'):
            raise InvalidInput("One or more of the specified parts could not be found. The part may not have been "
                               "uploaded, or the specified entity tag may not match the part's entity tag.",
                               "InvalidPart", PartNumber=str(req.part_number), ETag=req.etag)
        if req.checksum is not None and part.checksum_value is not None and req.checksum != part.checksum_value:
            raise InvalidInput(f"The checksum of part {req.part_number} does not match the uploaded part",
                               "InvalidPart", PartNumber=str(req.part_number))
        chosen.append(part)
    for part in chosen[:-1]:
        if part.size < MIN_PART_SIZE:
            raise InvalidInput("Your proposed upload is smaller than the minimum allowed object size.",
                               "EntityTooSmall", ProposedSize=str(part.size), MinSizeAllowed=str(MIN_PART_SIZE),
                               PartNumber=str(part.part_number), ETag=part.etag)
    return chosen


def end_upload(session: Session, upload_id: str) -> MultipartUpload:
    """Remove an upload's records (complete or abort); NoSuchUpload when another call ended it first."""
    upload = repository.get_upload(session, upload_id, for_update=True)
    if upload is None:
        raise NoSuchUpload("The specified upload does not exist.", UploadId=upload_id)
    repository.delete_upload(session, upload.id)
    return upload


def list_uploads(session: Session, bucket: Bucket, prefix: str, delimiter: str, key_marker: str,
                 upload_id_marker: str, max_uploads: int) -> tuple[list[MultipartUpload], list[str], bool]:
    """Uploads in progress (and common prefixes of their keys); the bool says the list is truncated."""
    rows = repository.list_uploads(session, bucket.id, prefix, key_marker, upload_id_marker, max_uploads + 1)
    if not rows:
        require_bucket(session, bucket.id)
    uploads: list[MultipartUpload] = []
    prefixes: list[str] = []
    for row in rows:
        if delimiter:
            cut = row.key.find(delimiter, len(prefix))
            if cut >= 0:
                common = row.key[: cut + len(delimiter)]
                if common not in prefixes:
                    if len(uploads) + len(prefixes) >= max_uploads:
                        return uploads, prefixes, True
                    prefixes.append(common)
                continue
        if len(uploads) + len(prefixes) >= max_uploads:
            return uploads, prefixes, True
        uploads.append(row)
    return uploads, prefixes, False


def list_parts(session: Session, upload: MultipartUpload, marker: int, max_parts: int
               ) -> tuple[list[UploadPart], bool]:
    rows = repository.list_parts(session, upload.id, after=marker, limit=max_parts + 1)
    return rows[:max_parts], len(rows) > max_parts
