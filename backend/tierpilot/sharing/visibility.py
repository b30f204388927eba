"""The dashboard API's side of sharing: what a user may do in a bucket another user shares with them.

The catalog's API asks (``catalog.service.install_shared_access``, filled by ``wiring``) for each request on a
bucket the caller neither owns nor administers; the answer is ``access.decide`` on the bucket's policy and ACLs,
the decision the gateway takes for the same S3 action, so the Browser and S3 clients always agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from tierpilot.catalog.models import Bucket
from tierpilot.catalog.service import SharedRequest
from tierpilot.projects import repository as project_repository
from tierpilot.sharing import access, repository, service
from tierpilot.sharing.access import EMPTY, SharingState
from tierpilot.sharing.policy import Caller, Context

_BUCKET_ACTIONS = frozenset({"s3:ListBucket", "s3:ListBucketVersions"})


def _context(bucket: Bucket, request: SharedRequest) -> Context:
    now = datetime.now(UTC)
    keys: dict[str, list[str]] = {
        "aws:securetransport": ["true" if request.secure else "false"],
        "aws:currenttime": [now.strftime("%Y-%m-%dT%H:%M:%SZ")], "aws:epochtime": [str(int(now.timestamp()))],
        "aws:username": [request.username], "aws:userid": [str(request.user_id)],
    }
    if request.client:
        keys["aws:sourceip"] = [request.client]
    if request.prefix is not None:
        keys["s3:prefix"] = [request.prefix]
    resource = f"arn:aws:s3:::{bucket.name}"
    if request.action not in _BUCKET_ACTIONS:
        resource += f"/{request.key if request.key is not None else '*'}"
    return Context(request.action, resource, keys)


def _decide(session: Session, bucket: Bucket, state: SharingState, request: SharedRequest) -> bool:
    caller = Caller(request.user_id, request.username)
    ctx = _context(bucket, request)
    want_acl, want_tags = service.object_needs(state, request.action, request.key, False)
    grants = None
    if want_acl or want_tags:
        assert request.key is not None
        grants, tags = service.object_facts(session, bucket.id, request.key, None, want_acl, want_tags)
        service.add_existing_tags(ctx, tags)
    return access.decide(state, caller, is_owner=False, is_admin=False, ctx=ctx, object_grants=grants,
                         role=_role(session, bucket, request.user_id))


def _role(session: Session, bucket: Bucket, user_id: int) -> str | None:
    return None if bucket.project_id is None else project_repository.role_of(session, bucket.project_id, user_id)


def allows(session: Session, bucket: Bucket, request: SharedRequest) -> bool:
    """Whether the bucket's sharing settings or the caller's role in its project let ``request`` through (the
    caller is not the owner or an admin)."""
    state = service.load_state(session, bucket)
    return (state is not EMPTY or _role(session, bucket, request.user_id) is not None) and _decide(
        session, bucket, state, request)


def sharing_buckets(session: Session) -> list[int]:
    """The ids of the buckets with a policy or grants: the only ones ``names`` can say yes to outside projects."""
    return [row.bucket_id for row in repository.sharing_rows(session)]


def names(session: Session, bucket: Bucket, user_id: int, username: str) -> bool:
    """Whether the bucket's sharing gives the caller anything (they are not its owner or an admin): an Allow
    statement of its policy covering them or an ACL grant to them, public ones included unless its public
    access block sets them aside. The API then shows them the bucket (a 403 says what they lack), where to
    anyone else it does not exist."""
    if _role(session, bucket, user_id) is not None:  # the project's members see its buckets
        return True
    state = service.load_state(session, bucket)
    if state is EMPTY:
        return False
    caller = Caller(user_id, username)
    block = state.public_block
    if state.policy is not None and any(
            st.effect == "Allow" and st.principals.covers(caller) != st.not_principal
            and not (st.public and block.restrict_public_buckets) for st in state.policy.statements):
        return True
    return state.acls_enabled and any(g.grantee == f"id:{user_id}" or (g.public and not block.ignore_public_acls)
                                      for g in state.grants)


@dataclass(frozen=True)
class Rights:
    """What a user may do bucket-wide in a bucket shared with them, as the Browser offers it."""

    list: bool
    read: bool
    write: bool
    delete: bool


def rights(session: Session, bucket: Bucket, user_id: int, username: str, client: str = "",
           secure: bool = False) -> Rights:
    """The caller's rights on the whole bucket (a grant on a prefix only shows as none: the API still answers
    each request under that prefix by its own decision)."""
    state = service.load_state(session, bucket)
    member = _role(session, bucket, user_id) is not None

    def may(action: str) -> bool:
        return (state is not EMPTY or member) and _decide(session, bucket, state, SharedRequest(
            user_id, username, action, prefix="" if action == "s3:ListBucket" else None, client=client,
            secure=secure))

    return Rights(may("s3:ListBucket"), may("s3:GetObject"), may("s3:PutObject"), may("s3:DeleteObject"))
