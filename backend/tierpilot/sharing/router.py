"""The Sharing panel's API: who may reach a bucket, grants to other users, public prefixes, the policy.

Owner or admin only for a bucket's sharing (403 for a grantee, 404 for anyone else: ``catalog.service``);
``GET /api/sharing/with-me`` lists what others share with the caller. Every change goes through the same
service the gateway's ?policy operations use.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from sqlalchemy.orm import Session

from tierpilot.audit.service import Actor
from tierpilot.auth import repository as auth_repository
from tierpilot.auth.deps import CurrentUser, SessionDep, client_of
from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.models import Bucket
from tierpilot.kit.errors import Invalid
from tierpilot.sharing import acl, repository, service, statements, visibility
from tierpilot.sharing import policy as policies
from tierpilot.sharing.policy import Caller
from tierpilot.sharing.schemas import (
    PolicyCheckOut,
    PolicyIn,
    PublicBlockOut,
    PublicPrefixIn,
    SharedBucketOut,
    SharingOut,
    UserGrantIn,
    UserGrantOut,
)
from tierpilot.sharing.service import SharingError

router = APIRouter(tags=["sharing"])


def _bucket(session: Session, user: User, name: str) -> Bucket:
    return catalog_service.owned_bucket(session, name, user, "seeing or changing its sharing")


def _actor(user: User, request: Request) -> Actor:
    return Actor(user.id, user.username, client_of(request))


def _api_error(exc: SharingError) -> Invalid | SharingError:
    if exc.status_code == 403:
        return exc
    field = exc.extra.get("field", "")
    return Invalid(f"{field}: {exc.message}" if field else exc.message, **exc.extra)


def _grant_words(grant: acl.Grant, names: dict[int, str]) -> str:
    kind, _, value = grant.grantee.partition(":")
    who = names.get(int(value), f"user #{value}") if kind == "id" else value.rsplit("/", 1)[-1]
    return f"{grant.permission} to {who}"


def _out(session: Session, bucket: Bucket) -> SharingOut:
    row = repository.get(session, bucket.id)
    text = row.policy if row is not None else None
    state = service.state_of(row, bucket.name)
    grant_ids = [int(g.grantee[3:]) for g in state.grants if g.grantee.startswith("id:")]
    names = auth_repository.usernames(session, [bucket.owner_id, *grant_ids])
    words: list[str] = []
    if state.policy is not None:
        ids, _ = state.policy.named_users
        id_names = auth_repository.usernames(session, [int(i) for i in ids if i.isdigit() and int(i) < 2**31])
        words = policies.describe(state.policy, {str(k): v for k, v in id_names.items()})
    block = state.public_block
    return SharingOut(
        bucket=bucket.name, owner=names.get(bucket.owner_id, ""),
        users=[UserGrantOut(user_id=g.user_id, username=g.username, access=g.access)
               for g in statements.user_grants(text)],
        public_prefixes=statements.public_prefixes(text, bucket.name), policy=text, policy_words=words,
        policy_public=state.policy is not None and state.policy.public,
        policy_problems=list(state.policy.problems) if state.policy is not None else [],
        acl_grants=[_grant_words(g, names) for g in state.grants if g not in acl.default(bucket.owner_id)],
        ownership=state.ownership,
        public_block=PublicBlockOut(block_public_acls=block.block_public_acls,
                                    ignore_public_acls=block.ignore_public_acls,
                                    block_public_policy=block.block_public_policy,
                                    restrict_public_buckets=block.restrict_public_buckets)
        if state.public_block_set else None)


@router.get("/buckets/{name}/sharing", response_model=SharingOut)
def get_sharing(name: str, session: SessionDep, user: CurrentUser) -> SharingOut:
    """Who may reach the bucket besides its owner and admins (owner or admin only)."""
    return _out(session, _bucket(session, user, name))


@router.put("/buckets/{name}/sharing/users/{username}", response_model=SharingOut)
def grant_user(name: str, username: str, body: UserGrantIn, request: Request, session: SessionDep,
               user: CurrentUser) -> SharingOut:
    """Give another user read (get and list) or read-write (also put and delete) access to the bucket."""
    bucket = _bucket(session, user, name)
    grantee = auth_repository.get_user_by_name(session, username)
    if grantee is None:
        raise Invalid(f"username: no user {username!r}", field="username")
    try:
        statements.grant_user(session, bucket, grantee, body.access)
    except SharingError as exc:
        raise _api_error(exc) from None
    service.audit_change(session, bucket, _actor(user, request), "grant_user", user=username, access=body.access)
    return _out(session, bucket)


@router.delete("/buckets/{name}/sharing/users/{username}", response_model=SharingOut)
def revoke_user(name: str, username: str, request: Request, session: SessionDep, user: CurrentUser) -> SharingOut:
    bucket = _bucket(session, user, name)
    grantee = auth_repository.get_user_by_name(session, username)
    if grantee is None:
        raise Invalid(f"username: no user {username!r}", field="username")
    statements.revoke_user(session, bucket, grantee.id)
    service.audit_change(session, bucket, _actor(user, request), "revoke_user", user=username)
    return _out(session, bucket)


@router.post("/buckets/{name}/sharing/public", response_model=SharingOut)
def publish_prefix(name: str, body: PublicPrefixIn, request: Request, session: SessionDep,
                   user: CurrentUser) -> SharingOut:
    """Make every object under a prefix readable by anyone, without credentials (``confirm`` must be true)."""
    bucket = _bucket(session, user, name)
    if not body.confirm:
        raise Invalid("confirm: making a prefix public lets anyone on the network read it; confirm to proceed",
                      field="confirm")
    if body.prefix:
        try:
            catalog_service.validate_key(body.prefix)
        except Exception as exc:  # noqa: BLE001  (the catalog's key rules, as a 422 naming the field)
            raise Invalid(f"prefix: {getattr(exc, 'message', exc)}", field="prefix") from None
    try:
        statements.publish_prefix(session, bucket, body.prefix)
    except SharingError as exc:
        raise _api_error(exc) from None
    service.audit_change(session, bucket, _actor(user, request), "publish_prefix", prefix=body.prefix)
    return _out(session, bucket)


@router.delete("/buckets/{name}/sharing/public", response_model=SharingOut)
def unpublish_prefix(name: str, request: Request, session: SessionDep, user: CurrentUser,
                     prefix: Annotated[str, Query(max_length=1024)] = "") -> SharingOut:
    bucket = _bucket(session, user, name)
    statements.unpublish_prefix(session, bucket, prefix)
    service.audit_change(session, bucket, _actor(user, request), "unpublish_prefix", prefix=prefix)
    return _out(session, bucket)


@router.post("/buckets/{name}/sharing/policy/check", response_model=PolicyCheckOut)
def check_policy(name: str, body: PolicyIn, session: SessionDep, user: CurrentUser) -> PolicyCheckOut:
    """Validate a policy as the gateway would, and say what it allows, without saving it."""
    bucket = _bucket(session, user, name)
    try:
        words, public = statements.explain(session, bucket, body.policy)
    except SharingError as exc:
        return PolicyCheckOut(valid=False, error=exc.message)
    return PolicyCheckOut(valid=True, words=words, public=public)


@router.put("/buckets/{name}/sharing/policy", response_model=SharingOut)
def put_policy(name: str, body: PolicyIn, request: Request, session: SessionDep, user: CurrentUser) -> SharingOut:
    bucket = _bucket(session, user, name)
    try:
        service.put_policy(session, bucket, body.policy)
    except SharingError as exc:
        raise _api_error(exc) from None
    service.audit_change(session, bucket, _actor(user, request), "put_policy")
    return _out(session, bucket)


@router.delete("/buckets/{name}/sharing/policy", status_code=204)
def delete_policy(name: str, request: Request, session: SessionDep, user: CurrentUser) -> Response:
    bucket = _bucket(session, user, name)
    service.delete_policy(session, bucket)
    service.audit_change(session, bucket, _actor(user, request), "delete_policy")
    return Response(status_code=204)


@router.get("/sharing/with-me", response_model=list[SharedBucketOut])
def shared_with_me(request: Request, session: SessionDep, user: CurrentUser) -> list[SharedBucketOut]:
    """Other users' buckets whose policy names the caller or whose ACL grants them, what they allow, and what the
    Browser may offer on the whole bucket (decided as the gateway would)."""
    caller = Caller(user.id, user.username)
    rows = repository.sharing_rows(session)
    names = catalog_repository.bucket_names(session, [row.bucket_id for row in rows])
    found: dict[int, list[str]] = {}
    for row in rows:
        allowed = [f"ACL {g.permission}" for g in acl.from_json(row.acl) if g.grantee == f"id:{user.id}"]
        if row.policy and row.bucket_id in names:
            # what can be read of it: the rights below say whether an unreadable statement denies it meanwhile
            policy = service.stored_policy(row, names[row.bucket_id])
            for st in policy.statements if policy is not None else ():
                if st.effect == "Allow" and not st.not_principal and not st.principals.anyone \
                        and st.principals.covers(caller):
                    allowed += [a for a in st.actions if a not in allowed]
        if allowed:
            found[row.bucket_id] = allowed
    buckets = [b for b in catalog_repository.buckets_by_id(session, found) if b.owner_id != user.id]
    owners = auth_repository.usernames(session, [b.owner_id for b in buckets])
    client = client_of(request)
    out = []
    for b in sorted(buckets, key=lambda b: b.name):
        may = visibility.rights(session, b, user.id, user.username, client, request.url.scheme == "https")
        out.append(SharedBucketOut(bucket=b.name, owner=owners.get(b.owner_id, ""), access=found[b.id],
                                   may_list=may.list, may_read=may.read, may_write=may.write,
                                   may_delete=may.delete))
    return out
