"""One driver per tier and configuration, shared by every thread of the process."""

from __future__ import annotations

import json
import threading
from typing import Any

from tierpilot.kit.crypto import decrypt
from tierpilot.tiers.base import TierDriver
from tierpilot.tiers.models import Tier

_lock = threading.Lock()
_drivers: dict[int, tuple[str, TierDriver]] = {}


def _fingerprint(tier: Tier) -> str:
    return json.dumps([tier.name, tier.driver, tier.config, tier.offline, tier.restore_delays,
                       tier.storage_classes], sort_keys=True, default=str)


def secret_of(config: dict[str, Any]) -> str | None:
    """The S3 secret key of a tier config: encrypted by the API, or plain in code-built configs."""
    if config.get("secret_access_key_enc"):
        return decrypt(str(config["secret_access_key_enc"]))
    secret = config.get("secret_access_key")
    return str(secret) if secret else None


def build_driver(tier: Tier) -> TierDriver:
    """A new driver for a tier row (no caching; see ``driver_for``)."""
    config = dict(tier.config or {})
    if tier.driver == "posix":
        from tierpilot.tiers.posix import PosixDriver

        if tier.offline:
            from tierpilot.tiers.offline import OfflinePosixDriver

            return OfflinePosixDriver(config["path"], name=tier.name, restore_delays=tier.restore_delays or None)
        return PosixDriver(config["path"], name=tier.name)
    if tier.driver == "s3":
        from tierpilot.tiers.s3 import S3Driver

        config["secret_access_key"] = secret_of(config)
        config.pop("secret_access_key_enc", None)
        return S3Driver.from_config(tier.name, config, offline=tier.offline)
    raise ValueError(f"unknown tier driver {tier.driver!r}")


def driver_for(tier: Tier) -> TierDriver:
    """The process's driver for ``tier``, rebuilt when its configuration changed. Thread-safe."""
    key = _fingerprint(tier)
    cached = _drivers.get(tier.id) if tier.id is not None else None
    if cached is not None and cached[0] == key:
        return cached[1]
    with _lock:
        cached = _drivers.get(tier.id) if tier.id is not None else None
        if cached is not None and cached[0] == key:
            return cached[1]
        driver = build_driver(tier)
        if tier.id is not None:
            _drivers[tier.id] = (key, driver)
        return driver


def forget(tier_id: int) -> None:
    """Drop a cached driver (tier deleted)."""
    with _lock:
        _drivers.pop(tier_id, None)


def clear() -> None:
    """Drop every cached driver (tests)."""
    with _lock:
        _drivers.clear()
