"""Sharing settings: read a bucket's state, change policy, ACLs, ownership and public access block.

Every change bumps ``SHARING_GENERATION`` after its commit, so every gateway process drops its cached
states before the change is answered (``sharing.gate``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from typing import Any

from prometheus_client import Counter
from sqlalchemy.orm import Session

from tierpilot.audit import service as audit
from tierpilot.auth import repository as auth_repository
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import versions
from tierpilot.catalog.errors import CatalogError
from tierpilot.catalog.models import Bucket
from tierpilot.kit import generations, metrics  # noqa: F401  (metrics: set up before the counter below is made)
from tierpilot.sharing import access, acl, repository
from tierpilot.sharing import policy as policies
from tierpilot.sharing.access import EMPTY, ObjectGrants, PublicBlock, SharingState
from tierpilot.sharing.acl import Grant
from tierpilot.sharing.models import BucketSharing

SHARING_GENERATION = "sharing:state"
EXISTING_TAG = "s3:existingobjecttag/"

log = logging.getLogger(__name__)
UNREADABLE_POLICIES = Counter("tierpilot_sharing_unreadable_policies_total",
                              "stored bucket policies read that this version cannot read in full (each load of a "
                              "bucket's sharing state: the unreadable parts deny, see sharing.policy)")
_warned: set[tuple[int, str]] = set()  # (bucket id, digest of the policy): warned once per process


class SharingError(CatalogError):
    """A refused sharing change: ``s3_code``/``s3_status`` for the gateway (which answers catalog errors by
    their S3 code), ``status_code`` for the API, ``field`` naming what was refused."""

    def __init__(self, s3_code: str, message: str, s3_status: int = 400, field: str = "") -> None:
        super().__init__(message, **({"field": field} if field else {}))
        self.s3_code, self.s3_status = s3_code, s3_status
        self.status_code = s3_status if s3_status in (403, 503) else 422

    @classmethod
    def of(cls, exc: acl.AclInvalid) -> SharingError:
        return cls(exc.code, exc.message, 400, exc.field)

    @classmethod
    def unavailable(cls, exc: generations.GenerationUnavailable) -> SharingError:
        """A change refused since the gateways could not be told (S3 clients retry a 503 ServiceUnavailable)."""
        return cls("ServiceUnavailable", exc.message, 503)


def _changed(session: Session) -> None:
    """A change that may take access away: refused (GenerationUnavailable) when the gateways cannot be told."""
    generations.changing(session, SHARING_GENERATION)


def _flag_changed(session: Session) -> None:
    """The bucket's ``object_acls`` flag may have moved: gateways read object ACL rows per request, so a late
    flag only delays a grant (best effort; refusing would keep the previous version's ACL row)."""
    generations.changed(session, SHARING_GENERATION)


def audit_change(session: Session, bucket: Bucket, actor: audit.Actor, change: str, **detail: object) -> None:
    """Record who changed what of a bucket's sharing, in the change's transaction (the audit log)."""
    audit.record(session, "bucket.sharing_changed", actor, bucket.name, change=change, **detail)


def stored_policy(row: BucketSharing, bucket_name: str) -> policies.Policy | None:
    """The row's policy as far as it can be read (``policy.parse_stored``: what cannot be read denies), logged
    and counted when some of it cannot."""
    if not row.policy:
        return None
    policy = policies.parse_stored(row.policy, bucket_name)
    if policy.problems:
        UNREADABLE_POLICIES.inc()
        seen = (row.bucket_id, hashlib.sha256(row.policy.encode()).hexdigest())
        if seen not in _warned and len(_warned) < 10_000:
            _warned.add(seen)
            log.warning("bucket %s: its stored policy cannot be read in full; until its owner replaces or deletes "
                        "it: %s", bucket_name, "; ".join(policy.problems))
    return policy


def state_of(row: BucketSharing | None, bucket_name: str) -> SharingState:
    if row is None:
        return EMPTY
    return SharingState(
        policy=stored_policy(row, bucket_name),
        grants=acl.from_json(row.acl), ownership=row.ownership,
        public_block=PublicBlock.from_json(row.public_block), public_block_set=row.public_block is not None,
        object_acls=row.object_acls)


def load_state(session: Session, bucket: Bucket) -> SharingState:
    return state_of(repository.get(session, bucket.id), bucket.name)


def object_grants(session: Session, bucket_id: int, key: str, version_id: str) -> ObjectGrants | None:
    row = repository.get_object_acl(session, bucket_id, key, version_id)
    return ObjectGrants(row.owner_id, acl.from_json(row.grants)) if row is not None else None


def object_needs(state: SharingState, action: str, key: str | None, is_owner: bool) -> tuple[bool, bool]:
    """Whether deciding ``action`` on object ``key`` needs the object's ACL row, and its tags (a policy testing
    s3:ExistingObjectTag): (want_acl, want_tags). Mostly neither: no statement beyond the cached state."""
    if key is None:
        return False, False
    want_acl = not is_owner and state.object_acls and state.acls_enabled and access.acl_needs_object(action)
    want_tags = state.policy is not None and any(k.startswith(EXISTING_TAG) for k in state.policy.condition_keys)
    return want_acl, want_tags


def add_existing_tags(ctx: policies.Context, tags: dict[str, str]) -> None:
    for name, value in tags.items():
        ctx.keys[EXISTING_TAG + name.lower()] = [value]


def object_facts(session: Session, bucket_id: int, key: str, version_id: str | None, want_acl: bool,
                 want_tags: bool) -> tuple[ObjectGrants | None, dict[str, str]]:
    """The object version's ACL row and tags (for s3:ExistingObjectTag), as asked (the current version when
    ``version_id`` is None)."""
    if version_id is None:
        obj = catalog_repository.get_object(session, bucket_id, key)
        current, tags = (obj.version_id, dict(obj.tags or {})) if obj is not None else (None, {})
    else:
        row = versions.find_version(session, bucket_id, key, version_id)
        current, tags = (version_id, dict(row.tags or {})) if row is not None else (None, {})
    grants = object_grants(session, bucket_id, key, current) if want_acl and current is not None else None
    return grants, tags


def existing_users(session: Session, ids: Iterable[int]) -> set[int]:
    return {i for i in ids if 0 < i < 2**31 and auth_repository.get_user(session, i) is not None}


# policy ------------------------------------------------------------------------------------------------

def _invalid_policy(message: str) -> SharingError:
    return SharingError("MalformedPolicy", message, 400, "policy")


def validate_policy(session: Session, bucket: Bucket, text: str) -> policies.Policy:
    """The parsed policy, or MalformedPolicy: also when it names a user tierpilot does not have."""
    try:
        policy = policies.parse(text, bucket.name)
    except policies.PolicyInvalid as exc:
        raise _invalid_policy(exc.message) from None
    ids, names = policy.named_users
    numeric = {int(i) for i in ids if i.isdigit()}
    if len(existing_users(session, numeric)) != len(ids):
        raise _invalid_policy("Invalid principal in policy: no such user id")
    for name in names:
        if auth_repository.get_user_by_name(session, name) is None:
            raise _invalid_policy(f"Invalid principal in policy: no user {name}")
    return policy


def put_policy(session: Session, bucket: Bucket, text: str) -> policies.Policy:
    policy = validate_policy(session, bucket, text)
    row = repository.get_or_create(session, bucket.id)
    if policy.public and PublicBlock.from_json(row.public_block).block_public_policy:
        raise SharingError("AccessDenied", "Access Denied: the bucket's public access block forbids public "
                           "policies (BlockPublicPolicy)", 403, "policy")
    row.policy = text
    _changed(session)
    return policy


def delete_policy(session: Session, bucket: Bucket) -> None:
    row = repository.get(session, bucket.id)
    if row is not None and row.policy is not None:
        row.policy = None
        _changed(session)


def get_policy(session: Session, bucket: Bucket) -> str | None:
    row = repository.get(session, bucket.id)
    return row.policy if row is not None else None


# ACLs --------------------------------------------------------------------------------------------------

def _check_acl_write(row: BucketSharing | None, grants: tuple[Grant, ...] | None, canned: str | None = None) -> None:
    """``grants`` None: the request names no ACL. Under BucketOwnerEnforced only bucket-owner-full-control may
    be named; BlockPublicAcls refuses grants to AllUsers or AuthenticatedUsers."""
    if grants is None or row is None:
        return
    if row.ownership == "BucketOwnerEnforced" and canned != "bucket-owner-full-control":
        raise SharingError("AccessControlListNotSupported", "The bucket does not allow ACLs", 400, "acl")
    if acl.is_public(grants) and PublicBlock.from_json(row.public_block).block_public_acls:
        raise SharingError("AccessDenied", "Access Denied: the bucket's public access block forbids public ACLs "
                           "(BlockPublicAcls)", 403, "acl")


def put_bucket_acl(session: Session, bucket: Bucket, grants: tuple[Grant, ...], canned: str | None = None) -> None:
    row = repository.get(session, bucket.id)
    _check_acl_write(row, grants, canned)
    is_default = grants == acl.default(bucket.owner_id)
    if row is None and is_default:
        return
    row = row or repository.get_or_create(session, bucket.id)
    row.acl = None if is_default else acl.to_json(grants)
    _changed(session)


def bucket_grants(session: Session, bucket: Bucket) -> tuple[Grant, ...]:
    row = repository.get(session, bucket.id)
    return acl.from_json(row.acl) if row is not None and row.acl is not None else acl.default(bucket.owner_id)


def check_object_acl(session: Session, bucket: Bucket, grants: tuple[Grant, ...] | None, canned: str | None) -> None:
    """Refuse an object ACL the bucket's ownership or public access block forbids (before the write)."""
    _check_acl_write(repository.get(session, bucket.id), grants, canned)


def set_object_acl(session: Session, bucket: Bucket, key: str, version_id: str, owner_id: int,
                   grants: tuple[Grant, ...] | None) -> None:
    """Record a written object's ACL: a row only when it differs from the default (bucket owner, private);
    ``grants`` None keeps the grants the version has (PutObjectAcl keeps its owner)."""
    row = repository.get(session, bucket.id)
    if row is not None and row.ownership == "BucketOwnerEnforced":
        owner_id = bucket.owner_id
    grants = grants if grants is not None else acl.default(owner_id)
    if owner_id == bucket.owner_id and grants == acl.default(owner_id):
        if row is not None and row.object_acls:
            repository.delete_object_acl(session, bucket.id, key, version_id)
            _flag_changed(session)
        return
    row = row or repository.get_or_create(session, bucket.id)
    row.object_acls = True
    repository.put_object_acl(session, bucket.id, key, version_id, owner_id, acl.to_json(grants))
    _flag_changed(session)


def complete_upload_acl(session: Session, bucket: Bucket, key: str, upload_id: str, version_id: str) -> None:
    """The ACL CreateMultipartUpload asked for becomes the completed version's."""
    row = repository.get(session, bucket.id)
    if row is None or not row.object_acls:
        return
    pending = f"upload:{upload_id}"
    if repository.get_object_acl(session, bucket.id, key, pending) is None:
        repository.delete_object_acl(session, bucket.id, key, version_id)
    else:
        repository.move_object_acl(session, bucket.id, key, pending, version_id)
    _flag_changed(session)


# ownership and public access block ---------------------------------------------------------------------

def set_ownership(session: Session, bucket: Bucket, ownership: str | None) -> None:
    if ownership is not None and ownership not in acl.OWNERSHIP:
        raise SharingError("MalformedXML", f"ObjectOwnership must be one of {', '.join(acl.OWNERSHIP)}", 400,
                           "ObjectOwnership")
    row = repository.get(session, bucket.id)
    if ownership == "BucketOwnerEnforced" and row is not None and row.acl:
        raise SharingError("InvalidBucketAclWithObjectOwnership", "Bucket cannot have ACLs set with ObjectOwnership's "
                           "BucketOwnerEnforced setting", 400, "ObjectOwnership")
    if row is None and ownership is None:
        return
    row = row or repository.get_or_create(session, bucket.id)
    row.ownership = ownership
    _changed(session)


def get_ownership(session: Session, bucket: Bucket) -> str | None:
    row = repository.get(session, bucket.id)
    return row.ownership if row is not None else None


def set_public_block(session: Session, bucket: Bucket, flags: dict[str, bool] | None) -> None:
    row = repository.get(session, bucket.id)
    if row is None and flags is None:
        return
    row = row or repository.get_or_create(session, bucket.id)
    row.public_block = flags
    _changed(session)


def get_public_block(session: Session, bucket: Bucket) -> dict[str, Any] | None:
    row = repository.get(session, bucket.id)
    return row.public_block if row is not None else None
