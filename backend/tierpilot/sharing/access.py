"""Who may do what on a bucket: the S3 action of each gateway operation and the decision for one caller.

Pure. The bucket owner may do everything a bucket policy does not explicitly deny (and always manage the
policy itself, so an owner cannot lock themselves out; the Denies standing for statements of a stored policy
that can no longer be read spare them too: ``policy.parse_stored``); admins may do everything. Anyone else
needs an Allow of the policy or, where ACLs are enabled, a grant of the bucket's or the object's ACL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tierpilot.projects import roles
from tierpilot.sharing import acl
from tierpilot.sharing.acl import Grant
from tierpilot.sharing.policy import Caller, Context, Policy

POLICY_ACTIONS = frozenset({"s3:GetBucketPolicy", "s3:PutBucketPolicy", "s3:DeleteBucketPolicy"})

# (method, level, sub-resource) -> S3 action; "+version": the *Version action when the request names a versionId
_ACTIONS: dict[tuple[str, str, str], str] = {
    ("GET", "bucket", ""): "s3:ListBucket",
    ("HEAD", "bucket", ""): "s3:ListBucket",
    ("DELETE", "bucket", ""): "s3:DeleteBucket",
    ("GET", "bucket", "versions"): "s3:ListBucketVersions",
    ("GET", "bucket", "uploads"): "s3:ListBucketMultipartUploads",
    ("GET", "bucket", "location"): "s3:GetBucketLocation",
    ("POST", "bucket", "delete"): "s3:DeleteObject",
    ("POST", "bucket", ""): "s3:PutObject",  # a browser form upload
    ("GET", "bucket", "acl"): "s3:GetBucketAcl",
    ("PUT", "bucket", "acl"): "s3:PutBucketAcl",
    ("GET", "bucket", "policy"): "s3:GetBucketPolicy",
    ("PUT", "bucket", "policy"): "s3:PutBucketPolicy",
    ("DELETE", "bucket", "policy"): "s3:DeleteBucketPolicy",
    ("GET", "bucket", "policyStatus"): "s3:GetBucketPolicyStatus",
    ("GET", "bucket", "ownershipControls"): "s3:GetBucketOwnershipControls",
    ("PUT", "bucket", "ownershipControls"): "s3:PutBucketOwnershipControls",
    ("DELETE", "bucket", "ownershipControls"): "s3:PutBucketOwnershipControls",
    ("GET", "bucket", "publicAccessBlock"): "s3:GetBucketPublicAccessBlock",
    ("PUT", "bucket", "publicAccessBlock"): "s3:PutBucketPublicAccessBlock",
    ("DELETE", "bucket", "publicAccessBlock"): "s3:PutBucketPublicAccessBlock",
    ("GET", "bucket", "versioning"): "s3:GetBucketVersioning",
    ("PUT", "bucket", "versioning"): "s3:PutBucketVersioning",
    ("GET", "bucket", "tagging"): "s3:GetBucketTagging",
    ("PUT", "bucket", "tagging"): "s3:PutBucketTagging",
    ("DELETE", "bucket", "tagging"): "s3:PutBucketTagging",
    ("GET", "bucket", "lifecycle"): "s3:GetLifecycleConfiguration",
    ("PUT", "bucket", "lifecycle"): "s3:PutLifecycleConfiguration",
    ("DELETE", "bucket", "lifecycle"): "s3:PutLifecycleConfiguration",
    ("GET", "bucket", "object-lock"): "s3:GetBucketObjectLockConfiguration",
    ("PUT", "bucket", "object-lock"): "s3:PutBucketObjectLockConfiguration",
    ("GET", "bucket", "cors"): "s3:GetBucketCORS",
    ("PUT", "bucket", "cors"): "s3:PutBucketCORS",
    ("DELETE", "bucket", "cors"): "s3:PutBucketCORS",
    ("GET", "object", ""): "s3:GetObject+version",
    ("HEAD", "object", ""): "s3:GetObject+version",
    ("PUT", "object", ""): "s3:PutObject",
    ("DELETE", "object", ""): "s3:DeleteObject+version",
    ("GET", "object", "attributes"): "s3:GetObjectAttributes+version",
    ("GET", "object", "tagging"): "s3:GetObjectTagging+version",
    ("PUT", "object", "tagging"): "s3:PutObjectTagging+version",
    ("DELETE", "object", "tagging"): "s3:DeleteObjectTagging+version",
    ("GET", "object", "acl"): "s3:GetObjectAcl+version",
    ("PUT", "object", "acl"): "s3:PutObjectAcl+version",
    ("GET", "object", "retention"): "s3:GetObjectRetention",
    ("PUT", "object", "retention"): "s3:PutObjectRetention",
    ("GET", "object", "legal-hold"): "s3:GetObjectLegalHold",
    ("PUT", "object", "legal-hold"): "s3:PutObjectLegalHold",
    ("POST", "object", "restore"): "s3:RestoreObject",
    ("POST", "object", "uploads"): "s3:PutObject",
    ("PUT", "object", "uploadId"): "s3:PutObject",
    ("POST", "object", "uploadId"): "s3:PutObject",
    ("DELETE", "object", "uploadId"): "s3:AbortMultipartUpload",
    ("GET", "object", "uploadId"): "s3:ListMultipartUploadParts",
}

# action -> (whose ACL, permission) for the actions an ACL can grant
_ACL_PERMISSION: dict[str, tuple[str, str]] = {
    "s3:ListBucket": ("bucket", "READ"),
    "s3:ListBucketVersions": ("bucket", "READ"),
    "s3:ListBucketMultipartUploads": ("bucket", "READ"),
    "s3:PutObject": ("bucket", "WRITE"),
    "s3:DeleteObject": ("bucket", "WRITE"),
    "s3:DeleteObjectVersion": ("bucket", "WRITE"),
    "s3:AbortMultipartUpload": ("bucket", "WRITE"),
    "s3:ListMultipartUploadParts": ("bucket", "WRITE"),
    "s3:GetBucketAcl": ("bucket", "READ_ACP"),
    "s3:PutBucketAcl": ("bucket", "WRITE_ACP"),
    "s3:GetObject": ("object", "READ"),
    "s3:GetObjectVersion": ("object", "READ"),
    "s3:GetObjectAttributes": ("object", "READ"),
    "s3:GetObjectVersionAttributes": ("object", "READ"),
    "s3:GetObjectAcl": ("object", "READ_ACP"),
    "s3:GetObjectVersionAcl": ("object", "READ_ACP"),
    "s3:PutObjectAcl": ("object", "WRITE_ACP"),
    "s3:PutObjectVersionAcl": ("object", "WRITE_ACP"),
}


def action_for(method: str, level: str, sub: str, versioned: bool) -> str:
    """The S3 action of an operation (``versioned``: the request names a versionId)."""
    action = _ACTIONS.get((method, level, sub), f"s3:{method.title()}{level.title()}{sub}")
    if action.endswith("+version"):
        action = action.removesuffix("+version")
        if versioned:
            stem = action.removeprefix("s3:")
            # GetObject -> GetObjectVersion, GetObjectAcl -> GetObjectVersionAcl, …
            action = "s3:" + (stem + "Version" if stem.endswith("Object") else stem.replace("Object", "ObjectVersion"))
    return action


def acl_needs_object(action: str) -> bool:
    """Whether deciding ``action`` by ACL needs the object's ACL row."""
    return _ACL_PERMISSION.get(action, ("", ""))[0] == "object"


@dataclass(frozen=True)
class PublicBlock:
    block_public_acls: bool = False
    ignore_public_acls: bool = False
    block_public_policy: bool = False
    restrict_public_buckets: bool = False

    @classmethod
    def from_json(cls, raw: dict[str, Any] | None) -> PublicBlock:
        raw = raw or {}
        return cls(*(bool(raw.get(flag, False)) for flag in acl.PUBLIC_BLOCK_FLAGS))


@dataclass(frozen=True)
class SharingState:
    """A bucket's sharing settings as the gateway caches them (``EMPTY``: owner only)."""

    policy: Policy | None = None
    grants: tuple[Grant, ...] = ()
    ownership: str | None = None
    public_block: PublicBlock = field(default_factory=PublicBlock)
    public_block_set: bool = False
    object_acls: bool = False

    @property
    def acls_enabled(self) -> bool:
        return self.ownership != "BucketOwnerEnforced"


EMPTY = SharingState()


@dataclass(frozen=True)
class ObjectGrants:
    """An object version's ACL row: its owner (who wrote it) and its grants besides the owner's."""

    owner_id: int
    grants: tuple[Grant, ...] = ()


def decide(state: SharingState, caller: Caller, *, is_owner: bool, is_admin: bool, ctx: Context,
           object_grants: ObjectGrants | None = None, role: str | None = None) -> bool:
    """Whether ``caller`` may do ``ctx.action`` on ``ctx.resource``; ``role``: the caller's role in the bucket's
    project, which grants what it permits unless the bucket's policy denies it explicitly."""
    if is_admin or (is_owner and ctx.action in POLICY_ACTIONS):
        return True
    if state.policy is not None:
        restrict = state.public_block.restrict_public_buckets and not is_owner
        decision = state.policy.evaluate(caller, ctx, skip_public=restrict, owner=is_owner)
        if decision is not None:
            return decision == "allow"
    if is_owner or (role is not None and roles.permits(role, ctx.action)):
        return True
    if not state.acls_enabled:
        return False
    level, permission = _ACL_PERMISSION.get(ctx.action, ("", ""))
    ignore_public = state.public_block.ignore_public_acls
    if level == "bucket":
        return acl.permits(state.grants, permission, user_id=caller.user_id, anonymous=caller.anonymous,
                           ignore_public=ignore_public)
    if level == "object" and object_grants is not None:
        if not caller.anonymous and object_grants.owner_id == caller.user_id:
            return True
        return acl.permits(object_grants.grants, permission, user_id=caller.user_id, anonymous=caller.anonymous,
                           ignore_public=ignore_public)
    return False
