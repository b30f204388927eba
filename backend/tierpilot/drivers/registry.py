"""Which driver serves which tier: one driver per tier and configuration, shared by every thread.

The data path (catalog, gateway, sweeps) knows tiers only as ``TierSpec`` values from ``tiers``, the
process's directory. The directory reads them through the loader the tiers domain installs at start
(``tierpilot.app.wiring.install``), reloading at most every few seconds so the hot path never queries them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.orm import Session

from tierpilot.drivers.base import TierDriver
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.crypto import decrypt
from tierpilot.kit.settings import get_settings


class TierLike(Protocol):
    """What building a driver needs of a tier: a ``TierSpec`` or the tiers domain's row."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def driver(self) -> str: ...
    @property
    def config(self) -> Mapping[str, Any]: ...
    @property
    def offline(self) -> bool: ...
    @property
    def restore_delays(self) -> Mapping[str, Any]: ...
    @property
    def storage_classes(self) -> Sequence[Any]: ...
    @property
    def min_storage_days(self) -> int: ...


@dataclass(frozen=True)
class TierSpec:
    """A tier as the data path sees it (read-only, safe to share between threads)."""

    id: int
    name: str
    driver: str
    config: Mapping[str, Any] = field(default_factory=dict)
    storage_classes: tuple[str, ...] = ()
    offline: bool = False
    restore_delays: Mapping[str, Any] = field(default_factory=dict)
    min_storage_days: int = 0
    price_ref: Mapping[str, Any] = field(default_factory=dict)


# loads every tier, in the given session (to see its uncommitted tiers) or in a transaction of its own
SpecLoader = Callable[[Session | None], list[TierSpec]]

_lock = threading.Lock()
# tier id -> (fingerprint, driver, the read-only spec it was last built or checked for: None for other tier objects)
_drivers: dict[int, tuple[str, TierDriver, TierSpec | None]] = {}


def _fingerprint(tier: TierLike) -> str:
    return json.dumps([tier.name, tier.driver, dict(tier.config or {}), tier.offline, dict(tier.restore_delays or {}),
                       list(tier.storage_classes or [])], sort_keys=True, default=str)


def secret_of(config: Mapping[str, Any]) -> str | None:
    """The S3 secret key of a tier config: encrypted by the API, or plain in code-built configs."""
    if config.get("secret_access_key_enc"):
        return decrypt(str(config["secret_access_key_enc"]))
    secret = config.get("secret_access_key")
    return str(secret) if secret else None


def plain_secrets(config: Mapping[str, Any]) -> dict[str, Any]:
    """A tier config with every ``<name>_enc`` secret decrypted into ``<name>`` (Azure and GCS tiers)."""
    plain = {k: v for k, v in config.items() if not k.endswith("_enc")}
    for key, value in config.items():
        if key.endswith("_enc") and value:
            plain[key[: -len("_enc")]] = decrypt(str(value))
    return plain


def build_driver(tier: TierLike) -> TierDriver:
    """A new driver for a tier (no caching; see ``driver_for``)."""
    config = dict(tier.config or {})
    if tier.driver == "posix":
        from tierpilot.drivers.posix import PosixDriver

        if tier.offline:
            from tierpilot.drivers.offline import OfflinePosixDriver

            return OfflinePosixDriver(config["path"], name=tier.name, restore_delays=dict(tier.restore_delays or {})
                                      or None, tier_id=tier.id or None)
        return PosixDriver(config["path"], name=tier.name, tier_id=tier.id or None)
    if tier.driver == "s3":
        from tierpilot.drivers.s3 import S3Driver

        config["secret_access_key"] = secret_of(config)
        config.pop("secret_access_key_enc", None)
        return S3Driver.from_config(tier.name, config, offline=tier.offline)
    if tier.driver == "azure":
        from tierpilot.drivers.azure import AzureBlobDriver

        return AzureBlobDriver.from_config(tier.name, plain_secrets(config), offline=tier.offline)
    if tier.driver == "gcs":
        from tierpilot.drivers.gcs import GCSDriver

        return GCSDriver.from_config(tier.name, plain_secrets(config))
    raise ValueError(f"unknown tier driver {tier.driver!r}")


def claim_location(tier: TierLike) -> None:
    """Mark a new or moved tier's location as its own (posix: the root's marker; see ``PosixDriver``)."""
    if tier.driver == "posix":
        from tierpilot.drivers.posix import claim_root

        claim_root(tier.config["path"], tier.id)


def driver_for(tier: TierLike) -> TierDriver:
    """The process's driver for ``tier``, rebuilt when its configuration changed. Thread-safe.

    A ``TierSpec`` is read-only and the directory hands out a new one when a tier changed: the spec a driver was
    last built or checked for is answered without fingerprinting it again (a JSON dump per call, on the path of
    every small GET). Other tier objects (ORM rows, which change in place) are fingerprinted on every call.
    """
    cached = _drivers.get(tier.id) if tier.id is not None else None
    if cached is not None and cached[2] is tier:
        return cached[1]
    key = _fingerprint(tier)
    spec = tier if isinstance(tier, TierSpec) else None
    if cached is not None and cached[0] == key and spec is None:
        return cached[1]
    with _lock:
        cached = _drivers.get(tier.id) if tier.id is not None else None
        driver = cached[1] if cached is not None and cached[0] == key else build_driver(tier)
        if tier.id is not None:
            _drivers[tier.id] = (key, driver, spec)
        return driver


def forget(tier_id: int) -> None:
    """Drop a cached driver (tier deleted)."""
    with _lock:
        _drivers.pop(tier_id, None)


def clear() -> None:
    """Drop every cached driver (tests)."""
    with _lock:
        _drivers.clear()


class TierDirectory:
    """Every tier's spec, reloaded through the installed loader at most every ``ttl`` seconds."""

    def __init__(self, ttl: float) -> None:
        self._cache: TTLCache[str, list[TierSpec]] = TTLCache(ttl, maxsize=1)
        self._loader: SpecLoader | None = None

    def install(self, loader: SpecLoader) -> None:
        """Set where specs come from (the tiers domain's repository)."""
        self._loader = loader
        self._cache.clear()

    def _load(self, session: Session | None = None) -> list[TierSpec]:
        if self._loader is None:
            raise RuntimeError("no tier loader installed: call tierpilot.app.wiring.install() at start")
        return self._loader(session)

    def all(self) -> list[TierSpec]:
        return self._cache.get_or_load("all", self._load)

    def fresh(self) -> bool:
        """True when ``all()`` answers from memory (callers on an event loop then skip the thread)."""
        return "all" in self._cache

    def cached(self, tier_id: int) -> TierSpec | None:
        """The tier's spec if ``all()`` answers from memory and has it; None: ask ``get`` (which may load)."""
        specs = self._cache.get("all")
        if specs is not None:
            for tier in specs:
                if tier.id == tier_id:
                    return tier
        return None

    def get(self, tier_id: int) -> TierSpec:
        for tier in self.all():
            if tier.id == tier_id:
                return tier
        self.invalidate()
        for tier in self.all():
            if tier.id == tier_id:
                return tier
        raise LookupError(f"tier {tier_id} does not exist")

    def by_name(self, name: str, session: Session | None = None) -> TierSpec | None:
        """The tier called ``name``; a miss reloads once (a tier made a moment ago in another process).
        With ``session``, read in that transaction (a tier it created is found)."""
        if session is not None:
            return next((t for t in self._load(session) if t.name == name), None)
        found = next((t for t in self.all() if t.name == name), None)
        if found is None:
            self.invalidate()
            found = next((t for t in self.all() if t.name == name), None)
        return found

    def driver(self, tier_id: int) -> TierDriver:
        return driver_for(self.get(tier_id))

    def invalidate(self) -> None:
        self._cache.clear()


tiers = TierDirectory(get_settings().gateway_cache_s)
