"""Who is calling (SigV4) and which bucket they address, with short-lived in-process caches so the hot
path does not query the database for keys and buckets on every request."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from tierpilot.auth import service as auth_service
from tierpilot.auth.service import Credential
from tierpilot.catalog import service as catalog
from tierpilot.catalog.models import Bucket
from tierpilot.gateway import sigv4
from tierpilot.gateway.errors import S3Error, access_denied
from tierpilot.gateway.http import Request
from tierpilot.kit.broadcast import Subscription
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run


class Credentials:
    """Access key -> caller, cached only while this process hears every credential change at once.

    The API publishes on ``auth_service.CREDENTIALS_CHANNEL`` after committing anything that takes a grant
    away (user disabled, deleted or demoted, key deleted or rotated); the listener empties the cache. While
    the channel is down (no Redis configured, connection lost) nothing is cached: every request reads its
    key from the database, so a disabled user's keys stop at once either way. A lookup that overlapped an
    invalidation is used for its own request but not cached (it may have read the row before the change).
    """

    def __init__(self, ttl: float) -> None:
        self._cache: TTLCache[str, Credential] = TTLCache(ttl)
        self._lock = threading.Lock()
        self._epoch = 0
        self.subscription: Subscription | None = None

    def start(self, redis_url: str) -> None:
        if redis_url and self.subscription is None:
            self.subscription = Subscription(redis_url, auth_service.CREDENTIALS_CHANNEL,
                                             lambda _user_id: self.reset(), self.reset)
            self.subscription.start()

    def stop(self) -> None:
        if self.subscription is not None:
            self.subscription.stop()
            self.subscription = None

    @property
    def trusted(self) -> bool:
        return self.subscription is not None and self.subscription.connected

    def reset(self) -> None:
        with self._lock:
            self._epoch += 1
            self._cache.clear()

    def get(self, access_key_id: str) -> Credential | None:
        return self._cache.get(access_key_id) if self.trusted else None

    def epoch(self) -> int:
        with self._lock:
            return self._epoch

    def put(self, access_key_id: str, cred: Credential, epoch: int) -> None:
        with self._lock:
            if self.trusted and epoch == self._epoch:
                self._cache.put(access_key_id, cred)

    def pop(self, access_key_id: str) -> None:
        self._cache.pop(access_key_id)


credentials = Credentials(get_settings().gateway_cache_s)
buckets: TTLCache[str, Bucket] = TTLCache(get_settings().gateway_cache_s)


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
        epoch = credentials.epoch()
        cred = await run(_lookup_credential, signed.access_key_id)
        if cred is None:
            raise S3Error("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.",
                          403, AWSAccessKeyId=signed.access_key_id)
        credentials.put(signed.access_key_id, cred, epoch)
    req.signing_key = sigv4.verify(signed, cred.secret_access_key, req.method, req.raw_path, req.query_pairs,
                                   req.headers)
    if cred.disabled:  # told only to a caller who holds the secret
        raise S3Error("AllAccessDisabled", "All access to this account has been disabled by an administrator.", 403)
    req.signed = signed
    req.caller = cred


def _load_bucket(name: str) -> Bucket:
    with transaction() as session:
        bucket = catalog.get_bucket(session, name)
        session.expunge(bucket)
        return bucket


async def bucket_of(req: Request, name: str | None = None, confirm: bool = False) -> Bucket:
    """The addressed bucket (NoSuchBucket), checked for the caller (AccessDenied).

    A cached row grants only what its id reaches: bucket ids are never reused and every statement of an
    operation is keyed by the id, so a name deleted and created again by someone else (through another
    process, while this one still has the old row) cannot lead to the new bucket's data; where such a
    statement finds nothing, the catalog says NoSuchBucket if the id is gone (``catalog.require_bucket``).
    A cached row that denies is read again, so a new owner is not refused for the cache's lifetime.
    ``confirm`` reads the row from the catalog whatever is cached: for operations that would otherwise
    answer from the row alone (HeadBucket, GetBucketLocation, …).
    """
    name = name or req.bucket
    bucket = None if confirm else buckets.get(name)
    if bucket is None or not catalog.may_access(bucket, req.user.user_id, req.user.is_admin):
        bucket = await run(_load_bucket, name)
        buckets.put(name, bucket)
    catalog.require_access(bucket, req.user.user_id, req.user.is_admin)
    return bucket


async def confirmed_bucket(req: Request, name: str | None = None) -> Bucket:
    """``bucket_of`` with the row read from the catalog (what extensions get: see ``gateway.ext``)."""
    return await bucket_of(req, name, confirm=True)


def forget_bucket(name: str) -> None:
    """Drop a cached row an operation found gone, so the next request reads the name again."""
    if name:
        buckets.pop(name)
