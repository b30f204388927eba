"""LDAP sign-in: a simple bind as the user (LDAPS, or StartTLS; plain ldap:// only to a loopback address), their
groups from a search, the same group -> project mapping as OpenID Connect. ``auth.service.authenticate`` asks it
for names without a local password (``install_password_backend``, filled by ``app.wiring``)."""

from __future__ import annotations

import ipaddress
import logging
import ssl
from urllib.parse import urlsplit

import ldap3
from ldap3.core.exceptions import LDAPBindError, LDAPException, LDAPInvalidCredentialsResult
from ldap3.utils.conv import escape_filter_chars
from ldap3.utils.dn import escape_rdn
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.identity import service
from tierpilot.kit.errors import Invalid, Unauthorized, Unavailable
from tierpilot.kit.settings import Settings, get_settings

log = logging.getLogger("tierpilot.identity")
MAX_GROUPS = 1000


def configured(settings: Settings | None = None) -> bool:
    return bool((settings or get_settings()).ldap_url)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _server(s: Settings) -> ldap3.Server:
    url = urlsplit(s.ldap_url)
    if url.scheme not in ("ldap", "ldaps") or not url.hostname:
        raise Unavailable("TIERPILOT_LDAP_URL must be ldaps://host[:port] or ldap://host[:port]")
    if url.scheme == "ldap" and not s.ldap_start_tls and not _loopback(url.hostname):
        # a password sent in the clear to another host: refused, whatever the directory would say
        raise Unavailable("LDAP over plain ldap:// needs TIERPILOT_LDAP_START_TLS (or ldaps://) beyond this host")
    tls = ldap3.Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=s.ldap_ca_file or None,
                    version=ssl.PROTOCOL_TLS_CLIENT)
    return ldap3.Server(url.hostname, port=url.port, use_ssl=url.scheme == "ldaps", tls=tls,
                        connect_timeout=s.oidc_timeout_s, get_info=ldap3.NONE)


def _connection(server: ldap3.Server, s: Settings, user: str | None, password: str | None) -> ldap3.Connection:
    conn = ldap3.Connection(server, user=user, password=password, receive_timeout=int(s.oidc_timeout_s) + 1,
                            raise_exceptions=True, auto_bind=ldap3.AUTO_BIND_NONE, read_only=True)
    conn.open()
    if s.ldap_start_tls:
        conn.start_tls()
    return conn


def _user_dn(server: ldap3.Server, s: Settings, username: str) -> str | None:
    """The DN to bind as: from the template, or found by the service account's search (None: no such user)."""
    if s.ldap_bind_dn_template:
        return s.ldap_bind_dn_template.replace("{username}", escape_rdn(username))
    conn = _connection(server, s, s.ldap_service_dn or None, s.ldap_service_password or None)
    try:
        conn.bind()
        flt = s.ldap_user_filter.replace("{username}", escape_filter_chars(username))
        conn.search(s.ldap_user_base, flt, search_scope=ldap3.SUBTREE, attributes=[], size_limit=2)
        # a filter that finds two entries is ambiguous: neither is signed in
        return conn.entries[0].entry_dn if len(conn.entries) == 1 else None
    finally:
        conn.unbind()


def _groups(conn: ldap3.Connection, s: Settings, dn: str, username: str) -> list[str]:
    if not s.ldap_group_base:
        return []
    flt = (s.ldap_group_filter.replace("{dn}", escape_filter_chars(dn))
           .replace("{username}", escape_filter_chars(username)))
    conn.search(s.ldap_group_base, flt, search_scope=ldap3.SUBTREE, attributes=[s.ldap_group_name_attr],
                size_limit=MAX_GROUPS)
    out: list[str] = []
    for entry in conn.entries:
        values = entry.entry_attributes_as_dict.get(s.ldap_group_name_attr) or []
        out.extend(str(v) for v in values[:1])
    return out


def check_password(username: str, password: str, settings: Settings | None = None) -> tuple[str, list[str]] | None:
    """The user's DN and groups when the directory accepts the password; None when it does not know the name.
    Unauthorized for a wrong password, Unavailable when the directory cannot be reached."""
    s = settings or get_settings()
    if not password:
        # an empty password is an "unauthenticated bind" that many directories answer with success
        raise Unauthorized("invalid username or password")
    server = _server(s)
    try:
        dn = _user_dn(server, s, username)
        if dn is None:
            return None
        conn = _connection(server, s, dn, password)
        try:
            conn.bind()
            # the groups are read as the user: a directory that lets users read their groups needs no service DN
            return dn, _groups(conn, s, dn, username)
        finally:
            conn.unbind()
    except (LDAPBindError, LDAPInvalidCredentialsResult):
        raise Unauthorized("invalid username or password") from None
    except LDAPException as exc:
        log.warning("LDAP sign-in of %r failed: %s", username, exc)
        raise Unavailable("the directory (LDAP) is unreachable; try again later, or ask an administrator") from None


def sign_in(session: Session, username: str, password: str) -> User | None:
    """``auth``'s password backend: the directory's user with projects from their groups, or None when no
    directory is configured or it does not know the name (then the sign-in fails as for a wrong password)."""
    if not configured():
        return None
    try:
        auth.validate_username(username)
    except Invalid:  # characters no user name here has ("*", "(", ",", "\\"…): never sent to the directory
        raise Unauthorized("invalid username: letters, digits, '.', '_' or '-' only") from None
    found = check_password(username, password)
    if found is None:
        return None
    dn, groups = found
    user = service.external_user(session, "ldap", dn[:512], username)
    service.sync_projects(session, user, groups)
    return user
