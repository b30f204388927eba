"""What keeps an object's bytes from acting in the browser that opens them.

Browsers scope cookies by host name, not port: a gateway reachable on the dashboard's host name could serve a
page that sets or reads the dashboard's cookies. Every object read is therefore sandboxed (a unique opaque
origin: no script, no cookies, no storage of the host), its type is taken as declared, and the types a
browser would run are downloads unless the object or the request names a disposition of its own.
"""

from __future__ import annotations

from tierpilot.gateway.http import Headers

# what a browser renders as a document able to run script (any ``+xml`` type too: XHTML elements run in it)
ACTIVE_TYPES = frozenset({
    "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/xsl",
    "application/javascript", "text/javascript", "application/x-javascript", "application/ecmascript",
    "text/ecmascript", "text/jscript", "multipart/x-mixed-replace",
})
_GUARDS: Headers = [(b"content-security-policy", b"sandbox"), (b"x-content-type-options", b"nosniff")]
_ATTACHMENT = (b"content-disposition", b"attachment")


def is_active(content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    return media in ACTIVE_TYPES or media.endswith("+xml")


def guard(headers: Headers) -> Headers:
    """``headers`` of an object's GET or HEAD (with the request's overrides) and the guards."""
    kind = next((value for name, value in headers if name == b"content-type"), b"")
    if is_active(kind.decode("latin-1")) and not any(name == b"content-disposition" for name, _ in headers):
        return [*headers, *_GUARDS, _ATTACHMENT]
    return [*headers, *_GUARDS]
