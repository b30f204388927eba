"""OpenID Connect as a relying party: discovery, the authorization request (code flow with PKCE), the code
exchange and every check of an ID token. Knows no table: ``identity.service`` turns checked claims into users."""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx
import jwt

from tierpilot.kit.errors import Unauthorized, Unavailable
from tierpilot.kit.settings import Settings, get_settings

log = logging.getLogger("tierpilot.identity")
DISCOVERY_TTL_S = 300.0
# a JWKS refetch for an unknown key id at most this often: a flood of forged kids cannot make us hammer the provider
JWKS_REFETCH_S = 10.0
# asymmetric only: HS256 would be keyed by the client secret, which this side holds too; "none" is never accepted
ALLOWED_ALGS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LEEWAY_S = 30  # clock skew between the provider and this host


class ProviderDown(Unavailable):
    """The provider could not be reached or answered nonsense: sign-in fails with this message."""


class BadToken(Unauthorized):
    """An ID token that fails a check; ``expired`` says whether its only fault is its age."""

    def __init__(self, message: str, expired: bool = False) -> None:
        super().__init__(message)
        self.expired = expired


@dataclass
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    algs: tuple[str, ...]
    fetched: float
    keys: dict[str, jwt.PyJWK] = field(default_factory=dict)
    keys_fetched: float = 0.0


_lock = threading.Lock()
_cache: dict[str, Provider] = {}


def configured(settings: Settings | None = None) -> bool:
    s = settings or get_settings()
    return bool(s.oidc_discovery_url and s.oidc_client_id)


def _get_json(url: str, timeout: float) -> dict[str, Any]:
    try:
        r = httpx.get(url, timeout=timeout, follow_redirects=False)
        r.raise_for_status()
        data = r.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ProviderDown(f"the identity provider is unreachable ({type(exc).__name__}); try again later, or "
                           "ask an administrator") from None
    if not isinstance(data, dict):
        raise ProviderDown("the identity provider answered something that is not a JSON object")
    return data


def provider(settings: Settings | None = None, now: float | None = None) -> Provider:
    """The provider's discovery document (cached a few minutes; a stale one is reused while the provider is down)."""
    s = settings or get_settings()
    now = time.time() if now is None else now
    url = s.oidc_discovery_url
    cached = _cache.get(url)
    if cached is not None and now - cached.fetched < DISCOVERY_TTL_S:
        return cached
    try:
        doc = _get_json(url, s.oidc_timeout_s)
    except ProviderDown:
        if cached is not None:
            return cached
        raise
    try:
        algs = tuple(a for a in doc.get("id_token_signing_alg_values_supported", ["RS256"]) if a in ALLOWED_ALGS)
        found = Provider(str(doc["issuer"]), str(doc["authorization_endpoint"]), str(doc["token_endpoint"]),
                         str(doc["jwks_uri"]), algs or ("RS256",), now)
    except KeyError as exc:
        raise ProviderDown(f"the identity provider's discovery document lacks {exc.args[0]!r}") from None
    with _lock:
        if cached is not None and cached.jwks_uri == found.jwks_uri:
            found.keys, found.keys_fetched = cached.keys, cached.keys_fetched
        _cache[url] = found
    return found


def _signing_key(p: Provider, kid: str | None, timeout: float) -> jwt.PyJWK:
    def pick() -> jwt.PyJWK | None:
        if kid is not None:
            return p.keys.get(kid)
        return next(iter(p.keys.values())) if len(p.keys) == 1 else None

    key = pick()
    if key is None and time.time() - p.keys_fetched >= JWKS_REFETCH_S:
        data = _get_json(p.jwks_uri, timeout)
        keys: dict[str, jwt.PyJWK] = {}
        for i, jwk in enumerate(data.get("keys", [])):
            if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
                continue
            try:
                keys[str(jwk.get("kid", f"#{i}"))] = jwt.PyJWK(jwk)
            except (jwt.PyJWKError, jwt.InvalidKeyError):
                continue  # a key type this side cannot use: the provider signs with another one
        with _lock:
            p.keys, p.keys_fetched = keys, time.time()
        key = pick()
    if key is None:
        raise BadToken("the ID token is signed with a key the identity provider does not publish")
    return key


def validate_id_token(token: str, nonce: str | None = None, settings: Settings | None = None) -> dict[str, Any]:
    """The claims of an ID token this provider issued to this client: signature (the provider's JWKS, an
    asymmetric algorithm it announces), issuer, audience (and azp when several), expiry and, when given, nonce."""
    s = settings or get_settings()
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise BadToken("the ID token is not a JWT") from None
    alg = header.get("alg")
    p = provider(s)
    if not isinstance(alg, str) or alg not in p.algs:
        raise BadToken(f"the ID token's algorithm {alg!r} is not accepted")
    key = _signing_key(p, header.get("kid"), s.oidc_timeout_s)
    try:
        claims: dict[str, Any] = jwt.decode(
            token, key, algorithms=[alg], audience=s.oidc_client_id, issuer=p.issuer, leeway=LEEWAY_S,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]})
    except jwt.ExpiredSignatureError:
        raise BadToken("the ID token has expired", expired=True) from None
    except jwt.InvalidAudienceError:
        raise BadToken("the ID token was issued to another client") from None
    except jwt.InvalidIssuerError:
        raise BadToken("the ID token was issued by another provider") from None
    except jwt.PyJWTError as exc:
        raise BadToken(f"the ID token is invalid: {exc}") from None
    aud = claims["aud"]
    if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") != s.oidc_client_id:
        raise BadToken("the ID token was issued to another client")
    if nonce is not None and not secrets.compare_digest(str(claims.get("nonce", "")), nonce):
        raise BadToken("the ID token does not answer this sign-in (nonce)")
    return claims


# the authorization code flow --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """What the browser carries between the redirect to the provider and the callback (a signed cookie)."""

    state: str
    nonce: str
    verifier: str


def new_attempt() -> Attempt:
    return Attempt(secrets.token_urlsafe(24), secrets.token_urlsafe(24), secrets.token_urlsafe(48))


def challenge(verifier: str) -> str:
    """PKCE S256."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def authorization_url(attempt: Attempt, redirect_uri: str, settings: Settings | None = None) -> str:
    s = settings or get_settings()
    p = provider(s)
    scopes = s.oidc_scopes.split()
    if "openid" not in scopes:
        scopes.insert(0, "openid")
    query = urlencode({"response_type": "code", "client_id": s.oidc_client_id, "redirect_uri": redirect_uri,
                       "scope": " ".join(scopes), "state": attempt.state, "nonce": attempt.nonce,
                       "code_challenge": challenge(attempt.verifier), "code_challenge_method": "S256"})
    sep = "&" if "?" in p.authorization_endpoint else "?"
    return f"{p.authorization_endpoint}{sep}{query}"


def exchange(code: str, attempt: Attempt, redirect_uri: str, settings: Settings | None = None) -> dict[str, Any]:
    """The checked claims of the ID token the provider gives for ``code``."""
    s = settings or get_settings()
    p = provider(s)
    try:
        r = httpx.post(p.token_endpoint, timeout=s.oidc_timeout_s, auth=(s.oidc_client_id, s.oidc_client_secret),
                       data={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                             "code_verifier": attempt.verifier})
    except httpx.HTTPError as exc:
        raise ProviderDown(f"the identity provider is unreachable ({type(exc).__name__}); try again later") from None
    if r.status_code >= 500:
        raise ProviderDown(f"the identity provider failed ({r.status_code}); try again later")
    try:
        body = r.json()
    except ValueError:
        body = {}
    if r.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("id_token"), str):
        # a replayed or expired code, a wrong verifier: the provider's own words, bounded
        reason = str(body.get("error_description") or body.get("error") or r.status_code)[:200] \
            if isinstance(body, dict) else str(r.status_code)
        raise BadToken(f"the identity provider refused the sign-in: {reason}")
    return validate_id_token(body["id_token"], attempt.nonce, s)


def groups_of(claims: dict[str, Any], settings: Settings | None = None) -> list[str]:
    """The groups claim as a list of names (a provider may send one string; other types count as none)."""
    value = claims.get((settings or get_settings()).oidc_groups_claim)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [g for g in value if isinstance(g, str)]
    return []


def username_of(claims: dict[str, Any], settings: Settings | None = None) -> str:
    value = claims.get((settings or get_settings()).oidc_username_claim)
    return value if isinstance(value, str) else ""


def forget() -> None:
    """Drop cached discovery documents and keys (settings changed, tests)."""
    with _lock:
        _cache.clear()
