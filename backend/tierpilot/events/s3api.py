"""Gateway operations Put/GetBucketNotificationConfiguration (``?notification``), registered when the gateway
starts; they read and write the same stored configuration as ``/api/events``."""

from __future__ import annotations

from typing import Any

from tierpilot.catalog.models import Bucket
from tierpilot.events import service
from tierpilot.events.outbox import directory
from tierpilot.events.s3xml import ConfigInvalid, parse_xml, to_xml
from tierpilot.gateway.ext import Request, S3Error, bucket_of, read_xml_body, route
from tierpilot.kit.db import transaction
from tierpilot.kit.streaming import run


def _put(bucket: Bucket, entries: list[dict[str, Any]]) -> None:
    with transaction(write=True) as session:
        service.put_config(session, bucket, entries)


def _get(bucket: Bucket) -> list[dict[str, Any]]:
    with transaction() as session:
        return service.get_config(session, bucket)


@route("PUT", "bucket", "notification")
async def put_bucket_notification(req: Request) -> None:
    bucket = await bucket_of(req)
    body = await read_xml_body(req)
    try:
        await run(_put, bucket, parse_xml(body))
    except ConfigInvalid as exc:
        raise S3Error(exc.code, exc.message, 400) from None
    directory.forget()
    await req.respond(200, content_type=None)


@route("GET", "bucket", "notification")
async def get_bucket_notification(req: Request) -> None:
    bucket = await bucket_of(req)
    await req.respond(200, to_xml(await run(_get, bucket)))
