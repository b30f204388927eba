"""Who is calling (SigV4) and which bucket they address, with short-lived in-process caches so the hot
path does not query the database for keys and buckets on every request."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Generic, TypeVar

from tierpilot.auth import service as auth_service
from tierpilot.auth.service import Credential
from tierpilot.catalog import service as catalog
from tierpilot.catalog.models import Bucket
from tierpilot.gateway import sigv4
from tierpilot.gateway.errors import S3Error, access_denied
from tierpilot.gateway.http import Request
from tierpilot.gateway.streams import run
from tierpilot.kit.db import transaction
from tierpilot.settings import get_settings

V = TypeVar("V")


class TtlCache(Generic[V]):
    """name → value for ``ttl`` seconds; misses are not remembered (a new key or bucket works at once)."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._data: dict[str, tuple[float, V]] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> V | None:
        hit = self._data.get(name)
        if hit is None or hit[0] < time.monotonic():
            return None
        return hit[1]

    def put(self, name: str, value: V) -> None:
        with self._lock:
            if len(self._data) > 10000:
                self._data.clear()
            self._data[name] = (time.monotonic() + self.ttl, value)

    def drop(self, name: str) -> None:
        with self._lock:
            self._data.pop(name, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


credentials: TtlCache[Credential] = TtlCache(get_settings().gateway_cache_s)
buckets: TtlCache[Bucket] = TtlCache(get_settings().gateway_cache_s)


def _lookup_credential(access_key_id: str) -> Credential | None:
    with transaction() as session:
        return auth_service.credential_for(session, access_key_id)


async def authenticate(req: Request) -> None:
    """Verify the request's signature (header or presigned URL) and set ``req.caller``."""
    signed = sigv4.parse(req.headers, req.query)
    if signed is None:
        raise access_denied("Anonymous access is not allowed: sign requests with an access key")
    sigv4.check_time(signed, datetime.now(UTC))
    cred = credentials.get(signed.access_key_id)
    if cred is None:
        cred = await run(_lookup_credential, signed.access_key_id)
        if cred is None:
            raise S3Error("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.",
                          403, AWSAccessKeyId=signed.access_key_id)
        credentials.put(signed.access_key_id, cred)
    req.signing_key = sigv4.verify(signed, cred.secret_access_key, req.method, req.raw_path, req.query_pairs,
                                   req.headers)
    req.signed = signed
    req.caller = cred


def _load_bucket(name: str) -> Bucket:
    with transaction() as session:
        bucket = catalog.get_bucket(session, name)
        session.expunge(bucket)
        return bucket


async def bucket_of(req: Request, name: str | None = None) -> Bucket:
    """The addressed bucket (NoSuchBucket), checked for the caller (AccessDenied)."""
    name = name or req.bucket
    bucket = buckets.get(name)
    if bucket is None:
        bucket = await run(_load_bucket, name)
        buckets.put(name, bucket)
    catalog.require_access(bucket, req.user.user_id, req.user.is_admin)
    return bucket
