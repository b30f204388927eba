"""Gateway operations of sharing: bucket and object ACLs (``?acl``), bucket policy (``?policy``,
``?policyStatus``), object ownership (``?ownershipControls``) and public access block (``?publicAccessBlock``),
registered when the gateway starts. They read and write what the dashboard's Sharing panel shows."""

from __future__ import annotations

from xml.etree.ElementTree import Element

from tierpilot.audit.service import Actor
from tierpilot.auth import repository as auth_repository
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import versions
from tierpilot.catalog.models import Bucket
from tierpilot.gateway.ext import Request, S3Error, bucket_of, key_of, read_xml_body, route, xmlio
from tierpilot.kit import generations
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run
from tierpilot.sharing import acl, service
from tierpilot.sharing.acl import AclInvalid, Grant
from tierpilot.sharing.gate import current_state, states
from tierpilot.sharing.service import SharingError

XSI = "http://www.w3.org/2001/XMLSchema-instance"


async def startup() -> None:
    states.start(get_settings().redis_url)


async def shutdown() -> None:
    await states.stop()


def _s3(exc: SharingError | AclInvalid) -> S3Error:
    if isinstance(exc, AclInvalid):
        return S3Error(exc.code, exc.message, 400, ArgumentName=exc.field) if exc.field else \
            S3Error(exc.code, exc.message, 400)
    return S3Error(exc.s3_code, exc.message, exc.s3_status)


def _actor(req: Request) -> Actor:
    return Actor(req.user.user_id or None, req.user.username, (req.scope.get("client") or ("",))[0])


def _write(actor: Actor, bucket: Bucket, change: str, *args: object) -> None:
    """Run one sharing service change in a write transaction with its audit event (the generation bump
    follows the commit)."""
    try:
        with transaction(write=True) as session:
            getattr(service, change)(session, bucket, *args)
            service.audit_change(session, bucket, actor, f"s3:{change}")
    except generations.GenerationUnavailable as exc:
        raise _s3(SharingError.unavailable(exc)) from None
    states.forget(bucket.id)


# ACL documents -----------------------------------------------------------------------------------------

def _grantee_xml(grantee: str, names: dict[int, str]) -> str:
    kind, _, value = grantee.partition(":")
    if kind == "id":
        return (f'<Grantee xmlns:xsi="{XSI}" xsi:type="CanonicalUser">{xmlio.el("ID", value)}'
                f'{xmlio.el("DisplayName", names.get(int(value), value))}</Grantee>')
    return f'<Grantee xmlns:xsi="{XSI}" xsi:type="Group">{xmlio.el("URI", value)}</Grantee>'


def _acl_document(owner_id: int, grants: tuple[Grant, ...]) -> bytes:
    ids = {owner_id} | {int(g.grantee[3:]) for g in grants if g.grantee.startswith("id:")}
    with transaction() as session:
        names = auth_repository.usernames(session, ids)
    owner = f"<Owner>{xmlio.el('ID', owner_id)}{xmlio.el('DisplayName', names.get(owner_id, owner_id))}</Owner>"
    ordered = sorted(grants, key=lambda g: not g.grantee.startswith("uri:"))  # groups first, as RGW lists them
    body = "".join(f"<Grant>{_grantee_xml(g.grantee, names)}{xmlio.el('Permission', g.permission)}</Grant>"
                   for g in ordered)
    return xmlio.document("AccessControlPolicy", [owner, f"<AccessControlList>{body}</AccessControlList>"])


def _parse_acl_document(body: bytes, owner_id: int) -> tuple[Grant, ...]:
    doc = xmlio.parse(body, "AccessControlPolicy")
    owner = xmlio.children(doc, "Owner")
    if owner and (xmlio.child_text(owner[0], "ID") or "").strip() not in ("", str(owner_id)):
        raise S3Error("AccessDenied", "The owner of an ACL cannot be changed", 403)
    wanted: list[tuple[str, str, str]] = []
    for acl_list in xmlio.children(doc, "AccessControlList"):
        for node in xmlio.children(acl_list, "Grant"):
            grantee = xmlio.children(node, "Grantee")
            permission = (xmlio.child_text(node, "Permission") or "").strip()
            if not grantee or permission not in acl.PERMISSIONS:
                raise S3Error("MalformedACLError", "The XML you provided was not well-formed or did not validate "
                              "against our published schema", 400)
            wanted.append((*_grantee_of(grantee[0]), permission))
    ids = {int(v) for kind, v, _ in wanted if kind.lower() in ("id", "canonicaluser") and v.isdigit()}
    with transaction() as session:
        known = service.existing_users(session, ids)
    return acl.normalize([Grant(acl.grantee(kind, value, known), perm) for kind, value, perm in wanted])


def _grantee_of(node: Element) -> tuple[str, str]:
    kind = node.get(f"{{{XSI}}}type", "")
    if kind == "CanonicalUser" or (not kind and xmlio.child_text(node, "ID") is not None):
        return "id", (xmlio.child_text(node, "ID") or "").strip()
    if kind == "Group" or (not kind and xmlio.child_text(node, "URI") is not None):
        return "uri", (xmlio.child_text(node, "URI") or "").strip()
    if kind == "AmazonCustomerByEmail":
        return "email", (xmlio.child_text(node, "EmailAddress") or "").strip()
    raise S3Error("MalformedACLError", "The XML you provided was not well-formed or did not validate against our "
                  "published schema", 400)


def _known_header_ids(req: Request) -> set[int]:
    ids = acl.header_grantee_ids(req.headers)
    if not ids:
        return set()
    with transaction() as session:
        return service.existing_users(session, ids)


async def _requested_grants(req: Request, bucket_owner: int, owner: int, for_object: bool) -> tuple[Grant, ...]:
    """The ACL a Put*Acl asks for, from its headers or its document (not both)."""
    known = await run(_known_header_ids, req)
    try:
        grants = acl.from_headers(req.headers, bucket_owner=bucket_owner, owner=owner, for_object=for_object,
                                  known_ids=known)
        body = await read_xml_body(req)
        if grants is not None and body.strip():
            raise S3Error("UnexpectedContent", "This request does not support content", 400)
        if grants is None:
            grants = await run(_parse_acl_document, body, owner)
    except AclInvalid as exc:
        raise _s3(exc) from None
    return grants


@route("GET", "bucket", "acl")
async def get_bucket_acl(req: Request) -> None:
    bucket = await bucket_of(req)
    grants = await run(_bucket_grants, bucket)
    await req.respond(200, await run(_acl_document, bucket.owner_id, grants))


def _bucket_grants(bucket: Bucket) -> tuple[Grant, ...]:
    with transaction() as session:
        return service.bucket_grants(session, bucket)


@route("PUT", "bucket", "acl")
async def put_bucket_acl(req: Request) -> None:
    bucket = await bucket_of(req)
    grants = await _requested_grants(req, bucket.owner_id, bucket.owner_id, for_object=False)
    try:
        await run(_write, _actor(req), bucket, "put_bucket_acl", grants, req.header("x-amz-acl"))
    except SharingError as exc:
        raise _s3(exc) from None
    await req.respond(200, content_type=None)


def _object_version(bucket: Bucket, key: str, version_id: str | None) -> str:
    """The version id of the object (current, or the one named); NoSuchKey / NoSuchVersion otherwise."""
    with transaction() as session:
        if version_id is None:
            obj = catalog_repository.get_object(session, bucket.id, key)
            if obj is None:
                raise S3Error("NoSuchKey", "The specified key does not exist.", 404, Key=key)
            return obj.version_id
        row = versions.find_version(session, bucket.id, key, version_id)
        if row is None or getattr(row, "delete_marker", False):
            raise S3Error("NoSuchVersion", "The specified version does not exist.", 404, Key=key,
                          VersionId=version_id)
        return version_id


def _object_acl(bucket: Bucket, key: str, version_id: str) -> tuple[int, tuple[Grant, ...]]:
    with transaction() as session:
        row = service.object_grants(session, bucket.id, key, version_id)
    return (row.owner_id, row.grants) if row is not None else (bucket.owner_id, acl.default(bucket.owner_id))


@route("GET", "object", "acl")
async def get_object_acl(req: Request) -> None:
    bucket = await bucket_of(req)
    key = key_of(req)
    version_id = await run(_object_version, bucket, key, req.query.get("versionId") or None)
    owner_id, grants = await run(_object_acl, bucket, key, version_id)
    await req.respond(200, await run(_acl_document, owner_id, grants), headers=[
        (b"x-amz-version-id", version_id.encode())] if version_id != "null" else [])


@route("PUT", "object", "acl")
async def put_object_acl(req: Request) -> None:
    bucket = await bucket_of(req)
    key = key_of(req)
    version_id = await run(_object_version, bucket, key, req.query.get("versionId") or None)
    owner_id, _ = await run(_object_acl, bucket, key, version_id)
    grants = await _requested_grants(req, bucket.owner_id, owner_id, for_object=True)
    actor = _actor(req)

    def change() -> None:
        with transaction(write=True) as session:
            service.check_object_acl(session, bucket, grants, req.header("x-amz-acl"))
            service.set_object_acl(session, bucket, key, version_id, owner_id, grants)
            service.audit_change(session, bucket, actor, "s3:put_object_acl", key=key, version_id=version_id)
        states.forget(bucket.id)

    try:
        await run(change)
    except SharingError as exc:
        raise _s3(exc) from None
    await req.respond(200, content_type=None)


# policy ------------------------------------------------------------------------------------------------

def _policy(bucket: Bucket) -> str | None:
    with transaction() as session:
        return service.get_policy(session, bucket)


@route("PUT", "bucket", "policy")
async def put_bucket_policy(req: Request) -> None:
    bucket = await bucket_of(req)
    body = await read_xml_body(req)  # (not XML: the raw body, size-limited and digest-checked the same way)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise S3Error("MalformedPolicy", "Policies must be valid JSON", 400) from None
    try:
        await run(_write, _actor(req), bucket, "put_policy", text)
    except SharingError as exc:
        raise _s3(exc) from None
    await req.respond(204, content_type=None)


@route("GET", "bucket", "policy")
async def get_bucket_policy(req: Request) -> None:
    bucket = await bucket_of(req)
    text = await run(_policy, bucket)
    if text is None:
        raise S3Error("NoSuchBucketPolicy", "The bucket policy does not exist", 404, BucketName=bucket.name)
    await req.respond(200, text.encode(), content_type=b"application/json")


@route("DELETE", "bucket", "policy")
async def delete_bucket_policy(req: Request) -> None:
    bucket = await bucket_of(req)
    await run(_write, _actor(req), bucket, "delete_policy")
    await req.respond(204, content_type=None)


@route("GET", "bucket", "policyStatus")
async def get_bucket_policy_status(req: Request) -> None:
    """Public when the policy has an unconditioned Allow for anyone or the bucket ACL grants a public group (as
    Ceph RGW answers, also without a policy, where AWS says NoSuchBucketPolicy)."""
    bucket = await bucket_of(req)
    state = await current_state(bucket, fresh=True, seen=req.seen)
    public = (state.policy is not None and state.policy.public) or acl.is_public(state.grants)
    await req.respond(200, xmlio.document("PolicyStatus", [xmlio.el("IsPublic", "true" if public else "false")]))


# ownership controls ------------------------------------------------------------------------------------

def _ownership(bucket: Bucket) -> str | None:
    with transaction() as session:
        return service.get_ownership(session, bucket)


@route("PUT", "bucket", "ownershipControls")
async def put_ownership_controls(req: Request) -> None:
    bucket = await bucket_of(req)
    doc = xmlio.parse(await read_xml_body(req), "OwnershipControls")
    values = [(xmlio.child_text(rule, "ObjectOwnership") or "").strip() for rule in xmlio.children(doc, "Rule")]
    if len(values) != 1:
        raise S3Error("MalformedXML", "OwnershipControls must hold exactly one Rule", 400)
    try:
        await run(_write, _actor(req), bucket, "set_ownership", values[0])
    except SharingError as exc:
        raise _s3(exc) from None
    await req.respond(200, content_type=None)


@route("GET", "bucket", "ownershipControls")
async def get_ownership_controls(req: Request) -> None:
    bucket = await bucket_of(req)
    value = await run(_ownership, bucket)
    if value is None:
        raise S3Error("OwnershipControlsNotFoundError", "The bucket ownership controls were not found", 404,
                      BucketName=bucket.name)
    await req.respond(200, xmlio.document("OwnershipControls", [
        f"<Rule>{xmlio.el('ObjectOwnership', value)}</Rule>"]))


@route("DELETE", "bucket", "ownershipControls")
async def delete_ownership_controls(req: Request) -> None:
    bucket = await bucket_of(req)
    await run(_write, _actor(req), bucket, "set_ownership", None)
    await req.respond(204, content_type=None)


# public access block -----------------------------------------------------------------------------------

def _public_block(bucket: Bucket) -> dict[str, bool] | None:
    with transaction() as session:
        return service.get_public_block(session, bucket)


@route("PUT", "bucket", "publicAccessBlock")
async def put_public_access_block(req: Request) -> None:
    bucket = await bucket_of(req)
    doc = xmlio.parse(await read_xml_body(req), "PublicAccessBlockConfiguration")
    flags: dict[str, bool] = {}
    for flag in acl.PUBLIC_BLOCK_FLAGS:
        text = (xmlio.child_text(doc, flag) or "false").strip().lower()
        if text not in ("true", "false"):
            raise S3Error("MalformedXML", f"{flag} must be true or false", 400)
        flags[flag] = text == "true"
    await run(_write, _actor(req), bucket, "set_public_block", flags)
    await req.respond(200, content_type=None)


@route("GET", "bucket", "publicAccessBlock")
async def get_public_access_block(req: Request) -> None:
    bucket = await bucket_of(req)
    flags = await run(_public_block, bucket)
    if flags is None:
        raise S3Error("NoSuchPublicAccessBlockConfiguration", "The public access block configuration was not "
                      "found", 404, BucketName=bucket.name)
    await req.respond(200, xmlio.document("PublicAccessBlockConfiguration", [
        xmlio.el(flag, "true" if flags.get(flag) else "false") for flag in acl.PUBLIC_BLOCK_FLAGS]))


@route("DELETE", "bucket", "publicAccessBlock")
async def delete_public_access_block(req: Request) -> None:
    bucket = await bucket_of(req)
    await run(_write, _actor(req), bucket, "set_public_block", None)
    await req.respond(204, content_type=None)

