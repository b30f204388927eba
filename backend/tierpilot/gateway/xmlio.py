"""S3's XML: documents rendered by hand (fast, exact element order) and request bodies parsed safely."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from urllib.parse import quote
from xml.etree.ElementTree import Element

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from tierpilot.gateway.errors import S3Error, malformed_xml

NS = "http://s3.amazonaws.com/doc/2006-03-01/"
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;"}
_TO_ESCAPE = re.compile(r'[&<>"\r\x00-\x08\x0b\x0c\x0e-\x1f]')


def esc(value: object) -> str:
    """Escape text for an element; control characters become character references, as S3 sends them."""
    text = str(value)
    if _TO_ESCAPE.search(text) is None:  # most text needs none: a search is cheaper than a sub that finds nothing
        return text
    return _TO_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"&#x{ord(m.group()):x};"), text)


def needs_escape(text: str) -> bool:
    """Whether ``esc`` would change ``text`` (asked once of a whole listing page's text)."""
    return _TO_ESCAPE.search(text) is not None


def el(name: str, value: object) -> str:
    return f"<{name}>{esc(value)}</{name}>"


def iso(moment: datetime) -> str:
    # isoformat truncates to milliseconds as S3 does and costs a third of strftime (1,000 times a listing page)
    return moment.isoformat(timespec="milliseconds")[:23] + "Z"


def url_encode(value: str) -> str:
    """encoding-type=url: what botocore decodes with unquote_plus."""
    return quote(value, safe="/-_.~")


_URL_SAFE = re.compile(r"[A-Za-z0-9/_.~-]*")


def url_unchanged(text: str) -> bool:
    """Whether ``url_encode`` would leave ``text`` as it is (asked once of a whole listing page's keys)."""
    return _URL_SAFE.fullmatch(text) is not None


def document(root: str, children: Iterable[str], ns: bool = True) -> bytes:
    attrs = f' xmlns="{NS}"' if ns else ""
    return f"{DECLARATION}<{root}{attrs}>{''.join(children)}</{root}>".encode()


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _plain(value: object) -> str:
    # error documents must parse in every client: control characters (no XML 1.0 form) become %XX
    return esc(_CONTROL.sub(lambda m: f"%{ord(m.group()):02X}", str(value)))


def error_document(err: S3Error, resource: str, request_id: str) -> bytes:
    fields = "".join(f"<{k}>{_plain(v)}</{k}>" for k, v in err.fields.items() if v is not None)
    return (f"{DECLARATION}<Error>{el('Code', err.code)}<Message>{_plain(err.message)}</Message>{fields}"
            f"<Resource>{_plain(resource)}</Resource>{el('RequestId', request_id)}{el('HostId', request_id)}"
            "</Error>").encode()


# parsing ---------------------------------------------------------------------------------------------


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse(body: bytes, root: str) -> Element:
    """Parse a request document whose root element must be ``root`` (any namespace)."""
    if not body.strip():
        raise malformed_xml()
    try:
        tree: Element = ElementTree.fromstring(body)
    except (ElementTree.ParseError, DefusedXmlException, ValueError, UnicodeDecodeError):
        raise malformed_xml() from None
    if _local(tree.tag) != root:
        raise malformed_xml()
    return tree


def children(node: Element, name: str) -> list[Element]:
    return [c for c in node if _local(c.tag) == name]


def child_text(node: Element, name: str, default: str | None = None) -> str | None:
    for c in node:
        if _local(c.tag) == name:
            return c.text or ""
    return default


def required_text(node: Element, name: str) -> str:
    value = child_text(node, name)
    if value is None:
        raise malformed_xml()
    return value
