"""What each project role may do in the project's buckets, as S3 actions (pure)."""

from __future__ import annotations

from typing import Literal

Role = Literal["viewer", "member", "manager"]
ROLES: tuple[Role, ...] = ("viewer", "member", "manager")

# a member writes and deletes objects and restores them; bucket settings and sharing stay with the owner,
# managers and admins
_MEMBER_WRITES = frozenset({
    "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:AbortMultipartUpload", "s3:RestoreObject",
    "s3:PutObjectTagging", "s3:PutObjectVersionTagging", "s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging",
    "s3:PutObjectRetention", "s3:PutObjectLegalHold",
})
# even a manager does not change who else may reach the bucket or delete it: that is its owner's (and admins')
_OWNER_ONLY = frozenset({"s3:PutBucketPolicy", "s3:DeleteBucketPolicy", "s3:PutBucketAcl", "s3:PutObjectAcl",
                         "s3:PutObjectVersionAcl", "s3:PutBucketOwnershipControls", "s3:PutBucketPublicAccessBlock",
                         "s3:DeleteBucket"})


def is_read(action: str) -> bool:
    return action.startswith(("s3:Get", "s3:List"))


def permits(role: str | None, action: str) -> bool:
    """Whether a project ``role`` lets its holder do ``action`` in one of the project's buckets."""
    if role is None:
        return False
    if is_read(action):
        return role in ROLES
    if role == "member":
        return action in _MEMBER_WRITES
    return role == "manager" and action not in _OWNER_ONLY


def manages(role: str | None) -> bool:
    return role == "manager"
