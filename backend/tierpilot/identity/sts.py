"""STS ``AssumeRoleWithWebIdentity`` on the gateway's root, as MinIO and Ceph RGW answer it: an ID token of the
configured provider in, temporary S3 keys (with a session token and an expiry) out, in STS's XML. Registered
through ``gateway.ext`` (listed in ``app.wiring.GATEWAY_EXTENSIONS``); errors are STS's ``ErrorResponse``
documents, which AWS SDKs and the CLI parse (an S3 ``<Error>`` would reach them without its code)."""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl

from tierpilot.gateway import ext
from tierpilot.identity import oidc, service
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import DomainError, Invalid
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run

log = logging.getLogger("tierpilot.identity")
STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"
MAX_TOKEN_CHARS = 20_000  # AWS's limit on WebIdentityToken


class StsError(Exception):
    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def _document(root: str, inner: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<{root} xmlns="{STS_NS}">{inner}</{root}>'.encode()


def _error(req: ext.Request, err: StsError) -> bytes:
    el = ext.xmlio.el
    return _document("ErrorResponse", "<Error>" + el("Type", "Sender") + el("Code", err.code)
                     + el("Message", err.message) + "</Error>" + el("RequestId", req.request_id))


def _params(req: ext.Request, body: bytes) -> dict[str, str]:
    params = dict(req.query)
    try:
        params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
    except UnicodeDecodeError:
        raise StsError("MalformedInput", "the request body is not UTF-8 form data") from None
    return params


def _duration(params: dict[str, str]) -> int:
    raw = params.get("DurationSeconds", "3600")
    if not raw.isdigit() or len(raw) > 6:
        raise StsError("ValidationError", "DurationSeconds must be a whole number of seconds")
    return int(raw)


def _assume(token: str, duration: int, client: str) -> service.TemporaryKeys:
    with transaction(write=True) as session:
        return service.assume_role_with_web_identity(session, token, duration, client)


@ext.route("POST", "service", signed=False)
async def sts(req: ext.Request) -> None:
    """The STS actions this gateway answers (POST / with a form body): AssumeRoleWithWebIdentity."""
    try:
        await req.respond(200, await _answer(req))
    except StsError as err:
        await req.respond(err.status, _error(req, err))


async def _answer(req: ext.Request) -> bytes:
    params = _params(req, await ext.read_xml_body(req))
    action = params.get("Action", "")
    if action != "AssumeRoleWithWebIdentity":
        raise StsError("InvalidAction", f"the action {action[:64]!r} is not valid for this endpoint: this gateway "
                       "answers AssumeRoleWithWebIdentity")
    token = params.get("WebIdentityToken", "")
    if not token or len(token) > MAX_TOKEN_CHARS:
        raise StsError("ValidationError", "WebIdentityToken must be an ID token of 1-20000 characters")
    duration = _duration(params)
    client = req.scope.get("client")
    try:
        keys = await run(_assume, token, duration, client[0] if client else "")
    except oidc.BadToken as exc:
        if exc.expired:
            raise StsError("ExpiredTokenException", "Token expired: " + exc.message) from None
        raise StsError("InvalidIdentityToken", exc.message) from None
    except oidc.ProviderDown as exc:
        raise StsError("IDPCommunicationError", exc.message) from None
    except Invalid as exc:
        raise StsError("ValidationError", exc.message) from None
    except DomainError as exc:  # a disabled account, a name taken by a local account
        raise StsError("AccessDenied", exc.message, 403) from None
    el = ext.xmlio.el
    key, claims = keys.key, keys.claims
    expires = key.created.expires_at
    assert expires is not None and key.session_token is not None
    result = (
        el("SubjectFromWebIdentityToken", claims["sub"]) + el("Audience", get_settings().oidc_client_id)
        + "<AssumedRoleUser>" + el("Arn", f"arn:aws:sts:::assumed-role/web-identity/{keys.user.username}")
        + el("AssumedRoleId", f"{key.access_key_id}:{keys.user.username}") + "</AssumedRoleUser>"
        + "<Credentials>" + el("AccessKeyId", key.access_key_id) + el("SecretAccessKey", key.secret_access_key)
        + el("SessionToken", key.session_token) + el("Expiration", ext.xmlio.iso(expires)) + "</Credentials>"
        + el("Provider", claims["iss"]))
    return _document("AssumeRoleWithWebIdentityResponse",
                     "<AssumeRoleWithWebIdentityResult>" + result + "</AssumeRoleWithWebIdentityResult>"
                     + "<ResponseMetadata>" + el("RequestId", req.request_id) + "</ResponseMetadata>")
