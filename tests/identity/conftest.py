"""A real OpenID Connect provider (npm oidc-provider, tests/tools/oidc_provider.mjs) and a real OpenLDAP slapd,
each started on a free 127.0.0.1 port for the session and stopped at its end, with the settings that point
tierpilot at them."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.servers import ROOT, free_port, wait_port
from tierpilot.kit.settings import get_settings

TOOLS = ROOT / "tests" / "tools"
CLIENT_ID = "tierpilot-test"
CLIENT_SECRET = "tierpilot-test-client-secret-0123456789"
API_CALLBACK = "http://127.0.0.1/api/auth/oidc/callback"  # the TestClient's base URL
TOKEN_CALLBACK = "http://127.0.0.1:9/token-only"  # a test that only wants an ID token stops at the redirect
USERS = {
    "alice": {"password": "alice-password", "groups": ["lab-a", "everyone"]},
    "bob": {"password": "bob-password", "groups": ["lab-b"]},
    "admin": {"password": "admin-idp-password", "groups": []},  # the name of a local account here
}
MAPPING = {"lab-a": {"project": "lab-a", "role": "member"}, "lab-b": {"project": "lab-b", "role": "viewer"},
           "ghost": {"project": "no-such-project", "role": "member"}}


@dataclass
class Oidc:
    issuer: str
    key: rsa.RSAPrivateKey
    kid: str
    users: dict[str, dict[str, Any]]
    users_file: Path

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def sign(self, claims: dict[str, Any], key: rsa.RSAPrivateKey | None = None, kid: str | None = None,
             alg: str = "RS256") -> str:
        """An ID token signed with the provider's own key (or ``key``): for tokens the provider would not issue."""
        now = int(time.time())
        body = {"iss": self.issuer, "aud": CLIENT_ID, "sub": "alice", "iat": now, "exp": now + 600,
                "preferred_username": "alice", "groups": ["lab-a"], **claims}
        return jwt.encode(body, key or self.key, algorithm=alg, headers={"kid": kid or self.kid})


@contextlib.contextmanager
def start_oidc_provider(redirect_uris: list[str], log_dir: Path) -> Iterator[Oidc]:
    """tests/tools' oidc-provider on a free 127.0.0.1 port with a fresh signing key, the test client allowed to
    send the browser back to ``redirect_uris`` only; stopped when the block ends."""
    if shutil.which("node") is None or not (TOOLS / "node_modules" / "oidc-provider").is_dir():
        pytest.skip("node and tests/tools' oidc-provider are needed (cd tests/tools && npm ci)")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = "test-" + uuid.uuid4().hex[:8]
    jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key)), "kid": kid, "alg": "RS256", "use": "sig"}
    port = free_port()
    config = {"port": port, "clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET,
              "redirectUris": redirect_uris, "users": USERS, "jwks": {"keys": [jwk]}}
    log = log_dir / "provider.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["node", str(TOOLS / "oidc_provider.mjs")], cwd=TOOLS, stdout=out,
                                stderr=subprocess.STDOUT, env={**os.environ, "OIDC_CONFIG": json.dumps(config)})
    try:
        wait_port(port, timeout=60, proc=proc)
        yield Oidc(f"http://127.0.0.1:{port}", key, kid, USERS, log)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Oidc]:
    with start_oidc_provider([API_CALLBACK, TOKEN_CALLBACK], tmp_path_factory.mktemp("oidc")) as provider:
        yield provider


def oidc_env(provider: Oidc, **extra: str) -> dict[str, str]:
    return {"TIERPILOT_OIDC_DISCOVERY_URL": provider.discovery_url, "TIERPILOT_OIDC_CLIENT_ID": CLIENT_ID,
            "TIERPILOT_OIDC_CLIENT_SECRET": CLIENT_SECRET, "TIERPILOT_OIDC_SCOPES": "openid profile groups",
            "TIERPILOT_OIDC_PROVIDER_NAME": "Test IdP", "TIERPILOT_GROUP_MAPPING": json.dumps(MAPPING), **extra}


@pytest.fixture
def configure(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set TIERPILOT_* variables for this test (settings and the provider cache read again)."""
    from tierpilot.identity import oidc

    def set_env(env: dict[str, str]) -> None:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        oidc.forget()

    yield set_env
    monkeypatch.undo()
    get_settings.cache_clear()
    oidc.forget()


@pytest.fixture
def oidc_settings(oidc_provider: Oidc, configure: Any) -> Oidc:
    configure(oidc_env(oidc_provider))
    return oidc_provider


def login_at_provider(authorize_url: str, username: str, password: str, stop_at: str) -> httpx.URL:
    """Follow the provider's redirects with a browser's cookie jar, fill its login form, and return the URL it
    finally sends the browser to (``stop_at``: the relying party's callback, not followed)."""
    with httpx.Client(timeout=10) as browser:
        url = authorize_url
        for _ in range(10):
            r = browser.get(url)
            if r.status_code in (302, 303) and r.headers["location"].startswith(stop_at):
                return httpx.URL(r.headers["location"])
            if r.status_code in (302, 303):
                url = urljoin(url, r.headers["location"])
                continue
            assert r.status_code == 200, r.text
            path = urlsplit(url).path
            r = browser.post(urljoin(url, f"{path}/login"), data={"login": username, "password": password})
            if r.status_code == 200:
                raise AssertionError("the provider refused the login: " + r.text[:200])
            url = urljoin(url, r.headers["location"])
        raise AssertionError("too many redirects at the provider")


def provider_id_token(provider: Oidc, username: str) -> str:
    """An ID token the provider issues to the client for ``username`` (code flow with PKCE, as any app would)."""
    from tierpilot.identity import oidc

    attempt = oidc.new_attempt()
    disc = httpx.get(provider.discovery_url).json()
    params = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": TOKEN_CALLBACK,
              "scope": "openid profile groups", "state": attempt.state, "nonce": attempt.nonce,
              "code_challenge": oidc.challenge(attempt.verifier), "code_challenge_method": "S256"}
    url = str(httpx.URL(disc["authorization_endpoint"], params=params))
    back = login_at_provider(url, username, provider.users[username]["password"], TOKEN_CALLBACK)
    code = parse_qs(back.query.decode())["code"][0]
    r = httpx.post(disc["token_endpoint"], auth=(CLIENT_ID, CLIENT_SECRET),
                   data={"grant_type": "authorization_code", "code": code, "redirect_uri": TOKEN_CALLBACK,
                         "code_verifier": attempt.verifier})
    assert r.status_code == 200, r.text
    return str(r.json()["id_token"])


# OpenLDAP -------------------------------------------------------------------------------------------------------

LDAP_BASE = "dc=tierpilot,dc=test"
LDAP_ADMIN = f"cn=admin,{LDAP_BASE}"
LDAP_ADMIN_PASSWORD = "ldap-admin-password"
LDAP_USERS = {"carol": ("carol-password", ["lab-a"]), "dave": ("dave-password", [])}
_SLAPD_CONF = """include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile {dir}/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
suffix "{base}"
rootdn "{admin}"
rootpw {password}
directory {dir}/data
maxsize 10485760
access to attrs=userPassword by self auth by anonymous auth by * none
access to * by * read
"""


def _ldif() -> str:
    entries = [f"dn: {LDAP_BASE}\nobjectClass: dcObject\nobjectClass: organization\ndc: tierpilot\no: tierpilot\n",
               f"dn: ou=people,{LDAP_BASE}\nobjectClass: organizationalUnit\nou: people\n",
               f"dn: ou=groups,{LDAP_BASE}\nobjectClass: organizationalUnit\nou: groups\n"]
    for name, (password, _) in LDAP_USERS.items():
        entries.append(f"dn: uid={name},ou=people,{LDAP_BASE}\nobjectClass: inetOrgPerson\nuid: {name}\ncn: {name}\n"
                       f"sn: {name}\nuserPassword: {password}\n")
    groups: dict[str, list[str]] = {"lab-b": ["dave"]}
    for name, (_, member_of) in LDAP_USERS.items():
        for g in member_of:
            groups.setdefault(g, []).append(name)
    for g, members in groups.items():
        lines = "".join(f"member: uid={m},ou=people,{LDAP_BASE}\n" for m in members)
        entries.append(f"dn: cn={g},ou=groups,{LDAP_BASE}\nobjectClass: groupOfNames\ncn: {g}\n{lines}")
    return "\n".join(entries)


@pytest.fixture(scope="session")
def slapd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's slapd on a free 127.0.0.1 port with a throwaway directory: its ldap:// URL."""
    binary = shutil.which("slapd") or "/usr/sbin/slapd"
    if not Path(binary).exists() or not Path("/usr/lib/ldap/back_mdb.so").exists():
        pytest.skip("Debian's slapd is needed (make setup installs it)")
    base = tmp_path_factory.mktemp("slapd")
    (base / "data").mkdir()
    conf = base / "slapd.conf"
    conf.write_text(_SLAPD_CONF.format(dir=base, base=LDAP_BASE, admin=LDAP_ADMIN, password=LDAP_ADMIN_PASSWORD))
    (base / "seed.ldif").write_text(_ldif())
    subprocess.run(["/usr/sbin/slapadd", "-f", str(conf), "-l", str(base / "seed.ldif")], check=True,
                   capture_output=True)
    port = free_port()
    url = f"ldap://127.0.0.1:{port}"
    # -d 0: in the foreground, so the suite owns (and stops) the process
    proc = subprocess.Popen([binary, "-h", url, "-f", str(conf), "-d", "0"], stdout=subprocess.DEVNULL,
                            stderr=open(base / "slapd.log", "wb"))  # noqa: SIM115
    try:
        wait_port(port, timeout=30, proc=proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def ldap_env(url: str, **extra: str) -> dict[str, str]:
    return {"TIERPILOT_LDAP_URL": url, "TIERPILOT_LDAP_SERVICE_DN": LDAP_ADMIN,
            "TIERPILOT_LDAP_SERVICE_PASSWORD": LDAP_ADMIN_PASSWORD,
            "TIERPILOT_LDAP_USER_BASE": f"ou=people,{LDAP_BASE}", "TIERPILOT_LDAP_GROUP_BASE": f"ou=groups,{LDAP_BASE}",
            "TIERPILOT_GROUP_MAPPING": json.dumps(MAPPING), **extra}
