"""Which handler answers which S3 operation.

An operation is named by the HTTP method, the level it addresses (``service``: no bucket, ``bucket``,
``object``) and its sub-resource (the first query parameter of ``SUBRESOURCES`` present, or "").
Other domains add operations from their own modules with ``gateway.ext.route``; the list of those
modules is ``tierpilot.app.wiring.GATEWAY_EXTENSIONS``.
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

_RANK = {name: rank for rank, name in enumerate(SUBRESOURCES)}

_routes: dict[tuple[str, Level, str], Handler] = {}
# handlers that check their caller themselves: the CORS preflight (never signed) and POST object (signed form)
_unsigned: set[Handler] = set()


def route(method: str, level: Level, subresource: str = "", signed: bool = True) -> Callable[[Handler], Handler]:
    """Register ``handler`` for one operation; each operation has one owner, so a second one is an error.
    ``signed=False``: the gateway does not verify the request's signature before the handler runs."""

    def register(handler: Handler) -> Handler:
        op = (method, level, subresource)
        if op in _routes:
            raise ValueError(f"{method} {level}?{subresource} is already served by {_routes[op].__module__}")
        _routes[op] = handler
        if not signed:
            _unsigned.add(handler)
        return handler

    return register


def subresource(query: dict[str, str]) -> str:
    """The sub-resource ``query`` selects: of its names in ``SUBRESOURCES``, the first there, or ""."""
    # the request's few names looked up in a dict, not the 32 sub-resources in the query (a GET's dozen
    # presigned names select none)
    best = len(SUBRESOURCES)
    for name in query:
        rank = _RANK.get(name, best)
        if rank < best:
            best = rank
    return SUBRESOURCES[best] if best < len(SUBRESOURCES) else ""


def find(method: str, level: Level, query: dict[str, str]) -> tuple[Handler | None, str]:
    sub = subresource(query)
    return _routes.get((method, level, sub)), sub


def signed(handler: Handler | None) -> bool:
    """Whether the gateway authenticates the request before ``handler`` runs."""
    return handler not in _unsigned
