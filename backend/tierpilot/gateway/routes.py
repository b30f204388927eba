"""Which handler answers which S3 operation.

An operation is named by the HTTP method, the level it addresses (``service``: no bucket, ``bucket``,
``object``) and its sub-resource (the first query parameter of ``SUBRESOURCES`` present, or "").
Other domains add operations from their own modules with ``@route(...)``; the gateway imports the
modules named in ``EXTENSIONS`` at start (e.g. lifecycle configuration, RestoreObject).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from tierpilot.gateway.http import Request

Level = Literal["service", "bucket", "object"]
Handler = Callable[[Request], Awaitable[None]]

# query parameters that select an operation, in order of precedence
SUBRESOURCES = (
    "uploadId", "uploads", "delete", "restore", "select", "location", "versions", "versioning", "acl", "tagging",
    "lifecycle", "policy", "policyStatus", "cors", "encryption", "object-lock", "ownershipControls",
    "publicAccessBlock", "website", "logging", "notification", "replication", "requestPayment", "accelerate",
    "analytics", "metrics", "inventory", "intelligent-tiering", "attributes", "legal-hold", "retention",
    "torrent",
)

# modules of other domains that register gateway operations when imported (missing ones are skipped)
EXTENSIONS = (
    "tierpilot.lifecycle.s3api",
    "tierpilot.restores.s3api",
    "tierpilot.reservations.gateway",
)

_routes: dict[tuple[str, Level, str], Handler] = {}


def route(method: str, level: Level, subresource: str = "") -> Callable[[Handler], Handler]:
    """Register ``handler`` for one operation (a later registration replaces an earlier one)."""

    def register(handler: Handler) -> Handler:
        _routes[(method, level, subresource)] = handler
        return handler

    return register


def find(method: str, level: Level, query: dict[str, str]) -> tuple[Handler | None, str]:
    sub = next((s for s in SUBRESOURCES if s in query), "")
    return _routes.get((method, level, sub)), sub
