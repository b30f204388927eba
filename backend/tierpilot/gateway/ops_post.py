"""POST object: browser form uploads (multipart/form-data) authorised by a signed policy document.

The form's fields come before its ``file`` (S3 ignores fields after it); the signature covers the
base64 policy, not the request, so the gateway does not check the request's signature (``signed=False``)
and this handler checks the form's instead: SigV4 (``x-amz-credential``, ``x-amz-signature``) or V2
(``AWSAccessKeyId``, ``signature``). The policy's ``expiration`` and ``conditions`` (``eq``,
``starts-with``, exact-match objects, ``content-length-range``) are checked as S3 checks them: every form
field must be named by a condition (but the signature fields, ``file``, ``policy`` and ``x-ignore-*``).
The file streams to a spool (8 MiB in memory, then a temporary file) through the caller's flow once the
policy is verified, and is stored as a PutObject with the form's metadata, tagging and content headers.
A form without a policy is anonymous: it needs a bucket whose ACL or policy lets anyone write (the
sharing domain decides, as for any request). The ``acl`` and ``x-amz-grant-*`` fields are the headers of
a PutObject: checked and recorded by the sharing domain.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any
from urllib.parse import quote

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from tierpilot.auth import service as auth_service
from tierpilot.auth.service import Credential
from tierpilot.catalog import store
from tierpilot.drivers.base import PutResult
from tierpilot.gateway import checksums, sigv4, xmlio
from tierpilot.gateway.auth import ANONYMOUS, bucket_of
from tierpilot.gateway.body import key_of
from tierpilot.gateway.common import (
    STORED_HEADERS,
    etag,
    lock_from_fields,
    open_flow,
    placement,
    validate_tags,
    version_headers,
)
from tierpilot.gateway.errors import S3Error, access_denied, bad_digest, invalid_argument
from tierpilot.gateway.http import Headers, Request
from tierpilot.gateway.payload import MAX_OBJECT_SIZE
from tierpilot.gateway.routes import route
from tierpilot.kit.db import transaction
from tierpilot.kit.flow import Flow
from tierpilot.kit.streaming import ClientDisconnected, run
from tierpilot.sharing import gate as sharing

MAX_FIELDS_BYTES = 64 * 1024  # all fields but the file together (S3: 20 KB policy, 2 KB metadata, …)
SPOOL_MEMORY = 8 * 1024 * 1024
READ_CHUNK = 1024 * 1024
# fields no policy condition needs to name
# (x-amz-checksum-*: AWS takes a form's checksum without a condition, and the suite expects that)
EXEMPT = {"awsaccesskeyid", "signature", "x-amz-signature", "file", "policy", *checksums.HEADERS.values()}
SUCCESS_STATUSES = {"200": 200, "201": 201, "204": 204}


def _malformed(message: str = "The body of your POST request is not well-formed multipart/form-data.") -> S3Error:
    return S3Error("MalformedPOSTRequest", message, 400)


def _policy_error(message: str) -> S3Error:
    return S3Error("InvalidPolicyDocument", f"Invalid Policy: {message}", 400)


def _denied_by_policy(message: str) -> S3Error:
    return access_denied(f"Invalid according to Policy: {message}")


@dataclass
class Form:
    """The fields before the file (names lower-cased, as S3 matches them), then the file's spool."""

    fields: dict[str, str] = field(default_factory=dict)
    filename: str | None = None
    file_started: bool = False
    file_done: bool = False
    size: int = 0
    spool: IO[bytes] | None = None


class _Reader:
    """Feeds the body to python-multipart and collects fields; file bytes wait in ``pending`` for the flow."""

    def __init__(self, boundary: bytes) -> None:
        self.form = Form()
        self.pending: list[bytes] = []
        self._name = b""
        self._value = b""
        self._header_name = b""
        self._disposition = b""
        self._fields_bytes = 0
        self._in_file = False
        self._skip = False
        self.parser = MultipartParser(boundary, {
            "on_part_begin": self._part_begin, "on_header_field": self._header_field,
            "on_header_value": self._header_value, "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished, "on_part_data": self._part_data,
            "on_part_end": self._part_end,
        })

    def _part_begin(self) -> None:
        self._header_name, self._disposition, self._value = b"", b"", b""

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_name += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        if self._header_name.lower() == b"content-disposition":
            self._disposition += data[start:end]

    def _header_end(self) -> None:
        self._header_name = b""

    def _headers_finished(self) -> None:
        kind, params = parse_options_header(self._disposition)
        if kind != b"form-data" or b"name" not in params:
            raise _malformed()
        self._name = params[b"name"]
        self._skip = self.form.file_started  # fields after the file are ignored, as S3 does
        if self._name.lower() == b"file" and not self.form.file_started:
            self.form.file_started, self._in_file = True, True
            filename = params.get(b"filename")
            self.form.filename = filename.decode("utf-8", "replace") if filename is not None else None

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self._skip:
            return
        chunk = data[start:end]
        if self._in_file:
            self.pending.append(chunk)
            return
        self._fields_bytes += len(chunk)
        if self._fields_bytes > MAX_FIELDS_BYTES:
            raise S3Error("MaxPostPreDataLengthExceeded", "Your POST request fields preceding the upload file were "
                          "too large.", 400)
        self._value += chunk

    def _part_end(self) -> None:
        if self._in_file:
            self._in_file = False
            self.form.file_done = True
        elif not self._skip:
            try:
                self.form.fields.setdefault(self._name.decode("utf-8").lower(), self._value.decode("utf-8"))
            except UnicodeDecodeError:
                raise _malformed("Form fields must be UTF-8") from None

    def feed(self, data: bytes) -> None:
        try:
            self.parser.write(data)
        except FormParserError:
            raise _malformed() from None


def _boundary(req: Request) -> bytes:
    kind, params = parse_options_header(req.header("content-type") or "")
    if kind != b"multipart/form-data" or not params.get(b"boundary"):
        raise _malformed("POST requires a multipart/form-data body (a browser form upload)")
    return params[b"boundary"]


# the policy document -----------------------------------------------------------------------------------


def _lookup(access_key_id: str) -> Credential | None:
    with transaction() as session:
        return auth_service.credential_for(session, access_key_id)


def _b64_eq(expected: bytes, given: str) -> bool:
    return hmac.compare_digest(base64.b64encode(expected).decode(), given.strip())


async def authorise(fields: dict[str, str], now: datetime) -> tuple[Credential, dict[str, Any]]:
    """The caller the form's signature proves and its decoded policy (AccessDenied, InvalidPolicyDocument…)."""
    policy_b64 = fields.get("policy")
    if policy_b64 is None:
        raise invalid_argument("Bucket POST must contain a field named 'policy' or be anonymous", "policy", "")
    v4 = "x-amz-credential" in fields or "x-amz-signature" in fields
    if v4:
        algorithm = fields.get("x-amz-algorithm", "")
        if algorithm != sigv4.ALGORITHM:
            raise invalid_argument("Only AWS4-HMAC-SHA256 is supported as x-amz-algorithm", "x-amz-algorithm",
                                   algorithm[:64])
        if "x-amz-signature" not in fields or "x-amz-date" not in fields:
            raise invalid_argument("Bucket POST with x-amz-credential needs x-amz-signature and x-amz-date",
                                   "x-amz-signature", "")
        parts = fields["x-amz-credential"].split("/")
        if len(parts) != 5 or parts[3] != "s3" or parts[4] != "aws4_request":
            raise invalid_argument("Invalid x-amz-credential: <key>/<date>/<region>/s3/aws4_request",
                                   "x-amz-credential", fields["x-amz-credential"][:200])
        access_key_id = parts[0]
    else:
        if "awsaccesskeyid" not in fields:
            raise invalid_argument("Bucket POST with a policy must contain a field named 'AWSAccessKeyId'",
                                   "AWSAccessKeyId", "")
        if "signature" not in fields:
            raise invalid_argument("Bucket POST with a policy must contain a field named 'signature'",
                                   "signature", "")
        access_key_id = fields["awsaccesskeyid"]
    cred = await run(_lookup, access_key_id)
    if cred is None:
        raise S3Error("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.", 403,
                      AWSAccessKeyId=access_key_id)
    if v4:
        _, date, region, service, _ = fields["x-amz-credential"].split("/")
        key = sigv4.signing_key(cred.secret_access_key, date, region, service)
        good = hmac.new(key, policy_b64.encode(), hashlib.sha256).hexdigest()
        ok = hmac.compare_digest(good, fields["x-amz-signature"].strip().lower())
    else:
        ok = _b64_eq(hmac.new(cred.secret_access_key.encode(), policy_b64.encode(), hashlib.sha1).digest(),
                     fields["signature"])
    if not ok:
        raise S3Error("SignatureDoesNotMatch", "The request signature we calculated does not match the signature "
                      "you provided. Check your key and signing method.", 403)
    if cred.disabled:
        raise S3Error("AllAccessDisabled", "All access to this account has been disabled by an administrator.", 403)
    return cred, decode_policy(policy_b64, now)


def decode_policy(policy_b64: str, now: datetime) -> dict[str, Any]:
    try:
        policy = json.loads(base64.b64decode(policy_b64, validate=True))
    except (binascii.Error, ValueError):
        raise _policy_error("Invalid JSON.") from None
    if not isinstance(policy, dict):
        raise _policy_error("Invalid JSON.")
    if "expiration" not in policy:  # names are case-sensitive: "EXPIRATION" is not it
        raise _policy_error("Policy missing expiration.")
    raw = policy["expiration"]
    try:
        if not isinstance(raw, str) or not raw.endswith("Z"):
            raise ValueError(raw)
        expires = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise _policy_error(f"Invalid 'expiration' value: '{raw}'") from None
    if expires <= now:
        raise _denied_by_policy("Policy expired.")
    if not isinstance(policy.get("conditions"), list):
        raise _policy_error("Policy missing conditions.")
    return policy


def _length_range(condition: list[Any]) -> tuple[int, int]:
    if len(condition) != 3:
        raise _policy_error("Invalid content-length-range: it needs a minimum and a maximum.")
    low, high = condition[1], condition[2]
    try:
        low, high = int(low), int(high)
    except (TypeError, ValueError):
        raise _policy_error("Invalid content-length-range values.") from None
    if low < 0 or high < 0 or low > high:
        raise _policy_error("Invalid content-length-range values.")
    return low, high


def check_conditions(policy: dict[str, Any], fields: dict[str, str], bucket: str) -> tuple[int, int] | None:
    """Match the form against the policy's conditions; return the content-length-range if one is given."""
    values = dict(fields, bucket=bucket)
    covered: set[str] = set()
    length: tuple[int, int] | None = None
    for condition in policy["conditions"]:
        if isinstance(condition, dict):
            if len(condition) != 1:
                raise _policy_error("Each condition object must name exactly one field.")
            ((name, wanted),) = condition.items()
            op, name = "eq", str(name).lower()
        elif isinstance(condition, list) and condition and isinstance(condition[0], str):
            op = condition[0].lower()
            if op == "content-length-range":
                length = _length_range(condition)
                continue
            if len(condition) != 3 or not isinstance(condition[1], str) or not condition[1].startswith("$"):
                raise _policy_error(f"Invalid condition: {json.dumps(condition)[:200]}")
            name, wanted = condition[1][1:].lower(), condition[2]
        else:
            raise _policy_error("Invalid condition.")
        if not isinstance(wanted, str):
            raise _policy_error(f"Invalid value of the condition on {name}.")
        have = values.get(name)
        if op == "eq":
            ok = have == wanted
        elif op == "starts-with":
            ok = have is not None and have.startswith(wanted)
        else:
            raise _policy_error(f"Unknown condition operator: {op[:32]}")
        if not ok:
            raise _denied_by_policy(f'Policy Condition failed: ["{op}", "${name}", "{wanted}"]')
        covered.add(name)
    extra = sorted(n for n in values if n not in covered and n not in EXEMPT and not n.startswith("x-ignore-"))
    if extra:
        raise _denied_by_policy(f"Extra input fields: {', '.join(extra)}")
    return length


# the object --------------------------------------------------------------------------------------------


def _tags(xml_text: str | None) -> dict[str, Any] | None:
    if xml_text is None:
        return None
    doc = xmlio.parse(xml_text.encode(), "Tagging")
    pairs = [(xmlio.required_text(tag, "Key"), xmlio.child_text(tag, "Value") or "")
             for tag_set in xmlio.children(doc, "TagSet") for tag in xmlio.children(tag_set, "Tag")]
    return validate_tags(pairs)


def _checksum(fields: dict[str, str]) -> tuple[str | None, str | None]:
    present = [(alg, fields[name]) for alg, name in checksums.HEADERS.items() if name in fields]
    if len(present) > 1:
        raise S3Error("InvalidRequest", "Expecting a single x-amz-checksum- field", 400)
    if not present:
        return None, None
    alg, value = present[0]
    checksums.decode_b64(value.strip(), checksums.DIGEST_SIZES[alg], f"x-amz-checksum-{alg.lower()}")
    return alg, value.strip()


def _chunks(spool: IO[bytes]) -> Iterator[bytes]:
    spool.seek(0)
    while chunk := spool.read(READ_CHUNK):
        yield chunk


async def _receive_all(req: Request, reader: _Reader) -> None:
    """Read the body until the file part begins (or the body ends): the fields are then complete."""
    while not reader.form.file_started:
        message = await req.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected("client disconnected")
        reader.feed(message.get("body", b""))
        if not message.get("more_body", False):
            req.body_consumed = True
            return


async def _spool_file(req: Request, reader: _Reader, flow: Flow, limit: int) -> None:
    form = reader.form
    form.spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115 (closed by the handler)
    more = not req.body_consumed
    while True:
        for chunk in reader.pending:
            form.size += len(chunk)
            if form.size > limit:
                raise S3Error("EntityTooLarge", "Your proposed upload exceeds the maximum allowed size", 400,
                              MaxSizeAllowed=str(limit))
            await flow.consume(len(chunk))
            await run(form.spool.write, chunk)  # past SPOOL_MEMORY a disk write: not on the event loop
        reader.pending.clear()
        if form.file_done or not more:
            break
        message = await req.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected("client disconnected")
        reader.feed(message.get("body", b""))
        more = bool(message.get("more_body", False))
    if not form.file_done:
        raise _malformed()
    while more:  # what follows the file is ignored, but read so the connection stays usable
        message = await req.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected("client disconnected")
        more = bool(message.get("more_body", False))
    req.body_consumed = True


_CONTROLS = {c: "?" for c in [*range(32), 127]}


def _unsafe_redirect(url: str) -> bool:
    return len(url) > 2048 or any(ord(c) < 32 or ord(c) == 127 for c in url)


@route("POST", "bucket", signed=False)
async def post_object(req: Request) -> None:
    reader = _Reader(_boundary(req))
    await _receive_all(req, reader)
    form = reader.form
    fields = form.fields
    if not form.file_started:
        raise invalid_argument("POST requires exactly one file upload per request.", "file", "0")
    if "key" not in fields:
        raise invalid_argument("Bucket POST must contain a field named 'key'.  If it is specified, please check "
                               "the order of the fields.", "key", "")
    key = fields["key"]
    if "${filename}" in key:  # the policy's conditions see the key as it will be stored, as S3's do
        key = fields["key"] = key.replace("${filename}", form.filename or "")
    redirect = fields.get("success_action_redirect") or fields.get("redirect")
    if redirect and _unsafe_redirect(redirect):
        # it becomes the Location header: checked before anything is stored, not when the answer is sent
        raise invalid_argument("success_action_redirect must be a URL without control characters",
                               "success_action_redirect", redirect[:256].encode("ascii", "replace").decode()
                               .translate(_CONTROLS))
    length: tuple[int, int] | None = None
    if "policy" in fields or "signature" in fields or "x-amz-signature" in fields:
        req.caller, policy = await authorise(fields, datetime.now(UTC))
        length = check_conditions(policy, fields, req.bucket)
    else:
        req.caller = ANONYMOUS
    bucket = await bucket_of(req)  # s3:PutObject on the bucket, for the caller or anyone
    req.key = key
    key_of(req)
    acl = {n: v for n, v in fields.items() if n == "x-amz-acl" or n == "acl" or n.startswith("x-amz-grant-")}
    wanted = await sharing.requested_acl(bucket, {("x-amz-acl" if n == "acl" else n): v for n, v in acl.items()},
                                         req.user.user_id)
    tier, storage_class = await placement(bucket, fields.get("x-amz-storage-class"))
    meta = {n[11:]: v for n, v in fields.items() if n.startswith("x-amz-meta-")}
    headers = {n: v for n, v in fields.items() if n in STORED_HEADERS}
    tags = _tags(fields.get("tagging"))
    algorithm, claimed = _checksum(fields)
    lock_mode, lock_until, legal_hold = lock_from_fields(fields.get, bucket)
    flow = await open_flow(req, bucket, "write", None)
    high = min(length[1], MAX_OBJECT_SIZE) if length is not None else MAX_OBJECT_SIZE
    try:
        await _spool_file(req, reader, flow, high)
        assert form.spool is not None
        if length is not None and form.size < length[0]:
            raise S3Error("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size", 400,
                          MinSizeAllowed=str(length[0]))
        if store.space_limited(bucket):
            await run(store.check_space, bucket, form.size, None, key)

        def verify(result: PutResult) -> None:
            if claimed is not None and result.checksum_b64 != claimed:
                raise bad_digest(f"The {algorithm} you specified did not match the calculated checksum.")

        spec = store.NewObject(tier=tier, storage_class=storage_class, content_type=fields.get("content-type"),
                               user_metadata=meta, headers=headers, tags=tags,
                               checksum_algorithm=algorithm or checksums.INGEST,  # type: ignore[arg-type]
                               lock_mode=lock_mode, lock_until=lock_until, legal_hold=legal_hold,
                               event="ObjectCreated:Post")
        obj = await run(store.put_object, bucket, key, _chunks(form.spool), spec, verify=verify)
    finally:
        if form.spool is not None:
            form.spool.close()
    req.bytes_in = obj.size
    await sharing.record_write(bucket, key, obj.version_id, wanted, req.seen)
    location = f"http://{req.header('host', '')}/{quote(bucket.name)}/{quote(key)}"
    out: Headers = [(b"etag", etag(obj.etag).encode()), *version_headers(obj, bucket, lock=False)]
    if redirect:
        sep = "&" if "?" in redirect else "?"
        target = f"{redirect}{sep}bucket={quote(bucket.name)}&key={quote(key)}&etag={quote(etag(obj.etag))}"
        await req.respond(303, headers=[*out, (b"location", target.encode("latin-1", "replace"))], content_type=None)
        return
    out.append((b"location", location.encode("latin-1", "replace")))
    status = SUCCESS_STATUSES.get((fields.get("success_action_status") or "").strip(), 204)
    if status == 201:
        body = xmlio.document("PostResponse", [xmlio.el("Location", location), xmlio.el("Bucket", bucket.name),
                                               xmlio.el("Key", key), xmlio.el("ETag", etag(obj.etag))], ns=False)
        await req.respond(201, body, out)
        return
    await req.respond(status, headers=out, content_type=None)
