"""Versioning and object lock rules: which version a write replaces or keeps, deletes and delete markers.

``objects`` holds each key's current version; older versions and delete markers are ``object_versions``
rows (newest: largest id). A key whose newest version is a delete marker has no ``objects`` row, so
listings and lifecycle scans never see it. A bucket's totals count every stored version (not markers).
Like every service, these functions flush and never commit.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy.orm import Session

from tierpilot.catalog import events as object_events
from tierpilot.catalog import repository
from tierpilot.catalog.errors import InvalidBucketState, InvalidInput, NoSuchBucket, NoSuchVersion, ObjectLocked
from tierpilot.catalog.models import VERSION_FIELDS, Object, ObjectVersion
from tierpilot.catalog.repository import ListedVersion, ListedVersionForS3
from tierpilot.kit.db import utcnow

LOCK_MODES = ("GOVERNANCE", "COMPLIANCE")
VERSIONING_STATES = ("Enabled", "Suspended")

Version = TypeVar("Version", ListedVersion, ListedVersionForS3)


@dataclass(frozen=True)
class Blob:
    """Bytes on a tier that the catalog no longer points at: delete them after the commit."""

    tier_id: int
    locator: str


@dataclass
class Deleted:
    """What one delete did: the version removed or the delete marker made, and blobs to delete after commit."""

    key: str
    version_id: str | None = None
    delete_marker: bool = False
    marker_version_id: str | None = None
    blobs: list[Blob] = field(default_factory=list)


def new_version_id() -> str:
    """An opaque, unique version id (time first, so ids of one key also sort by age for a human)."""
    return f"{time.time_ns():x}{secrets.token_hex(8)}"


class Lockable(Protocol):
    """What object lock reads of a version: an ``Object``, an ``ObjectVersion`` or a write's ``WriteTarget``."""

    @property
    def version_id(self) -> str: ...

    @property
    def lock_mode(self) -> str | None: ...

    @property
    def lock_until(self) -> datetime | None: ...

    @property
    def legal_hold(self) -> bool: ...


def lock_reason(row: Lockable, now: datetime, bypass_governance: bool = False) -> str | None:
    """Why object lock refuses to delete or overwrite this version, or None."""
    if row.legal_hold:
        return "a legal hold"
    if (row.lock_until is not None and row.lock_until > now
            and (row.lock_mode == "COMPLIANCE" or not bypass_governance)):
        return f"{(row.lock_mode or 'GOVERNANCE').lower()} retention until {row.lock_until.isoformat()}"
    return None


def refuse_locked(row: Lockable, now: datetime, bypass_governance: bool = False) -> None:
    reason = lock_reason(row, now, bypass_governance)
    if reason is not None:
        raise ObjectLocked(f"Access Denied because object protected by object lock ({reason})",
                           VersionId=row.version_id)


def default_retention(settings: Any, now: datetime) -> tuple[str | None, datetime | None]:
    """The (mode, until) a new version gets from its bucket's default retention (settings: bucket_versioning row)."""
    _versioning, lock, mode, days, years = settings
    if not lock or mode is None or not (days or years):
        return None, None
    return mode, now + timedelta(days=(days or 0) + 365 * (years or 0))


def _values(row: Object | ObjectVersion) -> dict[str, Any]:
    return {name: getattr(row, name) for name in VERSION_FIELDS}


def archive(session: Session, current: Object, now: datetime) -> ObjectVersion:
    """Keep the current version as a noncurrent one (the caller then overwrites or deletes the current row)."""
    version = ObjectVersion(bucket_id=current.bucket_id, key=current.key, delete_marker=False,
                            noncurrent_since=now, **_values(current))
    repository.add_version(session, version)
    return version


def add_marker(session: Session, bucket_id: int, key: str, version_id: str, now: datetime) -> ObjectVersion:
    marker = ObjectVersion(bucket_id=bucket_id, key=key, delete_marker=True, size=0, etag="", tier_id=None,
                           locator="", created_at=now, last_modified=now, noncurrent_since=now,
                           version_id=version_id, user_metadata={}, headers={}, tags={})
    repository.add_version(session, marker)
    return marker


def drop_null_version(session: Session, bucket_id: int, key: str, now: datetime) -> list[Blob]:
    """A suspended bucket's write replaces the key's "null" version wherever it is kept."""
    blobs: list[Blob] = []
    for v in repository.versions_of_key(session, bucket_id, key, for_update=True):
        if v.version_id != "null":
            continue
        if not v.delete_marker:
            refuse_locked(v, now)
            repository.add_usage(session, bucket_id, -1, -v.size)
            if v.tier_id is not None:
                blobs.append(Blob(v.tier_id, v.locator))
        repository.delete_version_row(session, v.id)
    return blobs


def promote_newest(session: Session, bucket_id: int, key: str) -> None:
    """After the current version was deleted, the newest noncurrent version (unless a marker) becomes current."""
    versions = repository.versions_of_key(session, bucket_id, key, for_update=True)
    if not versions or versions[0].delete_marker:
        return
    newest = versions[0]
    repository.delete_version_row(session, newest.id)
    session.add(Object(bucket_id=bucket_id, key=key, **_values(newest)))
    session.flush()


def delete_key(session: Session, bucket_id: int, key: str, version_id: str | None, *,
               bypass_governance: bool = False, now: datetime | None = None,
               event_family: str = "ObjectRemoved") -> Deleted:
    """S3's DeleteObject on a bucket of any versioning state; totals follow, and its event when something went
    (``event_family``: LifecycleExpiration for an expiration)."""
    out = _delete_key(session, bucket_id, key, version_id, bypass_governance, now or utcnow())
    if (out.blobs or out.delete_marker) and object_events.watched(bucket_id):
        kind = "DeleteMarkerCreated" if out.marker_version_id is not None else "Delete"
        object_events.emit(session, [object_events.Change(bucket_id, key, f"{event_family}:{kind}",
                                                          version_id=out.version_id)])
    return out


def _delete_key(session: Session, bucket_id: int, key: str, version_id: str | None, bypass_governance: bool,
                now: datetime) -> Deleted:
    settings = repository.bucket_versioning(session, bucket_id)
    if settings is None:
        raise NoSuchBucket("The specified bucket does not exist")
    state = settings[0]
    out = Deleted(key)
    current = repository.get_object(session, bucket_id, key, for_update=True)
    if version_id is None:
        if state is None:  # unversioned: the object goes
            if current is not None:
                _delete_current(session, current, out, now, bypass_governance, promote=False)
            return out
        marker_id = new_version_id() if state == "Enabled" else "null"
        if state == "Suspended":
            out.blobs += drop_null_version(session, bucket_id, key, now)
        if current is not None:
            if current.version_id == "null" and state == "Suspended":
                _delete_current(session, current, out, now, bypass_governance, promote=False)
            else:
                archive(session, current, now)
                session.delete(current)
                session.flush()
        add_marker(session, bucket_id, key, marker_id, now)
        out.delete_marker, out.marker_version_id, out.version_id = True, marker_id, marker_id
        return out
    validate_version_id(version_id)
    out.version_id = version_id
    if current is not None and current.version_id == version_id:
        _delete_current(session, current, out, now, bypass_governance, promote=True)
        return out
    version = repository.get_version(session, bucket_id, key, version_id)
    if version is None:
        if state is None and version_id == "null":
            return out
        if version_id != "null" and state is None:
            raise NoSuchVersion("The specified version does not exist.", Key=key, VersionId=version_id)
        return out  # S3 answers 204 for a version that is not (or no longer) there
    if version.delete_marker:
        out.delete_marker = True
    else:
        refuse_locked(version, now, bypass_governance)
        repository.add_usage(session, bucket_id, -1, -version.size)
        if version.tier_id is not None:
            out.blobs.append(Blob(version.tier_id, version.locator))
    repository.delete_version_row(session, version.id)
    if current is None:  # the marker that hid the key may be gone: the newest version left becomes current
        promote_newest(session, bucket_id, key)
    return out


def _delete_current(session: Session, current: Object, out: Deleted, now: datetime, bypass: bool,
                    promote: bool) -> None:
    refuse_locked(current, now, bypass)
    bucket_id, key = current.bucket_id, current.key
    repository.delete_object_rows(session, [current.id])
    repository.add_usage(session, bucket_id, -1, -current.size)
    out.blobs.append(Blob(current.tier_id, current.locator))
    session.expunge(current)
    if promote:
        promote_newest(session, bucket_id, key)


def validate_version_id(version_id: str) -> None:
    if not version_id or len(version_id) > 64 or not version_id.isascii() or not version_id.isprintable():
        raise InvalidInput("Invalid version id specified", "InvalidArgument", ArgumentName="versionId",
                           ArgumentValue=version_id[:64])


def find_version(session: Session, bucket_id: int, key: str, version_id: str) -> Object | ObjectVersion | None:
    """A version by id: the current row or a noncurrent one (or a delete marker)."""
    validate_version_id(version_id)
    current = repository.get_object(session, bucket_id, key)
    if current is not None and current.version_id == version_id:
        return current
    return repository.get_version(session, bucket_id, key, version_id)


def as_object(version: ObjectVersion) -> Object:
    """A noncurrent version as a detached ``Object`` (no id): reads, copies and headers treat both alike."""
    return Object(bucket_id=version.bucket_id, key=version.key, **_values(version))


def latest_is_marker(session: Session, bucket_id: int, key: str) -> ObjectVersion | None:
    """The delete marker that hides a key (no current row, newest version a marker), or None."""
    versions = repository.versions_of_key(session, bucket_id, key)
    return versions[0] if versions and versions[0].delete_marker else None


def set_versioning(session: Session, bucket_id: int, state: str) -> None:
    """PutBucketVersioning; a bucket with object lock stays enabled."""
    if state not in VERSIONING_STATES:
        raise InvalidInput("The versioning status must be Enabled or Suspended", "MalformedXML")
    settings = repository.bucket_versioning(session, bucket_id)
    if settings is None:
        raise NoSuchBucket("The specified bucket does not exist")
    if settings[1] and state != "Enabled":
        raise InvalidBucketState("An Object Lock configuration is present on this bucket, so the versioning state "
                                 "cannot be changed.")
    repository.set_bucket_settings(session, bucket_id, versioning=state)


def set_lock_configuration(session: Session, bucket_id: int, mode: str | None, days: int | None,
                           years: int | None) -> None:
    """PutObjectLockConfiguration: the default retention of a bucket created with object lock."""
    settings = repository.bucket_versioning(session, bucket_id)
    if settings is None:
        raise NoSuchBucket("The specified bucket does not exist")
    if not settings[1] and settings[0] != "Enabled":
        raise InvalidBucketState("Object Lock configuration cannot be enabled on existing buckets")
    validate_default_retention(mode, days, years)
    repository.set_bucket_settings(session, bucket_id, object_lock=True, versioning="Enabled",
                                   lock_default_mode=mode, lock_default_days=days, lock_default_years=years)


def validate_default_retention(mode: str | None, days: int | None, years: int | None) -> None:
    if mode is None and days is None and years is None:
        return
    if mode not in LOCK_MODES:
        raise InvalidInput("Unknown retention mode", "MalformedXML")
    if (days is None) == (years is None):
        raise InvalidInput("A default retention needs exactly one of Days and Years", "MalformedXML")
    if (days is not None and not 0 < days <= 36500) or (years is not None and not 0 < years <= 100):
        raise InvalidInput("Default retention period must be a positive integer value", "InvalidRetentionPeriod")


def set_retention(session: Session, row: Object | ObjectVersion, mode: str | None, until: datetime | None, *,
                  bypass_governance: bool = False, now: datetime | None = None) -> None:
    """PutObjectRetention: COMPLIANCE is never shortened or removed; GOVERNANCE only with the bypass."""
    now = now or utcnow()
    if mode is not None and mode not in LOCK_MODES:
        raise InvalidInput("Unknown wormMode directive.", "MalformedXML")
    if until is not None and until <= now:
        raise InvalidInput("The retain until date must be in the future!", "InvalidArgument")
    protected = row.lock_until is not None and row.lock_until > now
    if protected:
        # any change of mode counts: GOVERNANCE -> COMPLIANCE also needs the bypass, as S3 has it
        weaker = (until is None or row.lock_until is None or until < row.lock_until or mode != row.lock_mode)
        if weaker and (row.lock_mode == "COMPLIANCE" or not bypass_governance):
            raise ObjectLocked("Access Denied because object protected by object lock.")
    table = "objects" if isinstance(row, Object) else "versions"
    repository.set_version_lock(session, table, row.id, lock_mode=mode, lock_until=until)


def set_legal_hold(session: Session, row: Object | ObjectVersion, on: bool) -> None:
    table = "objects" if isinstance(row, Object) else "versions"
    repository.set_version_lock(session, table, row.id, legal_hold=on)


# ListObjectVersions ----------------------------------------------------------------------------------


@dataclass
class VersionListing(Generic[Version]):
    """One page of ListObjectVersions: versions in key order, newest first within a key, as plain column tuples
    (``ListedVersion`` or the gateway's ``ListedVersionForS3``, key first, version id second), never ORM objects.
    ``resumed_key``: the key the page resumed inside of (its newest version was on an earlier page)."""

    versions: list[Version] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    truncated: bool = False
    next_key_marker: str | None = None
    next_version_id_marker: str | None = None
    resumed_key: str | None = None

    def latest(self) -> list[bool]:
        """Whether each version is its key's latest: the first of its key in S3's order (a key's current row
        comes first; without one, its newest version or delete marker)."""
        keys: list[str] = [v[0] for v in self.versions]
        return [key != before for key, before in zip(keys, [self.resumed_key, *keys], strict=False)]

    @property
    def entries(self) -> list[tuple[Version, bool]]:
        """(version, is latest) of each version."""
        return list(zip(self.versions, self.latest(), strict=True))


@dataclass
class _Position:
    key: str | None
    inclusive: bool = True
    below_id: int | None = None  # inside ``key``: its noncurrent versions older than this id (not its current)
    version_id_marker: str | None = None  # inside ``key``: below the version of this id (looked up by the read)


def _start(prefix: str, delimiter: str, key_marker: str, version_id_marker: str) -> _Position | None:
    if not key_marker:
        return _Position(prefix or None)
    if delimiter and key_marker.startswith(prefix):
        cut = key_marker.find(delimiter, len(prefix))
        if cut >= 0:  # a common prefix returned already: past it
            end = repository.prefix_end(key_marker[: cut + len(delimiter)])
            return None if end is None else _Position(end)
    if prefix and prefix > key_marker:  # the markers are before every key of the prefix
        return _Position(prefix)
    if version_id_marker:
        return _Position(key_marker, False, version_id_marker=version_id_marker)
    return _Position(key_marker, False)


Scan = Callable[..., list[Any]]


def _list(scan: Scan, session: Session, bucket_id: int, prefix: str, delimiter: str, key_marker: str,
          version_id_marker: str, max_keys: int) -> VersionListing[Any]:
    out: VersionListing[Any] = VersionListing()
    pos = _start(prefix, delimiter, key_marker, version_id_marker)
    upper = repository.prefix_end(prefix) if prefix else None
    if pos is not None and pos.version_id_marker is not None:
        out.resumed_key = key_marker
    full = min(max_keys + 1, 1001)
    batch = min(repository.FOLDER_BATCH, full) if delimiter else full
    while pos is not None:
        rows = scan(session, bucket_id, pos.key, pos.inclusive, upper, batch, pos.below_id, pos.version_id_marker)
        next_pos: _Position | None = None
        folder = False
        # the rows before the first one under a common prefix (without a delimiter: every row) are shown as
        # they are, up to the page's room: a slice (row by row, the loop cost a tenth of a page's CPU)
        start = len(prefix)
        cut_at = len(rows) if not delimiter else next(
            (i for i, row in enumerate(rows) if row[0].find(delimiter, start) >= 0), len(rows))
        room = max_keys - len(out.versions) - len(out.prefixes)
        shown = rows[:min(cut_at, room)]
        if shown:
            out.versions += shown
            out.next_key_marker, out.next_version_id_marker = shown[-1][0], shown[-1][1]
            next_pos = _Position(shown[-1][0], False, shown[-1][-1])  # a row's last column: its row_id
        if len(shown) < len(rows):
            if len(shown) == room:  # a row past the page's room
                out.truncated = True
                return out
            key = rows[cut_at][0]
            common = key[: key.find(delimiter, start) + len(delimiter)]
            out.prefixes.append(common)
            out.next_key_marker, out.next_version_id_marker = common, None
            end = repository.prefix_end(common)
            next_pos = None if end is None else _Position(end)
            folder = True
        if not folder and len(rows) < batch:
            break  # the range is read to its end
        batch = min(repository.FOLDER_BATCH, full) if folder else min(full, batch * 2)
        # never more than the page has room for, and the row that tells it is truncated (the last of 32, 64, ...
        # reads read 1,001 rows to show the page's last few)
        batch = min(batch, max_keys - len(out.versions) - len(out.prefixes) + 1)
        pos = next_pos
    if not out.versions and not out.prefixes and repository.bucket_versioning(session, bucket_id) is None:
        raise NoSuchBucket("The specified bucket does not exist")
    return out


def list_versions(session: Session, bucket_id: int, prefix: str = "", delimiter: str = "", key_marker: str = "",
                  version_id_marker: str = "", max_keys: int = 1000) -> VersionListing[ListedVersion]:
    """Versions and delete markers after the markers, in S3's order: each read is one statement that merges
    the current and the noncurrent range in the database (and looks the version-id marker up); a common prefix
    is skipped with one seek past it.

    Without a delimiter every row read is shown, so a page is one statement. With one, reads start small and
    grow while keys are shown, and shrink again after a common prefix (whose other keys are never read).
    """
    return _list(repository.scan_versions, session, bucket_id, prefix, delimiter, key_marker, version_id_marker,
                 max_keys)


def list_versions_s3(session: Session, bucket_id: int, prefix: str = "", delimiter: str = "", key_marker: str = "",
                     version_id_marker: str = "", max_keys: int = 1000) -> VersionListing[ListedVersionForS3]:
    """``list_versions`` for the gateway's ListObjectVersions: the shown columns as the driver's tuples."""
    return _list(repository.scan_versions_s3, session, bucket_id, prefix, delimiter, key_marker, version_id_marker,
                 max_keys)
