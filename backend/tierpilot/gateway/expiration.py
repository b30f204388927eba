"""The x-amz-expiration header's source: lifecycle rules live above the gateway, so their domain installs it.

Until a provider is installed (``ext.install_expiration``) no object has an expiration header.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol


class ExpirationSource(Protocol):
    def cached(self, bucket_id: int) -> tuple[Any, ...] | None:
        """The bucket's expiration rules if this process read them lately (None: ask ``read``)."""

    def read(self, bucket_id: int) -> tuple[Any, ...]:
        """The bucket's expiration rules, read from the database (blocking)."""

    def header(self, rules: tuple[Any, ...], key: str, size: int, tags: Mapping[str, Any] | None,
               created_at: datetime) -> str | None:
        """The header's value for an object under ``rules``, or None."""


class _NoRules:
    def cached(self, bucket_id: int) -> tuple[Any, ...] | None:
        return ()

    def read(self, bucket_id: int) -> tuple[Any, ...]:
        return ()

    def header(self, rules: tuple[Any, ...], key: str, size: int, tags: Mapping[str, Any] | None,
               created_at: datetime) -> str | None:
        return None


source: ExpirationSource = _NoRules()


def install(provider: ExpirationSource) -> None:
    global source
    source = provider
