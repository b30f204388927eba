"""Who is calling (SigV4) and which bucket they address, with short-lived in-process caches so the hot
path does not query the database for keys and buckets on every request."""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast
from urllib.parse import unquote_plus

from tierpilot.auth import service as auth_service
from tierpilot.auth.service import Credential
from tierpilot.catalog import service as catalog
from tierpilot.catalog.models import Bucket
from tierpilot.gateway import sigv4
from tierpilot.gateway.common import copy_source, copy_source_version
from tierpilot.gateway.errors import S3Error, access_denied, no_such_key
from tierpilot.gateway.http import Request
from tierpilot.gateway.routes import subresource
from tierpilot.kit import generations
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run
from tierpilot.sharing import access
from tierpilot.sharing import gate as sharing
from tierpilot.sharing.policy import Caller, Context

T = TypeVar("T")

# the caller of an unsigned request: no user has id 0; it reaches only what a policy or ACL gives anyone
ANONYMOUS = Credential(user_id=0, username="anonymous", is_admin=False, secret_access_key="")


# access key -> caller, under the credentials generation: the API moves it (auth_service.credentials_changed)
# when it commits anything that takes a grant away (user disabled, deleted or demoted; key deleted or rotated)
# and before it answers, so the first request after the change reads the database. Without Redis an
# installation on SQLite reads the generation from a file beside the database (``kit.generations``); otherwise
# (PostgreSQL without Redis, Redis unreachable) nothing cached is used: every request reads its key.
credentials: generations.GenerationCache[str, Credential] = generations.GenerationCache(
    auth_service.CREDENTIALS_GENERATION, get_settings().gateway_cache_s)
buckets: TTLCache[str, Bucket] = TTLCache(get_settings().gateway_cache_s)


def _lookup_credential(access_key_id: str) -> Credential | None:
    with transaction() as session:
        return auth_service.credential_for(session, access_key_id)


_loading: dict[tuple[object, ...], asyncio.Future[Any]] = {}


async def _once(key: tuple[object, ...], fn: Callable[..., T], *args: Any) -> T:
    """``run(fn, *args)``, shared by the requests that ask for the same ``key`` while it runs: when a cached entry
    expires under load, the dozens of requests in flight wait for one read instead of each reading it."""
    loading = _loading.get(key)
    if loading is None:
        loading = _loading[key] = asyncio.ensure_future(run(fn, *args))
        loading.add_done_callback(lambda _done: _loading.pop(key, None))
    return cast(T, await asyncio.shield(loading))


async def authenticate(req: Request) -> None:
    """Verify the request's signature (header or presigned URL) and set ``req.caller``."""
    signed = sigv4.parse(req.headers, req.query)
    if signed is None:
        # an unsigned request may reach a bucket whose policy or ACLs allow anyone (checked in bucket_of);
        # listing or creating buckets needs an account
        if not req.bucket or (req.method == "PUT" and not req.key and not req.query):
            raise access_denied("Anonymous access is not allowed: sign requests with an access key")
        req.caller = ANONYMOUS
        return
    sigv4.check_time(signed, time.time())
    generation = await credentials.generation(req.seen)
    cred = credentials.get(signed.access_key_id, generation)
    if cred is None:
        # requests that saw the same generation share a read of it; with no generation known, each reads its own
        cred = await (run(_lookup_credential, signed.access_key_id) if generation is None else
                      _once(("credential", signed.access_key_id, generation), _lookup_credential, signed.access_key_id))
        if cred is None:
            raise S3Error("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.",
                          403, AWSAccessKeyId=signed.access_key_id)
        credentials.put(signed.access_key_id, cred, generation)
    req.signing_key = sigv4.verify(signed, cred.secret_access_key, req.method, req.raw_path, req.query_pairs,
                                   req.headers)
    if cred.disabled:  # told only to a caller who holds the secret
        raise S3Error("AllAccessDisabled", "All access to this account has been disabled by an administrator.", 403)
    _check_temporary(req, cred)
    req.signed = signed
    req.caller = cred


def _check_temporary(req: Request, cred: Credential) -> None:
    """A temporary key works until its expiry; one from STS only with the session token it came with (the token
    is signed with the request, so it is checked after the signature: a guess at it learns nothing)."""
    if cred.expires_at is not None and time.time() >= cred.expires_at:
        raise S3Error("ExpiredToken", "The provided token has expired.", 400)
    if cred.session_token_hash is not None:
        token = req.headers.get("x-amz-security-token") or req.query.get("X-Amz-Security-Token") or ""
        if not token:
            raise S3Error("InvalidToken", "The provided token is malformed or otherwise invalid: temporary "
                          "credentials need their session token (x-amz-security-token).", 400)
        if not hmac.compare_digest(auth_service.hash_token(token), cred.session_token_hash):
            raise S3Error("InvalidToken", "The provided token is malformed or otherwise invalid.", 400)


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
    ``x-amz-expected-bucket-owner`` (``x-amz-source-expected-bucket-owner`` for a copy's source) naming
    another account is AccessDenied.
    Beyond owner and admins, the bucket's sharing settings decide (``sharing.gate``: policy, ACLs, public
    access block) for the request's S3 action; ``name`` other than the addressed bucket is a copy's source.
    """
    source = name is not None and name != req.bucket  # the source of a copy: read, not written
    name = name or req.bucket
    bucket = None if confirm else buckets.get(name)
    if bucket is None or not catalog.may_access(bucket, req.user.user_id, req.user.is_admin):
        # a confirming read begins after the request did; others may share one under way
        bucket = await run(_load_bucket, name) if confirm else await _once(("bucket", name), _load_bucket, name)
        buckets.put(name, bucket)
    # S3 refuses a request whose caller named another owner (a guard against writing to a bucket whose name
    # was taken over): the id is the one ListBuckets and fetch-owner show as Owner/ID
    expected = req.headers.get("x-amz-source-expected-bucket-owner" if source else "x-amz-expected-bucket-owner")
    if expected is not None and expected.strip() != str(bucket.owner_id):
        raise access_denied("Access Denied")
    if req.user.is_admin:  # sharing decides nothing for admins (``sharing.state_for``): no caller to build
        return bucket
    caller = Caller(req.user.user_id, req.user.username, anonymous=req.user is ANONYMOUS)
    state = await sharing.state_for(bucket, caller, is_admin=False, seen=req.seen)
    if state is None:
        return bucket
    ctx, key, version_id = _sharing_context(req, bucket, source)
    if not await sharing.allowed(bucket, state, caller, ctx=ctx, key=key, version_id=version_id):
        if (key is not None and not source and req.method in ("GET", "HEAD") and not req.query
                and await sharing.absent_and_listable(bucket, state, caller, ctx=ctx, key=key)):
            raise no_such_key(key)
        raise access_denied("Access Denied")
    return bucket


async def deletable(req: Request, bucket: Bucket, wanted: list[tuple[str, str | None]]) -> list[bool]:
    """DeleteObjects: whether the caller may delete each (key, version id), each key its own resource (a policy
    denying ``s3:DeleteObject`` on ``bucket/keep/*`` refuses just those keys). Owners and admins of a bucket
    without a policy are not asked again."""
    caller = Caller(req.user.user_id, req.user.username, anonymous=req.user is ANONYMOUS)
    state = await sharing.state_for(bucket, caller, is_admin=req.user.is_admin, seen=req.seen)
    if state is None:
        return [True] * len(wanted)
    base, _, _ = _sharing_context(req, bucket, False)
    out = []
    for key, version_id in wanted:
        keys = {**base.keys, **({"s3:versionid": [version_id]} if version_id is not None else {})}
        ctx = Context(access.action_for("DELETE", "object", "", version_id is not None),
                      f"arn:aws:s3:::{bucket.name}/{key}", keys)
        out.append(await sharing.allowed(bucket, state, caller, ctx=ctx, key=key, version_id=version_id))
    return out


def _sharing_context(req: Request, bucket: Bucket, source: bool) -> tuple[Context, str | None, str | None]:
    """The request as a bucket policy sees it (action, resource, condition keys), and the object it reads
    or writes (key, version id) if any."""
    key: str | None
    if source:
        key, version_id = copy_source(req)[1], copy_source_version(req)
        action = access.action_for("GET", "object", "", version_id is not None)
    else:
        key = req.key or None
        version_id = req.query.get("versionId") or None
        sub = subresource(req.query)
        action = access.action_for(req.method, "object" if key else "bucket", sub, version_id is not None)
    resource = f"arn:aws:s3:::{bucket.name}" + (f"/{key}" if key else "/*" if req.method == "POST" else "")
    now = datetime.now(UTC)
    client = req.scope.get("client")
    keys: dict[str, list[str]] = {
        "aws:securetransport": ["true" if req.scope.get("scheme") == "https" else "false"],
        "aws:currenttime": [now.strftime("%Y-%m-%dT%H:%M:%SZ")], "aws:epochtime": [str(int(now.timestamp()))],
    }
    if client:
        keys["aws:sourceip"] = [client[0]]
    if req.user is not ANONYMOUS:
        keys["aws:username"], keys["aws:userid"] = [req.user.username], [str(req.user.user_id)]
    for header, name in (("user-agent", "aws:useragent"), ("referer", "aws:referer")):
        if header in req.headers:
            keys[name] = [req.headers[header]]
    for name, value in req.headers.items():
        if name.startswith("x-amz-") and not name.startswith(("x-amz-meta-", "x-amz-date", "x-amz-security")):
            keys[f"s3:{name}"] = [value]
    if not source:
        for name in ("prefix", "delimiter", "max-keys", "versionId"):
            if name in req.query:
                keys[f"s3:{name.lower()}"] = [req.query[name]]
        tagging = req.headers.get("x-amz-tagging")
        if tagging:
            tags = [pair.partition("=") for pair in tagging.split("&") if pair]
            keys["s3:requestobjecttagkeys"] = [unquote_plus(k) for k, _, _ in tags]
            for k, _, v in tags:
                keys[f"s3:requestobjecttag/{unquote_plus(k).lower()}"] = [unquote_plus(v)]
    return Context(action, resource, keys), key, version_id


async def confirmed_bucket(req: Request, name: str | None = None) -> Bucket:
    """``bucket_of`` with the row read from the catalog (what extensions get: see ``gateway.ext``)."""
    return await bucket_of(req, name, confirm=True)


def forget_bucket(name: str) -> None:
    """Drop a cached row an operation found gone, so the next request reads the name again."""
    if name:
        buckets.pop(name)
