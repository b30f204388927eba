"""The dashboard's Sharing panel in terms of the bucket policy: a grant to a user and a public prefix are
statements tierpilot writes with its own Sids, next to whatever else the owner wrote, so the S3 API and the
panel always show the same policy and the gateway evaluates one thing."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.auth.models import User
from tierpilot.catalog.models import Bucket
from tierpilot.sharing import policy as policies
from tierpilot.sharing import service
from tierpilot.sharing.service import SharingError

Access = Literal["read", "read-write"]
READ_ACTIONS = ["s3:GetObject", "s3:GetObjectVersion", "s3:GetObjectTagging", "s3:GetObjectAttributes",
                "s3:ListBucket", "s3:ListBucketVersions"]
WRITE_ACTIONS = ["s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject", "s3:DeleteObjectVersion",
                 "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts", "s3:ListBucketMultipartUploads"]
USER_SID = "TierpilotUser"  # + user id
PUBLIC_SID = "TierpilotPublic"  # + hash of the prefix; + "List" for its listing statement


@dataclass(frozen=True)
class UserGrant:
    user_id: int
    username: str
    access: Access


def _document(text: str | None) -> dict[str, Any]:
    """The policy as a document whose Statement is a list of objects (what cannot be read shows as none)."""
    try:
        doc = json.loads(text) if text else None
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        return {"Version": "2012-10-17", "Statement": []}
    statements = doc.get("Statement")
    doc["Statement"] = [st for st in (statements if isinstance(statements, list) else [statements])
                        if isinstance(st, dict)]
    return doc


def _editable(session: Session, bucket: Bucket) -> dict[str, Any]:
    """The bucket's policy to change a statement of; refused while the stored policy cannot be read in full (a
    change would rewrite what could not be read): the owner replaces or deletes it first."""
    text = service.get_policy(session, bucket)
    problems = policies.parse_stored(text, bucket.name).problems if text else ()
    if problems:
        raise SharingError("MalformedPolicy", "the bucket's stored policy cannot be read (" + "; ".join(problems)
                           + "): replace or delete it first", 400, "policy")
    return _document(text)


def _save(session: Session, bucket: Bucket, doc: dict[str, Any]) -> None:
    if doc["Statement"]:
        service.put_policy(session, bucket, json.dumps(doc, indent=2))
    else:
        service.delete_policy(session, bucket)


def _prefix_sid(prefix: str) -> str:
    return PUBLIC_SID + hashlib.sha256(prefix.encode()).hexdigest()[:12]


def user_grants(text: str | None) -> list[UserGrant]:
    """The users the panel's statements give access to."""
    out = []
    for st in _document(text)["Statement"]:
        sid = str(st.get("Sid", ""))
        if sid.startswith(USER_SID) and sid[len(USER_SID):].isdigit():
            actions = st.get("Action")
            principal = st.get("Principal")
            arn = str(principal.get("AWS", "")) if isinstance(principal, dict) else ""  # a stored one may be odd
            out.append(UserGrant(int(sid[len(USER_SID):]), arn.rsplit("/", 1)[-1],
                                 "read-write" if isinstance(actions, list) and "s3:PutObject" in actions
                                 else "read"))
    return out


def public_prefixes(text: str | None, bucket: str) -> list[str]:
    out = []
    for st in _document(text)["Statement"]:
        sid = str(st.get("Sid", ""))
        if sid.startswith(PUBLIC_SID) and not sid.endswith("List"):
            resource = str(st.get("Resource", ""))
            out.append(resource.removeprefix(f"arn:aws:s3:::{bucket}/").removesuffix("*"))
    return out


def grant_user(session: Session, bucket: Bucket, user: User, access: Access) -> None:
    if user.id == bucket.owner_id:
        raise SharingError("InvalidArgument", "The owner has every access already", 400, "username")
    doc = _editable(session, bucket)
    sid = f"{USER_SID}{user.id}"
    doc["Statement"] = [st for st in doc["Statement"] if st.get("Sid") != sid] + [{
        "Sid": sid, "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{user.id}:user/{user.username}"},
        "Action": READ_ACTIONS + (WRITE_ACTIONS if access == "read-write" else []),
        "Resource": [f"arn:aws:s3:::{bucket.name}", f"arn:aws:s3:::{bucket.name}/*"],
    }]
    _save(session, bucket, doc)


def revoke_user(session: Session, bucket: Bucket, user_id: int) -> None:
    doc = _editable(session, bucket)
    doc["Statement"] = [st for st in doc["Statement"] if st.get("Sid") != f"{USER_SID}{user_id}"]
    _save(session, bucket, doc)


def publish_prefix(session: Session, bucket: Bucket, prefix: str) -> None:
    """Anyone, unsigned requests included, may read and list the objects under ``prefix``."""
    sid = _prefix_sid(prefix)
    doc = _editable(session, bucket)
    doc["Statement"] = [st for st in doc["Statement"] if not str(st.get("Sid", "")).startswith(sid)] + [
        {"Sid": sid, "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{bucket.name}/{prefix}*"},
        {"Sid": sid + "List", "Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket",
         "Resource": f"arn:aws:s3:::{bucket.name}", "Condition": {"StringLike": {"s3:prefix": f"{prefix}*"}}},
    ]
    _save(session, bucket, doc)


def unpublish_prefix(session: Session, bucket: Bucket, prefix: str) -> None:
    sid = _prefix_sid(prefix)
    doc = _editable(session, bucket)
    doc["Statement"] = [st for st in doc["Statement"] if not str(st.get("Sid", "")).startswith(sid)]
    _save(session, bucket, doc)


def explain(session: Session, bucket: Bucket, text: str) -> tuple[list[str], bool]:
    """What a policy allows in words and whether it is public (MalformedPolicy as SharingError)."""
    policy = service.validate_policy(session, bucket, text)
    ids, _ = policy.named_users
    names = auth_repository.usernames(session, [int(i) for i in ids if i.isdigit() and int(i) < 2**31])
    return policies.describe(policy, {str(k): v for k, v in names.items()}), policy.public
