"""The gateway's one public door: what other domains may use to add S3 operations.

A domain's gateway module (listed in ``tierpilot.app.wiring.GATEWAY_EXTENSIONS``) registers handlers with
``route``; a handler takes a ``Request``, reads its bucket with ``bucket_of``, its key with ``key_of``
and a small XML body with ``read_xml_body``, answers with ``req.respond`` and refuses with ``S3Error``.
The lifecycle domain installs the source of the x-amz-expiration header (``install_expiration``).
``bucket_of`` here reads the bucket row from the catalog on every call (no cached row): an extension's
statements then need not check that the bucket still exists (its operations are not the data path).
Nothing else of the gateway is imported from outside it (checked by ``lint-imports``).
"""

from __future__ import annotations

from tierpilot.gateway import xmlio
from tierpilot.gateway.auth import confirmed_bucket as bucket_of
from tierpilot.gateway.body import key_of, read_xml_body
from tierpilot.gateway.errors import S3Error, invalid_argument, invalid_reservation, malformed_xml
from tierpilot.gateway.expiration import install as install_expiration
from tierpilot.gateway.http import Request
from tierpilot.gateway.routes import route

__all__ = ["Request", "S3Error", "bucket_of", "install_expiration", "invalid_argument", "invalid_reservation",
           "key_of", "malformed_xml", "read_xml_body", "route", "xmlio"]
