"""S3 access control lists: grants, canned ACLs, the x-amz-grant-* headers, and what a grant permits.

Pure. A grant is a ``Grant`` (grantee, permission); grantees are ``id:<user id>`` (a tierpilot user's
canonical id is the user id) or ``uri:<group URI>``. An ACL is the whole list, the owner's own grant
included (S3 lets a PutBucketAcl document leave it out); ``default`` is the owner's FULL_CONTROL alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTHENTICATED_USERS = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
LOG_DELIVERY = "http://acs.amazonaws.com/groups/s3/LogDelivery"
GROUPS = (ALL_USERS, AUTHENTICATED_USERS, LOG_DELIVERY)
PERMISSIONS = ("READ", "WRITE", "READ_ACP", "WRITE_ACP", "FULL_CONTROL")
GRANT_HEADERS = {f"x-amz-grant-{p.lower().replace('_', '-')}": p for p in PERMISSIONS}
CANNED = ("private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read", "bucket-owner-read",
          "bucket-owner-full-control", "log-delivery-write")
OWNERSHIP = ("BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter")
PUBLIC_BLOCK_FLAGS = ("BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets")


class AclInvalid(ValueError):
    """An ACL S3 would refuse: ``code`` is its S3 error code (InvalidArgument, UnresolvableGrantByEmailAddress…)."""

    def __init__(self, code: str, message: str, field: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.field = code, message, field


@dataclass(frozen=True)
class Grant:
    grantee: str  # "id:5" | "uri:http://acs.amazonaws.com/groups/global/AllUsers"
    permission: str

    def as_json(self) -> dict[str, str]:
        return {"grantee": self.grantee, "permission": self.permission}

    @property
    def public(self) -> bool:
        return self.grantee in (f"uri:{ALL_USERS}", f"uri:{AUTHENTICATED_USERS}")


def from_json(rows: Iterable[Any] | None) -> tuple[Grant, ...]:
    return tuple(Grant(r["grantee"], r["permission"]) for r in rows or ())


def to_json(grants: Iterable[Grant]) -> list[Any]:
    return [g.as_json() for g in grants]


def default(owner: int) -> tuple[Grant, ...]:
    return (Grant(f"id:{owner}", "FULL_CONTROL"),)


def canned(name: str, *, bucket_owner: int, owner: int, for_object: bool) -> tuple[Grant, ...]:
    """The grants a canned ACL gives: the groups' first and the owner's FULL_CONTROL after them (S3's order),
    then the bucket owner's for ``bucket-owner-*`` on another user's object."""
    if name not in CANNED:
        raise AclInvalid("InvalidArgument", f"The canned ACL {name!r} is not valid", "x-amz-acl")
    grants: list[Grant] = []
    if name in ("public-read", "public-read-write"):
        grants.append(Grant(f"uri:{ALL_USERS}", "READ"))
    if name == "public-read-write":
        grants.append(Grant(f"uri:{ALL_USERS}", "WRITE"))
    if name == "authenticated-read":
        grants.append(Grant(f"uri:{AUTHENTICATED_USERS}", "READ"))
    if name == "log-delivery-write" and not for_object:
        grants += [Grant(f"uri:{LOG_DELIVERY}", "WRITE"), Grant(f"uri:{LOG_DELIVERY}", "READ_ACP")]
    grants.append(Grant(f"id:{owner}", "FULL_CONTROL"))
    if for_object and bucket_owner != owner and name in ("bucket-owner-read", "bucket-owner-full-control"):
        grants.append(Grant(f"id:{bucket_owner}", "READ" if name == "bucket-owner-read" else "FULL_CONTROL"))
    return tuple(grants)


_GRANTEE = re.compile(r'\s*(id|uri|emailAddress)\s*=\s*"?([^",]*)"?\s*(?:,|$)', re.IGNORECASE)


def grantee(kind: str, value: str, known_ids: set[int]) -> str:
    """A grantee of a header or document as stored; users must exist, groups must be S3's."""
    kind = kind.lower()
    if kind in ("id", "canonicaluser"):
        if not value.isdigit() or int(value) not in known_ids:
            raise AclInvalid("InvalidArgument", "Invalid id", "CanonicalUser/ID")
        return f"id:{int(value)}"
    if kind in ("uri", "group"):
        if value not in GROUPS:
            raise AclInvalid("InvalidArgument", f"Invalid group uri {value}", "Group/URI")
        return f"uri:{value}"
    raise AclInvalid("UnresolvableGrantByEmailAddress",
                     "The e-mail address you provided does not match any account on record.", "EmailAddress")


def header_grantee_ids(headers: dict[str, str]) -> set[int]:
    """The user ids x-amz-grant-* headers name (for the caller to check they exist)."""
    ids: set[int] = set()
    for name in GRANT_HEADERS:
        for kind, value in _GRANTEE.findall(headers.get(name, "")):
            if kind.lower() == "id" and value.isdigit():
                ids.add(int(value))
    return ids


def from_headers(headers: dict[str, str], *, bucket_owner: int, owner: int, for_object: bool,
                 known_ids: set[int]) -> tuple[Grant, ...] | None:
    """The grants x-amz-acl or x-amz-grant-* ask for, or None when the request names no ACL."""
    acl = headers.get("x-amz-acl")
    explicit = [name for name in GRANT_HEADERS if name in headers]
    if acl is not None and explicit:
        raise AclInvalid("InvalidRequest", "Specifying both Canned ACLs and Header Grants is not allowed",
                         "x-amz-acl")
    if acl is not None:
        return canned(acl.strip(), bucket_owner=bucket_owner, owner=owner, for_object=for_object)
    if not explicit:
        return None
    grants: list[Grant] = []
    for name in explicit:
        raw = headers[name]
        matches = _GRANTEE.findall(raw)
        if not matches:
            raise AclInvalid("InvalidArgument", f"{name} must list grantees as id=\"…\" or uri=\"…\"", name)
        grants += [Grant(grantee(kind, value.strip(), known_ids), GRANT_HEADERS[name]) for kind, value in matches]
    return normalize(grants)


def normalize(grants: Sequence[Grant]) -> tuple[Grant, ...]:
    """Without repeats, in the order given."""
    seen: list[Grant] = []
    for g in grants:
        if g.permission not in PERMISSIONS:
            raise AclInvalid("MalformedACLError", f"Invalid permission {g.permission}", "Permission")
        if g in seen:
            continue
        seen.append(g)
    return tuple(seen)


def is_public(grants: Iterable[Grant]) -> bool:
    return any(g.public for g in grants)


def permits(grants: Iterable[Grant], permission: str, *, user_id: int, anonymous: bool,
            ignore_public: bool) -> bool:
    """Whether a grant gives the caller ``permission`` (FULL_CONTROL gives every permission)."""
    for g in grants:
        if g.permission not in (permission, "FULL_CONTROL"):
            continue
        if g.grantee == f"uri:{ALL_USERS}" and not ignore_public:
            return True
        if g.grantee == f"uri:{AUTHENTICATED_USERS}" and not anonymous and not ignore_public:
            return True
        if not anonymous and g.grantee == f"id:{user_id}":
            return True
    return False
