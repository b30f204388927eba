"""CORS: Put/Get/DeleteBucketCors, the OPTIONS preflight, and the Access-Control-* headers of requests
that carry an ``Origin``.

A bucket's rules live in its catalog row (``buckets.cors``). The preflight is answered without a signature
(browsers never sign it: it only asks what the rules allow), from the rules alone. Any other request with an
``Origin`` gets the headers of the first rule matching its origin and method on whatever it answers, errors
included, so a browser script can read S3's error. Rules are read through a short cache (the gateway's
``TIERPILOT_GATEWAY_CACHE_S``) so a page of browser requests costs no database read each; this process drops
its entry when it changes the rules.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any
from xml.etree.ElementTree import Element

from tierpilot.catalog import cors, repository
from tierpilot.catalog.cors import Rule, find_rule, wildcard_match
from tierpilot.gateway import auth, xmlio
from tierpilot.gateway.auth import bucket_of
from tierpilot.gateway.body import read_xml_body
from tierpilot.gateway.errors import S3Error, malformed_xml
from tierpilot.gateway.http import Headers, Request
from tierpilot.gateway.routes import route
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run

_NONE: list[Any] = []  # cached "no rules" (a bucket without CORS, or no such bucket)
_rules: TTLCache[str, list[Any]] = TTLCache(get_settings().gateway_cache_s)


def response_headers(rule: Rule, origin: str, request_headers: list[str], preflight: bool) -> Headers:
    anywhere = next(o for o in rule.origins if wildcard_match(o, origin)) == "*"
    out: Headers = [(b"access-control-allow-origin", b"*" if anywhere else origin.encode("latin-1", "replace")),
                    (b"access-control-allow-methods", ", ".join(rule.methods).encode())]
    if not anywhere:
        out.append((b"access-control-allow-credentials", b"true"))
    if preflight and request_headers:
        out.append((b"access-control-allow-headers", ", ".join(request_headers).encode("latin-1", "replace")))
    if rule.expose:
        out.append((b"access-control-expose-headers", ", ".join(rule.expose).encode("latin-1", "replace")))
    if preflight and rule.max_age is not None:
        out.append((b"access-control-max-age", str(rule.max_age).encode()))
    out.append((b"vary", b"Origin, Access-Control-Request-Headers, Access-Control-Request-Method"))
    return out


def parse_configuration(body: bytes) -> list[Rule]:
    """A CORSConfiguration document, checked as S3 checks it (MalformedXML / InvalidRequest)."""
    doc = xmlio.parse(body, "CORSConfiguration")
    rules: list[Rule] = []
    for element in xmlio.children(doc, "CORSRule"):
        def texts(name: str, of: Element = element) -> tuple[str, ...]:
            return tuple((e.text or "").strip() for e in xmlio.children(of, name))

        max_age_text = xmlio.child_text(element, "MaxAgeSeconds")
        if max_age_text is not None and not (max_age_text.strip().isascii() and max_age_text.strip().isdigit()):
            raise malformed_xml()
        rules.append(Rule(texts("AllowedOrigin"), texts("AllowedMethod"), texts("AllowedHeader"),
                          texts("ExposeHeader"), int(max_age_text) if max_age_text is not None else None,
                          xmlio.child_text(element, "ID")))
    cors.validate(rules)
    return rules


def _document(rules: list[Rule]) -> bytes:
    parts = []
    for rule in rules:
        items = [xmlio.el("ID", rule.id)] if rule.id is not None else []
        items += [xmlio.el("AllowedHeader", h) for h in rule.headers]
        items += [xmlio.el("AllowedMethod", m) for m in rule.methods]
        items += [xmlio.el("AllowedOrigin", o) for o in rule.origins]
        items += [xmlio.el("ExposeHeader", h) for h in rule.expose]
        if rule.max_age is not None:
            items.append(xmlio.el("MaxAgeSeconds", rule.max_age))
        parts.append(f"<CORSRule>{''.join(items)}</CORSRule>")
    return xmlio.document("CORSConfiguration", parts)


# configuration ---------------------------------------------------------------------------------------


def _set_rules(bucket_id: int, rules: list[Rule] | None) -> None:
    with transaction(write=True) as session:
        cors.set_rules(session, bucket_id, rules)


@route("PUT", "bucket", "cors")
async def put_bucket_cors(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    rules = parse_configuration(await read_xml_body(req))
    await run(_set_rules, bucket.id, rules)
    auth.buckets.pop(bucket.name)
    _rules.pop(bucket.name)
    await req.respond(200, content_type=None)


@route("GET", "bucket", "cors")
async def get_bucket_cors(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    if bucket.cors is None:
        raise S3Error("NoSuchCORSConfiguration", "The CORS configuration does not exist", 404, BucketName=bucket.name)
    await req.respond(200, _document([Rule.load(r) for r in bucket.cors]))


@route("DELETE", "bucket", "cors")
async def delete_bucket_cors(req: Request) -> None:
    bucket = await bucket_of(req, confirm=True)
    await run(_set_rules, bucket.id, None)
    auth.buckets.pop(bucket.name)
    _rules.pop(bucket.name)
    await req.respond(204, content_type=None)


# requests from browsers ------------------------------------------------------------------------------


def _load_rules(name: str) -> list[Any]:
    with transaction() as session:
        bucket = repository.get_bucket_by_name(session, name)
        return list(bucket.cors or []) if bucket is not None else _NONE


async def rules_of(name: str) -> list[Rule]:
    stored = _rules.get(name)
    if stored is None:
        stored = await run(_load_rules, name)
        _rules.put(name, stored)
    return [Rule.load(r) for r in stored]


def _requested_headers(req: Request) -> list[str]:
    raw = req.header("access-control-request-headers") or ""
    return [h.strip() for h in raw.split(",") if h.strip()]


def _forbidden() -> S3Error:
    return S3Error("AccessForbidden", "CORSResponse: This CORS request is not allowed. This is usually because the "
                   "evaluation of Origin, request method / Access-Control-Request-Method or "
                   "Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.", 403)


async def preflight(req: Request) -> None:
    """OPTIONS: what the bucket's rules allow the origin, method and headers asked about (no signature)."""
    origin = req.header("origin")
    if not origin:
        raise S3Error("BadRequest", "Insufficient information. Origin request header needed.", 400)
    method = req.header("access-control-request-method")
    if not method:
        raise S3Error("BadRequest", "Invalid Access-Control-Request-Method: null", 400)
    wanted = _requested_headers(req)
    rules = await rules_of(req.bucket)
    if not rules:
        raise _forbidden()
    rule = find_rule(rules, origin, method.strip().upper(), wanted)
    if rule is None:
        raise _forbidden()
    await req.respond(200, headers=response_headers(rule, origin, wanted, preflight=True), content_type=None)


route("OPTIONS", "bucket", signed=False)(preflight)
route("OPTIONS", "object", signed=False)(preflight)


async def decorate(req: Request) -> None:
    """Add the Access-Control-* headers of the matching rule to whatever a request with ``Origin`` answers.

    The method matched is the request's own, or the Access-Control-Request-Method it names (what a client
    replaying a preflight asks), as RGW and the ceph/s3-tests suite have it.
    """
    origin = req.header("origin")
    if not origin or not req.bucket or req.method == "OPTIONS":
        return
    try:
        rules = await rules_of(req.bucket)
    except Exception:  # the headers are a courtesy to browsers: never the reason a request fails
        return
    method = (req.header("access-control-request-method") or req.method).strip().upper()
    rule = find_rule(rules, origin, method, []) if rules else None
    if rule is None:
        return
    extra = response_headers(rule, origin, [], preflight=False)
    inner = req.send

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = dict(message, headers=[*message["headers"], *extra])
        await inner(message)

    req.send = send
