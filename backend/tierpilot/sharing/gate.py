"""The gateway's side of sharing: bucket sharing states cached per process, and the decision per request.

States are cached by bucket id under the sharing generation (``kit.generations``, read for every request):
every change moves it after its commit and before it is answered (and is refused when it cannot), so no
process grants from a state older than the last answered change. A bucket without sharing settings is
cached as ``EMPTY``: the owner's requests then cost no database statement. Without Redis, owners' requests
use states at most ``TIERPILOT_GATEWAY_CACHE_S`` old (as the bucket rows themselves) and everyone else's read
the state again, so a grant taken away stops at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog.models import Bucket
from tierpilot.kit import generations
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run
from tierpilot.projects import access as project_access
from tierpilot.sharing import access, acl, service
from tierpilot.sharing.access import ObjectGrants, SharingState
from tierpilot.sharing.acl import Grant
from tierpilot.sharing.policy import Caller, Context

states: generations.GenerationCache[int, SharingState] = generations.GenerationCache(
    service.SHARING_GENERATION, get_settings().gateway_cache_s)


async def current_state(bucket: Bucket, fresh: bool, seen: generations.Seen | None = None) -> SharingState:
    """The bucket's state; ``fresh`` asks for one no older than the last change (else the TTL bounds it), that is
    than the last change answered before the request that passes ``seen`` began."""
    generation = await states.generation(seen)
    cached = states.get(bucket.id, generation, stale_ok=not fresh)
    if cached is not None:
        return cached
    state = await run(_load, bucket)
    states.put(bucket.id, state, generation)
    return state


def _load(bucket: Bucket) -> SharingState:
    with transaction() as session:
        return service.load_state(session, bucket)


def _object_facts(bucket_id: int, key: str, version_id: str | None, want_acl: bool,
                  want_tags: bool) -> tuple[ObjectGrants | None, dict[str, str]]:
    with transaction() as session:
        return service.object_facts(session, bucket_id, key, version_id, want_acl, want_tags)


async def state_for(bucket: Bucket, caller: Caller, *, is_admin: bool,
                    seen: generations.Seen | None = None) -> SharingState | None:
    """The bucket's state for deciding the request, or None when it needs no decision: admins, and the owner
    of a bucket without a policy (the hot path: no request context is built)."""
    if is_admin:
        return None
    is_owner = not caller.anonymous and bucket.owner_id == caller.user_id
    state = await current_state(bucket, fresh=not is_owner, seen=seen)
    return None if is_owner and state.policy is None else state


async def allowed(bucket: Bucket, state: SharingState, caller: Caller, *, ctx: Context, key: str | None,
                  version_id: str | None) -> bool:
    """Whether ``caller`` (not an admin) may do ``ctx.action`` (on object ``key`` when given) in ``bucket``."""
    is_owner = not caller.anonymous and bucket.owner_id == caller.user_id
    want_acl, want_tags = service.object_needs(state, ctx.action, key, is_owner)
    grants = None
    if want_acl or want_tags:
        assert key is not None
        grants, tags = await run(_object_facts, bucket.id, key, version_id, want_acl, want_tags)
        service.add_existing_tags(ctx, tags)
    role = None if is_owner or caller.anonymous else await project_access.role_for(bucket.project_id, caller.user_id)
    return access.decide(state, caller, is_owner=is_owner, is_admin=False, ctx=ctx, object_grants=grants, role=role)


async def absent_and_listable(bucket: Bucket, state: SharingState, caller: Caller, *, ctx: Context,
                              key: str) -> bool:
    """For a refused read: whether the caller may list ``key`` (s3:ListBucket with s3:prefix = key) and it does
    not exist. S3 then answers 404, not 403: the listing would have told the caller as much."""
    listing = Context("s3:ListBucket", f"arn:aws:s3:::{bucket.name}", {**ctx.keys, "s3:prefix": [key]})
    if not await allowed(bucket, state, caller, ctx=listing, key=None, version_id=None):
        return False
    return await run(_absent, bucket.id, key)


def _absent(bucket_id: int, key: str) -> bool:
    with transaction() as session:
        return catalog_repository.get_object(session, bucket_id, key) is None


# ACLs that writes ask for (x-amz-acl, x-amz-grant-*) ----------------------------------------------------

@dataclass(frozen=True)
class WriteAcl:
    """What an object write asks for: the object's owner (the writer, or the bucket owner where the bucket's
    ownership says so) and its grants (None: the default, private)."""

    owner_id: int
    grants: tuple[Grant, ...] | None


def _requested(bucket: Bucket, headers: dict[str, str], writer_id: int, for_object: bool) -> WriteAcl:
    ids = acl.header_grantee_ids(headers)
    with transaction() as session:
        known = service.existing_users(session, ids) if ids else set()
        row_state = service.load_state(session, bucket)
        canned = headers.get("x-amz-acl")
        owner = writer_id
        preferred = (row_state.ownership == "BucketOwnerPreferred"
                     and (canned or "").strip() == "bucket-owner-full-control")
        if for_object and (row_state.ownership == "BucketOwnerEnforced" or preferred):
            owner = bucket.owner_id
        try:
            grants = acl.from_headers(headers, bucket_owner=bucket.owner_id, owner=owner, for_object=for_object,
                                      known_ids=known)
        except acl.AclInvalid as exc:
            raise service.SharingError.of(exc) from None
        service.check_object_acl(session, bucket, grants, canned.strip() if canned else None)
    return WriteAcl(owner, grants)


async def requested_acl(bucket: Bucket, headers: dict[str, str], writer_id: int, for_object: bool = True) -> WriteAcl:
    """The ACL a PutObject, CopyObject, CreateMultipartUpload or CreateBucket asks for, checked against the
    bucket's ownership and public access block before anything is written (AclInvalid, SharingError)."""
    named = "x-amz-acl" in headers or any(h in headers for h in acl.GRANT_HEADERS)
    if not named and (not for_object or writer_id == bucket.owner_id):
        return WriteAcl(bucket.owner_id if for_object else writer_id, None)
    return await run(_requested, bucket, headers, writer_id, for_object)


async def record_write(bucket: Bucket, key: str, version_id: str, wanted: WriteAcl,
                       seen: generations.Seen | None = None) -> None:
    """After an object write: its ACL row (or none, replacing what the overwritten version had)."""
    if wanted.grants is None and wanted.owner_id == bucket.owner_id:
        state = await current_state(bucket, fresh=True, seen=seen)
        if not state.object_acls:
            return
    await run(_record, bucket, key, version_id, wanted)


def _record(bucket: Bucket, key: str, version_id: str, wanted: WriteAcl) -> None:
    with transaction(write=True) as session:
        service.set_object_acl(session, bucket, key, version_id, wanted.owner_id, wanted.grants)
    states.forget(bucket.id)


@dataclass(frozen=True)
class NewBucket:
    """What a CreateBucket asks for besides the bucket: its ACL (None: private) and object ownership."""

    grants: tuple[Grant, ...] | None = None
    ownership: str | None = None


def _new_bucket(headers: dict[str, str], owner_id: int) -> NewBucket:
    ownership = headers.get("x-amz-object-ownership")
    if ownership is not None and ownership.strip() not in acl.OWNERSHIP:
        raise service.SharingError("InvalidArgument", f"x-amz-object-ownership must be one of "
                                   f"{', '.join(acl.OWNERSHIP)}", 400, "x-amz-object-ownership")
    ids = acl.header_grantee_ids(headers)
    with transaction() as session:
        known = service.existing_users(session, ids) if ids else set()
    try:
        grants = acl.from_headers(headers, bucket_owner=owner_id, owner=owner_id, for_object=False, known_ids=known)
    except acl.AclInvalid as exc:
        raise service.SharingError.of(exc) from None
    canned = (headers.get("x-amz-acl") or "").strip()
    if (ownership or "").strip() == "BucketOwnerEnforced" and grants is not None \
            and canned not in ("private", "bucket-owner-full-control"):
        raise service.SharingError("InvalidBucketAclWithObjectOwnership", "Bucket cannot have ACLs set with "
                                   "ObjectOwnership's BucketOwnerEnforced setting", 400, "x-amz-acl")
    return NewBucket(grants, ownership.strip() if ownership else None)


async def requested_bucket_acl(headers: dict[str, str], owner_id: int) -> NewBucket:
    """The ACL and object ownership a CreateBucket asks for, checked before the bucket is made."""
    named = "x-amz-acl" in headers or "x-amz-object-ownership" in headers or any(h in headers
                                                                                 for h in acl.GRANT_HEADERS)
    return await run(_new_bucket, headers, owner_id) if named else NewBucket()


async def record_bucket_acl(bucket: Bucket, wanted: NewBucket) -> None:
    """After CreateBucket: the new bucket's ACL and ownership, when it asked for any."""
    if wanted.grants is not None or wanted.ownership is not None:
        await run(_record_bucket, bucket, wanted)


def _record_bucket(bucket: Bucket, wanted: NewBucket) -> None:
    try:
        with transaction(write=True) as session:
            if wanted.grants is not None:
                service.put_bucket_acl(session, bucket, wanted.grants)
            if wanted.ownership is not None:
                service.set_ownership(session, bucket, wanted.ownership)
    except generations.GenerationUnavailable as exc:
        raise service.SharingError.unavailable(exc) from None
    states.forget(bucket.id)


def _complete(bucket: Bucket, key: str, upload_id: str, version_id: str) -> None:
    with transaction(write=True) as session:
        service.complete_upload_acl(session, bucket, key, upload_id, version_id)
    states.forget(bucket.id)


async def record_completion(bucket: Bucket, key: str, upload_id: str, version_id: str,
                            seen: generations.Seen | None = None) -> None:
    """After CompleteMultipartUpload: the ACL its CreateMultipartUpload asked for becomes the version's."""
    state = await current_state(bucket, fresh=True, seen=seen)
    if state.object_acls:
        await run(_complete, bucket, key, upload_id, version_id)
