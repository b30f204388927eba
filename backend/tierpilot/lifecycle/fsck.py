"""Compare the catalog with what the tiers hold: missing blobs, orphan blobs, size mismatches, temp files of
crashed writers.

Writes put bytes on a tier before the catalog points at them and delete replaced bytes after, so a crash
leaves orphans (bytes nobody points at), never dangling rows. Orphans younger than ``min_age_s`` and
copies that open lifecycle moves are working with are in flight, not findings. ``repair`` deletes
orphans (after checking the catalog once more), removes parts of uploads that no longer exist, and
re-points an object whose blob is gone at another intact copy a lifecycle move left, when there is one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.drivers.base import BlobInfo, BlobNotFound, TierDriver
from tierpilot.drivers.posix import PosixDriver
from tierpilot.drivers.registry import driver_for
from tierpilot.kit.db import transaction, utcnow
from tierpilot.lifecycle import repository
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers.models import Tier

Kind = Literal["missing", "orphan", "size_mismatch", "orphan_upload", "tmp_leftover", "error"]
Progress = Callable[[str, int], None]


@dataclass
class Finding:
    kind: Kind
    tier: str
    locator: str
    bucket: str = ""
    key: str = ""
    catalog_size: int | None = None
    blob_size: int | None = None
    repaired: bool = False
    note: str = ""
    object_id: int | None = None

    def line(self) -> str:
        what = f"{self.bucket}/{self.key}" if self.key else self.locator
        sizes = ""
        if self.catalog_size is not None or self.blob_size is not None:
            sizes = f" (catalog {self.catalog_size} B, tier {self.blob_size} B)"
        state = "repaired" if self.repaired else "found"
        note = f": {self.note}" if self.note else ""
        return f"{state} {self.kind.replace('_', ' ')} on {self.tier}: {what}{sizes}{note}"


@dataclass
class FsckReport:
    tiers: int = 0
    objects: int = 0
    blobs: int = 0
    in_flight: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Nothing left wrong (repaired findings do not count)."""
        return all(f.repaired for f in self.findings)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            key = f"{f.kind}{' (repaired)' if f.repaired else ''}"
            out[key] = out.get(key, 0) + 1
        return out


def _split_locator(locator: str) -> tuple[str, str] | None:
    """(bucket, key) of a catalog locator ``<bucket>/<key>~<write id>``, or None for other names."""
    bucket, sep, rest = locator.partition("/")
    key, tilde, _write = rest.rpartition("~")
    if not sep or not tilde or not key:
        return None
    return bucket, key


def _referenced(session: Session, tier_id: int, locator: str) -> bool:
    """Whether any object or noncurrent version points at this blob (checked by bucket and key: index lookups)."""
    bucket, key = _split_locator(locator) or (None, None)
    return catalog_repository.has_object_at(session, tier_id, locator, bucket, key)


def fsck(repair: bool = False, min_age_s: float = 3600.0, tier_names: list[str] | None = None,
         progress: Progress | None = None, now: datetime | None = None) -> FsckReport:
    """Check every tier (or the named ones) against the catalog; with ``repair``, fix what can be fixed.

    Repairs run after every tier was checked, missing blobs first: an orphan may be the intact copy a
    missing object is pointed back at, so orphans are deleted only afterwards (if still unreferenced).
    """
    now = now or utcnow()
    older_than = now - timedelta(seconds=min_age_s)
    report = FsckReport()
    with transaction() as session:
        all_tiers = tiers_repository.list_tiers(session)
        for t in all_tiers:
            session.expunge(t)
    by_id = {t.id: t for t in all_tiers}
    tiers = [t for t in all_tiers if t.name in tier_names] if tier_names else all_tiers
    for tier in tiers:
        report.tiers += 1
        try:
            _check_tier(tier, report, older_than, progress)
        except Exception as exc:  # one unreachable tier must not hide the others' findings
            report.findings.append(Finding("error", tier.name, "", note=f"{type(exc).__name__}: {exc}"))
    if repair:
        by_name = {t.name: t for t in all_tiers}
        for f in report.findings:
            if f.kind in ("missing", "size_mismatch") and f.object_id is not None:
                _repoint(f.object_id, f.locator, f.catalog_size or 0, by_id, f)
        for f in report.findings:
            if f.kind == "orphan":
                _delete_orphan(by_name[f.tier], f)
            elif f.kind == "orphan_upload":
                _delete_upload_parts(by_name[f.tier], f)
        for name in {f.tier for f in report.findings if f.kind == "tmp_leftover" and not f.repaired}:
            _sweep_tmp(by_name[name], report)
    return report


def _check_tier(tier: Tier, report: FsckReport, older_than: datetime, progress: Progress | None) -> None:
    driver = driver_for(tier)
    blobs: dict[str, BlobInfo] = {}
    for listed in driver.list():
        blobs[listed.locator] = listed
        report.blobs += 1
        if progress is not None and report.blobs % 10000 == 0:
            progress(f"listing {tier.name}", report.blobs)
    with transaction() as session:
        in_flight = repository.moves_of_object_locators(session, tier.id)
        rows: list[tuple[int | None, int, str, str, int]] = list(catalog_repository.iter_tier_objects(session,
                                                                                                     tier.id))
        # noncurrent versions keep their bytes too: their blobs are no orphans (ids None: no repoint)
        rows += [(None, b, k, loc, n) for _i, b, k, loc, n in catalog_repository.iter_tier_versions(session, tier.id)]
        names = catalog_repository.bucket_names(session)
    for object_id, bucket_id, key, locator, size in rows:
        report.objects += 1
        info: BlobInfo | None = blobs.pop(locator, None)
        if info is None:
            try:  # written after the listing started?
                info = driver.head(locator)
            except BlobNotFound:
                info = None
        if info is not None and info.size == size:
            continue
        report.findings.append(Finding("missing" if info is None else "size_mismatch", tier.name, locator,
                                       names.get(bucket_id, ""), key, size, info.size if info is not None else None,
                                       object_id=object_id))
    for locator, info in blobs.items():
        if locator in in_flight or info.modified > older_than:
            report.in_flight += 1  # a move's copy, or a write between its bytes and its catalog row
            continue
        parsed = _split_locator(locator) or ("", "")
        report.findings.append(Finding("orphan", tier.name, locator, parsed[0], parsed[1], None, info.size))
    _check_uploads(tier, driver, report, older_than)
    _check_tmp(tier, driver, report)


def _check_tmp(tier: Tier, driver: TierDriver, report: FsckReport) -> None:
    """Temp files of writers that are gone: those this process's start removed, and any left since."""
    if not isinstance(driver, PosixDriver):
        return
    swept, driver.swept_at_start = driver.swept_at_start, []
    for t in swept:
        report.findings.append(Finding("tmp_leftover", tier.name, f"tmp/{t.name}", blob_size=t.size, repaired=True,
                                       note="left by a crashed writer, removed at start-up"))
    for t in driver.tmp_leftovers():
        report.findings.append(Finding("tmp_leftover", tier.name, f"tmp/{t.name}", blob_size=t.size,
                                       note="left by a crashed writer"))


def _delete_orphan(tier: Tier, finding: Finding) -> None:
    with transaction() as session:
        referenced = _referenced(session, tier.id, finding.locator)
        moving = finding.locator in repository.moves_of_object_locators(session, tier.id)
    if referenced:  # an object was pointed back at it by this repair (or a write committed since)
        finding.repaired, finding.note = True, "kept: an object points at it now"
        return
    if moving:
        finding.note = "kept: a lifecycle move uses it now"
        return
    driver_for(tier).delete(finding.locator)
    finding.repaired = True


def _sweep_tmp(tier: Tier, report: FsckReport) -> None:
    driver = driver_for(tier)
    assert isinstance(driver, PosixDriver)
    gone = {f"tmp/{t.name}" for t in driver.remove_tmp_leftovers()}
    for f in report.findings:
        if f.kind == "tmp_leftover" and f.tier == tier.name and f.locator in gone:
            f.repaired = True


def _delete_upload_parts(tier: Tier, finding: Finding) -> None:
    with transaction() as session:
        gone = not catalog_repository.upload_exists_at(session, finding.locator)
    if gone:
        driver_for(tier).abort_multipart(finding.locator)
        finding.repaired = True


def _check_uploads(tier: Tier, driver: TierDriver, report: FsckReport, older_than: datetime) -> None:
    """Parts of uploads the catalog no longer has (a crash between completing or aborting and cleaning up)."""
    list_uploads = getattr(driver, "list_uploads", None)
    if list_uploads is None:
        return
    with transaction() as session:
        known = catalog_repository.upload_locators(session, tier.id)
    for upload_locator, newest in list_uploads():
        if upload_locator in known or newest > older_than:
            continue
        report.findings.append(Finding("orphan_upload", tier.name, upload_locator,
                                       note="parts of an upload that no longer exists"))


def _repoint(object_id: int, locator: str, size: int, tiers: dict[int, Tier], finding: Finding) -> None:
    """Point an object whose blob is gone or wrong at an intact copy a lifecycle move made or left."""
    with transaction() as session:
        moves = repository.moves_for_object(session, object_id)
        for m in moves:
            session.expunge(m)
    candidates = [(m.dst_tier_id, m.dst_locator, m.dst_class) for m in moves] + [
        (m.src_tier_id, m.src_locator, m.src_class) for m in moves]
    for tier_id, other, cls in candidates:
        tier = tiers.get(tier_id or 0)
        if tier is None or not other or other == locator:
            continue
        try:
            if driver_for(tier).head(other).size != size:
                continue
        except BlobNotFound:
            continue
        with transaction(write=True) as session:
            obj = catalog_repository.get_object_by_id(session, object_id)
            if obj is None or obj.locator != locator:
                return
            catalog_repository.switch_object(session, object_id, locator, obj.etag, tier_id=tier.id,
                                             storage_class=cls or obj.storage_class, locator=other)
        finding.repaired = True
        finding.note = f"now points at the copy {other} on {tier.name}"
        return
    finding.note = "no intact copy on any tier"
