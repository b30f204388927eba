"""Gateway operation RestoreObject (``POST /bucket/key?restore``), registered when the gateway starts.

HeadObject's ``x-amz-restore`` header and GetObject's InvalidObjectState come from the catalog and the
tier driver (gateway.common, catalog.store); this module parses the request and answers as S3 does:
202 for a new (or upgraded) recall, 200 when the object is already restored (its expiry moves),
409 RestoreAlreadyInProgress for a repeat while the recall runs.
"""

from __future__ import annotations

from typing import cast

from tierpilot.drivers.base import RestoreSpeed
from tierpilot.drivers.offline import MAX_RESTORE_DAYS
from tierpilot.gateway.ext import (
    Request,
    S3Error,
    bucket_of,
    invalid_argument,
    key_of,
    malformed_xml,
    read_xml_body,
    route,
    xmlio,
)
from tierpilot.kit.streaming import run
from tierpilot.restores import objects

_TIERS: dict[str, RestoreSpeed] = {"Expedited": "expedited", "Standard": "standard", "Bulk": "bulk"}


def parse_restore_request(body: bytes) -> tuple[int, RestoreSpeed]:
    """(days, speed) of a RestoreRequest document; S3's errors for what it refuses."""
    doc = xmlio.parse(body, "RestoreRequest")
    if xmlio.child_text(doc, "Type") is not None:
        raise S3Error("NotImplemented", "SELECT restore requests are not implemented", 501)
    raw_days = xmlio.child_text(doc, "Days")
    if raw_days is None:
        raise invalid_argument("Days is required to restore an archived object", "Days", "")
    try:
        days = int(raw_days.strip())
    except ValueError:
        raise malformed_xml() from None
    if not 1 <= days <= MAX_RESTORE_DAYS:
        raise invalid_argument(f"Days must be between 1 and {MAX_RESTORE_DAYS}", "Days", raw_days.strip())
    speed: RestoreSpeed = "standard"
    for params in xmlio.children(doc, "GlacierJobParameters"):
        tier = (xmlio.child_text(params, "Tier") or "").strip()
        if tier not in _TIERS:
            raise malformed_xml()
        speed = _TIERS[tier]
    return days, cast(RestoreSpeed, speed)


@route("POST", "object", "restore")
async def restore_object(req: Request) -> None:
    bucket = await bucket_of(req)
    key = key_of(req)
    days, speed = parse_restore_request(await read_xml_body(req))
    status = await run(objects.restore_object, bucket, key, req.user.user_id, days, speed)
    await req.respond(202 if status.accepted else 200, content_type=None)
