"""Tier management: validate driver settings, keep secrets encrypted, refuse unsafe changes.

Services flush; the caller commits.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.drivers import registry
from tierpilot.drivers.base import BlobNotFound, TierDriver, TierError
from tierpilot.drivers.s3 import S3Driver
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.crypto import encrypt
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import Conflict, DomainError, Invalid, NotFound
from tierpilot.kit.settings import get_settings
from tierpilot.pricing.schemas import Catalog
from tierpilot.tiers import repository
from tierpilot.tiers.models import Tier
from tierpilot.tiers.schemas import (
    AZURE_ARCHIVE_TIERS,
    AZURE_SECRETS,
    EGRESS_KEY,
    GCS_SECRETS,
    S3_ARCHIVE_CLASSES,
    AzureConfig,
    GCSConfig,
    PosixConfig,
    RestoreDelays,
    S3Config,
    TierCheck,
    TierCheckOut,
    TierCreate,
    TierKind,
    TierUpdate,
    azure_account_url,
)

log = logging.getLogger(__name__)
_SECRET = "secret_access_key"
_SECRET_ENC = "secret_access_key_enc"
_CLOUD_SECRETS = {"azure": AZURE_SECRETS, "gcs": GCS_SECRETS}
_ALL_SECRETS = frozenset({_SECRET, _SECRET_ENC, *(f"{name}{suffix}" for names in _CLOUD_SECRETS.values()
                                                  for name in names for suffix in ("", "_enc"))})


@dataclass(frozen=True)
class TierUsage:
    tier: Tier
    used_bytes: int
    object_count: int
    bucket_count: int


def list_with_usage(session: Session) -> list[TierUsage]:
    """Every tier with the bytes and objects the catalog holds on it."""
    usage = catalog_repository.usage_by_tier(session)
    buckets = catalog_repository.bucket_counts_by_tier(session)
    return [
        TierUsage(t, *usage.get(t.id, (0, 0)), bucket_count=buckets.get(t.id, 0))
        for t in repository.list_tiers(session)
    ]


def get(session: Session, tier_id: int) -> Tier:
    tier = repository.get(session, tier_id)
    if tier is None:
        raise NotFound(f"tier {tier_id} not found")
    return tier


def get_with_usage(session: Session, tier_id: int) -> TierUsage:
    tier = get(session, tier_id)
    objects_bytes = catalog_repository.usage_by_tier(session).get(tier_id, (0, 0))
    buckets = catalog_repository.bucket_counts_by_tier(session).get(tier_id, 0)
    return TierUsage(tier, *objects_bytes, bucket_count=buckets)


def public_config(tier: Tier) -> dict[str, Any]:
    """Driver settings without secrets."""
    return {k: v for k, v in (tier.config or {}).items() if k not in _ALL_SECRETS}


def has_secret(tier: Tier) -> bool:
    config = tier.config or {}
    return any(config.get(k) for k in _ALL_SECRETS)


def location(tier: Tier) -> str:
    config = tier.config or {}
    if tier.driver == "posix":
        return str(config.get("path", ""))
    if tier.driver == "azure":
        account = str(config.get("account_url", "")).rstrip("/")
        return f"{account}/{config.get('container', '')}/{config.get('prefix', '')}"
    if tier.driver == "gcs":
        endpoint = str(config.get("endpoint_url") or "https://storage.googleapis.com").rstrip("/")
        return f"{endpoint}/{config.get('bucket', '')}/{config.get('prefix', '')}"
    endpoint = str(config.get("endpoint_url", "")).rstrip("/")
    return f"{endpoint}/{config.get('bucket', '')}/{config.get('prefix', '')}"


def _location_key(driver: str, config: dict[str, Any]) -> tuple[str, ...]:
    if driver == "posix":
        return (driver, str(config.get("path")))
    if driver == "azure":
        return (driver, str(config.get("account_url")), str(config.get("container")), str(config.get("prefix", "")))
    if driver == "gcs":
        return (driver, str(config.get("endpoint_url")), str(config.get("bucket")), str(config.get("prefix", "")))
    return (driver, str(config.get("endpoint_url")), str(config.get("bucket")), str(config.get("prefix", "")))


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"config.{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)


def _sqlite_folder() -> Path | None:
    url = make_url(get_settings().sqlalchemy_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database).resolve().parent


def _check_outside_own_files(path: Path) -> None:
    """A tier's directory holds only blobs (fsck --repair deletes what the catalog does not know): it may not be
    or contain the data directory or the SQLite database's folder, and inside the data directory it lives under
    tiers/, away from the database, redis and celery files."""
    settings = get_settings()
    data, tiers_root = settings.data_dir.resolve(), settings.tiers_dir
    if path == Path(path.anchor):
        raise Invalid("config.path: the file system root cannot be a tier")
    if data.is_relative_to(path):
        raise Invalid(f"config.path: {path} is or contains the data directory ({data})")
    database = _sqlite_folder()
    if database is not None and database.is_relative_to(path):
        raise Invalid(f"config.path: {path} is or contains the folder of the SQLite database ({database})")
    if path.is_relative_to(data) and (path == tiers_root or not path.is_relative_to(tiers_root)):
        raise Invalid(f"config.path: inside the data directory a tier lives in a folder of {tiers_root}")


def _check_inside_roots(path: Path) -> None:
    """``path`` (symlinks and ``..`` resolved) lies in one of TIERPILOT_TIER_ROOTS: a tier's check and creation
    make folders in its directory and its fsck deletes what it does not know, so an admin's typo or a stolen
    admin session must not point one at /etc or /home."""
    roots = get_settings().tier_root_paths
    if not any(path.is_relative_to(root) for root in roots):
        raise Invalid(f"config.path: {path} is outside the folders tiers may use (TIERPILOT_TIER_ROOTS: "
                      f"{', '.join(str(r) for r in roots)})")


def _posix_path(session: Session, raw: str, tier_id: int | None) -> str:
    """Absolute path, or relative to the data dir's tiers/; not the service's own files, no overlap with
    another tier's directory."""
    settings = get_settings()
    given = Path(raw)
    path = (given if given.is_absolute() else settings.tiers_dir / given).resolve()
    if not given.is_absolute() and not path.is_relative_to(settings.data_dir.resolve()):
        raise Invalid("config.path: a relative path must stay inside the data directory")
    _check_inside_roots(path)
    _check_outside_own_files(path)
    for other in repository.list_tiers(session):
        if other.id == tier_id or other.driver != "posix" or "path" not in (other.config or {}):
            continue
        theirs = Path(other.config["path"]).resolve()
        if path == theirs or path.is_relative_to(theirs) or theirs.is_relative_to(path):
            raise Invalid(f"config.path: overlaps the directory of tier {other.name!r} ({theirs})")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Invalid(f"config.path: cannot create {path}: {exc.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise Invalid(f"config.path: {path} is not writable")
    return str(path)


def _normalized_config(session: Session, driver: str, config: dict[str, Any],
                       previous: dict[str, Any] | None, tier_id: int | None) -> dict[str, Any]:
    """Validated driver settings as stored: posix path resolved, S3 secret encrypted."""
    if driver == "posix":
        try:
            posix = PosixConfig.model_validate(config)
        except ValidationError as exc:
            raise Invalid(_validation_message(exc)) from None
        return {"path": _posix_path(session, posix.path, tier_id)}
    if driver in _CLOUD_SECRETS:
        return _cloud_config(driver, config, previous)
    try:
        s3 = S3Config.model_validate(config)
    except ValidationError as exc:
        raise Invalid(_validation_message(exc)) from None
    stored = s3.model_dump(exclude={_SECRET})
    if s3.secret_access_key:
        stored[_SECRET_ENC] = encrypt(s3.secret_access_key)
    elif _SECRET not in config and previous and previous.get(_SECRET_ENC):
        stored[_SECRET_ENC] = previous[_SECRET_ENC]  # an update that does not mention the secret keeps it
    if (s3.access_key_id is None) != (_SECRET_ENC not in stored):
        raise Invalid("config: give both access_key_id and secret_access_key, or neither")
    return stored


def _cloud_config(driver: str, config: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """Azure or GCS settings as stored: secrets encrypted (``<name>_enc``); an update that names no secret
    keeps the stored ones, one that names a secret replaces them all."""
    secrets = _CLOUD_SECRETS[driver]
    try:
        parsed: AzureConfig | GCSConfig = (AzureConfig if driver == "azure" else GCSConfig).model_validate(config)
    except ValidationError as exc:
        raise Invalid(_validation_message(exc)) from None
    stored = parsed.model_dump(exclude=set(secrets), exclude_none=True)
    given = {name: getattr(parsed, name) for name in secrets if getattr(parsed, name)}
    if given:
        stored.update({f"{name}_enc": encrypt(value) for name, value in given.items()})
    elif previous and not any(name in config for name in secrets):
        stored.update({f"{name}_enc": previous[f"{name}_enc"] for name in secrets if previous.get(f"{name}_enc")})
    kinds = [name for name in secrets if f"{name}_enc" in stored]
    if driver == "azure":
        if len(kinds) > 1:
            raise Invalid("config: give one of account_key, sas_token or connection_string")
        if isinstance(parsed, AzureConfig) and parsed.connection_string and not parsed.account_url:
            stored["account_url"] = azure_account_url(parsed.connection_string)
        if not stored.get("account_url"):
            raise Invalid("config.account_url: required without a connection_string")
    elif not kinds and not stored.get("endpoint_url"):
        raise Invalid("config.service_account_key: required unless endpoint_url names an emulator")
    return stored


def _offline_for(driver: str, config: dict[str, Any], offline: bool) -> bool:
    # an archive class cannot be read without a restore, whatever the form said
    return offline or (driver == "s3" and config.get("storage_class") in S3_ARCHIVE_CLASSES) or (
        driver == "azure" and config.get("access_tier") in AZURE_ARCHIVE_TIERS)


def _delays(offline: bool, delays: RestoreDelays | None, previous: dict[str, Any]) -> dict[str, Any]:
    if delays is not None:
        return delays.model_dump()
    if previous:
        return previous
    return RestoreDelays().model_dump() if offline else {}


# The stored price catalogs belong to the planner, a domain above tiers: ``tierpilot.app.wiring`` installs how
# a tier's price reference finds its catalog (a process without it accepts no price reference).
CatalogReader = Callable[[Session, str], Catalog]
_read_catalog: CatalogReader | None = None


def install_catalogs(reader: CatalogReader) -> None:
    global _read_catalog
    _read_catalog = reader


def _check_price_ref(session: Session, ref: dict[str, str]) -> dict[str, str]:
    """An empty reference, or one naming a catalog and one of its classes (costs are priced from it) and
    optionally where the tier's reads leave its provider (``egress``, checked by the schema)."""
    if not ref:
        return {}
    catalog_id, class_id = ref.get("catalog"), ref.get("storage_class")
    if not catalog_id and not class_id and EGRESS_KEY in ref:
        raise Invalid("price_ref.egress: needs a catalog and storage_class to price the reads with")
    if not catalog_id or not class_id:
        raise Invalid("price_ref: give both catalog and storage_class, or neither")
    try:
        if _read_catalog is None:
            raise KeyError(catalog_id)
        catalog = _read_catalog(session, catalog_id)
    except (DomainError, KeyError):
        raise Invalid(f"price_ref: no price catalog {catalog_id!r}") from None
    try:
        catalog.storage_class(class_id)
    except KeyError:
        raise Invalid(f"price_ref: catalog {catalog_id!r} has no class {class_id!r}") from None
    return dict(ref)


def create(session: Session, data: TierCreate) -> Tier:
    if repository.get_by_name(session, data.name) is not None:
        raise Conflict(f"a tier named {data.name!r} exists")
    config = _normalized_config(session, data.driver, data.config, None, None)
    offline = _offline_for(data.driver, config, data.offline)
    tier = Tier(
        name=data.name, driver=data.driver, config=config, storage_classes=list(data.storage_classes),
        offline=offline, restore_delays=_delays(offline, data.restore_delays, {}),
        price_ref=_check_price_ref(session, data.price_ref), capacity_bytes=data.capacity_bytes,
        min_storage_days=data.min_storage_days,
    )
    session.add(tier)
    session.flush()
    _claim(tier)
    return tier


def _claim(tier: Tier) -> None:
    try:
        registry.claim_location(tier)
    except OSError as exc:
        raise Invalid(f"config.path: cannot mark {location(tier)} as the tier's: {exc.strerror}") from None


def update(session: Session, tier_id: int, data: TierUpdate) -> Tier:
    """Change a tier; its location and archive semantics are fixed while anything is stored on it."""
    tier = get(session, tier_id)
    fields = data.model_fields_set
    in_use = any(catalog_repository.tier_references(session, tier_id))
    if data.name is not None and data.name != tier.name:
        if repository.get_by_name(session, data.name) is not None:
            raise Conflict(f"a tier named {data.name!r} exists")
        if tier.name == get_settings().default_tier:
            raise Conflict(f"tier {tier.name!r} is the default tier of new buckets (TIERPILOT_DEFAULT_TIER)")
        tier.name = data.name
    config = tier.config
    moved = False
    if data.config is not None:
        merged = {**public_config(tier), **data.config}
        config = _normalized_config(session, tier.driver, merged, tier.config, tier.id)
        moved = _location_key(tier.driver, config) != _location_key(tier.driver, tier.config)
        if in_use and moved:
            raise Conflict("the tier holds objects or buckets: its location cannot change")
    offline = _offline_for(tier.driver, config, tier.offline if data.offline is None else data.offline)
    if in_use and offline != tier.offline:
        raise Conflict("the tier holds objects or buckets: it cannot switch between online and offline")
    tier.config = config
    tier.offline = offline
    if data.storage_classes is not None:
        tier.storage_classes = list(data.storage_classes)
    if data.restore_delays is not None or offline:
        tier.restore_delays = _delays(offline, data.restore_delays, tier.restore_delays)
    if data.price_ref is not None:
        tier.price_ref = _check_price_ref(session, data.price_ref)
    if "capacity_bytes" in fields:
        tier.capacity_bytes = data.capacity_bytes
    if data.min_storage_days is not None:
        tier.min_storage_days = data.min_storage_days
    session.flush()
    if moved:
        _claim(tier)
    return tier


def delete(session: Session, tier_id: int) -> None:
    """Remove an empty tier's row (its directory or bucket is left as it is)."""
    tier = get(session, tier_id)
    objects, buckets, uploads = catalog_repository.tier_references(session, tier_id)
    if objects or buckets or uploads:
        raise Conflict(f"tier {tier.name!r} holds {objects} objects, {buckets} buckets and {uploads} uploads",
                       objects=objects, buckets=buckets, uploads=uploads)
    if tier.name == get_settings().default_tier:
        raise Conflict(f"tier {tier.name!r} is the default tier of new buckets (TIERPILOT_DEFAULT_TIER)")
    session.delete(tier)
    session.flush()
    registry.forget(tier_id)


def check(session: Session, data: TierCheck) -> TierCheckOut:
    """Try driver settings (a saved tier's secrets filled in): reach the location with its credentials."""
    previous = get(session, data.tier_id) if data.tier_id is not None else None
    if previous is not None and previous.driver != data.driver:
        raise Invalid(f"driver: tier {previous.name!r} uses the {previous.driver} driver")
    merged = {**(public_config(previous) if previous is not None else {}), **data.config}
    config = _normalized_config(session, data.driver, merged, previous.config if previous is not None else None,
                                data.tier_id)
    # a saved tier checked at its own location is checked as that tier (a posix root must be its marked one)
    same_place = previous is not None and _location_key(data.driver, config) == _location_key(
        previous.driver, previous.config)
    spec = registry.TierSpec(id=previous.id if previous is not None and same_place else 0,
                             name=previous.name if previous is not None else "check", driver=data.driver,
                             config=config, offline=_offline_for(data.driver, config, False))
    try:
        _probe(registry.build_driver(spec))
    except _PROBE_ERRORS as exc:
        return TierCheckOut(ok=False, message=_first_line(exc))
    return TierCheckOut(ok=True, message=f"{location(Tier(driver=data.driver, config=config))} answers")


# what a probe raises when the location does not answer as it should (anything else is a bug, and raised)
_PROBE_ERRORS = (TierError, ValueError, OSError, BotoCoreError, ClientError)


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:500] if str(exc).strip() else type(exc).__name__


def _probe(driver: TierDriver) -> None:
    """Reach a tier's location with its credentials: its container/bucket answers, or this raises."""
    probe = getattr(driver, "check", None)
    if probe is not None:
        probe()
    elif isinstance(driver, S3Driver):
        driver.client.head_bucket(Bucket=driver.bucket)
    else:  # a blob no one wrote: "not found" proves the location answers with these credentials
        with contextlib.suppress(BlobNotFound):
            driver.head(f"tierpilot-check/{uuid.uuid4().hex}")


@dataclass(frozen=True)
class TierHealth:
    name: str
    driver: str
    ok: bool
    message: str
    seconds: float


def _health_key(tier: Tier) -> tuple[Any, ...]:
    # the settings probed: a tier edited since its last check is probed again at once
    return (tier.id, tier.name, tier.driver, tier.offline, json.dumps(tier.config or {}, sort_keys=True, default=str))


# probes still running past their deadline (start time), by tier and settings: such a tier is not probed again
# until that probe ends, or a dashboard checking every few seconds would pile up threads stuck in its socket
_stuck: dict[tuple[Any, ...], tuple[threading.Thread, float]] = {}
_stuck_lock = threading.Lock()


def health(tiers: Sequence[Tier], timeout_s: float = 20.0) -> list[TierHealth]:
    """Probe every tier at once with its stored settings (the connection test of each), in the order given.

    A probe still running after ``timeout_s`` counts as failed: a tier that hangs must not hang the check.
    """
    def run(tier: Tier) -> TierHealth:
        started = time.monotonic()
        try:
            _probe(registry.build_driver(tier))
        except _PROBE_ERRORS as exc:
            return TierHealth(tier.name, tier.driver, False, _first_line(exc), time.monotonic() - started)
        return TierHealth(tier.name, tier.driver, True, f"{location(tier)} answers", time.monotonic() - started)

    results: dict[int, TierHealth] = {}

    def probe(index: int, tier: Tier) -> None:
        results[index] = run(tier)

    started = time.monotonic()
    threads: dict[int, threading.Thread] = {}
    with _stuck_lock:
        for key, (thread, _) in list(_stuck.items()):
            if not thread.is_alive():
                del _stuck[key]
        for i, tier in enumerate(tiers):
            if (stuck := _stuck.get(_health_key(tier))) is not None:
                waiting = started - stuck[1]
                results[i] = TierHealth(tier.name, tier.driver, False,
                                        f"no answer: a probe started {waiting:.0f} s ago still waits", waiting)
            else:  # daemon threads: a probe stuck in a socket must not keep the process from exiting either
                threads[i] = threading.Thread(target=probe, args=(i, tier), daemon=True,
                                              name=f"tier-health-{tier.name}")
    deadline = started + timeout_s
    for thread in threads.values():
        thread.start()
    for thread in threads.values():
        thread.join(max(0.0, deadline - time.monotonic()))
    with _stuck_lock:
        _stuck.update({_health_key(tiers[i]): (t, started) for i, t in threads.items() if t.is_alive()})
    return [results.get(i) or TierHealth(t.name, t.driver, False, f"no answer within {timeout_s:g} s", timeout_s)
            for i, t in enumerate(tiers)]


@dataclass(frozen=True)
class CheckedHealth:
    tier_id: int
    kind: TierKind
    health: TierHealth
    checked_at: datetime


class HealthBoard:
    """Recent health of each tier for the dashboard: answers younger than ``max_age_s`` are reused, so reloads
    (or several admins) cannot hammer remote tiers, and one lock makes concurrent askers wait for one probe run."""

    def __init__(self, max_age_s: float = 5.0, timeout_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout_s = timeout_s
        self._recent: TTLCache[tuple[Any, ...], CheckedHealth] = TTLCache(max_age_s, maxsize=4096, timer=clock)
        self._lock = threading.Lock()

    def check(self, tiers: Sequence[Tier]) -> list[CheckedHealth]:
        """Each tier's health, probing (at once, bounded by ``timeout_s``) only those without a recent answer."""
        with self._lock:
            keys = [_health_key(t) for t in tiers]
            found = {k: self._recent.get(k) for k in keys}
            stale = [t for t, k in zip(tiers, keys, strict=True) if found[k] is None]
            checked_at = utcnow()
            for tier, result in zip(stale, health(stale, self.timeout_s), strict=True):
                kind = cast(TierKind, "offline" if tier.driver == "posix" and tier.offline else tier.driver)
                found[_health_key(tier)] = checked = CheckedHealth(tier.id, kind, result, checked_at)
                self._recent.put(_health_key(tier), checked)
            return [c for c in (found[k] for k in keys) if c is not None]


HEALTH_BOARD = HealthBoard()


def checked_health(session: Session) -> list[CheckedHealth]:
    """Every tier's recent health (the dashboard's view of ``health``)."""
    return HEALTH_BOARD.check(repository.list_tiers(session))


STALE_UPLOAD_AGE = timedelta(days=7)


def list_tiers(session: Session) -> list[Tier]:
    return repository.list_tiers(session)


def housekeep(tiers: Sequence[Tier], now: datetime | None = None) -> dict[str, int]:
    """Backstop sweep of tiers: temp files of crashed writers, expired restored copies on offline tiers,
    native multipart uploads a crashed PUT left on S3 tiers. One failing tier does not stop the others."""
    from tierpilot.drivers.offline import OfflinePosixDriver
    from tierpilot.drivers.posix import PosixDriver
    from tierpilot.drivers.s3 import S3Driver

    now = now or utcnow()
    stats = {"tiers": 0, "tmp_files_removed": 0, "restored_copies_purged": 0, "stale_uploads_aborted": 0,
             "errors": 0}
    for tier in tiers:
        stats["tiers"] += 1
        try:
            driver = registry.driver_for(tier)
            if isinstance(driver, PosixDriver):
                stats["tmp_files_removed"] += driver.sweep_tmp()
            if isinstance(driver, OfflinePosixDriver):
                stats["restored_copies_purged"] += driver.purge_expired()
            if isinstance(driver, S3Driver):
                stats["stale_uploads_aborted"] += driver.abort_stale_uploads(now - STALE_UPLOAD_AGE)
        except Exception:  # reported and counted: the next run tries again
            log.exception("housekeeping of tier %s failed", tier.name)
            stats["errors"] += 1
    return stats
